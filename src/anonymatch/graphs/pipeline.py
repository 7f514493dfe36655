"""Graph k-anonymization w.r.t. neighbourhoods (Stokes, NORDSEC 2013 §4).

The anonymizer partitions the vertices into groups of ≥ k with similar adjacency rows (a
k-means-style clustering), makes each group an independent set (open neighbourhoods) or a
clique (closed), and joins two groups completely iff the majority of their original pairs were
edges. Every vertex then shares its neighbourhood with its ≥ k − 1 group mates; the release is
checked by ``graphs.verify.check_graph`` before it is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from anonymatch.core.params import check_level_fits
from anonymatch.core.release import Produced, publish
from anonymatch.graphs.job import GraphJob
from anonymatch.graphs.metrics import graph_metrics
from anonymatch.graphs.verify import GraphAnonymityReport, check_graph

if TYPE_CHECKING:
    from anonymatch.graphs.io import EdgeListGraph

# --------------------------------------------------------------------------------------------
# neighbourhood classes and the checker


# --------------------------------------------------------------------------------------------
# modular decomposition


# --------------------------------------------------------------------------------------------
# the anonymizer


@dataclass
class GraphAnonymization:
    """Result of ``anonymize_graph``: the new adjacency (alias ``release``), the group of each
    vertex, metrics; the front ``anonymatch.graphs.anonymize`` also fills ``verification`` and
    the JSON-able ``report``."""

    adjacency: sp.csr_array
    groups: np.ndarray
    metrics: dict[str, float]
    verification: GraphAnonymityReport | None = None
    report: dict[str, object] = field(default_factory=dict)

    @property
    def release(self) -> sp.csr_array:
        """The published adjacency (the same object as ``adjacency``)."""
        return self.adjacency


def _group_edges(adj: sp.csr_array, groups: np.ndarray, g: int) -> np.ndarray:
    """e[i, j] = number of edges between groups i and j (e[i, i] counts each edge twice)."""
    z = sp.csr_array(
        (np.ones(len(groups)), (np.arange(len(groups)), groups)), shape=(len(groups), g)
    )
    return (z.T @ adj @ z).toarray()


def _cost_matrix(e: np.ndarray, sizes: np.ndarray, closed: bool) -> np.ndarray:
    """Edges changed between each pair of groups under the majority rule."""
    pairs = np.outer(sizes, sizes).astype(np.float64)
    off = np.minimum(e, pairs - e)
    inner = sizes * (sizes - 1) / 2.0
    within = np.diag(e) / 2.0
    np.fill_diagonal(off, (inner - within) if closed else within)
    return off


def changed_edges(adj: sp.csr_array, groups: np.ndarray, closed: bool) -> int:
    """Edges added + removed when ``groups`` are published by the majority rule. O(m + g²)."""
    g = int(groups.max()) + 1
    sizes = np.bincount(groups, minlength=g)
    return int(round(np.triu(_cost_matrix(_group_edges(adj, groups, g), sizes, closed)).sum()))


def _rcm_groups(adj: sp.csr_array, k: int) -> np.ndarray:
    """Runs of k vertices in reverse Cuthill–McKee order (the last run absorbs the rest)."""
    n = adj.shape[0]
    order = reverse_cuthill_mckee(sp.csr_matrix(adj), symmetric_mode=True).astype(np.int64)
    g = max(n // k, 1)
    groups = np.empty(n, np.int64)
    groups[order] = np.minimum(np.arange(n) // k, g - 1)
    return groups


def _similarity_groups(adj: sp.csr_array, k: int, closed: bool) -> np.ndarray:
    """Greedy k-member grouping: the unassigned vertex of highest degree takes the k − 1
    unassigned vertices whose (open or closed) neighbourhoods have the highest Jaccard
    similarity with its own; the last < 2k vertices form the last group.
    O(Σ_seeds (deg·avg deg + n)) = O(n²/k + m·avg deg)."""
    n = adj.shape[0]
    a = sp.csr_array(adj, dtype=np.float64)
    if closed:
        a = sp.csr_array(a + sp.identity(n, format="csr"))
    deg = np.asarray(a.sum(axis=1)).reshape(-1)
    free = np.ones(n, bool)
    groups = np.full(n, -1, np.int64)
    seeds = np.argsort(-deg, kind="stable")
    gid = 0
    for seed in seeds.tolist():
        if free.sum() < 2 * k:
            break
        if not free[seed]:
            continue
        common = (a[[seed]] @ a).toarray().reshape(-1)
        union = deg[seed] + deg - common
        jac = np.where(union > 0, common / np.where(union > 0, union, 1), 1.0)
        jac[~free] = -1.0
        jac[seed] = -1.0
        take = np.argsort(-jac, kind="stable")[: k - 1]
        members = np.concatenate([[seed], take])
        groups[members] = gid
        free[members] = False
        gid += 1
    groups[free] = gid
    return groups


def _refine(
    adj: sp.csr_array, groups: np.ndarray, k: int, closed: bool, iterations: int
) -> np.ndarray:
    """k-means-style rounds: compute each group's majority pattern (joined to group j iff more
    than half of the pairs are edges) and move every vertex to the group whose pattern it
    matches best (fewest of its own pairs to change), never leaving a group with fewer than k
    vertices; stop when no vertex moves. O(iterations · (m + n·g))."""
    n = adj.shape[0]
    groups = groups.copy()
    g = int(groups.max()) + 1
    for _ in range(iterations):
        sizes = np.bincount(groups, minlength=g)
        e = _group_edges(adj, groups, g)
        pairs = np.outer(sizes, sizes).astype(np.float64)
        np.fill_diagonal(pairs, sizes * (sizes - 1.0))
        pattern = e * 2 > pairs  # group i joined to group j
        np.fill_diagonal(pattern, closed)
        z = sp.csr_array((np.ones(n), (np.arange(n), groups)), shape=(n, g))
        counts = (adj @ z).toarray()  # edges of v to each group
        # cost of v adopting group b's pattern: edges to remove + non-edges to add
        # Σ_j [pattern[b,j]] (size_j − counts[v,j]) + [¬pattern[b,j]] counts[v,j]
        pat = pattern.astype(np.float64)
        cost = counts.sum(axis=1, keepdims=True) + (sizes[None, :] - 2 * counts) @ pat.T
        best = np.argmin(cost, axis=1)
        moved = 0
        for v in np.flatnonzero(best != groups).tolist():
            src, dst = groups[v], best[v]
            if cost[v, dst] < cost[v, src] and sizes[src] > k:
                groups[v] = dst
                sizes[src] -= 1
                sizes[dst] += 1
                moved += 1
        if not moved:
            break
    _, groups = np.unique(groups, return_inverse=True)  # drop emptied groups (none are < k)
    return groups.reshape(-1).astype(np.int64)


def cluster_rows(adj: sp.csr_array, k: int, closed: bool, iterations: int = 10) -> np.ndarray:
    """Groups of ≥ k vertices with similar adjacency rows: k-means-style clustering.

    Two starts — runs of k in reverse Cuthill–McKee order, and a greedy k-member grouping by
    Jaccard similarity of neighbourhoods (``_similarity_groups``) — each refined by
    ``_refine``; the grouping that changes fewer edges under the majority rule is kept.
    O(iterations · (m + n²/k) + m·avg deg).
    Reference: Stokes, NORDSEC 2013 (k-anonymity of graphs through k-means). Could later share
    the smooth-k (facility-location) clustering of issue 5.
    """
    n = adj.shape[0]
    if k <= 1:
        return np.arange(n, dtype=np.int64)
    best, best_cost = None, None
    for start in (_rcm_groups(adj, k), _similarity_groups(adj, k, closed)):
        groups = _refine(adj, start, k, closed, iterations)
        cost = changed_edges(adj, groups, closed)
        if best_cost is None or cost < best_cost:
            best, best_cost = groups, cost
    assert best is not None
    return best


def graph_from_groups(adj: sp.csr_array, groups: np.ndarray, closed: bool) -> sp.csr_array:
    """Every group independent (open) or a clique (closed); groups i ≠ j joined completely iff
    more than half of their |G_i|·|G_j| pairs are edges of ``adj``. O(m + n²_out) where n²_out
    is the number of edges written."""
    g = int(groups.max()) + 1 if len(groups) else 0
    sizes = np.bincount(groups, minlength=g)
    e = _group_edges(adj, groups, g)
    join = e * 2 > np.outer(sizes, sizes)
    np.fill_diagonal(join, closed)
    members = [np.flatnonzero(groups == i) for i in range(g)]
    rows, cols = [], []
    for i, j in zip(*np.nonzero(np.triu(join)), strict=True):
        a, b = members[i], members[j]
        if i == j:
            r, c = np.triu_indices(len(a), 1)
            rows.append(a[r])
            cols.append(a[c])
        else:
            rows.append(np.repeat(a, len(b)))
            cols.append(np.tile(b, len(a)))
    n = len(groups)
    if rows:
        r = np.concatenate(rows)
        c = np.concatenate(cols)
    else:
        r = c = np.empty(0, np.int64)
    out = sp.csr_array(
        (np.ones(2 * len(r), np.int8), (np.concatenate([r, c]), np.concatenate([c, r]))),
        shape=(n, n),
    )
    out.sort_indices()
    return out


def anonymize_graph(
    adjacency: sp.csr_array, k: int, closed: bool = False, iterations: int = 10
) -> GraphAnonymization:
    """:func:`run_job` on ``GraphJob.build(dict(k=k, closed=closed, iterations=iterations))``."""
    return run_job(adjacency, GraphJob.build(dict(k=k, closed=closed, iterations=iterations)))


def run_job(adjacency: sp.csr_array, job: GraphJob) -> GraphAnonymization:
    """A k-anonymous graph w.r.t. open (closed) neighbourhoods close to ``adjacency``: groups of
    ≥ k similar vertices (``cluster_rows``), joined by the majority rule (``graph_from_groups``).
    Every vertex of a group then has the same neighbourhood, so classes have ≥ k members.
    Raises InfeasibleError if k > n. Complexity: see ``cluster_rows``.
    """
    adj = sp.csr_array(adjacency)
    n = adj.shape[0]
    check_level_fits(job.k, n, records="vertices")
    groups = cluster_rows(adj, job.k, job.closed, job.iterations)
    out = graph_from_groups(adj, groups, job.closed)
    return GraphAnonymization(out, groups, graph_metrics(adj, out))


@dataclass(frozen=True)
class GraphRelease:
    """A verified graph release, ready to write: ``adjacency`` and the vertex ``ids`` to
    write it with, the verifier's ``check``, the anonymizer's ``result`` and the manifest
    (``report``; the CLI completes it with the paths)."""

    adjacency: sp.csr_array
    ids: np.ndarray
    check: GraphAnonymityReport
    result: GraphAnonymization
    report: dict[str, Any]


def release_graph(
    graph: EdgeListGraph,
    job: GraphJob,
    *,
    keep_ids: bool,
    seed: int | None,
    n_vertices: int | None,
) -> GraphRelease:
    """Publish an edge list's graph k-anonymous, verified: :func:`run_job`, then the vertices
    relabelled by a random permutation 0 … n−1 (the ids themselves would identify the
    vertices; ``keep_ids`` keeps them, ``seed`` fixes the permutation), verified
    (``graphs.verify.check_graph``) and stated (``core.release.publish``).

    Parameters
    ----------
    graph : EdgeListGraph
        The graph read (``graphs.io.read_edge_list``).
    job : GraphJob
        k, open or closed neighbourhoods, k-means rounds.
    keep_ids : bool
        Publish the input's vertex ids instead of a random relabelling.
    seed : int, optional
        Fixes the relabelling (OS entropy otherwise).
    n_vertices : int, optional
        The vertex count the graph was read with (``--n``), for the manifest.

    Returns
    -------
    GraphRelease

    Raises
    ------
    InfeasibleError
        k larger than the number of vertices.
    VerificationError
        The release failed verification (never expected); nothing is written.

    Notes
    -----
    Complexity: that of :func:`run_job`, plus O(n + m) for the relabelling and the check.
    """
    result = run_job(graph.adjacency, job)
    if keep_ids:
        adjacency, ids = result.adjacency, graph.ids
    else:
        n = graph.n
        perm = np.random.default_rng(seed).permutation(n)  # vertex v -> label perm[v]
        p = sp.csr_array((np.ones(n), (perm, np.arange(n))), shape=(n, n))
        adjacency = sp.csr_array(p @ result.adjacency @ p.T)
        adjacency.data[:] = 1
        ids = np.arange(n, dtype=np.int64)
    check = check_graph(adjacency, job.k, job.closed)
    produced = Produced(
        kind="graph",
        method=job.method.name,
        parameters={
            "closed": job.closed,
            "iterations": job.iterations,
            "keep_ids": keep_ids,
            "n_vertices": n_vertices,
        },
        guarantee={
            "model": "graph-k-anonymity",
            "k": job.k,
            "neighbourhoods": "closed" if job.closed else "open",
        },
        verification=check.to_dict(),
        loss={**result.metrics, "groups": int(result.groups.max()) + 1 if graph.n else 0},
        seconds={},
        seeded=None if keep_ids else seed is not None,
        records_in=graph.n,
        records_out=graph.n,
        input_extra={"warnings": graph.warnings},
    )
    return GraphRelease(adjacency, ids, check, result, publish(produced))
