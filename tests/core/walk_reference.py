"""The closed-walk kernel as it was before issue 17 (commit 64091f2), kept as the reference
of the hop rule (only the names lost their leading underscore): two scans of all of a node's
edges per hop, available or not, and draws by ``rng.integers``.
``tests/core/test_walk_distribution.py`` checks that the faster kernel of
``anonymatch.core.assignment`` has the same output distribution, and
``benchmarks/speed_walk.py`` times both. Not part of the package."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def pick_hop(
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
def closed_walk_rounds(indptr, indices, degree, n_rounds, rng):  # pragma: no cover - compiled
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
                e = pick_hop(x, target, indptr, indices, inv, avail, traversed, visited, walk, rng)
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
