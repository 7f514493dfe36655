"""CSV formula injection: neutralize release cells a spreadsheet would evaluate.

A spreadsheet opening a CSV file evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@``
(and, in some, tab or carriage return) as a formula — a published value such as
``=HYPERLINK(...)`` or ``-2+3+cmd|' /C calc'!A0`` would run in the reader's spreadsheet. OWASP
("CSV Injection") recommends prefixing such cells with a single quote, which spreadsheets show
as text. Here:

- **written** (``--csv-safe``, the default for CSV/TSV releases): a text cell that starts with
  one of ``= + - @ TAB CR`` and is *not a number or a numeric range* gets a ``'`` prefix.
  Numbers and ranges (``-5``, ``-1e+19``, ``-5..3``) are left alone: a spreadsheet reads them
  as numbers, never as formulas, and the release grammar needs them as they are.
- **always written**, safe mode or not: a cell that itself starts with ``'`` followed by one of
  those characters or another ``'`` gets a ``'`` prefix too, so that reading back is
  unambiguous.
- **read** (:func:`unescape_frame`, :func:`unescape_table`, used by every reader of a CSV
  release): a cell starting with ``'`` followed by one of ``= + - @ TAB CR '`` loses that first
  ``'``. So ``escape`` then ``unescape`` is the identity on every cell, and the verifier sees
  exactly the values that were published.

Parquet releases are typed and are never escaped. Every function is O(total cell length).
Reference: OWASP, "CSV Injection" (https://owasp.org/www-community/attacks/CSV_Injection).
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

TRIGGERS = "=+-@\t\r"
"""First characters that make a spreadsheet evaluate a cell."""

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
NUMBER_OR_RANGE = rf"^{_NUMBER}(?:\.\.{_NUMBER})?$"
"""A plain number or a numeric range cell ``lo..hi``: never prefixed."""

_TRIGGER_START = r"^[=+\-@\t\r]"
_QUOTED = r"^'[=+\-@\t\r']"  # a cell that a reader would unescape: escaped in every mode


def _needs_prefix_pandas(text: pd.Series, neutralize: bool) -> pd.Series:
    quoted = text.str.contains(_QUOTED, regex=True, na=False)
    if not neutralize:
        return quoted
    risky = text.str.contains(_TRIGGER_START, regex=True, na=False) & ~text.str.contains(
        NUMBER_OR_RANGE, regex=True, na=False
    )
    return quoted | risky


def escape_series(values: pd.Series, neutralize: bool = True) -> pd.Series:
    """A column with its formula-like text cells prefixed by ``'`` (see the module docstring);
    cells that are not strings are left as they are. Each distinct value is examined once
    (``pd.factorize``; a release repeats its cells, e.g. once per class member)."""
    import numpy as np

    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = pd.Series(np.asarray(uniques, dtype=object), dtype=object)
    is_text = distinct.map(lambda v: isinstance(v, str))
    if not is_text.any():
        return values
    text = distinct.where(is_text, "").astype(str)
    prefix_distinct = (_needs_prefix_pandas(text, neutralize) & is_text).to_numpy(bool)
    if not prefix_distinct.any():
        return values
    prefix = np.zeros(len(values), bool)
    present = codes >= 0
    prefix[present] = prefix_distinct[codes[present]]
    out = values.copy()
    out[prefix] = "'" + values[prefix].astype(str)
    return out


def unescape_series(values: pd.Series) -> pd.Series:
    """The inverse of :func:`escape_series`: drop the ``'`` of ``'=…``, ``'+…``, ``''…`` …"""
    is_text = values.map(lambda v: isinstance(v, str))
    if not is_text.any():
        return values
    text = values.where(is_text, "").astype(str)
    quoted = text.str.contains(_QUOTED, regex=True, na=False) & is_text
    if not quoted.any():
        return values
    out = values.copy()
    out[quoted] = text[quoted].str.slice(1)
    return out


def escape_frame(frame: pd.DataFrame, neutralize: bool = True) -> pd.DataFrame:
    """:func:`escape_series` on every object/string column of ``frame`` (a copy when changed)."""
    out = frame
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            escaped = escape_series(column, neutralize)
            if escaped is not column:
                if out is frame:
                    out = frame.copy()
                out[name] = escaped
    return out


_ROWS_PER_WRITE = 65536


def write_text_csv(
    frame: pd.DataFrame, path: str | os.PathLike[str], sep: str, neutralize: bool = True
) -> bool:
    """Write ``escape_frame(frame, neutralize).to_csv(path, index=False, sep=sep)``, byte for
    byte, when every cell of ``frame`` is text; return False (nothing written) otherwise.

    A release repeats its cells (one text per class or range, a few thousand distinct values
    per column), so each column's distinct values are escaped and CSV-quoted once (quoted by
    the ``csv`` module itself, with pandas' dialect: ``QUOTE_MINIMAL``, ``"``, the platform
    line end) and the rows are joined from them; pandas converts and quotes every cell. Not
    taken (False) for fewer than two columns (``csv`` quotes a lone empty field), column names
    that are not distinct strings, and any column with a missing or non-text cell, which
    pandas formats itself (``na_rep``, numbers). Time O(n·d) plus O(Σ distinct log distinct);
    memory O(n·d) references and one write buffer of ``_ROWS_PER_WRITE`` rows."""
    names = list(frame.columns)
    if len(names) < 2 or not all(isinstance(c, str) for c in names) or len(set(names)) < len(names):
        return False
    columns: list[list[str]] = []
    for name in names:
        column = frame[name]
        if not (column.dtype == object or pd.api.types.is_string_dtype(column.dtype)):
            return False
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
        distinct = np.asarray(uniques, dtype=object)
        if (codes < 0).any() or pd.api.types.infer_dtype(distinct, skipna=False) != "string":
            return False
        values = distinct.tolist()
        joined = "\0" + "\0".join(values)  # a cell needing a prefix starts with one of these
        if any("\0" + mark in joined for mark in TRIGGERS + "'"):
            text = pd.Series(distinct, dtype=object)
            prefix = _needs_prefix_pandas(text, neutralize).to_numpy(bool)
            if prefix.any():
                distinct[prefix] = ("'" + text[prefix]).to_numpy(dtype=object)
                values = distinct.tolist()
        columns.append(np.asarray(_csv_fields(values, sep), dtype=object)[codes].tolist())
    end = os.linesep
    with open(Path(path), "w", encoding="utf-8", newline="") as out:
        out.write(sep.join(_csv_fields(names, sep)) + end)
        rows = zip(*columns, strict=True)
        while chunk := [sep.join(row) for row in itertools.islice(rows, _ROWS_PER_WRITE)]:
            out.write(end.join(chunk) + end)
    return True


def write_csv(
    frame: pd.DataFrame, path: str | os.PathLike[str], sep: str, neutralize: bool = True
) -> None:
    """Write ``frame`` as a CSV release: :func:`escape_frame`'d cells, without index, by
    :func:`write_text_csv` when every cell is text, else by pandas. A cell holding the
    separator, a quote or a line break is quoted, a lone carriage return included (pandas, whose
    line end is ``"\\n"``, leaves it bare: then every text field is quoted), so the file reads
    back as written. O(n·d)."""
    if write_text_csv(frame, path, sep, neutralize):
        return
    escaped = escape_frame(frame, neutralize)
    bare_cr = any(
        escaped[c].astype(str).str.contains("\r", regex=False).any()
        for c in escaped.columns
        if escaped[c].dtype == object or pd.api.types.is_string_dtype(escaped[c].dtype)
    )
    if bare_cr:
        escaped.to_csv(path, index=False, sep=sep, quoting=csv.QUOTE_NONNUMERIC)
    else:
        escaped.to_csv(path, index=False, sep=sep)


def _csv_fields(values: list[str], sep: str) -> list[str]:
    """Each value as the ``csv`` module writes it inside a row of several fields (pandas'
    dialect). A value without the separator, a quote or a line break is written as it is;
    the others go through ``csv.writer`` one by one."""
    special = (sep, '"', "\r", "\n")
    if not any(mark in "\0".join(values) for mark in special):
        return values
    buffer = io.StringIO()
    # "\r\n": the csv module quotes a field holding a character of the line terminator only,
    # so a lone carriage return would be written bare (and read back as a line break)
    writer = csv.writer(buffer, delimiter=sep, lineterminator="\r\n")
    out = []
    for value in values:
        if any(mark in value for mark in special):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow((value, ""))  # two fields: a lone empty field would be quoted
            value = buffer.getvalue()[: -len(sep) - 2]
        out.append(value)
    return out


def unescape_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`unescape_series` on every object/string column (a copy when changed)."""
    out = frame
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
            plain = unescape_series(column)
            if plain is not column:
                if out is frame:
                    out = frame.copy()
                out[name] = plain
    return out


def _is_string(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def escape_table(table: pa.Table, neutralize: bool = True) -> pa.Table:
    """:func:`escape_series` on every string column of an Arrow table (the streamed writer)."""
    for i, field in enumerate(table.schema):
        if not _is_string(field.type):
            continue
        column = table.column(i)
        need = pc.match_substring_regex(column, _QUOTED)
        if neutralize:
            risky = pc.and_(
                pc.match_substring_regex(column, _TRIGGER_START),
                pc.invert(pc.match_substring_regex(column, NUMBER_OR_RANGE)),
            )
            need = pc.or_(need, risky)
        if not pc.any(need).as_py():
            continue
        prefixed = pc.replace_substring_regex(column, pattern="^", replacement="'",
                                              max_replacements=1)  # fmt: skip
        table = table.set_column(i, field, pc.if_else(need, prefixed, column))
    return table


def unescape_table(table: pa.Table) -> pa.Table:
    """:func:`unescape_series` on every string column of an Arrow table (streamed readers)."""
    for i, field in enumerate(table.schema):
        if not _is_string(field.type):
            continue
        column = table.column(i)
        quoted = pc.match_substring_regex(column, _QUOTED)
        if not pc.any(quoted).as_py():
            continue
        table = table.set_column(i, field, pc.if_else(quoted, pc.utf8_slice_codeunits(column, 1),
                                                      column))  # fmt: skip
    return table
