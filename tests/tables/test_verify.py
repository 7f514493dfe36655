"""The verifier rejects tampered releases and accepts honest ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.pipeline import Release, prepare
from tests.factories import dense_compatibility, person_compatibility, random_frame

QI = ["n0", "n1", "c0", "c1"]
NUM = ["n0", "n1"]


@pytest.fixture(scope="module")
def honest() -> tuple[pd.DataFrame, Release]:
    frame = random_frame(60, 11, 2, 2, 5)
    return frame, anonymatch.anonymize(frame, k=3, qi=QI, numeric=NUM, sensitive=["s"], seed=3)


def _degrees(frame: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    _, enc, _ = prepare(frame, Schema.build(QI, NUM))
    c, _, inverse = person_compatibility(parse_cells(table, enc), enc)
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


def _random_cell(rng: np.random.Generator, numeric: bool, values: list) -> str:
    """A random published cell: ``*``, a range / value set (possibly with a label absent from
    the original), or a single value."""
    kind = rng.integers(0, 4)
    if kind == 0:
        return "*"
    if numeric:
        a, b = sorted(rng.integers(-2, 32, 2).tolist())
        return f"{a}..{b}" if kind > 1 else str(a)
    size = int(rng.integers(1, len(values) + 2))
    pool = [*values, "absent"]
    return "|".join(sorted(set(rng.choice(pool, size).tolist())))


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 70),
    card=st.integers(1, 6),
    n_cat=st.integers(0, 3),
    n_num=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
    missing=st.booleans(),
)
def test_compatibility_equals_brute_force(
    n: int, card: int, n_cat: int, n_num: int, seed: int, missing: bool
) -> None:
    """The indexed candidate search (single-cell index or the lexicographic prefix index, on a
    thread pool) finds exactly the pairs a dense check of every cell finds; a missing original
    value fits only ``*`` (docs/guarantees/missing.md)."""
    if n_cat + n_num == 0:
        n_num = 1
    frame = random_frame(n, seed % 10_000, n_num, n_cat, card)
    qi = [c for c in frame.columns if c != "s"]
    numeric = [c for c in qi if c.startswith("n")]
    if missing:  # about a fifth of each QI missing
        holes = np.random.default_rng(seed + 1).random((n, len(qi))) < 0.2
        frame[qi] = frame[qi].astype(object).mask(holes, None)
        frame[numeric] = frame[numeric].astype(float)
    _, enc, _ = prepare(frame, Schema.build(qi, numeric))
    rng = np.random.default_rng(seed)
    domains = {c: sorted({str(x) for x in frame[c].dropna()}) for c in qi}
    published = pd.DataFrame(
        {c: [_random_cell(rng, c in numeric, domains[c]) for _ in range(n)] for c in qi}
    )
    c, _, inverse = person_compatibility(parse_cells(published, enc), enc)
    got = c.toarray()[inverse].astype(bool)
    want = dense_compatibility(frame, published, qi, numeric)
    assert np.array_equal(got, want)


def test_compatibility_equals_brute_force_on_threads_and_overflowing_prefixes() -> None:
    """Large enough for several thread slices, with wide domains so that the prefix index
    overflows its 256 ranges (stars and wide sets on 40-value attributes)."""
    n = 4500
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "n0": rng.integers(0, 200, n),
            "c0": [f"v{x}" for x in rng.integers(0, 40, n)],
            "c1": [f"w{x}" for x in rng.integers(0, 40, n)],
            "n1": rng.integers(0, 30, n),
        }
    )
    qi, numeric = ["n0", "c0", "c1", "n1"], ["n0", "n1"]
    _, enc, _ = prepare(frame, Schema.build(qi, numeric))
    cells: dict[str, list[str]] = {}
    prefix = {"c0": "v", "c1": "w"}
    want = np.ones((n, n), dtype=bool)
    for col in qi:
        if col in numeric:
            orig = frame[col].to_numpy()
        else:  # brute force on integer codes (fast), cells written as labels
            orig = frame[col].str[1:].astype(int).to_numpy()
        column = []
        for j in range(n):
            if rng.random() < 0.3:
                column.append("*")
                continue
            if col in numeric:
                a = int(rng.integers(0, 200))
                b = a + int(rng.integers(0, 60))
                column.append(f"{a}..{b}")
                want[:, j] &= (orig >= a) & (orig <= b)
            else:
                codes = np.unique(rng.integers(0, 40, int(rng.integers(1, 30))))
                column.append("|".join(sorted(f"{prefix[col]}{x}" for x in codes)))
                member = np.zeros(40, dtype=bool)
                member[codes] = True
                want[:, j] &= member[orig]
        cells[col] = column
    c, _, inverse = person_compatibility(parse_cells(pd.DataFrame(cells), enc), enc)
    assert np.array_equal(c.toarray()[inverse].astype(bool), want)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.sampled_from([-0.0, 0.0, 1.5, -1.0, 2.0, np.inf]), min_size=3, max_size=3),
        max_size=25,
    )
)
def test_group_rows_is_numpy_unique(rows: list[list[float]]) -> None:
    """``group_rows`` (lexsort) gives ``np.unique(axis=0)``'s rows, inverse and counts."""
    from anonymatch.core.view import group_rows

    keys = np.array(rows, dtype=np.float64).reshape(-1, 3)
    uniq, inverse, counts = group_rows(keys)
    expected, inv, cnt = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    assert np.array_equal(uniq, expected)  # == : a −0.0 row may stand for 0.0, as in numpy
    assert np.array_equal(inverse, inv.reshape(-1)) and np.array_equal(counts, cnt)
