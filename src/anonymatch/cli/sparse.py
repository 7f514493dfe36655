"""Command line for sparse binary matrices and bipartite graphs (issue 5):
``anonymize-sparse``, ``verify-sparse`` and ``evaluate-sparse``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import click
import numpy as np
import scipy.sparse as sp

from anonymatch.app.outputs import SPARSE_RELEASE_EXTENSIONS
from anonymatch.cli.config import with_job_file
from anonymatch.cli.options import (
    check_output_path,
    draw_seed,
    executor_options,
    exit_verdict,
    format_option,
    output_options,
    seed_option,
    verbosity_options,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError
from anonymatch.sparse.io import FORMATS, read_sparse, sparse_format, write_sparse
from anonymatch.sparse.methods import names, rules

if TYPE_CHECKING:
    from anonymatch.sparse.job import SparseJob

F = TypeVar("F", bound=Callable[..., Any])

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


class SparseSource(NamedTuple):
    """How to read the original matrix: ``--format`` and ``--adjacency``."""

    fmt: str
    adjacency: str


class Accuracy(NamedTuple):
    """``evaluate-sparse --accuracy``: the label file, the test split (``--test`` and
    ``--test-labels``, or ``--test-fraction`` held out) and the MLPs trained (``--nets``)."""

    labels_path: str | None
    test_path: str | None
    test_labels_path: str | None
    test_fraction: float
    nets: int


def sparse_source(fmt: str, adjacency: str) -> SparseSource:
    """``--format`` and ``--adjacency`` as one ``SparseSource`` (parameter ``source``)."""
    return SparseSource(fmt, adjacency)


def accuracy_setting(
    labels_path: str | None,
    test_path: str | None,
    test_labels_path: str | None,
    test_fraction: float,
    nets: int,
) -> Accuracy:
    """The ``--accuracy`` options as one ``Accuracy`` (parameter ``accuracy``)."""
    return Accuracy(labels_path, test_path, test_labels_path, test_fraction, nets)


def sparse_job(
    ctx: click.Context,
    k: int,
    method: str,
    epsilon: float | None,
    dp: str,
    beta: float,
    runs: int,
    chunk_rows: int | None,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    seed: int | None,
    lsh: str,
    quiet: bool,
) -> SparseJob:
    """``--k``, ``--method`` and its settings and the execution options, over the ``--config``
    job file's typed values (``with_job_file``), and the seed as one validated ``SparseJob``
    (parameter ``job``), built before the data is read."""
    from anonymatch.sparse.job import SparseJob

    flags = with_job_file(ctx, dict(
        k=k, method=method, epsilon=epsilon, dp=dp, beta=beta, runs=runs,
        chunk_rows=chunk_rows, executor=executor, workers=workers, scheduler=scheduler,
        refine=lsh == "support",
    ))  # fmt: skip
    return SparseJob.build(dict(flags, seed=seed, progress=not quiet))


FORMAT_HELP = ".parquet Parquet edge list, .mtx Matrix Market, .dat FIMI, else CSV edge list"
EXECUTOR_MEANING = (
    "where min-hash chunks run: inline = one after another in this process; threads / "
    "processes = local pools; dask = a Dask cluster (local with --workers, or --scheduler); "
    "auto = inline for one chunk, else a local Dask cluster."
)


@command("anonymize-sparse")
@click.argument("input_path", metavar="INPUT")
@output_options(
    "Release: .csv/.txt/.edges edge list, .parquet, .mtx/.mm, .dat.",
    extensions=SPARSE_RELEASE_EXTENSIONS,
)
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option(
    "--method",
    type=click.Choice(names()),
    default=names()[0],
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
@executor_options(EXECUTOR_MEANING)
@click.option(
    "--lsh",
    type=click.Choice(["support", "minhash"]),
    default="support",
    show_default=True,
    help="Chunk order: min-hashes with the support refinement key, or the paper's plain order.",
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
@format_option(FORMATS, FORMAT_HELP)
@click.option(
    "--adjacency",
    type=click.Choice(ADJACENCY),
    default="none",
    show_default=True,
    help="Read an edge list as a square (directed/undirected) adjacency matrix.",
)
@seed_option
@with_step(sparse_source, "source")
@with_step(sparse_job, "job")
def anonymize_sparse_cmd(
    input_path: str,
    output: str,
    job: SparseJob,
    in_memory: bool,
    workdir: str | None,
    source: SparseSource,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Publish a binary matrix k-anonymous, verified.

    Smooth k-anonymity by default; row i of the release is user i of INPUT."""
    from anonymatch.sparse.pipeline import run_job
    from anonymatch.sparse.streamed import anonymize_sparse_stream

    started = time.perf_counter()
    for path in (output, report_path):
        check_output_path(path, input_path)
    stream = (
        not in_memory
        and job.method.streamable
        and source.adjacency == "none"
        and sparse_format(input_path, source.fmt) == "parquet"
        and sparse_format(output) in ("parquet", "edges")
    )
    if stream:
        # out of core: the Parquet edge list is staged, ordered and anonymized chunk by chunk;
        # the release is verified chunk by chunk and written atomically (sparse.streamed)
        report = anonymize_sparse_stream(input_path, output, job, workdir=workdir)
        _finish(report, input_path, output, report_path, started, quiet)
        return
    release = run_job(_read_original(input_path, source.fmt, source.adjacency), job)
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
    from anonymatch.core.manifest import finish_manifest, write_manifest

    finish_manifest(report, input_path, output, started, command="anonymize-sparse")
    write_manifest(report_path, report)
    if not quiet:
        _summary(report, output)


def _summary(report: dict[str, Any], output: str) -> None:
    u, g = report["loss"], report["guarantee"]
    level = f"ε = {g['epsilon']}" if "epsilon" in g else f"k = {g['k']}"
    click.echo(
        f"{report['method']}, {level}, {report['input']['records']} rows x"
        f" {report['parameters']['columns']} columns, {u['edges_original']} ones -> {output}"
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


@command("verify-sparse")
@click.argument("original")
@click.argument("published")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option(
    "--rule",
    type=click.Choice(rules()),
    default=rules()[0],
    show_default=True,
    help="smooth: published ones held by ≥ half the class; nonsmooth: by all (suppression).",
)
@format_option(FORMATS, FORMAT_HELP)
@click.option(
    "--release-format",
    type=click.Choice(list(FORMATS)),
    default="auto",
    show_default=True,
    help="Format of PUBLISHED, as --format.",
)
@click.option("--adjacency", type=click.Choice(ADJACENCY), default="none", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@verbosity_options
def verify_sparse_cmd(
    original: str,
    published: str,
    k: int,
    rule: str,
    fmt: str,
    release_format: str,
    adjacency: str,
    as_json: bool,
) -> None:
    """Check that a sparse release is (smooth) k-anonymous.

    Is PUBLISHED (smooth) k-anonymous w.r.t. ORIGINAL? Exit 0 iff it is."""
    from anonymatch.core.params import integer
    from anonymatch.sparse.verify import verify_sparse

    integer(k, "k")
    x = _read_original(original, fmt, adjacency)
    p = _read_published(published, release_format, x.shape)
    report = verify_sparse(p, x, k, rule)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(
            f"{'PASS' if report.passed else 'FAIL'}: {report.reason}; k = {k}, {report.rows} rows,"
            f" {report.classes} classes, smallest {report.smallest_class}"
        )
    exit_verdict(report.passed)


def read_labels(path: str, rows: int) -> np.ndarray:
    """One label per line (any text), one line per row of the original; InputError otherwise."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"label file not found: {p}")
    try:
        lines = [line.strip() for line in p.read_text(encoding="utf-8").splitlines()]
    except UnicodeDecodeError:
        raise InputError(f"{p}: not a text file") from None
    while lines and not lines[-1]:
        lines.pop()
    if any(not line for line in lines):
        raise InputError(f"{p}: line {lines.index('') + 1}: empty label")
    if len(lines) != rows:
        raise InputError(f"{p}: {len(lines)} labels for {rows} rows")
    return np.array(lines)


def _accuracy_setup(
    x: sp.csr_array, accuracy: Accuracy, seed: int
) -> tuple[np.ndarray, np.ndarray, sp.csr_array, np.ndarray]:
    """(training rows, their labels, test features, test labels): the given test split, or
    ``test_fraction`` of the rows held out at random (trained on the release's other rows,
    tested on the held-out rows' original features)."""
    labels_path, test_path, test_labels_path, test_fraction, _ = accuracy
    assert labels_path is not None
    y = read_labels(labels_path, x.shape[0])
    if test_path is not None:
        if test_labels_path is None:
            raise InputError("--test needs --test-labels")
        test = read_sparse(test_path)
        if test.shape[1] > x.shape[1]:
            raise InputError(f"{test_path}: {test.shape[1]} columns, the original has {x.shape[1]}")
        test.resize((test.shape[0], x.shape[1]))
        return np.arange(x.shape[0]), y, test, read_labels(test_labels_path, test.shape[0])
    if not 0 < test_fraction < 1:
        raise InputError(f"--test-fraction must lie in (0, 1), got {test_fraction}")
    held = np.random.default_rng(seed).random(x.shape[0]) < test_fraction
    if held.all() or not held.any():
        raise InputError("too few rows to hold out a test split")
    return np.flatnonzero(~held), y[~held], x[np.flatnonzero(held)], y[held]


@command("evaluate-sparse")
@click.argument("original")
@click.argument("published", nargs=-1, required=True)
@format_option(FORMATS, FORMAT_HELP)
@click.option("--adjacency", type=click.Choice(ADJACENCY), default="none", show_default=True)
@click.option(
    "--accuracy",
    "labels_path",
    default=None,
    help="Label file (one label per line, per row of ORIGINAL): also report the downstream"
    " accuracy of a 1-hidden-layer, 10-unit ReLU MLP trained on each release (Figure 4).",
)
@click.option("--test", "test_path", default=None, help="Test features (original, not anonymized).")
@click.option("--test-labels", "test_labels_path", default=None, help="Labels of --test.")
@click.option(
    "--test-fraction",
    type=float,
    default=0.3,
    show_default=True,
    help="Without --test: rows held out at random as the test split.",
)
@click.option("--nets", type=int, default=3, show_default=True, help="MLPs trained (mean).")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@verbosity_options
@with_step(sparse_source, "source")
@with_step(accuracy_setting, "accuracy")
def evaluate_sparse_cmd(
    original: str,
    published: Sequence[str],
    source: SparseSource,
    accuracy: Accuracy,
    seed: int | None,
    as_json: bool,
) -> None:
    """Report the utility of sparse releases.

    Of each release of ORIGINAL: Jaccard similarity, suppressed and created entries; with
    --accuracy also the downstream MLP accuracy (with the original-data and majority
    baselines)."""
    from anonymatch.sparse.metrics import downstream_accuracy, edge_metrics, majority_accuracy

    if accuracy.nets < 1:
        raise InputError(f"--nets must be at least 1, got {accuracy.nets}")
    seed = draw_seed(seed)
    x = _read_original(original, source.fmt, source.adjacency)
    releases = {p: _read_published(p, "auto", x.shape) for p in published}
    results: dict[str, dict[str, Any]] = {
        p: edge_metrics(x, r).to_dict() for p, r in releases.items()
    }
    baselines: dict[str, float] = {}
    if accuracy.labels_path is not None:
        train, y, test, ty = _accuracy_setup(x, accuracy, seed)

        def acc(features: sp.csr_array) -> float:
            runs = [
                downstream_accuracy(features[train], y, test, ty, seed=seed + i)
                for i in range(accuracy.nets)
            ]
            return float(np.mean(runs))

        for p, r in releases.items():
            results[p]["accuracy"] = acc(sp.csr_array(r[: x.shape[0]]))
        baselines = {"original": acc(x), "majority_label": majority_accuracy(y, ty)}
    if as_json:
        out: dict[str, Any] = dict(results)
        if baselines:
            out["accuracy_baselines"] = baselines
        out["seed"] = seed
        click.echo(json.dumps(out, indent=2))
        return
    labels = [Path(p).name for p in published]
    width = max(12, *(len(s) for s in labels))
    names = ["jaccard", "suppressed", "created"] + (["accuracy"] if baselines else [])
    click.echo("metric".ljust(12) + "".join(s.rjust(width + 2) for s in labels))
    for name in names:
        click.echo(
            name.ljust(12)
            + "".join(f"{100 * float(r[name]):.2f}%".rjust(width + 2) for r in results.values())
        )
    click.echo(
        "ones".ljust(12)
        + "".join(str(r["edges_published"]).rjust(width + 2) for r in results.values())
    )
    if baselines:
        click.echo(
            f"accuracy baselines: original data {100 * baselines['original']:.2f}%,"
            f" majority label {100 * baselines['majority_label']:.2f}%"
        )
    click.echo(f"seed {seed}")


COMMANDS = [anonymize_sparse_cmd, verify_sparse_cmd, evaluate_sparse_cmd]
