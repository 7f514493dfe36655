"""``anonymatch verify-series`` (issue 40): a release series checked as the composition attacker
sees it, from the releases and each release's people only (``tables.series.verify_series``).

The attacker's figures for stewards (candidates per release, people left below ℓ after
intersection, certain people, the largest posterior) are this command's ``--json`` output: the
issue's ``risk --series`` would sit badly on ``risk``'s two positional arguments (one original,
one release), so the series' figures live here, where the originals and releases are repeated
options.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from anonymatch.cli.options import (
    exit_verdict,
    json_default,
    table_input_options,
    verbosity_options,
)
from anonymatch.cli.steps import command
from anonymatch.core.errors import InputError


def _columns(value: str | None, flag: str, required: bool = True) -> list[str]:
    """A comma-separated list of column names; InputError naming ``flag`` when it is empty
    and required. O(len(value))."""
    names = [c.strip() for c in (value or "").split(",") if c.strip()]
    if required and not names:
        raise InputError(f"{flag} names no column")
    return names


@command("verify-series")
@click.option(
    "--original",
    "originals",
    multiple=True,
    required=True,
    metavar="FILE",
    help="The people of one release, with the person id (repeat: one per release, "
    "in order; a person the series suppressed from a release is not in its file).",
)
@click.option(
    "--release",
    "releases",
    multiple=True,
    required=True,
    metavar="FILE",
    help="One published release (repeat: one per --original, in the same order).",
)
@click.option(
    "--person-id",
    required=True,
    metavar="COLUMN",
    help="The originals' column identifying a person across releases (never published).",
)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs (published as ranges).")
@click.option("--sensitive", required=True, metavar="COLUMN", help="The sensitive column.")
@click.option(
    "-k",
    "--k",
    "k",
    type=click.IntRange(min=1),
    required=True,
    help="Fewest candidate rows of every person in every release.",
)
@click.option(
    "--l",
    "l_",
    type=click.IntRange(min=1),
    required=True,
    help="Fewest distinct sensitive values a person may be left with after "
    "intersecting the releases (distinct l-diversity).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the verdict and the attacker's figures as JSON."
)
@verbosity_options
@table_input_options
def verify_series_cmd(
    originals: Sequence[str],
    releases: Sequence[str],
    person_id: str,
    qi: str,
    numeric: str | None,
    sensitive: str,
    k: int,
    l_: int,
    as_json: bool,
    csv: Any,
    na_values: Any,
    drop_missing: bool,
) -> None:
    """Check a release series against the composition attacker.

    The attacker knows everyone's quasi-identifiers in every release's year and who is in
    which release, and intersects the sensitive values each release shows for a person: on
    the person's candidate rows (strong attacker) and on the rows compatible with their QIs
    (weak attacker). Exit 0 iff every release gives every person at least K candidates and
    nobody whose sensitive value is unchanged is left with fewer than L values after the
    strong attacker's intersection; 4 if not; 2 on bad input (different numbers of
    --original and --release, a missing column, a missing or repeated person id in a
    release's people, a release that is not its people's). --json prints the verdict with the
    attacker's figures (docs/guarantees/series.md)."""
    from anonymatch.cli import import_quietly

    if len(originals) != len(releases):
        raise InputError(
            f"{len(originals)} --original but {len(releases)} --release: give one original "
            "per release, in the same order"
        )
    import_quietly("anonymatch.tables.pipeline")
    from anonymatch.tables.io import read_table
    from anonymatch.tables.io.cells import read_release_text
    from anonymatch.tables.series import verify_series

    report = verify_series(
        [read_table(path, csv) for path in originals],
        [read_release_text(path) for path in releases],
        person_id=person_id,
        qi=_columns(qi, "--qi"),
        numeric=_columns(numeric, "--numeric", required=False),
        sensitive=sensitive,
        k=k,
        l=l_,
        na_values=na_values,
        drop_missing=drop_missing,
    )
    figures = report.to_dict()
    if as_json:
        click.echo(json.dumps(figures, indent=2, default=json_default))
    else:
        _print(figures)
    exit_verdict(report.passed)


def _print(figures: dict[str, Any]) -> None:
    """The verdict and the headline figures, a few lines."""
    strong, weak = figures["strong"], figures["weak"]
    click.echo(
        f"{'PASS' if figures['passed'] else 'FAIL'}: {figures['reason']}; k = {figures['k']}, "
        f"l = {figures['l']}, {len(figures['releases'])} releases, {figures['people']} people, "
        f"{figures['in_two_or_more']} in two releases or more"
    )
    for r in figures["releases"]:
        click.echo(
            f"release {r['release']}: {r['people']} people, fewest candidates "
            f"{r['min_candidates']} ({r['below_k']} below k), fewest compatible rows "
            f"{r['min_compatible']}" + ("" if r["matching"] else ", no perfect matching")
        )
    post = strong["largest_posterior"]
    click.echo(
        f"after intersection: {strong['below_l']} below l ({strong['certain']} certain) on "
        f"candidates, {weak['below_l']} below l ({weak['certain']} certain) on compatible rows; "
        "largest posterior "
        + ("-" if post is None else f"{post:.3f}")
        + ("" if strong["largest_share"] is None else f", share {strong['largest_share']:.3f}")
    )
    if figures["changed"]:
        click.echo(
            f"{figures['changed']} people changed their value between releases "
            f"({figures['changed_below_l']} of them below l: not a disclosure of the value)"
        )


COMMANDS = [verify_series_cmd]
