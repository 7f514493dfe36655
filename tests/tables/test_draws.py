"""Plain draws of a release and estimates written as text (issue 39; tables/models/draws.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.io.cells import write_release
from anonymatch.tables.io.release import read_release
from anonymatch.tables.models.draws import (
    combine,
    complete_data,
    parse_estimate,
    plain_draws,
    write_table,
)
from anonymatch.tables.models.imputation import ols, rubin_combine


def people(n: int = 90, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 70, n)
    sex = rng.choice(["F", "M"], n)
    edu = rng.choice(["low", "mid", "high"], n)
    hours = 20 + 0.3 * age + 5 * (sex == "M") + rng.normal(0, 2, n)
    return pd.DataFrame({"age": age, "sex": sex, "edu": edu, "hours": hours.round(1)})


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = people()
    result = anonymatch.anonymize(
        df, k=4, qi="age,sex,edu", numeric="age", ordinal={"edu": ["low", "mid", "high"]}, seed=3
    )
    out = tmp_path_factory.mktemp("rel") / "r.csv"
    write_release(out, result.release, result.cells, result.qi)
    return df, read_release(out)


def test_each_drawn_row_lies_in_its_published_row(released: tuple) -> None:
    df, rel = released
    for weights in ("uniform", "anchored"):
        for table in plain_draws(rel, 3, weights=weights, degree=4, seed=1):
            assert list(table.columns) == list(rel.columns)
            lo, hi = rel["age"].array.left, rel["age"].array.right
            assert ((table["age"] >= lo) & (table["age"] <= hi)).all()
            assert table["age"].dtype == np.int64
            assert all(s in cell for s, cell in zip(table["sex"], rel["sex"], strict=True))
            ranks = {"low": 0, "mid": 1, "high": 2}  # ordinal: labels back, inside the range
            r = table["edu"].map(ranks).to_numpy()
            assert ((r >= rel["edu"].array.left) & (r <= rel["edu"].array.right)).all()
            assert table["hours"].tolist() == rel["hours"].tolist()  # kept columns untouched


def test_set_labels_come_back_as_numbers_when_they_all_are() -> None:
    rel = pd.DataFrame({"code": [frozenset({"1", "3"}), frozenset({"2"})], "y": [1, 2]})
    rel.attrs.update(qi=["code"], ranges=[])
    (table,) = plain_draws(rel, 1, weights="uniform", seed=0)
    assert table["code"].dtype == np.int64 and table["code"].iloc[1] == 2


def test_refusals() -> None:
    rel = pd.DataFrame({"y": [1.0]})
    with pytest.raises(InputError, match="no quasi-identifier"):
        plain_draws(rel, 2, weights="uniform")
    rel.attrs["qi"] = ["y"]
    with pytest.raises(InputError, match="weights"):
        plain_draws(rel, 2, weights="midpoint")


@pytest.mark.parametrize(
    "text",
    [
        "mean(age",
        "mean()",
        "__import__('os')",
        "ols(y ~ )",
        "ols(y ~ x + x)",
        "ols(y ~ y)",
        "median(age)",
        "mean(age) + 1",
    ],
)
def test_estimates_are_parsed_strictly(text: str) -> None:
    with pytest.raises(InputError, match="cannot read the estimate"):
        parse_estimate(text)


def test_parse_forms() -> None:
    assert parse_estimate(" mean( age ) ").column == "age"
    spec = parse_estimate("ols(hours per week ~ age + sex)")
    assert (spec.column, spec.terms) == ("hours per week", ("age", "sex"))
    assert parse_estimate("proportion(sex=F)").value == "F"


def test_rubin_on_a_known_case() -> None:
    """Two tables whose means are 2 and 3: Q̄ = 2.5, B = 0.5, U = s²/n = 1/3, T = U + 1.5 B."""
    tables = [pd.DataFrame({"x": [1.0, 2.0, 3.0]}), pd.DataFrame({"x": [2.0, 3.0, 4.0]})]
    r = combine(tables, "mean(x)")["mean(x)"]
    assert r.estimate == 2.5 and r.between == pytest.approx(0.5)
    assert r.within == pytest.approx(1 / 3)
    assert r.std_error == pytest.approx(np.sqrt(1 / 3 + 1.5 * 0.5))
    assert r.fraction_missing == pytest.approx(0.75 / (1 / 3 + 0.75))
    assert r.interval[0] < 2.5 < r.interval[1]


def test_ols_with_a_text_regressor_matches_indicator_coding() -> None:
    df = people(200, 5)
    (res,) = [combine([df, df], "ols(hours ~ age + sex)")]
    assert list(res) == ["(intercept)", "age", "sex[M]"]
    x = np.column_stack([df["age"], (df["sex"] == "M").astype(float)])
    coef, var = ols(df["hours"].to_numpy(), x)
    assert res["sex[M]"].estimate == pytest.approx(coef[2])
    assert res["sex[M]"].between == 0 and res["sex[M]"].std_error == pytest.approx(np.sqrt(var[2]))
    assert complete_data(df, parse_estimate("ols(hours ~ age + sex)"))["age"] == pytest.approx(
        coef[1]
    )
    share = combine([df], "proportion(sex = M)")["proportion(sex = M)"]
    assert share.estimate == pytest.approx((df["sex"] == "M").mean())
    same = rubin_combine([coef[1]] * 2, [var[1]] * 2, complete_df=197)
    assert res["age"].interval == pytest.approx(same.interval)


def test_anchored_intervals_cover_the_original_mean(released: tuple) -> None:
    df, rel = released
    tables = plain_draws(rel, 20, weights="anchored", degree=4, seed=7)
    r = combine(tables, "mean(age)")["mean(age)"]
    assert r.interval[0] <= df["age"].mean() <= r.interval[1]
    assert 0 < r.fraction_missing < 1


@pytest.mark.parametrize("ext", [".csv", ".tsv", ".parquet"])
def test_written_tables_read_back(tmp_path, ext: str) -> None:  # type: ignore[no-untyped-def]
    frame = pd.DataFrame({"a": [1, 2], "b": ["=cmd", "x"]})
    path = tmp_path / f"t{ext}"
    write_table(path, frame)
    assert path.exists() and not list(tmp_path.glob(".*"))
    if ext == ".csv":
        assert "'=cmd" in path.read_text()  # the formula guard of CSV releases
