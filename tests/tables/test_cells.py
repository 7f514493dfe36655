"""Release cells: escaping and number formatting round-trip exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.cells import escape_label, format_cells, parse_cells, split_cell
from anonymatch.tables.recode import recode
from anonymatch.tables.schema import Schema, encode_qi


@given(st.lists(st.text(min_size=0, max_size=6), min_size=1, max_size=5, unique=True))
def test_escape_split_round_trip(labels: list[str]) -> None:
    cell = "|".join(escape_label(x) for x in labels)
    if cell == "*":
        return  # a lone unescaped star is the suppression marker, never produced by escaping
    assert split_cell(cell) == labels


@settings(max_examples=50, deadline=None)
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=12),
    labels=st.lists(
        st.sampled_from(["a", "b|c", "d\\e", "*", "f*", "", " g"]), min_size=2, max_size=12
    ),
)
def test_cells_round_trip_through_text(values: list[float], labels: list[str]) -> None:
    n = min(len(values), len(labels))
    frame = pd.DataFrame({"x": values[:n], "c": labels[:n]})
    enc = encode_qi(frame, Schema.build(["x", "c"], numeric=["x"]), na_values=())
    rng = np.random.default_rng(n)
    # each published row covers itself and a random other row
    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([np.arange(n), rng.permutation(n)])
    cells = recode(GeneralizationGraph.from_edges(rows, cols, n), enc)
    text = pd.DataFrame(format_cells(cells, enc))
    back = parse_cells(text, enc)
    assert np.array_equal(back.num_lo, cells.num_lo) and np.array_equal(back.num_hi, cells.num_hi)
    assert (back.cat_sets[0] != cells.cat_sets[0]).nnz == 0


def test_integral_columns_print_as_integers() -> None:
    frame = pd.DataFrame({"x": ["1", "5", "3"], "c": ["a", "b", "a"]})
    enc = encode_qi(frame, Schema.build(["x", "c"], numeric=["x"]))
    graph = GeneralizationGraph.from_edges(np.array([0, 1, 2, 1]), np.array([0, 1, 2, 0]), 3)
    text = format_cells(recode(graph, enc), enc)
    assert text["x"] == ["1..5", "5", "3"]
    assert text["c"] == ["a|b", "b", "a"]
