"""``anonymatch verify-series`` (issue 40): a release series checked as the composition attacker
sees it, from the releases and each release's people only (``tables.series.verify_series``);
and the ``--series DIR --series-original FILE …`` options of ``risk`` and ``report``: the same
attacker's figures of one release joined to a published series directory
(``tables.series.risk.series_risk``).

``verify-series`` gives the verdict (exit 4 when the series fails) with the figures (``--json``);
``risk --series`` gives the figures of a release beside its own risk figures (text, and the
``series`` key of ``risk --json``); the report shows them in its series section.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.cli.options import (
    exit_verdict,
    json_default,
    table_input_options,
    verbosity_options,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.schema import NAValues, Schema
    from anonymatch.tables.io import CsvOptions

F = TypeVar("F", bound=Callable[..., Any])


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
    nobody, whose sensitive value changed or not, is left with fewer than L values after the
    strong attacker's intersection; 4 if not; 2 on bad input (different numbers of
    --original and --release, a missing column, a missing or repeated person id in a
    release's people, a release that is not its people's). The candidates after
    intersection (a person's candidate rows showing a value left by the intersection) are
    reported, not part of the rule: a series row carries only its class's cells and a value,
    so they tell no more than the values left. --json prints the verdict with the
    attacker's figures (docs/guarantees/series.md); `risk RELEASE --series DIR` gives the same
    figures for one release joined to a series directory."""
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
    narrow = figures["candidates_after_intersection"]
    click.echo(
        f"candidates after intersection (unchanged value, in two releases or more): "
        f"{narrow['below_k']} below k"
        + (
            ""
            if narrow["min"] is None
            else f", fewest {narrow['min']}, median {narrow['median']:g}"
        )
        + (f"; changed value: {narrow['changed_below_k']} below k" if figures["changed"] else "")
    )
    if figures["changed"]:
        click.echo(
            f"{figures['changed']} people changed their value between releases "
            f"({figures['changed_below_l']} of them below l: not a disclosure of the value)"
        )


# ------------------------------------------------------- risk --series, report --series


@dataclass(frozen=True)
class SeriesRequest:
    """``--series DIR`` with its ``--series-original FILE`` options (``risk``, ``report``):
    the series directory and the people of each earlier release, in the series' order."""

    directory: str
    originals: tuple[str, ...]

    def figures(
        self,
        original: pd.DataFrame,
        release: str,
        schema: Schema,
        reading: tuple[CsvOptions, NAValues | None, bool],
    ) -> dict[str, object]:
        """The attacker's figures of ``release`` (a path; ``original`` its people, read)
        joined to the series (``tables.series.risk.series_risk(...).to_dict()``).
        ``reading``: how the originals are read (CSV options, missing codes, whether rows with
        a missing QI were dropped), as ``original``. O(verify_series on the series)."""
        from anonymatch.core.files import sha256_file
        from anonymatch.tables.io import read_table
        from anonymatch.tables.io.cells import read_release_text
        from anonymatch.tables.series.risk import open_published, series_risk

        csv, na, drop_missing = reading
        series = open_published(self.directory)
        if not Path(release).is_file():  # never echo it: a database URL may hold a password
            raise InputError("--series needs RELEASE as a file (not a database table)")
        return series_risk(
            original,
            read_release_text(release),
            series,
            [read_table(path, csv) for path in self.originals],
            release_sha256=sha256_file(release),
            qi=list(schema.qi),
            numeric=sorted(schema.numeric),
            sensitive=list(schema.sensitive),
            na_values=na,
            drop_missing=drop_missing,
        ).to_dict()


def series_request(series_dir: str | None, series_originals: Sequence[str]) -> SeriesRequest | None:
    """``--series`` and ``--series-original`` as one :class:`SeriesRequest` (parameter
    ``series``; None without ``--series``). InputError: ``--series-original`` alone."""
    if series_dir is None:
        if series_originals:
            raise InputError("--series-original goes with --series DIR")
        return None
    return SeriesRequest(series_dir, tuple(series_originals))


def series_options(func: F) -> F:
    """``--series DIR`` and ``--series-original FILE`` (repeated), built into ``series``."""
    func = with_step(series_request, "series")(func)
    func = click.option(
        "--series-original",
        "series_originals",
        multiple=True,
        metavar="FILE",
        help="With --series: the people of one earlier release of the series (repeat, in the "
        "series' order; read like ORIGINAL, with the person-id column). A person the series "
        "suppressed from that release is not in it; the release's whole input also does when "
        "DIR holds the private map, which names the people it published.",
    )(func)
    return click.option(
        "--series",
        "series_dir",
        default=None,
        metavar="DIR",
        help="A series directory (anonymize --series): add the composition attacker's figures "
        "of RELEASE joined to it. When RELEASE is the directory's release j (same SHA-256) the "
        "series is releases 1..j and --series-original gives releases 1..j-1; otherwise RELEASE "
        "follows all of the directory's releases, one --series-original each. ORIGINAL must "
        "hold the series' person-id column; the series' sensitive column is needed.",
    )(func)


def print_series(figures: dict[str, Any]) -> None:
    """``risk --series`` in text: the release's place in the series, then the attacker's
    figures (as ``verify-series``), the values left after intersection and this release's
    people."""
    place = "" if figures["in_directory"] else " (joined after the directory's releases)"
    click.echo(
        f"series {figures['directory']}: release {figures['release']} of "
        f"{len(figures['releases'])}{place}"
    )
    _print(figures)
    after = figures["after_intersection"]

    def pair(side: dict[str, Any]) -> str:
        if side["fewest"] is None:
            return "-"
        return f"fewest {side['fewest']}, median {side['median']:g}"

    click.echo(
        f"values after intersection (unchanged, in two releases or more): candidates "
        f"{pair(after['strong'])}; compatible rows {pair(after['weak'])}"
    )
    mine = figures["this_release"]
    click.echo(
        f"this release: {mine['people']} people, {mine['in_an_earlier_release']} in an earlier "
        f"release; below l {mine['strong_below_l']} ({mine['strong_certain']} certain) on "
        f"candidates, {mine['weak_below_l']} ({mine['weak_certain']} certain) on compatible rows; "
        f"below k after intersection {mine['below_k_after_intersection']}"
    )


COMMANDS = [verify_series_cmd]
