"""The table release format (DESIGN.md › Release formats): formatting and parsing.

CSV cells: a numeric QI is ``lo..hi`` (inclusive) or the plain value when lo = hi; a categorical
QI is its sorted value set joined by ``|`` (a single value stays plain), with ``\\``, ``|`` and
``*`` inside values escaped by ``\\``; ``*`` alone is a suppressed cell. Parquet keeps types:
a numeric QI is a struct ``{lo, hi}``, a categorical QI a list of strings, a suppressed cell null.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from anonymatch.core.cells import STAR, escape_label, split_cell
from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.tables.io import is_parquet
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.schema import EncodedQI


def _number_text(values: np.ndarray, integral: bool) -> list[str]:
    if integral:
        return [str(v) for v in values.astype(np.int64).tolist()]
    return [repr(v) for v in values.tolist()]  # shortest text that round-trips exactly


def format_cells(cells: GeneralizedQI, qi: EncodedQI) -> dict[str, list[str]]:
    """CSV text of every published QI cell, by attribute name. O(n·d + Σ set sizes)."""
    out: dict[str, list[str]] = {}
    for a, name in enumerate(qi.num_names):
        integral = bool(qi.num_integral[a])
        lo = _number_text(cells.num_lo[:, a], integral)
        hi = _number_text(cells.num_hi[:, a], integral)
        star = cells.num_star[:, a]
        out[name] = [
            STAR if s else (x if x == y else f"{x}..{y}")
            for x, y, s in zip(lo, hi, star, strict=True)
        ]
    for a, name in enumerate(qi.cat_names):
        labels = np.array([escape_label(str(v)) for v in qi.cat_domains[a]], dtype=object)
        sets = cells.cat_sets[a]
        star = cells.cat_star[:, a]
        ptr, idx = sets.indptr, sets.indices
        col = []
        for j in range(cells.n):
            if star[j]:
                col.append(STAR)
            elif ptr[j + 1] - ptr[j] == 1:
                col.append(labels[idx[ptr[j]]])
            else:
                col.append("|".join(labels[idx[ptr[j] : ptr[j + 1]]]))
        out[name] = col
    return out


def parse_cells(frame: pd.DataFrame, qi: EncodedQI) -> GeneralizedQI:
    """Published QI cells from a release table (CSV text or Parquet typed columns), with labels
    coded in the original's domain (labels the original never had get extra codes ≥ |A|).
    Raises InputError on a missing column or a malformed cell."""
    for name in qi.names:
        if name not in frame.columns:
            raise InputError(f"the release has no column {name!r}")
    frame = frame.reset_index(drop=True)
    n = len(frame)
    dn, dc = len(qi.num_names), len(qi.cat_names)
    lo, hi = np.empty((n, dn)), np.empty((n, dn))
    num_star = np.zeros((n, dn), bool)
    for a, name in enumerate(qi.num_names):
        uniq, codes, first = _distinct(frame[name])
        lo_u, hi_u, star_u = _parse_numeric_column(uniq, name, first)
        lo[:, a], hi[:, a], num_star[:, a] = lo_u[codes], hi_u[codes], star_u[codes]
    cat_star = np.zeros((n, dc), bool)
    sets = []
    for a, name in enumerate(qi.cat_names):
        uniq, codes, first = _distinct(frame[name])
        m, star_u = _parse_categorical_column(uniq, name, qi.cat_domains[a], first)
        cat_star[:, a] = star_u[codes]
        sets.append(m if len(uniq) == n else sp.csr_array(m[codes]))
    return GeneralizedQI(lo, hi, num_star, tuple(sets), cat_star)


def _distinct(column: pd.Series) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """The distinct cells of a text column (each parsed once: cells repeat across rows), the
    index of each row's cell among them and the first row of each. Typed (Parquet) columns are
    returned as they are. O(n)."""
    column = column.reset_index(drop=True)
    first_cell = column.iloc[0] if len(column) else None
    if first_cell is None or isinstance(first_cell, dict | list | np.ndarray):
        rows = np.arange(len(column))
        return column, rows, rows
    codes, uniq = pd.factorize(column, use_na_sentinel=False)
    first = np.empty(len(uniq), np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    return pd.Series(uniq, dtype=object), codes, first


def _exact_numbers(text: pd.Series) -> np.ndarray:
    """Numbers parsed exactly (numpy's strtod: the shortest repr of a float reads back as that
    float, which ``pd.to_numeric``'s fast parser does not guarantee); NaN where not a number."""
    try:
        return text.to_numpy(dtype=str).astype(np.float64)
    except ValueError:
        return pd.to_numeric(text, errors="coerce").to_numpy(float)


def _parse_numeric_column(
    column: pd.Series, name: str, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bounds and ``*`` mask of a numeric column; ``rows[u]`` is the release row of entry u
    (for error messages; identity by default)."""
    first = column.iloc[0] if len(column) else None
    if isinstance(first, dict) or (
        first is None and column.dtype == object and column.isna().all()
    ):
        star = column.isna().to_numpy()
        lo = np.array([np.nan if s else c["lo"] for c, s in zip(column, star, strict=True)], float)
        hi = np.array([np.nan if s else c["hi"] for c, s in zip(column, star, strict=True)], float)
        return np.where(star, -np.inf, lo), np.where(star, np.inf, hi), star
    text = column.astype(str).str.strip()
    star = (text == STAR).to_numpy()
    parts = text.str.split("..", n=1, regex=False)
    left = parts.str[0]
    right = parts.str[1].astype(object)
    right = right.where(right.notna(), left)
    lo = _exact_numbers(left.where(~star, "nan"))
    hi = _exact_numbers(right.where(~star, "nan"))
    bad = ~star & (np.isnan(lo) | np.isnan(hi) | (lo > hi))
    if bad.any():
        at = int(bad.argmax())
        row = at if rows is None else int(rows[at])
        raise InputError(
            f"malformed numeric cell {text.iloc[at]!r} in column {name!r} (row {row + 1})"
        )
    return np.where(star, -np.inf, lo), np.where(star, np.inf, hi), star


def _parse_categorical_column(
    column: pd.Series, name: str, domain: np.ndarray, rows: np.ndarray | None = None
) -> tuple[sp.csr_array, np.ndarray]:
    first = column.iloc[0] if len(column) else None
    if first is None or isinstance(first, list | np.ndarray):  # Parquet list<string>
        star = column.isna().to_numpy()
        lists = column.where(~star, None)
        exploded = lists.explode().dropna().astype(str)
    else:
        text = column.astype(str)
        star = (text == STAR).to_numpy()
        live = text[~star]
        escaped = live.str.contains("\\", regex=False)
        plain = live[~escaped].str.split("|", regex=False).explode()
        tricky = pd.Series(
            [split_cell(c) for c in live[escaped]],
            index=live.index[escaped.to_numpy()],
            dtype=object,
        ).explode()
        exploded = pd.concat([plain, tricky]) if len(tricky) else plain
    codes = pd.Series(np.arange(len(domain)), index=pd.Index([str(v) for v in domain]))
    mapped = exploded.map(codes)
    unknown = mapped.isna().to_numpy()
    if unknown.any():  # labels the original never had: extra codes after the domain
        extra_labels = pd.unique(exploded[unknown])
        extra = pd.Series(len(domain) + np.arange(len(extra_labels)), index=extra_labels)
        mapped[unknown] = exploded[unknown].map(extra)
        width = len(domain) + len(extra_labels)
    else:
        width = len(domain)
    rows = exploded.index.to_numpy(dtype=np.int64)
    present = np.zeros(len(column), bool)
    present[rows] = True
    if np.any(~star & ~present):
        at = int(np.flatnonzero(~star & ~present)[0])
        row = at if rows is None else int(rows[at])
        raise InputError(f"empty value set in column {name!r} (row {row + 1})")
    m = sp.csr_array(
        (np.ones(len(rows), np.int8), (rows, mapped.to_numpy(dtype=np.int64))),
        shape=(len(column), width),
    )
    m.sum_duplicates()
    m.data[:] = 1
    m.sort_indices()
    return m, star


def release_arrow_table(frame: pd.DataFrame, cells: GeneralizedQI, qi: EncodedQI) -> pa.Table:
    """Typed Parquet layout of a release: QIs as struct{lo,hi} / list<string>, null = ``*``;
    the other columns as they are."""
    typed = typed_cells(cells, qi)
    arrays = [
        typed[name] if name in typed else pa.array(frame[name].to_numpy(), from_pandas=True)
        for name in frame.columns
    ]
    return pa.Table.from_arrays(arrays, names=[str(name) for name in frame.columns])


def typed_cells(cells: GeneralizedQI, qi: EncodedQI) -> dict[str, pa.Array]:
    """Arrow arrays of the published QI cells by attribute name (the Parquet layout)."""
    out: dict[str, pa.Array] = {}
    for a, name in enumerate(qi.num_names):
        kind = pa.int64() if qi.num_integral[a] else pa.float64()
        dtype = np.int64 if qi.num_integral[a] else float
        lo = pa.array(cells.num_lo[:, a].astype(dtype), kind)
        hi = pa.array(cells.num_hi[:, a].astype(dtype), kind)
        mask = pa.array(cells.num_star[:, a])
        out[name] = pa.StructArray.from_arrays([lo, hi], names=["lo", "hi"], mask=mask)
    for a, name in enumerate(qi.cat_names):
        sets = cells.cat_sets[a]
        labels = pa.array([str(v) for v in qi.cat_domains[a]], pa.string()).take(
            pa.array(sets.indices.astype(np.int64))
        )
        mask = pa.array(cells.cat_star[:, a])
        out[name] = pa.ListArray.from_arrays(
            pa.array(sets.indptr.astype(np.int32)), labels, mask=mask
        )
    return out


def write_release(
    path: str | os.PathLike[str], frame: pd.DataFrame, cells: GeneralizedQI, qi: EncodedQI
) -> None:
    """Write a release table atomically: Parquet (typed) if the path ends in .parquet, else CSV
    (tab-separated for .tsv) with the text cells already in ``frame``."""
    if is_parquet(path):
        table = release_arrow_table(frame, cells, qi)
        write_atomically(path, lambda tmp: pq.write_table(table, tmp))
    else:
        sep = "\t" if str(path).lower().endswith((".tsv", ".tab")) else ","
        write_atomically(path, lambda tmp: frame.to_csv(tmp, index=False, sep=sep))
