"""Excel workbooks as releases (openpyxl, the ``excel`` extra); reading them is
``tables.io.read_table`` (``--sheet``).

A ``.xlsx`` release holds one worksheet, ``release``, with the same cells as the CSV release
of the same run: a header row, then one row per record; published QI cells (``30..39``,
``{a|b}``, ``*``) and other text as text cells — never formulas: every text cell is written
with the string type, and with ``csv_safe`` formula-like text also gets the ``'`` prefix of a
CSV release (``core.csvsafe``; ``read_release`` takes it off) — and kept numeric columns as
numbers. Like a CSV release it comes with its sidecar ``PATH.schema.json``, which types the
columns when it is read back (``read_release``, ``verify``).

Excel's own limits are checked before anything is written: at most 1,048,575 records (one row
is the header), 16,384 columns and 32,767 characters in a cell; beyond them the release is
refused (InputError, exit 2: use .csv or .parquet) rather than written cut short.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from anonymatch.core.csvsafe import escape_frame
from anonymatch.core.errors import InputError

EXCEL_RELEASE_EXTENSIONS = (".xlsx",)
"""Table releases written as Excel workbooks."""

MAX_ROWS = 1_048_576
MAX_COLUMNS = 16_384
MAX_CELL_CHARS = 32_767
SHEET = "release"


def is_excel_release(path: str | os.PathLike[str]) -> bool:
    """Whether a release written to ``path`` is an Excel workbook (by its extension). O(1)."""
    return Path(str(path)).suffix.lower() in EXCEL_RELEASE_EXTENSIONS


def _openpyxl() -> object:
    try:
        import openpyxl
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "writing .xlsx releases needs the excel extra: pip install 'anonymatch[excel]'"
        ) from exc
    return openpyxl


def check_excel_limits(frame: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """InputError (one line) when ``frame`` does not fit a worksheet. O(cells of text)."""
    rows, columns = frame.shape
    if rows + 1 > MAX_ROWS or columns > MAX_COLUMNS:
        raise InputError(
            f"{path}: {rows:,} records × {columns:,} columns do not fit an Excel worksheet "
            f"(at most {MAX_ROWS - 1:,} × {MAX_COLUMNS:,}); write .csv or .parquet"
        )
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column.dtype):
            continue
        longest = int(column.astype(str).str.len().max()) if len(column) else 0
        if longest > MAX_CELL_CHARS or len(str(name)) > MAX_CELL_CHARS:
            raise InputError(
                f"{path}: column {name!r} has a cell of {longest:,} characters, more than an "
                f"Excel cell holds ({MAX_CELL_CHARS:,}); write .csv or .parquet"
            )


def with_kept_numbers(frame: pd.DataFrame, qi: Iterable[str]) -> pd.DataFrame:
    """``frame`` with each kept column (not in ``qi``) that the release publishes as numbers
    (``sidecar.kept_column_dtype``: every cell the exact text of a number) converted to them,
    so that the workbook holds numbers where the CSV release holds their text; an integer
    column beyond ±2^53, which Excel's doubles would round, stays text. O(n·d)."""
    from anonymatch.tables.io.sidecar import kept_column_dtype, typed_kept_column

    out = frame
    for name in frame.columns:
        if name in set(qi):
            continue
        dtype = kept_column_dtype(frame[name])
        if dtype not in ("int64", "float64"):
            continue
        typed = typed_kept_column(frame[name], dtype, str(name))
        if dtype == "int64" and len(typed) and int(typed.abs().max()) > 2**53:
            continue
        out = out.copy() if out is frame else out
        out[name] = typed
    return out


def write_excel(frame: pd.DataFrame, tmp: Path, csv_safe: bool = True) -> None:
    """Write ``frame`` to the workbook ``tmp`` (one sheet, streamed by openpyxl's write-only
    mode: memory O(one row) beyond the frame). Text cells have the string type (a cell
    ``=1+1`` is text, not a formula); numbers stay numbers, a missing number is an empty
    cell. O(cells)."""
    openpyxl = _openpyxl()
    from openpyxl.cell import WriteOnlyCell

    book = openpyxl.Workbook(write_only=True)  # type: ignore[attr-defined]
    sheet = book.create_sheet(SHEET)
    shown = escape_frame(frame, csv_safe)
    numeric = [
        pd.api.types.is_numeric_dtype(shown[c].dtype) and not pd.api.types.is_bool_dtype(shown[c])
        for c in shown.columns
    ]

    def text(value: object) -> WriteOnlyCell:
        cell = WriteOnlyCell(sheet, value=str(value))
        cell.data_type = "s"  # openpyxl would take a leading '=' as a formula
        return cell

    sheet.append([text(c) for c in shown.columns])
    for row in shown.itertuples(index=False, name=None):
        cells: list[object] = []
        for value, number in zip(row, numeric, strict=True):
            if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
                cells.append(None)
            elif number:
                cells.append(value.item() if hasattr(value, "item") else value)
            else:
                cells.append(text(value))
        sheet.append(cells)
    book.save(tmp)
