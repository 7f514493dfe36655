"""CLI of the sensitive models: anonymize/verify with --l/--t, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.cli.test_tables import QI, run
from tests.factories import random_frame


@pytest.fixture()
def planted(tmp_path: Path) -> Path:
    frame = random_frame(60, 2)
    frame["s"] = np.where(frame["n0"] < 15, "low", np.where(frame["c0"] == "v0", "mid", "high"))
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def test_anonymize_then_verify(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rel.csv"
    base = ["--k", "3", "--qi", QI, "--numeric", "n0,n1"]
    code, stdout, err = run(
        ["anonymize", str(planted), "-o", str(out), *base, "--sensitive", "s", "--l", "s=2"], capsys
    )
    assert code == 0, err
    assert "sensitive 's': PASS" in stdout
    verify = ["verify", str(planted), str(out), *base, "--sensitive", "s"]
    code, stdout, _ = run([*verify, "--l", "2"], capsys)
    assert code == 0 and "PASS" in stdout
    code, stdout, _ = run([*verify, "--l", "2", "--t", "0.01"], capsys)  # far too strict
    assert code == 1 and "sensitive 's': FAIL" in stdout


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--sensitive", "s", "--l", "4"], 3, "infeasible"),
        (["--sensitive", "s", "--t", "0"], 2, "--t must be in (0, 1]"),
        (["--sensitive", "s", "--t", "1.5"], 2, "--t must be in (0, 1]"),
        (["--l", "3"], 2, "--sensitive"),
        (["--sensitive", "c0", "--l", "2"], 2, "both a quasi-identifier"),
        (["--sensitive", "s", "--numeric", "n0,n1,s", "--t", "0.5"], 2, "non-number"),
        (["--sensitive", "s", "--l", "2", "--diversity", "recursive"], 2, "needs --c"),
        (["--sensitive", "s", "--l", "2", "--c", "2"], 2, "--c applies"),
        (["--sensitive", "s", "--l", "1"], 2, "at least 2"),
        (["--sensitive", "s", "--l", "abc"], 2, "--l expects"),
        (["--sensitive", "s", "--l", "zz=2"], 2, "not a --sensitive column"),
        (["--sensitive", "s", "--l", "2", "--method", "ring"], 2, "does not support"),
        (["--sensitive", "s", "--l", "2", "--method", "bmatching"], 2, "do not apply"),
    ],
)
def test_bad_model_one_line_and_nothing_written(
    planted: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    code: int,
    message: str,
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    args = ["anonymize", str(planted), "-o", str(out), "--report", str(report), "--k", "3"]
    numeric = [] if "--numeric" in extra else ["--numeric", "n0,n1"]
    got, _, err = run([*args, "--qi", QI, *numeric, *extra], capsys)
    assert got == code, err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists() and not report.exists()


@pytest.mark.parametrize("executor", ["inline", "processes"])
def test_streamed_path_publishes_and_checks_the_model(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    base = ["--k", "3", "--qi", QI, "--numeric", "n0,n1", "--sensitive", "s"]
    args = ["anonymize", str(planted), "-o", str(out), "--report", str(report), *base]
    code, _, err = run(
        [*args, "--l", "2", "--executor", executor, "--partition-size", "20"], capsys
    )
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["sensitive"] == [{"column": "s", "diversity": "distinct", "l": 2}]
    assert manifest["verification"]["sensitive"][0]["passed"]
    code, stdout, _ = run(["verify", str(planted), str(out), *base, "--l", "2"], capsys)
    assert code == 0, stdout  # the in-memory verifier on the whole release agrees
    out.unlink()
    report.unlink()
    code, _, err = run([*args, "--l", "4", "--executor", executor], capsys)  # 3 values only
    assert code == 3 and "infeasible" in err and not out.exists() and not report.exists()
