"""Record suppression within a limit (ARX's "suppression limit"): drop a few outliers.

A record far from every other one forces wide cells on the rows it is linked to. With a
suppression limit s (a share of the records), up to ⌊s·n⌋ such records are dropped from the
release before it is built; the guarantee then holds for the published people, and the dropped
ones are not in the release at all (docs/guarantees/missing.md §Suppression).

Which records — the heuristic (cheap, and sound in what it claims):

* **score** of record i: the sum of its k − 1 smallest *pair costs* c(i, j) over the other
  records j of its partition (the lexicographic partitions the freeform methods use, of the
  method's partition size), where c(i, j) is the weighted GCP of one published row covering
  exactly i and j (NCP 1 where either value is missing). In a k-regular generalization graph
  i is linked to k − 1 published rows besides its own, each covering i and that row's own
  distinct original j, and a row's loss only grows with what it covers, so **score_i is a lower
  bound on the total loss of the k − 1 rows that must cover i** (within its partition, the only
  records a partitioned method can link it to).
* **selection**: records by decreasing score, only those whose score is above the mean score
  (dropping one lowers the mean of the scores: it removes an above-average lower bound), at most
  ⌊s·n⌋ and never leaving fewer than k records.

Complexity: O(n·P·d) time and O(P²) memory per partition of P records (one matrix of the
freeform weights per partition), i.e. about the cost of one freeform iteration.
"""

from __future__ import annotations

import numpy as np

from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import partitions, registry
from anonymatch.tables.methods.freeform import singleton_cells
from anonymatch.tables.metrics import PublishedCells, TreeTables, gcp_increase_weights


def outlier_scores(qi: EncodedQI, k: int, partition_size: int | None = None) -> np.ndarray:
    """score_i = sum of the k − 1 smallest pair costs of record i within its partition (see the
    module docstring). O(n·P·d) time, O(P²) memory."""
    scores = np.zeros(qi.n)
    if k <= 1 or qi.n < 2:
        return scores
    size = partition_size or registry()["hungarian"].partition_size_for(k)
    assert size is not None
    for ids in partitions(qi, size):
        scores[ids] = _partition_scores(qi.take(ids), k)
    return scores


def _partition_scores(part: EncodedQI, k: int) -> np.ndarray:
    m = part.n
    # singleton cells: bounds = own value (present), membership = own label
    lo, hi, member, local_qi = singleton_cells(part)
    trees = TreeTables.build(part)  # a hierarchy's cell starts as the record's own leaf
    level = np.zeros(part.cat.shape, np.int64)
    cells = PublishedCells(lo, hi, member, part.cat, level, part.num_missing, part.cat_missing)
    w = gcp_increase_weights(local_qi, cells, trees, leaf=part.cat)
    num_full, cat_full = part.star_scales()
    own = part.num_missing.astype(float) @ num_full + part.cat_missing.astype(float) @ cat_full
    pair = w + own[None, :]  # cost of j's row grown to cover i: c(i, j)
    np.fill_diagonal(pair, np.inf)
    nearest = np.partition(pair, k - 2, axis=1)[:, : k - 1] if m > k - 1 else pair[:, :0]
    return np.asarray(nearest.sum(axis=1), dtype=np.float64)


def choose_outliers(
    qi: EncodedQI, k: int, limit: float, partition_size: int | None = None
) -> np.ndarray:
    """Records to drop under suppression limit ``limit``: a boolean mask with at most
    ⌊limit·n⌋ True entries, leaving at least k records (see the module docstring)."""
    n = qi.n
    budget = min(int(np.floor(limit * n + 1e-9)), max(n - k, 0))
    drop = np.zeros(n, dtype=bool)
    if budget <= 0:
        return drop
    scores = outlier_scores(qi, k, partition_size)
    order = np.argsort(-scores, kind="stable")[:budget]
    order = order[scores[order] > scores.mean()]
    drop[order] = True
    return drop
