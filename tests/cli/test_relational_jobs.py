"""``--config`` job files of kind = "relational" for anonymize-rt, verify-rt and evaluate-rt:
the job supplies the people, the items table, the id and item columns, the roles and the model;
flags on the command line win; keys the relational commands do not read are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.app.jobfile import parse_job
from anonymatch.cli import main
from anonymatch.core.errors import InputError


def write_files(tmp_path: Path) -> tuple[Path, Path]:
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(12)],
            "age": list(range(30, 42)),
            "sex": list("FM") * 6,
            "disease": ["flu", "cold", "hiv"] * 4,
        }
    )
    items = pd.DataFrame(
        {"pid": [f"p{i % 12}" for i in range(20)], "code": [str(i % 5) for i in range(20)]}
    )
    items.loc[0, "code"] = "-1"
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    return tmp_path / "people.csv", tmp_path / "items.csv"


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

[columns.age]
role = "qi"
type = "numeric"

[columns.sex]
role = "qi"

[columns.disease]
role = "sensitive"

[columns.code]
na = ["-1"]

[model]
k = 3
l = 2

[method]
name = "hungarian"
item_weight = 0.01

[output]
path = "release.jsonl"
report = "release.json"
"""


def test_the_three_commands_run_from_a_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(JOB)
    assert main(["anonymize-rt", "--config", str(job), "-q"]) == 0
    manifest = json.loads((tmp_path / "release.json").read_text())
    assert manifest["data_kind"] == "relational" and manifest["verification"]["passed"]
    assert manifest["guarantee"]["k"] == 3
    lines = [json.loads(x) for x in (tmp_path / "release.jsonl").read_text().splitlines()]
    assert len(lines) == 12 and "disease" in lines[0] and "pid" not in lines[0]
    capsys.readouterr()
    assert main(["verify-rt", "--config", str(job)]) == 0
    assert capsys.readouterr().out.startswith("PASS")
    assert main(["verify-rt", "--config", str(job), "-k", "12", "-q"]) == 4  # the flag wins
    assert main(["evaluate-rt", "--config", str(job), "--queries", "10"]) == 0
    assert 0.0 <= json.loads(capsys.readouterr().out)["relational_gcp"] <= 1.0


def test_a_job_of_another_kind_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace('kind = "relational"', 'kind = "table"').replace(
        'items = "items.csv"\n', "").replace("item_weight = 0.01\n", ""))  # fmt: skip
    assert main(["anonymize-rt", "--config", str(job), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'reads kind = "relational"' in err[0]


def test_an_unknown_column_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace("[columns.sex]", "[columns.gender]"))
    assert main(["anonymize-rt", "--config", str(job), "-q"]) == 2
    assert "columns.gender: unknown column" in capsys.readouterr().err
    assert not (tmp_path / "release.jsonl").exists()


def as_transactions(text: str) -> str:
    """The job as a transactions job (still naming an items table)."""
    text = text.replace('kind = "relational"', 'kind = "transactions"')
    return text.replace("item_weight = 0.01\n", "").replace('name = "hungarian"\n', "")


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda t: t.replace('id_column = "pid"\n', ""), "input.id_column: required"),
        (lambda t: t.replace('item_column = "code"\n', ""), "input.item_column: required"),
        (lambda t: t.replace("[model]\n", "[model]\nm = 2\n"), "model.m: not read"),
        (lambda t: t.replace("[input]\n", "[input]\ndrop_missing = true\n"), "input.drop_missing"),
        (lambda t: t.replace('role = "qi"\n', 'role = "other"\n'), 'no column has role = "qi"'),
        (lambda t: t.replace("[input]\n", '[input]\nna = ["-9"]\n'), "columns.NAME.na"),
        (as_transactions, "input.items: read by"),
    ],
)
def test_job_file_checks(edit: object, where: str) -> None:
    import tomllib

    text = edit(JOB)  # type: ignore[operator]
    with pytest.raises(InputError, match=where.replace(".", r"\.").replace("(", r"\(")):
        parse_job(tomllib.loads(text), "job.toml")


def test_init_with_items_drafts_a_relational_job_that_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = write_files(tmp_path)
    frame = pd.read_csv(people).rename(columns={"pid": "person"})
    frame.to_csv(people, index=False)
    pd.read_csv(items).rename(columns={"pid": "person"}).to_csv(items, index=False)
    job = tmp_path / "draft.toml"
    assert main(["init", str(people), "--items", str(items), "-o", str(job), "-k", "3",
                 "-q"]) == 0  # fmt: skip
    text = job.read_text()
    assert 'kind = "relational"' in text and 'id_column = "person"' in text
    assert 'item_column = "code"' in text and 'na = ["-1"]' in text
    assert "anonymize-rt --config" in text
    assert main(["anonymize-rt", "--config", str(job), "-q"]) == 0
    assert (tmp_path / "people_k3.jsonl").is_file()
    capsys.readouterr()
    assert main(["init", str(people), "--id", "person"]) == 2
    assert "--items" in capsys.readouterr().err


def test_column_names_with_commas_and_equals_reach_the_commands_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job file's roles, per-column ℓ and missing codes reach anonymize-rt and verify-rt as
    typed values: a column named ``age, years`` or ``disease=dx``, or a code holding ``|``,
    survives (through command-line text it was split, or refused)."""
    people_path, items_path = write_files(tmp_path)
    names = {"age": "age, years", "sex": "sex=at birth", "disease": "disease=dx,icd"}
    pd.read_csv(people_path).rename(columns=names).to_csv(people_path, index=False)
    items = pd.read_csv(items_path, dtype=str)
    items.loc[1, "code"] = "n|a"
    items.to_csv(items_path, index=False)
    text = (
        JOB.replace("[columns.age]", '[columns."age, years"]')
        .replace("[columns.sex]", '[columns."sex=at birth"]')
        .replace("[columns.disease]", '[columns."disease=dx,icd"]')
        .replace('na = ["-1"]', 'na = ["-1", "n|a"]')
        .replace("l = 2", 'l = { "disease=dx,icd" = 3 }')
    )
    job = tmp_path / "job.toml"
    job.write_text(text)
    assert main(["anonymize-rt", "--config", str(job), "-q", "--seed", "2"]) == 0
    manifest = json.loads((tmp_path / "release.json").read_text())
    assert manifest["parameters"]["qi"] == ["age, years", "sex=at birth"]
    assert manifest["parameters"]["missing"]["columns"] == {"code": ["-1", "n|a"]}
    (model,) = manifest["guarantee"]["sensitive"]
    assert (model["column"], model["l"]) == ("disease=dx,icd", 3)
    lines = [json.loads(x) for x in (tmp_path / "release.jsonl").read_text().splitlines()]
    assert not any("n|a" in line["items"] or "-1" in line["items"] for line in lines)
    assert {"age, years", "sex=at birth", "disease=dx,icd"} <= set(lines[0])
    capsys.readouterr()
    assert main(["verify-rt", "--config", str(job)]) == 0
    assert capsys.readouterr().out.startswith("PASS")
    # the command line still wins over the job's typed values
    assert main(["verify-rt", "--config", str(job), "--l", "4", "-q"]) in (3, 4)
