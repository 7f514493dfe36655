"""Record orders that put similar records next to each other.

Reference: Doka et al. §5 — tuples sorted lexicographically, attributes positioned from lower to
higher cardinality, so that large value changes between consecutive tuples are rare.
"""

from __future__ import annotations

import numpy as np

from anonymatch.tables.columns.schema import EncodedQI


def attribute_cardinalities(qi: EncodedQI) -> np.ndarray:
    """Number of distinct values of each QI among these records, numeric first then categorical
    (the column order of ``EncodedQI.keys``; "missing" counts as one value). O(n·d log n)."""
    keys = qi.keys()
    return np.array([len(np.unique(keys[:, a])) for a in range(keys.shape[1])], dtype=np.int64)


def lexicographic_order(qi: EncodedQI) -> np.ndarray:
    """Permutation sorting the records lexicographically, lowest-cardinality attribute first;
    ties keep input order (stable). A categorical QI with a hierarchy is sorted depth first
    along it (siblings together). Records are first grouped by which attributes they miss
    (complete records first), so that records missing the same attributes lie together and
    share partitions; within a group the usual order. O(n·d log n) time, O(n·d) memory."""
    if qi.n == 0:
        return np.empty(0, dtype=np.int64)
    keys = qi.keys(ordered=True)
    card = attribute_cardinalities(qi)
    # np.lexsort uses the last key as the primary one; stable sort on equal cardinalities.
    priority = np.argsort(card, kind="stable")
    sort_keys = [keys[:, a] for a in priority[::-1]]
    # Records missing the same attributes first lie together whatever their other values: a
    # missing value stars every row it is linked to, so they should share partitions and rows.
    gone = np.hstack([qi.num_missing, qi.cat_missing])
    sort_keys += [gone[:, a] for a in priority[::-1] if gone[:, a].any()]
    return np.lexsort(tuple(sort_keys)).astype(np.int64)
