"""Numba kernels for the assignment-building loops of the freeform methods (Doka §5–6).

All kernels work on one partition of m records: ``w`` is the m × m matrix of edge weights
(original i → published j) and ``used`` marks edges already taken by an earlier assignment.
They return ``match`` with ``match[i]`` = the published record assigned to original i.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _augment(i, used, match, owner):  # pragma: no cover - compiled
    """Match original i by an augmenting path (BFS over alternating paths) and return True.

    Fallback for the paper's one-swap backtracking: Lemma 5.1 guarantees a one-swap repair only
    for k < (m+3)/2; an augmenting path always exists because the unused edges form a regular
    bipartite graph, which has a perfect matching (Hall). O(m²)."""
    m = match.shape[0]
    parent_t = np.full(m, -1, np.int64)  # T vertex → the S vertex it was reached from
    seen_t = np.zeros(m, np.bool_)
    queue = np.empty(m + 1, np.int64)
    head, tail = 0, 0
    queue[tail] = i
    tail += 1
    while head < tail:
        s = queue[head]
        head += 1
        for t in range(m):
            if used[s, t] or seen_t[t]:
                continue
            seen_t[t] = True
            parent_t[t] = s
            if owner[t] < 0:
                # flip the path ending at free t
                while True:
                    s2 = parent_t[t]
                    prev = match[s2]
                    match[s2] = t
                    owner[t] = s2
                    if s2 == i:
                        return True
                    t = prev
            queue[tail] = owner[t]
            tail += 1
    return False


@njit(cache=True, nogil=True)
def _swap_with(y, i, w, used, match, owner, free, n_free):  # pragma: no cover - compiled
    """Try the paper's backtracking step with matched original y: give y's match T_j to the
    dead-end original i if edge (i, j) is available, and move y to its lightest available free
    T_m. Returns the new number of free T vertices, or -1 if y cannot swap."""
    j = match[y]
    if used[i, j]:
        return -1
    best, best_w, best_pos = -1, np.inf, -1
    for p in range(n_free):
        t = free[p]
        if not used[y, t] and w[y, t] < best_w:
            best, best_w, best_pos = t, w[y, t], p
    if best < 0:
        return -1
    match[y] = best
    owner[best] = y
    match[i] = j
    owner[j] = i
    free[best_pos] = free[n_free - 1]
    return n_free - 1


@njit(cache=True, nogil=True)
def greedy_iteration(w, used):  # pragma: no cover - compiled
    """One iteration of Doka Algorithm 1: originals in index (lexicographic) order each take
    the lightest available published record; a dead end backtracks to the nearest predecessor
    that can swap (Lemma 5.1), else an augmenting path repairs it. O(m²) per iteration."""
    m = w.shape[0]
    match = np.full(m, -1, np.int64)
    owner = np.full(m, -1, np.int64)
    free = np.arange(m)
    n_free = m
    for i in range(m):
        best, best_w, best_pos = -1, np.inf, -1
        for p in range(n_free):
            t = free[p]
            if not used[i, t] and w[i, t] < best_w:
                best, best_w, best_pos = t, w[i, t], p
        if best >= 0:
            match[i] = best
            owner[best] = i
            free[best_pos] = free[n_free - 1]
            n_free -= 1
            continue
        done = False
        for y in range(i - 1, -1, -1):
            r = _swap_with(y, i, w, used, match, owner, free, n_free)
            if r >= 0:
                n_free = r
                done = True
                break
        if not done:
            _augment(i, used, match, owner)
            n_free = 0
            for t in range(m):
                if owner[t] < 0:
                    free[n_free] = t
                    n_free += 1
    return match


@njit(cache=True, nogil=True)
def sortgreedy_round(w, used, batch, sample):  # pragma: no cover - compiled
    """One SortGreedy iteration (Doka Algorithm 2) without sorting all m² edges, in one
    compiled call that holds no lock (two partitions' rounds run side by side: issue 38).

    The scan first takes the edges of weight ≤ a threshold, sorted: every edge lighter than
    one it takes is among them, so they are a prefix of one stable sort of all m². After them
    the only edges the scan could still take join an original and a published record both
    still free, so it goes on over those alone (free rows × free columns, far fewer), in
    batches of about ``batch`` per free row, ties included. Every batch is collected in flat
    order (i·m + j) and sorted stably (:func:`stable_order`) — but for the first batch's edges
    at its threshold, which come after its lighter ones in flat order as they are — so the
    scan sees the takeable edges in exactly the order of one stable sort of all m² and returns
    the matching the full sort gives, whatever the thresholds. The first threshold is the
    weight of rank about
    ``batch``·m among the allowed weights of every (m²/``sample``)-th row (whole rows:
    contiguous reads). Unmatched originals are then repaired (:func:`sortgreedy_repair`).

    O(m²) reads plus O(b) for the b ≈ ``batch``·m + f² edges sorted (f originals left free by
    the first batch), instead of O(m² log m).
    """
    m = w.shape[0]
    match = np.full(m, -1, np.int64)
    owner = np.full(m, -1, np.int64)
    step = max(1, m * m // sample)  # every step-th row, whole
    picked = np.empty(((m + step - 1) // step) * m, w.dtype)
    n_picked = 0
    for i in range(0, m, step):
        for j in range(m):
            picked[n_picked] = w[i, j]
            n_picked += not used[i, j]
    want = min(n_picked - 1, int(np.ceil(batch * m / step)))
    top = np.partition(picked[:n_picked], want)[want] if want >= 0 else np.inf
    # The first batch: every edge of weight <= top (used ones too: the scan skips them). The
    # lighter ones are few, listed with their weights and sorted; those at top, most of the
    # batch at large k (the weight-0 edges), are kept per row in flat order (the order the sort
    # gives ties): one store each, no sort, and their scan skips the rows already matched
    # (issue 38: 86,000 of them a round on Adult at k = 200, m = 1,006).
    cap = 2 * batch * m + m
    rows = np.empty(cap, np.int32)
    cols = np.empty(cap, np.int32)
    values = np.empty(cap, w.dtype)
    tie_ptr = np.zeros(m + 1, np.int64)
    tie_cols = np.empty(cap, np.int32)
    c = 0
    for i in range(m):
        if c + m > rows.shape[0]:
            rows, cols = _grown(rows, c, 2 * c + m), _grown(cols, c, 2 * c + m)
            values = _grown(values, c, 2 * c + m)
        t = tie_ptr[i]
        if t + m > tie_cols.shape[0]:
            tie_cols = _grown(tie_cols, t, 2 * t + m)
        for j in range(m):
            v = w[i, j]
            if v < top:
                rows[c], cols[c], values[c] = i, j, v
                c += 1
            elif v == top:
                tie_cols[t] = j
                t += 1
        tie_ptr[i + 1] = t
    matched = _scan(stable_order(values[:c]), rows, cols, used, match, owner, 0)
    for i in range(m):  # then the ties, in flat order: each free row takes its first free column
        if matched == m:
            break
        if match[i] >= 0:
            continue
        for p in range(tie_ptr[i], tie_ptr[i + 1]):
            j = tie_cols[p]
            if owner[j] < 0 and not used[i, j]:
                match[i], owner[j] = j, i
                matched += 1
                break
    free_rows = np.empty(m, np.int64)
    free_cols = np.empty(m, np.int64)
    while matched < m and top < np.inf:  # the next batch, among free rows × free columns
        n_rows, n_cols = 0, 0
        for t in range(m):
            if match[t] < 0:
                free_rows[n_rows] = t
                n_rows += 1
            if owner[t] < 0:
                free_cols[n_cols] = t
                n_cols += 1
        if n_rows * n_cols > rows.shape[0]:
            rows, cols = _grown(rows, 0, n_rows * n_cols), _grown(cols, 0, n_rows * n_cols)
            values = _grown(values, 0, n_rows * n_cols)
        c = 0
        for a in range(n_rows):
            i = free_rows[a]
            for b in range(n_cols):
                j = free_cols[b]
                v = w[i, j]
                if v > top and not used[i, j]:
                    rows[c], cols[c], values[c] = i, j, v
                    c += 1
        if c == 0:
            break
        want = batch * n_rows
        if c > want:  # this batch: about the lightest ``want`` of them, ties included
            top = _sampled_rank(values[:c], want)
            kept = 0
            for t in range(c):
                if values[t] <= top:
                    rows[kept], cols[kept], values[kept] = rows[t], cols[t], values[t]
                    kept += 1
            c = kept
        else:
            top = np.inf
        matched = _scan(stable_order(values[:c]), rows, cols, used, match, owner, matched)
    if matched < m:
        sortgreedy_repair(w, used, match, owner)
    return match


@njit(cache=True, nogil=True)
def _scan(order, rows, cols, used, match, owner, matched):  # pragma: no cover - compiled
    """The scan of Doka Algorithm 2 over one batch of edges (``rows[t]``, ``cols[t]``) taken
    in ``order``: take every unused edge whose endpoints are both free. Continues the state
    ``match``/``owner`` (−1: free) and returns the new number of matched originals; stops when
    all m are matched. O(len(order))."""
    m = match.shape[0]
    for t in order:
        if matched == m:
            break
        i, j = rows[t], cols[t]
        if match[i] < 0 and owner[j] < 0 and not used[i, j]:
            match[i] = j
            owner[j] = i
            matched += 1
    return matched


@njit(cache=True, nogil=True)
def _sampled_rank(values, want):  # pragma: no cover - compiled
    """A value with about ``want`` of ``values`` at or below it: the matching rank of every
    (len/1024)-th value. O(len(values)/step · log)."""
    step = max(1, len(values) // 1024)
    sample = values[::step].copy()
    rank = min(len(sample) - 1, want // step)
    return np.partition(sample, rank)[rank]


@njit(cache=True, nogil=True)
def _grown(a, c, cap):  # pragma: no cover - compiled
    """A copy of ``a[:c]`` in a new array of length ``cap``."""
    out = np.empty(cap, a.dtype)
    out[:c] = a[:c]
    return out


@njit(cache=True, nogil=True)
def stable_order(values):  # pragma: no cover - compiled
    """``numpy.argsort(values, kind="stable")`` in compiled code that holds no lock: a least
    significant digit radix sort of the values' order-preserving 64-bit keys (−0.0 equal to
    +0.0, as numpy compares them), one pass per byte that is not the same in every key. For
    float values without NaN. O(8·n) time, O(n) memory; the batches of SortGreedy hold many
    ties, where every byte but a few is the same (numba's own sorts are not stable, and its
    quicksort degrades on ties)."""
    n = len(values)
    as_float = np.empty(n, np.float64)
    for t in range(n):
        as_float[t] = values[t] + 0.0  # −0.0 + 0.0 is +0.0
    keys = as_float.view(np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    common = ~np.uint64(0)
    seen = np.uint64(0)
    for t in range(n):
        b = keys[t]
        b = ~b if b & sign else b | sign  # negatives reversed below positives
        keys[t] = b
        common &= b
        seen |= b
    varies = common ^ seen
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    start = np.empty(257, np.int64)
    for d in range(8):
        shift = np.uint64(8 * d)
        if (varies >> shift) & np.uint64(255) == 0:
            continue  # this byte is the same in every key: the pass keeps the order
        start[:] = 0
        for t in range(n):
            start[((keys[t] >> shift) & np.uint64(255)) + 1] += 1
        for v in range(256):
            start[v + 1] += start[v]
        for t in range(n):
            p = order[t]
            v = (keys[p] >> shift) & np.uint64(255)
            spare[start[v]] = p
            start[v] += 1
        order, spare = spare, order
    return order


@njit(cache=True, nogil=True)
def sortgreedy_repair(w, used, match, owner):  # pragma: no cover - compiled
    """The end of Doka Algorithm 2 after the scan: each unmatched original looks for a swap
    partner among its predecessors and successors in the lexicographic order, nearest first,
    with an augmenting path as the last resort. Returns ``match`` (completed in place)."""
    m = w.shape[0]
    free = np.empty(m, np.int64)
    n_free = 0
    for t in range(m):
        if owner[t] < 0:
            free[n_free] = t
            n_free += 1
    for i in range(m):
        if match[i] >= 0:
            continue
        done = False
        for dist in range(1, m):
            for y in (i - dist, i + dist):
                if y < 0 or y >= m or match[y] < 0:
                    continue
                r = _swap_with(y, i, w, used, match, owner, free, n_free)
                if r >= 0:
                    n_free = r
                    done = True
                    break
            if done:
                break
        if not done:
            _augment(i, used, match, owner)
            n_free = 0
            for t in range(m):
                if owner[t] < 0:
                    free[n_free] = t
                    n_free += 1
    return match


@njit(cache=True, nogil=True)
def grow_cells(  # pragma: no cover - compiled
    match, num, num_missing, cat_missing, lo, hi, num_star, cat_star, changed
):
    """Published ``match[i]`` now also covers original i: widen its numeric bounds to i's
    present values, suppress (``*``) its cells where i's value is missing, and flag in
    ``changed`` every published record whose cells grew. In place; O(m·d)."""
    m, dn, dc = num.shape[0], num.shape[1], cat_missing.shape[1]
    for i in range(m):
        j = match[i]
        for a in range(dn):
            if num_missing[i, a]:
                if not num_star[j, a]:
                    num_star[j, a] = True
                    changed[j] = True
            else:
                v = num[i, a]
                if v < lo[j, a]:
                    lo[j, a] = v
                    changed[j] = True
                if v > hi[j, a]:
                    hi[j, a] = v
                    changed[j] = True
        for a in range(dc):
            if cat_missing[i, a] and not cat_star[j, a]:
                cat_star[j, a] = True
                changed[j] = True


@njit(cache=True, nogil=True)
def grow_members(match, codes, member, changed):  # pragma: no cover - compiled
    """Published ``match[i]`` now also shows value ``codes[i]`` (one categorical attribute's
    membership ``member``); flags in ``changed`` the records that gained a value. O(m)."""
    for i in range(match.shape[0]):
        j, c = match[i], codes[i]
        if not member[j, c]:
            member[j, c] = True
            changed[j] = True
