"""The verifier rejects tampered releases and accepts honest ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.tables.cells import parse_cells
from anonymatch.tables.pipeline import Release, prepare
from anonymatch.tables.schema import Schema
from anonymatch.tables.verify import compatibility
from tests.factories import random_frame

QI = ["n0", "n1", "c0", "c1"]
NUM = ["n0", "n1"]


@pytest.fixture(scope="module")
def honest() -> tuple[pd.DataFrame, Release]:
    frame = random_frame(60, 11, 2, 2, 5)
    return frame, anonymatch.anonymize(frame, k=3, qi=QI, numeric=NUM, sensitive=["s"], seed=3)


def _degrees(frame: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    _, enc, _ = prepare(frame, Schema.build(QI, NUM))
    c, _, inverse = compatibility(parse_cells(table, enc), enc)
    return c.toarray()[inverse]


def _tight_pair(frame: pd.DataFrame, table: pd.DataFrame) -> tuple[int, int]:
    """An original with exactly k = 3 matches and one published row it matches."""
    dense = _degrees(frame, table)
    i = int(np.flatnonzero(dense.sum(axis=1) == 3)[0])
    return i, int(np.flatnonzero(dense[i])[0])


def test_honest_release_passes(honest: tuple[pd.DataFrame, Release]) -> None:
    frame, release = honest
    assert anonymatch.verify(frame, release.table, k=3, qi=QI, numeric=NUM).passed
    assert not anonymatch.verify(frame, release.table, k=4, qi=QI, numeric=NUM).passed


def test_narrowed_range_is_rejected(honest: tuple[pd.DataFrame, Release]) -> None:
    frame, release = honest
    table = release.table.copy()
    i, j = _tight_pair(frame, table)
    v = int(frame["n0"][i])
    lo, _, hi = str(table.at[j, "n0"]).partition("..")
    hi = hi or lo
    # exclude original i's value from row j's range
    table.at[j, "n0"] = f"{v + 1}..{max(int(hi), v + 1)}" if int(lo) == v else f"{lo}..{v - 1}"
    if int(lo) < v < int(hi):
        table.at[j, "n0"] = f"{v + 1}..{hi}"
    report = anonymatch.verify(frame, table, k=3, qi=QI, numeric=NUM)
    assert not report.passed and report.min_matches_original < 3


def test_removed_value_is_rejected(honest: tuple[pd.DataFrame, Release]) -> None:
    frame, release = honest
    table = release.table.copy()
    i, j = _tight_pair(frame, table)
    values = [x for x in str(table.at[j, "c0"]).split("|") if x != frame["c0"][i]]
    table.at[j, "c0"] = "|".join(values) if values else "no-such-value"
    assert not anonymatch.verify(frame, table, k=3, qi=QI, numeric=NUM).passed


def test_swapped_row_is_rejected(honest: tuple[pd.DataFrame, Release]) -> None:
    frame, release = honest
    table = release.table.copy()
    i, j = _tight_pair(frame, table)
    dense = _degrees(frame, table)
    # replace row j's QI cells by those of a row that original i does not match
    other = int(np.flatnonzero(~dense[i].astype(bool))[0])
    table.loc[j, QI] = table.loc[other, QI].to_numpy()
    assert not anonymatch.verify(frame, table, k=3, qi=QI, numeric=NUM).passed


def test_dropped_row_is_rejected(honest: tuple[pd.DataFrame, Release]) -> None:
    frame, release = honest
    report = anonymatch.verify(frame, release.table.iloc[1:], k=3, qi=QI, numeric=NUM)
    assert not report.passed and "rows" in report.reason


def test_k_factor_needed_not_just_degrees() -> None:
    """Every original and every published row has ≥ 2 matches, yet no 2-factor exists: the three
    originals with x = 1 match only rows 0 and 1, which can absorb 2 × 2 = 4 of the 6 matches
    they need (Hall's condition fails). The max-flow check must catch it."""
    original = pd.DataFrame({"x": [1, 1, 1, 4, 4, 4]})
    published = pd.DataFrame({"x": ["1..4", "1..4", "4", "4", "4", "4"]})
    report = anonymatch.verify(original, published, k=2, qi=["x"], numeric=["x"])
    assert report.min_matches_original >= 2 and report.min_matches_published >= 2
    assert not report.passed and "k-factor" in report.reason
    # one more row able to hold x = 1 restores the 2-factor
    published = pd.DataFrame({"x": ["1..4", "1..4", "1..4", "4", "4", "4"]})
    assert anonymatch.verify(original, published, k=2, qi=["x"], numeric=["x"]).passed


def test_suppressed_cells_match_everything() -> None:
    original = pd.DataFrame({"x": [1, 2], "c": ["a", "b"]})
    published = pd.DataFrame({"x": ["*", "*"], "c": ["*", "a|b"]})
    assert anonymatch.verify(original, published, k=2, qi="x,c", numeric="x").passed
