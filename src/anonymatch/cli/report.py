"""``anonymatch report`` (the HTML report of a release) and ``anonymatch ui`` (the local web
app)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.cli.options import (
    HTML_EXTENSIONS,
    SET_FORMATS,
    TABLE_FORMATS,
    PopulationFlags,
    TestTable,
    claim_outputs,
    population_options,
    report_reading_options,
    test_table_options,
    verbosity_options,
)
from anonymatch.cli.series import SeriesRequest, series_options
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    from anonymatch.tables.io import CsvOptions

F = TypeVar("F", bound=Callable[..., Any])

REPORT_FORMATS = tuple(dict.fromkeys((*TABLE_FORMATS, *SET_FORMATS, "edges", "mtx")))


def reading_of(
    fmt: str,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
    item_sep: str | None,
    id_column: str | None,
    item_column: str | None,
    items: str | None,
    adjacency: str | None,
    n_vertices: int | None,
) -> dict[str, Any]:
    """How ``report`` reads ORIGINAL, whatever its kind, by parameter name (parameter
    ``reading``; :func:`_recorded_reading` completes it from the manifest). O(1)."""
    return {
        "fmt": fmt,
        "sep": sep,
        "names": names,
        "quotechar": quotechar,
        "na_values": na_values,
        "drop_missing": drop_missing,
        "item_sep": item_sep,
        "id_column": id_column,
        "item_column": item_column,
        "items": items,
        "adjacency": adjacency,
        "n_vertices": n_vertices,
    }


def accuracy_of(label: str | None, test: TestTable | None) -> tuple[str | None, TestTable | None]:
    """``--classify`` with ``--test`` as one pair (parameter ``accuracy``)."""
    return label, test


@command("report")
@click.argument("original", required=False)
@click.argument("release", required=False)
@click.option(
    "--manifest",
    "manifest_path",
    default=None,
    help="The release's JSON manifest (--report of the anonymize* command); `report M.json -o "
    "R.html` alone reads M.json as it.",
)
@click.option("-o", "--output", required=True, help="HTML file to write.")
@click.option("--force", is_flag=True, help="Replace an existing report.")
@click.option(
    "--threshold",
    type=float,
    default=0.2,
    show_default=True,
    help="Prosecutor risk above which a record is at risk, in (0, 1] (tables).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(REPORT_FORMATS)),
    default="auto",
    show_default=True,
    help="Format of ORIGINAL (as for the command that made the release).",
)
@click.option("--sep", default=None, help="Tables: CSV field separator of ORIGINAL.")
@click.option("--names", default=None, help="Tables: column names of a CSV without header.")
@click.option("--quotechar", default='"', show_default=True, help="Tables: CSV quote character.")
@click.option("--na-values", default=None, help="Tables: tokens meaning 'missing'.")
@click.option(
    "--drop-missing",
    is_flag=True,
    help="Tables: drop rows with a missing QI (implied when the manifest says rows were dropped).",
)
@click.option("--item-sep", default=None, help="Transactions: basket item separator.")
@click.option("--id-column", default=None, help="Transactions, long format: record id column.")
@click.option("--item-column", default=None, help="Transactions, long format: item column.")
@click.option(
    "--items",
    default=None,
    help="Relational (anonymize-rt): the items table of ORIGINAL (default: the manifest's).",
)
@click.option(
    "--adjacency",
    type=click.Choice(["none", "directed", "undirected"]),
    default=None,
    help="Sparse data: how ORIGINAL was read.",
)
@click.option("--n-vertices", type=int, default=None, help="Graphs: vertex count of ORIGINAL.")
@click.option(
    "--release-table",
    default=None,
    help="Tables: RELEASE is a database URL and this its release table (default: the "
    "manifest's output.table).",
)
@click.option(
    "--classify",
    "label",
    default=None,
    help="Tables, with --test: show the accuracy of models trained on the release to predict "
    "this kept column, tested on TEST's original rows.",
)
@click.option(
    "--draws",
    "draws_dir",
    default=None,
    metavar="DIR",
    help="Tables: the draws of RELEASE (anonymatch draw -o DIR) for the side-by-side tables "
    "(models trained on them with --classify, their counts beside a DP companion); default "
    "five anchored draws made for the report.",
)
@test_table_options
@population_options
@series_options
@verbosity_options
@with_step(reading_of, "reading")
@with_step(accuracy_of, "accuracy")
@click.pass_context
def report_cmd(
    ctx: click.Context,
    original: str | None,
    release: str | None,
    manifest_path: str | None,
    output: str,
    force: bool,
    population: PopulationFlags,
    quiet: bool,
    accuracy: tuple[str | None, TestTable | None],
    reading: dict[str, Any],
    release_table: str | None,
    series: SeriesRequest | None,
    draws_dir: str | None = None,
) -> None:
    """Write the privacy officer's HTML report of a release.

    One self-contained HTML file (inline CSS and plots, nothing loaded from the network) from the
    release's manifest and, when given, ORIGINAL and RELEASE (checked against the manifest's
    SHA-256): what was published, the guarantee and its verification, risk, utility, parameters
    and timings, and what the release does not protect against. With ORIGINAL and RELEASE the
    guarantee is re-verified from the files (the verifier re-run with the manifest's k and
    models); a figure of the manifest it does not give is reported and the command exits 4.
    Without them the report holds what the manifest says, every claim labelled unchecked.
    A database RELEASE (a URL) is read from --release-table, or else the manifest's
    output.table; a database ORIGINAL from the table or query its manifest records.
    With --test TEST --classify LABEL (tables) the utility section also shows the accuracy of a
    logistic regression and a gradient-boosted model trained on the release and on ORIGINAL,
    tested on TEST's original rows (as ``evaluate --classify``), beside the same models trained
    on draws of the release (--draws DIR: those of ``anonymatch draw``; default five anchored
    draws made for the report).
    Tables: --population FILE (read like ORIGINAL) adds the figures against the population the
    original was sampled from (k-map, journalist and marketer risk, population uniques,
    delta-presence); --sampling-fraction or --weights the population uniqueness estimated from
    the sample alone; each with its assumptions in plain words.
    A release of a series (anonymize --series) gets a series section from its manifest; with
    --series DIR --series-original … (as for risk) it also shows the composition attacker's
    figures of RELEASE joined to the series, and a series release that suppressed people is
    read against ORIGINAL's published people by DIR's private map."""
    from anonymatch.report import build_report, write_report
    from anonymatch.tables.risk.risk import check_threshold

    started = time.perf_counter()
    threshold = check_threshold(population.threshold, "--threshold")
    if manifest_path is None and release is None and str(original).lower().endswith(".json"):
        manifest_path, original = original, None  # `report M.json -o R.html`: manifest only
    if manifest_path is None:
        raise InputError("give the release's manifest: --manifest M.json (anonymize --report)")
    if (original is None) != (release is None):
        raise InputError("give both ORIGINAL and RELEASE, or neither (manifest only)")
    # the shared output policy: .html, directory exists, no replacing without --force, not
    # one of the inputs
    claim_outputs(ctx, HTML_EXTENSIONS)  # --force: whether an existing report is replaced
    from anonymatch.core.manifest import load_manifest

    manifest = load_manifest(manifest_path)  # bounded JSON of a manifest's shape, or exit 2
    kind = manifest.get("data_kind") if isinstance(manifest, dict) else None
    if kind == "table" and reading["fmt"] not in TABLE_FORMATS:
        raise InputError(f"--format {reading['fmt']} does not read a table")
    said = ""
    if original is not None:
        reading, said = _recorded_reading(ctx, manifest, reading)
    options = report_reading_options({k: v for k, v in reading.items()})
    if original is not None and kind == "table":
        options["csv"] = _database_source(manifest, original, options.get("csv"))
    if release_table is not None:
        _check_release_table(release, release_table, kind)
        options["release_table"] = release_table
    options.update(population_report_options(population, kind, original, options.get("csv")))
    label, test = accuracy
    if (test is None) != (label is None):
        raise InputError("give --test and --classify together")
    if test is not None:
        if kind != "table":
            raise InputError("--test and --classify are for table releases")
        if original is None:
            raise InputError("--test needs ORIGINAL and RELEASE (models train on them)")
        options.update(test=test.path, test_csv=test.csv(options["csv"]), classify=label)
    if draws_dir is not None:
        if kind != "table" or original is None:
            raise InputError("--draws needs ORIGINAL and a table RELEASE (draws of it)")
        if not Path(draws_dir).is_dir():
            raise InputError(f"--draws {draws_dir} is not a directory of draws")
        options["draws"] = draws_dir
    if series is not None:
        if kind != "table" or original is None:
            raise InputError("--series needs ORIGINAL and a table RELEASE of a series")
        options["series"] = series
    html = build_report(
        manifest,
        original,
        release,
        options=options,
        threshold=threshold,
        with_check=True,
    )
    write_report(output, html)
    check = html.check  # type: ignore[attr-defined]
    if not quiet:
        from anonymatch.core.files import current_path

        size = current_path(output).stat().st_size  # staged until the run commits
        click.echo(
            f"report: {output} ({size / 1024:.0f} KiB, {time.perf_counter() - started:.1f} s)"
        )
        if said:
            click.echo(f"original read as the manifest records: {said}")
        if check.status == "checked":
            named = "" if check.named else " (the manifest holds no SHA-256: it does not name them)"
            click.echo(f"claims: re-verified on the files{named}")
        elif check.status == "unchecked":
            click.echo(f"claims: unchecked (from the manifest): {check.why}")
    if check.failed:
        from anonymatch.core.errors import VerificationError
        from anonymatch.core.files import staging

        outputs = staging()
        if outputs is not None:
            outputs.commit()  # the report says why: keep it, then exit with the failure code
        click.echo(
            "anonymatch: the manifest's claims do not hold for these files: "
            + "; ".join(check.problems),
            err=True,
        )
        raise SystemExit(VerificationError.exit_code)


_RECORDED = {
    "format": "fmt",
    "sep": "sep",
    "quotechar": "quotechar",
    "drop_missing": "drop_missing",
    "item_sep": "item_sep",
    "id_column": "id_column",
    "item_column": "item_column",
    "dedupe": "dedupe",
}
"""``parameters.input_options`` key → the ``report`` parameter it stands for."""


def _database_source(manifest: Any, original: str, csv: CsvOptions | None) -> CsvOptions:
    """How to read ORIGINAL: for a database URL, the table or query its manifest records
    (``input.table``/``input.query``; the password comes from the URL, ``PGPASSWORD`` or
    ``~/.pgpass``, never from the manifest). O(1)."""
    from anonymatch.tables.io import CsvOptions
    from anonymatch.tables.io.sql import is_database_url

    csv = csv or CsvOptions()
    if not is_database_url(original):
        return csv
    recorded = manifest.get("input") if isinstance(manifest, dict) else None
    table = recorded.get("table") if isinstance(recorded, dict) else None
    query = recorded.get("query") if isinstance(recorded, dict) else None
    if table is None and query is None:
        raise InputError("the manifest records no table or query for a database ORIGINAL")
    return dataclasses.replace(csv, table=table, query=query)


def _check_release_table(release: str | None, table: str, kind: object) -> None:
    """``--release-table`` names a table of a database RELEASE of a table release."""
    from anonymatch.tables.io.sql import check_identifier, is_database_url

    if kind != "table" or release is None or not is_database_url(release):
        raise InputError("--release-table reads a table release from a database URL (RELEASE)")
    check_identifier(table, "--release-table")


def _recorded_reading(
    ctx: click.Context, manifest: Any, reading: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """The reading options of ORIGINAL: those of the command line when it gives any, else those
    the release's manifest records (``parameters.input_options``), with the words that say
    which (its options other than the defaults; empty when the command line's are used). O(1).
    """
    from click.core import ParameterSource

    given = [
        name
        for name in reading
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)
    ]
    parameters = manifest.get("parameters") if isinstance(manifest, dict) else None
    recorded = parameters.get("input_options") if isinstance(parameters, dict) else None
    if given or not isinstance(recorded, dict):
        return reading, ""
    out = dict(reading)
    for key, param in _RECORDED.items():
        if recorded.get(key) not in (None, False):
            out[param] = recorded[key]
    if recorded.get("names"):
        out["names"] = ",".join(recorded["names"])
    from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes

    tokens, columns = recorded.get("na_values"), recorded.get("na")
    if tokens is not None or columns:
        out["na_values"] = MissingCodes(
            tuple(tokens) if tokens is not None else DEFAULT_NA_VALUES,
            {str(c): tuple(v) for c, v in (columns or {}).items()},
        )
    defaults = {"format": "auto", "quotechar": '"', "item_sep": ",", "drop_missing": False}
    said = ", ".join(
        f"{key.replace('_', ' ')} {recorded[key]!r}"
        for key in sorted(recorded)
        if recorded[key] not in (None, defaults.get(key)) and key != "na_values"
    )
    if tokens is not None and tuple(tokens) != DEFAULT_NA_VALUES:
        said = ", ".join(x for x in (said, f"missing values {', '.join(tokens)}") if x)
    return out, said or "the defaults"


COMMANDS = [report_cmd]


def population_report_options(
    flags: PopulationFlags, kind: Any, original: str | None, csv: Any
) -> dict[str, Any]:
    """The report's population options (``population`` a DataFrame read like the original,
    ``sampling_fraction``, ``weights``) from ``report``'s flags, checked as ``risk`` checks
    them. O(size of the population file).

    Raises
    ------
    InputError
        A fraction outside (0, 1], both a fraction and weights, a flag on a release that is not
        a table or without ORIGINAL and RELEASE, an unreadable population file (exit 2).
    """
    if not flags.given:
        return {}
    from anonymatch.tables.risk.estimators import check_fraction

    if flags.sampling_fraction is not None:
        check_fraction(flags.sampling_fraction, "--sampling-fraction")
    if flags.sampling_fraction is not None and flags.weights is not None:
        raise InputError("give --sampling-fraction or --weights, not both")
    if kind != "table":
        raise InputError("--population, --sampling-fraction and --weights apply to table releases")
    if original is None:
        raise InputError(
            "--population, --sampling-fraction and --weights need ORIGINAL and RELEASE"
        )
    options: dict[str, Any] = {
        "sampling_fraction": flags.sampling_fraction,
        "weights": flags.weights,
    }
    if flags.population is not None:
        from anonymatch.tables.io import read_table

        options["population"] = read_table(flags.population, csv)
    return options


@command("ui")
@click.argument("data_dir", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=int, default=0, help="Port to bind (default: a free one).")
@click.option("--open", "open_browser", is_flag=True, help="Open the app in the browser.")
@click.option(
    "--max-upload-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=200,
    show_default=True,
    help="Largest upload (MiB); larger ones get 413 and nothing is kept.",
)
@click.option(
    "--max-cells",
    type=click.IntRange(min=1),
    default=50_000_000,
    show_default=True,
    help="Largest table, rows x columns.",
)
@click.option(
    "--max-table-mb",
    type=click.FloatRange(min=0, min_open=True),
    default=1024,
    show_default=True,
    help="Largest table once decompressed (MiB).",
)
@verbosity_options
def ui_cmd(
    data_dir: str | None,
    host: str,
    port: int,
    open_browser: bool,
    max_upload_mb: float,
    max_cells: int,
    max_table_mb: float,
) -> None:
    """Run the local web app.

    Upload or pick a table (from DATA_DIR), set each column's role, choose the model and the
    method, run it with live progress, open the report and download the release, the manifest
    and the job file. Prints the address to open, with its access token; Ctrl-C stops it and
    removes every uploaded or released file."""
    from anonymatch.ui import serve
    from anonymatch.ui.data import Limits

    if not 0 <= port <= 65535:
        raise InputError(f"--port must be in 0..65535, got {port}")
    limits = Limits(int(max_upload_mb * 2**20), max_cells, int(max_table_mb * 2**20))
    code = serve(
        host,
        port,
        data_dir,
        open_browser,
        echo=lambda line, err: click.echo(line, err=err),
        limits=limits,
    )
    if code:
        click.echo("anonymatch: stopped; uploads and releases removed", err=True)
        raise SystemExit(code)


COMMANDS.append(ui_cmd)
