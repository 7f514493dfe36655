"""The HTML report of a release made by the Python front (``anonymatch.relational.anonymize``):
people read from files are recorded as ``anonymize-rt`` records them, so ``anonymatch report``
re-reads the originals; people built from DataFrames are recorded as such, and ``report``
refuses them with one line naming what to pass (exit 2) until it is given the files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.manifest import file_digest
from anonymatch.relational import anonymize
from anonymatch.relational.io import from_frames, read_relational, write_release


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    people = pd.DataFrame(
        {"pid": [f"p{i}" for i in range(12)], "age": list(range(30, 42)), "sex": list("FM") * 6}
    )
    items = pd.DataFrame(
        {"pid": [f"p{i % 12}" for i in range(20)], "code": [str(i % 4) for i in range(20)]}
    )
    items.loc[0, "code"] = "-1"
    return people, items


def _publish(result, tmp_path: Path) -> tuple[Path, Path]:  # noqa: ANN001
    out, manifest = tmp_path / "r.jsonl", tmp_path / "r.json"
    write_release(out, result.release)
    manifest.write_text(json.dumps(result.report))
    return out, manifest


def test_people_read_from_files_are_recorded_and_reread(tmp_path: Path) -> None:
    people, items = _frames()
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    read = read_relational(tmp_path / "people.csv", tmp_path / "items.csv", "pid", "code", ["-1"])
    result = anonymize(read, k=3, qi=["age", "sex"], numeric=["age"], seed=0,
                       options={"na_values": {"age": ["-9"]}})  # fmt: skip
    source, params = result.report["input"], result.report["parameters"]
    assert source["path"] == str(tmp_path / "people.csv")  # type: ignore[index]
    assert source["items_sha256"] == file_digest(tmp_path / "items.csv")  # type: ignore[index]
    assert params["missing"]["columns"] == {"age": ["-9"], "code": ["-1"]}  # type: ignore[index]
    out, manifest = _publish(result, tmp_path)
    page = tmp_path / "r.html"
    code = main(["report", str(tmp_path / "people.csv"), str(out), "--manifest", str(manifest),
                 "-o", str(page), "-q"])  # fmt: skip
    assert code == 0
    assert "re-verified from the files" in page.read_text()


def test_people_from_frames_make_report_ask_for_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = _frames()
    built = from_frames(people, items, "pid", "code", ["-1"])
    result = anonymize(built, k=3, qi=["age", "sex"], numeric=["age"], seed=0)
    assert result.report["input"]["from_frames"] is True  # type: ignore[index]
    out, manifest = _publish(result, tmp_path)
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    page = tmp_path / "r.html"
    args = ["report", str(tmp_path / "people.csv"), str(out), "--manifest", str(manifest),
            "-o", str(page)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made from DataFrames" in err[0]
    assert "--items (the items table)" in err[0]
    assert not page.exists()
    assert main([*args, "--items", str(tmp_path / "items.csv"), "-q"]) == 0
