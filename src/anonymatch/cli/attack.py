"""``anonymatch attack``: an adversary who knows some true matches of a table release
(Choromanski et al. §4), simulated against the release."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from anonymatch.cli.config import read_release, release_check, release_table_option
from anonymatch.cli.options import (
    criteria_options,
    draw_seed,
    seed_option,
    table_input_options,
    verbosity_options,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError
from anonymatch.tables.io import CsvOptions, read_table
from anonymatch.tables.models import CRITERIA

if TYPE_CHECKING:
    from anonymatch.tables.job import ReleaseCheck
    from anonymatch.tables.risk.attack import Adversary

LEVEL_CRITERIA = CRITERIA.where(lambda c: c.level)
"""The level a release promises (``-k`` or ``--k-column``): what ``attack`` scores against."""


def adversary(key: str, true_matches: int, trials: int) -> Adversary:
    """``--key``, ``--known``, ``--trials`` as one ``Adversary`` (parameter ``adversary``).
    ``--known`` is named ``true_matches`` here: it is no criterion's parameter (a job file's
    ``[model] known``, (k,ℓ)'s ℓ, never reaches it)."""
    from anonymatch.tables.risk.attack import Adversary

    return Adversary(key, true_matches, trials)


@command()
@click.argument("original")
@click.argument("published")
@click.option(
    "--known", "true_matches", required=True, type=int, help="True matches the adversary knows."
)
@click.option("--trials", default=100, show_default=True, type=int, help="Random repetitions.")
@click.option(
    "--key",
    required=True,
    help="A column with a unique value per person, present in ORIGINAL and PUBLISHED (kept as a "
    "sensitive column): it gives the true matching to score the attack against.",
)
@criteria_options(LEVEL_CRITERIA)  # the level the release promises: -k or --k-column
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs.")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
@release_table_option
@table_input_options
@release_check
@with_step(adversary, "adversary")
def attack(
    original: str,
    published: str,
    check: ReleaseCheck,
    adversary: Adversary,
    seed: int | None,
    as_json: bool,
    release_table: str | None,
    csv: CsvOptions,
) -> None:
    """Simulate an adversary who knows some true matches.

    The adversary knows --known true matches of PUBLISHED (a release of ORIGINAL): how many
    published rows can each other person still be (Choromanski et al. §4), and how often a random
    attack succeeds."""
    from anonymatch.tables.models.adaptive import attack_release

    if (check.k is None) == (check.k_column is None):
        raise InputError("give exactly one of --k and --k-column")
    orig = read_table(original, csv)
    pub = read_release(published, release_table)
    seed = draw_seed(seed)
    report = attack_release(pub, orig, check, adversary, seed)
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "seed": seed}, indent=2))
        return
    click.echo(
        f"adversary knows {report.known} true matches; {report.trials} trials,"
        f" {report.people} people each"
    )
    click.echo(
        f"candidate rows per person: min {report.min_candidates},"
        f" mean {report.mean_candidates:.2f}; below level − known:"
        f" {report.below_guarantee} ({100 * report.below_guarantee_fraction:.2f}%)"
    )
    shown = list(report.candidates_histogram.items())[:12]
    click.echo(
        "candidates -> people (summed over trials): "
        + ", ".join(f"{c}: {p}" for c, p in shown)
        + (", ..." if len(report.candidates_histogram) > len(shown) else "")
    )
    click.echo(
        f"random attack success probability: {report.success_probability:.4f}"
        f" (worst trial {report.worst_trial_success_probability:.4f}); seed {seed}"
    )


COMMANDS = [attack]
