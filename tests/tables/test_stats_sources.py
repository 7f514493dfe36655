"""SPSS, Stata and SAS files as table sources (issue 30 item 2), generated with pyreadstat:
value labels applied (the release shows ``female``, not ``0``), variable labels in the
manifest, ``verify`` reading the same file, one line and exit 2 for a damaged file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.io import read_table

pyreadstat = pytest.importorskip("pyreadstat", reason="the stats extra (pyreadstat) is missing")

QI = ["--qi", "age,sex,region", "--numeric", "age"]


def _frame(n: int = 60) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [float(20 + (i * 7) % 50) for i in range(n)],
            "sex": [float(i % 2) for i in range(n)],
            "region": [float(1 + i % 3) for i in range(n)],
            "income": [float(1000 + 37 * i) for i in range(n)],
        }
    )


LABELS = {"age": "Age in years", "sex": "Sex of respondent", "region": "Region"}
VALUES = {"sex": {0: "female", 1: "male"}, "region": {1: "north", 2: "south"}}  # 3: no label


def _write(path: Path) -> Path:
    frame = _frame()
    if path.suffix in (".sav", ".zsav"):
        values = {c: {float(k): v for k, v in m.items()} for c, m in VALUES.items()}
        pyreadstat.write_sav(
            frame,
            str(path),
            column_labels=LABELS,
            variable_value_labels=values,
            compress=path.suffix == ".zsav",
        )
    elif path.suffix == ".dta":
        pyreadstat.write_dta(frame, str(path), column_labels=LABELS, variable_value_labels=VALUES)
    else:
        pyreadstat.write_xport(frame, str(path), column_labels=LABELS)
    return path


@pytest.mark.parametrize("suffix", [".sav", ".zsav", ".dta"])
def test_value_labels_applied_and_variable_labels_kept(tmp_path: Path, suffix: str) -> None:
    frame = read_table(_write(tmp_path / f"survey{suffix}"))
    assert set(frame["sex"]) == {"female", "male"}
    assert {"north", "south"} <= set(frame["region"].astype(str))  # 3 has no label: kept
    assert len(frame) == 60
    assert frame.attrs["variable_labels"] == LABELS
    assert len(read_table(tmp_path / f"survey{suffix}", nrows=5)) == 5


def test_sas_transport_file_is_read(tmp_path: Path) -> None:
    frame = read_table(_write(tmp_path / "survey.xpt"))
    assert list(frame.columns) == ["age", "sex", "region", "income"] and len(frame) == 60


@pytest.mark.parametrize("suffix", [".xpt", ".sav", ".dta"])
@pytest.mark.parametrize("share", [0.6, 0.9])
def test_a_file_cut_short_is_refused(tmp_path: Path, suffix: str, share: float) -> None:
    """Found by the hostile tests of issue 37: a transport file cut short was read as the rows
    left in it, with exit 0. Every statistical file cut short is refused in one line."""
    path = _write(tmp_path / f"survey{suffix}")
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * share) // 8 * 8 + 3])  # not on a record boundary
    with pytest.raises(InputError, match=f"cannot read {path}"):
        read_table(path)


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_anonymize_and_verify_a_labelled_file(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write(tmp_path / f"survey{suffix}")
    release, manifest = tmp_path / "r.csv", tmp_path / "m.json"
    code = main(
        [
            "anonymize",
            str(source),
            "-o",
            str(release),
            "-k",
            "4",
            *QI,
            "--report",
            str(manifest),
            "-q",
        ]
    )
    assert code == 0, capsys.readouterr().err
    published = pd.read_csv(release, dtype=str, keep_default_na=False)
    assert set("|".join(published["sex"]).split("|")) <= {"female", "male", "*"}
    assert "female" in "".join(published["sex"])
    assert json.loads(manifest.read_text())["input"]["variable_labels"] == LABELS
    assert main(["verify", str(source), str(release), "-k", "4", *QI]) == 0


def test_damaged_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.sav"
    bad.write_bytes(b"$FL2 this is not an SPSS file" * 10)
    code = main(["anonymize", str(bad), "-o", str(tmp_path / "r.csv"), "-k", "2", *QI])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "bad.sav" in err
    assert not (tmp_path / "r.csv").exists()


@pytest.mark.parametrize("suffix", [".sav", ".zsav", ".dta"])
def test_release_written_as_spss_or_stata_with_labels(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .sav/.zsav/.dta release: published cells as text, the value labels shown, the variable
    labels carried over as column labels, no sidecar; verify reads it back."""
    source = _write(tmp_path / "survey.sav")
    release = tmp_path / f"r{suffix}"
    code = main(["anonymize", str(source), "-o", str(release), "-k", "4", *QI, "-q"])
    assert code == 0, capsys.readouterr().err
    reader = pyreadstat.read_dta if suffix == ".dta" else pyreadstat.read_sav
    frame, meta = reader(str(release))
    assert len(frame) == 60 and "female" in "".join(frame["sex"])
    assert all(".." in c or c.replace(".", "").isdigit() for c in frame["age"].astype(str))
    assert {k: v for k, v in meta.column_names_to_labels.items() if v} == LABELS
    assert not Path(str(release) + ".schema.json").exists()
    assert main(["verify", str(source), str(release), "-k", "4", *QI]) == 0


KEPT_LABELS = {
    "status": {1.0: "employed", 2.0: "unemployed", 9.0: "refused"},  # 3: no label
    "flag": {1.0: "flagged"},  # a numeric column with one label
}
KEPT_MISSING = {  # SPSS user-missing: two codes for status, a range for flag
    "status": [{"lo": 8.0, "hi": 8.0}, {"lo": 9.0, "hi": 9.0}],
    "flag": [{"lo": 90.0, "hi": 99.0}],
}


def _write_kept(path: Path) -> pd.DataFrame:
    """The survey with two kept (non-QI) labelled columns; SPSS gets user-missing codes."""
    frame = _frame()
    frame["status"] = [(1.0, 2.0, 3.0, 8.0, 9.0)[i % 5] for i in range(len(frame))]
    frame["flag"] = [(0.0, 1.0, 0.0, 99.0)[i % 4] for i in range(len(frame))]
    if path.suffix == ".sav":
        values = {c: {float(k): v for k, v in m.items()} for c, m in VALUES.items()}
        pyreadstat.write_sav(
            frame,
            str(path),
            column_labels=LABELS,
            variable_value_labels={**values, **KEPT_LABELS},
            missing_ranges={c: [dict(r) for r in m] for c, m in KEPT_MISSING.items()},
        )
    else:
        labels = {c: {int(k): v for k, v in m.items()} for c, m in KEPT_LABELS.items()}
        pyreadstat.write_dta(
            frame, str(path), column_labels=LABELS, variable_value_labels={**VALUES, **labels}
        )
    return frame


def _rows(frame: pd.DataFrame) -> list[tuple[float, ...]]:
    """The kept columns' codes row by row (rows may be shuffled: compared as a sorted list)."""
    cells = frame[["income", "status", "flag"]].to_numpy(dtype=float)
    return sorted(tuple(-1.0 if v != v else v for v in row) for row in cells)


PAIRS = [(".sav", ".sav"), (".dta", ".sav"), (".dta", ".dta"), (".sav", ".zsav")]


@pytest.mark.parametrize(("source_suffix", "suffix"), PAIRS)
def test_kept_labelled_columns_keep_codes_value_labels_and_user_missing(
    tmp_path: Path, source_suffix: str, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the hostile tests of issue 37: a .sav release dropped the value labels of the
    labelled columns and wrote an untouched numeric column with one label as text ('0.0', ''
    for a user-missing code). A kept labelled column now comes back as its codes, with its value
    labels and (SPSS) its user-missing definitions; the QIs stay text; verify passes."""
    source = tmp_path / f"survey{source_suffix}"
    original = _write_kept(source)
    release = tmp_path / f"r{suffix}"
    code = main(["anonymize", str(source), "-o", str(release), "-k", "4", *QI, "-q"])
    assert code == 0, capsys.readouterr().err
    reader = pyreadstat.read_dta if suffix == ".dta" else pyreadstat.read_sav
    raw, meta = reader(str(release), **({} if suffix == ".dta" else {"user_missing": True}))
    assert _rows(raw) == _rows(original)  # the same codes, user-missing ones included
    assert raw["status"].dtype == raw["flag"].dtype == "float64"
    assert not pd.api.types.is_numeric_dtype(raw["sex"])  # a QI: published text
    labels = {c: {float(k): v for k, v in m.items()} for c, m in meta.variable_value_labels.items()}
    assert labels == KEPT_LABELS
    if suffix != ".dta":
        expected = KEPT_MISSING if source_suffix == ".sav" else {}
        assert {c: meta.missing_ranges.get(c, []) for c in expected} == expected
        assert set(meta.missing_ranges) == set(expected)
    assert {k: v for k, v in meta.column_names_to_labels.items() if v} == LABELS
    assert main(["verify", str(source), str(release), "-k", "4", *QI]) == 0
