"""Command line for sparse binary matrices and bipartite graphs (issue 5):
``anonymize-sparse``, ``verify-sparse`` and ``evaluate-sparse``."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import scipy.sparse as sp

from .errors import InputError
from .io.sparse import FORMATS, read_sparse, sparse_format, write_sparse
from .io.tables import sha256_file
from .runner import EXECUTORS

ADJACENCY = ("none", "directed", "undirected")


def _read_original(path: str, fmt: str, adjacency: str) -> sp.csr_array:
    return read_sparse(path, fmt=fmt, adjacency=adjacency)  # type: ignore[arg-type]


def _read_published(path: str, fmt: str, original_shape: tuple[int, int]) -> sp.csr_array:
    """A release: a plain matrix (never symmetrized); missing trailing rows/columns of the
    original's shape are empty."""
    p = read_sparse(path, fmt=fmt)
    rows = max(p.shape[0], original_shape[0]) if sparse_format(path, fmt) != "mtx" else p.shape[0]
    p.resize((rows, max(p.shape[1], original_shape[1])))
    return p


def _format_choice() -> click.Choice:
    return click.Choice(list(FORMATS))


@click.command("anonymize-sparse")
@click.argument("input_path", metavar="INPUT")
@click.option("-o", "--output", required=True, help="Release: .csv edge list, .parquet, .mtx.")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option(
    "--method",
    type=click.Choice(["smooth", "nonsmooth", "mondrian", "rr"]),
    default="smooth",
    show_default=True,
)
@click.option("--epsilon", type=float, default=None, help="ε of randomized response (rr).")
@click.option(
    "--dp",
    type=click.Choice(["edge", "node"]),
    default="edge",
    show_default=True,
    help="DP level of rr.",
)
@click.option("--beta", type=float, default=2.0, show_default=True, help="β > 1 (α = 1/β).")
@click.option("--runs", type=int, default=10, show_default=True, help="Meyerson runs.")
@click.option(
    "--chunk-rows",
    type=int,
    default=100_000,
    show_default=True,
    help="Rows per min-hash chunk (chunking starts at 2× this many rows).",
)
@click.option(
    "--executor",
    type=click.Choice(list(EXECUTORS)),
    default=None,
    help="Where chunks run (default: inline for one chunk, else a local Dask cluster).",
)
@click.option("--scheduler", default=None, help="Address of an existing Dask scheduler.")
@click.option("--workers", type=int, default=None, help="Workers (default: all cores).")
@click.option(
    "--lsh",
    type=click.Choice(["profile", "minhash"]),
    default="profile",
    show_default=True,
    help="Chunk order: min-hashes with the profile refinement key, or the paper's plain order.",
)
@click.option(
    "--in-memory",
    is_flag=True,
    help="Read a Parquet input whole instead of streaming it (smooth/nonsmooth stream by default).",
)
@click.option(
    "--workdir",
    default=None,
    help="Scratch directory of the streaming path (default: beside the output; must be"
    " visible to the Dask workers).",
)
@click.option("--input-format", type=_format_choice(), default="auto", show_default=True)
@click.option(
    "--adjacency",
    type=click.Choice(ADJACENCY),
    default="none",
    show_default=True,
    help="Read an edge list as a square (directed/undirected) adjacency matrix.",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed for all randomness (default: OS entropy). Tests/experiments only.",
)
@click.option("--report", "report_path", default=None, help="Write the JSON audit manifest here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
def anonymize_sparse_cmd(
    input_path: str,
    output: str,
    k: int,
    method: str,
    epsilon: float | None,
    dp: str,
    beta: float,
    runs: int,
    chunk_rows: int,
    executor: str | None,
    scheduler: str | None,
    workers: int | None,
    lsh: str,
    in_memory: bool,
    workdir: str | None,
    input_format: str,
    adjacency: str,
    seed: int | None,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Anonymize the binary matrix INPUT (smooth k-anonymity by default) into a verified
    release (row i = user i)."""
    from .cli import _check_output_path
    from .sparse_pipeline import anonymize_sparse, validate
    from .sparse_stream import STREAM_METHODS, anonymize_sparse_stream

    started = time.perf_counter()
    for path in (output, report_path):
        _check_output_path(path, input_path)
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    validate(-1, k, method, epsilon, dp, beta, runs, chunk_rows)  # before reading the data
    stream = (
        not in_memory
        and method in STREAM_METHODS
        and adjacency == "none"
        and sparse_format(input_path, input_format) == "parquet"
        and sparse_format(output) in ("parquet", "edges")
    )
    if stream:
        # out of core: the Parquet edge list is staged, ordered and anonymized chunk by chunk;
        # the release is verified chunk by chunk and written atomically (sparse_stream.py)
        report = anonymize_sparse_stream(
            input_path,
            output,
            k,
            method,
            beta=beta,
            runs=runs,
            chunk_rows=chunk_rows,
            executor=executor,
            scheduler=scheduler,
            workers=workers,
            seed=seed,
            refine=lsh == "profile",
            progress=not quiet,
            workdir=workdir,
        )
        _finish(report, input_path, output, report_path, started, quiet)
        return
    x = _read_original(input_path, input_format, adjacency)
    release = anonymize_sparse(
        x,
        k,
        method,
        beta=beta,
        runs=runs,
        chunk_rows=chunk_rows,
        executor=executor,
        scheduler=scheduler,
        workers=workers,
        seed=seed,
        epsilon=epsilon,
        dp=dp,
        refine=lsh == "profile",
        progress=not quiet,
    )
    write_sparse(output, release.published)
    _finish(dict(release.report), input_path, output, report_path, started, quiet)


def _finish(
    report: dict[str, Any],
    input_path: str,
    output: str,
    report_path: str | None,
    started: float,
    quiet: bool,
) -> None:
    from .io.release import write_atomically

    report["input"] = {"path": str(input_path), "sha256": sha256_file(input_path)}
    report["output"] = {"path": str(output), "sha256": sha256_file(output)}
    report["seconds"] = {**report["seconds"], "wall": time.perf_counter() - started}
    if report_path:
        text = json.dumps(report, indent=2) + "\n"
        write_atomically(report_path, lambda tmp: tmp.write_text(text))
    if not quiet:
        _summary(report, output)


def _summary(report: dict[str, Any], output: str) -> None:
    u = report["utility"]
    click.echo(
        f"{report['method']}, k = {report['k']}, {report['rows']} rows x {report['columns']}"
        f" columns, {u['edges_original']} ones -> {output}"
    )
    v = report["verification"]
    if v.get("passed") is None:
        click.echo(f"verified: n/a - {v['reason']}")
    else:
        click.echo(
            f"verified: {'PASS' if v['passed'] else 'FAIL'} ({v['rule']}) - {v['classes']}"
            f" classes, smallest {v['smallest_class']}; {v['unsupported_ones']} unsupported ones"
        )
    click.echo(
        f"Jaccard {100 * u['jaccard']:.2f}%, suppressed {100 * u['suppressed']:.2f}%,"
        f" created {100 * u['created']:.2f}%"
    )
    click.echo(f"time: {report['seconds']['wall']:.1f} s")


@click.command("verify-sparse")
@click.argument("original")
@click.argument("published")
@click.option("-k", "--k", "k", required=True, type=int)
@click.option(
    "--rule",
    type=click.Choice(["smooth", "nonsmooth"]),
    default="smooth",
    show_default=True,
    help="smooth: published ones held by ≥ half the class; nonsmooth: by all (suppression).",
)
@click.option("--input-format", type=_format_choice(), default="auto", show_default=True)
@click.option("--published-format", type=_format_choice(), default="auto", show_default=True)
@click.option("--adjacency", type=click.Choice(ADJACENCY), default="none", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify_sparse_cmd(
    original: str,
    published: str,
    k: int,
    rule: str,
    input_format: str,
    published_format: str,
    adjacency: str,
    as_json: bool,
) -> None:
    """Check that PUBLISHED is (smooth) k-anonymous w.r.t. ORIGINAL (exit 0 iff it is)."""
    from .verify_sparse import verify_sparse

    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    x = _read_original(original, input_format, adjacency)
    p = _read_published(published, published_format, x.shape)
    report = verify_sparse(p, x, k, rule)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {report.reason}; k = {k}, {report.rows} rows,"
            f" {report.classes} classes, smallest {report.smallest_class}"
        )
    sys.exit(0 if report.passed else 1)


@click.command("evaluate-sparse")
@click.argument("original")
@click.argument("published", nargs=-1, required=True)
@click.option("--input-format", type=_format_choice(), default="auto", show_default=True)
@click.option("--adjacency", type=click.Choice(ADJACENCY), default="none", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def evaluate_sparse_cmd(
    original: str, published: Sequence[str], input_format: str, adjacency: str, as_json: bool
) -> None:
    """Jaccard similarity, suppressed and created entries of releases of ORIGINAL."""
    from .metrics_sparse import edge_metrics

    x = _read_original(original, input_format, adjacency)
    results = {p: edge_metrics(x, _read_published(p, "auto", x.shape)) for p in published}
    if as_json:
        click.echo(json.dumps({p: r.to_dict() for p, r in results.items()}, indent=2))
        return
    labels = [Path(p).name for p in published]
    width = max(12, *(len(s) for s in labels))
    click.echo("metric".ljust(12) + "".join(s.rjust(width + 2) for s in labels))
    for name in ("jaccard", "suppressed", "created"):
        click.echo(
            name.ljust(12)
            + "".join(
                f"{100 * float(getattr(r, name)):.2f}%".rjust(width + 2) for r in results.values()
            )
        )
    click.echo(
        "ones".ljust(12)
        + "".join(str(r.edges_published).rjust(width + 2) for r in results.values())
    )


def register(group: click.Group) -> None:
    """Add the sparse commands to the ``anonymatch`` group."""
    group.add_command(anonymize_sparse_cmd)
    group.add_command(verify_sparse_cmd)
    group.add_command(evaluate_sparse_cmd)
