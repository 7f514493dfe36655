"""Mondrian on a sparse binary matrix — the baseline of Esfandiari et al. (§6, App. D).

Reference: K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional k-anonymity",
ICDE 2006 (greedy top-down median partitioning), applied as the paper does to binary data,
every column being a quasi-identifier: a region of rows is cut on one column into the rows
holding the item and the rows without it, allowable iff both sides keep ≥ k rows; regions are
cut until no allowable cut is left. Each final region publishes the intersection of its rows
(k-anonymity by suppression: an item is kept iff every row of the region holds it).

Choice of the cut: on binary columns every non-constant column has the same normalized width
(1), so the "widest dimension" rule of Mondrian does not pick one; we take the allowable column
whose cut is the most balanced (closest to the median cut; ties to the lowest column index).

Time O(nnz · depth + regions · m) with depth ≈ log2(n/k); memory O(nnz + m).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.params import check_level_fits
from anonymatch.sparse.io import as_binary_csr


def mondrian_labels(x: sp.csr_array | sp.csr_matrix, k: int) -> np.ndarray:
    """Region label of every row (0..R−1); every region has ≥ k rows. InputError if k > n."""
    x = as_binary_csr(x)
    n = x.shape[0]
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    check_level_fits(k, n)
    labels = np.empty(n, np.int64)
    stack = [np.arange(n, dtype=np.int64)]
    region = 0
    while stack:
        rows = stack.pop()
        s = rows.size
        if s >= 2 * k:
            sub = x[rows]
            counts = np.bincount(sub.indices, minlength=x.shape[1])
            balance = np.minimum(counts, s - counts)
            j = int(np.argmax(balance))
            if balance[j] >= k:
                has = np.zeros(s, bool)
                holders = np.repeat(np.arange(s), np.diff(sub.indptr))[sub.indices == j]
                has[holders] = True
                stack.append(rows[~has])
                stack.append(rows[has])
                continue
        labels[rows] = region
        region += 1
    return labels
