"""Privacy step: random disjoint assignments by closed walk, one chosen uniformly at random.

Reference: Xue, Karras, Raïssi, Vaidya, Tan (KDD 2012) §4.2, Algorithm 1 (Closed Walk), on the
unified view of the generalization graph; the guarantee is Doka et al. §2.2 (Lemma 2.1–2.2,
Theorem 2.3): in a graph where every vertex has equal in- and out-degree D, the edges split into
D disjoint perfect matchings; choosing one of them uniformly makes each of a record's D matches
its true match with probability exactly 1/D.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import connected_components

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.runner import default_workers

_CHUNK = 4096  # vertices per independent closed-walk job
# Complete bicliques of more records than this get a uniform random permutation instead of the
# closed walk (``choose_assignment``). Was 64 (small classes kept the walk and the releases made
# before); 1 since issue 17: the permutation is exact for every class size and costs O(m)
# instead of the walk's O(m³), which was a tenth of a Mondrian run on Adult at k = 5.
BICLIQUE_WALK_MAX = 1


@njit(cache=True, nogil=True)
def _pick_hop(
    x, target, indptr, indices, inv, avail, traversed, visited, walk, rng
):  # pragma: no cover
    """Next hop from original x: a random untraversed, still available out-edge, chosen among
    (1) edges to nodes this walk has not visited (Xue §4.2 (i)); else (2) the edge closing the
    walk, if x has it; else (3) any, creating a deviant cycle. Never an edge already traversed
    from x in this walk (§4.2 (ii)). Rule (2) is ours: the paper only says unvisited hops come
    first; closing as soon as no unvisited hop is left avoids needless deviant cycles (the set
    of possible cycles, and so the guarantee, is unchanged) and makes walks much shorter."""
    fresh, any_, closing = 0, 0, -1
    for e in range(indptr[x], indptr[x + 1]):
        if avail[e] and traversed[e] != walk:
            any_ += 1
            if indices[e] == target:
                closing = e
            elif visited[inv[indices[e]]] != walk:
                fresh += 1
    if fresh == 0 and closing >= 0:
        return closing
    want_fresh = fresh > 0
    r = rng.integers(0, fresh if want_fresh else any_)
    for e in range(indptr[x], indptr[x + 1]):
        if avail[e] and traversed[e] != walk:
            if want_fresh and (indices[e] == target or visited[inv[indices[e]]] == walk):
                continue
            if r == 0:
                return e
            r -= 1
    return -1  # unreachable on a balanced graph (Doka Lemma 2.1)


@njit(cache=True, nogil=True)
def _closed_walk_rounds(indptr, indices, degree, n_rounds, rng):  # pragma: no cover - compiled
    n = indptr.shape[0] - 1
    out = np.full((n_rounds, n), -1, np.int64)
    avail = np.ones(indices.shape[0], np.bool_)
    traversed = np.zeros(indices.shape[0], np.int64)
    visited = np.zeros(n, np.int64)
    next_edge = np.full(n, -1, np.int64)
    walk = 0
    cycle = np.empty(n, np.int64)
    for r in range(n_rounds):
        # Ar: current match of each original (identity, possibly invalid, until covered);
        # inv: current preimage of each published record. L: originals not yet covered.
        match = np.arange(n)
        inv = np.arange(n)
        match_edge = np.full(n, -1, np.int64)
        pool = np.empty(n, np.int64)
        where = np.full(n, -1, np.int64)
        n_pool = 0
        for x in range(n):
            if degree[x] > r:
                pool[n_pool] = x
                where[x] = n_pool
                n_pool += 1
        while n_pool > 0:
            start = pool[rng.integers(0, n_pool)]
            walk += 1
            target = match[start]  # reaching this published record closes the walk
            x = start
            visited[x] = walk
            while True:
                e = _pick_hop(x, target, indptr, indices, inv, avail, traversed, visited, walk, rng)
                traversed[e] = walk
                next_edge[x] = e
                y = indices[e]
                if y == target:
                    break
                x = inv[y]
                visited[x] = walk
            # Last-exit pointers from the start give the walk with its deviant cycles erased.
            length = 0
            x = start
            while True:
                cycle[length] = x
                length += 1
                y = indices[next_edge[x]]
                if y == target:
                    break
                x = inv[y]
            for c in range(length):
                x = cycle[c]
                e = next_edge[x]
                match[x] = indices[e]
                inv[indices[e]] = x
                match_edge[x] = e
                p = where[x]
                if p >= 0:  # newly covered: remove x from the pool (swap with the last)
                    last = pool[n_pool - 1]
                    pool[p] = last
                    where[last] = p
                    where[x] = -1
                    n_pool -= 1
        for x in range(n):
            if degree[x] > r:
                out[r, x] = match[x]
                avail[match_edge[x]] = False
    return out


def _component_degrees(graph: GeneralizationGraph) -> tuple[np.ndarray, np.ndarray]:
    """Weak components of the unified view and the (constant) degree of each component."""
    if not graph.is_balanced():
        raise ValueError("the privacy step needs in-degree = out-degree at every vertex")
    _, labels = connected_components(graph.matrix, directed=True, connection="weak")
    degree = graph.out_degrees()
    comp_degree = np.zeros(labels.max() + 1 if len(labels) else 0, dtype=np.int64)
    comp_degree[labels] = degree
    if not np.array_equal(comp_degree[labels], degree):
        raise ValueError("the privacy step needs a constant degree within each component")
    return labels, comp_degree


def _chunks(labels: np.ndarray, min_size: int) -> list[np.ndarray]:
    """Vertices grouped by component into chunks of at least ``min_size`` vertices (whole
    components only), in component order: a split that does not depend on the worker count."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    ends = np.cumsum(sizes)
    chunks, start, since = [], 0, 0
    for end, size in zip(ends, sizes, strict=True):
        since += int(size)
        if since >= min_size:
            chunks.append(order[start:end])
            start, since = int(end), 0
    if start < len(order):
        chunks.append(order[start:])
    return chunks


def random_assignments(
    graph: GeneralizationGraph, rng: np.random.Generator, workers: int | None = None
) -> np.ndarray:
    """Extract disjoint perfect matchings by random closed walks (Xue Algorithm 1).

    Returns an (D_max, n) array: row t is the t-th assignment (original i → published
    ``out[t, i]``); in a component of degree D < D_max, rows t ≥ D are −1. Every edge of the
    graph is in exactly one assignment. Components are independent, so they are processed in
    chunks on a thread pool, each chunk with its own child generator (the result depends on the
    seed, not on the number of workers). Time O(D·n·L) for walks of average length L (worst case
    O(D·n²) per component, as in the paper); memory O(E + n·D).
    """
    labels, comp_degree = _component_degrees(graph)
    n = graph.n
    n_rounds = int(comp_degree.max()) if len(comp_degree) else 0
    out = np.full((n_rounds, n), -1, dtype=np.int64)
    if n == 0:
        return out
    chunks = _chunks(labels, _CHUNK)
    child_rngs = rng.spawn(len(chunks))
    degree = comp_degree[labels]

    def run(job: tuple[np.ndarray, np.random.Generator]) -> None:
        nodes, child = job
        sub = graph.matrix[nodes][:, nodes].tocsr()
        sub.sort_indices()
        local = _closed_walk_rounds(
            sub.indptr.astype(np.int64),
            sub.indices.astype(np.int64),
            degree[nodes],
            n_rounds,
            child,
        )
        out[:, nodes] = np.where(local >= 0, nodes[np.maximum(local, 0)], -1)

    jobs = list(zip(chunks, child_rngs, strict=True))
    if len(jobs) == 1:
        run(jobs[0])
    else:
        with ThreadPoolExecutor(max_workers=workers or default_workers()) as pool:
            list(pool.map(run, jobs))
    return out


def choose_assignment(
    graph: GeneralizationGraph, rng: np.random.Generator, workers: int | None = None
) -> np.ndarray:
    """The privacy step: extract the D disjoint assignments of each component at random and
    pick one uniformly (independently per component). Returns ``a`` with ``a[i]`` = the
    published record whose true preimage is original i."""
    labels, comp_degree = _component_degrees(graph)
    sizes = np.bincount(labels, minlength=len(comp_degree))
    big_biclique = (comp_degree == sizes) & (sizes > BICLIQUE_WALK_MAX)
    if not big_biclique.any():
        rounds = random_assignments(graph, rng, workers)
        pick = rng.integers(0, comp_degree)  # one uniform index per component
        return rounds[pick[labels], np.arange(graph.n)]
    # A complete biclique K_{m,m}: a uniformly random permutation of its m records makes every
    # edge the true pair with probability exactly 1/m, as one of m disjoint matchings drawn at
    # random would, in O(m) instead of the closed walk's O(m³).
    out = np.empty(graph.n, dtype=np.int64)
    rest = np.flatnonzero(~big_biclique[labels])
    if rest.size:
        matrix = sp.csr_array(graph.matrix[rest][:, rest])
        matrix.sort_indices()
        out[rest] = rest[choose_assignment(GeneralizationGraph(matrix), rng, workers)]
    members = np.flatnonzero(big_biclique[labels])
    by_class = members[np.argsort(labels[members], kind="stable")]
    shuffled = members[np.lexsort((rng.random(len(members)), labels[members]))]
    out[by_class] = shuffled
    return out
