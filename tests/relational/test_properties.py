"""Property test: releases of random small relational-transaction inputs pass the independent
verifier, for every method and level, with people without items and missing QI values."""

from __future__ import annotations

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.relational import anonymize, verify
from anonymatch.relational.io import from_frames
from anonymatch.relational.methods import names


@st.composite
def inputs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, int, str]:
    n = draw(st.integers(2, 14))
    k = draw(st.integers(1, n))
    ages = draw(st.lists(st.integers(0, 5) | st.none(), min_size=n, max_size=n))
    colours = draw(st.lists(st.sampled_from("rgb"), min_size=n, max_size=n))
    sets = draw(st.lists(st.sets(st.sampled_from("uvwxy"), max_size=3), min_size=n, max_size=n))
    if not any(sets):
        sets[0] = {"u"}
    table = pd.DataFrame({"id": range(n), "age": ages, "colour": colours})
    rows = [(i, c) for i, s in enumerate(sets) for c in sorted(s)]
    method = draw(st.sampled_from(names()))
    return table, pd.DataFrame(rows, columns=["id", "code"]), k, method


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs(), st.sampled_from([0.0, 0.01, 1.0]))
def test_releases_pass_the_verifier(
    data: tuple[pd.DataFrame, pd.DataFrame, int, str], weight: float
) -> None:
    table, items, k, method = data
    people = from_frames(table, items, "id", "code")
    result = anonymize(
        people, k=k, qi=["age", "colour"], numeric=["age"], method=method,
        item_weight=weight,
        seed=0,
    )  # fmt: skip
    report = verify(people, result.release, k=k, qi=["age", "colour"], numeric=["age"])
    assert report.passed and report.min_matches_original >= k
