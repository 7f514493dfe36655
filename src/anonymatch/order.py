"""Record orders that put similar records next to each other.

Reference: Doka et al. §5 — tuples sorted lexicographically, attributes positioned from lower to
higher cardinality, so that large value changes between consecutive tuples are rare.
"""

from __future__ import annotations

import numpy as np

from .schema import EncodedQI


def attribute_cardinalities(qi: EncodedQI) -> np.ndarray:
    """Number of distinct values of each QI among these records, numeric first then categorical
    (the column order of ``np.hstack([qi.num, qi.cat])``). O(n·d log n)."""
    num = [len(np.unique(qi.num[:, a])) for a in range(qi.num.shape[1])]
    cat = [len(np.unique(qi.cat[:, a])) for a in range(qi.cat.shape[1])]
    return np.array(num + cat, dtype=np.int64)


def lexicographic_order(qi: EncodedQI) -> np.ndarray:
    """Permutation sorting the records lexicographically, lowest-cardinality attribute first;
    ties keep input order (stable). O(n·d log n) time, O(n·d) memory."""
    if qi.n == 0:
        return np.empty(0, dtype=np.int64)
    keys = np.hstack([qi.num, qi.cat.astype(np.float64)])
    card = attribute_cardinalities(qi)
    # np.lexsort uses the last key as the primary one; stable sort on equal cardinalities.
    priority = np.argsort(card, kind="stable")
    return np.lexsort(tuple(keys[:, a] for a in priority[::-1])).astype(np.int64)


def partition_bounds(n: int, size: int) -> np.ndarray:
    """Cut positions 0..n−1 into ⌊n/size⌋ contiguous parts of nearly equal length, so that no
    part is shorter than ``size`` (the short tail is spread over the others; one part if
    n < size). Returns the boundaries 0 = b₀ < b₁ < … < b_m = n."""
    return partition_bounds_count(n, max(1, n // size))


def partition_bounds_count(n: int, parts: int) -> np.ndarray:
    """Boundaries of ``parts`` contiguous parts of n positions, the first n mod parts one
    longer (as ``numpy.array_split``)."""
    base, extra = divmod(n, parts)
    sizes = np.full(parts, base, dtype=np.int64)
    sizes[:extra] += 1
    return np.concatenate([[0], np.cumsum(sizes)])


def split_even(n: int, size: int) -> list[np.ndarray]:
    """The positions of each part of ``partition_bounds(n, size)``."""
    bounds = partition_bounds(n, size)
    return [np.arange(bounds[p], bounds[p + 1], dtype=np.int64) for p in range(len(bounds) - 1)]
