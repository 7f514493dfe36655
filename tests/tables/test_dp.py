"""The DP companion (issue 39; tables/models/dp.py): OpenDP's noise at the scale ε asks for."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymatch.core.errors import InputError
from anonymatch.tables.models.dp import (
    companion,
    exact_answers,
    marginal_categories,
    parse_workload,
    query_mask,
    release_answers,
)

pytest.importorskip("opendp", reason="opendp not installed (pip install 'anonymatch[dp]')")


def table(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "income": rng.choice(["<=50K", ">50K"], n),
        }
    )


def release_of(df: pd.DataFrame) -> pd.DataFrame:
    rel = pd.DataFrame({"age": ["20..59"] * len(df), "sex": ["F|M"] * len(df),
                        "income": df["income"]})  # fmt: skip
    rel.attrs.update(qi=["age", "sex"], ranges=["age"])
    return rel


def discrete_laplace_variance(scale: float) -> float:
    p = math.exp(-1 / scale)
    return 2 * p / (1 - p) ** 2


@pytest.mark.parametrize("per_query", [1.0, 4.0])
def test_laplace_noise_scale_matches_epsilon(per_query: float) -> None:
    """q identical queries under ε: OpenDP's scale is q/ε and the q noisy answers' spread is
    the discrete Laplace's at that scale (within sampling error)."""
    df = table()
    q = 200
    workload = parse_workload([{"sex": "F", "age": [20, 39]}] * q)
    epsilon = q / per_query
    doc = companion(df, release_of(df), workload, epsilon=epsilon)
    assert doc["epsilon"] <= epsilon * (1 + 1e-9) and doc["delta"] == 0
    assert doc["noise_scale"] == pytest.approx(per_query, rel=1e-6)
    noise = np.array(doc["answers"]) - exact_answers(df, workload)[0]
    assert abs(noise.mean()) < 4 * math.sqrt(discrete_laplace_variance(per_query) / q) + 0.2
    # the sample variance of 200 Laplace draws has a relative sd ≈ 0.16: 0.5 is > 3 sd
    assert noise.var() == pytest.approx(discrete_laplace_variance(per_query), rel=0.5)


def test_gaussian_with_delta_states_its_budget() -> None:
    df = table()
    q = 200
    workload = parse_workload([{"income": ">50K"}] * q)
    doc = companion(df, release_of(df), workload, epsilon=q / 2, delta=1e-6)
    assert doc["epsilon"] <= q / 2 * (1 + 1e-9) and doc["delta"] == pytest.approx(1e-6)
    assert "gaussian" in doc["mechanism"]
    noise = np.array(doc["answers"]) - exact_answers(df, workload)[0]
    assert noise.std() == pytest.approx(doc["noise_scale"], rel=0.3)


def test_answers_follow_the_workload_and_marginals_use_the_release_labels() -> None:
    df = table(60)
    workload = parse_workload(
        {"queries": [{"sex": "M"}, {"age": [20, 29]}], "marginals": [["sex", "income"]]}
    )
    doc = companion(df, release_of(df), workload, epsilon=1e6)  # almost no noise
    assert doc["answers"] == exact_answers(df, workload)
    (margin,) = doc["marginals"]
    assert margin["categories"] == [["F", "<=50K"], ["F", ">50K"], ["M", "<=50K"], ["M", ">50K"]]
    truth = [int(((df["sex"] == s) & (df["income"] == i)).sum()) for s, i in margin["categories"]]
    assert margin["counts"] == truth
    assert doc["queries"] == [{"sex": "M"}, {"age": [20.0, 29.0]}]
    assert "not DP" in doc["caveat"] or "not DP" in doc["caveat"].replace("k-anonymous, ", "")


def test_refusals() -> None:
    df = table()
    rel = release_of(df)
    for bad in ([], [{}], [{"age": [5, 1]}], [{"age": [1, 2, 3]}], {"query": []}, [{"a": None}]):
        with pytest.raises(InputError):
            parse_workload(bad)
    with pytest.raises(InputError, match="ranges"):
        marginal_categories(rel, "age")
    with pytest.raises(InputError, match="no column"):
        companion(df, rel, parse_workload([{"zip": "1"}]), epsilon=1.0)
    for eps in (0.0, -1.0, float("inf")):
        with pytest.raises(InputError, match="epsilon"):
            companion(df, rel, parse_workload([{"sex": "F"}]), epsilon=eps)


def test_release_answers_expect_uniform_cells() -> None:
    rel = pd.DataFrame(
        {
            "age": pd.arrays.IntervalArray.from_tuples([(20, 29), (25, 34)], closed="both"),
            "sex": [frozenset({"F", "M"}), frozenset({"F"})],
        }
    )
    workload = parse_workload([{"age": [20, 24]}, {"sex": "F"}, {"age": [25, 29], "sex": "F"}])
    assert release_answers(rel, workload) == pytest.approx([0.5, 1.5, 0.5 * 0.5 + 0.5])
    plain = pd.DataFrame({"age": [22, 30], "sex": ["F", "M"]})
    assert query_mask(plain, workload.queries[0]).tolist() == [True, False]
