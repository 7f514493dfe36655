"""δ-presence (Nergiz, Atzori & Clifton 2007): the widened release keeps every published row's
share of sample records among its compatible population records within [δmin, δmax], checked
by the population figures from the release and the population alone; impossible bounds are
refused before anything runs."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.tables.job import TableJob
from anonymatch.tables.models.presence import DeltaPresence
from anonymatch.tables.models.widening import enforce_population
from anonymatch.tables.risk.population import PopulationInput, population_risk
from tests.factories import random_frame

QI = ["n0", "n1", "c0", "c1"]
NUMERIC = ["n0", "n1"]
OPTIONS = PopulationInput(qi=tuple(QI), numeric=tuple(NUMERIC))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(20, 60),
    extra=st.integers(20, 200),
    high=st.floats(0.3, 1.0),
    low=st.floats(0.0, 0.2),
    seed=st.integers(0, 10_000),
)
def test_enforced_release_is_delta_present(
    n: int, extra: int, high: float, low: float, seed: int
) -> None:
    sample = random_frame(n, seed)
    population = pd.concat([sample, random_frame(extra, seed + 1)], ignore_index=True)
    if not low <= n / len(population) <= high:
        with pytest.raises(InfeasibleError, match="delta-presence"):
            enforce_population(sample, sample[QI], population, [DeltaPresence(low, high)], OPTIONS)
        return
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=seed).release
    out, _, view = enforce_population(
        sample, release, population, [DeltaPresence(low, high)], OPTIONS, k=2
    )
    figures = population_risk(sample, out, population, OPTIONS)
    assert figures.presence is not None
    assert low - 1e-12 <= figures.presence.min and figures.presence.max <= high + 1e-12
    assert view.presence == figures.presence
    assert anonymatch.verify(sample, out, k=2, qi=QI, numeric=NUMERIC).passed
    assert DeltaPresence(low, high).check(figures).passed


def test_front_records_claim_and_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sample = random_frame(60, 3)
    population = pd.concat([sample, random_frame(140, 4)], ignore_index=True)
    path = tmp_path / "population.csv"
    population.to_csv(path, index=False)
    made = anonymatch.tables.anonymize(
        sample, k=2, qi=QI, numeric=NUMERIC, delta_max=0.5, population=str(path), seed=1
    )
    claim = made.report["guarantee"]["presence"]  # type: ignore[index]
    verdict = made.report["verification"]["presence"]  # type: ignore[index]
    assert claim["delta_max"] == 0.5 and claim["delta_min"] == 0.0
    assert claim["population"] == str(path) and claim["population_sha256"]
    assert verdict["passed"] and verdict["achieved_max"] <= 0.5
    before = anonymatch.tables.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=1)
    assert population_risk(sample, before.release, population, OPTIONS).presence.max > 0.5  # type: ignore[union-attr]


def test_parameters_are_checked_once() -> None:
    with pytest.raises(InputError, match="`delta_max` needs `population`"):
        TableJob.build(dict(qi=QI, k=2, delta_max=0.5))
    with pytest.raises(InputError, match="`delta_min` needs `delta_max`"):
        TableJob.build(dict(qi=QI, k=2, delta_min=0.1, population="p.csv"))
    with pytest.raises(InputError, match="`delta_min` = 0.6 is above `delta_max` = 0.5"):
        TableJob.build(dict(qi=QI, k=2, delta_min=0.6, delta_max=0.5, population="p.csv"))
    with pytest.raises(InputError, match=r"`delta_max` must be in \(0, 1\]"):
        TableJob.build(dict(qi=QI, k=2, delta_max=1.5, population="p.csv"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'delta'"):
        anonymatch.tables.anonymize(random_frame(10, 1), k=2, qi=QI, delta=0.5)


def test_sample_outside_the_population_is_refused() -> None:
    sample = random_frame(40, 5)
    population = random_frame(200, 6)  # other people: the sample is not part of it
    release = anonymatch.anonymize(sample, k=2, qi=QI, numeric=NUMERIC, seed=2).release
    with pytest.raises(InputError, match="needs the population to contain the sample"):
        enforce_population(sample, release, population, [DeltaPresence(0.0, 0.9)], OPTIONS)
