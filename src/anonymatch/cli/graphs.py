"""Commands for graphs: check-graph, anonymize-graph (k-anonymity w.r.t. neighbourhoods,
Stokes NORDSEC 2013)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.app.outputs import GRAPH_RELEASE_EXTENSIONS
from anonymatch.cli.config import with_job_file
from anonymatch.cli.options import (
    check_output_path,
    exit_verdict,
    format_option,
    json_default,
    output_options,
    seed_option,
    stage_bar,
    verbosity_options,
)
from anonymatch.cli.steps import command, with_step
from anonymatch.core.manifest import finish_manifest, write_manifest

if TYPE_CHECKING:
    from anonymatch.graphs.job import GraphJob

F = TypeVar("F", bound=Callable[..., Any])

GRAPH_FORMATS = ("auto", "edges")
GRAPH_FORMAT_HELP = "every input is an edge list: two vertex ids a line, CSV or whitespace"


def _read_graph(path: str, n: int | None) -> Any:
    from anonymatch.graphs.io import read_edge_list

    graph = read_edge_list(path, n)
    for w in graph.warnings:
        click.echo(f"anonymatch: warning: {path}: {w}", err=True)
    return graph


def graph_job(ctx: click.Context, k: int, closed: bool, fmt: str, iterations: int = 10) -> GraphJob:
    """``--k``, ``--closed`` and ``--iterations`` (``anonymize-graph``), over the ``--config``
    job file's typed values (``with_job_file``), as one validated ``GraphJob`` (parameter
    ``job``); ``--format`` names the one input format (an edge list) and goes no further."""
    from anonymatch.graphs.job import GraphJob

    return GraphJob.build(with_job_file(ctx, dict(k=k, closed=closed, iterations=iterations)))


@command("check-graph")
@click.argument("edges")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("--closed", is_flag=True, help="Closed neighbourhoods (N(v) ∪ {v}).")
@click.option("--n", "n_vertices", type=int, default=None, help="Vertices are 0 … N−1.")
@click.option(
    "--decomposition",
    is_flag=True,
    help="Also compute the modular decomposition (dense, O(n³)): maximal modular partition "
    "and the classes read off the tree.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@format_option(GRAPH_FORMATS, GRAPH_FORMAT_HELP)
@verbosity_options
@with_step(graph_job, "job")
def check_graph_cmd(
    edges: str,
    job: GraphJob,
    n_vertices: int | None,
    decomposition: bool,
    as_json: bool,
    fmt: str,
) -> None:
    """Check that a graph is k-anonymous.

    Is the graph EDGES k-anonymous w.r.t. open (or --closed) neighbourhoods? Exit 0 iff it is."""
    from anonymatch.graphs.modular import (
        maximal_modular_partition,
        modular_decomposition,
        twin_classes_from_decomposition,
    )
    from anonymatch.graphs.verify import check_graph

    k, closed = job.k, job.closed
    graph = _read_graph(edges, n_vertices)
    report = check_graph(graph.adjacency, k, closed)
    out = report.to_dict()
    if decomposition and graph.n:
        tree = modular_decomposition(graph.adjacency)
        parts = maximal_modular_partition(tree)
        classes = twin_classes_from_decomposition(tree, closed)
        out["decomposition"] = {
            "root": tree.kind,
            "maximal_modular_partition_sizes": sorted((len(p) for p in parts), reverse=True),
            "classes_from_tree": len(classes),
            "smallest_class_from_tree": min(len(c) for c in classes),
        }
    if as_json:
        click.echo(json.dumps(out, indent=2, default=json_default))
    else:
        kind = "closed" if closed else "open"
        status = "PASS" if report.passed else "FAIL"
        sizes = report.class_sizes
        shown = ", ".join(str(s) for s in sizes[:20]) + (" …" if len(sizes) > 20 else "")
        click.echo(
            f"{status}: {k}-anonymity w.r.t. {kind} neighbourhoods; {report.n_vertices} vertices,"
            f" {report.n_edges} edges, {report.n_classes} classes (sizes {shown}); smallest"
            f" {report.smallest_class}; {report.vertices_below_k} vertices in classes < k"
        )
        if "decomposition" in out:
            d = out["decomposition"]
            click.echo(
                f"modular decomposition: root {d['root']}, maximal modular partition sizes "  # type: ignore[index]
                f"{d['maximal_modular_partition_sizes'][:20]}; classes read off the tree: "  # type: ignore[index]
                f"{d['classes_from_tree']} (smallest {d['smallest_class_from_tree']})"  # type: ignore[index]
            )
    exit_verdict(report.passed)


def kept_ids(ctx: click.Context, keep_ids: bool) -> bool:
    """``--keep-ids``, or the job file's ``method.keep_ids`` (parameter ``keep_ids``)."""
    return bool(with_job_file(ctx, {"keep_ids": keep_ids})["keep_ids"])


@command("anonymize-graph")
@click.argument("edges")
@output_options(
    "Edge list to write (CSV source,target: .csv, .txt or .edges).",
    extensions=GRAPH_RELEASE_EXTENSIONS,
)
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("--closed", is_flag=True, help="Closed neighbourhoods: groups become cliques.")
@click.option("--n", "n_vertices", type=int, default=None, help="Vertices are 0 … N−1.")
@click.option("--iterations", type=int, default=10, show_default=True, help="k-means rounds.")
@click.option(
    "--keep-ids",
    is_flag=True,
    help="Keep the input's vertex ids (default: publish a random relabelling 0 … n−1, since "
    "the ids themselves would identify the vertices).",
)
@seed_option
@format_option(GRAPH_FORMATS, GRAPH_FORMAT_HELP)
@with_step(graph_job, "job")
@with_step(kept_ids, "keep_ids")
def anonymize_graph_cmd(
    edges: str,
    output: str,
    job: GraphJob,
    n_vertices: int | None,
    keep_ids: bool,
    seed: int | None,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Publish a graph k-anonymous, verified.

    EDGES is published k-anonymous w.r.t. neighbourhoods: groups of similar vertices, majority rule
    between groups; the checker verifies the graph before it is written."""
    from anonymatch.graphs.io import write_edge_list
    from anonymatch.graphs.pipeline import release_graph

    for path in (output, report_path):
        check_output_path(path, edges)
    k, closed = job.k, job.closed
    started = time.perf_counter()
    bar = stage_bar(3, quiet, "anonymize-graph")
    graph = _read_graph(edges, n_vertices)
    bar.update()
    published = release_graph(graph, job, keep_ids=keep_ids, seed=seed, n_vertices=n_vertices)
    result, check, report = published.result, published.check, published.report
    bar.update()
    write_edge_list(output, published.adjacency, published.ids)
    bar.update()
    bar.close()
    finish_manifest(report, edges, output, started, "anonymize-graph")
    write_manifest(report_path, report)
    if not quiet:
        mt = result.metrics
        click.echo(
            f"{k}-anonymous ({'closed' if closed else 'open'}) graph: {graph.n} vertices in "
            f"{report['loss']['groups']} groups, {mt['edges_after']} edges -> {output}"
        )
        click.echo(
            f"verified: PASS (smallest class {check.smallest_class}); Jaccard "
            f"{mt['jaccard']:.3f}, +{mt['edges_added']} / -{mt['edges_removed']} edges, degree "
            f"EMD {mt['degree_emd']:.2f}"
        )


COMMANDS = [check_graph_cmd, anonymize_graph_cmd]
