"""--csv-safe on the table writers (issue 15 item 12): formula-like cells of a CSV release are
neutralized by default on both paths, the manifest says so, and verify/risk/evaluate read the
release back exactly."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from anonymatch.cli import main
from anonymatch.core.csvsafe import NUMBER_OR_RANGE, TRIGGERS

ROLES = ["--qi", "age,job", "--numeric", "age", "--sensitive", "dx"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _hostile(path: Path) -> Path:
    jobs = ["=cmd|' /C calc'!A0", "+x", "ok", "'=q", "@SUM(A1)", "-2+3"]
    dx = ["-1+1", "=1", "flu", "'=z", "@x", "cold"]
    rows = [(20 + i, jobs[i % 6], dx[(i * 5) % 6], f"=note{i}") for i in range(24)]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["age", "job", "dx", "note"])
        writer.writerows(rows)
    return path


def _cells(path: Path) -> list[str]:
    sep = "\t" if path.suffix == ".tsv" else ","
    with path.open(newline="") as fh:
        return [cell for row in csv.reader(fh, delimiter=sep) for cell in row]


def _dangerous(cells: list[str]) -> list[str]:
    import re

    return [c for c in cells if c and c[0] in TRIGGERS and not re.match(NUMBER_OR_RANGE, c)]


@pytest.mark.parametrize(
    "extra",
    [[], ["--executor", "inline"], ["--method", "mondrian"], ["--l", "2"]],
    ids=["in-memory", "streamed", "mondrian", "l-diverse"],
)
@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_guarded_release_has_no_formula_and_verifies(
    extra: list[str], suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _hostile(tmp_path / "t.csv")
    out, rep = tmp_path / f"r{suffix}", tmp_path / "m.json"
    argv = ["anonymize", str(src), "-o", str(out), "--k", "3", *ROLES, "--report", str(rep)]
    code, _, err = run([*argv, "-q", *extra], capsys)
    assert code == 0, err
    assert _dangerous(_cells(out)) == []
    assert json.loads(rep.read_text())["output"]["csv_safe"] is True
    check = ["verify", str(src), str(out), "--k", "3", *ROLES]
    if "--l" in extra:
        check += ["--l", "2"]
    code, stdout, err = run(check, capsys)
    assert code == 0, stdout + err
    if "--executor" in extra:  # the streamed verifier reads the guarded file too
        code, stdout, err = run([*check, "--manifest", str(rep), "--executor", "inline"], capsys)
        assert code == 0 and "PASS" in stdout, stdout + err
    code, stdout, err = run(["risk", str(src), str(out), *ROLES, "--k", "3", "-q"], capsys)
    assert code == 0 and "holds" in stdout, err


def test_no_csv_safe_writes_the_values_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _hostile(tmp_path / "t.csv")
    out, rep = tmp_path / "r.csv", tmp_path / "m.json"
    argv = ["anonymize", str(src), "-o", str(out), "--k", "3", *ROLES, "--report", str(rep)]
    assert run([*argv, "-q", "--no-csv-safe"], capsys)[0] == 0
    assert "=note0" in _cells(out)
    assert json.loads(rep.read_text())["output"]["csv_safe"] is False
    assert run(["verify", str(src), str(out), "--k", "3", *ROLES], capsys)[0] == 0


def test_the_other_columns_are_published_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anonymatch.tables.io.cells import read_release_text as read_release

    src = _hostile(tmp_path / "t.csv")
    out = tmp_path / "r.csv"
    assert run(["anonymize", str(src), "-o", str(out), "--k", "3", *ROLES, "-q"], capsys)[0] == 0
    back = read_release(out)
    assert sorted(back["note"]) == sorted(f"=note{i}" for i in range(24))
    assert "'=z" in set(back["dx"]) and "=1" in set(back["dx"])


def test_parquet_and_kl_releases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _hostile(tmp_path / "t.csv")
    out, rep = tmp_path / "r.parquet", tmp_path / "m.json"
    argv = ["anonymize", str(src), "-o", str(out), "--k", "3", *ROLES, "--report", str(rep), "-q"]
    assert run(argv, capsys)[0] == 0
    assert "csv_safe" not in json.loads(rep.read_text())["output"]  # typed cells: no guard
    kl, rep2 = tmp_path / "kl.csv", tmp_path / "kl.json"
    argv = ["anonymize-kl", str(src), "-o", str(kl), "--k", "3", "--known", "1", *ROLES]
    assert run([*argv, "--report", str(rep2), "-q"], capsys)[0] == 0
    assert _dangerous(_cells(kl)) == []
    assert json.loads(rep2.read_text())["output"]["csv_safe"] is True
    code, out_text, err = run(["check-kl", str(kl), "--k", "3", "--known", "1", "--qi", "age,job",
                               "--numeric", "age"], capsys)  # fmt: skip
    assert code == 0, out_text + err
