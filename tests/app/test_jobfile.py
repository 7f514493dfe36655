"""Job files: the pydantic schema, one located line per problem, TOML written and read back,
path resolution, and the committed JSON Schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.app.jobfile import Job, json_schema, load_job, parse_job, render_toml
from anonymatch.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def minimal(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "input": {"path": "people.csv"},
        "columns": {
            "age": {"role": "qi", "type": "numeric"},
            "sex": {"role": "qi"},
            "disease": {"role": "sensitive"},
            "name": {"role": "identifier"},
        },
        "model": {"k": 5},
    }
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value}
    return data


def error_of(data: dict[str, Any]) -> str:
    with pytest.raises(InputError) as info:
        parse_job(data, "job.toml")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_roles_in_column_order() -> None:
    job = parse_job(minimal())
    assert job.qi == ["age", "sex"]
    assert job.numeric == ["age"]
    assert job.sensitive == ["disease"]
    assert job.identifiers == ["name"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"columns": {"age": {"role": "qi", "type": "nummeric"}}},
            "job.toml: columns.age.type: expected one of numeric, categorical, ordinal, date, "
            "datetime, got 'nummeric'",
        ),
        (
            {"columns": {"age": {"role": "quasi"}}},
            "job.toml: columns.age.role: expected one of identifier, qi, sensitive, other",
        ),
        (
            {"columns": {"age": {"role": "qi", "typ": "numeric"}}},
            "job.toml: columns.age.typ: unknown key; did you mean 'type'?",
        ),
        ({"model": {"k": 0}}, "job.toml: model.k: input should be greater than or equal to 1"),
        ({"model": {"k": "five"}}, "job.toml: model.k: input should be a valid integer"),
        ({"model": {"k": True}}, "job.toml: model.k: input should be a valid integer, got True"),
        ({"model": {"k": "10"}}, "job.toml: model.k: input should be a valid integer, got '10'"),
        (
            {"model": {"l": {"sex": 2}}},
            "job.toml: model.l.sex: 'sex' is not a column with role = \"sensitive\"",
        ),
        (
            {"model": {"suppression_limit": 1.0}},
            "job.toml: model.suppression_limit: input should be less than 1",
        ),
        (
            {"columns": {"age": {"role": "qi", "type": "ordinal"}}},
            'job.toml: columns.age.order: type = "ordinal" needs order',
        ),
        (
            {"columns": {"age": {"role": "qi", "order": ["a", "b"]}}},
            'job.toml: columns.age.order: order is given for type = "categorical"',
        ),
        (
            {"columns": {"age": {"role": "qi", "type": "ordinal", "order": ["a", "b", "a"]}}},
            "job.toml: columns.age.order: lists 'a' twice",
        ),
        (
            {"columns": {"age": {"role": "qi", "type": "numeric", "granularity": "month"}}},
            'job.toml: columns.age.granularity: given for type = "numeric"',
        ),
        (
            {"columns": {"age": {"role": "qi", "type": "date", "granularity": "fortnight"}}},
            "job.toml: columns.age.granularity: expected one of year, quarter, month, week, day",
        ),
        (
            {"columns": {"age": {"role": "qi", "type": "numeric", "hierarchy": "h.csv"}}},
            'job.toml: columns.age.hierarchy: given for type = "numeric"',
        ),
        (
            {"columns": {"disease": {"role": "sensitive", "weight": 2}}},
            "job.toml: columns.disease.weight: applies to quasi-identifiers only",
        ),
        ({"input": {"format": "dat"}}, "job.toml: input.format: expected one of auto, csv, tsv"),
        ({"input": {"names": ["a"]}}, "job.toml: input.names: given for a file with a header"),
        (
            {"input": {"header": False, "names": ["age", "sex", "disease"]}},
            "job.toml: columns.name: unknown column; input.names has: age, sex, disease",
        ),
        ({"method": {"name": "gray-tsp"}}, "job.toml: method.name: expected one of hungarian"),
        ({"output": {"pth": "x"}}, "job.toml: output.pth: unknown key; did you mean 'path'?"),
        ({"model": {"seed": 3}}, "job.toml: model.seed: unknown key; known keys: k, k_column"),
    ],
)
def test_each_problem_is_one_located_line(change: dict[str, Any], expected: str) -> None:
    data = minimal()
    for section, values in change.items():
        if section == "columns":
            data["columns"] = {**data["columns"], **values}
        else:
            data[section] = {**data.get(section, {}), **values}
    assert error_of(data).startswith(expected)


def test_no_qi_and_unknown_top_level_key() -> None:
    data = minimal()
    data["columns"] = {"age": {"role": "other"}}
    assert error_of(data) == 'job.toml: columns: no column has role = "qi" (a quasi-identifier)'
    data = minimal()
    data["inptu"] = data.pop("input")
    assert error_of(data).startswith("job.toml: inptu: unknown key; did you mean 'input'?")


def test_commas_cannot_reach_the_comma_separated_options() -> None:
    data = minimal()
    data["columns"] = {**data["columns"], "a,b": {"role": "qi"}}
    assert error_of(data) == "job.toml: columns.\"a,b\": a column name cannot contain ','"
    data = minimal(input={"na": ["?", "n,a"]})
    assert error_of(data) == "job.toml: input.na.1: a missing-value token cannot contain ','"


def test_numbers_are_tokens() -> None:
    job = parse_job(minimal(columns={"age": {"role": "qi", "type": "numeric", "na": [-9, "-8"]}}))
    assert job.columns["age"].na == ["-9", "-8"]


def test_load_expands_variables_and_resolves_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANONYMATCH_DATA", "/data/sets")
    (tmp_path / "jobs").mkdir()
    path = tmp_path / "jobs" / "job.toml"
    path.write_text(
        '[input]\npath = "${ANONYMATCH_DATA}/people.csv"\n'
        '[columns]\nage = { role = "qi", type = "numeric" }\n'
        'zip = { role = "qi", hierarchy = "h/zip.csv" }\n'
        '[output]\npath = "out/release.csv"\nreport = "/abs/r.json"\n'
    )
    job = load_job(path)
    assert job.input.path == "/data/sets/people.csv"
    assert job.output.path == str(tmp_path / "jobs" / "out" / "release.csv")
    assert job.output.report == "/abs/r.json"
    assert job.columns["zip"].hierarchy == str(tmp_path / "jobs" / "h" / "zip.csv")
    monkeypatch.delenv("ANONYMATCH_DATA")
    with pytest.raises(InputError, match=r"^job.toml: input.path: environment variable "
                       "ANONYMATCH_DATA is not set$"):  # fmt: skip
        load_job(path)


def test_load_reports_toml_syntax_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[input\npath = 1\n")
    with pytest.raises(InputError, match=r"^bad.toml: not valid TOML"):
        load_job(bad)
    with pytest.raises(InputError, match="job file not found"):
        load_job(tmp_path / "none.toml")


names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00,"),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(
    columns=st.dictionaries(
        names,
        st.sampled_from(["qi", "sensitive", "other", "identifier"]),
        min_size=1,
        max_size=5,
    ),
    order=st.lists(names, min_size=1, max_size=4, unique=True),
    na=st.lists(names, max_size=3),
    k=st.integers(1, 1000),
    path=names,
)
def test_render_reads_back_as_the_same_job(
    columns: dict[str, str], order: list[str], na: list[str], k: int, path: str
) -> None:
    cols: dict[str, Any] = {name: {"role": role} for name, role in columns.items()}
    first = next(iter(cols))
    cols[first] = {"role": "qi", "type": "ordinal", "order": order, "na": na}
    data = {
        "input": {"path": path, "sep": ";", "na": na},
        "columns": cols,
        "model": {"k": k, "suppression_limit": 0.05},
        "method": {"name": "mondrian", "epsilons": [0.5, 0.25]},
        "execution": {"executor": "processes", "workers": 2},
        "output": {"path": "r.csv"},
    }
    sensitive = [n for n, r in columns.items() if r == "sensitive" and n != first]
    if sensitive:
        data["model"]["l"] = {sensitive[0]: 2}
    job = parse_job(data)
    text = render_toml(job, {"": ["top # comment"], f"columns.{first}.after": ['na = ["-9"]']})
    again = parse_job(tomllib.loads(text))
    assert again == job


def test_committed_json_schema_is_current() -> None:
    committed = json.loads((ROOT / "docs" / "job.schema.json").read_text())
    assert committed == json_schema(), (
        "docs/job.schema.json is stale: regenerate it with "
        "`python -m anonymatch.app.jobfile > docs/job.schema.json`"
    )


def test_json_schema_accepts_a_valid_job_and_rejects_a_bad_type() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json_schema()
    jsonschema.validate(minimal(), schema)
    bad = minimal(columns={"age": {"role": "qi", "type": "nummeric"}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_job_is_frozen() -> None:
    job = parse_job(minimal())
    with pytest.raises(Exception):  # noqa: B017 - pydantic's ValidationError on assignment
        job.kind = "graph"  # type: ignore[misc]
    assert isinstance(job, Job)


# -- issue 24 item 7: loading limits --------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels"),
        ("a = " + "{b = " * 70 + "1" + "}" * 70 + "\n", "nested more than 64 levels"),
        ("a = 1\n\xff", "not UTF-8"),
    ],
    ids=["deep-array", "deep-table", "not-utf8"],
)
def test_a_damaged_job_file_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    job = tmp_path / "job.toml"
    job.write_bytes(text.encode("utf-8", "surrogateescape") if "\xff" not in text else
                    text.replace("\xff", "").encode() + b"\xff")  # fmt: skip
    with pytest.raises(InputError, match=message):
        load_job(job)


def test_a_job_file_is_a_small_regular_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from anonymatch.app import jobfile

    fifo = tmp_path / "job.toml"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="job file is not a regular file"):
        load_job(fifo)
    big = tmp_path / "big.toml"
    big.write_text("# padding\n" * 200)
    monkeypatch.setattr(jobfile, "MAX_JOB_BYTES", 1000)
    with pytest.raises(InputError, match="larger than"):
        load_job(big)
