"""core.csvsafe: the CSV formula guard (issue 15 item 12) — escaping then unescaping is the
identity on every cell, a guarded cell never starts a formula, numbers and ranges are untouched;
pandas and Arrow implementations agree."""

from __future__ import annotations

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
