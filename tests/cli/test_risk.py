"""``anonymatch risk``: the figures of a release, as a table or JSON, one line + exit 2 on error
with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from tests.factories import random_frame

QI = "n0,n1,c0,c1"
ROLES = ["--qi", QI, "--numeric", "n0,n1", "--sensitive", "s"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """An original and two releases of it: freeform (hungarian, CSV) and Mondrian (Parquet)."""
    original = tmp_path / "people.csv"
    random_frame(40, 5).to_csv(original, index=False)
    releases = []
    for method, name in (("hungarian", "free.csv"), ("mondrian", "classes.parquet")):
        out = tmp_path / name
        args = ["anonymize", str(original), "-o", str(out), "--k", "3", *ROLES, "--seed", "1"]
        code, _, err = run([*args, "--method", method, "-q"], capsys)
        assert code == 0, err
        releases.append(out)
    return original, releases[0], releases[1]


def test_human_output(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    original, free, classes = files
    code, out, err = run(["risk", str(original), str(free), *ROLES, "--k", "3"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "40 people, threshold 0.2; claimed k = 3 holds"
    assert lines[1].split() == ["release", "original", "QIs"]
    assert lines[2].split()[:4] == ["candidates", "per", "person:", "min"]
    assert int(lines[2].split()[4]) >= 3
    for label in ("prosecutor risk: max", "records above 0.2", "identical QI rows (class k)",
                  "candidates histogram:", "sensitive s (", "  homogeneous records",
                  "  largest posterior", "  distance to the table", "  fewest distinct values",
                  "  bound min(1, c/k), k = 3"):  # fmt: skip
        assert any(line.startswith(label) for line in lines), label
    assert "pyCANON" in out and "--method mondrian" in out
    # -q drops the explanation; the Parquet class release reads as well
    code, out, err = run(["risk", str(original), str(classes), *ROLES, "-q"], capsys)
    assert code == 0 and err == "" and "pyCANON" not in out
    assert "claimed k" not in out.splitlines()[0] and "bound min" not in out


def test_json_and_report(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, free, classes = files
    report = tmp_path / "risk.json"
    args = ["risk", str(original), str(classes), *ROLES, "--k", "3", "--threshold", "0.25"]
    code, out, err = run([*args, "--json", "--report", str(report)], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert json.loads(report.read_text()) == data
    assert list(data) == [
        "schema", "tool", "created", "input", "people", "parameters", "release", "sensitive",
        "original", "known_person", "explanation",
    ]  # fmt: skip
    assert data["schema"] == "anonymatch-risk/1" and data["people"] == 40
    assert data["input"]["release"]["path"] == str(classes)
    assert len(data["input"]["original"]["sha256"]) == 64
    assert data["parameters"] == {
        "qi": QI.split(","), "numeric": ["n0", "n1"], "sensitive": ["s"], "k": 3,
        "threshold": 0.25, "dropped_missing": 0, "sensitive_basis": "candidates",
    }  # fmt: skip
    rel = data["release"]
    assert set(rel) == {"candidates", "prosecutor", "class_k", "identical_groups", "claimed_k"}
    assert rel["claimed_k"] == {"k": 3, "holds": True}
    assert rel["class_k"] == rel["candidates"]["min"] >= 3  # Mondrian: classes
    assert rel["prosecutor"]["max"] == pytest.approx(1 / rel["candidates"]["min"])
    assert sum(rel["candidates"]["histogram"].values()) == 40
    s = data["sensitive"]["s"]
    assert set(s) == {
        "ground_distance", "values", "prior_max", "homogeneous", "homogeneous_share",
        "posterior", "distance", "min_distinct", "min_effective_l", "mechanism",
    }  # fmt: skip
    assert set(data["original"]) == {
        "records", "classes", "sample_uniques", "sample_unique_share", "class_size", "prosecutor"
    }  # fmt: skip
    # an existing report is never replaced without --force
    code, _, err = run([*args, "--report", str(report)], capsys)
    assert code == 2 and "pass --force" in err and json.loads(report.read_text()) == data
    code, out, err = run([*args, "--report", str(report), "--force", "-q"], capsys)
    assert code == 0, err


def test_numeric_sensitive_is_ordered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = random_frame(30, 2).assign(salary=lambda f: f["n0"] * 1000)
    original, release = tmp_path / "o.csv", tmp_path / "r.csv"
    frame.to_csv(original, index=False)
    roles = ["--qi", "n1,c0", "--numeric", "n1,salary", "--sensitive", "salary,s"]
    code, _, err = run(["anonymize", str(original), "-o", str(release), "--k", "2", *roles,
                        "--seed", "3", "-q"], capsys)  # fmt: skip
    assert code == 0, err
    code, out, err = run(["risk", str(original), str(release), *roles, "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["parameters"]["numeric"] == ["n1", "salary"]
    sens = data["sensitive"]
    assert sens["salary"]["ground_distance"] == "ordered"
    assert sens["s"]["ground_distance"] == "equal"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--threshold", "0"], "--threshold must be in (0, 1], got 0.0"),
        (["--threshold", "1.5"], "--threshold must be in (0, 1], got 1.5"),
        (["--threshold", "nan"], "--threshold must be in (0, 1]"),
        (["--k", "0"], "--k must be an integer of at least 1, got 0"),
        (["--sensitive", "nope"], "unknown column 'nope'"),
        (["--numeric", "n0,n1,zz"], "neither a quasi-identifier nor sensitive"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    original, free, _ = files
    report = tmp_path / "risk.json"
    code, out, err = run(
        ["risk", str(original), str(free), *ROLES, "--report", str(report), *extra], capsys
    )
    assert code == 2 and out == ""
    assert err.startswith("anonymatch: error: ") and message in err and err.count("\n") == 1
    assert not report.exists() and not list(tmp_path.glob(".risk.json*"))


def test_release_of_another_table_exit_2(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, free, _ = files
    other = tmp_path / "other.csv"
    random_frame(40, 99).to_csv(other, index=False)
    short = tmp_path / "short.csv"
    pd.read_csv(free).iloc[:30].to_csv(short, index=False)
    report = tmp_path / "risk.json"
    for orig, rel, message in (
        (other, free, "the release does not match the original"),
        (original, short, "it has 30 rows, the original 40"),
        (original, tmp_path / "missing.csv", "input file not found"),
    ):
        code, out, err = run(["risk", str(orig), str(rel), *ROLES, "--report", str(report)], capsys)
        assert code == 2 and out == "" and message in err and err.count("\n") == 1, err
        assert not report.exists()
