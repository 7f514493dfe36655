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
