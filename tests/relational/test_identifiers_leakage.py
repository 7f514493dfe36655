"""Relational releases keep the promise of table releases (issue 35): identifiers never
published (``anonymize-rt --identifiers``, the job file's ``identifier`` role), the kept-column
leakage check in memory and streamed (manifest ``leakage`` block, warnings, ``--strict``), the
leakage shown by ``risk-rt``, and an item column equal to the id refused (exit 2) on both
paths."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.relational import anonymize
from anonymatch.relational.io import from_frames, read_relational, read_release
from anonymatch.relational.risk import RiskQuestion, release_leakage
from anonymatch.tables.columns.schema import MissingCodes, Schema

N = 60
PATHS = {"memory": [], "streamed": ["--stream", "--executor", "inline"]}


def people_frame() -> pd.DataFrame:
    """60 people in 20 households of 3: the id is the household followed by the 3-digit
    member number (INFORMS' DUPERSID = DUID ⧺ PID), and a serial number unique per person."""
    hh = [1000 + i // 3 for i in range(N)]
    member = [1 + i % 3 for i in range(N)]
    return pd.DataFrame(
        {
            "pid": [f"{h}{m:03d}" for h, m in zip(hh, member, strict=True)],
            "hh": hh,
            "member": member,
            "serial": [7919 * i % 100_003 for i in range(N)],
            "age": [20 + (7 * i) % 50 for i in range(N)],
            "sex": list("FM") * (N // 2),
            "region": [f"r{i % 4}" for i in range(N)],
        }
    )


def items_frame() -> pd.DataFrame:
    rows = [(f"{1000 + i // 3}{1 + i % 3:03d}", str(c)) for i in range(N) for c in {i % 4, i % 3}]
    return pd.DataFrame(rows, columns=["pid", "code"])


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    people_frame().to_csv(tmp_path / "people.csv", index=False)
    items_frame().to_csv(tmp_path / "items.csv", index=False)
    return tmp_path / "people.csv", tmp_path / "items.csv"


def args(items: Path, item_column: str = "code") -> list[str]:
    return [
        "--items", str(items), "--id", "pid", "--item-column", item_column, "--qi", "age,sex",
        "--numeric", "age", "-k", "3",
    ]  # fmt: skip


def published(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.parametrize("path", list(PATHS))
def test_identifiers_are_never_published(
    files: tuple[Path, Path], tmp_path: Path, path: str
) -> None:
    people, items = files
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(people), *args(items), "--identifiers", "hh,member,serial",
         *PATHS[path], "-o", str(out), "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    lines = published(out)
    assert len(lines) == N
    for line in lines:
        assert not {"pid", "hh", "member", "serial"} & set(line)
        assert "region" in line
    manifest = json.loads(report.read_text())
    assert manifest["parameters"]["identifiers"] == ["hh", "member", "serial"]
    assert manifest["leakage"]["flagged"] == []


@pytest.mark.parametrize("path", list(PATHS))
def test_an_unknown_identifier_is_refused(
    files: tuple[Path, Path], tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out = tmp_path / "r.jsonl"
    code = main(
        ["anonymize-rt", str(people), *args(items), "--identifiers", "nope", *PATHS[path],
         "-o", str(out), "-q"]
    )  # fmt: skip
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'nope'" in err[0] and "--identifiers" in err[0]


@pytest.mark.parametrize("path", list(PATHS))
def test_leakage_block_warnings_and_strict(
    files: tuple[Path, Path], tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(people), *args(items), *PATHS[path], "-o", str(out),
         "--report", str(report), "-q", "--seed", "3"]
    )  # fmt: skip
    assert code == 0
    manifest = json.loads(report.read_text())
    block = manifest["leakage"]
    assert block["schema"] == "anonymatch-leakage/1" and block["rows"] == N
    assert [c["column"] for c in block["columns"]] == ["hh", "member", "serial", "region"]
    assert "serial" in block["flagged"]  # a value of its own on every row
    warnings = [x for x in capsys.readouterr().err.splitlines() if "released unchanged" in x]
    assert warnings and all(x.startswith("anonymatch: warning: column") for x in warnings)
    assert any("'serial'" in x for x in warnings)
    # the manifest's figures are those of the check on the written release (risk-rt's)
    people_ = read_relational(people, items, "pid", "code")
    release = read_release(out, people_, ("age", "sex"))
    question = RiskQuestion(Schema.build(["age", "sex"], ["age"]), MissingCodes())
    assert release_leakage(people_, release, question).to_dict() == block
    # --strict: refused, exit 2, one line, nothing written
    strict = tmp_path / "s.jsonl"
    code = main(
        ["anonymize-rt", str(people), *args(items), *PATHS[path], "-o", str(strict),
         "--report", str(tmp_path / "s.json"), "-q", "--strict"]
    )  # fmt: skip
    assert code == 2
    assert not strict.exists() and not (tmp_path / "s.json").exists()
    assert not list(tmp_path.glob(".s.jsonl*")) and not list(tmp_path.glob("s.jsonl.*"))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("anonymatch: error: refused (--strict)")
    assert "'serial'" in err[0]
    # --strict with the leaking columns made identifiers: published
    code = main(
        ["anonymize-rt", str(people), *args(items), *PATHS[path], "-o", str(strict), "-q",
         "--strict", "--identifiers", "hh,member,serial"]
    )  # fmt: skip
    assert code == 0 and strict.exists()


@pytest.mark.parametrize("path", list(PATHS))
def test_item_column_equal_to_the_id_is_refused(
    files: tuple[Path, Path], tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out = tmp_path / "r.jsonl"
    code = main(
        ["anonymize-rt", str(people), *args(items, item_column="pid"), *PATHS[path],
         "-o", str(out), "-q"]
    )  # fmt: skip
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--item-column" in err[0] and "--id" in err[0]


def test_item_column_equal_to_the_id_in_python() -> None:
    with pytest.raises(InputError, match="is the id column"):
        from_frames(people_frame(), items_frame(), "pid", "pid")
    with pytest.raises(InputError, match="is the id column"):
        from_frames(items_frame(), None, "pid", "pid")


def test_the_python_front_takes_identifiers_and_checks_leakage() -> None:
    people = from_frames(people_frame(), items_frame(), "pid", "code")
    result = anonymize(
        people, k=3, qi=["age", "sex"], numeric=["age"], seed=0,
        options={"identifiers": ["hh", "member"]},
    )  # fmt: skip
    assert not {"hh", "member", "pid"} & set(result.release.table.columns)
    report = result.report
    assert report["parameters"]["identifiers"] == ["hh", "member"]  # type: ignore[index]
    assert report["leakage"]["flagged"] == ["serial"]  # type: ignore[index]


JOB = """\
schema = "anonymatch-job/1"
kind = "relational"

[input]
path = "people.csv"
items = "items.csv"
id_column = "pid"
item_column = "code"

[columns.pid]
role = "identifier"

[columns.hh]
role = "identifier"

[columns.member]
role = "identifier"

[columns.serial]
role = "identifier"

[columns.age]
role = "qi"
type = "numeric"

[columns.sex]
role = "qi"

[model]
k = 3

[output]
path = "release.jsonl"
report = "release.json"
"""


@pytest.mark.parametrize("path", list(PATHS))
def test_the_job_files_identifier_role_is_honoured(
    files: tuple[Path, Path], tmp_path: Path, path: str
) -> None:
    job = tmp_path / "job.toml"
    job.write_text(JOB)
    assert main(["anonymize-rt", "--config", str(job), *PATHS[path], "-q"]) == 0
    manifest = json.loads((tmp_path / "release.json").read_text())
    assert set(manifest["parameters"]["identifiers"]) == {"pid", "hh", "member", "serial"}
    for line in published(tmp_path / "release.jsonl"):
        assert not {"pid", "hh", "member", "serial"} & set(line)
    assert manifest["leakage"]["flagged"] == []


def test_risk_rt_shows_the_leakage(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = files
    out = tmp_path / "r.jsonl"
    assert main(["anonymize-rt", str(people), *args(items), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    risk = [str(people), str(out), *args(items)]
    assert main(["risk-rt", *risk]) == 0
    text = capsys.readouterr().out
    assert "kept columns LEAK" in text and "'serial'" in text
    assert main(["risk-rt", *risk, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "serial" in document["leakage"]["flagged"]


def test_the_html_report_shows_the_leakage(files: tuple[Path, Path], tmp_path: Path) -> None:
    people, items = files
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    assert main(["anonymize-rt", str(people), *args(items), "-o", str(out),
                 "--report", str(report), "-q"]) == 0  # fmt: skip
    for given in ([], [str(people), str(out)]):  # the manifest alone, then with the files
        html = tmp_path / "r.html"
        assert main(["report", *given, "--manifest", str(report), "-o", str(html), "--force",
                     "-q"]) == 0  # fmt: skip
        text = html.read_text()
        assert "released unchanged leaks: serial" in text  # the top card, beside "passed"
        assert "Leak: Column &#39;serial&#39;" in text  # first among the limits
