"""Command line for relational-transaction data (people with a row and a set):
``anonymize-rt``, ``verify-rt``, ``evaluate-rt``.

Errors raised on purpose become one line on stderr and exit 2 (bad input: unknown id column, a
person with conflicting attributes, item ids absent from the people table, no item at all),
3 (k larger than the number of people) or 4 (failed verification) through
``anonymatch.cli.main``; nothing is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from anonymatch.app.outputs import SET_RELEASE_EXTENSIONS
from anonymatch.cli.options import (
    comma_list,
    exit_verdict,
    json_default,
    missing_codes_option,
    output_options,
    per_column,
    qi_type_options,
    seed_option,
    sensitive_model_options,
    verbosity_options,
)
from anonymatch.relational.methods import names

F = TypeVar("F", bound=Callable[..., Any])


def people_options(func: F) -> F:
    """How to read the people: ``--items``, ``--id``, ``--item-column``, ``--na``, and the
    roles ``--qi`` and ``--numeric`` (every relational command)."""
    for option in reversed(
        [
            click.option(
                "--items",
                "items_path",
                default=None,
                metavar="ITEMS",
                help="Long items table (one row per person id and item), joined on --id. "
                "Without it PEOPLE is one long table with each person's attributes repeated.",
            ),
            click.option("--id", "id_column", required=True, help="The person id column."),
            click.option("--item-column", required=True, help="The item column."),
            click.option(
                "--na",
                "na",
                multiple=True,
                metavar="COLUMN=CODE|CODE",
                help="Missing codes: of the item column, 'no item' (e.g. ICD9CODX=-1); of a QI, a "
                "missing value (published as *). Repeatable.",
            ),
            click.option("--qi", required=True, help="Quasi-identifier columns (comma list)."),
            click.option("--numeric", default="", help="QIs published as ranges (comma list)."),
        ]
    ):
        func = option(func)
    return func


def sensitive_options(func: F) -> F:
    """``--sensitive`` and the models ``--l``, ``--diversity``, ``--c``, ``--t``."""
    func = sensitive_model_options(func)
    return click.option(
        "--sensitive",
        default=None,
        help="Sensitive columns (attached by the true match; --l/--t protect them).",
    )(func)


def _models(
    sensitive: str | None,
    l: str | None,  # noqa: E741 - the flag's name
    diversity: str,
    c: float | None,
    t: str | None,
) -> dict[str, Any]:
    """The sensitive-model keywords of a relational job, from the command line."""
    return {
        "sensitive": comma_list(sensitive),
        "l": per_column("--l", l, int),
        "diversity": diversity,
        "c": c,
        "t": per_column("--t", t, float),
    }


def _read(
    people_path: str, items_path: str | None, id_column: str, item_column: str, na: Sequence[str]
) -> Any:
    from anonymatch.relational.io import read_relational

    codes = missing_codes_option(None, na)
    return read_relational(
        people_path, items_path, id_column, item_column, codes.for_column(item_column)
    )


def _qi_codes(na: Sequence[str], item_column: str) -> Any:
    """The ``--na`` codes of the people's columns (the item column's mean "no item")."""
    from anonymatch.tables.columns.schema import MissingCodes

    codes = missing_codes_option(None, na)
    columns = {c: v for c, v in codes.columns.items() if c != item_column}
    return MissingCodes(codes.tokens, columns)


@click.command("anonymize-rt")
@click.argument("people_path", metavar="PEOPLE")
@output_options("Release file (JSON Lines: .jsonl, .ndjson or .json).", report=False,
                extensions=SET_RELEASE_EXTENSIONS)  # fmt: skip
@click.option("--report", "report_path", default=None, help="Write the JSON audit manifest here.")
@people_options
@qi_type_options
@click.option("-k", "--k", "k", type=int, required=True, help="k-anonymity level.")
@click.option("--method", type=click.Choice(names()), default=names()[0], show_default=True)
@click.option(
    "--item-weight",
    type=float,
    default=None,
    help="Price of one uncertain item in GCP units (default 0.005).",
)
@click.option("--partition-size", type=int, default=None, help="People per partition.")
@sensitive_options
@seed_option
def anonymize_rt_cmd(
    people_path: str,
    output: str,
    quiet: bool,
    report_path: str | None,
    items_path: str | None,
    id_column: str,
    item_column: str,
    na: Sequence[str],
    qi: str,
    numeric: str,
    qi_types: Any,
    k: int,
    method: str,
    item_weight: float | None,
    partition_size: int | None,
    sensitive: str | None,
    l: str | None,  # noqa: E741
    diversity: str,
    c: float | None,
    t: str | None,
    seed: int | None,
) -> None:
    """Publish people with a row and a set of items k-anonymous, verified.

    Freeform k-anonymity over the joint compatibility graph: every person matches at least k
    published records (QI cells and set part) through k disjoint assignments, one chosen
    uniformly at random. The release is verified before it is written."""
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.relational.io import write_release
    from anonymatch.relational.job import DEFAULT_ITEM_WEIGHT, RelationalJob
    from anonymatch.relational.pipeline import run_job

    started = time.perf_counter()
    job = RelationalJob.build(
        k=k,
        qi=comma_list(qi),
        numeric=comma_list(numeric),
        method=method,
        item_weight=DEFAULT_ITEM_WEIGHT if item_weight is None else item_weight,
        partition_size=partition_size,
        seed=seed,
        types=qi_types or None,
        na_values=_qi_codes(na, item_column),
        **_models(sensitive, l, diversity, c, t),
    )
    people = _read(people_path, items_path, id_column, item_column, na)
    result = run_job(people, job)
    clock = time.perf_counter()
    write_release(output, result.release)
    report: dict[str, Any] = dict(result.report)
    report["seconds"] = {**report["seconds"], "write": time.perf_counter() - clock}
    finish_manifest(report, people_path, output, started, command="anonymize-rt")
    write_manifest(report_path, report)
    if not quiet:
        v, loss = result.verification, report["loss"]
        click.echo(
            f"{method}, k = {k}, {people.n} people, {people.items.n_items} items -> {output}"
        )
        click.echo(
            f"verified: {'PASS' if v.passed else 'FAIL'} - {v.factor_flow}/{v.factor_required}"
            f" disjoint matches; fewest matches per person {v.min_matches_original}"
        )
        click.echo(
            f"relational GCP {100 * float(loss['gcp']):.2f}%; uncertain items per record "
            f"{float(loss['mean_uncertain']):.2f}; time {report['seconds']['wall']:.1f} s"
        )


@click.command("verify-rt")
@click.argument("people_path", metavar="PEOPLE")
@click.argument("published")
@people_options
@qi_type_options
@click.option("-k", "--k", "k", type=int, required=True, help="k-anonymity level.")
@sensitive_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
def verify_rt_cmd(
    people_path: str,
    published: str,
    items_path: str | None,
    id_column: str,
    item_column: str,
    na: Sequence[str],
    qi: str,
    numeric: str,
    qi_types: Any,
    k: int,
    sensitive: str | None,
    l: str | None,  # noqa: E741
    diversity: str,
    c: float | None,
    t: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Check a relational-transaction release: k-anonymous over the joint compatibility.

    Is PUBLISHED (JSONL) k-anonymous w.r.t. PEOPLE (and --items)? Exit 0 iff it is, 4 if not."""
    from anonymatch.relational.io import read_release
    from anonymatch.relational.job import RelationalJob
    from anonymatch.relational.pipeline import encode
    from anonymatch.relational.verify import verify_relational

    job = RelationalJob.build(
        k=k,
        qi=comma_list(qi),
        numeric=comma_list(numeric),
        types=qi_types or None,
        na_values=_qi_codes(na, item_column),
        **_models(sensitive, l, diversity, c, t),
    )
    people = _read(people_path, items_path, id_column, item_column, na)
    release = read_release(published, people, job.schema.qi)
    report = verify_relational(
        release, people, encode(people, job.schema, job.na), job.k, models=job.models
    )
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    elif not quiet:
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {report.reason}; k = {report.k}, "
            f"{report.n_original} people, {report.n_published} published records, "
            f"{report.factor_flow}/{report.factor_required} disjoint matches"
        )
    exit_verdict(report.passed)


@click.command("evaluate-rt")
@click.argument("people_path", metavar="PEOPLE")
@click.argument("published")
@people_options
@qi_type_options
@click.option("--queries", type=int, default=1000, show_default=True, help="Count queries.")
@click.option(
    "--attributes", type=int, default=2, show_default=True, help="Attribute predicates per query."
)
@verbosity_options
def evaluate_rt_cmd(
    people_path: str,
    published: str,
    items_path: str | None,
    id_column: str,
    item_column: str,
    na: Sequence[str],
    qi: str,
    numeric: str,
    qi_types: Any,
    queries: int,
    attributes: int,
    quiet: bool,
) -> None:
    """Utility of a relational-transaction release (JSON on stdout): relational GCP, uncertain
    items per record, relative error of count queries mixing attribute ranges and items."""
    from anonymatch.core.params import integer
    from anonymatch.relational.io import read_release
    from anonymatch.relational.metrics import relational_utility
    from anonymatch.relational.pipeline import encode
    from anonymatch.tables.columns.schema import Schema

    schema = Schema.build(comma_list(qi), comma_list(numeric), types=qi_types or None)
    people = _read(people_path, items_path, id_column, item_column, na)
    release = read_release(published, people, schema.qi)
    figures = relational_utility(
        people,
        release,
        encode(people, schema, _qi_codes(na, item_column)),
        integer(queries, "queries"),
        integer(attributes, "attributes"),
    )
    click.echo(json.dumps(figures.to_dict(), indent=2, default=json_default))


COMMANDS = [anonymize_rt_cmd, verify_rt_cmd, evaluate_rt_cmd]
