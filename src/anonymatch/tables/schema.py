"""Attribute roles and the one-time encoding of quasi-identifiers to arrays.

A table has four kinds of columns: identifiers (dropped), quasi-identifiers (QIs; numeric or
categorical, generalized), sensitive attributes and other columns (both kept and attached to the
published rows through the chosen assignment). QIs are encoded once: numeric QIs to float64,
categorical QIs to int64 codes in the sorted order of their labels. Everything downstream works
on these arrays; pandas is only used at the edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.validation import check_weights, column_list
from anonymatch.tables.hierarchy import Hierarchy
from anonymatch.tables.qitypes import QITypes

DEFAULT_NA_VALUES: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "?")


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of a table.

    ``qi`` lists the quasi-identifiers in publication order; ``numeric`` names the QIs published
    as ranges (the others are categorical and published as value sets) and the sensitive columns
    whose values are ordered numbers (t-closeness then uses the ordered distance). Columns that
    are neither identifiers, QIs nor sensitive are "other" and kept as they are.
    ``types`` holds ordinal and date QIs (``numeric`` includes them: the engine treats them as
    numbers) and hierarchies of categorical QIs (``tables.qitypes``).
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
            raise InputError("at least one quasi-identifier is required (--qi)")
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

    def check_columns(self, columns: Sequence[str]) -> None:
        """Raise InputError if a named column is missing or the table repeats a column name."""
        _no_duplicates("column", tuple(columns), where="in the input")
        present = set(columns)
        for name in (*self.qi, *self.sensitive, *self.identifiers):
            if name not in present:
                raise InputError(f"unknown column {name!r}; the input has: {', '.join(columns)}")

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
        ("--ordinal", types.ordinal),
        ("--date", types.dates),
        ("--hierarchy", types.hierarchies),
    ):
        for name in names:
            if name not in qi:
                raise InputError(f"{flag} names {name!r}, which is not a quasi-identifier")
            if name in numeric:
                raise InputError(f"column {name!r} is both --numeric and {flag}")


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

    @property
    def n(self) -> int:
        return int(self.num.shape[0])

    def take(self, rows: np.ndarray) -> EncodedQI:
        """The same attributes and normalisation, restricted to ``rows``."""
        return EncodedQI(
            self.names,
            self.num_names,
            self.cat_names,
            self.num[rows],
            self.cat[rows],
            self.num_span,
            self.cat_card,
            self.cat_domains,
            self.num_w,
            self.cat_w,
            self.num_integral,
            self.types,
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
        An attribute with a one-value domain gets factor 0 (it can never lose information)."""
        total = float(self.num_w.sum() + self.cat_w.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            # w / Σw first: Σw · span could overflow for spans near the largest float
            num = np.where(self.num_span > 0, (self.num_w / total) / self.num_span, 0.0)
            cat = np.where(self.cat_card > 1, self.cat_w / (total * (self.cat_card - 1)), 0.0)
        return num.astype(np.float64), cat.astype(np.float64)


def encode_qi(
    frame: pd.DataFrame,
    schema: Schema,
    na_values: Iterable[str] = DEFAULT_NA_VALUES,
    row_offset: int = 0,
) -> EncodedQI:
    """Encode the QI columns of ``frame`` (string or typed columns) once. ``row_offset`` is
    added to the row numbers of error messages (for a chunk of a larger input).

    Numeric QIs must parse as finite numbers; a value in ``na_values`` is a missing value and an
    input error (drop such rows first with ``drop_missing_rows``). A categorical value is kept
    as its label, missing tokens included (a categorical missing value is an ordinary value).

    Complexity: O(n·d + Σ|A| log|A|) time, O(n·d) memory.
    """
    na = set(na_values)
    nums, cats, domains, integral = [], [], [], []
    scaled, hierarchies = schema.types.scaled, schema.types.hierarchies
    for name in schema.qi:
        column = frame[name]
        if name in scaled:  # ordinal ranks / date periods: numbers from here on
            nums.append(scaled[name].encode(column, name, row_offset))
            integral.append(True)
        elif name in schema.numeric:
            values = _parse_numeric(name, column, na, row_offset)
            nums.append(values)
            integral.append(bool(np.all(values == np.round(values))))
        elif name in hierarchies:  # the domain is the hierarchy's leaves, used or not
            h = hierarchies[name]
            cats.append(h.codes(column.astype(str).to_numpy(), name, row_offset))
            domains.append(h.leaves)
        else:
            labels = column.astype(str).to_numpy()
            domain, codes = np.unique(labels, return_inverse=True)
            cats.append(codes.astype(np.int64))
            domains.append(domain)
    n = len(frame)
    num = np.column_stack(nums) if nums else np.empty((n, 0))
    cat = np.column_stack(cats) if cats else np.empty((n, 0), dtype=np.int64)
    num_names = tuple(a for a in schema.qi if a in schema.numeric)
    cat_names = tuple(a for a in schema.qi if a not in schema.numeric)
    span = numeric_spans(num, num_names, schema.types)
    return EncodedQI(
        names=schema.qi,
        num_names=num_names,
        cat_names=cat_names,
        num=np.ascontiguousarray(num, dtype=np.float64),
        cat=np.ascontiguousarray(cat, dtype=np.int64),
        num_span=np.asarray(span, dtype=np.float64),
        cat_card=np.array([len(d) for d in domains], dtype=np.int64),
        cat_domains=tuple(domains),
        num_w=np.array([schema.weights.get(a, 1.0) for a in num_names], dtype=np.float64),
        cat_w=np.array([schema.weights.get(a, 1.0) for a in cat_names], dtype=np.float64),
        num_integral=np.array(integral, dtype=bool),
        types=schema.types,
    )


def _parse_numeric(name: str, column: pd.Series, na: set[str], offset: int = 0) -> np.ndarray:
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        text = None
    else:
        text = column.astype(str).str.strip()
        if text.isin(na).any():
            row = int(np.flatnonzero(text.isin(na).to_numpy())[0])
            raise InputError(
                f"missing value in numeric quasi-identifier {name!r} (row {offset + row + 1}); "
                "use --drop-missing to drop such rows"
            )
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        shown = column.iloc[row] if text is None else text.iloc[row]
        if text is None and pd.isna(column.iloc[row]):
            raise InputError(
                f"missing value in numeric quasi-identifier {name!r} (row {offset + row + 1}); "
                "use --drop-missing to drop such rows"
            )
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
    num: np.ndarray, names: Sequence[str], types: QITypes | None = None
) -> np.ndarray:
    """U − L of every numeric QI column (an ordinal QI's is its declared order's L − 1);
    ``InputError`` when it overflows a float (values spread over more than ~1.8e308, e.g.
    -1e308 and 1e308), where every loss figure would be meaningless. O(n·d)."""
    if not len(num):
        span = np.zeros(num.shape[1])
    else:
        with np.errstate(over="ignore"):
            span = np.asarray(num.max(axis=0) - num.min(axis=0), dtype=np.float64)
    for a, name in enumerate(names):
        if types is not None and name in types.ordinal:
            span[a] = types.ordinal[name].span
    for a in np.flatnonzero(~np.isfinite(span)).tolist():
        raise InputError(
            f"numeric quasi-identifier {names[a]!r} spans {num[:, a].min():g} … "
            f"{num[:, a].max():g}, a range wider than the largest float; rescale it"
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
    spans taken over all parts — exactly what ``encode_qi`` gives on the whole table.
    O(n·d + Σ|A| log|A|)."""
    first = parts[0]
    num = np.concatenate([p.num for p in parts])
    domains, cats = [], []
    for a in range(len(first.cat_names)):
        domain = np.unique(np.concatenate([p.cat_domains[a] for p in parts]))
        cats.append(
            np.concatenate([np.searchsorted(domain, p.cat_domains[a])[p.cat[:, a]] for p in parts])
        )
        domains.append(domain)
    n = num.shape[0]
    cat = np.column_stack(cats) if cats else np.empty((n, 0), dtype=np.int64)
    span = numeric_spans(num, first.num_names, first.types)
    return EncodedQI(
        names=first.names,
        num_names=first.num_names,
        cat_names=first.cat_names,
        num=np.ascontiguousarray(num, dtype=np.float64),
        cat=np.ascontiguousarray(cat, dtype=np.int64),
        num_span=np.asarray(span, dtype=np.float64),
        cat_card=np.array([len(d) for d in domains], dtype=np.int64),
        cat_domains=tuple(domains),
        num_w=first.num_w,
        cat_w=first.cat_w,
        num_integral=np.logical_and.reduce([p.num_integral for p in parts]),
        types=first.types,
    )


def missing_qi_mask(frame: pd.DataFrame, schema: Schema, na_values: Iterable[str]) -> np.ndarray:
    """Rows whose value in some QI is missing (a token of ``na_values`` or a null)."""
    na = list(set(na_values))
    mask = np.zeros(len(frame), dtype=bool)
    for name in schema.qi:
        column = frame[name]
        mask |= column.isna().to_numpy()
        if not pd.api.types.is_numeric_dtype(column.dtype):
            mask |= column.astype(str).str.strip().isin(na).to_numpy()
    return mask
