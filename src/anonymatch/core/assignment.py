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

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.runner import default_workers
from anonymatch.core.view import component_labels

_CHUNK = 4096  # vertices per independent closed-walk job
# Complete bicliques of more records than this get a uniform random permutation instead of the
# closed walk (``choose_assignment``). Was 64 (small classes kept the walk and the releases made
# before); 1 since issue 17: the permutation is exact for every class size and costs O(m)
# instead of the walk's O(m³), which was a tenth of a Mondrian run on Adult at k = 5.
BICLIQUE_WALK_MAX = 1


# Uniform draws inside the kernels. ``rng.integers(0, m)`` in numba allocates a one-element array
# per call and, like any call passing the Generator, updates its reference count atomically
# (about 35 ns a draw, several times a hop). ``_below(_source(rng), m)`` computes the very same
# value from the same bit-generator draws (numba's ``integers`` is ``random_bounded_uint64_fill``:
# Lemire's rejection on 32-bit draws below 2³², on 64-bit draws above) on the bit generator
# struct, which has no reference count, in ~2 ns. Those helpers are numba internals (numba ≥
# 0.56); without them the kernels call ``rng.integers`` itself: the same stream, only slower.
try:
    from numba.np.random.generator_core import next_uint32 as _next_uint32
    from numba.np.random.random_methods import (
        bounded_lemire_uint64 as _lemire64,
    )
    from numba.np.random.random_methods import (
        buffered_bounded_lemire_uint32 as _lemire32,
    )

    _BIT_DRAWS = True
except ImportError:  # pragma: no cover - a numba that moved them
    _BIT_DRAWS = False

if _BIT_DRAWS:

    @njit(cache=True, nogil=True, inline="always")
    def _source(rng):  # pragma: no cover - compiled
        return rng.bit_generator

    @njit(cache=True, nogil=True, inline="always")
    def _below(bitgen, m):  # pragma: no cover - compiled
        """Uniform integer in [0, m), m ≥ 1: ``rng.integers(0, m)``, value and draws alike."""
        r = m - 1
        if r == 0:
            return 0  # integers(0, 1) draws nothing
        if r < 0xFFFFFFFF:
            return np.int64(_lemire32(bitgen, r))
        if r == 0xFFFFFFFF:
            return np.int64(_next_uint32(bitgen))
        return np.int64(_lemire64(bitgen, r))

else:  # pragma: no cover

    @njit(cache=True, nogil=True, inline="always")
    def _source(rng):
        return rng

    @njit(cache=True, nogil=True, inline="always")
    def _below(rng, m):
        return rng.integers(0, m)


# Rejection draws before the exact scan (``_closed_walk_rounds``): up to ``_BATCHES`` batches of
# ``_BATCH`` draws, each batch drawn whole and without branches (the first fresh slot of the
# batch wins), so the loads of a batch overlap and the accept test is one predictable branch
# per batch instead of a mispredicted one per draw. Kernel CPU on Adult's hungarian graphs
# (issue 38, branch walk; all chunks, one thread, medians of 4 interleaved runs), k = 50 / 100:
# 1.02 / 1.72 s before (single draws, 4); 4 × 4: 0.75 / 1.13 s; 2 × 4, 4 × 3, 4 × 2 or 6 × 3
# within 3 %; single draws (up to 16, same skip and rule (3)) about 10 % slower. A hop skips
# the draws and scans at once when the walk's expected number of fresh edges at the node,
# m·(unvisited)/(component size), is below ``_SKIP`` (never skipping: 0.84 / 1.17 s); rule (3)
# by rejection first (without: 0.82 / 1.20 s).
_BATCH = 4
_BATCHES = 4
_SKIP = 4
_UNTRAVERSED_TRIES = 8  # rejection draws for rule (3) before its exact scan
_STAMP_MAX = 2**31 - 1  # walk numbers stay below this (``_closed_walk_rounds``)


@njit(cache=True, nogil=True)
def _closed_walk_rounds(
    indptr, indices, needed, n_rows, rng, skip=_SKIP
):  # pragma: no cover - compiled
    """Xue Algorithm 1 on one chunk (CSR ``indptr``/``indices`` of original → published, every
    vertex of equal in- and out-degree, constant within a weak component): original x takes
    part in rounds 0 … ``needed[x]`` − 1 (``needed`` constant within a component and at most
    its degree; the degree itself for every round), round r a perfect matching of the edges
    left by rounds 0 … r − 1 over the vertices of ``needed`` > r. Returns ``out`` of shape
    (``n_rows``, n): x's match in round r is written to row min(r, ``n_rows`` − 1), so with
    ``n_rows`` = max(``needed``) row r is round r (−1 where needed[x] ≤ r), and with ``n_rows``
    = 1 the single row holds each original's last round, round needed[x] − 1, without the
    (rounds, n) array. ``skip``: the threshold of the hops that scan at once (below; 0: never
    at once, as the tests also check).

    **Stopping early** (``choose_assignment``: needed = pick + 1). Rounds 0 … t of a component
    have the same law whether or not later rounds follow, since round t + 1 only starts after
    them. Components sharing a chunk share its generator, but a walk never leaves its start's
    component, and the start is uniform over the chunk's pool (uncovered originals of
    needed > r), hence, given the component it falls in, uniform over that component's
    uncovered originals: each component's walks follow the rule's law given its own state,
    whichever other components are in the pool or how long they go on.

    Round r: while some original is uncovered, a walk starts at a uniformly random uncovered
    original and hops until it reaches the published record the start is currently matched
    to (``target``); its deviant cycles are erased and the closed walk left rotates the
    current matching. **The hop rule** from original x: a uniformly random edge among x's
    still available out-edges not traversed in this walk (Xue §4.2 (ii)), drawn from
    (1) the *fresh* ones, to published records whose current preimage this walk has not
    visited (Xue §4.2 (i)); else (2) the edge closing the walk, if x has it; else (3) any of
    them, creating a deviant cycle. Rule (2) is ours: the paper only says unvisited hops come
    first; closing as soon as no unvisited hop is left avoids needless deviant cycles (the set
    of possible cycles, and so the guarantee, is unchanged) and makes walks much shorter.

    **How a hop is drawn** (exactly the rule's distribution, more cheaply). First rejection
    draws, each a uniform slot among x's m available edges, the first fresh one accepted: up
    to ``_BATCHES`` batches of ``_BATCH`` draws, a batch drawn whole (its draws after the
    first fresh one are discarded); then, if all were rejected, an exact scan collects the
    fresh edges F and draws one uniformly, or applies rules (2)–(3) when F is empty. Each
    draw hits a given f ∈ F with probability 1/m, and the chance that the draws before it
    were all rejected does not depend on f, so P(hop = f) = Σₜ P(t draws rejected)·1/m +
    P(all rejected)·1/|F| is the same for every f ∈ F; these sum to 1 over F, so each is
    1/|F|: uniform over F, as the scan alone would draw. This holds for any number of draws
    fixed before the hop's draws, so the number may depend on the walk so far: a hop makes
    none (it scans at once) when m·u < ``skip``·c, u the records of the component the walk
    has not visited yet and c its size (few fresh edges to expect: the draws would be
    wasted). Discarded draws are independent of everything else. When F is empty every draw
    is rejected and the scan decides; rule (3) is drawn the same way, by up to
    ``_UNTRAVERSED_TRIES`` uniform slots accepted when untraversed (the first one accepted is
    uniform over the untraversed edges), then by an exact count. On Adult's hungarian graphs
    most hops accept within the draws; the scan is branch-free.

    **Layout.** Edges are addressed by *slot*: x's available edges occupy slots indptr[x] …
    indptr[x] + count[x] − 1 of ``head`` (their published ends). The slots stay fixed during a
    round (``traversed``, ``next_edge``, ``match_edge`` hold slots); at the round's end each
    matched edge is swap-removed from its node's slots, so hops see the D − r edges still
    available, not all D. ``indices`` may be int32 or int16 (``random_assignments`` passes the
    smallest that holds the chunk's vertex numbers): heads and preimages then take a half or a
    quarter of the memory, which matters once they outgrow the caches (a ring of 51,136 records
    at k = 16: int32 10.3 → 7.1 s; Adult's hungarian chunks at k = 50 / 100, int16 against
    int32: 5 / 9 % less time). The hop is
    written inline: a call passing arrays (or the Generator) costs numba atomic reference-count
    updates per argument, which were most of a hop's time. Draws are ``_below`` on the bit
    generator (the same numbers as ``rng.integers``).

    **Stamps.** ``seen[y]`` holds the number of the last walk that visited y's current
    preimage (the preimage is fixed during a walk, so this is the test ``visited[inv[y]]`` in
    one load), and ``traversed`` the last walk that used an edge. The start's own record is
    the target, stamped at the start, so "fresh" is one test, ``seen[head] ≠ walk``: a
    traversed edge's head was visited, and the closing edge is never traversed before the
    walk ends. Walks are numbered on across rounds, so nothing is cleared per round (that was
    an O(E) pass per round), except when the number would outgrow int32 (checked before each
    walk; stamps of earlier walks only have to differ from the current one).

    Time O(L·(_BATCH·_BATCHES + m·P(scan))) for a walk of L hops (each edge at most once per
    walk, so L ≤ the component's edges; L ≈ n on Adult's graphs), plus O(n) per round and
    O(E log n) once (component sizes); memory O(E + n·n_rows), allocated once."""
    n = indptr.shape[0] - 1
    n_rounds = 0
    for x in range(n):
        n_rounds = max(n_rounds, needed[x])
    out = np.full((n_rows, n), -1, np.int64)
    last_row = n_rows - 1
    head = indices.copy()
    count = np.empty(n, np.int64)
    max_degree = 0
    for x in range(n):
        count[x] = indptr[x + 1] - indptr[x]
        max_degree = max(max_degree, count[x])
    labels = component_labels(indptr, indices, n, 0)
    size = np.bincount(labels)[labels]  # each vertex's component size
    buf = np.empty(max_degree, np.int64)
    # Walk stamps, int32 whatever the index type: they restart from 0 (all cleared) when the
    # walk number would pass 2³¹ − 1.
    traversed = np.zeros(indices.shape[0], np.int32)
    seen = np.zeros(n, np.int32)
    next_edge = np.full(n, -1, np.int64)
    cycle = np.empty(n, np.int64)
    match = np.empty(n, np.int64)
    inv = np.empty(n, indices.dtype)
    match_edge = np.empty(n, np.int64)
    pool = np.empty(n, np.int64)
    where = np.empty(n, np.int64)
    bits = _source(rng)
    walk = 0
    for r in range(n_rounds):
        # Ar: current match of each original (identity, possibly invalid, until covered);
        # inv: current preimage of each published record. L: originals not yet covered.
        n_pool = 0
        for x in range(n):
            match[x] = x
            inv[x] = x
            match_edge[x] = -1
            where[x] = -1
            if needed[x] > r:
                pool[n_pool] = x
                where[x] = n_pool
                n_pool += 1
        while n_pool > 0:
            start = pool[_below(bits, n_pool)]
            if walk == _STAMP_MAX:
                traversed[:] = 0
                seen[:] = 0
                walk = 0
            walk += 1
            target = match[start]  # reaching this published record closes the walk
            x = start
            seen[target] = walk
            c_size = size[start]
            unvisited = c_size - 1
            while True:
                # The hop (rule and draws: see the docstring).
                base = indptr[x]
                m = count[x]
                e = -1
                fresh_hop = True
                if m * unvisited >= skip * c_size:
                    for _ in range(_BATCHES):
                        for _i in range(_BATCH):
                            p = base + _below(bits, m)
                            e = p if (e < 0) & (seen[head[p]] != walk) else e
                        if e >= 0:
                            break
                if e < 0:
                    fresh, closing = 0, -1
                    for p in range(base, base + m):
                        y = head[p]
                        buf[fresh] = p
                        fresh += seen[y] != walk
                        if y == target:
                            closing = p
                    if fresh > 0:
                        e = buf[_below(bits, fresh)]
                    else:
                        fresh_hop = False
                        if closing >= 0:
                            e = closing
                        else:
                            for _ in range(_UNTRAVERSED_TRIES):
                                p = base + _below(bits, m)
                                if traversed[p] != walk:
                                    e = p
                                    break
                            if e < 0:
                                open_ = 0
                                for p in range(base, base + m):
                                    open_ += traversed[p] != walk
                                if open_ > 0:
                                    c = _below(bits, open_)
                                    for p in range(base, base + m):
                                        if traversed[p] != walk:
                                            if c == 0:
                                                e = p
                                                break
                                            c -= 1
                if e < 0:
                    raise ValueError("closed walk stuck: the graph is not balanced")
                traversed[e] = walk
                next_edge[x] = e
                y = head[e]
                if y == target:
                    break
                unvisited -= fresh_hop
                seen[y] = walk
                x = inv[y]
            # Last-exit pointers from the start give the walk with its deviant cycles erased.
            length = 0
            x = start
            while True:
                cycle[length] = x
                length += 1
                y = head[next_edge[x]]
                if y == target:
                    break
                x = inv[y]
            for c in range(length):
                x = cycle[c]
                e = next_edge[x]
                match[x] = head[e]
                inv[head[e]] = x
                match_edge[x] = e
                p = where[x]
                if p >= 0:  # newly covered: remove x from the pool (swap with the last)
                    last = pool[n_pool - 1]
                    pool[p] = last
                    where[last] = p
                    where[x] = -1
                    n_pool -= 1
        row = min(r, last_row)
        for x in range(n):
            if needed[x] > r:
                out[row, x] = match[x]
                # swap-remove the matched edge: the last available slot takes its place (its
                # ``traversed`` stamp is from an earlier walk, so it need not move)
                last = indptr[x] + count[x] - 1
                head[match_edge[x]] = head[last]
                count[x] -= 1
    return out


def _component_degrees(graph: GeneralizationGraph) -> tuple[np.ndarray, np.ndarray]:
    """Weak components of the unified view and the (constant) degree of each component."""
    if not graph.is_balanced():
        raise ValueError("the privacy step needs in-degree = out-degree at every vertex")
    matrix = graph.matrix
    labels = component_labels(matrix.indptr, matrix.indices, graph.n, 0)
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
    return _walk_rounds(graph, labels, comp_degree, rng, workers, all_rounds=True)


def _walk_rounds(
    graph: GeneralizationGraph,
    labels: np.ndarray,
    needed: np.ndarray,
    rng: np.random.Generator,
    workers: int | None,
    *,
    all_rounds: bool,
) -> np.ndarray:
    """The closed-walk rounds 0 … ``needed[c]`` − 1 of each component c (weak components
    ``labels``; ``needed[c]`` ≤ its degree, the degree itself for a whole decomposition).

    With ``all_rounds`` returns the (max ``needed``, n) array of ``random_assignments``
    (−1 past a component's rounds); else a (1, n) array holding each component's last round,
    round ``needed[c]`` − 1, and the (rounds, n) array is never made. Components go in chunks
    of whole components (``_chunks``) to a thread pool, each chunk with its own child of
    ``rng``. Time O(Σ_c needed[c]·n_c·L) for walks of average length L; memory O(E + n·rows).
    """
    n = graph.n
    n_rounds = int(needed.max()) if len(needed) else 0
    n_rows = n_rounds if all_rounds else 1
    out = np.full((n_rows, n), -1, dtype=np.int64)
    if n == 0:
        return out
    chunks = _chunks(labels, _CHUNK)
    child_rngs = rng.spawn(len(chunks))
    per_vertex = needed[labels].astype(np.int64)

    def run(job: tuple[np.ndarray, np.random.Generator]) -> None:
        nodes, child = job
        sub = graph.matrix[nodes][:, nodes].tocsr()
        sub.sort_indices()
        index_type = (
            np.int16 if len(nodes) < 2**15 else np.int32 if len(nodes) < 2**31 else np.int64
        )
        local = _closed_walk_rounds(
            sub.indptr.astype(np.int64),
            sub.indices.astype(index_type),
            per_vertex[nodes],
            n_rows,
            child,
        )
        out[:, nodes] = np.where(local >= 0, nodes[np.maximum(local, 0)], -1)

    jobs = list(zip(chunks, child_rngs, strict=True))
    # Longest first, so the pool's threads finish together: a chunk's walks cost about
    # Σ rounds × (component size)² (a round's walks are about as long as the component is
    # large). The order changes nothing in the output (each chunk has its own generator).
    sizes = np.bincount(labels)[labels]
    cost = [float((per_vertex[nodes] * sizes[nodes]).sum()) for nodes in chunks]
    jobs = [jobs[i] for i in np.argsort(cost, kind="stable")[::-1]]
    if len(jobs) == 1:
        run(jobs[0])
    else:
        with ThreadPoolExecutor(max_workers=workers or default_workers()) as pool:
            list(pool.map(run, jobs))
    return out


def choose_assignment(
    graph: GeneralizationGraph, rng: np.random.Generator, workers: int | None = None
) -> np.ndarray:
    """The privacy step: round ``pick`` of a random closed-walk decomposition of each
    component, ``pick`` uniform over the component's D rounds (independently per component).
    Returns ``a`` with ``a[i]`` = the published record whose true preimage is original i.

    The picks are drawn first (from ``rng``; the walks use its spawned children), and each
    component's walk stops after round ``pick``: rounds 0 … pick have the same law as in the
    full decomposition (see ``_closed_walk_rounds``), and ``pick`` is uniform and independent
    of the walk, so the chosen matching has exactly the law of "extract all D, choose one
    uniformly" — every edge is the true pair with probability 1/D, as the D rounds partition
    the edges — with on average (D + 1)/2 rounds instead of D and one row of n matches instead
    of D. Time O(Σ_c (pick_c + 1)·n_c·L) for walks of average length L; memory O(E + n).
    """
    labels, comp_degree = _component_degrees(graph)
    sizes = np.bincount(labels, minlength=len(comp_degree))
    big_biclique = (comp_degree == sizes) & (sizes > BICLIQUE_WALK_MAX)
    if not big_biclique.any():
        pick = rng.integers(0, comp_degree)  # one uniform index per component
        return _walk_rounds(graph, labels, pick + 1, rng, workers, all_rounds=False)[0]
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
