"""Risk on the joint graph (``anonymatch.relational.risk``): a hand-checked release whose
compatible record lies in no perfect matching, a claimed k that does not hold, a release of
another people refused, and the property that every person of a verified release has at least
k candidates."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.core.errors import InputError
from anonymatch.relational import anonymize, risk, verify
from anonymatch.relational.io import People, from_frames, release_from_objects
from anonymatch.relational.methods import names


def three_people() -> People:
    table = pd.DataFrame({"id": list("abc"), "age": [30, 31, 35], "dis": ["flu", "flu", "cold"]})
    items = pd.DataFrame({"id": list("abc"), "code": list("xxy")})
    return from_frames(table, items, "id", "code")


def hand_release(people: People):  # noqa: ANN201 - a RelationalRelease
    """r0, r1: age 30..31 with x certain (a and b match them); r2: 30..35 with x and y
    uncertain, one error allowed: a, b and c all match it, but c matches nothing else, so in
    every perfect matching c takes r2 and a, b share r0, r1."""
    objects = [
        {"age": "30..31", "items": ["x"], "uncertain": [], "max_errors": 0, "dis": "flu"},
        {"age": "30..31", "items": ["x"], "uncertain": [], "max_errors": 0, "dis": "flu"},
        {"age": "30..35", "items": [], "uncertain": ["x", "y"], "max_errors": 1, "dis": "cold"},
    ]
    return release_from_objects(objects, people, ["age"])


def test_hand_checked_figures() -> None:
    people = three_people()
    release = hand_release(people)
    # a is compatible with r2 (the verifier's joint graph) but r2 is never a's: 2 candidates
    assert verify(people, release, k=1, qi=["age"], numeric=["age"]).compatible_pairs == 7
    figures = risk(people, release, qi=["age"], numeric=["age"], sensitive=["dis"], k=2)
    assert figures.candidates.histogram == {1: 1, 2: 2}
    assert figures.prosecutor.max == 1.0
    assert figures.prosecutor.mean == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert figures.prosecutor.above == 3  # every risk is above 0.2
    assert figures.k_holds is False  # c has one candidate
    assert (figures.class_k, figures.identical_groups) == (1, 2)  # r0 = r1, r2 alone
    assert figures.original.sample_uniques == 3
    dis = figures.sensitive[0]
    assert dis.homogeneous == 3 and dis.posterior_max == 1.0
    loose = risk(people, release, qi=["age"], numeric=["age"], threshold=0.6, k=1)
    assert loose.prosecutor.above == 1 and loose.k_holds is True  # only c (risk 1 > 0.6)
    document = loose.to_dict()
    assert document["schema"] == "anonymatch-risk/1"
    assert document["release"]["candidates"]["min"] == 1  # type: ignore[index]


def test_identical_people_form_one_baseline_class() -> None:
    table = pd.DataFrame({"id": list("abcd"), "age": [30, 30, 40, 40]})
    items = pd.DataFrame({"id": list("abcd"), "code": list("xxyz")})
    people = from_frames(table, items, "id", "code")
    result = anonymize(people, k=2, qi=["age"], numeric=["age"], seed=0)
    figures = risk(people, result, qi=["age"], numeric=["age"], k=2)
    assert figures.original.classes == 3 and figures.original.sample_uniques == 2
    assert figures.candidates.min >= 2 and figures.k_holds


def test_a_release_of_other_people_is_refused() -> None:
    people = three_people()
    release = hand_release(people)
    other = from_frames(
        pd.DataFrame({"id": list("abc"), "age": [30, 31, 50], "dis": ["a", "b", "c"]}),
        pd.DataFrame({"id": list("abc"), "code": list("xxy")}),
        "id",
        "code",
    )
    with pytest.raises(InputError, match="cannot be paired"):
        risk(other, release, qi=["age"], numeric=["age"])
    with pytest.raises(InputError, match="threshold"):
        risk(people, release, qi=["age"], numeric=["age"], threshold=0)
    with pytest.raises(TypeError, match="option"):
        risk(people, release, qi=["age"], options={"seed": 1})


@st.composite
def inputs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    n = draw(st.integers(2, 12))
    k = draw(st.integers(1, n))
    ages = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    sets = draw(st.lists(st.sets(st.sampled_from("uvwx"), max_size=3), min_size=n, max_size=n))
    if not any(sets):
        sets[0] = {"u"}
    table = pd.DataFrame({"id": range(n), "age": ages})
    rows = [(i, c) for i, s in enumerate(sets) for c in sorted(s)]
    return table, pd.DataFrame(rows, columns=["id", "code"]), k


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs(), st.sampled_from(names()))
def test_every_person_has_k_candidates_on_a_verified_release(
    data: tuple[pd.DataFrame, pd.DataFrame, int], method: str
) -> None:
    table, items, k = data
    people = from_frames(table, items, "id", "code")
    result = anonymize(people, k=k, qi=["age"], numeric=["age"], method=method, seed=0)
    assert result.verification.passed
    figures = risk(people, result, qi=["age"], numeric=["age"], k=k)
    assert figures.candidates.min >= k and figures.k_holds
    assert figures.prosecutor.max <= 1 / k + 1e-12
