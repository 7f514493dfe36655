"""The HTML report of a relational-transaction release (anonymize-rt): the guarantee re-verified
from the people, the items table and the release; risk on the joint graph; utility as
evaluate-rt; a manifest's claim the files do not bear out ends with exit 4."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.report import build_report


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, Path, Path]:
    people = pd.DataFrame(
        {"pid": [f"p{i}" for i in range(15)], "age": list(range(30, 45)), "sex": list("FMF") * 5}
    )
    items = pd.DataFrame(
        {"pid": [f"p{i % 15}" for i in range(24)], "code": [str(i % 4) for i in range(24)]}
    )
    items.loc[0, "code"] = "-1"
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(tmp_path / "people.csv"), "--items", str(tmp_path / "items.csv"),
         "--id", "pid", "--item-column", "code", "--na", "code=-1", "--qi", "age,sex",
         "--numeric", "age", "-k", "3", "-o", str(out), "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    return tmp_path / "people.csv", out, report


def test_report_reverifies_and_shows_risk_and_utility(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    people, out, report = made
    manifest = json.loads(report.read_text())
    assert manifest["input"]["items_path"].endswith("items.csv")
    assert manifest["parameters"]["missing"]["columns"] == {"code": ["-1"]}
    html = build_report(manifest, people, out, with_check=True)
    assert html.check.status == "checked" and html.check.named  # type: ignore[attr-defined]
    for text in (
        "candidates per person",
        "relational GCP (from the files)",
        "query error",
        "uncertain items per record",
        "joint compatibility graph",
        "released people",
    ):
        assert text in html, text  # fmt: skip
    page = tmp_path / "r.html"
    assert main(["report", str(people), str(out), "--manifest", str(report), "-o", str(page),
                 "-q"]) == 0  # fmt: skip
    alone = build_report(manifest)
    assert "needs the original and the release" in alone
    assert "relational GCP (from the run)" in alone and "from the files)" not in alone


def test_a_claim_the_files_do_not_bear_out_exits_4(
    made: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, out, report = made
    manifest = json.loads(report.read_text())
    manifest["verification"]["min_matches_original"] = 99
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(manifest))
    page = tmp_path / "r.html"
    code = main(["report", str(people), str(out), "--manifest", str(forged), "-o", str(page)])
    assert code == 4
    items = tmp_path / "items.csv"
    items.write_text(items.read_text() + "p1,3\n")  # not the items table the manifest names
    assert main(["report", str(people), str(out), "--manifest", str(report), "-o",
                 str(tmp_path / "x.html")]) == 2  # fmt: skip
    assert "not the items table" in capsys.readouterr().err


def test_anonymize_rt_writes_the_html_report_beside_the_release(
    made: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    people, _, _ = made
    out, page = tmp_path / "again.jsonl", tmp_path / "again.html"
    code = main(
        ["anonymize-rt", str(people), "--items", str(tmp_path / "items.csv"), "--id", "pid",
         "--item-column", "code", "--na", "code=-1", "--qi", "age,sex", "--numeric", "age",
         "-k", "3", "-o", str(out), "--report-html", str(page), "-q"]
    )  # fmt: skip
    assert code == 0
    html = page.read_text()
    assert "candidates per person" in html and "re-verified from the files" in html
    items = str(tmp_path / "items.csv")  # shown by its name; only the embedded manifest has it
    assert ">items.csv<" in html and f">{items}<" not in html
