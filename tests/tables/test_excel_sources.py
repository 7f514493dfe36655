"""Excel workbooks as table sources (issue 30 item 3): a chosen worksheet (``--sheet``), cells
read as text like a CSV file's, ``verify`` reading the same sheet, one line and exit 2 for a
missing sheet, a damaged file or ``--sheet`` on another format."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.tables.io import CsvOptions, read_table
from anonymatch.tables.io.release import read_release

openpyxl = pytest.importorskip("openpyxl", reason="the excel extra (openpyxl) is missing")

QI = ["--qi", "age,sex", "--numeric", "age"]


def _book(path: Path) -> Path:
    book = openpyxl.Workbook()
    cover = book.active
    cover.title = "About"
    cover.append(["note"])
    cover.append(["survey 2024"])
    sheet = book.create_sheet("People")
    sheet.append(["age", "sex", "seen", "score"])
    for i in range(40):
        sheet.append([20 + i % 30, "F" if i % 2 else "M", dt.date(2024, 1, 1 + i % 28), 0.5 * i])
    sheet.append([None, None, None, None])  # a blank row left by formatting
    book.save(path)
    return path


def test_sheet_read_as_text(tmp_path: Path) -> None:
    path = _book(tmp_path / "s.xlsx")
    frame = read_table(path, CsvOptions(sheet="People"))
    assert list(frame.columns) == ["age", "sex", "seen", "score"] and len(frame) == 40
    assert frame.loc[0].tolist() == ["20", "M", "2024-01-01", "0"]
    assert frame.loc[3, "score"] == "1.5"
    assert list(read_table(path).columns) == ["note"]  # default: the first sheet
    assert len(read_table(path, CsvOptions(sheet="People"), nrows=5)) == 5


def test_anonymize_and_verify_a_sheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _book(tmp_path / "s.xlsx")
    release = tmp_path / "r.csv"
    args = ["anonymize", str(path), "--sheet", "People", "-o", str(release), "-k", "4", *QI]
    assert main([*args, "-q"]) == 0, capsys.readouterr().err
    assert len(pd.read_csv(release)) == 40
    assert main(["verify", str(path), str(release), "--sheet", "People", "-k", "4", *QI]) == 0


@pytest.mark.parametrize("case", ["missing sheet", "damaged", "sheet of a csv"])
def test_refusals_one_line_exit_2(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _book(tmp_path / "s.xlsx")
    if case == "damaged":
        path = tmp_path / "bad.xlsx"
        path.write_bytes(b"PK\x03\x04 not a workbook")
        extra: list[str] = []
    elif case == "missing sheet":
        extra = ["--sheet", "Nope"]
    else:
        path = tmp_path / "t.csv"
        path.write_text("age,sex\n1,F\n")
        extra = ["--sheet", "People"]
    code = main(["anonymize", str(path), *extra, "-o", str(tmp_path / "r.csv"), "-k", "2", *QI])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r.csv").exists()


def test_xlsx_release_has_the_csv_release_cells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o r.xlsx``: the same cells as ``-o r.csv`` of the same run (one sheet, a sidecar),
    formula-like text stored as text (never a formula) with the CSV release's guard; verify
    reads it back."""
    frame = pd.DataFrame(
        {
            "age": [20 + i % 30 for i in range(40)],
            "sex": ["F" if i % 2 else "M" for i in range(40)],
            "note": ["=1+2" if i == 3 else f"n{i}" for i in range(40)],
            "score": [0.5 * i for i in range(40)],
        }
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    runs = {}
    for name in ("r.csv", "r.xlsx"):
        out = tmp_path / name
        code = main(["anonymize", str(tmp_path / "in.csv"), "-o", str(out), "-k", "4", *QI]
                    + ["--seed", "3", "-q"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        assert (tmp_path / f"{name}.schema.json").exists()
        runs[name] = read_release(out).astype(object)  # typed by the sidecar
    pd.testing.assert_frame_equal(runs["r.xlsx"], runs["r.csv"])
    book = openpyxl.load_workbook(tmp_path / "r.xlsx")
    assert book.sheetnames == ["release"]
    cells = {c.value: c.data_type for row in book["release"].iter_rows() for c in row}
    assert cells["'=1+2"] == "s" and not any(t == "f" for t in cells.values())
    assert main(["verify", str(tmp_path / "in.csv"), str(tmp_path / "r.xlsx"), "-k", "4", *QI]) == 0
    # a kept numeric column is stored as numbers (issue 37: every number was text); QIs as text
    score = [row[3] for row in book["release"].iter_rows(min_row=2, values_only=True)]
    assert all(isinstance(v, (int, float)) for v in score)
    assert sorted(score) == sorted(0.5 * i for i in range(40))
    assert all(isinstance(row[0], str) for row in book["release"].iter_rows(values_only=True))


def test_xlsx_release_beyond_excel_limits_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pd.DataFrame(
        {"age": list(range(8)), "sex": list("FMFMFMFM"), "text": ["x" * 40_000] * 8}
    )
    frame.to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "r.xlsx"
    code = main(["anonymize", str(tmp_path / "in.csv"), "-o", str(out), "-k", "2", *QI])
    err = capsys.readouterr().err
    assert code == 2 and "more than an Excel cell holds" in err, err
    assert not out.exists() and not (tmp_path / "r.xlsx.schema.json").exists()


def test_init_drafts_a_job_from_a_workbook(tmp_path: Path) -> None:
    """``infer_job`` reads a workbook by its format (no separator sniffing): the draft reads
    the first sheet with ``format = "auto"`` and finds the QIs."""
    from anonymatch.app.infer import infer_job

    path = tmp_path / "people.xlsx"
    pd.DataFrame({"age": [20 + i for i in range(30)], "sex": ["F", "M"] * 15}).to_excel(
        path, index=False
    )
    job = infer_job(path, k=3)
    assert job.input.format == "auto" and set(job.qi) == {"age", "sex"}


def test_a_column_missing_from_the_first_sheet_names_the_sheets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workbook whose first sheet is a note: the error says which sheets there are and that
    --sheet chooses one (one line, exit 2), for anonymize and verify alike."""
    path = _book(tmp_path / "s.xlsx")
    for command in (["anonymize", str(path), "-o", str(tmp_path / "r.csv")],
                    ["verify", str(path), str(path)]):  # fmt: skip
        code = main([*command, "-k", "2", *QI])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "sheets About, People" in err and "--sheet" in err, err
    assert not (tmp_path / "r.csv").exists()
