"""Utility of set-valued releases (Xue et al., KDD 2012 §5).

- Error Rate (§5.1): the average over original records r_i of H(r_i, r'_{a(i)}) / |r_i|, where
  r'_{a(i)} is the published base bitmap of r_i's true match (the chosen assignment).
- Query Error (§5.2): for random count queries of Type I (records ⊇ In) and Type II
  (records ∩ Ex = ∅), |C_o − C_a| / n averaged over the queries, C_o counted on the original
  data and C_a on the published base bitmaps (the paper does not say how uncertain bits enter
  the anonymized count; we count the base, the release's best single guess of every record).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from anonymatch.sets.io import SetRelease, Transactions


def _row_hamming(a: sp.csr_array, b: sp.csr_array) -> np.ndarray:
    """H(a_i, b_i) for every row i of two CSR bitmaps of equal shape. O(total items)."""
    common = np.asarray(a.multiply(b).sum(axis=1)).reshape(-1)
    return np.diff(a.indptr) + np.diff(b.indptr) - 2 * common


def error_rate(original: sp.csr_array, base: sp.csr_array, assignment: np.ndarray) -> float:
    """ER (§5.1): mean of H(r_i, base[assignment[i]]) / |r_i| over the records with |r_i| > 0.
    ``assignment[i]`` is the row of ``base`` that is r_i's true match."""
    x = sp.csr_array(original).astype(np.int8)
    matched = sp.csr_array(base)[np.asarray(assignment)].astype(np.int8)
    if matched.shape[1] != x.shape[1]:
        width = max(matched.shape[1], x.shape[1])
        x = sp.csr_array((x.data, x.indices, x.indptr), shape=(x.shape[0], width))
        matched = sp.csr_array(
            (matched.data, matched.indices, matched.indptr), shape=(x.shape[0], width)
        )
    h = _row_hamming(x, matched)
    size = np.diff(x.indptr)
    keep = size > 0
    return float(np.mean(h[keep] / size[keep])) if keep.any() else 0.0


def total_hamming(original: sp.csr_array, base: sp.csr_array, assignment: np.ndarray) -> int:
    """Σ_i H(r_i, base[assignment[i]]): the published-to-original Hamming total."""
    x = sp.csr_array(original).astype(np.int8)
    matched = sp.csr_array(base)[np.asarray(assignment)].astype(np.int8)
    return int(_row_hamming(x, matched).sum())


@dataclass(frozen=True)
class QueryError:
    type1: float
    type2: float
    n_queries: int
    n_in: int
    n_ex: int

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def random_queries(
    n_items: int, size: int, n_queries: int, rng: np.random.Generator
) -> sp.csr_array:
    """n_queries random item sets of ``size`` distinct items, as a b × q indicator matrix."""
    size = min(size, n_items)
    cols = np.concatenate([rng.choice(n_items, size, replace=False) for _ in range(n_queries)])
    rows = np.repeat(np.arange(n_queries), size)
    q = sp.csr_array((np.ones(len(cols), np.int32), (rows, cols)), shape=(n_queries, n_items))
    return sp.csr_array(q.T)


def _counts(x: sp.csr_array, queries: sp.csr_array, size: int, kind: int) -> np.ndarray:
    out = np.empty(queries.shape[1], np.int64)
    xi = sp.csr_array(x).astype(np.int32)
    for lo in range(0, queries.shape[1], 64):  # chunks keep n × 64 dense at most
        hit = (xi @ queries[:, lo : lo + 64]).toarray()
        out[lo : lo + 64] = (hit == size).sum(axis=0) if kind == 1 else (hit == 0).sum(axis=0)
    return out


def query_error(
    original: sp.csr_array,
    base: sp.csr_array,
    n_in: int,
    n_ex: int,
    rng: np.random.Generator,
    n_queries: int = 500,
) -> QueryError:
    """QE (§5.2) of Type I (|In| = n_in) and Type II (|Ex| = n_ex) queries, items drawn
    uniformly from the universe; the same queries for every release given the same ``rng``
    state. O(q · total items)."""
    n, b = original.shape
    base = sp.csr_array(base)
    if base.shape[1] != b:
        base = sp.csr_array(base[:, :b]) if base.shape[1] > b else base
    q_in = random_queries(b, n_in, n_queries, rng)
    q_ex = random_queries(b, n_ex, n_queries, rng)
    e1 = np.abs(_counts(original, q_in, min(n_in, b), 1) - _counts(base, q_in, min(n_in, b), 1))
    e2 = np.abs(_counts(original, q_ex, 0, 2) - _counts(base, q_ex, 0, 2))
    return QueryError(float(e1.mean() / n), float(e2.mean() / n), n_queries, n_in, n_ex)


@dataclass(frozen=True)
class SetUtility:
    """Utility of a set-valued release measured from the files (``evaluate-sets``)."""

    query_error_type1: float
    query_error_type2: float
    expected_error_rate: float
    mean_max_errors: float
    mean_uncertain: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def expected_error_rate(original: Transactions, release: SetRelease) -> float:
    """ER (§5.1) in expectation over the compatible published records of each original (the
    true match, hidden by the release, is uniform over them when they are exactly the graph's
    matches): mean over originals of the mean H(r, base_j)/|r| over the compatible j.
    O(compatible pairs · mean record size)."""
    from anonymatch.core.view import group_sets
    from anonymatch.sets.verify import set_view

    c = set_view(release, original).c
    uniq, counts, _ = group_sets(original.matrix)
    b = release.base.shape[1]
    x = sp.csr_array((uniq.data, uniq.indices, uniq.indptr), shape=(uniq.shape[0], b))
    coo = c.tocoo()
    xs = x[coo.row].astype(np.int8)
    bs = sp.csr_array(release.base)[coo.col].astype(np.int8)
    common = np.asarray(xs.multiply(bs).sum(axis=1)).reshape(-1)
    size = np.diff(x.indptr)[coo.row]
    h = size + np.diff(bs.indptr) - 2 * common
    per_u = np.bincount(coo.row, weights=h / size, minlength=x.shape[0])
    deg = np.bincount(coo.row, minlength=x.shape[0])
    return float(np.sum(counts * per_u / np.maximum(deg, 1)) / counts.sum())


def set_utility(
    original: Transactions,
    release: SetRelease,
    queries: int = 500,
    in_size: int = 3,
    ex_size: int = 4,
    seed: int | None = 0,
) -> SetUtility:
    """Query error (§5.2, ``queries`` random queries drawn with ``seed``), expected error rate
    and the release's mean threshold and uncertain-set size."""
    qe = query_error(
        original.matrix, release.base, in_size, ex_size, np.random.default_rng(seed), queries
    )
    return SetUtility(
        qe.type1,
        qe.type2,
        expected_error_rate(original, release),
        float(release.max_errors.mean()),
        float(np.diff(release.uncertain.indptr).mean()),
    )
