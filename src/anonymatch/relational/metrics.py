"""Utility of relational-transaction releases, as analysts of such data measure it.

- **Relational GCP**: the GCP of the QI cells (Doka et al. eq. 3, ``tables.metrics``), the loss
  of the relational part (Poulis et al., ECML PKDD 2013, measure the two parts apart).
- **Uncertain items per record**: the mean size of the published ``uncertain`` lists (the items
  on which a record's possible preimages disagree), and the mean ``max_errors``.
- **Query error**: a workload of random count queries, each mixing attribute predicates (a
  range of a numeric QI, a set of values of a categorical one) and an item predicate ("holds
  item c"). The answer on the original counts the people; the estimate on the release sums,
  over published records, the probability that the record satisfies the query under the usual
  uniformity assumption: the share of a range cell (integers counted for integral attributes)
  or of a value-set cell inside the predicate, times the probability that the record holds the
  item: 1 for an item of the base that is not uncertain, 0 for an item outside base and
  uncertain items, and for an uncertain item f_j = min(1/2, (t_j / 2) / |uncertain_j|) — the
  record's true set differs from its base in at most t_j = ``max_errors`` items, taken here to
  be t_j / 2 flips spread evenly over its uncertain items — if it is outside the base, 1 − f_j
  if it is in it. The relative error is |estimate − answer| / max(answer, s) with the
  sanity bound s = 0.1 % of the people (LeFevre et al., "Workload-aware anonymization", 2006).
  Each query is drawn around a random person holding an item, so every answer is ≥ 1.
- **Candidates per person**: the number of published records a person matches on the joint
  compatibility graph (``anonymatch.relational.verify.joint_view``), the adversary's
  choice when they know the person's row and whole set (its minimum is ≥ k in a k-anonymous
  release; 1 / candidates bounds the prosecutor risk of a person whose record is chosen
  uniformly among their matches).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

from anonymatch.relational.io import People, RelationalRelease
from anonymatch.sets.io import SetRelease
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.recode import GeneralizedQI


def flip_probability(sets: SetRelease) -> np.ndarray:
    """Per published record, f_j = min(1/2, (t_j / 2) / |uncertain_j|): the probability the
    estimates give each uncertain item of differing from the base. O(n)."""
    size = np.diff(sp.csr_array(sets.uncertain).indptr).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(size > 0, 0.5 * sets.max_errors / size, 0.0)
    return np.minimum(f, 0.5)


def mean_uncertain(sets: SetRelease) -> float:
    """Mean number of uncertain items per published record. O(n)."""
    return float(np.diff(sets.uncertain.indptr).mean()) if sets.n else 0.0


@dataclass(frozen=True)
class Query:
    """One count query: numeric predicates (attribute, low, high), categorical predicates
    (attribute, allowed codes) and an item (column of the original universe)."""

    numeric: tuple[tuple[int, float, float], ...]
    categorical: tuple[tuple[int, tuple[int, ...]], ...]
    item: int


def random_workload(
    enc: EncodedQI, items: sp.csr_array, queries: int, attributes: int, seed: int | None
) -> list[Query]:
    """``queries`` random queries with ``attributes`` attribute predicates each (at most the
    number of QIs) and one item predicate, drawn around random people holding an item: the
    range spans the person's value and another person's, the value set holds the person's
    value and one random value, the item is one of the person's. O(queries · d)."""
    rng = np.random.default_rng(seed)
    x = sp.csr_array(items)
    holders = np.flatnonzero(np.diff(x.indptr) > 0)
    dn, dc = enc.num.shape[1], enc.cat.shape[1]
    d = dn + dc
    out = []
    for _ in range(queries):
        r = int(rng.choice(holders))
        other = int(rng.integers(enc.n))
        chosen = rng.choice(d, size=min(attributes, d), replace=False)
        numeric, categorical = [], []
        for a in sorted(int(a) for a in chosen):
            if a < dn:
                v = [enc.num[r, a], enc.num[other, a]]
                if np.isnan(v).any():
                    continue
                numeric.append((a, float(min(v)), float(max(v))))
            else:
                c = a - dn
                if enc.cat_missing[r, c]:
                    continue
                codes = {int(enc.cat[r, c]), int(rng.integers(enc.cat_card[c]))}
                categorical.append((c, tuple(sorted(codes))))
        row = x.indices[x.indptr[r] : x.indptr[r + 1]]
        out.append(Query(tuple(numeric), tuple(categorical), int(rng.choice(row))))
    return out


def _true_count(query: Query, enc: EncodedQI, items: sp.csc_array) -> int:
    ok = np.zeros(enc.n, bool)
    ok[items.indices[items.indptr[query.item] : items.indptr[query.item + 1]]] = True
    for a, lo, hi in query.numeric:
        ok &= ~enc.num_missing[:, a] & (enc.num[:, a] >= lo) & (enc.num[:, a] <= hi)
    for c, codes in query.categorical:
        ok &= ~enc.cat_missing[:, c] & np.isin(enc.cat[:, c], codes)
    return int(ok.sum())


def _estimate(
    query: Query, cells: GeneralizedQI, enc: EncodedQI, sets: SetRelease, flip: np.ndarray
) -> float:
    """Σ_j P(record j satisfies the query); ``sets`` in CSC (columns = items). O(n·d)."""
    n = cells.n
    p = np.zeros(n)
    base, unc = sets.base, sets.uncertain
    p[base.indices[base.indptr[query.item] : base.indptr[query.item + 1]]] = 1.0
    unc_rows = unc.indices[unc.indptr[query.item] : unc.indptr[query.item + 1]]
    p[unc_rows] = np.abs(p[unc_rows] - flip[unc_rows])  # in base: 1 − f, else f
    for a, lo, hi in query.numeric:
        present = enc.num[~enc.num_missing[:, a], a]
        low = np.where(cells.num_star[:, a], present.min(), cells.num_lo[:, a])
        high = np.where(cells.num_star[:, a], present.max(), cells.num_hi[:, a])
        step = 1.0 if enc.num_integral[a] else 0.0
        inside = np.minimum(high, hi) - np.maximum(low, lo) + step
        width = high - low + step
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(width > 0, inside / width, (low >= lo) & (low <= hi))
        p *= np.clip(share, 0.0, 1.0)
    for c, codes in query.categorical:
        s = cells.cat_sets[c]
        size = np.diff(s.indptr).astype(np.float64)
        hit = np.asarray(s[:, list(codes)].sum(axis=1)).reshape(-1) if len(codes) else 0.0
        star = cells.cat_star[:, c]
        share = np.where(star, len(codes) / max(int(enc.cat_card[c]), 1), hit / np.maximum(size, 1))
        p *= share
    return float(p.sum())


@dataclass(frozen=True)
class RelationalUtility:
    """Utility of a relational-transaction release (``evaluate-rt``)."""

    relational_gcp: float
    ncp: dict[str, float]
    mean_uncertain: float
    mean_max_errors: float
    query_error: float
    query_error_median: float
    queries: int
    min_candidates: int
    median_candidates: float

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def relational_utility(
    people: People,
    release: RelationalRelease,
    enc: EncodedQI,
    queries: int = 1000,
    attributes: int = 2,
    seed: int | None = 0,
) -> RelationalUtility:
    """The utility figures of a release from the original people and the published text.

    Parameters
    ----------
    people : People
        The original people.
    release : RelationalRelease
        The release (its QI cells are parsed against ``enc``).
    enc : EncodedQI
        The people's encoded QIs.
    queries : int, default 1000
        Count queries of the workload.
    attributes : int, default 2
        Attribute predicates per query (besides the item predicate).
    seed : int or None, default 0
        Seed of the workload (the same queries for every release of the same people).

    Returns
    -------
    RelationalUtility

    Notes
    -----
    Time O(queries · n · (d + set sizes)) plus the joint compatibility of the verifier,
    memory O(n·d + pairs).
    """
    from anonymatch.relational.verify import joint_view

    view = joint_view(release, people, enc)
    candidates = view.per_original()[view.inverse]
    cells = parse_cells(release.table, enc)
    loss = information_loss(cells, enc)
    work = random_workload(enc, people.items.matrix, queries, attributes, seed)
    by_item = sp.csc_array(people.items.matrix)
    b = people.items.matrix.shape[1]
    sets = release.sets
    if sets.base.shape[1] > b:  # items the original never had: never asked
        sets = SetRelease(
            sp.csr_array(sets.base[:, :b]), sp.csr_array(sets.uncertain[:, :b]),
            sets.max_errors, sets.labels, sets.items[:b], sets.integer_items,
        )  # fmt: skip
    sets = SetRelease(
        sp.csc_array(sets.base), sp.csc_array(sets.uncertain), sets.max_errors, None,
        sets.items, sets.integer_items,
    )  # fmt: skip
    bound = max(1.0, 0.001 * people.n)
    flip = flip_probability(release.sets)
    errors = np.array(
        [
            abs(_estimate(q, cells, enc, sets, flip) - (truth := _true_count(q, enc, by_item)))
            / max(truth, bound)
            for q in work
        ]
    )
    return RelationalUtility(
        loss.gcp,
        loss.ncp,
        mean_uncertain(release.sets),
        float(release.sets.max_errors.mean()) if release.n else 0.0,
        float(errors.mean()) if len(errors) else 0.0,
        float(np.median(errors)) if len(errors) else 0.0,
        len(work),
        int(candidates.min()) if len(candidates) else 0,
        float(np.median(candidates)) if len(candidates) else 0.0,
    )
