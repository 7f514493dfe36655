"""core.csvsafe: the CSV formula guard (issue 15 item 12) — escaping then unescaping is the
identity on every cell, a guarded cell never starts a formula, numbers and ranges are untouched;
pandas and Arrow implementations agree."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.csvsafe import (
    TRIGGERS,
    escape_series,
    escape_table,
    unescape_series,
    unescape_table,
)

cells = st.one_of(
    st.text(alphabet=st.sampled_from(list("=+-@'\t\r a1.|\\e")), max_size=6),
    st.sampled_from(["-5", "-5..3", "+1e+19", "-1e+300..2", "=1+1", "@SUM(A1)", "'", "''=x"]),
)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(cells, min_size=1, max_size=12), neutralize=st.booleans())
def test_escape_then_unescape_is_the_identity(values: list[str], neutralize: bool) -> None:
    series = pd.Series(values, dtype=object)
    escaped = escape_series(series, neutralize)
    assert unescape_series(escaped).tolist() == values
    table = escape_table(pa.table({"c": pa.array(values, pa.string())}), neutralize)
    assert table.column("c").to_pylist() == escaped.tolist()  # Arrow and pandas agree
    assert unescape_table(table).column("c").to_pylist() == values


@settings(max_examples=200, deadline=None)
@given(values=st.lists(cells, min_size=1, max_size=12))
def test_a_guarded_cell_never_starts_a_formula(values: list[str]) -> None:
    import re

    from anonymatch.core.csvsafe import NUMBER_OR_RANGE

    for cell in escape_series(pd.Series(values, dtype=object)).tolist():
        if cell and cell[0] in TRIGGERS:
            assert re.match(NUMBER_OR_RANGE, cell), cell


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=HYPERLINK(x)", "'=HYPERLINK(x)"),
        ("+x", "'+x"),
        ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-5", "-5"),
        ("-5..3", "-5..3"),
        ("-1e+19..-2.5", "-1e+19..-2.5"),
        ("'=x", "''=x"),
        ("'abc", "'abc"),
        ("plain", "plain"),
        ("", ""),
    ],
)
def test_the_owasp_cases(cell: str, written: str) -> None:
    assert escape_series(pd.Series([cell], dtype=object)).tolist() == [written]


def test_without_the_guard_only_quote_cells_are_escaped() -> None:
    raw = pd.Series(["=x", "'=x", "'a"], dtype=object)
    assert escape_series(raw, neutralize=False).tolist() == ["=x", "''=x", "'a"]


def test_non_text_cells_are_left_alone() -> None:
    series = pd.Series([-5, None, "=x", 2.5], dtype=object)
    assert escape_series(series).tolist() == [-5, None, "'=x", 2.5]


csv_cells = st.one_of(
    st.text(alphabet=st.sampled_from(list("=+-@'\t\r\n a1.|\\\",;é\0")), max_size=6),
    st.sampled_from(["", "-5", "-5..3", "=1+1", 'a"b', "a,b", "x\ny", " lead", "trail "]),
)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(csv_cells, csv_cells, csv_cells), min_size=1, max_size=8),
    names=st.lists(csv_cells, min_size=3, max_size=3, unique=True),
    sep=st.sampled_from([",", "\t"]),
    neutralize=st.booleans(),
    arrow=st.booleans(),
)
def test_write_text_csv_writes_the_bytes_pandas_writes(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, str, str]],
    names: list[str],
    sep: str,
    neutralize: bool,
    arrow: bool,
) -> None:
    """The fast release writer is byte-identical to ``escape_frame`` + ``DataFrame.to_csv`` on
    text frames: quotes, separators, line breaks, NUL, formula triggers, empty cells, headers
    that need quoting, object and Arrow string columns."""
    from anonymatch.core.csvsafe import escape_frame, write_text_csv

    dtype = "str" if arrow else object
    columns = zip(names, zip(*rows, strict=True), strict=True)
    frame = pd.DataFrame({n: pd.Series(col, dtype=dtype) for n, col in columns})
    folder = tmp_path_factory.mktemp("csv")
    expected, written = folder / "pandas.csv", folder / "fast.csv"
    escape_frame(frame, neutralize).to_csv(expected, index=False, sep=sep)
    assert write_text_csv(frame, written, sep, neutralize)
    if not any("\r" in cell for cell in [*names, *(c for row in rows for c in row)]):
        assert written.read_bytes() == expected.read_bytes()
    # and whatever the cells, the file reads back as written (pandas leaves a lone "\r" bare)
    header, *back = _read_back(written, sep)
    assert header == names
    assert back == escape_frame(frame, neutralize).to_numpy().tolist()


def _read_back(path: Path, sep: str) -> list[list[str]]:
    """The fields of a CSV file, as the ``csv`` module reads them."""
    with open(path, encoding="utf-8", newline="") as fh:
        return [list(row) for row in csv.reader(fh, delimiter=sep)]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(csv_cells, st.integers(-5, 5)), min_size=1, max_size=6),
    sep=st.sampled_from([",", "\t"]),
)
def test_a_release_with_numbers_reads_back_as_written(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, int]], sep: str
) -> None:
    """The pandas branch of the CSV writer (a numeric column) quotes a cell holding a
    carriage return, the separator, a quote or a line break, so the file reads back."""
    from anonymatch.core.csvsafe import escape_frame, write_csv

    frame = pd.DataFrame({"text": [r[0] for r in rows], "n": [r[1] for r in rows]})
    path = tmp_path_factory.mktemp("csv") / "out.csv"
    write_csv(frame, path, sep)
    header, *back = _read_back(path, sep)
    assert header == ["text", "n"]
    assert back == [
        [t, str(n)] for t, n in zip(escape_frame(frame)["text"], frame["n"], strict=True)
    ]


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"a": ["x", "y"]}),  # one column: csv quotes a lone empty field
        pd.DataFrame({"a": ["x", None], "b": ["1", "2"]}),  # a missing cell: pandas' na_rep
        pd.DataFrame({"a": ["x", "y"], "b": [1, 2]}),  # numbers: pandas formats them
        pd.DataFrame({"a": ["x", 3], "b": ["1", "2"]}, dtype=object),  # mixed object column
        pd.DataFrame({0: ["x", "y"], 1: ["1", "2"]}),  # names that are not strings
        pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=object)}),
    ],
)
def test_write_text_csv_leaves_other_frames_to_pandas(tmp_path, frame: pd.DataFrame) -> None:
    from anonymatch.core.csvsafe import write_text_csv

    path = tmp_path / "out.csv"
    assert not write_text_csv(frame, path, ",")
    assert not path.exists()
