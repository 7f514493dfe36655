"""Leakage of the columns a table release keeps unchanged: what they give away about the QIs.

A release generalizes its quasi-identifiers (QIs) and keeps every other column (sensitive and
"other" columns) as it is. A kept column can undo the generalization: in UCI Adult,
``education`` determines ``education-num`` exactly, so a row showing ``education = Bachelors``
beside ``education-num = 9..13`` has really published ``13``; ``relationship = Husband``
reveals ``sex = Male``. The k-anonymity proof still holds for the QI cells as published, but the
attacker who reads the kept value next to them learns more than the cells say. This module
measures it, from the original and the release only:

* **dependencies** — for each kept column C, QI A and kept value v with at least
  ``min_support`` original rows, the *rule* of v rules out the A values that v's rows would
  show at least ``min_expected`` times were C and A independent (by A's frequencies in the
  table) and show at most ``tolerance`` times that often: none at all when ``tolerance`` = 0
  (a functional dependency: ``education = Doctorate`` rules out every ``education-num`` but
  16), a few stray rows otherwise (near-functional: one ``Husband`` in 12,463 is female).
  Values too rare to be expected are never ruled out, so a small group's sparsity is not read
  as a dependency. A published row showing v *leaks* on A (is *narrowed*) when the values of
  its A cell (those present in the original; the whole domain for ``*``) that the rule leaves
  are at least one and at most ``narrow_factor`` of them: the kept value pins the cell
  narrower than published; *pinned* when it leaves exactly one.
* **unique on their own** — rows whose kept value no other row has (``fnlwgt``): anyone who
  knows such a value finds the row, whatever k.
* **free-text identifiers** — a text column whose values are mostly distinct (a key, a name,
  a comment) or look like e-mail addresses, phone numbers or URLs.

A kept column is *flagged* when its leaked rows, unique rows or free-text evidence reach the
thresholds of :class:`LeakageOptions`; ``anonymize`` warns about flagged columns (and refuses
under ``--strict``), ``init`` proposes them as QIs or identifiers, the report and the web app
list them with these figures.

Complexity: per kept column, O(n log n) to factorize it and, per QI, O(n + pairs) for the
contingency of (kept value, QI value) pairs (sparse: at most n pairs), O(nnz) of the published
value sets or O(n log n) for ranges. Memory O(n + pairs); never a dense kept × domain table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.recode import GeneralizedQI, cat_distinct, concat_cells, published_groups

SCHEMA = "anonymatch-leakage/1"
"""The ``schema`` key of a leakage report's JSON."""

RECODES = 0.99
"""A kept column whose values give a QI's value in at least this share of the rows (its
commonest value per kept value) recodes that QI: dropping it loses nothing the QI keeps."""

_CONTACT = re.compile(
    r"^\s*(?:[^@\s]+@[^@\s]+\.[A-Za-z]{2,}|https?://\S+|www\.\S+"
    r"|\+?(?=(?:\D*\d){9})[\d ()./-]{9,})\s*$"
)
"""E-mail addresses, URLs and phone-number-like strings (nine or more digits among separators:
a date's eight digits are not a phone number)."""


@dataclass(frozen=True)
class LeakageOptions:
    """Thresholds of the leakage check (documented in docs/guarantees/leakage.md).

    ``tolerance``: a kept value's rule rules a QI value out when its rows show that value at
    most this share of the times independence predicts (0: only values never seen, exact
    dependencies). ``min_support``: fewest original rows a kept value needs before a rule is
    drawn from it (rarer values are counted by ``unique``, not as rules). ``min_expected``:
    a value is ruled out only where independence predicts at least this many of the kept
    value's rows to show it, so that what a small group happens not to show is not taken for
    a dependency (on small tables this hides real dependencies too: fewer leaks claimed, never
    more). ``narrow_factor``: a row leaks when the rule leaves at most this share of its cell's
    values. ``flag_share``: a column is flagged when its leaked rows reach this share of the
    rows. ``unique_share``: flagged when this share of rows hold a value of their own.
    ``text_share``: a text column with at least this share of distinct values (and over
    ``text_min`` of them) is free text."""

    tolerance: float = 0.01
    min_support: int = 10
    min_expected: float = 5.0
    narrow_factor: float = 0.5
    flag_share: float = 0.01
    unique_share: float = 0.05
    text_share: float = 0.8
    text_min: int = 100


@dataclass(frozen=True)
class QILeak:
    """What one kept column gives away about one QI: ``narrowed`` rows whose cell it pins to at
    most ``narrow_factor`` of its values, ``pinned`` of them to one value (exact), out of
    ``generalized`` rows whose cell covers more than one value; ``rules`` kept values with a
    rule narrower than the domain; ``determined`` rows whose kept value leaves one value of the
    whole domain (published exactly or not: what the kept column tells on its own);
    ``predicted`` the share of original rows whose QI value is the commonest among the rows
    sharing their kept value, counting only kept values with support (1: the kept column
    recodes the QI)."""

    qi: str
    rules: int
    generalized: int
    narrowed: int
    pinned: int
    determined: int = 0
    predicted: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "qi": self.qi,
            "rules": self.rules,
            "generalized_rows": self.generalized,
            "narrowed_rows": self.narrowed,
            "pinned_rows": self.pinned,
            "determined_rows": self.determined,
            "predicted_share": self.predicted,
        }


@dataclass(frozen=True)
class ColumnLeak:
    """The leakage figures of one column released unchanged."""

    column: str
    role: str  # "sensitive" or "other"
    distinct: int
    unique_rows: int
    free_text: str | None
    leaked_rows: int
    pinned_rows: int
    by_qi: tuple[QILeak, ...]
    reasons: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)

    @property
    def proposed_role(self) -> str:
        """What ``init`` proposes for a flagged column: ``identifier`` for a key, free text or a
        recoding of a QI (dropped), ``qi`` for a column that gives QIs away (generalized with
        them)."""
        if self.free_text is not None or (self.unique_rows and not self.leaked_rows):
            return "identifier"
        if any(q.predicted >= RECODES for q in self.by_qi):  # a recoding of a QI: drop it
            return "identifier"
        return "qi"

    def worst(self) -> QILeak | None:
        """The QI this column narrows in the most rows (None without any)."""
        leaks = [q for q in self.by_qi if q.narrowed]
        return max(leaks, key=lambda q: q.narrowed) if leaks else None

    def to_dict(self) -> dict[str, object]:
        return {
            "column": self.column,
            "role": self.role,
            "distinct": self.distinct,
            "unique_rows": self.unique_rows,
            "free_text": self.free_text,
            "leaked_rows": self.leaked_rows,
            "pinned_rows": self.pinned_rows,
            "by_qi": [q.to_dict() for q in self.by_qi if q.narrowed or q.determined],
            "flagged": self.flagged,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class LeakageReport:
    """Leakage of every kept column (``columns``, in table order) over ``rows`` published
    rows, with the ``options`` used."""

    rows: int
    columns: tuple[ColumnLeak, ...]
    options: LeakageOptions = field(default_factory=LeakageOptions)

    @property
    def flagged(self) -> list[ColumnLeak]:
        return [c for c in self.columns if c.flagged]

    def to_dict(self) -> dict[str, object]:
        o = self.options
        return {
            "schema": SCHEMA,
            "rows": self.rows,
            "options": {
                "tolerance": o.tolerance,
                "min_support": o.min_support,
                "min_expected": o.min_expected,
                "narrow_factor": o.narrow_factor,
                "flag_share": o.flag_share,
                "unique_share": o.unique_share,
            },
            "columns": [c.to_dict() for c in self.columns],
            "flagged": [c.column for c in self.flagged],
        }

    def lines(self) -> list[str]:
        """One sentence per flagged column, with its figures (for warnings and reports)."""
        return [describe(c) for c in self.flagged]

    @classmethod
    def from_dict(cls, block: Mapping[str, Any]) -> LeakageReport:
        """The report a manifest's ``leakage`` block holds (:meth:`to_dict`'s inverse, but for
        the QIs a column neither narrows nor determines, which the block leaves out). Raises
        AttributeError, KeyError, TypeError or ValueError on a block of another shape."""
        o = block.get("options") or {}
        defaults = LeakageOptions()
        options = LeakageOptions(
            **{
                k: type(getattr(defaults, k))(o[k])  # a number, or TypeError/ValueError
                for k in o
                if k in LeakageOptions.__dataclass_fields__
            }
        )
        columns = tuple(
            ColumnLeak(
                str(c["column"]),
                str(c["role"]),
                int(c["distinct"]),
                int(c["unique_rows"]),
                None if c.get("free_text") is None else str(c["free_text"]),
                int(c["leaked_rows"]),
                int(c["pinned_rows"]),
                tuple(
                    QILeak(
                        str(q["qi"]),
                        int(q["rules"]),
                        int(q["generalized_rows"]),
                        int(q["narrowed_rows"]),
                        int(q["pinned_rows"]),
                        int(q.get("determined_rows") or 0),
                        float(q.get("predicted_share") or 0.0),
                    )
                    for q in c.get("by_qi") or ()
                ),
                tuple(str(r) for r in c.get("reasons") or ()),
            )
            for c in block["columns"]
        )
        return cls(int(block["rows"]), columns, options)


def describe(column: ColumnLeak) -> str:
    """One sentence: the flagged column, its reasons and the proposed role (the one wording of
    the CLI's warnings, ``--strict``'s refusal, the report and the web app)."""
    identifier = column.proposed_role == "identifier"
    role = "an identifier (dropped)" if identifier else "a quasi-identifier"
    reasons = "; ".join(column.reasons)
    return f"column {column.column!r} is released unchanged but {reasons} (make it {role})"


def _share(count: int, rows: int) -> str:
    return f"{count:,} of {rows:,} rows ({100 * count / max(rows, 1):.1f}%)"


def check_leakage(
    data: pd.DataFrame,
    enc: EncodedQI,
    cells: GeneralizedQI,
    release: pd.DataFrame,
    schema: Schema,
    options: LeakageOptions | None = None,
) -> LeakageReport:
    """Measure what the columns a release keeps unchanged give away about its QIs.

    Parameters
    ----------
    data : pandas.DataFrame
        The original rows the release publishes (after dropping rows with missing QIs, if the
        release did), aligned with ``enc``.
    enc : EncodedQI
        Their encoded QIs.
    cells : GeneralizedQI
        The published QI cells (``tables.io.cells.parse_cells`` of the release).
    release : pandas.DataFrame
        The published table, aligned with ``cells``: its kept columns are read.
    schema : Schema
        The roles: every column of ``release`` that is not a QI is checked.
    options : LeakageOptions, optional
        The thresholds (defaults: tolerance 1 %, support 10 rows, narrowed to half, flag at
        1 % of rows or 5 % unique rows).

    Returns
    -------
    LeakageReport
        Per kept column: unique rows, free-text evidence, rows narrowed and pinned per QI, and
        whether it is flagged with its reasons.

    Notes
    -----
    Rules are drawn from the original (the dependencies that hold in the data, which an
    attacker may know from any similar table) and applied to the published rows, which carry
    each kept value beside its true record's cells. Time O(c·d·(n log n + nnz)) for c kept
    columns and d QIs; memory O(n + nnz).

    References
    ----------
    Machanavajjhala et al., "ℓ-diversity", ICDE 2006, §3 (background knowledge); Wong et al.,
    "Minimality attack in privacy preserving data publishing", VLDB 2007 (what published
    values reveal beyond the generalized cells).

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.tables.columns.schema import Schema, encode_qi
    >>> from anonymatch.tables.io.cells import parse_cells
    >>> data = pd.DataFrame({"num": ["1", "1", "2", "2"], "word": ["a", "a", "b", "b"]})
    >>> schema = Schema.build(["num"], ["num"])
    >>> enc = encode_qi(data, schema)
    >>> release = pd.DataFrame({"num": ["1..2"] * 4, "word": ["a", "a", "b", "b"]})
    >>> report = check_leakage(data, enc, parse_cells(release, enc), release, schema,
    ...                        LeakageOptions(min_support=2, min_expected=1))
    >>> report.columns[0].pinned_rows
    4
    """
    kept = ((n, data[n], release[n]) for n in kept_columns(release.columns, data, schema))
    return leakage_of(kept, enc, RowCells(cells), schema.sensitive, options)


def kept_columns(columns: Iterable[object], data: pd.DataFrame, schema: Schema) -> list[str]:
    """The published ``columns`` released unchanged: neither QIs nor absent from the
    original ``data``. O(columns)."""
    qi = set(schema.qi)
    return [n for n in map(str, columns) if n not in qi and n in data.columns]


def leakage_of(
    kept: Iterable[tuple[str, pd.Series, pd.Series | None]],
    enc: EncodedQI,
    cells: RowCells,
    sensitive: Sequence[str] = (),
    options: LeakageOptions | None = None,
) -> LeakageReport:
    """The leakage report of the kept columns, each ``(name, original, shown)``: the original
    values aligned with ``enc``, the values the release shows beside ``cells`` (None: row i
    shows original i's value, the streamed path's rows taken in the originals' order), each
    read when its turn comes (the streamed path reads them one at a time from its
    memory-mapped spill file). The one body of :func:`check_leakage` and of the release check
    :class:`Leakage`, in memory and streamed: the same rules, the same figures.

    Time as :func:`check_leakage`; memory O(n) per kept column, one column at a time, plus
    O(n) per categorical QI (each row's cell group and width). References: Machanavajjhala et
    al., "ℓ-diversity", ICDE 2006, §3; Wong et al., VLDB 2007."""
    options = options or LeakageOptions()
    views = [_cat_view(enc, cells, a) for a in range(len(enc.cat_names))]
    out = []
    for name, original, shown in kept:
        role = "sensitive" if name in sensitive else "other"
        out.append(_column(name, original, shown, enc, cells, role, options, views))
    return LeakageReport(cells.n, tuple(out), options)


@dataclass(frozen=True)
class RowCells:
    """Published QI cells as ``cells`` (distinct cells, or one per row) and each row's cell
    ``group`` (None: row i shows ``cells`` row i). The streamed path holds a release's cells so:
    one copy of each distinct cell of each chunk and one integer per row, and per categorical
    QI its distinct ``sets`` (a CSR) with each cell's set number (then ``cells.cat_sets`` are
    not read)."""

    cells: GeneralizedQI
    group: np.ndarray | None = None
    sets: tuple[tuple[sp.csr_array, np.ndarray], ...] | None = None

    @property
    def n(self) -> int:
        return self.cells.n if self.group is None else len(self.group)

    def rows(self, values: np.ndarray) -> np.ndarray:
        """Per row, the value of its cell (``values`` has one entry per cell). O(n)."""
        return values if self.group is None else values[self.group]


@dataclass(frozen=True)
class _CatView:
    """A categorical QI's published cells over the labels present in the original (numbered
    0..m−1), computed once for every kept column: the distinct cells (``group`` of each row,
    their sets ``reps`` as a G × m CSR, ``dense`` as a G × m bool array when small enough),
    ``width`` per row (the whole domain for ``*``) and the ``bins`` of its labels."""

    m: int
    compact: np.ndarray
    bins: np.ndarray | None
    group: np.ndarray
    reps: sp.csr_array
    dense: np.ndarray | None
    star: np.ndarray
    width: np.ndarray


@dataclass(frozen=True)
class DistinctCells:
    """A chunk of published rows as its distinct ``cells`` and each row's ``group`` among them,
    and per categorical QI the distinct label ``sets`` with each distinct cell's set number
    (``cells.cat_sets`` are then empty): what the streamed path's workers send the driver for
    the leakage check."""

    cells: GeneralizedQI
    group: np.ndarray
    sets: tuple[tuple[sp.csr_array, np.ndarray], ...] = ()


def distinct_cells(cells: GeneralizedQI) -> DistinctCells:
    """The distinct published rows of ``cells`` (``recode.published_groups``: suppressed cells
    equal whatever they store, exact), with each categorical QI's distinct label sets
    (``recode.cat_distinct``; hierarchy nodes never expanded per row). O(nnz + n log n + n·d);
    the result holds at most n rows, about n / k for classes.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from anonymatch.tables.recode import GeneralizedQI
    >>> lo = np.array([[1.0], [1.0], [2.0]])
    >>> cells = GeneralizedQI(lo, lo + 1, np.zeros((3, 1), bool), (), np.zeros((3, 0), bool))
    >>> d = distinct_cells(cells)
    >>> d.cells.n, d.group.tolist()
    (2, [0, 0, 1])
    """
    star = cells.num_star
    per_qi = [cat_distinct(cells, a)[1:] for a in range(len(cells.cat_sets))]
    first, group, _ = published_groups(cells)  # exact; nodes never rows × leaves
    empty = tuple(sp.csr_array((len(first), 0), dtype=np.int8) for _ in cells.cat_sets)
    kept = GeneralizedQI(
        cells.num_lo[first], cells.num_hi[first], star[first], empty, cells.cat_star[first]
    )
    sets = tuple((distinct, number[first]) for number, distinct in per_qi)
    return DistinctCells(kept, group.reshape(-1).astype(np.int64), sets)


class StreamedCells:
    """The published cells of a streamed release, gathered chunk by chunk in the originals'
    order: each chunk's distinct cells (about n / k rows in all) and one integer per original
    (the cell of the row published from it). Memory O(n + distinct cells · d)."""

    def __init__(self, n: int) -> None:
        self._cell: np.ndarray = np.full(n, -1, np.int64 if n >= 2**31 else np.int32)
        self._parts: list[GeneralizedQI] = []
        self._sets: list[list[tuple[sp.csr_array, np.ndarray]]] = []
        self._size = 0

    def add(self, chunk: DistinctCells, originals: np.ndarray) -> None:
        """Record a chunk: ``originals[r]`` is the position (in the input's order, that of the
        check's ``enc``) of the original whose row r shows ``chunk.group[r]``. O(rows)."""
        self._cell[originals] = self._size + chunk.group
        self._parts.append(chunk.cells)
        self._sets.append(list(chunk.sets))
        self._size += chunk.cells.n

    def rows(self) -> RowCells:
        """The gathered cells, for :func:`check_streamed_leakage`."""
        if (self._cell < 0).any():
            raise ValueError("some originals have no published row")
        cells = self._parts[0] if len(self._parts) == 1 else concat_cells(self._parts)
        sets = []
        for a in range(len(cells.cat_sets)):
            parts = [chunk[a] for chunk in self._sets]
            width = max(int(d.shape[1]) for d, _ in parts)
            offsets = np.cumsum([0] + [d.shape[0] for d, _ in parts[:-1]])
            distinct = sp.vstack(
                [sp.csr_array((d.data, d.indices, d.indptr), shape=(d.shape[0], width))
                 for d, _ in parts],
                format="csr",
            )  # fmt: skip
            number = np.concatenate([o + g for o, (_, g) in zip(offsets, parts, strict=True)])
            sets.append((sp.csr_array(distinct), number))
        return RowCells(cells, self._cell, tuple(sets))


LEAK_EXIT_HINT = (
    f"declare the flagged columns quasi-identifiers ({param('qi')}) or identifiers "
    f"({param('identifiers')}), or drop {param('strict')} to publish anyway"
)
"""What a release refused under ``strict`` says (``anonymize --strict``: exit code 2); the
command line shows the flags."""


class LeakRefused(InputError):
    """A release refused because kept columns leak (``report``: the check); nothing written."""

    def __init__(self, report: LeakageReport) -> None:
        lines = "; ".join(report.lines())
        super().__init__(f"refused ({param('strict')}): {lines}; {LEAK_EXIT_HINT}; nothing written")
        self.report = report


_DENSE_CELLS = 20_000_000
"""Largest distinct cells × labels held as a dense bool array (else the row-by-row count)."""


def _cat_view(enc: EncodedQI, rows: RowCells, a: int) -> _CatView:
    """The view of categorical QI ``a`` (see :class:`_CatView`). Distinct cells are found by
    two random 62-bit weight sums of their labels (with the set size): O(nnz) cheap
    arithmetic, then only the G distinct sets are read label by label — a release of
    hierarchy nodes holds few distinct cells but up to rows × leaves labels."""
    miss = enc.cat_missing[:, a]
    present = np.unique(enc.cat[~miss, a])
    m = len(present)
    compact = np.full(max(int(enc.cat_card[a]), int(present[-1]) + 1 if m else 0), -1)
    compact[present] = np.arange(m)
    tree = enc.types.hierarchies.get(enc.cat_names[a])
    bins = _level_bins(tree.anc[present] if tree is not None else None)
    cells = rows.cells
    star = rows.rows(cells.cat_star[:, a])
    if rows.sets is not None:  # distinct already (per chunk: a set may recur, harmlessly)
        distinct, group = rows.sets[a]
    else:
        _, group, distinct = cat_distinct(cells, a)  # nodes: never rows × leaves
    group = rows.rows(group)
    rep_sets = _compact_sets(distinct, compact)
    g = rep_sets.shape[0]
    dense = rep_sets.toarray().astype(bool) if g * m <= _DENSE_CELLS else None
    width = np.where(star, m, np.diff(rep_sets.indptr)[group]).astype(np.int64)
    return _CatView(m, compact, bins, group, rep_sets, dense, star, width)


def _column(
    name: str,
    original: pd.Series,
    shown: pd.Series | None,
    enc: EncodedQI,
    cells: RowCells,
    role: str,
    options: LeakageOptions,
    views: list[_CatView],
) -> ColumnLeak:
    """The figures of kept column ``name``: rules from its ``original`` values (aligned with
    ``enc``), applied to the values the release ``shown`` beside ``cells`` (None: each row shows
    its own original's value, the streamed path's rows taken in the originals' order)."""
    n = cells.n
    present = original.notna().to_numpy()
    text = original.astype(str)
    codes, uniques = pd.factorize(text)
    codes = np.where(present, codes, -1)
    counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
    unique_rows = int((counts == 1).sum())
    free_text = _free_text(original[present], text[present], counts, options)
    # the release's kept values, in the original's codes (-1: absent or missing)
    if shown is None:
        published = codes
    else:
        published = pd.Index(uniques).get_indexer(shown.astype(str))
        published = np.where(shown.notna().to_numpy(), published, -1)
    support = counts >= options.min_support
    by_qi: list[QILeak] = []
    leaked = np.zeros(n, bool)
    pinned = np.zeros(n, bool)
    for a, attr in enumerate(enc.num_names):
        miss = enc.num_missing[:, a]
        vals, ranks = np.unique(enc.num[~miss, a], return_inverse=True)
        ranks = ranks.reshape(-1)
        bins = _frequency_bins(ranks, len(vals))
        leak = _rules(codes[~miss], ranks, len(vals), support, options, bins)
        star = cells.rows(cells.cells.num_star[:, a])
        lo = cells.rows(np.searchsorted(vals, cells.cells.num_lo[:, a], side="left"))
        hi = cells.rows(np.searchsorted(vals, cells.cells.num_hi[:, a], side="right") - 1)
        lo, hi = np.where(star, 0, lo), np.where(star, len(vals) - 1, hi)
        width = np.maximum(hi - lo + 1, 0)
        inside = width - _count_in_range(leak.keys, published, lo, hi, len(vals))
        by_qi.append(_tally(attr, leak, width, inside, published, options, leaked, pinned))
    for a, attr in enumerate(enc.cat_names):
        miss, view = enc.cat_missing[:, a], views[a]
        m = view.m
        leak = _rules(codes[~miss], view.compact[enc.cat[~miss, a]], m, support, options, view.bins)
        inside = view.width - _ruled_out_in_cells(leak.keys, published, view)
        by_qi.append(_tally(attr, leak, view.width, inside, published, options, leaked, pinned))
    reasons: list[str] = []
    copies = [q.qi for q in by_qi if q.predicted >= RECODES]
    leaked_rows, pinned_rows = int(leaked.sum()), int(pinned.sum())
    if leaked_rows and leaked_rows >= options.flag_share * n:
        worst = sorted((q for q in by_qi if q.narrowed), key=lambda q: -q.narrowed)
        worst = [q for i, q in enumerate(worst) if i == 0 or q.narrowed >= options.flag_share * n]
        parts = [
            f"{q.qi!r} in {_share(q.narrowed, n)}"
            + (f", exactly in {q.pinned:,}" if q.pinned else "")
            for q in worst[:3]
        ]
        reasons.append("its value narrows the published " + "; ".join(parts))
    if unique_rows and unique_rows >= options.unique_share * n:
        reasons.append(f"{_share(unique_rows, n)} have a value of their own")
    if free_text is not None:
        reasons.append(free_text)
    if reasons and copies:
        reasons.append(f"it recodes {', '.join(map(repr, copies))}: dropping it loses nothing")
    return ColumnLeak(
        name,
        role,
        len(uniques),
        unique_rows,
        free_text,
        leaked_rows,
        pinned_rows,
        tuple(by_qi),
        tuple(reasons),
    )


@dataclass(frozen=True)
class _Rules:
    """Per kept value, the QI values its rule rules out, as sorted keys ``value · m + code``;
    ``size[v]`` the values the rule keeps (m without a rule)."""

    keys: np.ndarray
    size: np.ndarray
    m: int
    predicted: float = 0.0  # share of rows whose QI value is their kept value's commonest


def _rules(
    kept: np.ndarray,
    qi: np.ndarray,
    m: int,
    support: np.ndarray,
    options: LeakageOptions,
    bins: np.ndarray | None = None,
) -> _Rules:
    """The values each kept value with support rules out: those its rows would show at least
    ``min_expected`` times were the two independent, and show at most ``tolerance`` times
    that often — value by value, and bin by bin when ``bins`` (the bin of each of the m QI
    values: equal-frequency ranges of a numeric QI, a hierarchy's level) group values too
    rare one by one (a state rules out the ZIP codes of other states). Only values with
    freq ≥ min_expected · r / total(v) can qualify, at most total(v) / min_expected per kept
    value; a bin's values are expanded within a budget of 16·r pairs (beyond, the bins are
    not used: fewer leaks claimed, never more). O(r log r) for r rows."""
    ok = kept >= 0
    kept, qi = kept[ok].astype(np.int64), qi[ok].astype(np.int64)
    u, r = len(support), len(kept)
    if r == 0 or m == 0:
        return _Rules(np.zeros(0, np.int64), np.full(u, m, np.int64), m)
    pair, count = _count_pairs(kept * m + qi, u * m)
    best = np.zeros(u, np.int64)
    np.maximum.at(best, pair // m, count)
    total = np.bincount(kept, minlength=u).astype(np.float64)
    keys = _excluded(kept, qi, m, total, support, options)
    if bins is not None and len(bins) == m:
        nb = int(bins.max()) + 1 if m else 0
        by_bin = _excluded(kept, bins[qi], nb, total, support, options)
        ev, eb = by_bin // max(nb, 1), by_bin % max(nb, 1)
        order = np.argsort(bins, kind="stable")
        start = np.searchsorted(bins[order], np.arange(nb + 1))
        sizes = start[eb + 1] - start[eb]
        if int(sizes.sum()) <= 16 * r:
            offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            values = order[np.repeat(start[eb], sizes) + offsets]
            keys = np.union1d(keys, np.repeat(ev, sizes) * m + values)
    size = m - np.bincount(keys // m, minlength=u)
    return _Rules(keys, size.astype(np.int64), m, float(best[support].sum() / r))


def _excluded(
    kept: np.ndarray,
    qi: np.ndarray,
    m: int,
    total: np.ndarray,
    support: np.ndarray,
    options: LeakageOptions,
) -> np.ndarray:
    """Sorted keys ``v · m + a`` of the QI values a each kept value v rules out (see
    ``_rules``). O(r log r + r / min_expected)."""
    r = len(kept)
    freq = np.bincount(qi, minlength=m).astype(np.float64)
    by_freq = np.argsort(-freq, kind="stable")  # most frequent first
    limit = options.min_expected * r / np.maximum(total, 1.0)
    frequent = np.searchsorted(-freq[by_freq], -limit + 1e-9, side="right")
    frequent = np.where(support, frequent, 0)  # values v's rows are expected to show
    owners = np.flatnonzero(frequent)
    cand_v = np.repeat(owners, frequent[owners])
    offsets = np.arange(len(cand_v)) - np.repeat(
        np.cumsum(frequent[owners]) - frequent[owners], frequent[owners]
    )
    cand_a = by_freq[offsets]
    pair, count = _count_pairs(kept * m + qi, len(total) * m)
    cand = cand_v * m + cand_a
    if len(pair) == 0:
        return np.zeros(0, np.int64)
    pos = np.minimum(np.searchsorted(pair, cand), len(pair) - 1)
    seen = np.where(pair[pos] == cand, count[pos], 0)
    expected = total[cand_v] * freq[cand_a] / r
    out = seen <= options.tolerance * expected + 1e-9
    return np.sort(cand[out])


def _count_pairs(keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys`` (in [0, size)), sorted, and how often each occurs: ``np.unique``'s
    answer, by one ``bincount`` when ``size`` is within a few times the keys (no sort).
    O(r + size) or O(r log r)."""
    if size <= 4 * len(keys) + 1024:
        counts = np.bincount(keys, minlength=size)
        pair = np.flatnonzero(counts)
        return pair, counts[pair]
    pair, count = np.unique(keys, return_counts=True)
    return pair, count


def _first_of_each(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys, a position of each, each key's number among them), as
    ``np.unique(return_index, return_inverse)`` but numbered in order of first appearance, by
    hashing (``pandas.factorize``): O(n), no sort."""
    codes, uniques = pd.factorize(keys)
    first = np.empty(len(uniques), np.int64)
    first[codes] = np.arange(len(keys))  # any row of a key will do: they are alike
    return np.asarray(uniques), first, codes.astype(np.int64)


def _count_in_range(
    keys: np.ndarray, published: np.ndarray, lo: np.ndarray, hi: np.ndarray, m: int
) -> np.ndarray:
    """Per row, the values in [lo, hi] (value ranks) the rule of its kept value rules out.
    O(n log r)."""
    v = np.maximum(published, 0).astype(np.int64)
    first = np.searchsorted(keys, v * m + lo, side="left")
    last = np.searchsorted(keys, v * m + hi, side="right")
    out = np.asarray(last - first, np.int64)
    return np.where(published >= 0, out, 0)


def _count_in_sets(
    keys: np.ndarray, published: np.ndarray, sets: sp.csr_array, m: int, star: np.ndarray
) -> np.ndarray:
    """Per row, the values of its set (labels of the original) that the rule of its kept
    value rules out. A suppressed cell covers the whole domain. O(nnz log r)."""
    n = len(published)
    ptr = np.asarray(sets.indptr, np.int64)
    idx = np.asarray(sets.indices, np.int64)
    rows = np.repeat(np.arange(n), np.diff(ptr))
    present = idx < m  # labels absent from the original cover nobody
    v = np.maximum(published, 0).astype(np.int64)
    hit = present & _member(keys, v[rows] * m + idx)
    out = np.bincount(rows[hit], minlength=n)
    if star.any():  # a star covers every value the rule rules out
        first = np.searchsorted(keys, v * m, side="left")
        last = np.searchsorted(keys, v * m + m, side="left")
        out = np.where(star, last - first, out)
    return np.where(published >= 0, out, 0).astype(np.int64)


MAX_BINS = 20
"""Bins of a QI's values for the rules of kept values (equal-frequency ranges of a numeric QI,
the finest hierarchy level with at most this many nodes)."""


def _frequency_bins(ranks: np.ndarray, m: int) -> np.ndarray | None:
    """Equal-frequency bins of the m distinct values of a numeric QI (contiguous ranges of
    values, ``MAX_BINS`` at most; a value is never split), None when m ≤ ``MAX_BINS``. O(r)."""
    if m <= MAX_BINS:
        return None
    counts = np.bincount(ranks, minlength=m)
    before = np.cumsum(counts) - counts
    return np.minimum(before * MAX_BINS // max(len(ranks), 1), MAX_BINS - 1).astype(np.int64)


def _level_bins(anc: np.ndarray | None) -> np.ndarray | None:
    """The bins of a hierarchy's present leaves (their ancestors ``anc``): the nodes of the
    finest level above the leaves with at most ``MAX_BINS`` of them and more than one,
    renumbered 0..; None without a hierarchy or such a level. O(m·levels)."""
    if anc is None or len(anc) == 0:
        return None
    for level in range(1, anc.shape[1]):
        nodes, bins = np.unique(anc[:, level], return_inverse=True)
        if 1 < len(nodes) <= MAX_BINS:
            return bins.reshape(-1).astype(np.int64)
    return None


def _compact_sets(sets: sp.csr_array, compact: np.ndarray) -> sp.csr_array:
    """``sets`` with its labels renumbered by ``compact`` (−1, or beyond it: dropped). O(nnz)."""
    idx = np.asarray(sets.indices, np.int64)
    inside = idx < len(compact)
    new = np.full(len(idx), -1, np.int64)
    new[inside] = compact[idx[inside]]
    keep = new >= 0
    n = sets.shape[0]
    rows = np.repeat(np.arange(n), np.diff(np.asarray(sets.indptr, np.int64)).astype(np.int64))[
        keep
    ]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    width = int(compact.max()) + 1 if len(compact) and compact.max() >= 0 else 0
    return sp.csr_array((np.ones(int(keep.sum()), np.int8), new[keep], ptr), shape=(n, width))


def _ruled_out_in_cells(keys: np.ndarray, published: np.ndarray, view: _CatView) -> np.ndarray:
    """Per row, the labels of its cell that the rule of its kept value rules out, counted once
    per distinct (cell, kept value) pair over the rule's labels (``keys``, sorted by value)
    when the cells fit a dense array, else label by label over the rows' sets. O(pairs ·
    rule size) or O(nnz log r)."""
    m, n = view.m, len(published)
    if view.dense is None or m == 0:
        sets = view.reps[view.group]
        return _count_in_sets(keys, published, sets, m, view.star)
    v = np.maximum(published, 0).astype(np.int64)
    pair = view.group * (int(v.max()) + 1 if n else 1) + v
    upairs, first, inverse = _first_of_each(pair)
    pg, pv = view.group[first], v[first]
    lo = np.searchsorted(keys, pv * m, side="left")
    hi = np.searchsorted(keys, pv * m + m, side="left")
    sizes = hi - lo
    rows = np.repeat(np.arange(len(upairs)), sizes)
    offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    labels = keys[np.repeat(lo, sizes) + offsets] % m
    hits = view.dense[pg[rows], labels]
    per_pair = np.bincount(rows[hits], minlength=len(upairs))
    out = per_pair[inverse.reshape(-1)]
    out = np.where(view.star, sizes[inverse.reshape(-1)], out)
    return np.where(published >= 0, out, 0).astype(np.int64)


def _member(keys: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Whether each query is in the sorted ``keys``. O(q log r)."""
    if len(keys) == 0:
        return np.zeros(len(query), bool)
    pos = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
    return np.asarray(keys[pos] == query)


def _tally(
    attr: str,
    rules: _Rules,
    width: np.ndarray,
    inside: np.ndarray,
    published: np.ndarray,
    options: LeakageOptions,
    leaked: np.ndarray,
    pinned: np.ndarray,
) -> QILeak:
    """Count the rows of one (kept column, QI) pair and mark them in ``leaked``/``pinned``."""
    has_rule = published >= 0  # no rule for a missing kept value (an all-missing column)
    single = np.zeros(len(published), bool)
    single[has_rule] = rules.size[published[has_rule]] == 1
    has_rule[has_rule] = rules.size[published[has_rule]] < rules.m
    generalized = width > 1
    narrowed = has_rule & generalized & (inside >= 1) & (inside <= options.narrow_factor * width)
    exact = narrowed & (inside == 1)
    leaked |= narrowed
    pinned |= exact
    return QILeak(
        attr,
        int((rules.size < rules.m).sum()),
        int(generalized.sum()),
        int(narrowed.sum()),
        int(exact.sum()),
        int((has_rule & single).sum()),
        rules.predicted,
    )


def _free_text(
    values: pd.Series, text: pd.Series, counts: np.ndarray, options: LeakageOptions
) -> str | None:
    """Evidence that a kept column is free text or a direct identifier, else None."""
    if len(text) == 0:
        return None
    sample = text.iloc[:5000]
    contact = float(sample.str.match(_CONTACT).mean())
    numeric = pd.to_numeric(sample, errors="coerce").notna().mean() >= 0.95
    if contact >= 0.5 and not numeric:
        return f"{100 * contact:.0f}% of its values look like e-mail addresses, URLs or phones"
    distinct = len(counts)
    if not numeric and distinct > options.text_min and distinct >= options.text_share * len(text):
        share = 100 * distinct / len(text)
        return f"{share:.0f}% of its values are distinct text (a key or free text)"
    return None
