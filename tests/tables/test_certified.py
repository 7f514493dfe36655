"""The certified check of ring releases (``models.certified``); the end-to-end cases, with the
construction, are in test_circulant.py."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.models.certified import units
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import published_groups


def _cells():
    data = pd.DataFrame({"age": [20, 21, 22, 23, 24, 25], "job": list("abcabc")})
    published = pd.DataFrame(
        {"age": ["20..21", "20..21", "22..25", "22..25", "22..25", "20..21"],
         "job": ["a|b", "b|a", "a|b|c", "a|b|c", "c|a|b", "a|b"]}
    )  # fmt: skip
    _, enc, _ = prepare(data, Schema.build(["age", "job"], ["age"]))
    return parse_cells(published, enc)


def test_identical_rows_groups_exactly_whatever_the_label_order():
    cells = _cells()
    assert published_groups(cells)[1].tolist() == [0, 0, 1, 1, 1, 0]
    assert published_groups(cells.take(np.array([5, 2])))[1].tolist() == [0, 1]


def test_units_are_ring_windows_and_groups_outside():
    cells = _cells()
    # one ring of rows 2, 3, 4 with k = 2; rows 0, 1, 5 outside form one group
    u = units(cells, 2, [np.array([2, 3, 4])]).toarray()
    assert u.shape == (6, 6)
    windows = {tuple(np.flatnonzero(r)) for r in u[:3]}
    assert windows == {(2, 3), (3, 4), (2, 4)}
    assert all(tuple(np.flatnonzero(r)) == (0, 1, 5) for r in u[3:])
