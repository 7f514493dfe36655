"""Drafting a job from data: every draft validates, names every column in order, reads back
from its TOML, and its roles follow the documented rules."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.app.infer import infer_job, profile_column
from anonymatch.app.jobfile import parse_job, render_toml
from anonymatch.core.errors import InputError


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(5, 60),
    seed=st.integers(0, 1000),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    header=st.booleans(),
)
def test_every_draft_validates_and_reads_back(
    tmp_path: Path, n: int, seed: int, sep: str, header: bool
) -> None:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "zip code": rng.choice(["1001", "1002", "2001"], n),
            "score": rng.normal(size=n).round(3),
            "note": rng.choice(["a", "b", "?"], n),
        }
    )
    path = tmp_path / f"d{seed}_{n}.txt"
    frame.to_csv(path, sep=sep, index=False, header=header)
    names = None if header else list(frame.columns)
    job = infer_job(path, sep=None, names=names, header=None if header else False)
    assert list(job.columns) == list(frame.columns)
    assert job.input.header is header
    assert (job.input.sep or ",") == sep
    assert "age" in job.qi and job.columns["age"].type == "numeric"
    again = parse_job(tomllib.loads(render_toml(job)))
    assert again.model_dump() == job.model_dump()  # (== would compare the comments too)


def test_profiles() -> None:
    codes = profile_column("EDUCYEAR", pd.Series(["12", "-9", "16", "-1", "8", "-9"]), ["?"])
    assert codes.kind == "numeric" and codes.negative_codes == ["-1", "-9"]
    income = profile_column("income", pd.Series([str(x) for x in range(-50, 200, 3)]), ["?"])
    assert income.negative_codes == []  # many negative values: real numbers, not codes
    dates = profile_column("d", pd.Series(["January 7, 2018", "August 1, 2018", "May 3, 2017"]), [])
    assert dates.kind == "date"
    times = profile_column("t", pd.Series(["2018-01-07 10:30", "2018-02-01 00:00"]), [])
    assert times.kind == "datetime"
    ordered = profile_column("Installs", pd.Series(["10+", "1,000+", "100+", "10+"]), [])
    assert ordered.ordered_hint == ["10+", "100+", "1,000+"]
    missing = profile_column("x", pd.Series(["a", "?", "", "b"]), ["?", ""])
    assert missing.missing == {"?": 1, "": 1} and missing.cardinality == 2


def test_no_candidate_quasi_identifier(tmp_path: Path) -> None:
    path = tmp_path / "u.csv"
    pd.DataFrame({"key": [f"k{i}" for i in range(200)], "v": ["same"] * 200}).to_csv(
        path, index=False
    )
    with pytest.raises(InputError, match="no column of .* looks like a quasi-identifier"):
        infer_job(path)


def test_codes_stay_text_and_stems_and_dictionaries_find_quasi_identifiers(tmp_path: Path) -> None:
    """Issue 25: ZIP 01852 is a code (text), isex/istatenum are QIs by their stems, a column of
    state names is a QI by its values, and 99 standing apart is a candidate missing code."""
    rng = np.random.default_rng(4)
    n = 400
    frame = pd.DataFrame(
        {
            "ZIP": rng.choice(["01852", "02139", "32810", "94546"], n),
            "isex": rng.choice(["Male", "Female"], n),
            "istatenum": rng.choice(["Alabama", "Texas", "Ohio"], n),
            "where": rng.choice(["CA", "TX", "NY", "FL"], n),
            "days": np.where(rng.random(n) < 0.1, 99, rng.integers(1, 32, n)),
            "amount": rng.integers(0, 5000, n),
        }
    )
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    job = infer_job(path)
    assert job.columns["ZIP"].type == "categorical"  # never a number: the zeros stay
    assert {"ZIP", "isex", "istatenum", "where"} <= set(job.qi)
    assert "amount" not in job.qi
    text = render_toml(job)
    assert "leading zeros (e.g. '0" in text
    assert "US state codes" in text
    assert 'na = ["99"]' in text  # commented out: a candidate to check


def test_nines_only_when_they_stand_apart() -> None:
    ages = pd.Series([str(x) for x in list(range(0, 99)) * 3])  # 0..98, then no 99
    assert profile_column("age", ages, []).nines == []
    spike = pd.Series([str(x) for x in list(range(0, 90)) * 2] + ["99"] * 40)
    assert profile_column("age", spike, []).nines == ["99"]
    gap = pd.Series([str(x) for x in range(1, 32)] * 3 + ["99"])
    assert profile_column("day", gap, []).nines == ["99"]


def test_hierarchies_matched_by_name_then_by_values(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame(
        {
            "zip": rng.choice(["01852", "01853", "02139"], n),
            "sex": rng.choice(["F", "M"], n),
            "score": rng.integers(0, 1000, n),
        }
    )
    data = tmp_path / "t.csv"
    frame.to_csv(data, index=False)
    trees = tmp_path / "trees"
    trees.mkdir()
    (trees / "h_zip.csv").write_text("01852;0185*;*\n01853;0185*;*\n02139;0213*;*\n")
    (trees / "gender.csv").write_text("F;*\nM;*\n")  # matched by its leaves
    (trees / "h_score.csv").write_text("1;*\n")  # score is not a QI: not attached
    job = infer_job(data, hierarchies=trees)
    assert job.columns["zip"].hierarchy is not None and job.columns["zip"].hierarchy.endswith(
        "h_zip.csv"
    )
    assert job.columns["sex"].hierarchy is not None
    assert job.columns["sex"].hierarchy.endswith("gender.csv")
    assert job.columns["score"].hierarchy is None
    with pytest.raises(InputError, match="unknown option"):
        infer_job(data, colour="red")
    with pytest.raises(InputError, match="not a directory"):
        infer_job(data, hierarchies=tmp_path / "nowhere")
