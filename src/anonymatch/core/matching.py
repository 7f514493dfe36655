"""k-factors of bipartite compatibility graphs by maximum flow, on groups of identical nodes.

A release is k-anonymous in the nonreciprocal sense iff its compatibility graph (originals ×
published rows) has a k-factor, k disjoint perfect matchings (Doka et al., ASIA CCS 2015, §2.2;
Wong et al.). The networks here are contracted: identical originals (and identical published
rows) are one node with a multiplicity, which changes no flow value. The attacker's view
(``core.view.AttackerView``) calls these; the candidates (edges in some perfect matching) live
there. Dinic's algorithm (scipy) on O(groups + pairs between groups) arcs.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.runner import default_workers


def maximum_flow(net: sp.csr_array, src: int, sink: int) -> Any:
    """scipy's ``maximum_flow`` by Dinic's algorithm, imported on first use: a release whose
    k-factor is shown without a flow (``AttackerView.is_k_factor``) never loads
    ``scipy.sparse.csgraph`` (35 ms of a run's start). O(Dinic)."""
    from scipy.sparse.csgraph import maximum_flow as dinic

    return dinic(net, src, sink, method="dinic")


def has_k_factor(
    c: sp.csr_array, counts: np.ndarray, k: int, mult: np.ndarray | None = None
) -> int:
    """Maximum flow of the contracted k-factor network; a k-factor exists iff it equals k·n.

    Rows of ``c`` are groups of identical originals (``counts[u]`` of them), columns groups of
    identical published rows (``mult[g]`` of them; default one each), ``c[u, g] = 1`` iff the
    members of u are compatible with the members of g — then, compatibility depending only on
    the QI values and the cells, every member of u with every member of g (a complete bipartite
    block). Network: source → u (capacity k·counts[u]) → g (capacity min(counts[u]·mult[g],
    k·counts[u], k·mult[g])) → sink (capacity k·mult[g]).

    The value equals the maximum flow of the uncontracted network (source → original (k) →
    compatible published row (1) → sink (k)), for every input, so a k-factor (k disjoint
    perfect matchings) of the expanded graph exists iff it equals k·n: some minimum cut of the
    uncontracted network never splits a group (members of a group add identical terms to a
    cut's capacity and do not interact, so moving them all to the cheaper side first for the
    originals, then for the published rows, never raises it), and such a cut has exactly the
    capacity of the corresponding contracted cut (a block K_{a,b} contributes a·b unit edges);
    the min(…) caps change no flow value, since a flow through u → g never exceeds what enters
    u or leaves g. Argument in docs/guarantees/freeform.md. Time: Dinic's algorithm on
    O(U + G + pairs) edges (pairs between groups).
    """
    n_u, n_g = c.shape
    counts = np.asarray(counts, np.int64)
    mult = np.ones(n_g, np.int64) if mult is None else np.asarray(mult, np.int64)
    coo = c.tocoo()
    a, b = counts[coo.row], mult[coo.col]
    block = np.minimum(np.minimum(a * b, k * a), k * b)
    if k * max(int(counts.sum()), int(mult.sum()), 1) >= 2**31:
        raise OverflowError("k·n exceeds the int32 capacities of scipy's maximum_flow")
    src, sink = 0, 1 + n_u + n_g
    rows = np.concatenate([np.zeros(n_u, np.int64), 1 + coo.row, 1 + n_u + np.arange(n_g)])
    cols = np.concatenate([1 + np.arange(n_u), 1 + n_u + coo.col, np.full(n_g, sink)])
    caps = np.concatenate([k * counts, block, k * mult]).astype(np.int32)
    size = sink + 1
    net = sp.csr_array((caps, (rows, cols)), shape=(size, size))
    return int(maximum_flow(net, src, sink).flow_value)


def k_factor_in_blocks(
    c: sp.csr_array,
    inverse: np.ndarray,
    group: np.ndarray,
    k: int,
    row_block: np.ndarray,
    col_block: np.ndarray,
) -> bool:
    """Whether the expanded graph of ``c`` has a k-factor made of k-factors of given blocks.

    ``c`` is the contracted U × G compatibility matrix of ``has_k_factor``; original i is row
    ``inverse[i]``, published row j column ``group[j]``. Block b holds the originals with
    ``row_block[i] == b`` and the published rows with ``col_block[j] == b``. Returns True iff
    every block has as many originals as published rows and the compatibility graph between
    them (the edges of the expanded graph inside the block) has a k-factor. True is a proof that
    the whole graph has one: the blocks are disjoint on both sides, so the union of their
    k-factors is a k-regular spanning subgraph (docs/guarantees/scale.md, the argument of the
    per-partition check). False proves nothing (a k-factor may cross blocks): the blocks are a
    hint — e.g. the components of the anonymizer's own graph — that can make the check cheaper,
    never make a release pass.

    Solved by maximum flows over the disjoint union of the blocks' contracted networks
    (``has_k_factor``'s, with originals grouped by (block, u) and published rows by (block, g)),
    one per batch of consecutive blocks of about ``BLOCK_BATCH_ARCS`` arcs, the batches on a
    thread pool: the union saturates iff every batch does. Time: Dinic's algorithm on
    O(n + Σ_(b,u) deg_c(u)) edges in all, plus O(n log n) for the grouping; memory O(n + pairs
    of c) plus one batch's network per worker.
    """
    n, n_pub = len(inverse), len(group)
    row_block = np.asarray(row_block, np.int64)
    col_block = np.asarray(col_block, np.int64)
    if n != n_pub or len(row_block) != n or len(col_block) != n_pub:
        return False
    if n == 0:
        return True
    n_blocks = int(max(row_block.max(), col_block.max())) + 1
    if np.any(row_block < 0) or np.any(col_block < 0):
        return False
    if not np.array_equal(
        np.bincount(row_block, minlength=n_blocks), np.bincount(col_block, minlength=n_blocks)
    ):
        return False
    if k * n >= 2**31:
        raise OverflowError("k·n exceeds the int32 capacities of scipy's maximum_flow")
    n_u, n_g = c.shape
    c = sp.csr_array(c)
    # nodes: distinct (block, original group) and (block, published group) pairs
    row_keys, counts = np.unique(row_block * n_u + inverse, return_counts=True)
    col_keys, mult = np.unique(col_block * n_g + group, return_counts=True)
    u_block, u = row_keys // n_u, row_keys % n_u
    inner = _block_edge_counts(c.indptr, c.indices, u, u_block, col_keys, n_g)
    # The blocks' networks are disjoint, so the flow of their union saturates iff each
    # block's does: the flow runs on batches of consecutive blocks of about BLOCK_BATCH_ARCS
    # arcs, one after the other (issue 38: at k = 100 on Adult one network of every block,
    # 2.6 M arcs, took scipy's maximum_flow about 100 MiB, the verifier's peak memory).
    # The same verdict as one flow; Dinic's phases per batch never cost more than on the
    # union (each phase of the union scans every block).
    row_start = np.searchsorted(u_block, np.arange(n_blocks + 1))
    col_start = np.searchsorted(col_keys // n_g, np.arange(n_blocks + 1))
    arcs = np.r_[0, np.cumsum(inner, dtype=np.int64)][row_start] + row_start + col_start
    batch = (arcs[1:] - 1) // BLOCK_BATCH_ARCS  # the batch of each block
    cuts = np.r_[0, np.flatnonzero(np.diff(batch)) + 1, n_blocks]

    def saturated(b0: int, b1: int) -> bool:
        r0, r1, c0, c1 = row_start[b0], row_start[b1], col_start[b0], col_start[b1]
        if r0 == r1:
            return True
        flow = _blocks_flow(c, u[r0:r1], u_block[r0:r1], col_keys[c0:c1], counts[r0:r1],
                            mult[c0:c1], inner[r0:r1], k, n_g)  # fmt: skip
        return flow == k * int(counts[r0:r1].sum())

    # the batches' flows on a thread pool (scipy's maximum_flow runs without the GIL), at
    # most one batch's network per worker alive at a time
    workers = min(default_workers(), len(cuts) - 1)
    if workers <= 1:
        return all(saturated(b0, b1) for b0, b1 in zip(cuts[:-1], cuts[1:], strict=True))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return all(pool.map(saturated, cuts[:-1].tolist(), cuts[1:].tolist()))


BLOCK_BATCH_ARCS = 1 << 19
"""About how many arcs each maximum flow of ``k_factor_in_blocks`` takes (whole blocks)."""


def _blocks_flow(
    c: sp.csr_array,
    u: np.ndarray,
    u_block: np.ndarray,
    col_keys: np.ndarray,
    counts: np.ndarray,
    mult: np.ndarray,
    inner: np.ndarray,
    k: int,
    n_g: int,
) -> int:
    """The maximum flow of the contracted k-factor network of some whole blocks: ``u``,
    ``u_block``, ``counts`` their (block, u) nodes (in increasing key order), ``col_keys``,
    ``mult`` their (block, g) nodes, ``inner`` each (block, u) node's arcs. O(nodes + arcs)
    memory, Dinic's time."""
    # The network in CSR form directly (issue 38: at k = 100 on Adult the block edges number
    # millions, and their int64 COO lists, masks and the COO → CSR copy were the run's peak
    # memory): row 0 the source, rows 1 … the (block, u) nodes with their edges to the (block,
    # g) nodes present (in increasing g: sorted, as the COO conversion laid them), then the
    # (block, g) nodes to the sink. The same matrix as the COO lists gave, so the same flow.
    n_rows, n_cols = len(u), len(col_keys)
    src, sink = 0, 1 + n_rows + n_cols
    indptr = np.empty(sink + 2, np.int32)
    indptr[0] = 0
    indptr[1] = n_rows
    np.cumsum(inner, out=indptr[2 : 2 + n_rows])
    indptr[2 : 2 + n_rows] += n_rows
    indptr[2 + n_rows : sink + 1] = indptr[1 + n_rows] + 1 + np.arange(n_cols, dtype=np.int32)
    indptr[sink + 1] = indptr[sink]
    size = int(indptr[-1])
    indices = np.empty(size, np.int32)
    caps = np.empty(size, np.int32)
    indices[:n_rows] = 1 + np.arange(n_rows, dtype=np.int32)
    caps[:n_rows] = k * counts
    _block_edges(c.indptr, c.indices, u, u_block, col_keys, n_g, counts, mult, k,
                 indptr, indices, caps)  # fmt: skip
    indices[indptr[1 + n_rows] :] = sink
    caps[indptr[1 + n_rows] :] = k * mult
    net = sp.csr_array((caps, indices, indptr), shape=(sink + 1, sink + 1))
    return int(maximum_flow(net, src, sink).flow_value)


def k_factor_subset(
    c: sp.csr_array, counts: np.ndarray, k: int, size: int
) -> tuple[np.ndarray | None, int]:
    """Look for ``size`` originals with a k-factor to all the published rows: a release from
    which some people were suppressed (dropped) shows fewer rows than the original has people.

    Rows of ``c`` are unique original vectors with multiplicities ``counts``; the answer
    ``chosen[u]`` (how many originals of vector u are published, Σ = ``size``) comes with a
    proof: an integral flow in which every published row takes k units and every chosen
    original exactly k, on distinct rows — a k-factor of the chosen people × published rows.

    The search keeps m_u candidate originals per vector (m = counts, minus the vectors with
    fewer than k compatible rows, which no chosen person can have) and repeats: a maximum flow
    source → u (capacity k·m_u) → j (m_u) → sink (k); if it falls short of k·size, None; every
    vector keeps ⌈flow_u / k⌉ candidates (an original the flow does not use at all is dropped);
    if every flow_u is then a multiple of k and the flow ran with exactly those m_u = flow_u / k
    (so that no edge carries more than the vector's chosen originals can take), found; if the
    m_u shrank, the flow is recomputed with them; else the vector whose last original carries
    the least flow loses it, and the flow is recomputed. Choosing exactly which people to leave
    out is a general-factor problem with gaps (hard in general), so this is a heuristic: a found
    set is a proof, a None is not a proof that none exists. At most Σ counts − size + 1 rounds
    of Dinic's algorithm on O(U + n + pairs) edges; in practice a few, since suppressed outliers
    fit fewer than k published rows or none of the flow.

    Returns (chosen or None, the last flow value).
    """
    n_u, n_pub = c.shape
    degree = np.diff(sp.csr_array(c).indptr)
    m = np.where(degree >= k, counts, 0).astype(np.int64)
    coo = c.tocoo()
    src, sink = 0, 1 + n_u + n_pub
    rows = np.concatenate([np.zeros(n_u, np.int64), 1 + coo.row, 1 + n_u + np.arange(n_pub)])
    cols = np.concatenate([1 + np.arange(n_u), 1 + n_u + coo.col, np.full(n_pub, sink)])
    value = 0
    while True:
        caps = np.concatenate([k * m, m[coo.row], np.full(n_pub, k)]).astype(np.int32)
        net = sp.csr_array((caps, (rows, cols)), shape=(sink + 1, sink + 1))
        result = maximum_flow(net, src, sink)
        value = int(result.flow_value)
        if value < k * size:
            return None, value
        first = sp.csr_array(result.flow)[[0], :].toarray().ravel()
        f = first[1 : 1 + n_u].astype(np.int64)
        kept = np.minimum(m, -(-f // k))  # originals the flow leaves unused are not published
        partial = f % k
        if not partial.any() and np.array_equal(kept, m):
            # the flow ran with edge capacities m_u = f_u / k: a proof (``has_k_factor``)
            return f // k, value
        if partial.any():
            u = int(np.flatnonzero(partial)[np.argmin(partial[partial > 0])])
            kept[u] -= 1
        # else: an edge may carry more than f_u / k units (the capacity was the larger m_u),
        # which f_u / k originals cannot take on distinct rows: recompute with m_u = f_u / k
        m = kept


@njit(cache=True, nogil=True)
def _block_edge_counts(indptr, indices, u, u_block, col_keys, n_g):  # pragma: no cover
    """Per (block, u) node (``u_block`` its block, the nodes in increasing block order): how
    many of u's compatible groups g have rows in its block (``col_keys`` the sorted
    block · G + g of the published nodes). The published nodes of the current block are
    stamped by group (``stamp[g]`` their position + 1), so each pair is one lookup, not a
    binary search. O(n + pairs of the nodes)."""
    out = np.zeros(len(u), np.int32)
    stamp = np.zeros(n_g, np.int64)
    lo, hi, block = 0, 0, -1
    for r in range(len(u)):
        if u_block[r] != block:
            lo, hi, block = _stamp_block(stamp, col_keys, n_g, lo, hi, u_block[r])
        for p in range(indptr[u[r]], indptr[u[r] + 1]):
            if stamp[indices[p]] > 0:
                out[r] += 1
    return out


@njit(cache=True, nogil=True)
def _stamp_block(stamp, col_keys, n_g, lo, hi, block):  # pragma: no cover - compiled
    """Clear the stamps of the published nodes ``col_keys[lo:hi]`` (the previous block's) and
    stamp those of ``block`` (found from ``hi`` on: the blocks come in increasing order);
    returns their range and the block."""
    for at in range(lo, hi):
        stamp[col_keys[at] % n_g] = 0
    lo = hi
    while lo < len(col_keys) and col_keys[lo] // n_g < block:
        lo += 1
    hi = lo
    while hi < len(col_keys) and col_keys[hi] // n_g == block:
        stamp[col_keys[hi] % n_g] = hi + 1
        hi += 1
    return lo, hi, block


@njit(cache=True, nogil=True)
def _block_edges(
    indptr, indices, u, u_block, col_keys, n_g, counts, mult, k, net_ptr, net_idx, caps
):  # pragma: no cover - compiled
    """Fill the (block, u) → (block, g) arcs of ``k_factor_in_blocks``'s network in place
    (node 1 + r for row key r, 1 + n_rows + position for a published node), capacity
    min(a·b, k·a, k·b) for a originals and b published rows; the published nodes found by
    stamp as in ``_block_edge_counts``."""
    n_rows = len(u)
    stamp = np.zeros(n_g, np.int64)
    lo, hi, block = 0, 0, -1
    for r in range(n_rows):
        if u_block[r] != block:
            lo, hi, block = _stamp_block(stamp, col_keys, n_g, lo, hi, u_block[r])
        at_out = net_ptr[1 + r]
        a = counts[r]
        for p in range(indptr[u[r]], indptr[u[r] + 1]):
            at = stamp[indices[p]] - 1
            if at >= 0:
                b = mult[at]
                net_idx[at_out] = 1 + n_rows + at
                caps[at_out] = min(min(a * b, k * a), k * b)
                at_out += 1
