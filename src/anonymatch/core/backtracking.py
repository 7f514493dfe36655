"""Backtracking extraction of random disjoint assignments (WMC: Wong, Mamoulis, Cheung,
SIGMOD 2010), as Xue et al. (KDD 2012) §4.2 describe it — the baseline of their Figure 7.

Same rounds, hop preference and cycle updates as the closed walk
(``core.assignment.random_assignments``: a random edge to a node not yet on the walk, the closing
edge only when there is none), but the walk may not revisit a node: at a dead end (every
untried out-edge leads to a node already on the walk or given up, and none closes the cycle)
it backtracks one step and tries another edge (Figure 3(b)). A node it
backed out of is no longer on the walk and may be entered again through another edge; an edge
is tried at most once per walk, so a walk takes O(k·n) steps and the extraction O(k·n²) in the
worst case, as the paper states; each walk ends in a simple cycle through its start, which
Theorem 4.1 guarantees to exist. For benchmarks and comparison only: the privacy step
of the library is the closed walk.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from anonymatch.core.graph import GeneralizationGraph


@njit(cache=True, nogil=True)
def _backtrack_rounds(indptr, indices, n_rounds, rng):  # pragma: no cover - compiled
    n = indptr.shape[0] - 1
    out = np.full((n_rounds, n), -1, np.int64)
    avail = np.ones(indices.shape[0], np.bool_)
    tried = np.zeros(indices.shape[0], np.int64)
    visited = np.zeros(n, np.int64)
    next_edge = np.full(n, -1, np.int64)
    stack = np.empty(n, np.int64)
    walk = 0
    steps = 0
    for r in range(n_rounds):
        match = np.arange(n)
        inv = np.arange(n)
        match_edge = np.full(n, -1, np.int64)
        pool = np.arange(n)
        where = np.arange(n)
        n_pool = n
        while n_pool > 0:
            start = pool[rng.integers(0, n_pool)]
            walk += 1
            target = match[start]
            top = 0
            stack[0] = start
            visited[start] = walk
            closed = False
            while top >= 0 and not closed:
                x = stack[top]
                # like the closed walk (Xue §4.2 (i)): a random untried edge to a node not on
                # the walk; only when there is none, the edge closing the cycle; else a dead end
                cnt = 0
                closing = -1
                for e in range(indptr[x], indptr[x + 1]):
                    if avail[e] and tried[e] != walk:
                        y = indices[e]
                        if y == target:
                            closing = e
                        elif visited[inv[y]] != walk:
                            cnt += 1
                if cnt == 0 and closing < 0:  # dead end: back out of x (it leaves the walk)
                    visited[x] = 0
                    top -= 1
                    steps += 1
                    continue
                chosen = closing
                if cnt > 0:
                    pick = rng.integers(0, cnt)
                    for e in range(indptr[x], indptr[x + 1]):
                        if avail[e] and tried[e] != walk:
                            y = indices[e]
                            if y != target and visited[inv[y]] != walk:
                                if pick == 0:
                                    chosen = e
                                    break
                                pick -= 1
                tried[chosen] = walk
                next_edge[x] = chosen
                steps += 1
                y = indices[chosen]
                if y == target:
                    closed = True
                else:
                    top += 1
                    stack[top] = inv[y]
                    visited[inv[y]] = walk
            if not closed:
                return out, -1
            # the stack is the cycle: stack[0] = start, ..., stack[top]
            for c in range(top + 1):
                x = stack[c]
                e = next_edge[x]
                match[x] = indices[e]
                match_edge[x] = e
            for c in range(top + 1):
                x = stack[c]
                inv[match[x]] = x
                p = where[x]
                if p >= 0:
                    last = pool[n_pool - 1]
                    pool[p] = last
                    where[last] = p
                    where[x] = -1
                    n_pool -= 1
        for x in range(n):
            out[r, x] = match[x]
            avail[match_edge[x]] = False
    return out, steps


def backtracking_assignments(
    graph: GeneralizationGraph, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """k disjoint perfect matchings of a k-regular graph by WMC's backtracking random walks.

    Returns (rounds, steps): rounds[t, i] = published match of original i in assignment t;
    steps = walk + backtrack steps taken. Raises ValueError if the graph is not k-regular.
    Time O(k·n·W) for walks of W steps (worst case O(k n²)); memory O(E + n)."""
    degrees = graph.out_degrees()
    k = int(degrees[0]) if graph.n else 0
    if not graph.is_regular(k):
        raise ValueError("backtracking extraction needs a k-regular graph")
    m = graph.matrix
    out, steps = _backtrack_rounds(m.indptr.astype(np.int64), m.indices.astype(np.int64), k, rng)
    if steps < 0:  # pragma: no cover - impossible on a regular graph (Theorem 4.1)
        raise RuntimeError("backtracking walk failed to close")
    return out, int(steps)
