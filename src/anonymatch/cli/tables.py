"""Command-line interface: a thin layer over the API.

Every error the library raises on purpose becomes one line on stderr and a non-zero exit code
(2 bad input, 3 infeasible, 4 failed verification, 5 workers kept dying); nothing is written
in that case.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from anonymatch.app.outputs import TABLE_RELEASE_EXTENSIONS
from anonymatch.app.tablejob import unchecked_claims
from anonymatch.cli.analysis import Analysis, DpRequest, analysis_options, dp_companion_options
from anonymatch.cli.config import (
    execution_group,
    input_options_block,
    manifest_callback,
    read_release,
    release_check,
    release_table_option,
    typed_table_job,
    with_job_file,
)
from anonymatch.cli.options import (
    PopulationFlags,
    TestTable,
    check_output_path,
    claim_outputs,
    criteria_group,
    criteria_options,
    csv_safe_option,
    echo_check_summary,
    echo_explanation,
    echo_sensitive_risk,
    executor_options,
    exit_verdict,
    histogram_text,
    in_cli_words,
    input_block,
    json_default,
    output_options,
    population_options,
    qi_type_options,
    risk_options,
    seed_option,
    share_text,
    stage_bar,
    table_input_options,
    test_table_options,
    verbosity_options,
    warn_honestly,
)
from anonymatch.cli.series import SeriesRequest, print_series, series_options
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError
from anonymatch.core.manifest import load_manifest
from anonymatch.core.params import STREAM_MIN_ROWS, number
from anonymatch.tables.io import CsvOptions, read_table
from anonymatch.tables.job import RINGS_WEAKNESS, STRUCTURES, choose_path
from anonymatch.tables.methods import ALL_PAIRS_MAX_N, names
from anonymatch.tables.models import CRITERIA, KL_CRITERIA, POPULATION_CRITERIA
from anonymatch.tables.models.kl import KLAnonymity
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.core.criteria import Criterion, Verdict
    from anonymatch.core.params import Execution
    from anonymatch.tables.job import ReleaseCheck, TableJob

F = TypeVar("F", bound=Callable[..., Any])

EXECUTOR_MEANING = (
    "threads = in memory (one process; the solvers' own threads); inline = streamed, "
    "partition after partition in this process; processes = streamed on local processes; "
    "dask = streamed on a Dask cluster (local with --workers, or --scheduler); auto = in "
    f"memory for inputs under {STREAM_MIN_ROWS:,} rows, else streamed on processes (Dask with "
    "--workers or --scheduler)."
)
VERIFY_EXECUTOR_MEANING = (
    "for a partitioned release (--manifest): threads = check the whole release in memory; "
    "inline/processes/dask = stream both files partition by partition there; auto = processes "
    "(Dask with --workers or --scheduler)."
)


def _chunk_rows_option(func: Any) -> Any:
    return click.option(
        "--chunk-rows",
        type=int,
        default=None,
        help="Rows per job of the streamed path (whole partitions; default 50,000).",
    )(func)


def _suppression_limit_option(help_text: str) -> Any:
    """``--suppression-limit``, over the ``--config`` job file's ``model.suppression_limit``
    (typed: :func:`job_limit`)."""
    option = click.option(
        "--suppression-limit", type=float, default=None, metavar="SHARE", help=help_text
    )
    return lambda func: option(with_step(job_limit, "suppression_limit")(func))


def job_limit(ctx: click.Context, suppression_limit: float | None) -> float | None:
    """The suppression limit of the command line, else of the job file (parameter
    ``suppression_limit``)."""
    return with_job_file(ctx, {"suppression_limit": suppression_limit})["suppression_limit"]


strict_option = criteria_options(CHECK_OPTIONS)  # --strict, from the leakage check


@command()
@click.argument("input_path", metavar="INPUT")
@output_options(
    "Release file (.csv, .tsv, .parquet, .xlsx, .sav or .dta; on the streamed path also a"
    " directory of Parquet parts).",
    extensions=TABLE_RELEASE_EXTENSIONS,
    directory=True,
)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="QIs published as ranges (the others as value sets).")
@click.option(
    "--sensitive",
    default=None,
    help="Sensitive columns (kept, attached by the true match); distinct l = 2 by default "
    "(no person's candidate rows all show one value), --l 1 publishes them unprotected.",
)
@click.option("--identifiers", default=None, help="Identifier columns (dropped).")
@click.option(
    "--method",
    type=click.Choice(names()),
    default="hungarian",
    show_default=True,
)
@click.option(
    "--partition-size",
    type=int,
    default=None,
    help="Records per partition (≥ 2k; default per method).",
)
@seed_option
@click.option("--weights", default=None, help="Attribute weights for GCP, e.g. age=2,sex=0.5.")
@click.option(
    "--time-limit",
    type=float,
    default=None,
    help="Seconds: per exact MIP solve (mip; default 60); for hungarian/sortgreedy/greedy, "
    "the rounds' budget: partitions not done by then are published as blocks (classes).",
)
@click.option(
    "--epsilons",
    default=None,
    help="b-matching: the ε values swept, largest first (default 2^-1,…,2^-10).",
)
@click.option(
    "--neighbours",
    type=int,
    default=None,
    help=f"b-matching: candidate neighbours per record (default: all pairs up to "
    f"{ALL_PAIRS_MAX_N} rows, else max(20, 4·max δ)).",
)
@click.option(
    "--patience",
    type=int,
    default=None,
    help="b-matching: stop the ε sweep after this many ε values in a row without fewer stars "
    "(default 2; 0 = sweep every ε).",
)
@click.option(
    "--candidates",
    type=int,
    default=None,
    help="b-matching: each record's cheapest records under every solve's own costs added to "
    "its candidate pairs (default max(20, 4·max δ); 0 = the fixed neighbourhoods only).",
)
@click.option(
    "--cell-weights",
    default=None,
    help="b-matching/agglomerative: CSV with one column per QI and one row per record giving "
    "the cost of starring each cell.",
)
@criteria_options(CRITERIA)
@criteria_group(CRITERIA)
@click.option(
    "--structure",
    type=click.Choice(list(STRUCTURES)),
    default="classes",
    show_default=True,
    help="With --l/--t, what the freeform methods publish: classes that satisfy the models, or "
    f"sensitive rings where they cost less GCP (with a certificate). Warning: {RINGS_WEAKNESS}. "
    "Without: 'blocks' replaces the rounds by classes of k…2k−1 consecutive records of a sort "
    "order (seconds at any k; the default from k ≈ 470, where the rounds take minutes).",
)
@qi_type_options
@_suppression_limit_option(
    "Share of the records, in [0, 1), that may be dropped from the release as outliers when "
    "that lowers the loss (ARX's suppression limit; default 0: none). In-memory path only."
)
@executor_options(EXECUTOR_MEANING)
@_chunk_rows_option
@csv_safe_option
@click.option(
    "--output-table",
    default=None,
    help="Database release (-o a URL such as postgresql://user@host/db or sqlite:///file.db): "
    "the table created, in one transaction (an existing one only with --force).",
)
@strict_option
@click.option("--series", "series_dir", default=None, metavar="DIR", help="Publish the next "
              "release of the series in DIR, with --person-id; columns other than the QIs, the "
              "sensitive column and identifiers are refused (docs/series.md).")  # fmt: skip
@click.option("--person-id", default=None, help="The column linking a person across the "
              "series' releases (never published).")  # fmt: skip
@dp_companion_options
@table_input_options
@typed_table_job
@click.pass_context
def anonymize(
    ctx: click.Context,
    input_path: str,
    output: str,
    job: TableJob,
    csv_safe: bool,
    report_path: str | None,
    force: bool,
    quiet: bool,
    csv: CsvOptions,
    output_table: str | None = None,
    dp: DpRequest | None = None,
    series_dir: str | None = None,
    person_id: str | None = None,
) -> None:
    """Publish a table k-anonymous, verified.

    INPUT is published k-anonymous (--k) or adaptively anonymous (--k-column, suppression
    methods); the release is verified before it is written."""
    from anonymatch.cli import import_quietly

    started = time.perf_counter()
    import_quietly("anonymatch.tables.pipeline", "anonymatch.tables.io.cells")
    from anonymatch.tables import run_job
    from anonymatch.tables.io.cells import write_release
    from anonymatch.tables.io.sidecar import release_schema
    from anonymatch.tables.io.sql import (
        ColumnTypes,
        SqlSource,
        check_output_table,
        is_database_url,
        write_sql_release,
    )

    db_in, db_out = is_database_url(input_path), is_database_url(output)
    if not quiet and not db_in:
        _say_sniffed(input_path, csv)
    if output_table is not None and not db_out:
        raise InputError("--output-table writes to a database URL given as -o")
    source = SqlSource(input_path, csv.table, csv.query) if db_in else None
    if db_out:  # no output may be an input: the same table, or a query reading it
        check_output_table(output, output_table, force, source)
    streamed = choose_path(job, input_path, output, csv)
    from anonymatch.tables.series.publish import SeriesRun

    picked = with_job_file(ctx, _series_flags(series_dir, person_id),
                           lambda j: _series_flags(j.series.dir, j.series.person_id))  # fmt: skip
    why = "not on the streamed path (--executor threads)" if streamed else None
    why = "not to a database" if db_in or db_out else why
    series = SeriesRun.open(picked["series_dir"], picked["person_id"], job,
                            "without --dp-queries" if dp else why)  # fmt: skip
    from anonymatch.tables.io import is_excel
    from anonymatch.tables.io.stats import (
        is_stats_file,
        keeps_user_missing,
        kept_value_labels,
        user_missing_as_na,
    )

    special = (is_stats_file(input_path), is_stats_file(output), is_excel(input_path),
               is_excel(output))  # fmt: skip
    if dp is not None and streamed is not None:
        raise InputError("--dp-queries needs the in-memory path (--executor threads)")
    if streamed is not None and any(special):
        raise InputError(
            "an SPSS/Stata/SAS or an Excel file is read and written on the in-memory path"
        )
    for path in (None if streamed or db_out else output, report_path):
        check_output_path(path, "" if db_in else input_path)
    report: dict[str, Any]
    if streamed is not None:  # job.strict: a leak is refused before anything is committed
        from anonymatch.tables.streamed import anonymize_file

        report = anonymize_file(
            input_path,
            output,
            job,
            csv=csv,
            executor=streamed,
            # output_options refused existing parts without --force; a table is
            # checked again in the write's transaction (one created meanwhile: kept)
            replace=force if db_out else True,
            csv_safe=csv_safe,
            output_table=output_table if db_out else None,  # one transaction
        )
    else:
        keep = dataclasses.replace(csv, keep_user_missing=not db_out and keeps_user_missing(output))
        frame = read_table(input_path, keep)
        check = job.check  # user-missing codes stay only in the columns published untouched
        protected = {
            *check.schema.qi,
            *(m.column for m in check.models),
            *filter(None, [check.k_column]),
        }
        plain = user_missing_as_na(frame, protected)
        release = run_job(plain, job) if series is None else series.publish(plain)
        if db_out:  # a table created in one transaction
            assert output_table is not None
            typing = release_schema(release.table, release.qi)  # the CSV sidecar's typing
            types = ColumnTypes.of(source, release.qi.names)  # a source's types but the QIs'
            write_sql_release(
                output, output_table, release.table, replace=force, typing=typing, types=types
            )
            report = dict(release.report)
        else:
            release.table.attrs["variable_labels"] = frame.attrs.get("variable_labels") or {}
            release.table.attrs.update(kept_value_labels(frame.attrs, protected))
            write_release(output, release.table, release.cells, release.qi, csv_safe)
            report = _note_csv_safe(release.report, output, csv_safe)
            if dp is not None:  # RELEASE.dp.json, committed with the release
                report["dp_companion"] = dp.publish(frame, release.table, release.qi)
        labels = frame.attrs.get("variable_labels")
        if labels:  # an SPSS/Stata/SAS file's variable labels (tables.io.stats)
            report["input"] = {**cast(dict[str, Any], report["input"]), "variable_labels": labels}
    report["parameters"] = {
        **cast(dict[str, Any], report["parameters"]),
        "input_options": input_options_block(csv, job.na, job.drop_missing),
    }
    _finish(report, input_path, output, csv, output_table, report_path, started, quiet)
    if series is not None:  # committed with the release and its manifest
        series.commit(report, csv_safe)
        if not quiet:
            click.echo(series.summary())


def _series_flags(series_dir: str | None, person_id: str | None) -> dict[str, str | None]:
    return {"series_dir": series_dir, "person_id": person_id}


def _note_csv_safe(report: Any, output: str, csv_safe: bool) -> dict[str, Any]:
    """The manifest with ``output.csv_safe`` recorded for a CSV/TSV release."""
    from anonymatch.tables.io import is_parquet
    from anonymatch.tables.io.stats import is_stats_release

    manifest = dict(report)
    if not is_parquet(output) and not is_stats_release(output):
        manifest["output"] = {**manifest["output"], "csv_safe": csv_safe}
    return manifest


def _finish(
    report: dict[str, Any],
    input_path: str,
    output: str,
    csv: CsvOptions,
    output_table: str | None,
    report_path: str | None,
    started: float,
    quiet: bool,
) -> None:
    """Complete the manifest (checksums, wall time), write it atomically, warn about what the
    kept columns give away (the same for a file and a database, source or release), print the
    summary. A database URL is recorded without its password, with the table or query read,
    or the table written; a file side keeps its digest."""
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.tables.io.sql import is_database_url, redact_url

    db_in, db_out = is_database_url(input_path), is_database_url(output)
    finish_manifest(
        report,
        None if db_in else input_path,
        None if db_out else output,
        started,
        command="anonymize",
    )
    if db_in:
        report["input"] = {**report["input"], **input_block(input_path, csv)}
    if db_out:
        report["output"] = {**report["output"], "path": redact_url(output), "table": output_table}
    write_manifest(report_path, report)
    warn_honestly(report)
    if quiet:
        return
    shown = report["output"]["path"] if db_in or db_out else output
    if report["guarantee"]["model"] == "adaptive-anonymity":
        _print_adaptive_summary(report, shown)
    else:
        _print_summary(report, shown)


def _say_sniffed(path: str, csv: CsvOptions) -> None:
    """One line on stderr when the separator was taken from the file's first lines (no
    ``--sep``, a ``.csv`` or other text file whose lines show ``;`` or tabs)."""
    from anonymatch.tables.io import csv_separator, is_parquet, sniff_separator

    p = Path(path)
    if csv.sep is not None or csv.fmt != "auto" or not p.is_file() or is_parquet(p):
        return
    if p.suffix.lower() in (".tsv", ".tab", ".xlsx", ".xls", ".sav", ".dta", ".sas7bdat"):
        return
    sniffed = sniff_separator(p)
    if sniffed is not None and csv_separator(p, csv) == sniffed:
        shown = "tab" if sniffed == "\t" else repr(sniffed)
        click.echo(
            f"anonymatch: reading {p.name} with separator {shown} (what its first lines show; "
            "--sep to choose)",
            err=True,
        )


def _manifest_partitions(path: str | None) -> int | None:
    """The partition count of a partitioned release's manifest (None for other layouts)."""
    if path is None:
        return None
    try:
        manifest = json.loads(Path(path).read_text())
        # schema anonymatch-manifest/1 keeps it in the output block; older manifests at the top
        layout = (manifest.get("output") or {}).get("layout", manifest.get("layout"))
        if layout != "partitioned":
            return None
        return int(manifest["parameters"]["partitions"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the manifest {path}: {exc}") from None


def _manifest_suppression(path: str | None) -> tuple[float, int | None]:
    """The suppression limit and partition size recorded in a manifest (0 and None without
    one, or for older manifests)."""
    if path is None:
        return 0.0, None
    try:
        parameters = json.loads(Path(path).read_text()).get("parameters", {})
        size = parameters.get("partition_size")
        return float(parameters.get("suppression_limit") or 0.0), int(size) if size else None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the manifest {path}: {exc}") from None


def _manifest_certificate(path: str | None) -> dict[str, object] | None:
    """The ring certificate a manifest records (``guarantee.certificate``), or None."""
    if path is None:
        return None
    try:
        certificate = json.loads(Path(path).read_text()).get("guarantee", {}).get("certificate")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the manifest {path}: {exc}") from None
    return certificate if isinstance(certificate, dict) else None


def _print_summary(report: dict[str, Any], output: str) -> None:
    v, loss = report["verification"], report["loss"]
    k, source = report["guarantee"]["k"], report["input"]
    click.echo(
        f"{report['method']}, k = {k}, {report['output']['records']} rows"
        f" ({source['dropped_missing']} dropped for missing QIs"
        + (f", {source['suppressed']} suppressed as outliers" if source.get("suppressed") else "")
        + f") -> {output}"
    )
    plan = report.get("plan") or {}
    blocks = plan.get("blocks") or {}
    if blocks.get("partitions"):
        where = "every partition" if plan.get("path") == "streamed" else "the whole table"
        done = {
            "estimate": f"{where}, where the rounds would take minutes (--time-limit runs them)",
            "structure": f"{where} (--structure blocks)",
            "time_limit": f"{blocks['partitions']} of {report['parameters'].get('partitions')}"
            " partitions, past the time limit",
        }[blocks["why"]]
        click.echo(f"published as blocks (classes of k…2k−1 consecutive records): {done}")
    if source.get("missing_values"):
        click.echo(
            f"missing QI values kept: {source['missing_values']}; cells published as '*':"
            f" {loss.get('suppressed_cells', 0)}"
        )
    if report["output"].get("layout") == "partitioned":
        click.echo(
            f"verified: PASS - each of the {v['partitions']} partitions has a {v['k']}-factor;"
            f" fewest matches per original {v['min_matches_original']}"
        )
    else:
        click.echo(
            f"verified: {'PASS' if v['passed'] else 'FAIL'} - a {v['k']}-factor exists"
            f" ({v['k_factor_flow']}/{v['k_factor_required']} disjoint matches); fewest matches"
            f" per original {v['min_matches_original']}, per published row"
            f" {v['min_matches_published']}"
        )
    for check in v.get("sensitive", ()):
        _echo_sensitive(check)
    per = ", ".join(f"{a} {100 * x:.2f}%" for a, x in loss["ncp"].items())
    click.echo(f"information loss: GCP {100 * loss['gcp']:.2f}% ({per})")
    from anonymatch.app.honest import headline_text

    kept = headline_text(report)
    if kept is not None:
        click.echo(f"what the release keeps: {kept}")
    if "gcp_with_suppressed" in loss:
        click.echo(
            f"GCP counting each suppressed record as a row of '*': "
            f"{100 * loss['gcp_with_suppressed']:.2f}%"
        )
    click.echo(f"time: {report['seconds']['wall']:.1f} s")


def _print_adaptive_summary(report: dict[str, Any], output: str) -> None:
    v, loss, g = report["verification"], report["loss"], report["guarantee"]
    lv, rows = g["levels"], report["output"]["records"]
    levels = f"k = {g['k']}" if g["k"] else f"levels {lv['min']}..{lv['max']}"
    click.echo(f"{report['method']}, {levels}, {rows} rows -> {output}")
    click.echo(
        f"verified: {'PASS' if v['passed'] else 'FAIL'} - every person has at least their level"
        f" of matchable published rows (smallest surplus {v['min_slack']})"
        + (f", {v['uniform_k']}-factor exists" if v["k_factor_flow"] is not None else "")
    )
    click.echo(
        f"stars: {loss['stars']} of {rows * len(report['parameters']['qi'])} cells"
        f" (utility {100 * loss['utility']:.2f}%)"
        + (
            f"; agglomerative baseline {loss['baseline_stars']}"
            if loss.get("baseline_stars") is not None and report["method"] != "agglomerative"
            else ""
        )
    )
    click.echo(f"time: {report['seconds']['wall']:.1f} s")


@command()
@click.argument("original")
@click.argument("published")
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs (published as ranges).")
@click.option(
    "--identifiers",
    default=None,
    help="Identifier columns: the release fails if it has any of them.",
)
@click.option(
    "--manifest",
    default=None,
    is_eager=True,
    callback=manifest_callback,
    help="The release's JSON manifest (anonymize --report): k, QIs, sensitive models and the "
    "original's reading options are taken from it unless given. A partitioned release "
    "(streamed path) is then checked partition by partition, streaming both files.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--sensitive",
    default=None,
    help="Sensitive columns whose --l/--t models (default: distinct l = 2; --l 1: none) are "
    "checked (from the values the release "
    "shows on each person's candidate rows).",
)
@_suppression_limit_option(
    "The suppression limit the release was made with (default: the manifest's, else 0): a "
    "release may then lack up to that share of the original's people."
)
@executor_options(VERIFY_EXECUTOR_MEANING)
@_chunk_rows_option
@criteria_options(CRITERIA)
@criteria_group(CRITERIA)
@verbosity_options
@qi_type_options
@release_table_option
@table_input_options
@execution_group
@release_check
def verify(
    original: str,
    published: str,
    check: ReleaseCheck,
    manifest: str | None,
    as_json: bool,
    suppression_limit: float | None,
    release_table: str | None,
    execution: Execution,
    csv: CsvOptions,
    criteria: Mapping[str, Any],
) -> None:
    """Check that a table release is k-anonymous.

    Is PUBLISHED k-anonymous w.r.t. ORIGINAL? Exit 0 iff it is. With --k-column instead of --k:
    adaptively anonymous, each person's level read from that column. With --population FILE,
    also the criteria counted against it (--kmap, --journalist-risk, --delta-max/--delta-min).
    With --manifest, every claim of the manifest is checked; a claim that cannot be checked
    (an unknown one, a population given as a DataFrame or changed since) is reported
    UNCHECKED and exits 4."""
    from anonymatch.cli import import_quietly

    import_quietly("anonymatch.tables.pipeline")
    from anonymatch.tables.io.sql import is_database_url
    from anonymatch.tables.pipeline import verify_release

    if (check.k is None) == (check.k_column is None):
        raise InputError("give exactly one of --k and --k-column")
    claims = None if manifest is None else load_manifest(manifest)
    unchecked = unchecked_claims(claims, criteria.get("population"))
    asked = POPULATION_CRITERIA.build(criteria)  # the sensitive models: ``check``'s
    if claims is not None and KL_CRITERIA.claims(claims["guarantee"]):
        if asked or check.models:  # never passed unchecked
            raise InputError("a (k,ℓ) release is checked for its claim alone (no --l, --t, --kmap)")
        _verify_kl((original, published, release_table), check, claims, unchecked, as_json, csv)
    partitions = _manifest_partitions(manifest)
    if release_table or is_database_url(published):
        partitions = None  # a release table is checked whole, in memory
    if check.models or asked or unchecked or check.schema.identifiers:  # the whole release
        partitions = None
    if partitions is not None and check.k is not None and execution.executor != "threads":
        from anonymatch.tables.streamed import verify_file

        dask = execution.scheduler or (
            execution.executor == "auto" and execution.workers is not None
        )
        name = "processes" if execution.executor == "auto" else execution.executor
        streamed = dataclasses.replace(execution, executor="dask" if dask else name)
        result = verify_file(original, published, check, partitions, csv=csv, execution=streamed)
        if as_json:
            click.echo(json.dumps(result, indent=2))
        else:
            click.echo(
                f"{'PASS' if result['passed'] else 'FAIL'}: {result['reason']}; k = {check.k},"
                f" {result['n_original']} originals, {result['partitions']} partitions each"
                f" checked for a {check.k}-factor, fewest matches per original"
                f" {result['min_matches_original']}"
            )
        exit_verdict(bool(result["passed"]))
    orig = read_table(original, csv)
    pub = read_release(published, release_table)
    if check.k_column is not None:
        from anonymatch.tables.models.adaptive import verify_adaptive_release

        if check.schema.types:
            raise InputError("--ordinal/--date/--hierarchy are not supported with --k-column")
        adaptive = verify_adaptive_release(pub, orig, check)
        if as_json:
            click.echo(json.dumps(adaptive.to_dict(), indent=2))
        else:
            click.echo(
                f"{'PASS' if adaptive.passed else 'FAIL'}: {adaptive.reason};"
                f" {adaptive.n_original} originals, {adaptive.n_published} published rows,"
                f" smallest surplus of matchable rows over the level {adaptive.min_slack}"
            )
        exit_verdict(adaptive.passed)
    if suppression_limit is None:  # not given: the manifest's
        recorded_limit, recorded_size = _manifest_suppression(manifest)
        check = dataclasses.replace(
            check,
            suppression_limit=number(recorded_limit, "suppression_limit", high=1.0,
                                     low_open=False, high_open=True),
            partition_size=recorded_size,
        )  # fmt: skip
    if check.models and check.certificate is None:  # a ring release: every draw (§6)
        check = dataclasses.replace(check, certificate=_manifest_certificate(manifest))
    report = verify_release(pub, orig, check)
    if manifest is not None:  # its manifest was read: no certificate to point at
        from anonymatch.tables.pipeline import RING_HINT

        report = dataclasses.replace(report, reason=report.reason.removesuffix(RING_HINT))
    verdicts = _check_criteria(orig, pub, check, asked, criteria.get("population"), csv)
    passed = report.passed and all(v.passed for v in verdicts.values()) and not unchecked
    if as_json:
        figures = report.to_dict()
        figures.update({name: v.to_dict() for name, v in verdicts.items()})
        if unchecked:
            figures["unchecked"] = unchecked
        figures["passed"] = passed
        click.echo(json.dumps(figures, indent=2))
    else:
        status = "PASS" if report.passed else "FAIL"
        click.echo(
            f"{status}: {in_cli_words(report.reason)}; k = {check.k},"
            f" {report.n_original} originals,"
            f" {report.n_published} published rows"
            + (f" ({report.suppressed} people suppressed)" if report.suppressed else "")
            + ", fewest matches per original"
            f" {report.min_matches_original}, per published row"
            f" {report.min_matches_published}, k-factor flow"
            f" {report.k_factor_flow}/{report.k_factor_required}"
        )
        for check_ in report.sensitive:
            _echo_sensitive(check_)
        for criterion in asked:
            verdict = verdicts[criterion.name]
            click.echo(
                f"{criterion.title}: {'PASS' if verdict.passed else 'FAIL'} - {verdict.reason}"
            )
        for claim in unchecked:
            click.echo(f"UNCHECKED: {claim}")
    exit_verdict(passed)


def _verify_kl(
    files: tuple[str, str, str | None],
    check: ReleaseCheck,
    manifest: Mapping[str, Any],
    unchecked: list[str],
    as_json: bool,
    csv: CsvOptions,
) -> None:
    """``verify --manifest`` of a (k,ℓ) release: its claim re-checked by its criterion
    (``kl.recheck_claim``; k from -k if given, else the manifest's), then exit 0 (PASS) or 4.
    ``files``: the original, the release and its database table."""
    from anonymatch.tables.models.kl import recheck_claim

    claims = {**KL_CRITERIA.claims(manifest["guarantee"]), "k": check.k}
    original, published, release_table = files
    pub = read_release(published, release_table)
    criterion, verdict = recheck_claim(
        claims, read_table(original, csv), pub, check.schema, check.na, check.drop_missing
    )
    passed = verdict.passed and not unchecked
    if as_json:
        figures = {**verdict.to_dict(), **({"unchecked": unchecked} if unchecked else {})}
        click.echo(json.dumps({**figures, "passed": passed}, indent=2))
    else:
        click.echo(
            f"{'PASS' if verdict.passed else 'FAIL'}: {verdict.reason}; (k,ℓ) = "
            f"({criterion.k}, {criterion.known}), {len(pub)} published rows"
        )
        for claim in unchecked:
            click.echo(f"UNCHECKED: {claim}")
    exit_verdict(passed)


def _check_criteria(
    original: Any,
    release: Any,
    check: ReleaseCheck,
    criteria: Sequence[Criterion],
    population: str | None,
    csv: CsvOptions,
) -> dict[str, Verdict]:
    """Each criterion's verdict on ``release`` against ``population`` (read like the
    original), from the release and the population alone (``tables.risk.population``)."""
    if not criteria:
        return {}
    from anonymatch.tables.risk.population import PopulationInput, population_risk

    assert population is not None  # Registry.build asks for it
    as_file = dataclasses.replace(csv, table=None, query=None, sheet=None)  # a file, not the db
    view = population_risk(
        original, release, read_table(population, as_file), PopulationInput.of(check)
    )
    return {c.name: c.check(view) for c in criteria}


def _echo_sensitive(check: dict[str, Any]) -> None:
    """One line per checked sensitive model."""
    model = check["model"]
    what = []
    worst_l, worst_emd = check.get("worst_l"), check.get("worst_emd")
    if "l" in model:  # no figure when the check failed before any (``SensitiveCheck.failed``)
        extra = f", c = {model['c']:g}" if model["diversity"] == "recursive" else ""
        if model.get("default"):
            extra += " by default (a named sensitive column; --l 1 publishes it unprotected)"
        what.append(
            f"{model['diversity']} l-diversity l = {model['l']}{extra}"
            + (f" (weakest person: {worst_l:.3g})" if worst_l is not None else "")
        )
    if "t" in model:
        what.append(
            f"t-closeness t = {model['t']:g}, {model['ground_distance']} distance"
            + (f" (largest distance {worst_emd:.3f})" if worst_emd is not None else "")
        )
    click.echo(
        f"sensitive {check['column']!r}: {'PASS' if check['passed'] else 'FAIL'} - "
        + "; ".join(what)
        + f"; {check['failing']} of {check['people']} people fail,"
        f" {check['homogeneous']} see one value only"
    )


@dataclass(frozen=True)
class Learning:
    """``evaluate --classify/--regress``: the task, its target column, where to test (a file,
    or a held-out share of the original) and the seed of the split and the models."""

    task: str
    target: str
    test: TestTable | None
    test_size: float
    seed: int


def learning(
    label: str | None,
    regress: str | None,
    test: TestTable | None,
    test_size: float,
    split_seed: int,
) -> Learning | None:
    """``--classify``/``--regress``, ``--test`` (a ``TestTable``, from
    ``test_table_options``), ``--test-size``, ``--split-seed`` as one ``Learning`` (parameter
    ``learning``; None without ``--classify``/``--regress``)."""
    if label is not None and regress is not None:
        raise InputError("give one of --classify and --regress")
    if label is not None:
        return Learning("classify", label, test, test_size, split_seed)
    if regress is not None:
        return Learning("regress", regress, test, test_size, split_seed)
    return None


@command()
@click.argument("original")
@click.argument("published", nargs=-1, required=True)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs (published as ranges).")
@click.option("--weights", default=None, help="Attribute weights, e.g. age=2,sex=0.5.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option(
    "--classify",
    "label",
    default=None,
    help="Train classifiers on each release to predict this kept column; report accuracy.",
)
@click.option(
    "--regress",
    default=None,
    help="Train regressors on each release to predict this kept column; report R².",
)
@click.option(
    "--test-size",
    type=float,
    default=0.3,
    show_default=True,
    help="Held-out share of ORIGINAL without --test.",
)
@click.option(
    "--split-seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seeds the held-out split and the models (not a release's secret seed).",
)
@verbosity_options
@qi_type_options
@release_table_option
@table_input_options
@release_check
@test_table_options
@analysis_options
@with_step(learning, "learning")
def evaluate(
    original: str,
    published: Sequence[str],
    check: ReleaseCheck,
    as_json: bool,
    learning: Learning | None,
    release_table: str | None,
    csv: CsvOptions,
    analysis: Analysis | None = None,
) -> None:
    """Report information loss, or what models learn from releases.

    GCP and NCP per QI of one or more releases of ORIGINAL. With --classify LABEL (or
    --regress COLUMN): accuracy (R²) of a logistic (ridge) regression and a gradient-boosted
    model trained on each release and tested on original rows (--test, or a held-out part of
    ORIGINAL), beside the same models trained on the original and the majority class (mean).
    With --estimate: estimates combined over draws (anonymatch draw) by Rubin's rules; with
    --queries: a workload answered by ORIGINAL, releases, draws and DP companions."""
    from anonymatch.tables.pipeline import evaluate_release

    orig = read_table(original, csv)
    if analysis is not None:  # --estimate over draws, --queries (cli.analysis)
        analysis.run(orig, published, as_json, release_table)
        return
    if learning is not None:
        _learn(orig, published, learning, as_json, csv, check)
        return
    results = {p: evaluate_release(read_release(p, release_table), orig, check) for p in published}
    if as_json:
        click.echo(json.dumps({p: r.to_dict() for p, r in results.items()}, indent=2))
        return
    labels = [Path(p).name for p in published]
    width = max(12, *(len(x) for x in labels))
    click.echo("attribute".ljust(16) + "".join(x.rjust(width + 2) for x in labels))
    click.echo(
        "GCP".ljust(16) + "".join(f"{100 * r.gcp:.2f}%".rjust(width + 2) for r in results.values())
    )
    for attr in check.schema.qi:
        click.echo(
            f"  {attr}".ljust(16)
            + "".join(f"{100 * r.ncp[attr]:.2f}%".rjust(width + 2) for r in results.values())
        )


def _learn(
    orig: pd.DataFrame,
    published: Sequence[str],
    learning: Learning,
    as_json: bool,
    csv: CsvOptions,
    check: ReleaseCheck,
) -> None:
    """``evaluate --classify/--regress``: train on each release, test on original rows. With
    ``--drop-missing`` the original's and the test table's rows with a missing QI are dropped,
    as they were before publishing: the ceiling is trained on the rows the releases were made
    of."""
    from anonymatch.tables.columns.schema import missing_qi_mask
    from anonymatch.tables.models.draws import published_tables
    from anonymatch.tables.models.learn import learn

    def complete(frame: pd.DataFrame) -> pd.DataFrame:
        if not check.drop_missing:
            return frame
        check.schema.check_columns(frame)
        return frame.loc[~missing_qi_mask(frame, check.schema, check.na)].reset_index(drop=True)

    task, target = learning.task, learning.target
    test = None
    if learning.test is not None:  # its own --test-* options, else ORIGINAL's
        test = learning.test.read(csv)
        if target not in test.columns:
            raise InputError(f"the test table {learning.test.path} has no column {target!r}")
    if target not in orig.columns:
        raise InputError(f"the original has no column {target!r}")
    names, tables = published_tables(published)  # releases, draws, directories of draws
    report = learn(
        complete(orig),
        tables,
        target=target,
        task=task,
        test=None if test is None else complete(test),
        names=names,
        test_size=learning.test_size,
        seed=learning.seed,
    )
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    metric = "accuracy" if task == "classify" else "R²"
    models = list(report.original)
    width = max(18, *(len(Path(r["path"]).name) for r in report.releases))
    click.echo(
        f"{metric} predicting {target!r} on {report.test_rows} original rows ({report.test_source})"
    )
    click.echo("trained on".ljust(width + 2) + "".join(m.rjust(20) for m in models))
    for r in report.releases:
        click.echo(
            Path(r["path"]).name.ljust(width + 2)
            + "".join(_figure(task, r["scores"][m]).rjust(20) for m in models)
        )
    click.echo(
        "original".ljust(width + 2)
        + "".join(_figure(task, report.original[m]).rjust(20) for m in models)
    )
    floor = "majority class" if task == "classify" else "mean"
    click.echo(floor.ljust(width + 2) + _figure(task, report.floor).rjust(20))


def _figure(task: str, value: float) -> str:
    return f"{100 * value:.2f}%" if task == "classify" else f"{value:.4f}"


# (k,ℓ)-anonymity: -k and --known (ℓ, the attributes the adversary may know; --l means
# ℓ-diversity everywhere else) from its criterion (tables.models.KL_CRITERIA)


@command("check-kl")
@click.argument("table")
@criteria_options(KL_CRITERIA)
@click.option("--qi", required=True, help="Comma-separated public attributes.")
@click.option("--numeric", default=None, help="Numeric attributes (5 and 5..5 are one value).")
@click.option("--show", type=int, default=10, show_default=True, help="Violations to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
@table_input_options
@release_check
def check_kl_cmd(
    table: str, check: ReleaseCheck, known: int | None, show: int, as_json: bool, csv: CsvOptions
) -> None:
    """Check that a table is (k,ℓ)-anonymous.

    Is TABLE (an original or a release) (k,ℓ)-anonymous? Exit 0 iff it is."""
    from anonymatch.tables.columns.schema import missing_qi_mask
    from anonymatch.tables.models.kl import check_kl

    frame = read_table(table, csv)
    schema = check.schema
    if check.drop_missing:
        schema.check_columns([str(c) for c in frame.columns])
        frame = frame.loc[~missing_qi_mask(frame, schema, check.na)]
    criterion = KLAnonymity.build({"k": check.k, "known": known})
    numeric = [a for a in schema.qi if a in schema.numeric]
    report = check_kl(frame, criterion.k, criterion.known, list(schema.qi), numeric)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=json_default))
    else:
        echo_check_summary(report, f"(k,ℓ)-anonymity with ℓ = {report.level}", show)
    exit_verdict(report.passed)


@command("anonymize-kl")
@click.argument("input_path", metavar="INPUT")
@output_options("Release file (.csv, .tsv or .parquet).", extensions=TABLE_RELEASE_EXTENSIONS)
@criteria_options(KL_CRITERIA)
@click.option("--qi", required=True, help="Comma-separated public attributes.")
@click.option("--numeric", default=None, help="Attributes published as ranges.")
@click.option(
    "--sensitive",
    default=None,
    help="Sensitive columns (kept as they are: (k,l) puts no model on them; flagged unprotected).",
)
@click.option("--identifiers", default=None, help="Identifier columns (dropped).")
@click.option("--weights", default=None, help="Attribute weights for GCP, e.g. age=2.")
@strict_option
@seed_option
@csv_safe_option
@table_input_options
@release_check
def anonymize_kl_cmd(
    input_path: str,
    output: str,
    check: ReleaseCheck,
    known: int | None,
    seed: int | None,
    csv_safe: bool,
    report_path: str | None,
    quiet: bool,
    csv: CsvOptions,
) -> None:
    """Publish a table (k,ℓ)-anonymous, verified.

    Global generalization of INPUT by the hypergraph algorithm; the release is verified."""
    from anonymatch.core.manifest import finish_manifest, write_manifest
    from anonymatch.tables.io.cells import write_release
    from anonymatch.tables.models.kl import kl_release

    started = time.perf_counter()
    criterion = KLAnonymity.build({"k": check.k, "known": known})
    for path in (output, report_path):
        check_output_path(path, input_path)
    bar = stage_bar(3, quiet, "anonymize-kl")  # read, anonymize, write
    frame = read_table(input_path, csv)
    bar.update()
    release = kl_release(frame, check, criterion, seed=seed)  # check.strict: refused
    bar.update()
    write_release(output, release.table, release.cells, release.qi, csv_safe)
    bar.update()
    bar.close()
    from anonymatch.tables.io.sql import is_database_url

    db_in = is_database_url(input_path)
    report = finish_manifest(
        _note_csv_safe(release.report, output, csv_safe),
        None if db_in else input_path,
        output,
        started,
        command="anonymize-kl",
    )
    if db_in:
        report["input"] = {**report["input"], **input_block(input_path, csv)}
    write_manifest(report_path, report)
    warn_honestly(report)
    if not quiet:
        loss = report["loss"]
        click.echo(
            f"(k,ℓ) = ({criterion.k}, {criterion.known}), {report['output']['records']} rows,"
            f" {loss['merges']} merges -> {output}"
        )
        click.echo("verified: PASS (truthful generalization; no rare combination of ≤ ℓ values)")
        click.echo(f"information loss: GCP {100 * loss['gcp']:.2f}%")


# ---------------------------------------------------------------------------- transactions


# ---------------------------------------------------------------------------- graphs


COMMANDS = [anonymize, verify, evaluate, anonymize_kl_cmd, check_kl_cmd]


# ---------------------------------------------------------------------------- risk


def claimed(ctx: click.Context, force: bool) -> None:
    """Claim the command's outputs by the shared policy (``claim_outputs``, which reads
    ``--force``) before it runs; ``--force`` then concerns the command no further."""
    claim_outputs(ctx)


def certified(check: ReleaseCheck, manifest: str | None) -> ReleaseCheck:
    """The command's ``check`` with the ring certificate its ``--manifest`` records (with
    sensitive columns; ``guarantee.certificate``), so that the sensitive figures are those of
    the attacker who knows the certified graph; ``--manifest`` then concerns it no further."""
    if not check.schema.sensitive:
        return check
    return dataclasses.replace(check, certificate=_manifest_certificate(manifest))


@command("risk")
@click.argument("original")
@click.argument("release")
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option(
    "--numeric",
    default=None,
    help="Numeric QIs (published as ranges) and ordered sensitive columns.",
)
@risk_options("record")
@click.option(
    "--manifest",
    default=None,
    is_eager=True,
    callback=manifest_callback,
    help="The release's JSON manifest (anonymize --report): k, QIs and sensitive columns are "
    "taken from it unless given; a ring release's certificate (guarantee.certificate) makes "
    "the sensitive figures those of the attacker who knows the certified graph.",
)
@population_options
@series_options
@verbosity_options
@qi_type_options
@release_table_option
@table_input_options
@release_check
@with_step(certified, "check")
@with_step(claimed)
def risk_cmd(
    original: str,
    release: str,
    check: ReleaseCheck,
    as_json: bool,
    report_path: str | None,
    quiet: bool,
    release_table: str | None,
    csv: CsvOptions,
    population: PopulationFlags,
    series: SeriesRequest | None,
) -> None:
    """Measure the re-identification risk of a table release.

    Risk figures of RELEASE (any table in the release cell format, made by any method or tool)
    against ORIGINAL: candidate rows per person, prosecutor risk, and per --sensitive column
    homogeneity, posterior, distance to the table and l; the same for ORIGINAL's QIs published
    unchanged as a baseline. Exit 0 with the figures; 2 on bad input or a RELEASE that cannot be
    a release of ORIGINAL. --population FILE adds the figures against the population the
    original was sampled from (k-map, journalist and marketer risk, population uniques,
    delta-presence); --sampling-fraction or --weights estimate population uniqueness from the
    sample alone. With --manifest of a ring release, the sensitive figures are over the graph
    its certificate proves (every draw); otherwise over each person's candidate rows. --series
    DIR adds the composition attacker's figures of RELEASE joined to that series (verify-series'
    figures; docs/series.md)."""
    from anonymatch import __version__
    from anonymatch.core.manifest import utc_now, write_manifest
    from anonymatch.tables.risk.risk import assess, check_threshold

    threshold = check_threshold(population.threshold, "--threshold")
    orig = read_table(original, csv)
    pub = read_release(release, release_table)
    joined = (
        None
        if series is None
        else series.figures(orig, release, check.schema, (csv, check.na, check.drop_missing))
    )
    report = assess(orig, pub, check, threshold)
    figures = report.to_dict() | ({} if joined is None else {"series": joined})
    inputs: dict[str, Any] = {
        "original": input_block(original, csv),
        "release": input_block(release, CsvOptions(table=release_table)),
    }
    if series is not None:  # the earlier releases' people, by SHA-256
        inputs["series_originals"] = [input_block(p, csv) for p in series.originals]
    beyond = None
    if population.given:
        from anonymatch.tables.risk.population import PopulationInput

        options = PopulationInput.of(check, threshold)
        beyond = population_figures(orig, pub, population, options, csv)
        figures["population"] = beyond.to_dict()
        if population.population is not None:
            inputs["population"] = input_block(population.population, csv)
    document = {
        "schema": figures.pop("schema"),
        "tool": {"name": "anonymatch", "version": __version__},
        "created": utc_now(),
        "input": inputs,
        **figures,
    }
    write_manifest(report_path, document)  # atomic JSON; nothing when report_path is None
    if as_json:
        click.echo(json.dumps(document, indent=2, default=json_default))
    else:
        _print_risk(report, quiet)
        if beyond is not None:
            print_population(beyond)
        if joined is not None:
            print_series(joined)


_RISK_BASIS = {
    "candidates": "sensitive figures: candidate-based (over each person's candidate rows); for "
    "a release made of sensitive rings, pass its manifest (--manifest) for the posterior of "
    "the attacker who knows its certified graph",
    "certificate": "sensitive figures: over the graph the manifest's ring certificate proves "
    "(a ring window's k rows, a class's rows), the same for every draw (docs/guarantees/"
    "sensitive.md §6)",
}


def _print_risk(report: Any, quiet: bool) -> None:
    """One line per figure: the release beside the original's QIs published unchanged."""
    cand, pr, base = report.candidates, report.prosecutor, report.original
    claim = ""
    if report.k is not None:
        claim = f"; claimed k = {report.k} {'holds' if report.k_holds else 'DOES NOT HOLD'}"
    click.echo(f"{report.people} people, threshold {report.threshold:g}{claim}")
    rows = [
        ("", "release", "original QIs"),
        ("candidates per person: min", f"{cand.min}", f"{base.class_size.min}"),
        ("  median", f"{cand.median:g}", f"{base.class_size.median:g}"),
        ("  mean", f"{cand.mean:.2f}", f"{base.class_size.mean:.2f}"),
        ("unique (1 candidate)", share_text(cand.histogram.get(1, 0), report.people),
         share_text(base.sample_uniques, report.people)),
        ("prosecutor risk: max", f"{pr.max:.4f}", f"{base.prosecutor.max:.4f}"),
        ("  mean", f"{pr.mean:.4f}", f"{base.prosecutor.mean:.4f}"),
        (f"records above {report.threshold:g}", share_text(pr.above, report.people),
         share_text(base.prosecutor.above, report.people)),
        ("identical QI rows (class k)", f"{report.class_k}", f"{base.class_size.min}"),
    ]  # fmt: skip
    for label, a, b in rows:
        click.echo(f"{label:<30}{a:>16}{b:>16}")
    click.echo(f"candidates histogram: {histogram_text(cand.histogram)}")
    echo_sensitive_risk(report, "records")
    if report.sensitive:
        click.echo(_RISK_BASIS[report.basis])
    for line in report.known.lines() if report.known is not None else []:
        click.echo(line)
    if not quiet:
        echo_explanation(report)


def population_figures(
    original: Any, release: Any, flags: PopulationFlags, options: Any, csv: Any
) -> Any:
    """The ``population`` section (``PopulationReport``) of a risk report: ``options`` is the
    library's ``PopulationInput``, ``csv`` how to read the population file (as the original).
    Raises InputError (one line, exit 2) on a bad fraction, weight or population."""
    from anonymatch.core.errors import InputError
    from anonymatch.tables.io import read_table
    from anonymatch.tables.risk.estimators import check_fraction
    from anonymatch.tables.risk.population import PopulationSource, assess_population

    if flags.sampling_fraction is not None:
        check_fraction(flags.sampling_fraction, "--sampling-fraction")
    if flags.sampling_fraction is not None and flags.weights is not None:
        raise InputError("give --sampling-fraction or --weights, not both")
    as_file = dataclasses.replace(csv, table=None, query=None, sheet=None)  # a file, not the db
    table = None if flags.population is None else read_table(flags.population, as_file)
    source = PopulationSource(table, flags.sampling_fraction, flags.weights)
    return assess_population(original, release, options, source)


def print_population(report: Any) -> None:
    """The population figures, one line each (``risk`` without ``--json``)."""
    exact = report.exact
    if exact is not None:
        u = exact.uniques
        click.echo(f"population: {exact.population} records")
        click.echo(f"  k-map (fewest population records per published row)  {exact.kmap}")
        click.echo(
            f"  journalist risk  max {exact.journalist_max:.4f}, mean {exact.journalist_mean:.4f}"
        )
        click.echo(f"  marketer risk    {exact.marketer:.4f}")
        click.echo(
            f"  original QIs: unique in the sample {u.sample_uniques}, in the population "
            f"{u.population_uniques} ({100 * u.population_uniques / u.records:.2f}%)"
        )
        if exact.presence is not None:
            p = exact.presence
            click.echo(
                f"  delta-presence   {p.min:.4f} .. {p.max:.4f}; {p.outside} population records "
                "fit no published row"
            )
        else:
            click.echo(
                f"  delta-presence   not computed: {u.not_in_population} sample records are "
                "not in the population"
            )
    est = report.estimates
    parts = []
    for e in est.estimates:
        value = "n/a" if e.share is None else f"{100 * e.share:.2f}%"
        parts.append(f"{e.name} {value}" + (f" ({e.model})" if e.name == "dankar" else ""))
    click.echo(
        f"population uniques estimated from the sample (f = {est.fraction:.4g}): "
        + ", ".join(parts)
    )
    ind = est.individual
    click.echo(
        "individual risk of the original's QI rows, before release (sdcMicro): "
        f"max {ind.max():.4f}, mean {ind.mean():.4f}, expected "
        f"re-identifications {ind.sum():.1f}"
    )


COMMANDS.append(risk_cmd)
