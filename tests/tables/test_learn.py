"""learn(): models trained on a release and tested on original rows (issue 27)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.models.learn import learn, split


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 70, n)
    sex = rng.choice(["F", "M"], n)
    y = np.where(age + 10 * (sex == "M") + rng.normal(0, 4, n) > 50, "yes", "no")
    return pd.DataFrame({"age": age, "sex": sex, "y": y, "z": age * 2.0 + rng.normal(0, 1, n)})


def test_identity_release_matches_the_original() -> None:
    df, test = frame(300, 0), frame(100, 1)
    rep = learn(df, [df], target="y", test=test, names=["same"])
    assert rep.releases[0]["scores"] == pytest.approx(rep.original)
    assert rep.to_dict()["releases"][0]["path"] == "same"
    assert rep.floor == pytest.approx(max(np.mean(test["y"] == "yes"), np.mean(test["y"] == "no")))


def test_regression_r2_and_split() -> None:
    df = frame(300, 0)
    rep = learn(df, [df.drop(columns="y")], target="z", task="regress", seed=2)
    assert rep.original["linear"] > 0.95 and rep.floor <= 0.05
    train, test = split(df, 0.3, 2)
    assert len(test) == 90 and len(train) == 210
    assert sorted([*train["z"], *test["z"]]) == sorted(df["z"])


def test_errors() -> None:
    df = frame(50, 0)
    with pytest.raises(InputError, match="task"):
        learn(df, [df], target="y", task="cluster")
    with pytest.raises(InputError, match="at least one release"):
        learn(df, [], target="y")
    with pytest.raises(InputError, match="test table has no column 'sex'"):
        learn(df, [df], target="y", test=df.drop(columns="sex"))


def test_front_name() -> None:
    assert anonymatch.tables.learn is learn


def test_html_report_shows_the_accuracy_given_a_test_table(tmp_path) -> None:
    import json

    from anonymatch.cli import main
    from anonymatch.report import build_report

    frame(120, 3).to_csv(tmp_path / "o.csv", index=False)
    frame(60, 4).to_csv(tmp_path / "t.csv", index=False)
    out, manifest = tmp_path / "r.csv", tmp_path / "r.json"
    args = ["anonymize", str(tmp_path / "o.csv"), "-o", str(out), "--k", "3", "--qi", "age,sex"]
    assert main([*args, "--numeric", "age", "--seed", "1", "-q", "--report", str(manifest)]) == 0
    html = build_report(
        json.loads(manifest.read_text()),
        tmp_path / "o.csv",
        out,
        options={"test": tmp_path / "t.csv", "classify": "y"},
    )
    assert "Accuracy predicting &#39;y&#39; on the 60 original rows" in html
    assert "trained on the release" in html


def test_html_report_accuracy_without_missing_rows(tmp_path) -> None:
    """A release made with --drop-missing: the test table's rows with a missing QI are left
    out too, and the original's model trains on the rows the release was made of."""
    import json

    from anonymatch.cli import main
    from anonymatch.report import build_report

    orig, test = frame(120, 3).astype(str), frame(60, 4).astype(str)
    orig.loc[::10, "sex"] = "?"
    test.loc[::6, "age"] = "?"  # 10 of 60
    orig.to_csv(tmp_path / "o.csv", index=False)
    test.to_csv(tmp_path / "t.csv", index=False)
    out, manifest = tmp_path / "r.csv", tmp_path / "r.json"
    args = ["anonymize", str(tmp_path / "o.csv"), "-o", str(out), "--k", "3", "--qi", "age,sex"]
    args += ["--numeric", "age", "--drop-missing", "--seed", "1", "-q", "--report", str(manifest)]
    assert main(args) == 0
    html = build_report(
        json.loads(manifest.read_text()),
        tmp_path / "o.csv",
        out,
        options={"test": tmp_path / "t.csv", "classify": "y"},
    )
    assert "Accuracy predicting &#39;y&#39; on the 50 original rows" in html


def test_test_labels_written_differently_are_refused() -> None:
    """adult.test writes the label '>50K.' where adult.data writes '>50K': every accuracy
    would be 0 — refused, naming both spellings."""
    df, test = frame(60, 0), frame(30, 1)
    test["y"] = test["y"] + "."
    with pytest.raises(InputError, match=r"labels \('no\.', 'yes\.'\) are none of the original"):
        learn(df, [df], target="y", test=test)


def test_one_label_only_is_refused(tmp_path) -> None:
    """Training labels of one class (found by the hostile tests of issue 37): one line and exit
    2 from the CLI, an InputError from Python, never scikit-learn's internal error."""
    from anonymatch.cli import main

    df = frame(60, 0)
    df["y"] = "yes"
    with pytest.raises(InputError, match="labels are all 'yes': a classifier needs at least two"):
        learn(df, [df], target="y")
    df.to_csv(tmp_path / "o.csv", index=False)
    code = main(["evaluate", str(tmp_path / "o.csv"), str(tmp_path / "o.csv"),
                 "--qi", "age,sex", "--numeric", "age", "--classify", "y"])  # fmt: skip
    assert code == 2


def test_models_use_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gradient-boosted models' OpenMP threads: the cores left idle by the load (issue 37:
    spinning threads on a loaded machine made evaluate --classify 17× slower than anonymize)."""
    import os

    from anonymatch.tables.models.learn import idle_cores

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    for load, threads in ((0.0, 8), (2.4, 6), (7.6, 1), (40.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert idle_cores() == threads
