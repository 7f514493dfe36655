"""Command-line interface: a thin layer over the API.

Every error the library raises on purpose becomes one line on stderr and a non-zero exit code
(2 bad input, 3 infeasible, 4 failed verification, 5 workers kept dying); nothing is written
in that case.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import AnonymatchError, InputError
from .io.tables import CsvOptions, read_table, sha256_file
from .methods import ALL_PAIRS_MAX_N, METHOD_NAMES, SUPPRESSION_METHODS
from .schema import DEFAULT_NA_VALUES, Schema

F = TypeVar("F", bound=Callable[..., Any])


def _names(value: str | None) -> list[str]:
    if not value:
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def _weights(value: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in _names(value):
        name, sep, number = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(number)
        except ValueError:
            raise InputError(f"--weights expects name=number pairs, got {item!r}") from None
    return out


def input_options(func: F) -> F:
    """Options describing how to read the original table (shared by all commands)."""
    options = [
        click.option(
            "--sep", default=None, help="Field separator (default: tab for .tsv, else ',')."
        ),
        click.option(
            "--names", default=None, help="Comma-separated column names for a file without header."
        ),
        click.option("--quotechar", default='"', show_default=True, help="CSV quote character."),
        click.option(
            "--na-values",
            default=None,
            help="Comma-separated tokens meaning 'missing' "
            f"(default: {','.join(repr(v) for v in DEFAULT_NA_VALUES)}).",
        ),
        click.option("--drop-missing", is_flag=True, help="Drop rows with a missing QI value."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


# Inputs of at least this many rows take the streamed, partitioned path by default.
STREAM_MIN_ROWS = 200_000


def scale_options(func: F) -> F:
    """Options of the streamed, partitioned path (shared by anonymize and verify)."""
    options = [
        click.option(
            "--executor",
            type=click.Choice(["auto", "inline", "processes", "dask"]),
            default="auto",
            show_default=True,
            help="Where partitions run: auto = in memory for inputs under "
            f"{STREAM_MIN_ROWS:,} rows, else streamed on local processes (a Dask cluster "
            "with --workers or --scheduler).",
        ),
        click.option(
            "--scheduler",
            default=None,
            help="Address of an existing dask.distributed scheduler, e.g. tcp://host:8786.",
        ),
        click.option(
            "--workers",
            type=int,
            default=None,
            help="Start a local Dask cluster of this many worker processes (with --executor "
            "processes: the pool size). Default: all cores.",
        ),
        click.option(
            "--chunk-rows",
            type=int,
            default=50_000,
            show_default=True,
            help="Rows per job of the streamed path (whole partitions).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _csv(sep: str | None, names: str | None, quotechar: str) -> CsvOptions:
    if sep is not None:
        sep = sep.encode().decode("unicode_escape")  # allow --sep '\t'
        if not sep:
            raise InputError("--sep must not be empty")
    return CsvOptions(sep=sep, names=_names(names) or None, quotechar=quotechar)


def _epsilons(value: str | None) -> tuple[float, ...]:
    from .methods.bmatching import DEFAULT_EPSILONS

    if not value:
        return DEFAULT_EPSILONS
    try:
        eps = tuple(float(v) for v in _names(value))
    except ValueError:
        raise InputError(f"--epsilons expects comma-separated numbers, got {value!r}") from None
    if not eps or any(not (e > 0 and e < float("inf")) for e in eps):
        raise InputError(f"--epsilons must be positive numbers, got {value!r}")
    return tuple(sorted(eps, reverse=True))


def _na(value: str | None) -> tuple[str, ...]:
    return DEFAULT_NA_VALUES if value is None else tuple(v.strip() for v in value.split(","))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonymatch")
def cli() -> None:
    """Publish tables, set-valued data, sparse matrices and graphs under k-anonymity-type
    guarantees, verified on every release."""


@cli.command()
@click.argument("input_path", metavar="INPUT")
@click.option("-o", "--output", required=True, help="Release file (.csv, .tsv or .parquet).")
@click.option("-k", "--k", "k", type=int, default=None, help="Anonymity level k ≥ 1 (for all).")
@click.option(
    "--k-column",
    default=None,
    help="Column holding each person's own level δᵢ (b-matching and agglomerative methods).",
)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="QIs published as ranges (the others as value sets).")
@click.option(
    "--sensitive", default=None, help="Sensitive columns (kept, attached by the true match)."
)
@click.option("--identifiers", default=None, help="Identifier columns (dropped).")
@click.option(
    "--method",
    type=click.Choice(METHOD_NAMES + SUPPRESSION_METHODS),
    default="hungarian",
    show_default=True,
)
@click.option(
    "--partition-size",
    type=int,
    default=None,
    help="Records per partition (≥ 2k; default per method).",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed for the privacy randomness (default: OS entropy). Anyone who knows the "
    "seed can redo the random choice of the true assignment: tests/experiments only.",
)
@click.option("--weights", default=None, help="Attribute weights for GCP, e.g. age=2,sex=0.5.")
@click.option(
    "--time-limit",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds per exact MIP solve (method mip).",
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
    "--cell-weights",
    default=None,
    help="b-matching/agglomerative: CSV with one column per QI and one row per record giving "
    "the cost of starring each cell.",
)
@scale_options
@click.option("--report", "report_path", default=None, help="Write the JSON audit manifest here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
@input_options
def anonymize(
    input_path: str,
    output: str,
    k: int | None,
    k_column: str | None,
    qi: str,
    numeric: str | None,
    sensitive: str | None,
    identifiers: str | None,
    method: str,
    partition_size: int | None,
    seed: int | None,
    weights: str | None,
    time_limit: float,
    epsilons: str | None,
    neighbours: int | None,
    cell_weights: str | None,
    executor: str,
    scheduler: str | None,
    workers: int | None,
    chunk_rows: int,
    report_path: str | None,
    quiet: bool,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Anonymize INPUT into a verified k-anonymous release."""
    from .io.release import write_release
    from .pipeline import anonymize as run

    started = time.perf_counter()
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if time_limit <= 0:
        raise InputError(f"--time-limit must be positive, got {time_limit}")
    csv = _csv(sep, names, quotechar)
    streamed = _streamed_executor(input_path, output, csv, executor, scheduler, workers)
    for path in (None if streamed else output, report_path):
        _check_output_path(path, input_path)
    if streamed is not None:
        if method in SUPPRESSION_METHODS or k_column or epsilons or neighbours or cell_weights:
            raise InputError(
                "the streamed, partitioned path runs the freeform methods only "
                "(hungarian, sortgreedy, greedy, mip)"
            )
        if k is None:
            raise InputError("missing option --k")
        from .scale import anonymize_file

        report = anonymize_file(
            input_path,
            output,
            k,
            Schema.build(
                _names(qi),
                _names(numeric),
                _names(sensitive),
                _names(identifiers),
                _weights(weights),
            ),
            method=method,
            partition_size=partition_size,
            chunk_rows=chunk_rows,
            seed=seed,
            csv=csv,
            na_values=_na(na_values),
            drop_missing=drop_missing,
            time_limit=time_limit,
            executor=streamed,
            scheduler=scheduler,
            workers=workers,
            progress=not quiet,
        )
        _finish(report, input_path, output, report_path, started, quiet)
        return
    frame = read_table(input_path, csv)
    if method in SUPPRESSION_METHODS:
        from .adaptive import anonymize_adaptive

        release = anonymize_adaptive(
            frame,
            _names(qi),
            k,
            k_column,
            method,
            _names(numeric),
            _names(sensitive),
            _names(identifiers),
            seed=seed,
            weights=_weights(weights),
            cell_weights=read_table(cell_weights) if cell_weights else None,
            epsilons=_epsilons(epsilons),
            neighbours=neighbours,
            na_values=_na(na_values),
            drop_missing=drop_missing,
            time_limit=time_limit,
            progress=None if quiet else lambda msg: click.echo(msg, err=True),
        )
    else:
        if k_column is not None or epsilons or neighbours is not None or cell_weights:
            raise InputError(
                "--k-column, --epsilons, --neighbours and --cell-weights need --method "
                f"{', '.join(SUPPRESSION_METHODS)}"
            )
        if k is None:
            raise InputError("missing option --k")
        release = run(
            frame,
            k,
            _names(qi),
            _names(numeric),
            _names(sensitive),
            _names(identifiers),
            method=method,
            partition_size=partition_size,
            seed=seed,
            weights=_weights(weights),
            na_values=_na(na_values),
            drop_missing=drop_missing,
            time_limit=time_limit,
            progress=not quiet,
        )
    write_release(output, release.table, release.cells, release.qi)
    _finish(dict(release.report), input_path, output, report_path, started, quiet)


def _finish(
    report: dict[str, Any],
    input_path: str,
    output: str,
    report_path: str | None,
    started: float,
    quiet: bool,
) -> None:
    """Complete the manifest (checksums, wall time), write it atomically, print the summary."""
    from .io.release import write_atomically

    report["input"] = {"path": str(input_path), "sha256": _sha256(input_path)}
    report["output"] = {"path": str(output), "sha256": _sha256(output)}
    report["seconds"] = {**report["seconds"], "wall": time.perf_counter() - started}
    if report_path:
        text = json.dumps(report, indent=2) + "\n"
        write_atomically(report_path, lambda tmp: tmp.write_text(text))
    if quiet:
        return
    if "levels" in report:
        _print_adaptive_summary(report, output)
    else:
        _print_summary(report, output)


def _sha256(path: str) -> str | dict[str, str]:
    """SHA-256 of a file, or of every part of a directory of Parquet parts."""
    p = Path(path)
    if p.is_dir():
        return {part.name: sha256_file(part) for part in sorted(p.iterdir())}
    return sha256_file(p)


def _manifest_partitions(path: str | None) -> int | None:
    """The partition count of a partitioned release's manifest (None for other layouts)."""
    if path is None:
        return None
    try:
        manifest = json.loads(Path(path).read_text())
        if manifest.get("layout") != "partitioned":
            return None
        return int(manifest["parameters"]["partitions"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"cannot read the manifest {path}: {exc}") from None


def _streamed_executor(
    input_path: str,
    output: str,
    csv: CsvOptions,
    executor: str,
    scheduler: str | None,
    workers: int | None,
) -> Any:
    """The executor of the streamed path, or None for the in-memory path."""
    from .io.stream import count_rows, is_directory_output

    if scheduler or (executor == "auto" and workers is not None):
        return "dask"
    if executor != "auto":
        return executor
    source = Path(input_path)
    if is_directory_output(output) or (source.is_dir() and any(source.glob("*.parquet"))):
        return "processes"
    if os.path.isfile(input_path) and count_rows(input_path, csv) >= STREAM_MIN_ROWS:
        return "processes"
    return None


def _check_output_path(path: str | None, input_path: str) -> None:
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(f"output path is a directory: {path}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"output directory does not exist: {parent}")
    if os.path.exists(input_path) and p.exists() and p.resolve() == Path(input_path).resolve():
        raise InputError("the output would overwrite the input")


def _print_summary(report: dict[str, Any], output: str) -> None:
    v, loss = report["verification"], report["information_loss"]
    click.echo(
        f"{report['method']}, k = {report['k']}, {report['rows']} rows"
        f" ({report['rows_dropped_missing']} dropped for missing QIs) -> {output}"
    )
    if report.get("layout") == "partitioned":
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
    per = ", ".join(f"{a} {100 * x:.2f}%" for a, x in loss["ncp"].items())
    click.echo(f"information loss: GCP {100 * loss['gcp']:.2f}% ({per})")
    click.echo(f"time: {report['seconds']['wall']:.1f} s")


def _print_adaptive_summary(report: dict[str, Any], output: str) -> None:
    v, lv = report["verification"], report["levels"]
    levels = f"k = {report['k']}" if report["k"] else f"levels {lv['min']}..{lv['max']}"
    click.echo(f"{report['method']}, {levels}, {report['rows']} rows -> {output}")
    click.echo(
        f"verified: {'PASS' if v['passed'] else 'FAIL'} - every person has at least their level"
        f" of matchable published rows (smallest surplus {v['min_slack']})"
        + (f", {v['uniform_k']}-factor exists" if v["k_factor_flow"] is not None else "")
    )
    click.echo(
        f"stars: {report['stars']} of {report['rows'] * len(report['parameters']['qi'])} cells"
        f" (utility {100 * report['utility']:.2f}%)"
    )
    click.echo(f"time: {report['seconds']['wall']:.1f} s")


@cli.command()
@click.argument("original")
@click.argument("published")
@click.option("-k", "--k", "k", type=int, default=None, help="Anonymity level k for all.")
@click.option(
    "--k-column",
    default=None,
    help="Column of ORIGINAL with each person's level δᵢ (adaptive anonymity check).",
)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs (published as ranges).")
@click.option(
    "--manifest",
    default=None,
    help="The release's JSON manifest (anonymize --report). A partitioned release (streamed "
    "path) is then checked partition by partition, streaming both files.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@scale_options
@input_options
def verify(
    original: str,
    published: str,
    k: int | None,
    k_column: str | None,
    qi: str,
    numeric: str | None,
    manifest: str | None,
    as_json: bool,
    executor: str,
    scheduler: str | None,
    workers: int | None,
    chunk_rows: int,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Check that PUBLISHED is k-anonymous (--k), or adaptively anonymous with each person's
    level from --k-column, w.r.t. ORIGINAL (exit 0 iff it is)."""
    from .pipeline import verify_release

    if (k is None) == (k_column is None):
        raise InputError("give exactly one of --k and --k-column")
    partitions = _manifest_partitions(manifest)
    if partitions is not None and k is not None:
        from .scale import verify_file

        dask = scheduler or (executor == "auto" and workers is not None)
        streamed = "dask" if dask else ("processes" if executor == "auto" else executor)
        result = verify_file(
            original,
            published,
            k,
            Schema.build(_names(qi), _names(numeric)),
            partitions,
            csv=_csv(sep, names, quotechar),
            na_values=_na(na_values),
            drop_missing=drop_missing,
            chunk_rows=chunk_rows,
            executor=streamed,  # type: ignore[arg-type]
            scheduler=scheduler,
            workers=workers,
        )
        if as_json:
            click.echo(json.dumps(result, indent=2))
        else:
            click.echo(
                f"{'PASS' if result['passed'] else 'FAIL'}: {result['reason']}; k = {k},"
                f" {result['n_original']} originals, {result['partitions']} partitions each"
                f" checked for a {k}-factor, fewest matches per original"
                f" {result['min_matches_original']}"
            )
        sys.exit(0 if result["passed"] else 1)
    orig = read_table(original, _csv(sep, names, quotechar))
    pub = read_table(published)
    if k_column is not None:
        from .adaptive import verify_adaptive_release

        schema = Schema.build(_names(qi), _names(numeric), identifiers=[k_column])
        adaptive = verify_adaptive_release(
            pub, orig, k_column, schema, _na(na_values), drop_missing
        )
        if as_json:
            click.echo(json.dumps(adaptive.to_dict(), indent=2))
        else:
            click.echo(
                f"{'PASS' if adaptive.passed else 'FAIL'}: {adaptive.reason};"
                f" {adaptive.n_original} originals, {adaptive.n_published} published rows,"
                f" smallest surplus of matchable rows over the level {adaptive.min_slack}"
            )
        sys.exit(0 if adaptive.passed else 1)
    assert k is not None
    schema = Schema.build(_names(qi), _names(numeric))
    report = verify_release(pub, orig, k, schema, _na(na_values), drop_missing)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        status = "PASS" if report.passed else "FAIL"
        click.echo(
            f"{status}: {report.reason}; k = {k}, {report.n_original} originals,"
            f" {report.n_published} published rows, fewest matches per original"
            f" {report.min_matches_original}, per published row"
            f" {report.min_matches_published}, k-factor flow"
            f" {report.k_factor_flow}/{report.k_factor_required}"
        )
    sys.exit(0 if report.passed else 1)


@cli.command()
@click.argument("original")
@click.argument("published")
@click.option("--known", "known", required=True, type=int, help="True matches the adversary knows.")
@click.option("--trials", default=100, show_default=True, type=int, help="Random repetitions.")
@click.option(
    "--key",
    required=True,
    help="A column with a unique value per person, present in ORIGINAL and PUBLISHED (kept as a "
    "sensitive column): it gives the true matching to score the attack against.",
)
@click.option("-k", "--k", "k", type=int, default=None, help="The level k promised to all.")
@click.option("--k-column", default=None, help="Column of ORIGINAL with each person's level.")
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs.")
@click.option("--seed", type=int, default=None, help="Seed for choosing the known matches.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@input_options
def attack(
    original: str,
    published: str,
    known: int,
    trials: int,
    key: str,
    k: int | None,
    k_column: str | None,
    qi: str,
    numeric: str | None,
    seed: int | None,
    as_json: bool,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Simulate an adversary who knows KNOWN true matches: how many published rows can each
    other person still be (Choromanski et al. §4), and how often a random attack succeeds."""
    from .adaptive import attack_release

    if (k is None) == (k_column is None):
        raise InputError("give exactly one of --k and --k-column")
    ids = [k_column] if k_column else []
    schema = Schema.build(_names(qi), _names(numeric), sensitive=[key], identifiers=ids)
    orig = read_table(original, _csv(sep, names, quotechar))
    pub = read_table(published)
    report = attack_release(
        pub, orig, schema, key, known, trials, k, k_column, seed, _na(na_values), drop_missing
    )
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
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
        f" (worst trial {report.worst_trial_success_probability:.4f})"
    )


@cli.command()
@click.argument("original")
@click.argument("published", nargs=-1, required=True)
@click.option("--qi", required=True, help="Comma-separated quasi-identifiers.")
@click.option("--numeric", default=None, help="Numeric QIs (published as ranges).")
@click.option("--weights", default=None, help="Attribute weights, e.g. age=2,sex=0.5.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@input_options
def evaluate(
    original: str,
    published: Sequence[str],
    qi: str,
    numeric: str | None,
    weights: str | None,
    as_json: bool,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Information loss (GCP, NCP per QI) of one or more releases of ORIGINAL."""
    from .pipeline import evaluate_release

    schema = Schema.build(_names(qi), _names(numeric), weights=_weights(weights))
    orig = read_table(original, _csv(sep, names, quotechar))
    results = {
        p: evaluate_release(read_table(p), orig, schema, _na(na_values), drop_missing)
        for p in published
    }
    if as_json:
        click.echo(json.dumps({p: r.to_dict() for p, r in results.items()}, indent=2))
        return
    labels = [Path(p).name for p in published]
    width = max(12, *(len(x) for x in labels))
    click.echo("attribute".ljust(16) + "".join(x.rjust(width + 2) for x in labels))
    click.echo(
        "GCP".ljust(16) + "".join(f"{100 * r.gcp:.2f}%".rjust(width + 2) for r in results.values())
    )
    for attr in schema.qi:
        click.echo(
            f"  {attr}".ljust(16)
            + "".join(f"{100 * r.ncp[attr]:.2f}%".rjust(width + 2) for r in results.values())
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and turn errors into one line and an exit code."""
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="anonymatch",
            standalone_mode=False,
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"anonymatch: error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.Abort:
        click.echo("anonymatch: interrupted; nothing written", err=True)
        return 130
    except AnonymatchError as exc:
        click.echo(f"anonymatch: error: {exc}", err=True)
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        click.echo("anonymatch: interrupted; nothing written", err=True)
        return 130
    except Exception as exc:  # a bug: still one line, with a way to get the traceback
        if os.environ.get("ANONYMATCH_DEBUG"):
            raise
        click.echo(
            f"anonymatch: internal error: {type(exc).__name__}: {exc}"
            " (set ANONYMATCH_DEBUG=1 for a traceback)",
            err=True,
        )
        return 1
    return 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


# Commands of the other data kinds live in their own modules, imported last since they use
# this one: set-valued data (cli_sets), sparse matrices (cli_sparse), (k,ℓ) and graphs (cli_kl),
# and the synthetic census generator (cli_synth).
from . import cli_kl, cli_sets, cli_sparse, cli_synth  # noqa: E402

for _module in (cli_sets, cli_sparse, cli_kl, cli_synth):
    _module.register(cli)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
