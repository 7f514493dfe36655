"""``anonymatch init PEOPLE --items ITEMS``: the columns that together rebuild the person id are
drafted as identifiers (``app.infer.id_rebuilding``), so that ``anonymize-rt --config`` never
publishes them (INFORMS: DUID ⧺ PID = DUPERSID)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.app.infer import id_rebuilding, infer_job, relational_job
from anonymatch.cli import main

N = 200


def people(tmp_path: Path, **extra: list[object]) -> tuple[Path, Path]:
    """People whose id is a household number followed by a zero-padded member number, under
    names that do not look like keys (``household``, ``member``), and their items."""
    household = [50_000 + (i * 37) % 90 for i in range(N)]
    seen: dict[int, int] = {}
    member = []
    for h in household:
        seen[h] = seen.get(h, 0) + 1
        member.append(100 + seen[h])
    frame = pd.DataFrame(
        {
            "person": [f"{h}{m:03d}" for h, m in zip(household, member, strict=True)],
            "household": household,
            "member": member,
            "age": [18 + (i * 7) % 70 for i in range(N)],
            "sex": [1 + i % 2 for i in range(N)],
            **extra,
        }
    )
    frame.to_csv(tmp_path / "people.csv", index=False)
    items = pd.DataFrame(
        {"person": frame["person"].repeat(2).to_numpy(), "code": [str(i % 9) for i in range(2 * N)]}
    )
    items.to_csv(tmp_path / "items.csv", index=False)
    return tmp_path / "people.csv", tmp_path / "items.csv"


def test_the_parts_of_the_id_become_identifiers(tmp_path: Path) -> None:
    p, q = people(tmp_path)
    draft = relational_job(infer_job(p, k=5), p, q)
    assert draft.input.id_column == "person"
    roles = {name: c.role for name, c in draft.columns.items()}
    assert roles["person"] == roles["household"] == roles["member"] == "identifier"
    assert roles["age"] == "qi"
    assert any("household ⧺ member" in line for line in draft.comments["columns.household"])


def test_a_pair_of_kept_columns_that_is_a_key_becomes_identifiers() -> None:
    sample = pd.DataFrame(
        {
            "pid": [f"x{i}" for i in range(8)],
            "a": list("aabbccdd"),
            "b": list("01010101"),
            "c": list("00001111"),
            "age": [str(30 + i) for i in range(8)],
        }
    )
    roles = {"a": "other", "b": "other", "c": "other", "age": "qi"}
    found = id_rebuilding(sample, "pid", roles)
    assert set(found) == {"a", "b"}  # (a, b) is distinct on every row; (a, c), (b, c) are not
    assert "key" in found["a"]
    # a key made of QIs is what k-anonymity generalizes: not dropped
    assert id_rebuilding(sample, "pid", {"a": "qi", "b": "qi", "c": "other"}) == {}


def test_no_false_alarm_without_a_rebuilding_set() -> None:
    sample = pd.DataFrame(
        {"pid": ["17", "23", "42", "56"], "x": ["1", "2", "4", "5"], "y": ["1", "9", "0", "3"],
         "z": ["1", "1", "2", "2"]}
    )  # fmt: skip
    assert id_rebuilding(sample, "pid", {"x": "qi", "y": "qi", "z": "other"}) == {}


def test_inits_job_publishes_no_part_of_the_id(tmp_path: Path) -> None:
    p, q = people(tmp_path)
    job = tmp_path / "job.toml"
    assert main(["init", str(p), "--items", str(q), "-o", str(job)]) == 0
    assert main(["anonymize-rt", "--config", str(job), "-q"]) == 0
    manifest = json.loads(next(tmp_path.glob("people_k*.json")).read_text())
    assert {"person", "household", "member"} <= set(manifest["parameters"]["identifiers"])
    release = next(tmp_path.glob("people_k*.jsonl")).read_text().splitlines()
    for line in release:
        assert not {"person", "household", "member"} & set(json.loads(line))


INFORMS = Path(os.environ.get("ANONYMATCH_DATA", "")) / "informs"


@pytest.mark.skipif(
    not (INFORMS / "demographics05test.csv").is_file(), reason="INFORMS dataset absent"
)
def test_informs_duid_and_pid_rebuild_dupersid() -> None:
    sample = pd.read_csv(INFORMS / "demographics05test.csv", nrows=5000).astype(str)
    found = id_rebuilding(sample, "DUPERSID", {})
    assert {"DUID", "PID"} <= set(found)
