"""Release cells: escaping and number formatting round-trip exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import escape_label, format_cells, parse_cells, split_cell
from anonymatch.tables.recode import recode


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


def _reference_text(cells, enc) -> dict[str, list[str]]:
    """Row-by-row formatting, as the release grammar states it (the vectorized
    ``format_cells`` must give exactly this)."""
    out: dict[str, list[str]] = {}
    for a, name in enumerate(enc.num_names):
        col = []
        bounds = zip(cells.num_lo[:, a], cells.num_hi[:, a], cells.num_star[:, a], strict=True)
        for lo, hi, star in bounds:
            x, y = (
                (str(int(v)) if enc.num_integral[a] and abs(v) < 2.0**53 else repr(float(v)))
                for v in (lo, hi)
            )
            col.append("*" if star else (x if x == y else f"{x}..{y}"))
        out[name] = col
    for a, name in enumerate(enc.cat_names):
        labels = [escape_label(str(v)) for v in enc.cat_domains[a]]
        sets = cells.cat_sets[a]
        out[name] = [
            "*"
            if cells.cat_star[j, a]
            else "|".join(labels[i] for i in sets.indices[sets.indptr[j] : sets.indptr[j + 1]])
            for j in range(cells.n)
        ]
    return out


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from([-0.0, 0.0, 1.0, 2.5, -3.0, 1e19, 2.0**53, 7.0]),
            st.sampled_from(["a", "b|c", "d\\e", "*", "", " g"]),
            st.sampled_from(["x", "y", "z"]),
        ),
        min_size=1,
        max_size=10,
    ),
    seed=st.integers(0, 2**16),
)
def test_format_cells_matches_the_row_by_row_grammar(data, seed: int) -> None:
    """Stars, empty and one-label sets, repeated bounds, −0.0 beside 0.0, large integers."""
    import dataclasses

    frame = pd.DataFrame(data, columns=["x", "c", "e"])
    enc = encode_qi(frame, Schema.build(["x", "c", "e"], numeric=["x"]), na_values=())
    rng = np.random.default_rng(seed)
    n = len(frame)
    rows = np.concatenate([np.arange(n), rng.integers(0, n, n)])
    cols = np.concatenate([np.arange(n), np.arange(n)])
    cells = recode(GeneralizationGraph.from_edges(rows, cols, n), enc)
    sets = list(cells.cat_sets)
    empty = rng.random(n) < 0.3  # published rows whose first set is empty
    m = sets[0].tolil()
    for j in np.flatnonzero(empty):
        m.rows[j], m.data[j] = [], []
    sets[0] = type(cells.cat_sets[0])(m.tocsr())
    cells = dataclasses.replace(
        cells,
        cat_sets=tuple(sets),
        num_star=rng.random(cells.num_star.shape) < 0.3,
        cat_star=rng.random(cells.cat_star.shape) < 0.3,
    )
    assert format_cells(cells, enc) == _reference_text(cells, enc)
