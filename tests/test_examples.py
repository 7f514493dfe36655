"""The example job files (examples/*.toml): valid, their columns exist in the real data, and
heart_statlog (270 rows) released end to end. The larger ones run in benchmarks/examples.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from anonymatch.app.jobfile import load_job, parse_job
from anonymatch.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ANONYMATCH_DATA", ROOT.parent / "shared" / "datasets"))
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))


def test_there_are_the_three_examples() -> None:
    assert {p.stem for p in EXAMPLES} >= {"heart_statlog", "googleplay", "informs"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_valid_and_reads_from_anonymatch_data(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomllib

    raw = tomllib.loads(path.read_text())
    assert raw["input"]["path"].startswith("${ANONYMATCH_DATA}/")
    assert "Edited once" in path.read_text() or "edited once" in path.read_text()
    parse_job(raw, path.name)
    monkeypatch.setenv("ANONYMATCH_DATA", str(DATA))
    job = load_job(path)
    if not Path(job.input.path).exists():
        pytest.skip(f"{job.input.path} not available (set ANONYMATCH_DATA)")
    from anonymatch.cli.config import check_job_columns

    check_job_columns(job, path.name)  # every column named exists in the data


def test_heart_statlog_example_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (DATA / "heart_statlog" / "heart.dat").exists():
        pytest.skip("heart_statlog not available (set ANONYMATCH_DATA)")
    monkeypatch.setenv("ANONYMATCH_DATA", str(DATA))
    job = str(ROOT / "examples" / "heart_statlog.toml")
    out, report = tmp_path / "heart.csv", tmp_path / "heart.json"
    assert main(["anonymize", "--config", job, "-o", str(out), "--report", str(report), "-q"]) == 0
    manifest = json.loads(report.read_text())
    assert manifest["output"]["records"] == 270
    assert manifest["guarantee"]["k"] == 5
    assert manifest["guarantee"]["sensitive"][0] == {
        "column": "disease",
        "diversity": "distinct",
        "l": 2,
    }
    capsys.readouterr()
    assert main(["verify", "--config", job, str(DATA / "heart_statlog" / "heart.dat"),
                 str(out)]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("PASS")
    assert main(["verify", str(DATA / "heart_statlog" / "heart.dat"), str(out), "--manifest",
                 str(report)]) == 0  # fmt: skip
