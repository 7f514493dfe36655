"""Reading input tables (CSV/TSV or Parquet) into pandas, every CSV cell as text.

CSV cells are read as strings (no type guessing, no NA conversion) so that sensitive and other
columns are published exactly as they were given; QIs are parsed later by ``schema.encode_qi``.

The package also holds the release side: ``cells`` (the published cell format, written and
parsed), ``release`` (reading a release back), ``sidecar`` (the release's schema file),
``stream`` (batches in, an atomic release out) and ``reuse`` (a parsed release and its
compatibility graph computed once per command).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.params import param


def check_quotechar(quotechar: object, sep: str | None = None, name: str = "quotechar") -> None:
    """A CSV quote character is one character, not a line break and not the separator;
    ``InputError`` naming ``name`` otherwise. O(1)."""
    if not isinstance(quotechar, str) or len(quotechar) != 1 or quotechar in "\r\n":
        raise InputError(f"{name} must be a single character, got {quotechar!r}")
    if sep is not None and quotechar == sep:
        raise InputError(f"{name} must differ from the separator, got {quotechar!r}")


@dataclass(frozen=True)
class CsvOptions:
    """How to read a CSV file. ``sep`` None means: tab for .tsv/.tab, else the ``;`` or tab
    the first lines show (``sniff_separator``), else comma. ``names``
    gives column names for a file without a header line. ``fmt`` forces the reader: ``csv``
    (comma unless ``sep``), ``tsv`` (tab), ``parquet``; ``auto`` decides by the extension."""

    sep: str | None = None
    names: Sequence[str] | None = None
    quotechar: str = '"'
    skip_initial_space: bool = True
    fmt: str = "auto"
    table: str | None = None
    query: str | None = None
    sheet: str | None = None
    skip_rows: int = 0
    """Lines before the header (or the first row) that are not part of the table."""
    keep_user_missing: bool = False
    """An SPSS file's user-missing codes kept as read (``tables.io.stats``): ``anonymize``
    makes them missing in its QIs and sensitive columns only."""

    def __post_init__(self) -> None:
        check_quotechar(self.quotechar, self.sep)

    def reads_parquet(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` is read as Parquet (a directory of parts always is)."""
        if self.fmt == "auto":
            return is_parquet(path)
        return self.fmt == "parquet"


def is_parquet(path: str | os.PathLike[str]) -> bool:
    return str(path).lower().endswith((".parquet", ".pq"))


def read_table(
    path: str | os.PathLike[str], options: CsvOptions | None = None, nrows: int | None = None
) -> pd.DataFrame:
    """Read a CSV/TSV or Parquet table, an SPSS/Stata/SAS file (``tables.io.stats``: value
    labels applied), or a database table or query (``path`` a database
    URL, ``options.table``/``options.query``). Raises InputError (one line) on any unreadable
    input. ``nrows`` reads only the first data rows (a sample).

    Complexity: O(file size), O(nrows) with ``nrows`` for CSV."""
    options = options or CsvOptions()
    from anonymatch.tables.io.sql import is_database_url, read_sql_source

    if is_database_url(path):
        return read_sql_source(str(path), options.table, options.query, nrows)
    if options.table is not None or options.query is not None:
        raise InputError(
            f"{param('table')} and {param('query')} read a database URL "
            "(postgresql://…, sqlite:///…)"
        )
    p = Path(path)
    from anonymatch.core.documents import check_readable_path

    if not check_readable_path(p):
        raise InputError(f"input file not found: {path}")
    if p.is_dir():
        raise InputError(f"input is a directory, not a file: {path}")
    if not os.access(p, os.R_OK):
        raise InputError(f"input file is not readable: {path}")
    from anonymatch.tables.io.stats import is_stats_file, read_stats_file

    if options.sheet is not None and not is_excel(p):
        raise InputError(f"{param('sheet')} reads an Excel file (.xlsx)")
    if options.fmt == "auto" and is_stats_file(p):
        frame = read_stats_file(p, nrows, options.keep_user_missing)
    elif options.fmt == "auto" and is_excel(p):
        frame = _read_excel(p, options.sheet, nrows)
    elif options.reads_parquet(p):
        frame = _read_parquet(p)
        frame = frame if nrows is None else frame.head(nrows)
    else:
        frame = _read_csv(p, options, nrows)
    if len(frame) == 0:
        raise InputError(f"input has no data rows: {path}")
    return frame


def is_excel(path: str | os.PathLike[str]) -> bool:
    return str(path).lower().endswith((".xlsx", ".xlsm"))


def _read_excel(path: Path, sheet: str | None, nrows: int | None) -> pd.DataFrame:
    """One worksheet of an Excel file (openpyxl, the ``excel`` extra), every cell as text like
    a CSV file's: the first row is the header, an empty cell is an empty string."""
    try:
        import openpyxl
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise InputError(
            "reading .xlsx files needs the excel extra: pip install 'anonymatch[excel]'"
        ) from exc
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # InvalidFileException, BadZipFile, KeyError, …
        raise InputError(f"cannot read Excel file {path}: {_first_line(exc)}") from exc
    try:
        names = list(book.sheetnames)
        if sheet is not None and sheet not in names:
            raise InputError(f"no sheet {sheet!r} in {path} (sheets: {', '.join(names)})")
        rows = book[sheet if sheet is not None else names[0]].iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            raise InputError(f"input is empty: {path}")
        columns = check_header(["" if v is None else str(v) for v in header], path)
        data: list[list[str]] = []
        for row in rows:
            if nrows is not None and len(data) >= nrows:
                break
            cells = ["" if v is None else _excel_text(v) for v in row]
            if not any(cells):
                continue  # a blank row (formatting left behind)
            if len(cells) > len(columns) and any(cells[len(columns) :]):
                raise InputError(f"{path}: row {len(data) + 2} has more cells than the header")
            data.append((cells + [""] * len(columns))[: len(columns)])
    finally:
        book.close()
    frame = pd.DataFrame(data, columns=pd.Index(columns), dtype=object)
    if sheet is None and len(names) > 1:  # the first was read: a missing column says so
        frame.attrs["sheets"] = names
    return frame


def _excel_text(value: object) -> str:
    """An Excel cell as text: whole numbers without ``.0`` (Excel stores every number as a
    float), dates in ISO form."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        text = value.isoformat()
        return str(text).removesuffix("T00:00:00")
    return str(value)


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types for corrupt files
        raise InputError(f"cannot read Parquet file {path}: {_first_line(exc)}") from exc


def csv_separator(path: Path, options: CsvOptions) -> str:
    """The field separator: ``options.sep``, else tab for .tsv/.tab, else the one the first
    lines show (``sniff_separator``: ARX's ``;`` files), else comma."""
    if options.sep is not None:
        return options.sep
    if options.fmt in ("csv", "tsv"):
        return "," if options.fmt == "csv" else "\t"
    if path.suffix.lower() in (".tsv", ".tab"):
        return "\t"
    return sniff_separator(path) or ","


def sniff_separator(path: Path, lines: int = 5) -> str | None:
    """``;`` or tab when the first ``lines`` lines of ``path`` hold no comma and no quote but
    the same positive number of that character (issue 25: ``anonymize`` read ARX's
    ``;``-separated files as one column), else None. Reads at most 64 KiB."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
            head = fh.read(65_536)
    except OSError:
        return None
    rows = [row for row in head.splitlines()[:lines] if row.strip()]
    if len(head) == 65_536 and len(rows) > 1:
        rows = rows[:-1]  # the last line may be cut
    if not rows or any("," in row or '"' in row for row in rows):
        return None
    for sep in (";", "\t"):
        counts = {row.count(sep) for row in rows}
        if len(counts) == 1 and counts.pop() > 0:
            return sep
    return None


def check_names(names: Sequence[str]) -> None:
    """InputError if ``--names`` repeats a column."""
    if len(set(names)) != len(names):
        dup = next(x for x in names if list(names).count(x) > 1)
        raise InputError(f"column {dup!r} is listed twice in `names`")


def check_header(fields: Sequence[str], path: Path) -> list[str]:
    """The stripped column names of a header line; InputError if one appears twice."""
    header = [x.strip() for x in fields]
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise InputError(f"column {name!r} appears twice in the header of {path}")
        seen.add(name)
    return header


def read_csv_options(options: CsvOptions, sep: str) -> dict[str, object]:
    """``pandas.read_csv`` keywords reading every cell as text, exactly as given."""
    check_quotechar(options.quotechar, sep)
    return {
        # pandas reads a separator of several characters as a regular expression: escaped, it
        # is the literal text given (``--sep '(|'`` is no unterminated group)
        "sep": sep if len(sep) == 1 else re.escape(sep),
        "header": None,
        "dtype": str,
        "keep_default_na": False,
        "na_filter": False,
        "quotechar": options.quotechar,
        "quoting": csv.QUOTE_MINIMAL,
        "skipinitialspace": options.skip_initial_space,
        "engine": "c" if len(sep) == 1 else "python",
        "encoding": "utf-8-sig",
        "index_col": False,
    }


def _read_csv(path: Path, options: CsvOptions, nrows: int | None = None) -> pd.DataFrame:
    sep = csv_separator(path, options)
    names = list(options.names) if options.names else None
    if names is not None:
        check_names(names)
    limit = None if nrows is None else nrows + (names is None)  # the header is read as a row
    try:
        frame = pd.read_csv(  # type: ignore[call-overload]
            path, **read_csv_options(options, sep), nrows=limit, skiprows=options.skip_rows
        )
    except pd.errors.EmptyDataError as exc:
        raise InputError(f"input is empty: {path}") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, csv.Error) as exc:
        raise InputError(f"malformed CSV in {path}: {_first_line(exc)}") from exc
    if names is None:
        # the header is read as a row so that duplicate names are seen, not silently renamed
        header = check_header([str(x) for x in frame.iloc[0]], path)
        frame = frame.iloc[1:].reset_index(drop=True)
        frame.columns = pd.Index(header)
        first_data_line = 2 + options.skip_rows
    else:
        if len(frame.columns) != len(names):
            raise InputError(
                f"`names` gives {len(names)} columns but {path} has {len(frame.columns)}"
            )
        frame.columns = pd.Index(names)
        first_data_line = 1 + options.skip_rows
    short = frame.isna().any(axis=1).to_numpy()  # the python engine's short rows
    if short.any():
        line = int(short.argmax()) + first_data_line
        raise InputError(f"malformed CSV in {path}: line {line} has fewer fields than the header")
    if len(sep) == 1 and len(frame.columns) > 1 and (frame.iloc[:, -1] == "").any():
        refuse_short_rows(path, sep, options.quotechar, options.skip_rows)  # padded with ""
    return frame


def refuse_short_rows(path: Path, sep: str, quotechar: str | None, skip_rows: int = 0) -> None:
    """InputError naming the first line with fewer fields than the first line, found by a
    single-threaded ``pyarrow.csv`` parse (the C engine of pandas pads a short row with empty
    cells, which would be read as a person with missing values). Only called when the last
    column has an empty cell, as every short row's does. O(file size)."""
    import pyarrow.csv as pacsv

    short: list[int | None] = []

    def invalid(row: pacsv.InvalidRow) -> str:
        if row.actual_columns < row.expected_columns and not short:
            short.append(row.number)
        return "skip"

    try:
        pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(
                autogenerate_column_names=True, use_threads=False, skip_rows=skip_rows
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=sep,
                quote_char=quotechar or False,
                newlines_in_values=True,
                invalid_row_handler=invalid,
            ),
            convert_options=pacsv.ConvertOptions(include_columns=["f0"]),
        )
    except Exception:  # pyarrow's reading differs (an encoding, a quote): pandas' read stands
        return
    if short:
        raise InputError(
            f"malformed CSV in {path}: line {short[0]} has fewer fields than the header"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
