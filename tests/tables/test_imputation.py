"""draw_microdata and Rubin's rules (issue 27)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.models.imputation import (
    draw_microdata,
    ols,
    rubin_coefficient,
    rubin_combine,
    rubin_mean,
    rubin_proportion,
)


def exact_release(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 50, n)
    c = rng.choice(["a", "b", "c"], n)
    y = 2.0 * x + rng.normal(0, 3, n)
    rel = pd.DataFrame(
        {
            "x": pd.arrays.IntervalArray.from_arrays(x, x, closed="both"),
            "c": [frozenset([v]) for v in c],
            "y": y,
        }
    )
    rel.attrs["qi"] = ["x", "c"]
    return pd.DataFrame({"x": x, "c": c, "y": y}), rel


def test_exact_release_gives_the_plain_estimates() -> None:
    orig, rel = exact_release(80, 0)
    for weights in ("uniform", "marginal"):
        tables = draw_microdata(rel, m=5, seed=1, weights=weights)
        assert all(t["x"].tolist() == orig["x"].tolist() for t in tables)
        mean = rubin_mean(tables, "x")
        assert mean.estimate == pytest.approx(orig["x"].mean())
        assert mean.between == 0
        assert mean.std_error == pytest.approx(orig["x"].std() / np.sqrt(80))
        share = rubin_proportion(tables, "c", "a")
        assert share.estimate == pytest.approx(np.mean(orig["c"] == "a")) and share.between == 0
        coef = rubin_coefficient(tables, "y", ["x"])
        plain, var = ols(orig["y"].to_numpy(), orig[["x"]].to_numpy(float))
        assert coef.estimate == pytest.approx(plain[1]) and coef.between == 0
        assert coef.std_error == pytest.approx(np.sqrt(var[1]))
        assert coef.df == pytest.approx(79 / 81 * 78)  # Barnard–Rubin, B = 0, ν_com = n − 2


def test_draws_stay_inside_their_cells() -> None:
    rng = np.random.default_rng(3)
    lo = rng.integers(0, 40, 60)
    hi = lo + rng.integers(0, 10, 60)
    sets = [frozenset(rng.choice(list("abcd"), rng.integers(1, 4), replace=False)) for _ in lo]
    sets[0] = pd.NA
    rel = pd.DataFrame({"x": pd.arrays.IntervalArray.from_arrays(lo, hi, closed="both"), "c": sets})
    for weights in ("uniform", "marginal"):
        for t in draw_microdata(rel, m=4, seed=2, weights=weights, columns=["x", "c"]):
            assert t["x"].dtype == np.int64
            assert ((t["x"] >= lo) & (t["x"] <= hi)).all()
            assert all(v in s for v, s in zip(t["c"][1:], sets[1:], strict=True))
            assert t["c"][0] in set("abcd")


def test_float_ranges_and_suppressed_cells() -> None:
    rel = pd.DataFrame({"x": ["0.5..1.5", "*", "2.25..2.25", "1..3"]})
    rel.attrs["qi"], rel.attrs["ranges"] = ["x"], ["x"]
    for weights in ("uniform", "marginal"):
        t = draw_microdata(rel, m=1, seed=0, weights=weights)[0]
        x = t["x"].to_numpy(float)
        assert 0.5 <= x[0] <= 1.5 and 0.5 <= x[1] <= 3 and x[2] == 2.25 and 1 <= x[3] <= 3


def test_interval_coverage_on_a_synthetic_population() -> None:
    """Cells placed at random around each value: the 95 % interval of the mean covers the
    population mean about 95 % of the time."""
    rng = np.random.default_rng(7)
    hits, reps = 0, 120
    for _ in range(reps):
        x = rng.integers(20, 60, 100)
        width = rng.integers(0, 12, 100)
        lo = x - rng.integers(0, width + 1)
        rel = pd.DataFrame(
            {"x": pd.arrays.IntervalArray.from_arrays(lo, lo + width, closed="both")}
        )
        est = rubin_mean(draw_microdata(rel, m=10, seed=int(rng.integers(1 << 30))), "x")
        hits += est.interval[0] <= 39.5 <= est.interval[1]
    assert hits / reps >= 0.88


def test_combine_matches_rubins_formulas() -> None:
    q, u = [1.0, 1.2, 0.9, 1.1], [0.01, 0.012, 0.011, 0.009]
    r = rubin_combine(q, u)
    b = np.var(q, ddof=1)
    total = np.mean(u) + 1.25 * b
    lam = 1.25 * b / total
    assert r.std_error == pytest.approx(np.sqrt(total))
    assert r.df == pytest.approx(3 / lam**2)  # Rubin's classic df without a complete-data df
    t = stats.t.ppf(0.975, r.df)
    assert r.interval == pytest.approx((np.mean(q) - t * r.std_error, np.mean(q) + t * r.std_error))
    assert set(r.to_dict()) >= {"estimate", "std_error", "interval", "df"}


def test_errors() -> None:
    _, rel = exact_release(10, 0)
    with pytest.raises(InputError, match="weights"):
        draw_microdata(rel, m=2, weights="nope")
    with pytest.raises(InputError, match="no column 'z'"):
        draw_microdata(rel, m=2, columns=["z"])
    with pytest.raises(InputError, match="not numbers"):
        rubin_mean([rel], "c")
    with pytest.raises(InputError, match="term"):
        rubin_coefficient([rel], "y", ["x"], term="c")


def test_front_names() -> None:
    assert anonymatch.tables.draw_microdata is draw_microdata
    assert anonymatch.tables.rubin_mean is rubin_mean
