"""Agglomerative k-anonymity with suppression: the baseline of Choromanski et al. §5.

Start from singleton clusters and repeatedly merge the two clusters whose union adds the fewest
stars, one of them smaller than k, until every cluster has ≥ k members (Gionis, Mazza, Tassa,
"k-anonymization revisited", ICDE 2008, agglomerative algorithm with the suppression cost). A
cluster publishes its members with every attribute on which they disagree starred, so its
compatibility graph is a union of bicliques (clique-bipartite, Definition 2.1). For adaptive
levels the paper uses k = max δᵢ.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from anonymatch.tables.methods.bmatching import BMatching, SuppressionProblem, stars_of


@njit(cache=True, nogil=True)
def _merge_cost(a, b, sig, mixed, usum):  # pragma: no cover - compiled
    s = 0.0
    for k in range(sig.shape[1]):
        ma, mb = mixed[a, k], mixed[b, k]
        if ma and mb:
            continue
        if ma:  # b's members get starred
            s += usum[b, k]
        elif mb:
            s += usum[a, k]
        elif sig[a, k] != sig[b, k]:
            s += usum[a, k] + usum[b, k]
    return s


@njit(cache=True, nogil=True)
def _best_partner(a, alive, sig, mixed, usum):  # pragma: no cover - compiled
    best, arg = np.inf, -1
    for b in range(alive.shape[0]):
        if alive[b] and b != a:
            c = _merge_cost(a, b, sig, mixed, usum)
            if c < best:
                best, arg = c, b
    return best, arg


@njit(cache=True, nogil=True)
def _agglomerate(codes, forced, util, k):  # pragma: no cover - compiled
    n, d = codes.shape
    sig = codes.copy()
    mixed = forced.copy()
    usum = util.copy()
    size = np.ones(n, np.int64)
    alive = np.ones(n, np.bool_)
    label = np.arange(n)
    cost = np.full(n, np.inf)
    partner = np.full(n, -1, np.int64)
    if k <= 1 or n <= 1:
        return label
    for a in range(n):
        cost[a], partner[a] = _best_partner(a, alive, sig, mixed, usum)
    n_small = n
    while n_small > 0:
        a, best = -1, np.inf
        for c in range(n):
            if alive[c] and size[c] < k and (a < 0 or cost[c] < best):
                a, best = c, cost[c]
        b = partner[a]
        # merge b into a
        for x in range(d):
            if not mixed[a, x] and (mixed[b, x] or sig[a, x] != sig[b, x]):
                mixed[a, x] = True
            usum[a, x] += usum[b, x]
        was_small = (size[a] < k) + (size[b] < k)
        size[a] += size[b]
        alive[b] = False
        n_small -= was_small - (1 if size[a] < k else 0)
        for i in range(n):
            if label[i] == b:
                label[i] = a
        if n_small == 0:
            break
        # refresh best partners of the small clusters
        for c in range(n):
            if not alive[c] or size[c] >= k:
                continue
            if c == a or partner[c] == a or partner[c] == b:
                cost[c], partner[c] = _best_partner(c, alive, sig, mixed, usum)
            else:
                m = _merge_cost(c, a, sig, mixed, usum)
                if m < cost[c]:
                    cost[c], partner[c] = m, a
    return label


def agglomerative_clusters(problem: SuppressionProblem, k: int) -> np.ndarray:
    """Cluster labels (a representative record id per cluster), every cluster ≥ k members.
    Time O(n²·d) (a best-partner scan per small cluster after each merge), memory O(n·d)."""
    return _agglomerate(
        problem.codes,
        problem.forced,
        np.ascontiguousarray(problem.utility, dtype=np.float64),
        int(k),
    )


def agglomerative(problem: SuppressionProblem) -> BMatching:
    """The baseline's release as a b-matching object: complete bipartite graphs inside clusters
    of size ≥ k = max δᵢ, and their star pattern."""
    n = problem.n
    k = int(problem.delta.max()) if n else 1
    labels = agglomerative_clusters(problem, k)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    rows, cols = [], []
    for members in np.split(order, bounds):
        r, c = np.meshgrid(members, members, indexing="ij")
        off = r != c
        rows.append(r[off])
        cols.append(c[off])
    rows_a = np.concatenate(rows) if rows else np.empty(0, np.int64)
    cols_a = np.concatenate(cols) if cols else np.empty(0, np.int64)
    return BMatching(rows_a, cols_a, stars_of(problem, rows_a, cols_a))
