"""Record orders that put similar records next to each other.

Reference: Doka et al. §5 — tuples sorted lexicographically, attributes positioned from lower to
higher cardinality, so that large value changes between consecutive tuples are rare.
"""

from __future__ import annotations

import numpy as np

from anonymatch.tables.schema import EncodedQI


def attribute_cardinalities(qi: EncodedQI) -> np.ndarray:
    """Number of distinct values of each QI among these records, numeric first then categorical
    (the column order of ``np.hstack([qi.num, qi.cat])``). O(n·d log n)."""
    num = [len(np.unique(qi.num[:, a])) for a in range(qi.num.shape[1])]
    cat = [len(np.unique(qi.cat[:, a])) for a in range(qi.cat.shape[1])]
    return np.array(num + cat, dtype=np.int64)


def lexicographic_order(qi: EncodedQI) -> np.ndarray:
    """Permutation sorting the records lexicographically, lowest-cardinality attribute first;
    ties keep input order (stable). A categorical QI with a hierarchy is sorted depth first
    along it (siblings together). O(n·d log n) time, O(n·d) memory."""
    if qi.n == 0:
        return np.empty(0, dtype=np.int64)
    keys = np.hstack([qi.num, qi.cat_order_codes().astype(np.float64)])
    card = attribute_cardinalities(qi)
    # np.lexsort uses the last key as the primary one; stable sort on equal cardinalities.
    priority = np.argsort(card, kind="stable")
    return np.lexsort(tuple(keys[:, a] for a in priority[::-1])).astype(np.int64)
