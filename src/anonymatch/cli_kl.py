"""Commands for (k,ℓ)-anonymity of wide tables, k^m-anonymity of transactions and k-anonymity
of graphs (issue 6): check-kl, anonymize-kl, check-km, anonymize-km, check-graph,
anonymize-graph. Checks exit 0 when the guarantee holds and 1 when it does not; errors exit 2
(bad input), 3 (infeasible) or 4 (failed verification) with one line and nothing written.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click
import numpy as np

from .cli import _check_output_path, _csv, _na, _names, _weights, input_options
from .errors import InputError
from .io.tables import read_table, sha256_file


def _echo_report_summary(report: Any, what: str, show: int) -> None:
    status = "PASS" if report.passed else "FAIL"
    click.echo(
        f"{status}: {what}; k = {report.k}, {report.n_records} records; largest level "
        f"satisfied {report.max_level}; minimal violations {report.n_violations}"
    )
    for st in report.levels:
        click.echo(
            f"  level {st['level']}: {st['violations']} minimal violations, "
            f"{st['records_at_risk']} records at risk"
        )
    for v in report.violations[:show]:
        if v.attributes:
            combo = ", ".join(f"{a}={x}" for a, x in zip(v.attributes, v.values, strict=True))
        else:
            combo = "{" + ", ".join(v.values) + "}"
        click.echo(f"  {v.count}x  {combo}")
    if report.n_violations > show:
        click.echo(f"  … {report.n_violations - show} more (see --json)")


def _write_report(path: str | None, report: dict[str, object]) -> None:
    if path:
        from .io.release import write_atomically

        text = json.dumps(report, indent=2, default=_json_default) + "\n"
        write_atomically(path, lambda tmp: tmp.write_text(text))


def _json_default(obj: object) -> object:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(type(obj).__name__)


def _progress(quiet: bool) -> Any:
    if quiet:
        return None
    return lambda msg: click.echo(msg, err=True)


# ---------------------------------------------------------------------------- tables


@click.command("check-kl")
@click.argument("table")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-l", "--l", "level", required=True, type=int, help="Attributes the adversary knows.")
@click.option("--qi", required=True, help="Comma-separated public attributes.")
@click.option("--numeric", default=None, help="Numeric attributes (5 and 5..5 are one value).")
@click.option("--show", type=int, default=10, show_default=True, help="Violations to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@input_options
def check_kl_cmd(
    table: str,
    k: int,
    level: int,
    qi: str,
    numeric: str | None,
    show: int,
    as_json: bool,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Is TABLE (an original or a release) (k,ℓ)-anonymous? Exit 0 iff it is."""
    from .kl_check import check_kl
    from .schema import Schema, missing_qi_mask

    frame = read_table(table, _csv(sep, names, quotechar))
    attrs = _names(qi)
    if drop_missing:
        schema = Schema.build(attrs)
        schema.check_columns([str(c) for c in frame.columns])
        frame = frame.loc[~missing_qi_mask(frame, schema, _na(na_values))]
    report = check_kl(frame, k, level, attrs, _names(numeric))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=_json_default))
    else:
        _echo_report_summary(report, f"(k,ℓ)-anonymity with ℓ = {report.level}", show)
    sys.exit(0 if report.passed else 1)


@click.command("anonymize-kl")
@click.argument("input_path", metavar="INPUT")
@click.option("-o", "--output", required=True, help="Release file (.csv, .tsv or .parquet).")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-l", "--l", "level", required=True, type=int, help="Attributes the adversary knows.")
@click.option("--qi", required=True, help="Comma-separated public attributes.")
@click.option("--numeric", default=None, help="Attributes published as ranges.")
@click.option("--sensitive", default=None, help="Sensitive columns (kept as they are).")
@click.option("--identifiers", default=None, help="Identifier columns (dropped).")
@click.option("--weights", default=None, help="Attribute weights for GCP, e.g. age=2.")
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed for the row shuffle (default: OS entropy); tests/experiments only.",
)
@click.option("--report", "report_path", default=None, help="Write the JSON manifest here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary.")
@input_options
def anonymize_kl_cmd(
    input_path: str,
    output: str,
    k: int,
    level: int,
    qi: str,
    numeric: str | None,
    sensitive: str | None,
    identifiers: str | None,
    weights: str | None,
    seed: int | None,
    report_path: str | None,
    quiet: bool,
    sep: str | None,
    names: str | None,
    quotechar: str,
    na_values: str | None,
    drop_missing: bool,
) -> None:
    """Publish INPUT (k,ℓ)-anonymous by global generalization (hypergraph algorithm), verified."""
    from .io.release import write_release
    from .kl_release import anonymize_kl

    started = time.perf_counter()
    for path in (output, report_path):
        _check_output_path(path, input_path)
    frame = read_table(input_path, _csv(sep, names, quotechar))
    release = anonymize_kl(
        frame,
        k,
        level,
        _names(qi),
        _names(numeric),
        _names(sensitive),
        _names(identifiers),
        seed=seed,
        weights=_weights(weights),
        na_values=_na(na_values),
        drop_missing=drop_missing,
        progress=_progress(quiet),
    )
    write_release(output, release.table, release.cells, release.qi)
    report = dict(release.report)
    report["input"] = {"path": str(input_path), "sha256": sha256_file(input_path)}
    report["output"] = {"path": str(output), "sha256": sha256_file(output)}
    seconds = dict(report["seconds"])  # type: ignore[call-overload]
    seconds["wall"] = time.perf_counter() - started
    report["seconds"] = seconds
    _write_report(report_path, report)
    if not quiet:
        loss = report["information_loss"]
        click.echo(
            f"(k,ℓ) = ({k}, {level}), {report['rows']} rows, {report['merges']} merges -> {output}"
        )
        click.echo("verified: PASS (truthful generalization; no rare combination of ≤ ℓ values)")
        click.echo(f"information loss: GCP {100 * loss['gcp']:.2f}%")  # type: ignore[index]


# ---------------------------------------------------------------------------- transactions


@click.command("check-km")
@click.argument("transactions")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-m", "--m", "m", required=True, type=int, help="Items the adversary knows.")
@click.option("--show", type=int, default=10, show_default=True, help="Violations to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check_km_cmd(transactions: str, k: int, m: int, show: int, as_json: bool) -> None:
    """Is TRANSACTIONS (FIMI .dat, or a .jsonl release) k^m-anonymous? Exit 0 iff it is."""
    from .kl_check import check_km
    from .kl_release import read_transactions

    matrix, labels = read_transactions(transactions)
    report = check_km(matrix, labels, k, m)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=_json_default))
    else:
        _echo_report_summary(report, f"k^m-anonymity with m = {report.level}", show)
    sys.exit(0 if report.passed else 1)


@click.command("anonymize-km")
@click.argument("input_path", metavar="TRANSACTIONS")
@click.option("-o", "--output", required=True, help="Release (JSON Lines, one {items} per line).")
@click.option("-k", "--k", "k", required=True, type=int, help="Anonymity level k ≥ 1.")
@click.option("-m", "--m", "m", required=True, type=int, help="Items the adversary knows.")
@click.option("--seed", type=int, default=None, help="Seed for the row shuffle (tests only).")
@click.option("--report", "report_path", default=None, help="Write the JSON manifest here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary.")
def anonymize_km_cmd(
    input_path: str,
    output: str,
    k: int,
    m: int,
    seed: int | None,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Publish TRANSACTIONS (FIMI .dat) k^m-anonymous by global item grouping, verified."""
    from .io.release import write_atomically
    from .kl_release import anonymize_km, read_transactions

    for path in (output, report_path):
        _check_output_path(path, input_path)
    matrix, labels = read_transactions(input_path)
    release = anonymize_km(matrix, labels, k, m, seed=seed, progress=_progress(quiet))
    text = release.jsonl()
    write_atomically(output, lambda tmp: tmp.write_text(text))
    report = dict(release.report)
    report["input"] = {"path": str(input_path), "sha256": sha256_file(input_path)}
    report["output"] = {"path": str(output), "sha256": sha256_file(output)}
    _write_report(report_path, report)
    if not quiet:
        click.echo(
            f"k^m = {k}^{m}: {report['transactions']} transactions, {report['items']} items in "
            f"{report['item_groups']} groups -> {output}"
        )
        ncp = report["information_loss"]["item_ncp"]  # type: ignore[index]
        click.echo(f"verified: PASS; information loss: item NCP {100 * ncp:.2f}%")


# ---------------------------------------------------------------------------- graphs


def _read_graph(path: str, n: int | None) -> Any:
    from .io.graphs import read_edge_list

    graph = read_edge_list(path, n)
    for w in graph.warnings:
        click.echo(f"anonymatch: warning: {path}: {w}", err=True)
    return graph


@click.command("check-graph")
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
def check_graph_cmd(
    edges: str, k: int, closed: bool, n_vertices: int | None, decomposition: bool, as_json: bool
) -> None:
    """Is the graph EDGES k-anonymous w.r.t. open (closed) neighbourhoods? Exit 0 iff it is."""
    from .methods.graphs import (
        check_graph,
        maximal_modular_partition,
        modular_decomposition,
        twin_classes_from_decomposition,
    )

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
        click.echo(json.dumps(out, indent=2, default=_json_default))
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
    sys.exit(0 if report.passed else 1)


@click.command("anonymize-graph")
@click.argument("edges")
@click.option("-o", "--output", required=True, help="Edge list to write (CSV source,target).")
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
@click.option("--seed", type=int, default=None, help="Seed for the relabelling (tests only).")
@click.option("--report", "report_path", default=None, help="Write the JSON manifest here.")
@click.option("-q", "--quiet", is_flag=True, help="No summary.")
def anonymize_graph_cmd(
    edges: str,
    output: str,
    k: int,
    closed: bool,
    n_vertices: int | None,
    iterations: int,
    keep_ids: bool,
    seed: int | None,
    report_path: str | None,
    quiet: bool,
) -> None:
    """Publish a k-anonymous version of the graph EDGES (groups of similar vertices, majority
    rule between groups), verified by the checker before writing."""
    import scipy.sparse as sp

    from .errors import VerificationError
    from .io.graphs import write_edge_list
    from .methods.graphs import anonymize_graph, check_graph

    for path in (output, report_path):
        _check_output_path(path, edges)
    if iterations < 0:
        raise InputError(f"--iterations must be non-negative, got {iterations}")
    started = time.perf_counter()
    graph = _read_graph(edges, n_vertices)
    result = anonymize_graph(graph.adjacency, k, closed, iterations)
    if keep_ids:
        adjacency, ids = result.adjacency, graph.ids
    else:
        perm = np.random.default_rng(seed).permutation(graph.n)  # vertex v -> label perm[v]
        p = sp.csr_array((np.ones(graph.n), (perm, np.arange(graph.n))), shape=(graph.n,) * 2)
        adjacency = sp.csr_array(p @ result.adjacency @ p.T)
        adjacency.data[:] = 1
        ids = np.arange(graph.n, dtype=np.int64)
    check = check_graph(adjacency, k, closed)
    if not check.passed:
        raise VerificationError(
            f"the graph failed verification ({check.vertices_below_k} vertices in classes "
            "smaller than k); nothing written"
        )
    write_edge_list(output, adjacency, ids)
    report: dict[str, object] = {
        "method": "graph-kmeans-majority",
        "k": k,
        "closed": closed,
        "randomness": None if keep_ids else ("os-entropy" if seed is None else {"seed": seed}),
        "vertices": graph.n,
        "groups": int(result.groups.max()) + 1 if graph.n else 0,
        "input_warnings": graph.warnings,
        "metrics": result.metrics,
        "verification": check.to_dict(),
        "input": {"path": str(edges), "sha256": sha256_file(edges)},
        "output": {"path": str(output), "sha256": sha256_file(output)},
        "seconds": {"wall": time.perf_counter() - started},
    }
    _write_report(report_path, report)
    if not quiet:
        mt = result.metrics
        click.echo(
            f"{k}-anonymous ({'closed' if closed else 'open'}) graph: {graph.n} vertices in "
            f"{report['groups']} groups, {mt['edges_after']} edges -> {output}"
        )
        click.echo(
            f"verified: PASS (smallest class {check.smallest_class}); Jaccard "
            f"{mt['jaccard']:.3f}, +{mt['edges_added']} / -{mt['edges_removed']} edges, degree "
            f"EMD {mt['degree_emd']:.2f}"
        )


def register(group: click.Group) -> None:
    """Add the issue-6 commands to the CLI group."""
    for command in (
        check_kl_cmd,
        anonymize_kl_cmd,
        check_km_cmd,
        anonymize_km_cmd,
        check_graph_cmd,
        anonymize_graph_cmd,
    ):
        group.add_command(command)
