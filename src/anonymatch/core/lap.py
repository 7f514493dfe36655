"""Exact dense linear assignment (minimum-cost perfect matching) by Jonker–Volgenant (LAPJV).

Reference: R. Jonker, A. Volgenant, "A shortest augmenting path algorithm for dense and sparse
linear assignment problems", Computing 38 (1987) 325–340. The phases are the paper's: column
reduction, reduction transfer, two passes of augmenting row reduction (each bounded to m steps per
row processed, as in the ``lap`` package, against cycling on ties), then one shortest augmenting
path (Dijkstra on reduced costs, scanning a whole layer of equal distances at once) per row left
free, each row relaxed over all columns in a branch-light loop that the compiler vectorizes (3–4×
faster than relaxing only the unscanned columns through an index list, measured on the freeform
matrices of Adult at k = 50 and 100). The minima of the augmentation (each new layer's distance)
and of the reduction transfer are taken over order-preserving integer keys of the floats, which
compile to vector loops where a float minimum stays scalar: the same assignments, 13–17 % less
time for :func:`lapjv` and 22–26 % for :func:`two_stage` on those rounds. The result
is an optimal assignment, as ``scipy.optimize.linear_sum_assignment``'s is; among several optimal
assignments (ties) the two may choose different ones.

Why not scipy or a package: on the GCP-increase matrices of the freeform methods (Adult, 1,000
records, k = 50) this is about 2× faster than scipy's shortest-augmenting-path solver, which has no
initialization phases, and it is compiled with ``nogil`` so that partitions solved on a thread
pool use every core. The PyPI package ``lap`` (0.5) is about 1.5× faster on one core but holds the
GIL during the solve, so two partitions cannot run at once, and on random low-rank matrices with
many ties it was slower than scipy. Warm starts (the column prices of round r as the start of
round r + 1) were tried and gave nothing: every row's previous column is forbidden in the next
round and the weights of the published records change (measured: no faster than a cold start).
Also tried on the exact rounds of Adult (k = 50, 100; 1,000 × 1,000, about 60 rows scanned per
augmentation) and dropped: more passes of augmenting row reduction (3, 4, 8: no fewer rows left to
augment, no faster); a multi-source Dijkstra (all free rows at once, duals kept, one path per
search: 150 rows scanned per path, 2.3× slower), with Hopcroft–Karp-like passes on the tight edges
between searches (4× slower) or only before the augmentation (4 % faster, other optima); relaxing 4
rows of a layer in one pass (the same assignments, no faster: the one-row loop is already vectorized
and the reads of d, v and pred it saves are not its cost); a float32 lower-bound copy of the matrix
filtering the float64 reads (the same assignments, 20 % slower); solving the transpose (45 %
slower); the augmenting row reduction's two smallest reduced costs by four vector passes on integer
keys (the same assignments; 40 % faster than the scalar loop alone, 50 % slower inside the
initialization, not understood).

The matrix may be float64 or float32; every value the solver keeps (prices, distances) is of
the matrix's type, with integer keys of the same width (``_masked_min``). Freeform's rounds
from k = 50 on (two-stage) solve float32 weights (half the memory read; ``tables.methods.freeform.
weights_dtype``): on Adult's 1,000 × 1,000 rounds at k = 100 the two-stage solve took 25 %
less time in isolation (7 % less build in a whole run), for the same final GCP.

Edges may be *forbidden* (``used``): ``forbid`` prices them above any assignment avoiding them, so
they are never chosen when such an assignment exists.

Complexity: O(m³) worst case, O(m²) per augmentation; in practice the initialization assigns most
rows and few augmentations run. Memory O(m) besides the m × m matrix.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload


def forbid(w: np.ndarray, used: np.ndarray) -> float:
    """Give the ``used`` entries of the finite cost matrix ``w`` (in place) a cost above that
    of any assignment avoiding them: ``max + (max − min)·m + 1`` over the allowed entries.
    Returns that cost. O(m²). (The freeform methods price their forbidden edges inside the
    weight kernel instead: ``tables.metrics.gcp_increase_weights(forbidden=...)``.)"""
    allowed = w[~used]
    if allowed.size and not np.all(np.isfinite(allowed)):
        raise ValueError("the cost matrix has non-finite allowed entries")
    lo = float(allowed.min()) if allowed.size else 0.0
    hi = float(allowed.max()) if allowed.size else 0.0
    big = hi + (hi - lo) * w.shape[0] + 1.0
    w[used] = big
    return big


def solve_dense(cost: np.ndarray, used: np.ndarray | None = None) -> np.ndarray:
    """Minimum-cost perfect matching of the m × m cost matrix ``cost``, avoiding ``used`` edges.

    Parameters
    ----------
    cost : (m, m) float array
        Edge costs, finite where allowed (a copy is made when ``used`` is given).
    used : (m, m) bool array, optional
        Forbidden edges. A perfect matching avoiding them must exist (for the freeform methods
        the unused edges form a regular bipartite graph, which has one by Hall's theorem);
        otherwise ``ValueError``.

    Returns
    -------
    match : (m,) int64 array
        ``match[i]`` = the column assigned to row i.

    Notes
    -----
    Time O(m³) worst case (O(m²) per shortest augmenting path), in practice far less; memory
    O(m) besides the matrix. Runs without the GIL.
    """
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
        raise ValueError(f"the cost matrix must be square, got shape {cost.shape}")
    m = cost.shape[0]
    if m == 0:
        return np.empty(0, dtype=np.int64)
    if used is not None:
        used = np.asarray(used, dtype=np.bool_)
        cost = cost.copy()
        forbid(cost, used)
    elif not np.all(np.isfinite(cost)):
        raise ValueError("the cost matrix has non-finite entries")
    match = lapjv(np.ascontiguousarray(cost))
    if used is not None and used[np.arange(m), match].any():
        raise ValueError("no perfect matching avoids the forbidden edges")
    return match


def _masked_min(d, todo, scratch):  # pragma: no cover - compiled by the overload below
    """The smallest ``d[j]`` (no NaN) over the j with ``todo[j]``; inf if none. One vector pass
    on integer keys: an int whose order is that of the float with these bits (``b ^ ((b >>
    (bits − 1)) & max)``, its own inverse), since an integer minimum compiles to a vector loop
    where a float one, which must keep IEEE NaN semantics, stays scalar (4× faster on the
    m ≈ 1,000 rows of the freeform rounds). A value equal to the scalar loop's, up to the sign
    of a zero, which no comparison sees. ``scratch``: a 1-element array of ``d``'s float type.
    Compiled for float64 (int64 keys) and float32 (int32 keys). O(len(d))."""
    raise NotImplementedError("compiled only")


@overload(_masked_min, inline="always")
def _masked_min_typed(d, todo, scratch):  # pragma: no cover - compiled
    wide = d.dtype == types.float64
    key_type = np.int64 if wide else np.int32
    sign = key_type(np.iinfo(key_type).max)
    shift = key_type(63 if wide else 31)
    inf_key = np.array(np.inf, np.float64 if wide else np.float32).view(key_type)[()]

    def impl(d, todo, scratch):
        keys = d.view(key_type)
        best = inf_key
        for j in range(d.shape[0]):
            b = keys[j]
            k = b ^ ((b >> shift) & sign) if todo[j] else inf_key
            best = min(best, k)
        scratch.view(key_type)[0] = best ^ ((best >> shift) & sign)
        return scratch[0]

    return impl


@njit(cache=True, nogil=True)
def lapjv(cost):  # pragma: no cover - compiled
    """The solver on a C-contiguous float64 or float32 m × m matrix with finite entries
    (m ≥ 1); returns the column of each row. Callable from other nogil numba code."""
    x, y, v, free, n_free = _initialize(cost)
    return _augment(cost, x, y, v, free, n_free)


@njit(cache=True, nogil=True)
def two_stage(cost, used):  # pragma: no cover - compiled
    """An assignment in two stages, cheaper than :func:`lapjv` and not always optimal: the
    rows that LAPJV's initialization (column reduction, reduction transfer, augmenting row
    reduction) assigns keep their columns, and the f rows it leaves free are assigned by an
    exact solve of their f × f matrix over the f columns left free. When that sub-assignment
    (or the initialization) takes an edge marked in ``used`` (the m × m bool of forbidden
    edges, priced above every allowed edge in ``cost``), the initialization's state is
    completed by LAPJV's own augmentation instead, which returns the optimum. Returns the
    column of each row.

    On the freeform rounds of UCI Adult at k ≥ 50 the initialization assigns all but 3–30 %
    of the rows; the rounds then cost 2.0–2.3× less, for a final GCP within ±1 % of the exact
    rounds' (docs/results.md, speed at large k). Time O(m²) for the initialization plus the
    f × f solve (O(f³) worst case); memory O(f²)."""
    x, y, v, free, n_free = _initialize(cost)
    n = cost.shape[0]
    for j in range(n):  # the first stage's edges (a free row's ``x`` may be stale)
        if y[j] >= 0 and used[y[j], j]:
            return _augment(cost, x, y, v, free, n_free)
    if n_free == 0:
        return x
    cols = np.empty(n_free, np.int64)
    c = 0
    for j in range(n):
        if y[j] < 0:
            cols[c] = j
            c += 1
    sub = np.empty((n_free, n_free), cost.dtype)
    for r in range(n_free):
        row = cost[free[r]]
        for q in range(n_free):
            sub[r, q] = row[cols[q]]
    pick = lapjv(sub)
    for r in range(n_free):
        if used[free[r], cols[pick[r]]]:
            return _augment(cost, x, y, v, free, n_free)
    for r in range(n_free):
        x[free[r]] = cols[pick[r]]
    return x


@njit(cache=True, nogil=True)
def _initialize(cost):  # pragma: no cover - compiled
    """LAPJV's initialization on ``cost``: returns the partial assignment (``y`` column →
    row, −1 free; ``x`` row → column, meaningful for the rows not left free), the column
    prices ``v`` and the rows left free (``free[:n_free]``). O(m²) plus the augmenting row
    reduction's steps."""
    n = cost.shape[0]
    x = np.full(n, -1, np.int64)  # row → column
    y = np.zeros(n, np.int64)  # column → row (−1: free)
    v = np.full(n, np.inf, cost.dtype)  # column prices (duals)
    # Column reduction, row by row (contiguous reads): v[j] = min_i cost[i, j], ties to the last
    # such row. Every tie rule gives an optimal assignment; on the freeform rounds (Adult) this
    # one ended with a GCP 0.002–0.007 points lower than ties to the first row at k = 10, 25, 50
    # and equal at k = 100 (docs/results.md, speed section).
    for i in range(n):
        for j in range(n):
            c = cost[i, j]
            if c <= v[j]:
                v[j] = c
                y[j] = i
    unique = np.ones(n, np.bool_)
    for j in range(n - 1, -1, -1):
        i = y[j]
        if x[i] < 0:
            x[i] = j
        else:  # i already won a column: j stays free
            unique[i] = False
            y[j] = -1
    # Reduction transfer: a row that won exactly one column j passes its slack to v[j].
    free = np.empty(n, np.int64)
    reduced = np.empty(n, cost.dtype)  # one row's reduced costs
    skip = np.ones(n, np.bool_)  # all but one column
    scratch = np.empty(1, cost.dtype)  # a float from its integer key
    inf = np.full(1, np.inf, cost.dtype)[0]  # of the matrix's float type, as every value
    n_free = 0
    for i in range(n):
        if x[i] < 0:
            free[n_free] = i
            n_free += 1
        elif unique[i] and n > 1:
            j1 = x[i]
            row = cost[i]
            for j in range(n):
                reduced[j] = row[j] - v[j]
            skip[j1] = False
            v[j1] -= _masked_min(reduced, skip, scratch)
            skip[j1] = True
    # Augmenting row reduction, two passes.
    for _ in range(2):
        if n_free == 0:
            break
        current = 0
        n_new = 0
        steps = 0
        while current < n_free:
            steps += 1
            i = free[current]
            current += 1
            j1 = 0
            u1 = cost[i, 0] - v[0]
            j2 = -1
            u2 = inf
            for j in range(1, n):
                h = cost[i, j] - v[j]
                if h < u2:
                    if h >= u1:
                        u2 = h
                        j2 = j
                    else:
                        u2 = u1
                        u1 = h
                        j2 = j1
                        j1 = j
            i0 = y[j1]
            lowered = v[j1] - (u2 - u1)
            lowers = lowered < v[j1]
            if steps < current * n:
                if lowers:
                    v[j1] = lowered
                elif i0 >= 0 and j2 >= 0:
                    j1 = j2
                    i0 = y[j2]
                if i0 >= 0:
                    if lowers:  # the displaced row is reduced again at once
                        current -= 1
                        free[current] = i0
                    else:
                        free[n_new] = i0
                        n_new += 1
            elif i0 >= 0:
                free[n_new] = i0
                n_new += 1
            x[i] = j1
            y[j1] = i
        n_free = n_new
    return x, y, v, free, n_free


@njit(cache=True, nogil=True)
def _augment(cost, x, y, v, free, n_free):  # pragma: no cover - compiled
    """LAPJV's augmentation: completes the initialization's state (:func:`_initialize`) to an
    optimal assignment, one shortest augmenting path per free row. Returns ``x``."""
    n = cost.shape[0]
    # Augmentation: a shortest augmenting path from each row still free (Dijkstra on reduced
    # costs, a whole layer of equal distances at a time). Each step is one branch-light pass over
    # all columns, in index order, which the compiler vectorizes: relaxing a row (a settled column
    # has distance −inf, its distance kept in ``settled``; a column already in the layer has
    # distance = layer, which no relaxation lowers since reduced costs are ≥ 0) and flagging in
    # ``hit`` the columns that reach the layer; the flags are then read 8 at a time.
    d = np.empty(n, cost.dtype)
    pred = np.empty(n, np.int64)
    todo = np.empty(n, np.bool_)
    words = (n + 7) // 8
    hit = np.zeros(words * 8, np.uint8)  # columns that just reached the current layer
    hit64 = hit.view(np.uint64)
    queue = np.empty(n, np.int64)  # [0, lo): settled; [lo, hi): the layer left to scan
    settled = np.empty(n, cost.dtype)  # distance of queue[k] when it was settled
    scratch = np.empty(1, cost.dtype)  # a float from its integer key
    zero = np.zeros(1, cost.dtype)[0]  # of the matrix's float type, as every distance
    for f in range(n_free):
        start = free[f]
        row = cost[start]
        for j in range(n):
            d[j] = row[j] - v[j]
            pred[j] = start
            todo[j] = True
        lo = 0
        hi = 0
        end = -1
        layer = zero
        while end < 0:
            if lo == hi:  # the next layer: the TODO columns at the smallest distance
                layer = _masked_min(d, todo, scratch)
                found = 0
                for j in range(n):
                    h1 = todo[j] and d[j] == layer
                    hit[j] = h1
                    found += h1
            else:
                j1 = queue[lo]
                settled[lo] = d[j1]
                d[j1] = -np.inf  # a settled column is never relaxed again
                lo += 1
                i = y[j1]
                row = cost[i]
                h = row[j1] - v[j1] - layer
                found = 0
                for j in range(n):  # relax row i
                    reduced = row[j] - v[j] - h
                    better = reduced < d[j]
                    if better:
                        d[j] = reduced
                        pred[j] = i
                    h1 = better and reduced == layer
                    hit[j] = h1
                    found += h1
            if found:  # queue the columns that reached the layer
                for wd in range(words):
                    if hit64[wd]:
                        for j in range(wd * 8, min(wd * 8 + 8, n)):
                            if hit[j]:
                                todo[j] = False
                                queue[hi] = j
                                hi += 1
                                if y[j] < 0 and end < 0:
                                    end = j
        for k in range(lo):  # price update of the settled columns
            j = queue[k]
            v[j] += settled[k] - layer
        while True:  # flip the alternating path back to the start row
            i = pred[end]
            y[end] = i
            j = x[i]
            x[i] = end
            end = j
            if i == start:
                break
    return x
