"""Attribute roles and the one-time encoding of quasi-identifiers to arrays.

A table has four kinds of columns: identifiers (dropped), quasi-identifiers (QIs; numeric or
categorical, generalized), sensitive attributes and other columns (both kept and attached to the
published rows through the chosen assignment). QIs are encoded once: numeric QIs to float64,
categorical QIs to int64 codes in the sorted order of their labels. Everything downstream works
on these arrays; pandas is only used at the edges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Union

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.params import check_weights, column_list, param
from anonymatch.tables.columns.hierarchy import Hierarchy
from anonymatch.tables.columns.qitypes import OrdinalScale, QITypes, Scale

DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "?")


@dataclass(frozen=True)
class MissingCodes:
    """What counts as a missing value: ``tokens`` in every column, plus per-column ``columns``
    codes (survey codes such as ``-9``/``-8`` that mean "missing" in one column only).

    A cell is missing if it is null, if its text (stripped) is one of the tokens or of its
    column's codes, or — for a column read as numbers (Parquet) — if it equals one of the codes
    that parse as numbers. Missing QI values are kept and published as suppressed cells
    (``docs/guarantees/missing.md``)."""

    tokens: tuple[str, ...] = DEFAULT_NA_VALUES
    columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def for_column(self, name: str) -> tuple[str, ...]:
        """The tokens and codes meaning missing in column ``name``."""
        return (*self.tokens, *self.columns.get(name, ()))

    def describe(self) -> dict[str, object]:
        """JSON-ready form (for manifests)."""
        columns = {c: list(v) for c, v in self.columns.items()}
        return {"tokens": list(self.tokens), "columns": columns}


NAValues = Union[Iterable[str], MissingCodes]  # noqa: UP007 - a runtime alias
"""Missing-value tokens: one list for every column, or a ``MissingCodes``."""


def missing_codes(na_values: NAValues | Mapping[str, Iterable[object]] | None) -> MissingCodes:
    """Normalize ``na_values``: None (the default tokens), an iterable of tokens (every
    column), a mapping column → codes (the default tokens plus these codes, as pandas'
    ``na_values`` dict), or a ``MissingCodes``."""
    if na_values is None:
        return MissingCodes()
    if isinstance(na_values, MissingCodes):
        return na_values
    if isinstance(na_values, Mapping):
        return MissingCodes(
            DEFAULT_NA_VALUES,
            {str(c): tuple(str(v).strip() for v in _codes(vals)) for c, vals in na_values.items()},
        )
    if isinstance(na_values, str):
        raise TypeError("na_values must be an iterable of tokens, not one string")
    return MissingCodes(tuple(str(v) for v in na_values))


def _codes(values: object) -> list[object]:
    if isinstance(values, str | int | float):
        return [values]
    return list(values)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of a table.

    ``qi`` lists the quasi-identifiers in publication order; ``numeric`` names the QIs published
    as ranges (the others are categorical and published as value sets) and the sensitive columns
    whose values are ordered numbers (t-closeness then uses the ordered distance). Columns that
    are neither identifiers, QIs nor sensitive are "other" and kept as they are.
    ``types`` holds ordinal and date QIs (``numeric`` includes them: the engine treats them as
    numbers) and hierarchies of categorical QIs (``tables.columns.qitypes``).
    """

    qi: tuple[str, ...]
    numeric: frozenset[str] = frozenset()
    sensitive: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)
    types: QITypes = field(default_factory=QITypes)

    @classmethod
    def build(
        cls,
        qi: Sequence[str],
        numeric: Iterable[str] = (),
        sensitive: Iterable[str] = (),
        identifiers: Iterable[str] = (),
        weights: Mapping[str, float] | None = None,
        types: QITypes | None = None,
    ) -> Schema:
        """Validate the role lists against each other (not yet against a table): lists of
        column names (a comma-separated string is split), weights finite numbers ≥ 0."""
        qi_t = tuple(column_list(qi, "qi"))
        if not qi_t:
            raise InputError("at least one quasi-identifier is required (`qi`)")
        _no_duplicates("quasi-identifier", qi_t)
        num = tuple(column_list(numeric, "numeric"))
        _no_duplicates("numeric attribute", num)
        sens = tuple(column_list(sensitive, "sensitive"))
        ids = tuple(column_list(identifiers, "identifiers"))
        for name in num:
            if name not in qi_t and name not in sens:
                raise InputError(
                    f"numeric attribute {name!r} is neither a quasi-identifier nor sensitive"
                )
        _no_duplicates("sensitive attribute", sens)
        _no_duplicates("identifier", ids)
        for role, names in (("sensitive attribute", sens), ("identifier", ids)):
            for name in names:
                if name in qi_t:
                    raise InputError(f"column {name!r} is both a quasi-identifier and an {role}")
        for name in set(sens) & set(ids):
            raise InputError(f"column {name!r} is both sensitive and an identifier")
        w = check_weights(weights) or {}
        for name, value in w.items():
            if name not in qi_t:
                raise InputError(f"weight given for {name!r}, which is not a quasi-identifier")
            if not (np.isfinite(value) and value >= 0):
                raise InputError(f"weight of {name!r} must be a non-negative number, got {value}")
        if w and sum(w.get(a, 1.0) for a in qi_t) <= 0:
            raise InputError("attribute weights must not all be zero")
        types = types or QITypes()
        _check_types(types, qi_t, num)
        return cls(qi_t, frozenset(num) | frozenset(types.scaled), sens, ids, w, types)

    @property
    def ordered_sensitive(self) -> list[str]:
        """The sensitive columns listed as numeric: t-closeness uses the ordered distance."""
        return [a for a in self.sensitive if a in self.numeric]

    def check_columns(self, columns: Sequence[str] | pd.DataFrame) -> None:
        """Raise InputError if a named column is missing or the table repeats a column name.

        ``columns`` is the input's column names, or the input itself: the first sheet of a
        workbook of several (``frame.attrs["sheets"]``, ``tables.io.read_table``) then says
        which sheets there are and that ``--sheet`` chooses one. O(columns)."""
        sheets = columns.attrs.get("sheets") if isinstance(columns, pd.DataFrame) else None
        names = [str(c) for c in columns.columns] if isinstance(columns, pd.DataFrame) else columns
        _no_duplicates("column", tuple(names), where="in the input")
        present = set(names)
        for name in (*self.qi, *self.sensitive, *self.identifiers):
            if name not in present:
                hint = (
                    f" (the first of the sheets {', '.join(sheets)}; {param('sheet')} picks one)"
                    if sheets
                    else ""
                )
                have = ", ".join(names)
                raise InputError(f"unknown column {name!r}; the input has: {have}{hint}")

    def roles(self) -> dict[str, object]:
        """The roles as JSON-ready lists (for audit manifests)."""
        scaled = self.types.scaled
        return {
            "qi": list(self.qi),
            "numeric": [
                a for a in (*self.qi, *self.sensitive) if a in self.numeric and a not in scaled
            ],
            "sensitive": list(self.sensitive),
            "identifiers": list(self.identifiers),
            "weights": dict(self.weights),
            **self.types.describe(),
        }

    def output_columns(self, columns: Sequence[str]) -> list[str]:
        """The published columns: the input's, in order, minus identifiers."""
        return [c for c in columns if c not in self.identifiers]


def _check_types(types: QITypes, qi: tuple[str, ...], numeric: tuple[str, ...]) -> None:
    """Ordinal, date and hierarchy columns must be QIs and not also listed as numeric."""
    for flag, names in (
        ("`ordinal`", types.ordinal),
        ("`dates`", types.dates),
        ("`hierarchies`", types.hierarchies),
    ):
        for name in names:
            if name not in qi:
                raise InputError(f"{flag} names {name!r}, which is not a quasi-identifier")
            if name in numeric:
                raise InputError(f"column {name!r} is both `numeric` and {flag}")


def _no_duplicates(what: str, names: tuple[str, ...], where: str = "") -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            suffix = f" {where}" if where else ""
            raise InputError(f"{what} {name!r} is listed twice{suffix}")
        seen.add(name)


@dataclass(frozen=True)
class EncodedQI:
    """Quasi-identifiers of n records as arrays.

    ``num`` (n × dn, float64) holds numeric QIs, ``cat`` (n × dc, int64) categorical codes.
    ``num_span`` is U−L per numeric attribute and ``cat_card`` the domain size |A| per categorical
    attribute, both taken from the whole input (Doka eq. 1–2), so a subset made by ``take`` keeps
    the normalisation of the full table. ``num_w``/``cat_w`` are attribute weights.

    ``num_missing``/``cat_missing`` (same shapes, bool) mark missing values. A missing value has
    no place in the domain: ``num`` holds NaN there and ``cat`` code 0 (a placeholder that must
    not be read as a label), spans and domains are those of the present values, and a missing
    value is compatible only with a suppressed cell (``docs/guarantees/missing.md``). Omitted,
    they default to "nothing missing".
    """

    names: tuple[str, ...]
    num_names: tuple[str, ...]
    cat_names: tuple[str, ...]
    num: np.ndarray
    cat: np.ndarray
    num_span: np.ndarray
    cat_card: np.ndarray
    cat_domains: tuple[np.ndarray, ...]
    num_w: np.ndarray
    cat_w: np.ndarray
    num_integral: np.ndarray
    types: QITypes = field(default_factory=QITypes)
    num_missing: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), bool))
    cat_missing: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), bool))

    def __post_init__(self) -> None:
        for name, values in (("num_missing", self.num), ("cat_missing", self.cat)):
            if getattr(self, name).shape != values.shape:
                object.__setattr__(self, name, np.zeros(values.shape, bool))

    @property
    def n(self) -> int:
        return int(self.num.shape[0])

    @property
    def has_missing(self) -> bool:
        """Whether some QI value is missing."""
        return bool(self.num_missing.any() or self.cat_missing.any())

    def missing_records(self) -> np.ndarray:
        """Whether each record has a missing QI value (n bools)."""
        return np.asarray(self.num_missing.any(axis=1) | self.cat_missing.any(axis=1))

    def require_complete(self, what: str) -> None:
        """Raise InputError if some QI value is missing: ``what`` cannot handle them."""
        if self.has_missing:
            count = int(self.missing_records().sum())
            raise InputError(
                f"{what} does not handle missing QI values ({count} records have one); "
                "use `drop_missing`, or method hungarian, sortgreedy, greedy, mondrian or ring"
            )

    def keys(self, ordered: bool = False) -> np.ndarray:
        """(n, dn + dc) float64 identity keys, numeric QIs then categorical codes, with a
        missing value as +inf (numeric) or −1 (categorical): two records have equal keys iff
        they agree on every QI, missing included. ``ordered``: categorical codes of QIs with a
        hierarchy in its depth-first order (``cat_order_codes``; the same equalities). O(n·d)."""
        num = np.where(self.num_missing, np.inf, self.num)
        codes = self.cat_order_codes() if ordered else self.cat
        cat = np.where(self.cat_missing, -1, codes).astype(np.float64)
        return np.hstack([num, cat])

    def take(self, rows: np.ndarray) -> EncodedQI:
        """The same attributes and normalisation, restricted to ``rows``."""
        return dataclasses.replace(
            self,
            num=self.num[rows],
            cat=self.cat[rows],
            num_missing=self.num_missing[rows],
            cat_missing=self.cat_missing[rows],
        )

    def cat_hierarchies(self) -> list[Hierarchy | None]:
        """Per categorical attribute, its hierarchy if the release publishes its nodes."""
        return [self.types.node_cells(a) for a in self.cat_names]

    def cat_order_codes(self) -> np.ndarray:
        """Categorical codes renumbered so that sorting them follows each attribute's
        hierarchy depth first (siblings together); plain codes without hierarchies."""
        cat = self.cat
        for a, name in enumerate(self.cat_names):
            h = self.types.hierarchies.get(name)
            if h is not None:
                cat = cat.copy() if cat is self.cat else cat
                cat[:, a] = h.rank[self.cat[:, a]]
        return cat

    def ncp_scales(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-attribute factors turning a width (numeric) or extra value count (categorical)
        into weighted NCP contributions to a row's GCP: w / (Σw · span) and w / (Σw · (|A|−1)).
        An attribute with a one-value domain gets factor 0 (it can never lose information).
        A subnormal span (values apart by less than the smallest normal float) is counted as
        that smallest normal float, so that w / span stays finite: widths there still rank
        in order, but their NCP reads too low by span / 2.2e-308."""
        total = float(self.num_w.sum() + self.cat_w.sum())
        span = np.maximum(self.num_span, np.finfo(np.float64).tiny)
        with np.errstate(divide="ignore", invalid="ignore"):
            # w / Σw first: Σw · span could overflow for spans near the largest float
            num = np.where(self.num_span > 0, (self.num_w / total) / span, 0.0)
            cat = np.where(self.cat_card > 1, self.cat_w / (total * (self.cat_card - 1)), 0.0)
        return num.astype(np.float64), cat.astype(np.float64)

    def star_scales(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-attribute weighted NCP of a suppressed cell (NCP 1): w / Σw, for every attribute
        (a ``*`` costs 1 even where the present values have a one-value domain)."""
        total = float(self.num_w.sum() + self.cat_w.sum())
        if total <= 0:
            return np.zeros(len(self.num_w)), np.zeros(len(self.cat_w))
        return (self.num_w / total).astype(np.float64), (self.cat_w / total).astype(np.float64)


def encode_qi(
    frame: pd.DataFrame,
    schema: Schema,
    na_values: NAValues | None = DEFAULT_NA_VALUES,
    row_offset: int = 0,
) -> EncodedQI:
    """Encode the QI columns of ``frame`` (string or typed columns) once. ``row_offset`` is
    added to the row numbers of error messages (for a chunk of a larger input).

    A value that is null or listed in ``na_values`` (tokens, or a ``MissingCodes`` with
    per-column codes) is missing: it is marked in ``num_missing``/``cat_missing`` and kept out
    of the domains and spans. Every other numeric QI value must parse as a finite number.

    Complexity: O(n·d + Σ|A| log|A|) time, O(n·d) memory.
    """
    codes = missing_codes(na_values)
    nums, cats, domains, integral, num_na, cat_na = [], [], [], [], [], []
    scaled, hierarchies = schema.types.scaled, schema.types.hierarchies
    for name in schema.qi:
        column = frame[name]
        na = column_missing(column, codes.for_column(name))
        if name in scaled:  # ordinal ranks / date periods: numbers from here on
            nums.append(_encode_present(column, na, scaled[name], name, row_offset))
            num_na.append(na)
            integral.append(True)
        elif name in schema.numeric:
            values = _parse_numeric(name, column, na, row_offset)
            nums.append(values)
            num_na.append(na)
            present = values[~na]
            integral.append(bool(np.all(present == np.round(present))))
        elif name in hierarchies:  # the domain is the hierarchy's leaves, used or not
            h = hierarchies[name]
            labels = column.astype(str).to_numpy()
            if na.any() and h.n_leaves:  # a leaf in place of a missing value, coded 0 below
                labels = np.where(na, h.leaves[0], labels)
            cats.append(np.where(na, 0, h.codes(labels, name, row_offset)))
            cat_na.append(na)
            domains.append(h.leaves)
        else:
            labels = column.astype(str).to_numpy()
            domain, inverse = sorted_codes(labels[~na])
            codes_a = np.zeros(len(labels), np.int64)
            codes_a[~na] = inverse
            cats.append(codes_a)
            cat_na.append(na)
            domains.append(domain)
    n = len(frame)
    num = np.column_stack(nums) if nums else np.empty((n, 0))
    cat = np.column_stack(cats) if cats else np.empty((n, 0), dtype=np.int64)
    num_missing = np.column_stack(num_na) if num_na else np.zeros((n, 0), bool)
    cat_missing = np.column_stack(cat_na) if cat_na else np.zeros((n, 0), bool)
    num_names = tuple(a for a in schema.qi if a in schema.numeric)
    cat_names = tuple(a for a in schema.qi if a not in schema.numeric)
    span = numeric_spans(num, num_names, schema.types, num_missing)
    return EncodedQI(
        names=schema.qi,
        num_names=num_names,
        cat_names=cat_names,
        num=np.ascontiguousarray(num, dtype=np.float64),
        cat=np.ascontiguousarray(cat, dtype=np.int64),
        num_span=span,
        cat_card=np.array([len(d) for d in domains], dtype=np.int64),
        cat_domains=tuple(domains),
        num_w=np.array([schema.weights.get(a, 1.0) for a in num_names], dtype=np.float64),
        cat_w=np.array([schema.weights.get(a, 1.0) for a in cat_names], dtype=np.float64),
        num_integral=np.array(integral, dtype=bool),
        types=schema.types,
        num_missing=num_missing,
        cat_missing=cat_missing,
    )


def sorted_codes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(labels, return_inverse=True)`` for an object array of strings: the sorted
    distinct labels and each label's index among them, by hashing (``pd.factorize``) and
    sorting only the distinct labels — ``np.unique`` sorts all n strings. O(n + u log u)."""
    codes, uniques = pd.factorize(labels, use_na_sentinel=False)
    distinct = np.asarray(uniques, dtype=labels.dtype)
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return distinct[order], rank[codes]


def _encode_present(
    column: pd.Series, na: np.ndarray, scale: Scale, name: str, offset: int
) -> np.ndarray:
    """Ranks / periods of an ordinal or date column, NaN where ``na`` marks a missing value
    (the missing cells are replaced by a valid value before encoding, so error messages keep
    their row numbers). O(n)."""
    if na.any():
        if pd.api.types.is_datetime64_any_dtype(column.dtype):
            filler: object = pd.Timestamp("1970-01-01", tz=getattr(column.dtype, "tz", None))
            column = column.where(~na, filler)
        else:
            filler = scale.order[0] if isinstance(scale, OrdinalScale) else "1970-01-01"
            column = column.astype(object).where(~na, filler)
    return np.where(na, np.nan, scale.encode(column, name, offset))


def column_missing(column: pd.Series, codes: Iterable[str]) -> np.ndarray:
    """Which cells of ``column`` are missing: null, or (text stripped) one of ``codes``; in a
    column read as numbers, also equal to a code that parses as a number. O(n)."""
    tokens = set(codes)
    mask = column.isna().to_numpy().copy()
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column):
        parsed = pd.to_numeric(pd.Series(sorted(tokens), dtype=object), errors="coerce")
        numbers = parsed[parsed.notna()].to_numpy(dtype=np.float64)
        if len(numbers):
            mask |= np.isin(column.to_numpy(dtype=np.float64, na_value=np.nan), numbers)
        return np.asarray(mask, dtype=bool)
    if tokens:
        mask |= column.astype(str).str.strip().isin(tokens).to_numpy()
    return np.asarray(mask, dtype=bool)


def _parse_numeric(name: str, column: pd.Series, na: np.ndarray, offset: int = 0) -> np.ndarray:
    """Numbers of a numeric QI column, NaN where ``na`` marks a missing value; InputError on
    any other value that is not a finite number."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        text = None
    else:
        text = column.astype(str).str.strip()
        values = pd.to_numeric(text.where(~na, "nan"), errors="coerce").to_numpy(dtype=np.float64)
    values = np.where(na, np.nan, values)
    bad = ~np.isfinite(values) & ~na
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        shown = column.iloc[row] if text is None else text.iloc[row]
        what = (
            "non-finite" if np.isinf(values[row]) or str(shown).lower() == "nan" else "non-numeric"
        )
        raise InputError(
            f"{what} value {shown!r} in numeric quasi-identifier {name!r} "
            f"(row {offset + row + 1}); numbers must be finite"
        )
    _check_exact_integers(name, column if text is None else text, values, offset)
    return values


_EXACT = float(2**53)  # every integer of smaller magnitude is a float exactly


def numeric_spans(
    num: np.ndarray,
    names: Sequence[str],
    types: QITypes | None = None,
    missing: np.ndarray | None = None,
) -> np.ndarray:
    """U − L of every numeric QI column over its present values (0 where none is present; an
    ordinal QI's is its declared order's L − 1); ``missing`` (same shape as ``num``) marks the
    missing values. ``InputError`` when a span overflows a float (values spread over more than
    ~1.8e308, e.g. -1e308 and 1e308), where every loss figure would be meaningless. O(n·d)."""
    if missing is None:
        missing = np.zeros(num.shape, bool)
    hi = np.where(missing, -np.inf, num).max(axis=0, initial=-np.inf)
    lo = np.where(missing, np.inf, num).min(axis=0, initial=np.inf)
    present = np.isfinite(hi) & np.isfinite(lo)
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.asarray(np.where(present, hi - lo, 0.0), dtype=np.float64)
    for a, name in enumerate(names):
        if types is not None and name in types.ordinal:
            span[a] = types.ordinal[name].span
    for a in np.flatnonzero(~np.isfinite(span)).tolist():
        raise InputError(
            f"numeric quasi-identifier {names[a]!r} spans {lo[a]:g} … "
            f"{hi[a]:g}, a range wider than the largest float; rescale it"
        )
    return span


def _check_exact_integers(name: str, column: pd.Series, values: np.ndarray, offset: int) -> None:
    """Refuse an integer that a float cannot hold (beyond ±2^53, e.g. 9007199254740993): the
    published range would be computed on a rounded value and might not contain the true one.
    Only cells of magnitude ≥ 2^53 are looked at one by one. O(n)."""
    big = np.flatnonzero(np.abs(values) >= _EXACT)
    for row in big.tolist():
        raw = column.iloc[row]
        if isinstance(raw, str):
            text = raw.strip().replace("_", "")
            if not text.lstrip("+-").isdigit():
                continue  # 1e19, 1.5e300: float literals, held exactly as written
            exact = int(text)
        elif isinstance(raw, int | np.integer):
            exact = int(raw)
        else:
            continue
        if exact != int(values[row]):
            raise InputError(
                f"numeric quasi-identifier {name!r} holds {exact} (row {offset + row + 1}), an "
                "integer beyond ±2^53 that a 64-bit float cannot hold exactly; publish the "
                "column as categorical, or rescale it"
            )


def concat_encoded(parts: Sequence[EncodedQI]) -> EncodedQI:
    """The encoding of the concatenated rows of ``parts`` (encoded separately, e.g. chunks of a
    streamed input): categorical domains are merged (sorted union) and codes remapped, numeric
    spans taken over all parts' present values — exactly what ``encode_qi`` gives on the whole
    table. O(n·d + Σ|A| log|A|)."""
    first = parts[0]
    num = np.concatenate([p.num for p in parts])
    num_missing = np.concatenate([p.num_missing for p in parts])
    cat_missing = np.concatenate([p.cat_missing for p in parts])
    domains, cats = [], []
    for a in range(len(first.cat_names)):
        domain = np.unique(np.concatenate([p.cat_domains[a] for p in parts]))
        remapped = []
        for p in parts:
            local = np.searchsorted(domain, p.cat_domains[a])
            codes = np.zeros(p.n, np.int64)
            present = ~p.cat_missing[:, a]
            codes[present] = local[p.cat[present, a]]
            remapped.append(codes)
        cats.append(np.concatenate(remapped))
        domains.append(domain)
    n = num.shape[0]
    cat = np.column_stack(cats) if cats else np.empty((n, 0), dtype=np.int64)
    span = numeric_spans(num, first.num_names, first.types, num_missing)
    return EncodedQI(
        names=first.names,
        num_names=first.num_names,
        cat_names=first.cat_names,
        num=np.ascontiguousarray(num, dtype=np.float64),
        cat=np.ascontiguousarray(cat, dtype=np.int64),
        num_span=span,
        cat_card=np.array([len(d) for d in domains], dtype=np.int64),
        cat_domains=tuple(domains),
        num_w=first.num_w,
        cat_w=first.cat_w,
        num_integral=np.logical_and.reduce([p.num_integral for p in parts]),
        types=first.types,
        num_missing=num_missing,
        cat_missing=cat_missing,
    )


def missing_qi_mask(
    frame: pd.DataFrame, schema: Schema, na_values: NAValues | None = DEFAULT_NA_VALUES
) -> np.ndarray:
    """Rows whose value in some QI is missing (null, a token or a code of its column)."""
    codes = missing_codes(na_values)
    mask = np.zeros(len(frame), dtype=bool)
    for name in schema.qi:
        mask |= column_missing(frame[name], codes.for_column(name))
    return mask


def check_missing_codes(na_values: NAValues | None, columns: Sequence[str]) -> None:
    """Raise InputError if per-column missing codes name a column the table does not have."""
    codes = missing_codes(na_values)
    for name in codes.columns:
        if name not in columns:
            raise InputError(
                f"missing-value codes (`na_values`) given for unknown column {name!r}; "
                f"the input has: {', '.join(columns)}"
            )
