"""Privacy models on the sensitive attribute(s): ℓ-diversity and t-closeness over candidates.

The adversary model is written down in ``docs/guarantees/sensitive.md``. In short: the attacker
knows every person's quasi-identifiers and the whole release. Person i's **candidates** are the
published rows that are i's in at least one perfect matching of the compatibility graph (row j
compatible with i iff every published cell of j contains i's value): exactly the rows that can
be i's in a world consistent with the release (the attacker's view, ``core.view``). The
attacker's belief about i's sensitive value is the distribution of the values shown on i's
candidates, each candidate counted once. On a release made of equivalence classes (Mondrian,
ARX, ANJANA) the candidates are i's class, so every model below is the textbook class-based
one; on a freeform release it is the same definition over a person's own candidate set.

Models (per sensitive column; p = value distribution over i's candidates, Q = the whole table's):

* distinct ℓ-diversity: at least ℓ distinct values (Machanavajjhala et al., TKDD 2007, §4.1);
* entropy ℓ-diversity: H(p) ≥ log ℓ (ibid., Definition 4.1);
* recursive (c, ℓ)-diversity: r₁ < c·(r_ℓ + r_ℓ₊₁ + … + r_m) with r₁ ≥ r₂ ≥ … the value counts
  (ibid., Definition 4.2);
* t-closeness: EMD(p, Q) ≤ t (Li, Li, Venkatasubramanian, ICDE 2007), with the equal ground
  distance for categorical values (EMD = ½ Σ |p − Q|) and the ordered distance for numeric ones
  (EMD = Σ_v |F_p(v) − F_Q(v)| / (m − 1) over the m distinct values of the table in order).

The same functions evaluate a *candidate structure* given as any 0/1 matrix person × row, so the
pipeline also applies them to the generalization graph's own neighbourhoods (the stronger,
mechanism-aware check of ``docs/guarantees/sensitive.md`` §3).

Complexity: the candidates are the view's (``core.view.AttackerView.candidates``: a max-flow
and a Dulmage–Mendelsohn pass on groups); the per-person statistics O(pairs + n·m) for ordered
t-closeness (m distinct values), O(pairs log pairs) otherwise. The verifier (``check_release``)
computes them on groups of identical originals and identical published rows
(``grouped_person_stats``): pairs between groups, not between people — a release of classes
costs O(n + Σ distinct originals per class · values).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numba import njit

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.models.disclosure import SensitiveModel
from anonymatch.tables.recode import GeneralizedQI

_KIND = {"distinct": 1, "entropy": 2, "recursive": 3}
_EPS = 1e-12  # float slack of the entropy and EMD comparisons


@dataclass(frozen=True)
class EncodedSensitive:
    """One sensitive column as codes 0..m−1 (values in sorted order: numeric order if
    ``ordered``), for the published rows and the original records, with the labels."""

    column: str
    labels: np.ndarray
    published: np.ndarray
    original: np.ndarray
    ordered: bool
    distribution: np.ndarray | None = None  # Q when ``original`` is only part of the table

    @property
    def m(self) -> int:
        return len(self.labels)

    def table_distribution(self) -> np.ndarray:
        """Q: the distribution of the original table's values."""
        if self.distribution is not None:
            return self.distribution
        counts = np.bincount(self.original, minlength=self.m)
        return counts / max(len(self.original), 1)


def encode_sensitive(
    column: str, published: pd.Series, original: pd.Series, ordered: bool
) -> EncodedSensitive:
    """Codes of one sensitive column in the release and the original. A missing value is an
    ordinary value (its own label) unless the column is ``ordered`` (numeric), where it is an
    input error, as is any non-number. Raises InputError if the release does not carry the
    original's multiset of values (a release must not alter sensitive values). O(n log n)."""
    pub, orig = _labels(column, published, ordered), _labels(column, original, ordered)
    labels, codes = np.unique(np.concatenate([orig, pub]), return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    enc = EncodedSensitive(column, labels, codes[len(orig) :], codes[: len(orig)], ordered)
    if len(enc.published) == len(enc.original) and not np.array_equal(
        np.bincount(enc.published, minlength=enc.m), np.bincount(enc.original, minlength=enc.m)
    ):
        raise InputError(
            f"the release's values of sensitive column {column!r} are not the original's"
        )
    return enc


def _labels(
    column: str, values: pd.Series, ordered: bool, rows: np.ndarray | None = None
) -> np.ndarray:
    """Labels of one column's values; ``rows`` (0-based input rows of ``values``, default
    0, 1, …) number the rows in messages."""
    if not ordered:
        return values.astype(str).where(values.notna(), "").to_numpy(dtype=str)
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(numbers)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        number = row + 1 if rows is None else int(rows[row]) + 1
        raise InputError(
            f"sensitive column {column!r} has the non-number {values.iloc[row]!r} "
            f"(row {number}); t-closeness with the ordered distance needs numbers"
        )
    return numbers


class SensitiveCodebook:
    """Global codes of one sensitive column read in batches (the streamed path): each batch's
    labels (as ``encode_sensitive`` makes them) go through one dictionary, and ``finish``
    renumbers the codes in sorted label order — the codes ``encode_sensitive`` gives the whole
    column. Memory: one int64 per row plus the distinct labels; never the values themselves."""

    def __init__(self, column: str, ordered: bool) -> None:
        self.column, self.ordered = column, ordered
        self._index: dict[object, int] = {}
        self._parts: list[np.ndarray] = []

    def add(self, values: pd.Series, rows: np.ndarray) -> None:
        """Code one batch of values; ``rows`` are their 0-based input rows (for messages).
        Raises InputError for a non-number in an ordered column. O(b log b) for b values."""
        unique, inverse = np.unique(
            _labels(self.column, values, self.ordered, rows), return_inverse=True
        )
        index = self._index
        ids = np.fromiter(
            (index.setdefault(v, len(index)) for v in unique.tolist()), np.int64, len(unique)
        )
        self._parts.append(ids[inverse.reshape(-1)])

    def finish(self) -> tuple[np.ndarray, int]:
        """The codes of every added value, in order (values 0..m−1 in sorted label order, numeric
        order if ``ordered``), and m. Releases the batches' codes."""
        labels = np.array(list(self._index))
        rank = np.empty(len(labels), np.int64)
        rank[np.argsort(labels, kind="stable")] = np.arange(len(labels))
        parts, self._parts = self._parts, []
        codes = rank[np.concatenate(parts)] if parts else np.empty(0, np.int64)
        return codes, len(labels)


@dataclass(frozen=True)
class PersonStats:
    """Per-person statistics of the values shown on a person's candidates (arrays over people).

    ``size``: candidates; ``distinct``: distinct values; ``top``: count of the most frequent
    value; ``entropy``: H(p) in nats; ``recursive_margin``: c·(r_ℓ+…+r_m) − r₁ (needs ℓ, c);
    ``emd``: distance to the table's distribution (needs the model's ground distance)."""

    size: np.ndarray
    distinct: np.ndarray
    top: np.ndarray
    entropy: np.ndarray
    emd: np.ndarray | None
    recursive_margin: np.ndarray | None


def person_stats(
    cand: sp.csr_array, sens: EncodedSensitive, model: SensitiveModel | None = None
) -> PersonStats:
    """Statistics of the sensitive values over each person's candidates (rows of ``cand``,
    columns = published rows). EMD is computed with the model's ground distance (equal distance
    if no model is given); the recursive margin only for a recursive model.
    Time O(pairs log pairs), plus O(n·m) for the ordered EMD; memory O(pairs)."""
    cand = sp.csr_array(cand)
    n = cand.shape[0]
    rows = np.repeat(np.arange(n), np.diff(cand.indptr))
    vals = sens.published[cand.indices]
    counts = sp.csr_array(
        (np.ones(len(rows), np.int64), (rows, vals)), shape=(n, sens.m)
    )  # duplicates are summed
    counts.sum_duplicates()
    counts.sort_indices()
    size = np.diff(cand.indptr).astype(np.int64)
    return _stats_of_counts(counts, size, sens, model)


def grouped_person_stats(
    cand: AttackerView, sens: EncodedSensitive, model: SensitiveModel | None = None
) -> PersonStats:
    """:func:`person_stats` of the expanded candidates, computed once per group of identical
    originals and dealt to its members: the same arrays (each person's value counts are their
    group's, summed in the same order). Time O(pairs between groups · values + n); memory
    O(n + U·values shown)."""
    g_rows = np.arange(len(cand.group))
    by_value = sp.csr_array(
        (np.ones(len(g_rows), np.int64), (cand.group, sens.published)),
        shape=(len(cand.mult), sens.m),
    )  # published rows of group g showing value v
    by_value.sum_duplicates()
    counts = sp.csr_array(sp.csr_array(cand.c, dtype=np.int64) @ by_value)
    counts.sum_duplicates()
    counts.eliminate_zeros()
    counts.sort_indices()
    stats = _stats_of_counts(counts, cand.per_original(), sens, model)
    inv = cand.inverse
    return PersonStats(
        stats.size[inv],
        stats.distinct[inv],
        stats.top[inv],
        stats.entropy[inv],
        None if stats.emd is None else stats.emd[inv],
        None if stats.recursive_margin is None else stats.recursive_margin[inv],
    )


def _stats_of_counts(
    counts: sp.csr_array,
    size: np.ndarray,
    sens: EncodedSensitive,
    model: SensitiveModel | None,
) -> PersonStats:
    """The statistics of rows of value counts (sorted CSR, rows × values) of ``size`` rows."""
    n = counts.shape[0]
    r = np.repeat(np.arange(n), np.diff(counts.indptr))
    data = counts.data.astype(np.float64)
    distinct = np.diff(counts.indptr).astype(np.int64)
    top = np.zeros(n, np.int64)
    np.maximum.at(top, r, counts.data)
    p = data / np.maximum(size[r], 1)
    entropy = np.zeros(n)
    np.add.at(entropy, r, -p * np.log(p))
    q = sens.table_distribution()
    emd = None
    if model is None or model.t is not None:
        if model is not None and model.ordered:
            emd = _ordered_emd(counts, size, q)
        else:
            diff = np.zeros(n)
            np.add.at(diff, r, np.abs(p - q[counts.indices]) - q[counts.indices])
            emd = 0.5 * (diff + 1.0)
    margin = None
    if model is not None and model.l is not None and model.diversity == "recursive":
        assert model.c is not None
        # rank of each count within its row, largest first
        order = np.lexsort((-counts.data, r))
        rank = np.arange(len(order)) - np.repeat(counts.indptr[:-1], distinct)
        sorted_counts = counts.data[order]
        tail = np.zeros(n)
        np.add.at(tail, r[order][rank >= model.l - 1], sorted_counts[rank >= model.l - 1])
        margin = model.c * tail - top
    return PersonStats(size, distinct, top, entropy, emd, margin)


def _ordered_emd(counts: sp.csr_array, size: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Ordered-distance EMD of every row of ``counts`` to ``q``, in chunks of rows so that the
    dense cumulative table stays near 2²² cells. O(n·m)."""
    n, m = counts.shape
    out = np.zeros(n)
    if m < 2:
        return out
    cq = np.cumsum(q)[:-1]
    step = max(1, (1 << 22) // m)
    for start in range(0, n, step):
        block = counts[start : start + step].toarray().astype(np.float64)
        block /= np.maximum(size[start : start + step], 1)[:, None]
        out[start : start + step] = np.abs(np.cumsum(block, axis=1)[:, :-1] - cq).sum(1) / (m - 1)
    return out


def failing(stats: PersonStats, model: SensitiveModel) -> np.ndarray:
    """Boolean mask of the people whose candidates violate ``model``."""
    bad = np.zeros(len(stats.size), dtype=bool)
    if model.l is not None:
        if model.diversity == "distinct":
            bad |= stats.distinct < model.l
        elif model.diversity == "entropy":
            bad |= stats.entropy < math.log(model.l) - _EPS
        else:
            assert stats.recursive_margin is not None
            bad |= stats.recursive_margin <= 0
    if model.t is not None:
        assert stats.emd is not None
        bad |= stats.emd > model.t + _EPS
    return bad


@dataclass(frozen=True)
class SensitiveCheck:
    """Outcome of checking one model. ``worst`` is the weakest person's figure: the fewest
    distinct values (distinct), exp(H) (entropy: the effective ℓ), the smallest recursive margin
    (recursive), and ``worst_emd`` the largest distance (t-closeness)."""

    column: str
    model: dict[str, object]
    passed: bool
    people: int
    failing: int
    homogeneous: int
    worst_l: float | None
    worst_emd: float | None
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def failed(cls, model: SensitiveModel, people: int, reason: str) -> SensitiveCheck:
        """The check of ``model`` failed for all ``people`` before any figure (``reason``:
        why the candidates could not be built)."""
        return cls(model.column, model.describe(), False, people, people, 0, None, None, reason)


def check_model(
    cand: sp.csr_array | AttackerView, sens: EncodedSensitive, model: SensitiveModel
) -> SensitiveCheck:
    """Check ``model`` over the candidate structure ``cand``: a person × row matrix (see
    ``person_stats``) or the candidates of an attacker's view (``grouped_person_stats``)."""
    if isinstance(cand, AttackerView):
        return check_stats(grouped_person_stats(cand, sens, model), model)
    return check_stats(person_stats(cand, sens, model), model)


def check_stats(stats: PersonStats, model: SensitiveModel) -> SensitiveCheck:
    """Check ``model`` on the per-person statistics of its column (``person_stats``, or
    ``grouped_person_stats``: the same arrays). O(n)."""
    bad = failing(stats, model)
    n = len(stats.size)
    worst_l: float | None = None
    if model.l is not None and n:
        if model.diversity == "distinct":
            worst_l = float(stats.distinct.min())
        elif model.diversity == "entropy":
            worst_l = float(np.exp(stats.entropy.min()))
        else:
            assert stats.recursive_margin is not None
            worst_l = float(stats.recursive_margin.min())
    worst_emd = (
        float(stats.emd.max()) if model.t is not None and stats.emd is not None and n else None
    )
    homogeneous = int((stats.distinct == 1).sum())
    if not bad.any():
        reason = "ok"
    else:
        i = int(np.flatnonzero(bad)[0])
        what = []
        if model.l is not None:
            what.append(
                f"{stats.distinct[i]} distinct value(s), entropy-l {math.exp(stats.entropy[i]):.2f}"
            )
        if model.t is not None and stats.emd is not None:
            what.append(f"distance {stats.emd[i]:.3f} > t = {model.t}")
        reason = (
            f"{int(bad.sum())} of {n} people fail on {model.column!r}; person {i + 1} "
            f"has {stats.size[i]} candidates showing " + "; ".join(what)
        )
    return SensitiveCheck(
        model.column,
        model.describe(),
        not bool(bad.any()),
        n,
        int(bad.sum()),
        homogeneous,
        worst_l,
        worst_emd,
        reason,
    )


def merge_checks(a: SensitiveCheck, b: SensitiveCheck) -> SensitiveCheck:
    """One check of the same model over the people of both (e.g. two partitions)."""
    worst_l = min((x for x in (a.worst_l, b.worst_l) if x is not None), default=None)
    worst_emd = max((x for x in (a.worst_emd, b.worst_emd) if x is not None), default=None)
    return SensitiveCheck(
        a.column,
        a.model,
        a.passed and b.passed,
        a.people + b.people,
        a.failing + b.failing,
        a.homogeneous + b.homogeneous,
        worst_l,
        worst_emd,
        a.reason if not a.passed or b.passed else b.reason,
    )


def check_release(
    published: GeneralizedQI,
    original: EncodedQI,
    published_table: pd.DataFrame,
    original_table: pd.DataFrame,
    models: Sequence[SensitiveModel],
) -> list[SensitiveCheck]:
    """Check every model from the release and the original alone: candidates from the QI
    cells, values from the release's sensitive columns, the table's distribution from the
    original's. Raises InputError if a sensitive column is missing from the release or does not
    carry the original's values. Cost: the candidates of the attacker's view once
    (``tables.verify.attacker_view``: a max-flow on the groups of identical originals and
    identical published rows), then ``grouped_person_stats`` per model: O(n + pairs between
    groups · values), never the person × row matrix (n² entries for a release of one class)."""
    from anonymatch.tables.verify import attacker_view

    if not models:
        return []
    cand = attacker_view(published, original).candidates()
    checks = []
    for model in models:
        if model.column not in published_table.columns:
            raise InputError(f"the release has no sensitive column {model.column!r}")
        sens = encode_sensitive(
            model.column,
            published_table[model.column],
            original_table[model.column],
            model.ordered,
        )
        if cand is None:
            reason = "the compatibility graph has no perfect matching"
            checks.append(SensitiveCheck.failed(model, original.n, reason))
        else:
            checks.append(check_stats(grouped_person_stats(cand, sens, model), model))
    return checks


@dataclass(frozen=True)
class SensitiveTarget:
    """The sensitive values of the records being anonymized and their models, packed for the
    numba kernels. ``codes[i, s]``: code of record i in column s; column s occupies count
    slots ``offsets[s]:offsets[s + 1]``; ``q`` the whole table's distributions (flat, same
    slots) — kept whole when ``take`` restricts the records, since t-closeness compares with the
    table."""

    codes: np.ndarray
    offsets: np.ndarray
    kinds: np.ndarray
    ls: np.ndarray
    cs: np.ndarray
    ts: np.ndarray
    ordered: np.ndarray
    q: np.ndarray
    models: tuple[SensitiveModel, ...]

    @classmethod
    def build(
        cls, codes: list[np.ndarray], sizes: list[int], models: tuple[SensitiveModel, ...]
    ) -> SensitiveTarget:
        """From per-column code arrays (values 0..sizes[s]−1) and the models, in one order."""
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        q = np.concatenate(
            [
                np.bincount(c, minlength=m) / max(len(c), 1)
                for c, m in zip(codes, sizes, strict=True)
            ]
        )
        return cls(
            codes=np.column_stack(codes).astype(np.int64),
            offsets=offsets,
            kinds=np.array([_KIND[m.diversity] if m.l is not None else 0 for m in models]),
            ls=np.array([m.l or 0 for m in models], dtype=np.int64),
            cs=np.array([m.c or 0.0 for m in models], dtype=np.float64),
            ts=np.array([m.t if m.t is not None else -1.0 for m in models], dtype=np.float64),
            ordered=np.array([m.ordered for m in models], dtype=np.bool_),
            q=q.astype(np.float64),
            models=models,
        )

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    def take(self, rows: np.ndarray) -> SensitiveTarget:
        """The same models and table distributions, for ``rows`` only."""
        return SensitiveTarget(
            self.codes[rows],
            self.offsets,
            self.kinds,
            self.ls,
            self.cs,
            self.ts,
            self.ordered,
            self.q,
            self.models,
        )

    def counts(self, rows: np.ndarray) -> np.ndarray:
        """Value counts of ``rows`` in the flat slot layout."""
        out = np.zeros(int(self.offsets[-1]), dtype=np.int64)
        for s in range(self.codes.shape[1]):
            out[self.offsets[s] : self.offsets[s + 1]] = np.bincount(
                self.codes[rows, s], minlength=int(self.offsets[s + 1] - self.offsets[s])
            )
        return out

    def ok(self, counts: np.ndarray) -> np.ndarray:
        """``counts_ok`` over the rows of a (R, slots) count matrix."""
        return counts_ok(
            np.ascontiguousarray(counts, dtype=np.int64),
            self.offsets,
            self.kinds,
            self.ls,
            self.cs,
            self.ts,
            self.ordered,
            self.q,
        )

    def check_table(self) -> None:
        """Raise InfeasibleError if the records themselves, as one class, fail a model: then
        no partition into classes can satisfy it (the union of classes that satisfy a model
        satisfies it: ``docs/guarantees/sensitive.md`` §4)."""
        unmet = self.first_unmet()
        if unmet is not None:
            model, distinct = unmet
            default = (
                " (the default for a named sensitive column; `l` 1 publishes it unprotected)"
                if model.default
                else ""
            )
            raise InfeasibleError(
                f"infeasible: the table's column {model.column!r} ({distinct} distinct "
                f"values) cannot satisfy {describe_model(model)}{default} even as one class"
            )

    def first_unmet(self) -> tuple[SensitiveModel, int] | None:
        """The first model that the records, as one class, fail, with the number of distinct
        values of its column among them; None if they satisfy every model. O(n·s + slots)."""
        counts = self.counts(np.arange(self.n))
        for s, model in enumerate(self.models):
            lo, hi = self.offsets[s], self.offsets[s + 1]
            only = SensitiveTarget(
                self.codes[:, s : s + 1],
                np.array([0, hi - lo]),
                self.kinds[s : s + 1],
                self.ls[s : s + 1],
                self.cs[s : s + 1],
                self.ts[s : s + 1],
                self.ordered[s : s + 1],
                self.q[lo:hi],
                (model,),
            )
            if not only.ok(counts[None, lo:hi])[0]:
                return model, int(np.count_nonzero(counts[lo:hi]))
        return None


def describe_model(model: SensitiveModel) -> str:
    """The model in words, for messages."""
    parts = []
    if model.l is not None:
        extra = f", c = {model.c:g}" if model.diversity == "recursive" else ""
        parts.append(f"{model.diversity} l-diversity with l = {model.l}{extra}")
    if model.t is not None:
        parts.append(f"t-closeness with t = {model.t:g}")
    return " and ".join(parts)


@njit(cache=True, nogil=True)
def column_ok(counts, kind, ell, c, t, ordered, q):  # pragma: no cover - compiled
    """Whether one column's value counts satisfy its model (class-based definitions)."""
    m = counts.shape[0]
    total = 0
    distinct = 0
    top = 0
    for v in range(m):
        total += counts[v]
        if counts[v] > 0:
            distinct += 1
        top = max(top, counts[v])
    if total == 0:
        return False
    if kind == 1 and distinct < ell:
        return False
    if kind == 2:
        h = 0.0
        for v in range(m):
            if counts[v] > 0:
                p = counts[v] / total
                h -= p * math.log(p)
        if h < math.log(ell) - 1e-12:
            return False
    if kind == 3:
        if distinct < ell:
            return False
        srt = np.sort(counts)[::-1]
        tail = 0
        for v in range(ell - 1, m):
            tail += srt[v]
        if not srt[0] < c * tail:
            return False
    if t >= 0:
        emd = 0.0
        if ordered:
            if m > 1:
                cp, cq = 0.0, 0.0
                for v in range(m - 1):
                    cp += counts[v] / total
                    cq += q[v]
                    emd += abs(cp - cq)
                emd /= m - 1
        else:
            for v in range(m):
                emd += abs(counts[v] / total - q[v])
            emd *= 0.5
        if emd > t + 1e-12:
            return False
    return True


@njit(cache=True, nogil=True)
def row_ok(counts, offsets, kinds, ls, cs, ts, ordered, q):  # pragma: no cover - compiled
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        if not column_ok(counts[a:b], kinds[s], ls[s], cs[s], ts[s], ordered[s], q[a:b]):
            return False
    return True


@njit(cache=True, nogil=True)
def counts_ok(counts, offsets, kinds, ls, cs, ts, ordered, q):  # pragma: no cover - compiled
    """For each row of ``counts`` (R × slots): whether every column's counts satisfy its
    model. O(R·slots) (plus a sort per row and column for recursive diversity)."""
    out = np.empty(counts.shape[0], np.bool_)
    for r in range(counts.shape[0]):
        out[r] = row_ok(counts[r], offsets, kinds, ls, cs, ts, ordered, q)
    return out
