"""``evaluate --classify/--regress``: train on releases, test on original rows (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import main


def frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 70, n)
    edu = rng.choice(["hs", "ba", "ms"], n)
    hours = rng.integers(20, 60, n)
    score = age / 10 + 2 * (edu == "ms") + rng.normal(0, 1, n)
    return pd.DataFrame(
        {"age": age, "edu": edu, "hours": hours, "label": np.where(score > 6, "hi", "lo")}
    )


@pytest.fixture()
def files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Path]:
    orig, test = tmp_path / "o.csv", tmp_path / "t.csv"
    frame(240, 0).to_csv(orig, index=False)
    frame(100, 1).to_csv(test, index=False)
    out = {"orig": orig, "test": test}
    for method in ("hungarian", "mondrian"):
        rel = tmp_path / f"{method}.csv"
        args = ["anonymize", str(orig), "-o", str(rel), "--k", "4", "--qi", "age,edu"]
        args += ["--numeric", "age", "--method", method, "--seed", "3", "-q"]
        assert main(args) == 0
        out[method] = rel
    capsys.readouterr()
    return out


def test_classify_json(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["evaluate", str(files["orig"]), str(files["hungarian"]), str(files["mondrian"])]
    args += ["--qi", "age,edu", "--numeric", "age", "--classify", "label"]
    assert main([*args, "--test", str(files["test"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in data["releases"]] == [
        str(files["hungarian"]),
        str(files["mondrian"]),
    ]
    for r in data["releases"]:
        assert set(r["classify"]) == {"logistic", "gradient_boosting"}
        assert 0.6 <= r["classify"]["logistic"] <= 1
    assert data["original"]["classify"]["logistic"] > data["majority"]
    assert data["test"]["rows"] == 100
    assert main(args) == 0  # a held-out part of the original, as text
    text = capsys.readouterr().out
    assert "held-out 30%" in text and "majority class" in text


def test_regress(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["evaluate", str(files["orig"]), str(files["hungarian"]), "--qi", "age,edu"]
    assert main([*args, "--regress", "hours", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["releases"][0]["regress"]) == {"linear", "gradient_boosting"}
    assert "mean" in data


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--classify", "nope"], "no column 'nope'"),
        (["--classify", "age"], "generalized"),
        (["--classify", "label", "--regress", "hours"], "one of --classify and --regress"),
        (["--classify", "label", "--test-size", "1.5"], "test_size"),
    ],
)
def test_errors(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    args = ["evaluate", str(files["orig"]), str(files["hungarian"]), "--qi", "age,edu"]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_label_not_in_test(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare.csv"
    frame(50, 2).drop(columns="label").to_csv(bare, index=False)
    args = ["evaluate", str(files["orig"]), str(files["hungarian"]), "--qi", "age,edu"]
    assert main([*args, "--classify", "label", "--test", str(bare)]) == 2
    assert "has no column 'label'" in capsys.readouterr().err


def test_report_shows_accuracy_on_a_test_table_read_with_its_own_options(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel, manifest = tmp_path / "r.csv", tmp_path / "r.json"
    args = ["anonymize", str(files["orig"]), "-o", str(rel), "--k", "4", "--qi", "age,edu"]
    assert main([*args, "--numeric", "age", "--report", str(manifest), "-q"]) == 0
    test = tmp_path / "test.txt"  # no header, ';' — not ORIGINAL's CSV options
    frame(80, 5).to_csv(test, index=False, header=False, sep=";")
    html = tmp_path / "r.html"
    base = ["report", str(files["orig"]), str(rel), "--manifest", str(manifest), "-o", str(html)]
    own = ["--test", str(test), "--test-sep", ";", "--test-names", "age,edu,hours,label"]
    assert main([*base, *own, "--classify", "label", "-q"]) == 0
    page = html.read_text()
    assert "on the 80 original rows of the test" in page and "trained on the release" in page
    capsys.readouterr()
    for extra, message in [
        (own, "together"),
        (["--test-sep", ";", "--classify", "label"], "need --test"),
        ([*own, "--test-header", "--classify", "label"], "one of --test-header"),
    ]:
        assert main([*base, "--force", *extra]) == 2
        assert message in capsys.readouterr().err


def test_evaluate_reads_test_with_its_own_options(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = tmp_path / "test.tsv"  # tab-separated, no header: ORIGINAL is a CSV with a header
    frame(60, 6).to_csv(test, index=False, header=False, sep="\t")
    args = ["evaluate", str(files["orig"]), str(files["hungarian"]), "--qi", "age,edu"]
    args += ["--numeric", "age", "--classify", "label", "--json", "--test", str(test)]
    own = ["--test-format", "tsv", "--test-names", "age,edu,hours,label"]
    assert main([*args, *own]) == 0
    assert json.loads(capsys.readouterr().out)["test"]["rows"] == 60
    assert main(args) == 2  # read like ORIGINAL (comma, a header line): no column 'label'
    assert "has no column 'label'" in capsys.readouterr().err
    noted = tmp_path / "noted.tsv"  # adult.test's first line: `|1x3 Cross validator`
    noted.write_text("|1x3 Cross validator\n" + test.read_text())
    assert main([*args, *own[:2], "--test", str(noted), *own[2:]]) == 2
    assert "malformed CSV" in capsys.readouterr().err  # its first line is one field
    assert main([*args, *own, "--test", str(noted), "--test-skip-rows", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["test"]["rows"] == 60


def test_drop_missing_trains_and_tests_on_complete_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --drop-missing the ceiling is trained on the rows the release was made of, and
    the test table's rows with a missing QI are dropped the same way."""
    orig, test, rel = tmp_path / "o.csv", tmp_path / "t.csv", tmp_path / "r.csv"
    train, held = frame(240, 0).astype(str), frame(100, 1).astype(str)
    train.loc[::12, "edu"] = "?"  # 20 incomplete rows
    held.loc[::10, "age"] = "?"  # 10
    train.to_csv(orig, index=False)
    held.to_csv(test, index=False)
    common = ["--qi", "age,edu", "--numeric", "age", "--drop-missing", "-q"]
    assert main(["anonymize", str(orig), "-o", str(rel), "--k", "4", *common]) == 0
    capsys.readouterr()
    args = ["evaluate", str(orig), str(rel), *common, "--classify", "label"]
    assert main([*args, "--test", str(test), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["train_rows"] == 220 and data["test"]["rows"] == 90
