"""Command line for relational-transaction data (people with a row and a set):
``anonymize-rt``, ``verify-rt``, ``evaluate-rt``, ``risk-rt``.

Each command takes its own flags and builds, in one call each, how to read the people (a
:class:`PeopleSource`) and the run (one validated ``anonymatch.relational.job.RelationalJob``,
:func:`relational_job`): no decorator rebuilds parameters behind the command's signature.

Errors raised on purpose become one line on stderr and exit 2 (bad input: unknown id column, a
person with conflicting attributes, item ids absent from the people table, no item at all),
3 (k larger than the number of people) or 4 (failed verification) through
``anonymatch.cli.main``; nothing is written.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from anonymatch.app.outputs import SET_RELEASE_EXTENSIONS
from anonymatch.cli.config import (
    execution_group,
    role_filtered,
    type_pieces,
    with_job_file,
)
from anonymatch.cli.options import (
    TABLE_FORMATS,
    comma_list,
    criteria_group,
    criteria_options,
    echo_explanation,
    echo_sensitive_risk,
    executor_options,
    exit_verdict,
    format_option,
    histogram_text,
    input_block,
    json_default,
    missing_codes_option,
    output_options,
    qi_type_options,
    risk_options,
    seed_option,
    share_text,
    verbosity_options,
    warn_honestly,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.params import STREAM_MIN_ROWS
from anonymatch.relational.job import streams
from anonymatch.relational.methods import names
from anonymatch.tables.models import RELATIONAL_CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    from anonymatch.core.params import Execution
    from anonymatch.relational.io import People
    from anonymatch.relational.job import RelationalJob
    from anonymatch.tables.columns.schema import MissingCodes

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class PeopleSource:
    """How to read the people: the items table (``--items``; None: one long table), the id
    and item columns (``--id``, ``--item-column``) and the ``--na`` codes (those of the item
    column mean "no item", the others missing QI values)."""

    items_path: str | None
    id_column: str
    item_column: str
    codes: MissingCodes
    fmt: str = "auto"

    def read(self, people_path: str) -> People:
        """The people of ``people_path`` (and the items table), both read with ``--format``."""
        from anonymatch.relational.io import read_relational
        from anonymatch.tables.io import CsvOptions

        return read_relational(
            people_path,
            self.items_path,
            self.id_column,
            self.item_column,
            self.codes.for_column(self.item_column),
            CsvOptions(fmt=self.fmt),
        )

    def rows(self, people_path: str) -> int:
        """Rows of the people table, and of the items table while the total is below
        ``STREAM_MIN_ROWS`` (what decides ``auto``'s path). O(rows counted)."""
        from anonymatch.tables.io import CsvOptions
        from anonymatch.tables.io.stream import count_rows

        csv = CsvOptions(fmt=self.fmt)
        rows = count_rows(people_path, csv)
        if self.items_path is not None and rows < STREAM_MIN_ROWS:
            rows += count_rows(self.items_path, csv)
        return rows

    def describe(self) -> dict[str, Any]:
        """The items table's path and SHA-256 for the manifest's ``input`` block (both None
        for one long table) and the reading ``format``."""
        from anonymatch.core.manifest import file_digest

        items = self.items_path
        return {
            "items_path": items,
            "items_sha256": file_digest(items) if items else None,
            "format": self.fmt,
        }

    def missing(self) -> dict[str, Any]:
        """The ``--na`` codes as the manifest's ``parameters.missing`` (the tables' shape:
        ``tokens`` and per-column ``columns``, the item column's meaning "no item")."""
        return {
            "tokens": list(self.codes.tokens),
            "columns": {c: list(v) for c, v in self.codes.columns.items()},
        }

    def qi_codes(self) -> MissingCodes:
        """The ``--na`` codes of the people's columns (without the item column's)."""
        from anonymatch.tables.columns.schema import MissingCodes

        codes = self.codes
        columns = {c: v for c, v in codes.columns.items() if c != self.item_column}
        return MissingCodes(codes.tokens, columns)


def people_options(func: F) -> F:
    """``--format``, ``--items``, ``--id``, ``--item-column``, ``--na`` (one
    :class:`PeopleSource`, parameter ``source``: :func:`people_source`), the roles ``--qi``,
    ``--numeric`` and the typed QIs (``--ordinal``, ``--date``, ``--hierarchy``, parameter
    ``qi_types``)."""
    decorated: Any = qi_type_options(with_step(people_source, "source")(func))
    for option in reversed(
        [
            format_option(TABLE_FORMATS, "by extension: .parquet Parquet, .tsv TSV, else CSV"),
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
        decorated = option(decorated)
    return cast(F, decorated)


def people_source(
    ctx: click.Context,
    items_path: str | None,
    id_column: str,
    item_column: str,
    na: Sequence[str],
    fmt: str,
) -> PeopleSource:
    """The value of :func:`people_options`: how to read the people (and their items), the
    ``--na`` codes over the ``--config`` job file's ``columns.*.na`` (typed)."""
    flags = {"na_values": missing_codes_option(None, na)}
    codes = with_job_file(ctx, flags)["na_values"]
    return PeopleSource(items_path, id_column, item_column, codes, fmt)


def sensitive_options(func: F) -> F:
    """``--sensitive`` (their models' ``--l``, ``--diversity``, ``--c``, ``--t`` are the
    criteria's options, ``tables.models.RELATIONAL_CRITERIA``)."""
    return click.option(
        "--sensitive",
        default=None,
        help="Sensitive columns (attached by the true match; --l/--t protect them, distinct "
        "l = 2 by default, --l 1: unprotected).",
    )(func)


TEXT_FLAGS: dict[str, Callable[[Any], Any]] = {
    "qi": comma_list,
    "numeric": comma_list,
    "identifiers": comma_list,
    "sensitive": comma_list,
}
"""The ``RelationalJob`` keywords whose flags are text, and how it is read."""


def people_keywords(ctx: click.Context, flags: Mapping[str, Any], qi_types: Any) -> dict[str, Any]:
    """The ``RelationalJob`` keywords of a run: ``flags`` (keyword → the command's flag, text
    read by :data:`TEXT_FLAGS`) and the typed QIs, each over the ``--config`` job file's typed
    value unless given on the command line (``with_job_file``; per-column values restricted
    to the run's roles), the typed QIs as ``types``; a keyword left None takes the job's
    default. O(columns + hierarchy files)."""
    from anonymatch.app.tablejob import with_types

    typed = {key: TEXT_FLAGS[key](v) if key in TEXT_FLAGS else v for key, v in flags.items()}
    typed.update(type_pieces(qi_types))
    merged = with_job_file(ctx, typed, role_filtered(ctx, typed, "relational"))
    return {key: value for key, value in with_types(merged).items() if value is not None}


def relational_job(
    ctx: click.Context,
    source: PeopleSource,
    qi_types: Any,
    flags: Mapping[str, Any],
    seed: int | None = None,
) -> RelationalJob:
    """The command's flags (``flags``: ``RelationalJob`` keyword → flag value) over the job
    file's (:func:`people_keywords`), the QIs' ``--na`` codes (of ``source``) and the seed, as
    one validated ``RelationalJob``. InputError (exit 2) naming the first bad flag."""
    from anonymatch.relational.job import RelationalJob

    keywords = people_keywords(ctx, flags, qi_types)
    return RelationalJob.build(dict(keywords, na_values=source.qi_codes(), seed=seed))


RT_EXECUTOR_MEANING = (
    "threads = in memory; inline = streamed, chunk after chunk in this process; processes = "
    "streamed on local processes; dask = streamed on a Dask cluster (local with --workers, or "
    f"--scheduler); auto = in memory for inputs under {STREAM_MIN_ROWS:,} rows (people and item "
    "rows together), else streamed on processes (Dask with --workers or --scheduler)."
)


def _stream_options(func: F) -> F:
    """``--stream``, the executor options and ``--chunk-rows`` of ``anonymize-rt``."""
    func = click.option(
        "--stream",
        is_flag=True,
        help="Take the streamed path whatever the input's size: both tables joined on disk, "
        "partitions anonymized and verified chunk by chunk (inputs larger than memory).",
    )(func)
    func = click.option(
        "--chunk-rows",
        type=int,
        default=None,
        help="People per job of the streamed path (whole partitions; default 50,000).",
    )(func)
    return executor_options(RT_EXECUTOR_MEANING)(func)


def _anonymize_streamed(
    people_path: str, output: str, job: RelationalJob, source: PeopleSource, run: Execution
) -> dict[str, Any]:
    """The streamed ``anonymize-rt`` (``anonymatch.relational.streamed``): the manifest."""
    from anonymatch.relational.streamed import RelationalFiles, anonymize_files
    from anonymatch.tables.io import CsvOptions

    files = RelationalFiles(
        people_path,
        source.items_path,
        source.id_column,
        source.item_column,
        tuple(str(c) for c in source.codes.for_column(source.item_column)),
        CsvOptions(fmt=source.fmt),
    )
    if run.executor == "auto":
        run = dataclasses.replace(
            run, executor="dask" if run.workers or run.scheduler else "processes"
        )
    return anonymize_files(files, output, job, run)


def _print_streamed(report: dict[str, Any], job: RelationalJob, output: str) -> None:
    v, loss = report["verification"], report["loss"]
    click.echo(
        f"{job.method.name}, k = {job.k}, {v['n_original']} people, "
        f"{report['input']['items']} items, streamed in {v['partitions']} partitions -> {output}"
    )
    click.echo(
        "verified: PASS - every partition has a k-factor; fewest matches per person "
        f"{v['min_matches_original']}"
    )
    click.echo(
        f"relational GCP {100 * float(loss['gcp']):.2f}%; uncertain items per record "
        f"{float(loss['mean_uncertain']):.2f}; time {report['seconds']['wall']:.1f} s"
    )


def _leak_text(manifest: Any) -> str:
    """The summary line's leakage verdict: the flagged columns, or that none leaks."""
    flagged = (manifest.get("leakage") or {}).get("flagged") or []
    if not flagged:
        return "kept columns: no leak found"
    return f"kept columns LEAK: {', '.join(map(str, flagged))} (warnings on stderr)"


@command("anonymize-rt")
@click.argument("people_path", metavar="PEOPLE")
@output_options("Release file (JSON Lines: .jsonl, .ndjson or .json).",
                extensions=SET_RELEASE_EXTENSIONS)  # fmt: skip
@click.option("--method", type=click.Choice(names()), default=names()[0], show_default=True)
@click.option(
    "--item-weight",
    type=float,
    default=None,
    help="Price of one uncertain item in GCP units (default 0.005).",
)
@click.option("--partition-size", type=int, default=None, help="People per partition.")
@click.option(
    "--identifiers",
    default="",
    help="Columns of the people table never published (comma list), as for anonymize; the "
    "--id column never is. Columns that together rebuild the id (INFORMS: DUID and PID make "
    "DUPERSID) belong here.",
)
@criteria_options(CHECK_OPTIONS)  # --strict, from the leakage check
@sensitive_options
@criteria_options(RELATIONAL_CRITERIA)
@criteria_group(RELATIONAL_CRITERIA)
@_stream_options
@seed_option
@people_options
@execution_group
@click.pass_context
def anonymize_rt_cmd(
    ctx: click.Context,
    people_path: str,
    output: str,
    quiet: bool,
    report_path: str | None,
    method: str,
    item_weight: float | None,
    partition_size: int | None,
    identifiers: str,
    strict: bool,
    sensitive: str | None,
    stream: bool,
    seed: int | None,
    source: PeopleSource,
    qi: str,
    numeric: str,
    qi_types: Any,
    execution: Execution,
    criteria: Mapping[str, Any],
) -> None:
    """Publish people with a row and a set, k-anonymous, verified.

    Freeform k-anonymity over the joint compatibility graph: every person matches at least k
    published records (QI cells and set part) through k disjoint assignments, one chosen
    uniformly at random. The release is verified before it is written; the columns it keeps
    unchanged are checked for leaks (warned about, refused with --strict)."""
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.relational.io import write_release
    from anonymatch.relational.pipeline import run_job

    started = time.perf_counter()
    job = relational_job(ctx, source, qi_types, dict(
        qi=qi, numeric=numeric, identifiers=identifiers, sensitive=sensitive,
        item_weight=item_weight, method=method, partition_size=partition_size, **criteria,
        strict=strict,  # job.strict: a leak is refused before anything is written
    ), seed)  # fmt: skip
    if streams(job, execution, stream, lambda: source.rows(people_path)):
        run = dataclasses.replace(execution, progress=not quiet)
        streamed = _anonymize_streamed(people_path, output, job, source, run)
        finish_manifest(streamed, people_path, output, started, command="anonymize-rt")
        streamed["input"].update(source.describe())
        streamed["parameters"]["missing"] = source.missing()
        write_manifest(report_path, streamed)
        warn_honestly(streamed)
        if not quiet:
            _print_streamed(streamed, job, output)
        return
    if execution.workers is not None:  # threads in memory
        job = job.replace({"workers": execution.workers})
    people = source.read(people_path)
    result = run_job(people, job)
    clock = time.perf_counter()
    write_release(output, result.release)
    report: dict[str, Any] = dict(result.report)
    report["seconds"] = {**report["seconds"], "write": time.perf_counter() - clock}
    finish_manifest(report, people_path, output, started, command="anonymize-rt")
    report["input"].update(source.describe())  # what the report needs to read them again
    report["parameters"]["missing"] = source.missing()
    write_manifest(report_path, report)
    warn_honestly(report)
    if not quiet:
        v, loss = result.verification, report["loss"]
        click.echo(
            f"{job.method.name}, k = {job.k}, {people.n} people, {people.items.n_items} items"
            f" -> {output}"
        )
        click.echo(
            f"verified: {'PASS' if v.passed else 'FAIL'} - {v.k_factor_flow}/{v.k_factor_required}"
            f" disjoint matches; fewest matches per person {v.min_matches_original}; "
            f"{_leak_text(report)}"
        )
        click.echo(
            f"relational GCP {100 * float(loss['gcp']):.2f}%; uncertain items per record "
            f"{float(loss['mean_uncertain']):.2f}; time {report['seconds']['wall']:.1f} s"
        )


@command("verify-rt")
@click.argument("people_path", metavar="PEOPLE")
@click.argument("published")
@sensitive_options
@criteria_options(RELATIONAL_CRITERIA)
@criteria_group(RELATIONAL_CRITERIA)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
@people_options
@click.pass_context
def verify_rt_cmd(
    ctx: click.Context,
    people_path: str,
    published: str,
    sensitive: str | None,
    as_json: bool,
    quiet: bool,
    source: PeopleSource,
    qi: str,
    numeric: str,
    qi_types: Any,
    criteria: Mapping[str, Any],
) -> None:
    """Check a relational release: k-anonymous on both parts.

    Is PUBLISHED (JSONL) k-anonymous w.r.t. PEOPLE (and --items)? With --population FILE,
    also the criteria counted against it on the QI cells (--kmap, --journalist-risk,
    --delta-max/--delta-min). Exit 0 iff everything holds, 4 if not."""
    from anonymatch.relational.io import read_release
    from anonymatch.relational.pipeline import check_criteria, encode
    from anonymatch.relational.verify import verify_relational

    job = relational_job(ctx, source, qi_types, dict(
        qi=qi, numeric=numeric, sensitive=sensitive, **criteria,
    ))  # fmt: skip
    people = source.read(people_path)
    release = read_release(published, people, job.schema.qi)
    enc = encode(people, job.schema, job.na)
    report = verify_relational(release, people, enc, job.k, models=job.models)
    verdicts = check_criteria(people, release, job)
    passed = report.passed and all(v.passed for v in verdicts.values())
    if as_json:
        figures = {**report.to_dict(), **{n: v.to_dict() for n, v in verdicts.items()}}
        click.echo(json.dumps({**figures, "passed": passed}, indent=2, default=json_default))
    elif not quiet:
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {report.reason}; k = {report.k}, "
            f"{report.n_original} people, {report.n_published} published records, "
            f"{report.k_factor_flow}/{report.k_factor_required} disjoint matches"
        )
        for criterion in job.criteria:
            verdict = verdicts[criterion.name]
            click.echo(
                f"{criterion.title}: {'PASS' if verdict.passed else 'FAIL'} - {verdict.reason}"
            )
    exit_verdict(passed)


@command("evaluate-rt")
@click.argument("people_path", metavar="PEOPLE")
@click.argument("published")
@click.option("--queries", type=int, default=1000, show_default=True, help="Count queries.")
@click.option(
    "--attributes", type=int, default=2, show_default=True, help="Attribute predicates per query."
)
@verbosity_options
@people_options
@click.pass_context
def evaluate_rt_cmd(
    ctx: click.Context,
    people_path: str,
    published: str,
    queries: int,
    attributes: int,
    source: PeopleSource,
    qi: str,
    numeric: str,
    qi_types: Any,
) -> None:
    """Report the utility of a relational-transaction release.

    JSON on stdout: relational GCP, uncertain items per record, relative error of count queries
    mixing attribute ranges and items, candidates per person on the joint graph."""
    from anonymatch.core.params import integer
    from anonymatch.relational.io import read_release
    from anonymatch.relational.metrics import relational_utility
    from anonymatch.relational.pipeline import encode
    from anonymatch.tables.columns.schema import Schema

    roles = people_keywords(ctx, {"qi": qi, "numeric": numeric}, qi_types)
    schema = Schema.build(roles["qi"], roles.get("numeric", ()), types=roles.get("types"))
    people = source.read(people_path)
    release = read_release(published, people, schema.qi)
    figures = relational_utility(
        people,
        release,
        encode(people, schema, source.qi_codes()),
        integer(queries, "queries"),
        integer(attributes, "attributes"),
    )
    click.echo(json.dumps(figures.to_dict(), indent=2, default=json_default))


@command("risk-rt")
@click.argument("people_path", metavar="PEOPLE")
@click.argument("published")
@risk_options("person")
@verbosity_options
@people_options
@click.pass_context
def risk_rt_cmd(
    ctx: click.Context,
    people_path: str,
    published: str,
    sensitive: str | None,
    k: int | None,
    threshold: float,
    as_json: bool,
    report_path: str | None,
    force: bool,
    quiet: bool,
    source: PeopleSource,
    qi: str,
    numeric: str,
    qi_types: Any,
) -> None:
    """Measure the re-identification risk of a relational release.

    Risk figures of PUBLISHED (JSONL, any method) against PEOPLE (and --items): candidate
    records per person (QI cells and set part both matching, in some one-to-one pairing),
    prosecutor risk, identical records, and per --sensitive column homogeneity, posterior,
    distance to the table and l; the same for PEOPLE's QIs and item sets published unchanged as
    a baseline; and the leakage of the columns PUBLISHED keeps unchanged (the tables' check).
    Exit 0 with the figures; 2 on bad input or a PUBLISHED that cannot be a release of
    PEOPLE."""
    from anonymatch import __version__
    from anonymatch.cli.options import claim_outputs
    from anonymatch.core.manifest import utc_now, write_manifest
    from anonymatch.core.params import optional_integer
    from anonymatch.relational.io import read_release
    from anonymatch.relational.risk import RiskQuestion, assess_relational, release_leakage
    from anonymatch.tables.columns.schema import Schema
    from anonymatch.tables.io import CsvOptions
    from anonymatch.tables.risk.risk import check_threshold

    claim_outputs(ctx)  # the shared output policy (``--report`` and ``--force``), up front
    roles = people_keywords(ctx, {"qi": qi, "numeric": numeric, "sensitive": sensitive,
                                  "k": k}, qi_types)  # fmt: skip
    schema = Schema.build(
        roles["qi"], roles.get("numeric", ()), sensitive=roles.get("sensitive", ()),
        types=roles.get("types"),
    )  # fmt: skip
    question = RiskQuestion(
        schema,
        source.qi_codes(),
        optional_integer(roles.get("k"), "k"),
        check_threshold(threshold, "--threshold"),
    )
    people = source.read(people_path)
    release = read_release(published, people, question.schema.qi)
    report = assess_relational(people, release, question)
    leakage = release_leakage(people, release, question)
    figures = report.to_dict()
    document = {
        "schema": figures.pop("schema"),
        "tool": {"name": "anonymatch", "version": __version__},
        "created": utc_now(),
        "data_kind": "relational",
        "input": {
            "original": {
                **input_block(people_path, CsvOptions(fmt=source.fmt)),
                **source.describe(),
                "id_column": source.id_column,
                "item_column": source.item_column,
                "missing": source.missing(),
            },
            "release": input_block(published, CsvOptions()),
        },
        **figures,
        "leakage": leakage.to_dict(),
    }
    write_manifest(report_path, document)  # atomic JSON; nothing when report_path is None
    if as_json:
        click.echo(json.dumps(document, indent=2, default=json_default))
    else:
        _print_risk(report, quiet, leakage)
        _print_leaks(leakage)


def _print_leaks(leakage: Any) -> None:
    """The leakage of the kept columns after the risk figures: one line per flagged column,
    or that none leaks (``tables.risk.leakage``)."""
    lines = leakage.lines()
    if not lines:
        click.echo(f"kept columns ({len(leakage.columns)}): no leak found")
        return
    click.echo(f"kept columns LEAK ({len(lines)} of {len(leakage.columns)} flagged):")
    for line in lines:
        click.echo(f"  {line}")


def _print_risk(report: Any, quiet: bool, leakage: Any) -> None:
    """One line per figure, the release beside the original published unchanged (the table
    ``risk``'s layout, ``cli.tables``); the first line says whether a kept column leaks."""

    cand, pr, base, n = report.candidates, report.prosecutor, report.original, report.people
    claim = ""
    if report.k is not None:
        claim = f"; claimed k = {report.k} {'holds' if report.k_holds else 'DOES NOT HOLD'}"
    leaks = [c.column for c in leakage.flagged]
    if leaks:
        claim += f"; kept columns LEAK: {', '.join(leaks)} (below)"
    click.echo(f"{n} people, threshold {report.threshold:g}, joint graph{claim}")
    rows = [
        ("", "release", "original"),
        ("candidates per person: min", f"{cand.min}", f"{base.class_size.min}"),
        ("  median", f"{cand.median:g}", f"{base.class_size.median:g}"),
        ("  mean", f"{cand.mean:.2f}", f"{base.class_size.mean:.2f}"),
        ("unique (1 candidate)", share_text(cand.histogram.get(1, 0), n),
         share_text(base.sample_uniques, n)),
        ("prosecutor risk: max", f"{pr.max:.4f}", f"{base.prosecutor.max:.4f}"),
        ("  mean", f"{pr.mean:.4f}", f"{base.prosecutor.mean:.4f}"),
        (f"people above {report.threshold:g}", share_text(pr.above, n),
         share_text(base.prosecutor.above, n)),
        ("identical records (class k)", f"{report.class_k}", f"{base.class_size.min}"),
    ]  # fmt: skip
    for label, a, b in rows:
        click.echo(f"{label:<30}{a:>16}{b:>16}")
    click.echo("(original: QIs and item sets published unchanged)")
    click.echo(f"candidates histogram: {histogram_text(cand.histogram)}")
    echo_sensitive_risk(report, "people")
    for line in report.known.lines() if report.known is not None else []:
        click.echo(line)
    if not quiet:
        echo_explanation(report)


COMMANDS = [anonymize_rt_cmd, verify_rt_cmd, evaluate_rt_cmd, risk_rt_cmd]
