"""Smooth k-anonymity of a sparse binary matrix by facility-location clustering and voting.

Reference: H. Esfandiari, A. Epasto, V. Mirrokni, A. Munoz Medina, "Smooth anonymity for sparse
graphs" — Algorithm Alg₂ (§5.3) with the implementation details of Appendix D:

1. every row (user) is a point of {0,1}^m under the Hamming distance (§5.1);
2. every point i is a candidate facility with opening cost (2α/(1−α))·Σ_{u ∈ U_i^{βk}} Dist(u, i),
   U_i^{βk} the βk points nearest to i (i itself included, at distance 0), α = 1/β, β = 2;
3. the facility-location instance is solved by Meyerson's online algorithm (a point opens a
   facility with probability min(1, d/f), d its distance to the nearest open facility, f its
   opening cost; otherwise it joins that facility), run on 10 random orders, cheapest kept;
4–5. facilities with fewer than k clients are closed one at a time (smallest first, ties at
   random) and their clients move to the nearest open facility, until every cluster has ≥ k;
   clusters of ≥ 2k rows are then split (the issue's "kept below 2k"; step 5 of §5.3);
6. per cluster and item, the item is published for the whole cluster iff at least half of the
   cluster has it (``majority``: smooth k-anonymity, Definition 3.5 — ties are kept, which both
   the definition allows and the Jaccard similarity prefers) or iff all have it (``all``:
   k-anonymity by suppression, the paper's "non-smooth" baseline).

Departures (all cost-non-increasing refinements of the same procedure): after the best
Meyerson run, every point is re-assigned to its nearest open facility (Meyerson assigns
irrevocably at arrival); the split of large clusters is a recursive bisection (two far-apart
pivots, members ordered by which pivot is nearer, cut into halves of ≥ k) rather than the
paper's unspecified procedure.

Nearest-point computations never build an n × n matrix: distances are
|x| + |y| − 2|x ∩ y|, overlaps are accumulated through the item → rows (or item → open
facilities) index, and rows sharing no item with x are represented by the open facility (or the
rows) of smallest degree. Cost of one query ≈ Σ_{items j of x} (rows or open facilities holding
j), so the whole algorithm runs in O(runs · Σ_j pop_j²) time in the worst case (pop_j = rows
holding item j; far less in practice for open facilities) and O(n + nnz) memory.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.errors import InputError
from anonymatch.core.params import check_level_fits
from anonymatch.core.runner import default_workers
from anonymatch.sparse.io import as_binary_csr

RULES = ("majority", "all")


@dataclass(frozen=True)
class Clustering:
    """Cluster label of every row (0..C−1), and figures of the facility-location solution."""

    labels: np.ndarray
    n_clusters: int
    facility_cost: float
    facilities_opened: int
    facilities_closed: int
    clusters_split: int


# ---------------------------------------------------------------------------------------------
# numba kernels (CSR of the rows: indptr/indices; CSC: cptr/crows; deg = ones per row)


@njit(cache=True, nogil=True)
def _knn_cost(csr, csc, deg, mult, low_rows, kk, start, stop):  # pragma: no cover - compiled
    """Σ of the Hamming distances from every distinct row i in [start, stop) (with multiplicity
    ``mult``) to its kk nearest rows (itself included; its own copies are at distance 0).
    ``csr`` = (indptr, indices) and ``csc`` = (cptr, crows): the distinct rows by row and by
    item; ``low_rows``: the rows of smallest degree (the candidates sharing no item)."""
    indptr, indices = csr
    cptr, crows = csc
    n = indptr.shape[0] - 1
    out = np.zeros(stop - start, np.float64)
    if n == 0 or stop <= start:
        return out
    need = min(kk - 1, mult.sum() - 1)
    if need <= 0:
        return out
    ov = np.zeros(n, np.int32)
    touched = np.empty(n, np.int32)
    maxdist = 2 * (deg.max() if n else 0) + 1
    hist = np.zeros(maxdist + 1, np.int64)
    for i in range(start, stop):
        nt = 0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            for q in range(cptr[j], cptr[j + 1]):
                r = crows[q]
                if ov[r] == 0:
                    touched[nt] = r
                    nt += 1
                ov[r] += 1
        di = deg[i]
        hist[0] += mult[i] - 1
        for t in range(nt):
            r = touched[t]
            if r != i:
                hist[di + deg[r] - 2 * ov[r]] += mult[r]
        for t in range(low_rows.shape[0]):
            r = low_rows[t]
            if r != i and ov[r] == 0:
                hist[di + deg[r]] += mult[r]
        total = 0.0
        taken = 0
        d = 0
        while taken < need and d <= maxdist:
            c = hist[d]
            if c > 0:
                if c > need - taken:
                    c = need - taken
                total += c * d
                taken += c
            d += 1
        out[i - start] = total
        hist[0] = 0
        for t in range(nt):
            r = touched[t]
            if r != i:
                hist[di + deg[r] - 2 * ov[r]] = 0
            ov[r] = 0
        for t in range(low_rows.shape[0]):
            r = low_rows[t]
            if r != i:
                hist[di + deg[r]] = 0
    return out


@njit(cache=True, nogil=True)
def _open(c, indptr, indices, cptr, fill, post, is_open):  # pragma: no cover - compiled
    is_open[c] = True
    for p in range(indptr[c], indptr[c + 1]):
        j = indices[p]
        post[cptr[j] + fill[j]] = c
        fill[j] += 1


@njit(cache=True, nogil=True)
def _nearest(x, csr, facilities, deg, scratch, min_c):  # pragma: no cover - compiled
    """(distance, facility) of the open facility nearest to row x; min_c is an open facility of
    smallest degree (it stands for every open facility sharing no item with x). ``csr`` =
    (indptr, indices): the rows; ``facilities`` = (cptr, fill, post, is_open): the open
    facilities' posting lists per item (as ``_open`` fills them) and open flags; ``scratch`` =
    (ov, touched): per-facility overlap counts (zero on entry and exit) and a work buffer."""
    indptr, indices = csr
    cptr, fill, post, is_open = facilities
    ov, touched = scratch
    nt = 0
    for p in range(indptr[x], indptr[x + 1]):
        j = indices[p]
        for q in range(cptr[j], cptr[j] + fill[j]):
            c = post[q]
            if is_open[c]:
                if ov[c] == 0:
                    touched[nt] = c
                    nt += 1
                ov[c] += 1
    best = deg[min_c]
    best_c = min_c
    for t in range(nt):
        c = touched[t]
        v = deg[c] - 2 * ov[c]
        if v < best:
            best = v
            best_c = c
        ov[c] = 0
    return best + deg[x], best_c


@njit(cache=True, nogil=True)
def _meyerson(indptr, indices, cptr, deg, cost, order, u):  # pragma: no cover - compiled
    """One run of Meyerson's online facility location over ``order``; returns the assignment,
    the open flags and the total cost (opening + assignment)."""
    n = indptr.shape[0] - 1
    m = cptr.shape[0] - 1
    fill = np.zeros(m, np.int64)
    post = np.empty(max(1, cptr[m]), np.int64)
    is_open = np.zeros(n, np.bool_)
    assign = np.empty(n, np.int64)
    ov = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    csr, facilities, scratch = (indptr, indices), (cptr, fill, post, is_open), (ov, touched)
    total = 0.0
    min_c = -1
    for t in range(n):
        x = order[t]
        if min_c < 0:
            _open(x, indptr, indices, cptr, fill, post, is_open)
            assign[x] = x
            total += cost[x]
            min_c = x
            continue
        d, c = _nearest(x, csr, facilities, deg, scratch, min_c)
        f = cost[x]
        prob = d / f if f > 0.0 else (1.0 if d > 0 else 0.0)
        if u[t] < prob:
            _open(x, indptr, indices, cptr, fill, post, is_open)
            assign[x] = x
            total += f
            if deg[x] < deg[min_c]:
                min_c = x
        else:
            assign[x] = c
            total += d
    return assign, is_open, total


@njit(cache=True, nogil=True)
def _reassign_and_close(
    indptr, indices, cptr, deg, is_open, by_deg, k, tiebreak
):  # pragma: no cover - compiled
    """Assign every row to its nearest open facility, then close facilities with < k clients
    (smallest first, ties by ``tiebreak``), moving their clients to the nearest open facility,
    until every open facility has ≥ k clients. Returns (assignment, number closed)."""
    n = indptr.shape[0] - 1
    m = cptr.shape[0] - 1
    fill = np.zeros(m, np.int64)
    post = np.empty(max(1, cptr[m]), np.int64)
    opened = is_open.copy()
    is_open[:] = False
    for c in range(n):
        if opened[c]:
            _open(c, indptr, indices, cptr, fill, post, is_open)
    ov = np.zeros(n, np.int64)
    touched = np.empty(n, np.int64)
    csr, facilities, scratch = (indptr, indices), (cptr, fill, post, is_open), (ov, touched)
    ptr = 0
    while not is_open[by_deg[ptr]]:
        ptr += 1
    assign = np.empty(n, np.int64)
    size = np.zeros(n, np.int64)
    head = np.full(n, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    for x in range(n):
        d, c = _nearest(x, csr, facilities, deg, scratch, by_deg[ptr])
        assign[x] = c
        size[c] += 1
        nxt[x] = head[c]
        head[c] = x
    n_open = 0
    for c in range(n):
        if is_open[c]:
            n_open += 1
    closed = 0
    while n_open > 1:
        count = 0
        for c in range(n):
            if is_open[c] and size[c] < k:
                touched[count] = c
                count += 1
        if count == 0:
            break
        small = touched[:count].copy()
        keys = np.empty(count, np.float64)
        for t in range(count):
            keys[t] = size[small[t]] + 0.5 * tiebreak[small[t]]
        small = small[np.argsort(keys)]
        for t in range(count):
            c = small[t]
            if not is_open[c] or size[c] >= k or n_open <= 1:
                continue
            is_open[c] = False
            n_open -= 1
            closed += 1
            while not is_open[by_deg[ptr]]:
                ptr += 1
            x = head[c]
            while x != -1:
                following = nxt[x]
                d, c2 = _nearest(x, csr, facilities, deg, scratch, by_deg[ptr])
                assign[x] = c2
                size[c2] += 1
                nxt[x] = head[c2]
                head[c2] = x
                x = following
            head[c] = -1
            size[c] = 0
    return assign, closed


# ---------------------------------------------------------------------------------------------


def _csr(matrix: sp.csr_array | sp.csr_matrix) -> sp.csr_array:
    return as_binary_csr(matrix)


def _distinct_rows(x: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first row of each distinct row, distinct id of every row, multiplicities). O(nnz)."""
    ids: dict[bytes, int] = {}
    inverse = np.empty(x.shape[0], np.int64)
    ptr, idx = x.indptr, x.indices
    for i in range(x.shape[0]):
        inverse[i] = ids.setdefault(idx[ptr[i] : ptr[i + 1]].tobytes(), len(ids))
    first = np.full(len(ids), -1, np.int64)
    first[inverse[::-1]] = np.arange(x.shape[0])[::-1]
    return first, inverse, np.bincount(inverse, minlength=len(ids)).astype(np.int64)


def opening_costs(
    x: sp.csr_array, k: int, beta: float = 2.0, threads: int | None = None
) -> np.ndarray:
    """Facility opening cost of every row (App. D): (2α/(1−α))·Σ of the Hamming distances to its
    ⌈βk⌉ nearest rows (itself included), α = 1/β. Identical rows are computed once (with their
    multiplicity). O(Σ_j pop_j²) time over the distinct rows, O(n + nnz) memory per thread.
    Rows are independent: blocks of them run on ``threads`` threads (default: all cores; the
    kernel releases the GIL), with the same result for any number of threads."""
    if beta <= 1:
        raise InputError(f"beta must be greater than 1, got {beta}")
    x = _csr(x)
    n = x.shape[0]
    kk = max(1, math.ceil(beta * k))
    first, inverse, mult = _distinct_rows(x)
    u = x[first]
    deg = np.diff(u.indptr).astype(np.int64)
    csc = sp.csc_array(u)
    low = np.argsort(deg, kind="stable")[: kk + 1].astype(np.int64)
    arrays = (
        (u.indptr.astype(np.int64), u.indices.astype(np.int64)),
        (csc.indptr.astype(np.int64), csc.indices.astype(np.int64)),
        deg,
        mult,
        low,
        kk,
    )
    nu = u.shape[0]
    size = threads if threads is not None else default_workers()
    if size <= 1 or nu < 1024:
        sums = _knn_cost(*arrays, 0, nu)
    else:
        cuts = np.linspace(0, nu, 8 * size + 1).astype(np.int64)  # small blocks balance the load
        with ThreadPoolExecutor(max_workers=size) as pool:
            parts = list(
                pool.map(lambda b: _knn_cost(*arrays, cuts[b], cuts[b + 1]), range(len(cuts) - 1))
            )
        sums = np.concatenate(parts)
    sums = sums[inverse]
    alpha = 1.0 / beta
    return (2 * alpha / (1 - alpha)) * sums if n else sums


def _bisect(x: sp.csr_array, members: np.ndarray, k: int) -> list[np.ndarray]:
    """Split ``members`` (≥ 2k rows) into groups of k…2k−1 rows by recursive bisection around
    two far-apart pivots. O(s·d̄·log(s/k)) for s members of mean degree d̄."""
    out: list[np.ndarray] = []
    stack = [members]
    while stack:
        group = stack.pop()
        s = group.size
        if s < 2 * k:
            out.append(group)
            continue
        sub = x[group]
        # the group's own columns only: vectors of its width, not of the matrix's
        cols, local = np.unique(sub.indices, return_inverse=True)
        width = max(1, cols.size)
        sub = sp.csr_array((sub.data, local.ravel(), sub.indptr), shape=(s, width))
        deg = np.diff(sub.indptr).astype(np.int64)
        counts = np.bincount(sub.indices, minlength=width)
        centre = (2 * counts >= s).astype(np.int64)

        def dist(ref: np.ndarray, sub: sp.csr_array = sub, deg: np.ndarray = deg) -> np.ndarray:
            return deg + int(ref.sum()) - 2 * np.asarray(sub @ ref).ravel()

        d_c = dist(centre)
        r = int(np.argmax(d_c))
        ref_r = np.zeros(width, np.int64)
        ref_r[sub.indices[sub.indptr[r] : sub.indptr[r + 1]]] = 1
        d_r = dist(ref_r)
        t = int(np.argmax(d_r))
        ref_t = np.zeros(width, np.int64)
        ref_t[sub.indices[sub.indptr[t] : sub.indptr[t + 1]]] = 1
        key = d_r - dist(ref_t)
        order = np.argsort(key, kind="stable")
        cut = int(np.count_nonzero(key < 0) + np.count_nonzero(key == 0) // 2)
        cut = min(max(cut, k), s - k)
        stack.append(group[order[cut:]])
        stack.append(group[order[:cut]])
    return out


def split_large(x: sp.csr_array, labels: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Relabel so that every cluster of ≥ 2k rows is cut into clusters of k…2k−1 rows; returns
    (labels 0..C−1, number of clusters split)."""
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    sizes = np.bincount(labels)
    large = np.flatnonzero(sizes >= 2 * k)
    if large.size == 0:
        return labels, 0
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    next_label = int(sizes.size)
    for c in large:
        members = order[starts[c] : starts[c + 1]]
        groups = _bisect(x, members, k)
        for g in groups[1:]:
            labels[g] = next_label
            next_label += 1
    return labels, int(large.size)


def cluster(
    x: sp.csr_array | sp.csr_matrix,
    k: int,
    beta: float = 2.0,
    runs: int = 10,
    seed: int | np.random.SeedSequence | None = None,
    threads: int | None = None,
) -> Clustering:
    """Steps 1–5 of Alg₂ with App. D's details: clusters of k…2k−1 rows (all n rows in one
    cluster if n < 2k). Raises InputError if k > n or beta ≤ 1 or runs < 1.

    The opening costs are computed on ``threads`` threads (``opening_costs``). The ``runs``
    Meyerson runs are independent: their random orders and coins are drawn first,
    in run order, from the one generator of ``seed``, and the runs then execute on ``threads``
    threads (default: all cores; the compiled kernel releases the GIL). The cheapest run wins,
    the earliest among equals, so the result depends on ``seed`` only — it is the same as
    running them one after another (``threads=1``)."""
    x = _csr(x)
    n = x.shape[0]
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    check_level_fits(k, n)
    if runs < 1:
        raise InputError(f"runs must be at least 1, got {runs}")
    if threads is not None and threads < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    rng = np.random.default_rng(seed)
    if n < 2 * k:
        return Clustering(np.zeros(n, np.int64), 1, 0.0, 1, 0, 0)
    cost = opening_costs(x, k, beta, threads)
    deg = np.diff(x.indptr).astype(np.int64)
    csc = sp.csc_array(x)
    indptr, indices = x.indptr.astype(np.int64), x.indices.astype(np.int64)
    cptr = csc.indptr.astype(np.int64)
    draws = []
    for _ in range(runs):
        order = rng.permutation(n).astype(np.int64)
        draws.append((order, rng.random(n)))

    def run(draw: tuple[np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
        _, is_open, total = _meyerson(indptr, indices, cptr, deg, cost, draw[0], draw[1])
        return float(total), is_open

    size = min(runs, threads if threads is not None else default_workers())
    if size <= 1:
        results = [run(d) for d in draws]
    else:
        with ThreadPoolExecutor(max_workers=size) as pool:
            results = list(pool.map(run, draws))
    del draws
    best: tuple[float, np.ndarray] | None = None
    for total, is_open in results:  # in run order: the earliest of equal costs wins
        if best is None or total < best[0]:
            best = (total, is_open)
    assert best is not None
    is_open = best[1].copy()
    opened = int(is_open.sum())
    by_deg = np.argsort(deg, kind="stable").astype(np.int64)
    assign, closed = _reassign_and_close(
        indptr, indices, cptr, deg, is_open, by_deg, k, rng.random(n)
    )
    labels, split = split_large(x, assign, k)
    return Clustering(labels, int(labels.max()) + 1, best[0], opened, int(closed), split)


def vote(
    x: sp.csr_array | sp.csr_matrix, labels: np.ndarray, rule: str = "majority"
) -> sp.csr_array:
    """Published matrix: row i gets the items kept for its cluster — held by at least half of
    the cluster (``majority``) or by all of it (``all``). O(nnz + n) time and memory."""
    if rule not in RULES:
        raise InputError(f"unknown vote rule {rule!r} (expected one of {RULES})")
    x = _csr(x)
    n = x.shape[0]
    labels = np.asarray(labels, dtype=np.int64)
    n_clusters = int(labels.max()) + 1 if n else 0
    member = sp.csr_array((np.ones(n, np.int64), (labels, np.arange(n))), shape=(n_clusters, n))
    counts = sp.csr_array(member @ x.astype(np.int64))
    sizes = np.bincount(labels, minlength=n_clusters)
    row_of = np.repeat(np.arange(n_clusters), np.diff(counts.indptr))
    need = (sizes + 1) // 2 if rule == "majority" else sizes  # ≥ half (ties kept) or all
    keep = counts.data >= need[row_of]
    kept = sp.csr_array(
        (
            np.ones(int(keep.sum()), np.int8),
            counts.indices[keep],
            np.concatenate([[0], np.cumsum(np.bincount(row_of[keep], minlength=n_clusters))]),
        ),
        shape=(n_clusters, x.shape[1]),
    )
    published = sp.csr_array(kept[labels])
    published.sort_indices()
    return published
