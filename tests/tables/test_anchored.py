"""Anchored imputation of a release's cells (issue 27): the ends are neighbours' values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.models.anchored import AnchoredModel, draw_ranges, row_degrees
from anonymatch.tables.models.imputation import draw_microdata, rubin_mean


def population(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = np.minimum(17 + rng.gamma(2.0, 9.0, n).astype(int), 90)  # skewed, like Adult's
    return pd.DataFrame(
        {
            "age": age,
            "job": rng.choice(["a", "b", "c", "d"], n, p=[0.55, 0.25, 0.15, 0.05]),
            "hours": 30 + age // 3 + rng.integers(0, 10, n),
        }
    )


def test_k2_anchored_draws_are_unbiased_for_the_mean_and_shares() -> None:
    # at k = 2 a cell's two neighbours are its two ends (a set: its labels), each the row's
    # person with probability 1/2: the expected imputed mean is exactly the original's
    orig = population(120, 0)
    rel = anonymatch.anonymize(orig, k=2, qi=["age", "job"], numeric=["age"], seed=1).release
    from anonymatch.tables.models.features import cell_bounds

    typed = pd.DataFrame(
        {
            "age": pd.arrays.IntervalArray.from_arrays(*cell_bounds(rel["age"]), closed="both"),
            "job": [frozenset(str(c).split("|")) for c in rel["job"]],
        }
    )
    typed.attrs["qi"] = ["age", "job"]
    tables = draw_microdata(typed, m=400, seed=3, weights="anchored", degree=2)
    means = np.array([t["age"].mean() for t in tables])
    assert means.mean() == pytest.approx(orig["age"].mean(), abs=4 * means.std() / 20 + 1e-9)
    share = np.mean([np.mean(t["job"] == "d") for t in tables])
    assert share == pytest.approx(np.mean(orig["job"] == "d"), abs=0.01)
    for t in tables[:5]:
        assert (
            (t["age"] >= typed["age"].array.left) & (t["age"] <= typed["age"].array.right)
        ).all()
        assert all(v in s for v, s in zip(t["job"], typed["job"], strict=True))


def test_intervals_cover_a_freeform_release_of_a_skewed_column() -> None:
    orig = population(600, 4)
    rel = anonymatch.anonymize(orig, k=6, qi=["age", "job"], numeric=["age"], seed=2).release
    from anonymatch.tables.models.features import cell_bounds

    lo, hi = cell_bounds(rel["age"])
    typed = pd.DataFrame(
        {"age": pd.arrays.IntervalArray.from_arrays(lo, hi, closed="both"), "hours": orig["hours"]}
    )
    typed.attrs["qi"] = ["age"]
    r = rubin_mean(draw_microdata(typed, m=10, seed=5, weights="anchored", degree=6), "age")
    assert r.interval[0] <= orig["age"].mean() <= r.interval[1]
    assert r.fraction_missing > 0  # the interior's shape is carried into the interval


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), min_size=1, max_size=40),
    st.integers(2, 6),
    st.floats(0, 1),
)
def test_range_draws_are_support_points_inside_the_cells(
    cells: list[tuple[int, int]], d: int, gamma: float
) -> None:
    lo = np.array([a for a, _ in cells], float)
    hi = lo + np.array([w for _, w in cells], float)
    model = AnchoredModel(np.full(len(lo), d), gamma)
    x = draw_ranges(lo, hi, model, np.random.default_rng(0))
    assert ((x >= lo) & (x <= hi)).all()
    assert set(x) <= set(lo) | set(hi)


def test_ends_are_taken_with_probability_one_over_d() -> None:
    lo, hi = np.zeros(20000), np.full(20000, 9.0)
    hi[:10] = 0  # exact cells put mass on 0 only; the rest is flat (γ = 0)
    x = draw_ranges(lo, hi, AnchoredModel(np.full(20000, 10), 0.0), np.random.default_rng(1))
    # support = {0, 9}: each end 1/10 + the interior's 8/10 split evenly
    assert np.mean(x[10:] == 9) == pytest.approx(0.5, abs=0.02)


def test_class_sizes_as_degrees() -> None:
    rel = pd.DataFrame({"a": ["x"] * 5 + ["y"] * 2, "b": ["1"] * 7})
    assert row_degrees(rel, ["a", "b"], 3).tolist() == [5] * 5 + [3] * 2


def test_errors() -> None:
    rel = pd.DataFrame({"x": pd.arrays.IntervalArray.from_tuples([(0, 2), (1, 3)], "both")})
    rel.attrs["qi"] = ["x"]
    with pytest.raises(InputError, match="`degree`"):
        draw_microdata(rel, m=2, weights="anchored")
    with pytest.raises(InputError, match="shape"):
        draw_microdata(rel, m=2, weights="anchored", degree=2, shape=(1.0, 0.0))
    with pytest.raises(InputError, match="degree"):
        draw_microdata(rel, m=2, weights="anchored", degree=0)
