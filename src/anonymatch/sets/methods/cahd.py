"""CAHD baseline: Correlation-aware Anonymization of High-dimensional Data (Ghinita, Tao,
Kalnis, ICDE 2008 / TKDE 2011), as Xue et al. (KDD 2012 §5.1) use it for comparison.

Records are sorted in Gray order; groups are formed greedily along it: the first unassigned
record is the pivot, and the group is completed with the ℓ−1 unassigned records of the
candidate window (α·ℓ unassigned records on either side of the pivot) nearest to the pivot by
Hamming distance whose labels are new to the group. CAHD's eligibility check is kept: labels
that would break ℓ-eligibility of the remaining records (count·ℓ > n_rest − ℓ) are put in the
group first (taken from anywhere if not in the window); the last < 2ℓ records, or a remainder
that cannot keep eligibility with one more group of ℓ, form the final group. Every group has
≤ 1/ℓ of its records per label.

Publication (as Xue et al. do for the comparison): each group is a complete bipartite
generalization graph, published with the same bit-voting model; labels are attached through a
uniformly random assignment (any perfect matching of the group). O(n·α·ℓ·L) time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.sets.methods.nonreciprocal import _hamming, check_eligible
from anonymatch.sets.order import gray_order


def cahd_groups(
    matrix: sp.csr_array, labels: np.ndarray, ell: int, alpha: int = 3
) -> list[np.ndarray]:
    """The CAHD groups (record ids) for ℓ-diversity; see the module docstring."""
    n = matrix.shape[0]
    if not 1 <= ell <= n:
        raise InputError(f"ℓ must be between 1 and the {n} records, got {ell}")
    check_eligible(labels, ell)
    m = sp.csr_array(matrix)
    m.sort_indices()
    xp, xi = m.indptr.astype(np.int64), m.indices.astype(np.int64)
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    codes = codes.reshape(-1)
    count = np.bincount(codes).astype(np.int64)
    order = gray_order(m)
    pos_of = np.empty(n, np.int64)
    pos_of[order] = np.arange(n)
    free = np.ones(n, bool)  # by position
    rest = n
    groups: list[np.ndarray] = []
    cursor = 0
    while rest >= 2 * ell:
        while not free[cursor]:
            cursor += 1
        pivot = order[cursor]
        critical = set(np.flatnonzero(count * ell > rest - ell).tolist())
        if len(critical) > ell:
            break
        window = _window(free, cursor, alpha * ell)
        cand = order[window]
        dist = np.array([_hamming(pivot, int(r), xp, xi) for r in cand], np.int64)
        ranked = cand[np.lexsort((window, dist))]
        group = [int(pivot)]
        used = {int(codes[pivot])}
        for lab in sorted(critical - used):  # eligibility first
            pick = next((int(r) for r in ranked if codes[r] == lab), None)
            if pick is None:  # not in the window: the nearest in order from the pivot
                spots = np.flatnonzero(free & (codes[order] == lab))
                pick = int(order[spots[np.argmin(np.abs(spots - cursor))]])
            group.append(pick)
            used.add(lab)
        for r in ranked:
            if len(group) == ell:
                break
            if int(codes[r]) not in used:
                group.append(int(r))
                used.add(int(codes[r]))
        if len(group) < ell:  # the window lacks labels: widen it to everything
            for p in np.flatnonzero(free):
                r = int(order[p])
                if len(group) == ell:
                    break
                if int(codes[r]) not in used and r not in group:
                    group.append(r)
                    used.add(int(codes[r]))
        ids = np.asarray(group, np.int64)
        free[pos_of[ids]] = False
        np.subtract.at(count, codes[ids], 1)
        rest -= len(ids)
        groups.append(ids)
    if rest:
        groups.append(order[free].astype(np.int64))
    return groups


def _window(free: np.ndarray, cursor: int, width: int) -> np.ndarray:
    """Positions of up to ``width`` free records after the cursor and up to ``width`` before."""
    after = np.flatnonzero(free[cursor + 1 : cursor + 1 + 8 * width])[:width] + cursor + 1
    lo = max(0, cursor - 8 * width)
    before = np.flatnonzero(free[lo:cursor])[-width:] + lo
    return np.concatenate([before, after]).astype(np.int64)


def group_graph(groups: list[np.ndarray], n: int) -> GeneralizationGraph:
    """Union of complete bipartite graphs, one per group (reciprocal generalization)."""
    rows = np.concatenate([np.repeat(g, len(g)) for g in groups])
    cols = np.concatenate([np.tile(g, len(g)) for g in groups])
    return GeneralizationGraph.from_edges(rows, cols, n)
