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
def sortgreedy_scan(edges, used, match, owner, matched):  # pragma: no cover - compiled
    """The scan of Doka Algorithm 2 over one batch of flat edge ids ``edges`` (i·m + j, in
    ascending weight, ties in flat order): take every unused edge whose endpoints are both
    free. Continues the state ``match``/``owner`` (−1: free) and returns the new number of
    matched originals; stops when all m are matched. O(len(edges))."""
    m = match.shape[0]
    for e in edges:
        if matched == m:
            break
        i, j = e // m, e % m
        if match[i] < 0 and owner[j] < 0 and not used[i, j]:
            match[i] = j
            owner[j] = i
            matched += 1
    return matched


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
