"""``risk-rt``: the table ``risk``'s figures on the joint graph, as text, as JSON and as a
report file; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main


@pytest.fixture
def made(tmp_path: Path) -> list[str]:
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(12)],
            "age": list(range(30, 42)),
            "sex": list("FM") * 6,
            "dis": list("abc") * 4,
        }
    )
    items = pd.DataFrame(
        {"pid": [f"p{i % 12}" for i in range(20)], "code": [str(i % 4) for i in range(20)]}
    )
    items.loc[0, "code"] = "-1"
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    read = ["--items", str(tmp_path / "items.csv"), "--id", "pid", "--item-column", "code",
            "--na", "code=-1", "--qi", "age,sex", "--numeric", "age"]  # fmt: skip
    out = tmp_path / "r.jsonl"
    code = main(["anonymize-rt", str(tmp_path / "people.csv"), *read, "--sensitive", "dis",
                 "-k", "3", "-o", str(out), "-q", "--seed", "1"])  # fmt: skip
    assert code == 0
    return [str(tmp_path / "people.csv"), str(out), *read]


def test_text_json_and_report(
    made: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["risk-rt", *made, "-k", "3", "--sensitive", "dis"]) == 0
    text = capsys.readouterr().out
    assert "claimed k = 3 holds" in text and "candidates per person: min" in text
    assert "sensitive dis" in text
    report = tmp_path / "risk.json"
    assert main(["risk-rt", *made, "-k", "3", "--json", "--report", str(report)]) == 0
    printed = json.loads(capsys.readouterr().out)
    document = json.loads(report.read_text())
    assert printed["release"] == document["release"]
    assert document["schema"] == "anonymatch-risk/1" and document["data_kind"] == "relational"
    assert document["release"]["candidates"]["min"] >= 3
    assert document["release"]["prosecutor"]["max"] <= 1 / 3 + 1e-12
    assert document["input"]["original"]["items_path"].endswith("items.csv")
    # the report is not replaced without --force
    assert main(["risk-rt", *made, "--report", str(report)]) == 2


def test_bad_input_exits_2(made: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["risk-rt", *made, "--threshold", "0"]) == 2
    assert "--threshold" in capsys.readouterr().err
    assert main(["risk-rt", *made, "--sensitive", "nope"]) == 2
    assert "nope" in capsys.readouterr().err
