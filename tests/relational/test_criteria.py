"""Population criteria on relational releases (issue 35): k-map, the journalist-risk bound and
δ-presence counted on the QI cells against a population of people's QIs, enforced in memory
and verified from the files; the streamed path refuses them (exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.relational.io import read_release
from anonymatch.tables.risk.population import PopulationInput, population_risk

N = 60


def people_frame(n: int, offset: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pid": [f"p{offset + i}" for i in range(n)],
            "age": [20 + (7 * (offset + i)) % 50 for i in range(n)],
            "sex": list("FM") * (n // 2),
            "region": [f"r{(offset + i) % 4}" for i in range(n)],
        }
    )


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    people = people_frame(N)
    people.to_csv(tmp_path / "people.csv", index=False)
    rows = [(f"p{i}", str(c)) for i in range(N) for c in {i % 4, i % 3}]
    pd.DataFrame(rows, columns=["pid", "code"]).to_csv(tmp_path / "items.csv", index=False)
    register = pd.concat([people, people_frame(140, N)], ignore_index=True).drop(columns="pid")
    register.to_csv(tmp_path / "register.csv", index=False)
    return tmp_path / "people.csv", tmp_path / "items.csv", tmp_path / "register.csv"


def base(files: tuple[Path, Path, Path], out: Path) -> list[str]:
    people, items, _ = files
    return [
        "anonymize-rt", str(people), "-o", str(out), "--items", str(items), "--id", "pid",
        "--item-column", "code", "--qi", "age,sex,region", "--numeric", "age", "-k", "3",
        "--seed", "1", "-q",
    ]  # fmt: skip


def test_delta_presence_and_kmap_on_the_qi_cells(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items, register = files
    out, manifest = tmp_path / "r.jsonl", tmp_path / "r.json"
    args = [*base(files, out), "--delta-max", "0.4", "--kmap", "6"]
    code = main([*args, "--population", str(register), "--report", str(manifest)])
    assert code == 0, capsys.readouterr().err
    written = json.loads(manifest.read_text())
    assert written["guarantee"]["presence"]["delta_max"] == 0.4
    assert written["guarantee"]["kmap"]["population_sha256"]
    assert written["verification"]["presence"]["passed"] and written["loss"]["widening"]
    # checked again from the files alone: the release's QI cells against the register
    from anonymatch.relational.io import read_relational

    frame = pd.read_csv(people)
    loaded = read_relational(str(people), str(items), "pid", "code")
    release = read_release(str(out), loaded, ("age", "sex", "region"))
    figures = population_risk(
        frame,
        release.table,
        pd.read_csv(register),
        PopulationInput(("age", "sex", "region"), ("age",)),
    )
    assert figures.presence is not None and figures.presence.max <= 0.4 and figures.kmap >= 6
    verify = ["verify-rt", str(people), str(out), "--items", str(items), "--id", "pid"]
    verify += ["--item-column", "code", "--qi", "age,sex,region", "--numeric", "age", "-k", "3"]
    code = main(verify)
    assert code == 0, capsys.readouterr().err


def test_streamed_path_refuses_population_criteria(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, _, register = files
    out = tmp_path / "s.jsonl"
    args = [*base(files, out), "--delta-max", "0.4", "--population", str(register)]
    code = main([*args, "--stream", "--executor", "inline"])
    err = capsys.readouterr().err
    assert code == 2 and "--delta-max runs in memory only" in err and err.count("error") == 1
    assert not out.exists()
    code = main([*base(files, out), "--delta-max", "0.4"])
    assert code == 2 and "--delta-max needs --population" in capsys.readouterr().err
