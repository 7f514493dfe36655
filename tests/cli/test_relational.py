"""anonymize-rt / verify-rt / evaluate-rt: a verified JSONL release, exit codes 0/2/3/4, one
line per error."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pandas as pd
import pytest

from anonymatch.cli import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    people = pd.DataFrame(
        {"pid": [f"p{i}" for i in range(12)], "age": list(range(30, 42)), "sex": list("FM") * 6}
    )
    items = pd.DataFrame(
        {"pid": [f"p{i % 12}" for i in range(20)], "code": [str(i % 5) for i in range(20)]}
    )
    items.loc[0, "code"] = "-1"
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    return tmp_path / "people.csv", tmp_path / "items.csv"


def args(items: Path) -> list[str]:
    return [
        "--items", str(items), "--id", "pid", "--item-column", "code", "--na", "code=-1",
        "--qi", "age,sex", "--numeric", "age",
    ]  # fmt: skip


def test_anonymize_verify_evaluate(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(people), *args(items), "-k", "3", "-o", str(out),
         "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 12 and "pid" not in lines[0] and "items" in lines[0]
    manifest = json.loads(report.read_text())
    assert manifest["data_kind"] == "relational" and manifest["verification"]["passed"]
    assert manifest["verification"]["k_factor_flow"] == 3 * 12  # one spelling (docs/manifest.md)
    assert "factor_flow" not in manifest["verification"]
    schema = json.loads((Path(__file__).parents[2] / "docs" / "manifest.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(manifest)
    assert main(["verify-rt", str(people), str(out), *args(items), "-k", "3"]) == 0
    assert main(["verify-rt", str(people), str(out), *args(items), "-k", "12"]) == 4
    capsys.readouterr()
    assert main(["evaluate-rt", str(people), str(out), *args(items), "--queries", "20"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert 0.0 <= figures["relational_gcp"] <= 1.0


def test_errors_are_one_line(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out = tmp_path / "r.jsonl"
    bad = [*args(items)]
    bad[bad.index("pid")] = "nope"
    assert main(["anonymize-rt", str(people), *bad, "-k", "3", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--id" in err[0]
    assert main(["anonymize-rt", str(people), *args(items), "-k", "13", "-o", str(out)]) == 3
    assert not out.exists()


def test_l_diversity_from_the_command_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    people, items = files
    frame = pd.read_csv(people)
    frame["disease"] = ["flu", "cold", "hiv"] * 4
    frame.to_csv(people, index=False)
    out = tmp_path / "r.jsonl"
    model = ["--sensitive", "disease", "--l", "2"]
    code = main(
        ["anonymize-rt", str(people), *args(items), *model, "-k", "2", "-o", str(out), "-q"]
    )
    assert code == 0
    assert main(["verify-rt", str(people), str(out), *args(items), *model, "-k", "2"]) == 0


def test_missing_qi_codes(files: tuple[Path, Path], tmp_path: Path) -> None:
    people, items = files
    out = tmp_path / "r.jsonl"
    na = [*args(items), "--na", "age=31"]
    assert main(["anonymize-rt", str(people), *na, "-k", "3", "-o", str(out), "-q"]) == 0
    cells = [json.loads(x)["age"] for x in out.read_text().splitlines()]
    assert cells.count("*") >= 3  # the person of age 31 and the records covering them
    assert main(["verify-rt", str(people), str(out), *na, "-k", "3"]) == 0
