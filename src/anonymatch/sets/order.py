"""The Gray-TSP order of set-valued records (Xue et al., KDD 2012, §4.1).

1. Sort the bitmaps by their rank in the reflected binary Gray code, item 0 being the most
   significant bit. The rank is never built (it has b bits): two records are compared at the
   first item where they differ; if the number of items they share before it is even, the
   record *without* that item comes first, if odd, the record *with* it (the binary rank is the
   prefix-XOR of the Gray bits).
2. Cut the sorted sequence into segments of m…M records by the dynamic program of eq. (1),
   minimizing the sum of Hamming distances across the breakpoints.
3. Improve each segment as a TSP path with fixed endpoints on Hamming distances. The paper uses
   a genetic algorithm (Sengoku & Yoshihara); we use 2-opt + Or-opt local search in numba (the
   issue allows any sound heuristic) — exact by enumeration for segments of ≤ 9 records.

Hamming lengths are reported as in Figure 4: the cyclic total over the ring (last → first
included), before (input order), after Gray and after Gray+TSP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.errors import InputError


@njit(cache=True, nogil=True)
def _gray_less(a, b, indptr, indices):  # pragma: no cover - compiled
    """True iff record a precedes record b in Gray-code rank order (ties: by id)."""
    pa, ea = indptr[a], indptr[a + 1]
    pb, eb = indptr[b], indptr[b + 1]
    q = 0
    while pa + q < ea and pb + q < eb and indices[pa + q] == indices[pb + q]:
        q += 1
    a_end = pa + q >= ea
    b_end = pb + q >= eb
    if a_end and b_end:
        return a < b
    # the first differing item j and which record holds it
    if a_end:
        a_has = False
    elif b_end:
        a_has = True
    else:
        a_has = indices[pa + q] < indices[pb + q]
    # q shared items precede j: even -> the record without j first; odd -> the one with j
    if q % 2 == 0:
        return not a_has
    return a_has


@njit(cache=True, nogil=True)
def _gray_argsort(indptr, indices):  # pragma: no cover - compiled
    """Stable bottom-up merge sort of the records by Gray rank. O(n log n · L)."""
    n = indptr.shape[0] - 1
    src = np.arange(n)
    dst = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _gray_less(src[j], src[i], indptr, indices):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        width *= 2
    return src


def gray_order(matrix: sp.csr_array) -> np.ndarray:
    """Permutation sorting the rows of a CSR bitmap matrix by Gray-code rank (column 0 most
    significant), ties in row order. O(n log n · L) for rows of L items; no 2^b numbers."""
    m = sp.csr_array(matrix)
    m.sort_indices()
    return _gray_argsort(m.indptr.astype(np.int64), m.indices.astype(np.int64))


def gray_rank_bruteforce(bits: np.ndarray) -> np.ndarray:
    """Gray ranks of dense 0/1 rows of ≤ 62 bits (column 0 most significant): the binary
    number whose Gray code is the row. For tests."""
    ranks = np.zeros(bits.shape[0], np.int64)
    prefix = np.zeros(bits.shape[0], np.int64)
    for c in range(bits.shape[1]):
        prefix ^= bits[:, c].astype(np.int64)
        ranks = (ranks << 1) | prefix
    return ranks


@njit(cache=True, nogil=True)
def _hamming(a, b, indptr, indices):  # pragma: no cover - compiled
    pa, ea, pb, eb = indptr[a], indptr[a + 1], indptr[b], indptr[b + 1]
    common = 0
    while pa < ea and pb < eb:
        x, y = indices[pa], indices[pb]
        if x == y:
            common += 1
            pa += 1
            pb += 1
        elif x < y:
            pa += 1
        else:
            pb += 1
    return (indptr[a + 1] - indptr[a]) + (indptr[b + 1] - indptr[b]) - 2 * common


@njit(cache=True, nogil=True)
def _consecutive(order, indptr, indices):  # pragma: no cover - compiled
    """Hamming distance between order[p] and order[p+1] (cyclically) for every p."""
    n = order.shape[0]
    out = np.zeros(n, np.int64)
    for p in range(n):
        out[p] = _hamming(order[p], order[(p + 1) % n], indptr, indices)
    return out


def consecutive_distances(matrix: sp.csr_array, order: np.ndarray) -> np.ndarray:
    """H(r[order[p]], r[order[p+1 mod n]]) for p = 0..n−1. O(n · L)."""
    m = sp.csr_array(matrix)
    m.sort_indices()
    return _consecutive(
        np.asarray(order, np.int64), m.indptr.astype(np.int64), m.indices.astype(np.int64)
    )


def ring_length(matrix: sp.csr_array, order: np.ndarray) -> int:
    """Total Hamming length of the cyclic order (Figure 4's 'Overall Hamming')."""
    if len(order) < 2:
        return 0
    return int(consecutive_distances(matrix, order).sum())


@njit(cache=True)
def _segment_dp(gaps, lo, hi):  # pragma: no cover - compiled
    """Eq. (1): C(i) = min_{j ∈ [i−M, i−m]} C(j) + H(r_j, r_{j+1}), C(0) = 0, where
    gaps[j−1] = H(r_j, r_{j+1}) (1-based records) and no cost for the first segment.
    Returns the segment ends (exclusive, 0-based), or an empty array if infeasible."""
    n = gaps.shape[0] + 1
    inf = np.iinfo(np.int64).max // 4
    cost = np.full(n + 1, inf, np.int64)
    back = np.full(n + 1, -1, np.int64)
    cost[0] = 0
    for i in range(1, n + 1):
        for j in range(max(0, i - hi), i - lo + 1):
            if cost[j] >= inf:
                continue
            c = cost[j] + (gaps[j - 1] if j > 0 else 0)
            if c < cost[i]:
                cost[i] = c
                back[i] = j
    if cost[n] >= inf:
        return np.empty(0, np.int64)
    ends = []
    i = n
    while i > 0:
        ends.append(i)
        i = back[i]
    out = np.empty(len(ends), np.int64)
    for t in range(len(ends)):
        out[t] = ends[len(ends) - 1 - t]
    return out


def segment_bounds(gaps: np.ndarray, m: int, big_m: int) -> np.ndarray:
    """Segment boundaries [0, e1, …, n] for n = len(gaps)+1 records by eq. (1), segment sizes in
    [m, M]. If no such partition exists (e.g. n < m, or n = 400 with [300, 350]) the lower
    bound is relaxed to ⌊n / ⌈n/M⌉⌋, which always admits one (departure: the paper does not
    say). O(n·(M−m))."""
    n = len(gaps) + 1
    if m < 2 or big_m < m:
        raise InputError(f"segment sizes need 2 ≤ m ≤ M, got [{m}, {big_m}]")
    if n <= big_m:
        return np.array([0, n], np.int64)
    ends = _segment_dp(np.asarray(gaps, np.int64), m, big_m)
    if len(ends) == 0:
        parts = -(-n // big_m)
        ends = _segment_dp(np.asarray(gaps, np.int64), n // parts, big_m)
    return np.concatenate([[0], ends]).astype(np.int64)


@njit(cache=True, nogil=True)
def _path_cost(path, d):  # pragma: no cover - compiled
    c = 0
    for p in range(path.shape[0] - 1):
        c += d[path[p], path[p + 1]]
    return c


@njit(cache=True, nogil=True)
def _exact_path(d):  # pragma: no cover - compiled
    """Shortest Hamiltonian path 0 → s−1 by enumerating permutations of the inner nodes
    (Heap's algorithm), for s ≤ 9."""
    s = d.shape[0]
    best = np.arange(s)
    if s <= 3:
        return best
    inner = np.arange(1, s - 1)
    m = inner.shape[0]
    path = np.empty(s, np.int64)
    path[0], path[s - 1] = 0, s - 1
    path[1 : s - 1] = inner
    best_cost = _path_cost(path, d)
    best = path.copy()
    c = np.zeros(m, np.int64)
    i = 0
    while i < m:
        if c[i] < i:
            if i % 2 == 0:
                inner[0], inner[i] = inner[i], inner[0]
            else:
                inner[c[i]], inner[i] = inner[i], inner[c[i]]
            path[1 : s - 1] = inner
            cost = _path_cost(path, d)
            if cost < best_cost:
                best_cost = cost
                best = path.copy()
            c[i] += 1
            i = 0
        else:
            c[i] = 0
            i += 1
    return best


@njit(cache=True, nogil=True)
def _local_search(path, d, max_passes):  # pragma: no cover - compiled
    """2-opt and Or-opt (chains of 1–3, both orientations) on an open path with fixed
    endpoints, first improvement, until a local optimum or ``max_passes``. O(s²) per pass."""
    s = path.shape[0]
    for _ in range(max_passes):
        improved = False
        # 2-opt: reverse path[i..j], 1 ≤ i < j ≤ s−2
        for i in range(1, s - 2):
            a, b = path[i - 1], path[i]
            for j in range(i + 1, s - 1):
                c, e = path[j], path[j + 1]
                delta = d[a, c] + d[b, e] - d[a, b] - d[c, e]
                if delta < 0:
                    lo, hi = i, j
                    while lo < hi:
                        path[lo], path[hi] = path[hi], path[lo]
                        lo += 1
                        hi -= 1
                    improved = True
                    b = path[i]
        # Or-opt: move chain path[i..i+L−1] between path[j] and path[j+1]
        for seg in range(1, 4):
            i = 1
            while i + seg - 1 <= s - 2:
                first, last = path[i], path[i + seg - 1]
                prev, nxt = path[i - 1], path[i + seg]
                removed = d[prev, first] + d[last, nxt] - d[prev, nxt]
                best_delta, best_j, best_rev = 0, -1, False
                for j in range(0, s - 1):
                    if j >= i - 1 and j <= i + seg - 1:
                        continue
                    x, y = path[j], path[j + 1]
                    add = d[x, first] + d[last, y] - d[x, y]
                    if add - removed < best_delta:
                        best_delta, best_j, best_rev = add - removed, j, False
                    add = d[x, last] + d[first, y] - d[x, y]
                    if add - removed < best_delta:
                        best_delta, best_j, best_rev = add - removed, j, True
                if best_j >= 0:
                    chain = path[i : i + seg].copy()
                    if best_rev:
                        chain = chain[::-1].copy()
                    rest = np.empty(s - seg, np.int64)
                    r = 0
                    for p in range(s):
                        if p < i or p >= i + seg:
                            rest[r] = path[p]
                            r += 1
                    # position of x (= path[best_j]) in rest
                    pos = best_j if best_j < i else best_j - seg
                    out = 0
                    for p in range(pos + 1):
                        path[out] = rest[p]
                        out += 1
                    for p in range(seg):
                        path[out] = chain[p]
                        out += 1
                    for p in range(pos + 1, s - seg):
                        path[out] = rest[p]
                        out += 1
                    improved = True
                i += 1
        if not improved:
            break
    return path


@njit(cache=True, nogil=True)
def _tsp_segments(order, bounds, indptr, indices, b, max_passes):  # pragma: no cover
    """Reorder the inside of every segment of ``order`` (endpoints fixed)."""
    out = order.copy()
    stamp = np.full(b, -1, np.int64)
    for g in range(bounds.shape[0] - 1):
        lo, hi = bounds[g], bounds[g + 1]
        s = hi - lo
        if s <= 3:
            continue
        recs = order[lo:hi]
        d = np.zeros((s, s), np.int64)
        for x in range(s):
            r = recs[x]
            for p in range(indptr[r], indptr[r + 1]):
                stamp[indices[p]] = x
            len_x = indptr[r + 1] - indptr[r]
            for y in range(x + 1, s):
                q = recs[y]
                common = 0
                for p in range(indptr[q], indptr[q + 1]):
                    if stamp[indices[p]] == x:
                        common += 1
                h = len_x + (indptr[q + 1] - indptr[q]) - 2 * common
                d[x, y] = h
                d[y, x] = h
        path = _exact_path(d) if s <= 9 else _local_search(np.arange(s), d, max_passes)
        for p in range(s):
            out[lo + p] = recs[path[p]]
    return out


@dataclass(frozen=True)
class OrderReport:
    """Hamming lengths of the cyclic order (Figure 4) and the segments used."""

    hamming_input: int
    hamming_gray: int
    hamming_gray_tsp: int
    segments: int
    segment_min: int
    segment_max: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def gray_tsp_order(
    matrix: sp.csr_array,
    segment: tuple[int, int] = (300, 350),
    tsp: bool = True,
    max_passes: int = 50,
) -> tuple[np.ndarray, OrderReport]:
    """The Gray-TSP order φ(R) (Xue §4.1): Gray sort, eq. (1) segmentation, TSP per segment
    with fixed endpoints. ``tsp=False`` gives the Gray-only ablation. Returns (order, report).

    Time O(n log n · L) for the sort, O(n·(M−m)) for the DP and O(n·M·L + n·M·passes) for the
    TSP; memory O(n + M²)."""
    m = sp.csr_array(matrix)
    m.sort_indices()
    indptr = m.indptr.astype(np.int64)
    indices = m.indices.astype(np.int64)
    n = m.shape[0]
    ident = np.arange(n, dtype=np.int64)
    before = int(_consecutive(ident, indptr, indices).sum()) if n > 1 else 0
    order = _gray_argsort(indptr, indices)
    gaps = _consecutive(order, indptr, indices) if n > 1 else np.zeros(1, np.int64)
    gray_len = int(gaps.sum()) if n > 1 else 0
    bounds = segment_bounds(gaps[: max(n - 1, 0)], segment[0], segment[1])
    if tsp and n > 3:
        order = _tsp_segments(order, bounds, indptr, indices, m.shape[1], max_passes)
    after = int(_consecutive(order, indptr, indices).sum()) if n > 1 else 0
    sizes = np.diff(bounds)
    return order, OrderReport(
        before, gray_len, after, len(sizes), int(sizes.min()), int(sizes.max())
    )
