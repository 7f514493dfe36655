"""Population-uniqueness estimators and individual risk: ARX's and sdcMicro's worked examples,
the edge cases, and a synthetic population whose truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymatch.core.errors import InputError
from anonymatch.tables.risk.estimators import (
    Histogram,
    WeightColumn,
    dankar,
    estimate_all,
    pitman,
    sample_estimates,
    snb,
    zayatz,
)

# ARX's data/adult.csv with its 9 columns as QIs (30,162 records): class size → classes.
# ARX's TestRiskMetrics.testDecisionRule2 checks Dankar's rule on it to four digits.
ARX_ADULT = {
    1: 15512, 2: 2098, 3: 754, 4: 375, 5: 189, 6: 155, 7: 97, 8: 73, 9: 39, 10: 37, 11: 29,
    12: 18, 13: 23, 14: 14, 15: 15, 16: 9, 17: 11, 18: 10, 19: 10, 20: 5, 21: 3, 22: 4, 23: 3,
    24: 2, 25: 1, 26: 3, 27: 5, 29: 1, 30: 2, 32: 1, 34: 1, 35: 1, 36: 1, 45: 1,
}  # fmt: skip


def _arx(fraction: float) -> Histogram:
    sizes = np.repeat(list(ARX_ADULT), list(ARX_ADULT.values()))
    return Histogram.of(sizes, sizes.sum() / fraction)


def _digits(value: float | None) -> int:
    """ARX's comparison: four digits, truncated."""
    assert value is not None
    return int(value * 10000)


def test_arx_worked_example() -> None:
    assert _arx(1.0).n == 30162
    # Pitman (ARX chooses it at f ≤ 0.1) and Zayatz (at 0.2: ARX's SNB does not converge)
    assert _digits(pitman(_arx(0.01)) / _arx(0.01).population) == int(0.1446083531167384 * 1e4)
    assert _digits(pitman(_arx(0.1)) / _arx(0.1).population) == int(0.27684993883653597 * 1e4)
    assert _digits(zayatz(_arx(0.1)) / _arx(0.1).population) == int(0.3207402393466189 * 1e4)
    assert _digits(zayatz(_arx(0.2)) / _arx(0.2).population) == int(0.3577099234829125 * 1e4)
    for f, expected in ((0.01, 0.1446083531167384), (0.1, 0.27684993883653597)):
        chosen = dankar(_arx(f))
        assert chosen.model == "pitman" and _digits(chosen.share) == int(expected * 1e4)
    # a census: every estimate is the sample uniques
    whole = dankar(_arx(1.0))
    assert _digits(whole.share) == int(0.5142895033485844 * 1e4)
    # our SNB converges at 0.2 (K from the model), and Dankar's rule takes the smaller
    at_02 = dankar(_arx(0.2))
    assert at_02.model == "snb" and at_02.uniques == snb(_arx(0.2))
    assert at_02.uniques is not None and at_02.uniques < zayatz(_arx(0.2))  # type: ignore[operator]


def test_no_sample_uniques_means_no_population_uniques() -> None:
    hist = Histogram.of(np.array([2, 2, 3, 5]), 120)
    assert [e.uniques for e in estimate_all(hist)] == [0.0, 0.0, 0.0, 0.0]


def test_sdcmicro_worked_example() -> None:
    """sdcMicro tests/testthat/test_indivRisk.R, method "approx", survey weights."""
    keys = np.array(
        [[2, 3, 3], [3, 3, 1], [2, 3, 3], [2, 3, 1], [3, 3, 2], [3, 3, 2], [1, 4, 1], [2, 3, 3]],
        dtype=float,
    )
    weights = np.array([18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51])
    expected = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883]
    expected += [0.03931625, 0.01369863]
    got = sample_estimates(keys, weights=WeightColumn("w", weights))
    assert got.individual == pytest.approx(expected, abs=1e-8)
    assert got.population == pytest.approx(weights.sum())
    assert got.to_dict()["individual_risk"]["expected_reidentifications"] == pytest.approx(
        sum(expected)
    )


def test_uniform_weights_equal_a_fraction() -> None:
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 6, (300, 3)).astype(float)
    by_fraction = sample_estimates(keys, fraction=0.25)
    by_weights = sample_estimates(keys, weights=WeightColumn("w", np.full(300, 4.0)))
    assert by_fraction.individual == pytest.approx(by_weights.individual)
    assert [e.uniques for e in by_fraction.estimates] == pytest.approx(
        [e.uniques for e in by_weights.estimates]
    )
    # a census (f = 1): the individual risk is 1 / class size
    census = sample_estimates(keys, fraction=1.0)
    sizes = pd.DataFrame(keys).groupby([0, 1, 2])[0].transform("size").to_numpy()
    assert census.individual == pytest.approx(1 / sizes)


@pytest.mark.parametrize("fraction", [0.05, 0.2])
def test_estimates_track_a_synthetic_population(fraction: float) -> None:
    """A skewed synthetic population whose population uniques are counted exactly: every
    estimate is within a factor two of the truth, SNB and Dankar within 30 % at f = 0.2."""
    rng = np.random.default_rng(1)
    n_pop = 100_000
    cols = []
    for card, s in ((60, 1.1), (16, 0.8), (7, 0.5), (30, 1.3), (2, 0.0)):
        p = 1 / np.arange(1, card + 1) ** s
        cols.append(rng.choice(card, n_pop, p=p / p.sum()))
    pop = np.stack(cols, axis=1).astype(float)
    _, inverse, counts = np.unique(pop, axis=0, return_inverse=True, return_counts=True)
    truth = (counts == 1).sum() / n_pop
    rows = rng.choice(n_pop, int(n_pop * fraction), replace=False)
    est = {e.name: e.share for e in sample_estimates(pop[rows], fraction=fraction).estimates}
    for name, share in est.items():
        assert share is not None and truth / 2 < share < 2 * truth, name
    if fraction == 0.2:
        assert est["snb"] == pytest.approx(truth, rel=0.3)
        assert est["dankar"] == pytest.approx(truth, rel=0.3)


def test_bad_fraction_and_weights() -> None:
    keys = np.zeros((4, 1))
    for bad in (0, -0.1, 1.5):
        with pytest.raises(InputError, match="sampling_fraction must be in"):
            sample_estimates(keys, fraction=bad)
    with pytest.raises(InputError, match="must be positive"):
        sample_estimates(keys, weights=WeightColumn("w", np.array([1.0, 2.0, -1.0, 3.0])))
    with pytest.raises(InputError, match="must be positive"):
        sample_estimates(keys, weights=WeightColumn("w", np.array([1.0, 2.0, np.nan, 3.0])))


@pytest.mark.parametrize("fraction", [1e-320, 1e-15])
def test_a_population_beyond_any_is_refused(fraction: float) -> None:
    """A fraction so small, or weights so large, that n / f or Σw overflow the estimators'
    sums: one InputError, not an internal error (found by the hostile tests of issue 37)."""
    keys = np.arange(8.0).reshape(-1, 1) % 3
    with pytest.raises(InputError, match="sampling_fraction` implies"):
        sample_estimates(keys, fraction=fraction)
    with pytest.raises(InputError, match="weights` implies"):
        sample_estimates(keys, weights=WeightColumn("w", np.full(8, 1e308)))
    assert sample_estimates(keys, fraction=1e-12).population == pytest.approx(8e12)
