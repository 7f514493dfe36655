"""Randomized response on a binary matrix — Algorithm 1 of Esfandiari et al. (§4.1, App. B.1).

Every entry (u, f) is, with probability p, replaced by a fair coin; otherwise it is kept. So an
original 1 is published as 1 with probability 1 − p/2 and an original 0 as 1 with probability
p/2. Edge-DP (Theorem B.1): p = 2/(1 + e^ε). Node-DP: p = 2/(1 + e^{ε/|F|}), |F| the number of
columns (the paper's setting; it converges to 1 quickly, which is the paper's point).

The zeros are never enumerated: the number of created entries is drawn as
Binomial(#zeros, p/2) and their positions as a uniform random subset of the zero positions
(rejection of the original ones), which is the same distribution as flipping every entry
independently. Time and memory O(nnz + created); a release with more than ``max_created``
new entries is refused (it would be a dense matrix).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.sparse.io import as_binary_csr

LEVELS = ("edge", "node")


def flip_probability(epsilon: float, level: str = "edge", n_cols: int = 1) -> float:
    """p of Algorithm 1 for ε-DP at the edge level (2/(1+e^ε)) or node level (2/(1+e^{ε/|F|}))."""
    if not epsilon > 0 or not math.isfinite(epsilon):
        raise InputError(f"epsilon must be a positive number, got {epsilon}")
    if level not in LEVELS:
        raise InputError(f"unknown DP level {level!r} (expected one of {LEVELS})")
    e = epsilon if level == "edge" else epsilon / max(1, n_cols)
    return 2.0 / (1.0 + math.exp(min(e, 700.0)))


def randomized_response(
    x: sp.csr_array | sp.csr_matrix,
    epsilon: float,
    level: str = "edge",
    seed: int | np.random.SeedSequence | None = None,
    max_created: int = 200_000_000,
) -> sp.csr_array:
    """The randomized-response release of ``x`` (same shape, int8 0/1 CSR)."""
    x = as_binary_csr(x)
    n, m = x.shape
    p = flip_probability(epsilon, level, m)
    rng = np.random.default_rng(seed)
    coo = x.tocoo()
    rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
    keep = rng.random(rows.size) >= p / 2
    total = n * m
    zeros = total - rows.size
    created = int(rng.binomial(zeros, p / 2)) if zeros > 0 else 0
    if created > max_created:
        raise InputError(
            f"randomized response at epsilon = {epsilon} would create about {created:,} entries"
            f" (limit {max_created:,}); use a larger epsilon"
        )
    edges = np.sort(rows * m + cols)
    if created > zeros // 2:
        # dense regime: draw the complement (the zeros that stay 0) instead
        chosen = _complement(_sample_nonedges(rng, zeros - created, total, edges), total, edges)
    else:
        chosen = _sample_nonedges(rng, created, total, edges)
    new_r, new_c = np.divmod(chosen, m)
    out = sp.csr_array(
        (
            np.ones(int(keep.sum()) + chosen.size, np.int8),
            (np.concatenate([rows[keep], new_r]), np.concatenate([cols[keep], new_c])),
        ),
        shape=(n, m),
    )
    out.sum_duplicates()
    out.sort_indices()
    return out


def _sample_nonedges(
    rng: np.random.Generator, count: int, total: int, edges: np.ndarray
) -> np.ndarray:
    """``count`` distinct positions drawn uniformly from [0, total) minus ``edges`` (sorted)."""
    chosen = np.empty(0, np.int64)
    while chosen.size < count:
        need = count - chosen.size
        draw = rng.integers(0, total, size=int(need * 1.1) + 64, dtype=np.int64)
        draw = draw[~_member(draw, edges)]
        draw = np.concatenate([chosen, draw])
        _, first = np.unique(draw, return_index=True)
        chosen = draw[np.sort(first)]  # keep the draw order: a uniform random subset
    return chosen[:count]


def _complement(positions: np.ndarray, total: int, edges: np.ndarray) -> np.ndarray:
    mask = np.ones(total, bool)
    mask[edges] = False
    mask[positions] = False
    return np.flatnonzero(mask).astype(np.int64)


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if sorted_set.size == 0:
        return np.zeros(values.size, bool)
    pos = np.searchsorted(sorted_set, values)
    pos[pos == sorted_set.size] = 0
    return sorted_set[pos] == values
