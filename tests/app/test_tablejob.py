"""One typed job per run: the Python keywords, the command line, a job file (which the web app
writes) and a release's manifest build the same ``TableJob`` (issue 23)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonymatch.tables
from anonymatch.app.jobfile import parse_job, toml_key, toml_value
from anonymatch.app.tablejob import job_file_keywords, manifest_keywords
from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.job import TableJob, plan
from anonymatch.tables.methods import registry

ORDER = ["lo", "mid", "hi"]


def people(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": [f"p{i}" for i in range(n)],
            "age": [20 + (7 * i) % 45 for i in range(n)],
            "zip": [f"z{i % 5}" for i in range(n)],
            "edu": [ORDER[i % 3] for i in range(n)],
            "disease": [["flu", "cold", "asthma", "gout"][i % 4] for i in range(n)],
        }
    )


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    """Valid keywords of a table run over the columns of ``people``."""
    methods = [m.name for m in registry().values() if not m.levels and m.name != "mip"]
    method = registry()[draw(st.sampled_from(methods))]
    k = draw(st.integers(2, 4))
    kw: dict[str, Any] = {
        "qi": ["age", "zip", "edu"],
        "numeric": ["age"],
        "identifiers": ["name"],
        "ordinal": {"edu": ORDER},
        "k": k,
        "method": method.name,
        "seed": draw(st.integers(0, 9)),
    }
    if draw(st.booleans()):
        kw["weights"] = {"age": 2.0, "zip": 0.5}
    if draw(st.booleans()):
        kw["na_values"] = {"age": ["-9"]}
    if draw(st.booleans()):
        kw["drop_missing"] = True
    if method.partitioned and draw(st.booleans()):
        kw["partition_size"] = draw(st.integers(2 * k, 40))
    if method.sensitive and draw(st.booleans()):
        kw["sensitive"] = ["disease"]
        kw["l"] = draw(st.integers(2, 3))
        if method.partitioned and draw(st.booleans()):
            kw["structure"] = "rings"
    elif draw(st.booleans()):
        kw["suppression_limit"] = 0.05
    return kw


def cli_args(kw: dict[str, Any]) -> list[str]:
    args = ["--qi", ",".join(kw["qi"]), "--numeric", ",".join(kw["numeric"])]
    args += ["--identifiers", "name", "--ordinal", f"edu={'|'.join(ORDER)}"]
    args += ["--k", str(kw["k"]), "--method", kw["method"], "--seed", str(kw["seed"])]
    if "weights" in kw:
        args += ["--weights", ",".join(f"{a}={w}" for a, w in kw["weights"].items())]
    if "na_values" in kw:
        args += ["--na", "age=-9"]
    if kw.get("drop_missing"):
        args.append("--drop-missing")
    if "partition_size" in kw:
        args += ["--partition-size", str(kw["partition_size"])]
    if "sensitive" in kw:
        args += ["--sensitive", "disease", "--l", str(kw["l"])]
    if "structure" in kw:
        args += ["--structure", kw["structure"]]
    if "suppression_limit" in kw:
        args += ["--suppression-limit", str(kw["suppression_limit"])]
    return args


def job_toml(kw: dict[str, Any], data: Path, out: Path) -> str:
    """The job file of the same run (what ``anonymatch init`` or the web app writes)."""
    columns: dict[str, dict[str, Any]] = {
        "name": {"role": "identifier"},
        "age": {"role": "qi", "type": "numeric"},
        "zip": {"role": "qi"},
        "edu": {"role": "qi", "type": "ordinal", "order": ORDER},
        "disease": {"role": "sensitive" if "sensitive" in kw else "other"},
    }
    for name, weight in kw.get("weights", {}).items():
        columns[name]["weight"] = weight
    if "na_values" in kw:
        columns["age"]["na"] = ["-9"]
    model = {key: kw[key] for key in ("k", "l", "suppression_limit") if key in kw}
    method = {"name": kw["method"]}
    for key in ("partition_size", "structure"):
        if key in kw:
            method[key] = kw[key]
    lines = [f"[input]\npath = {toml_value(str(data))}"]
    if kw.get("drop_missing"):
        lines.append("drop_missing = true")
    for name, column in columns.items():
        keys = "\n".join(f"{key} = {toml_value(v)}" for key, v in column.items())
        lines.append(f"[columns.{toml_key(name)}]\n{keys}")
    lines.append("[model]\n" + "\n".join(f"{a} = {toml_value(v)}" for a, v in model.items()))
    lines.append("[method]\n" + "\n".join(f"{a} = {toml_value(v)}" for a, v in method.items()))
    lines.append(f"[output]\npath = {toml_value(str(out))}")
    return "\n".join(lines) + "\n"


def captured_job(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> TableJob:
    """The TableJob the ``anonymize`` command builds from ``args`` (the run itself is skipped)."""
    seen: list[TableJob] = []

    def capture(data: pd.DataFrame, job: TableJob) -> Any:
        seen.append(job)
        raise InputError("captured")

    monkeypatch.setattr(anonymatch.tables, "run_job", capture)
    assert main(["anonymize", *args, "-q", "--executor", "threads"]) == 2
    assert len(seen) == 1
    return seen[0]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(kw=runs())
def test_python_cli_and_job_file_build_the_same_job(
    kw: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = tmp_path / "people.csv", tmp_path / "release.csv"
    people().to_csv(data, index=False)
    python = TableJob.build(dict(**kw, executor="threads"))
    flags = captured_job(monkeypatch, [str(data), "-o", str(out), "--force", *cli_args(kw)])
    job = tmp_path / "job.toml"
    job.write_text(job_toml(kw, data, out))
    from_file = captured_job(
        monkeypatch, ["--config", str(job), "--force", "--seed", str(kw["seed"])]
    )
    assert python == flags == from_file
    # the job file's values are typed: numbers stay numbers, nothing is read back from text
    typed = job_file_keywords(parse_job(tomllib.loads(job.read_text())))
    assert type(typed["k"]) is int and typed["k"] == kw["k"]


@settings(max_examples=10, deadline=None)
@given(kw=runs())
def test_a_manifest_rebuilds_the_job_it_records(kw: dict[str, Any]) -> None:
    job = TableJob.build(kw)
    release = anonymatch.tables.run_job(people(), job)
    again = TableJob.build(dict(**manifest_keywords(release.report), seed=kw["seed"]))
    for field in ("schema", "k", "k_column", "models", "method", "suppression_limit", "na"):
        assert getattr(again, field) == getattr(job, field), field
    assert again.drop_missing == job.drop_missing
    rows = len(release.table)
    assert plan(again, rows=rows).partition_size == plan(job, rows=rows).partition_size


def test_flags_override_the_job_file_and_roles_filter_its_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = tmp_path / "people.csv", tmp_path / "release.csv"
    people().to_csv(data, index=False)
    kw = {"qi": ["age", "zip", "edu"], "numeric": ["age"], "k": 3, "method": "greedy"}
    kw.update(sensitive=["disease"], l=2, weights={"age": 2.0, "zip": 1.0}, seed=1)
    job = tmp_path / "job.toml"
    job.write_text(job_toml(kw, data, out))
    # --qi on the command line: the job's numeric/weight/ordinal for dropped QIs no longer apply
    built = captured_job(
        monkeypatch, ["--config", str(job), "--force", "--qi", "zip", "--k", "4", "--seed", "1"]
    )
    assert built.schema.qi == ("zip",) and built.k == 4
    assert dict(built.schema.weights) == {"zip": 1.0}
    assert [m.l for m in built.models] == [2] and built.method.name == "greedy"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("k = true", "model.k: input should be a valid integer, got True"),
        ('k = "10"', "model.k: input should be a valid integer, got '10'"),
        ("k = 3\nl = 0", "job.toml: model.l: must be an integer of at least 1, got 0"),
    ],
)
def test_a_job_file_never_coerces_a_level(
    model: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = tmp_path / "people.csv", tmp_path / "release.csv"
    people().to_csv(data, index=False)
    job = tmp_path / "job.toml"
    job.write_text(
        f'[input]\npath = "{data}"\n[columns]\nage = {{ role = "qi", type = "numeric" }}\n'
        f'disease = {{ role = "sensitive" }}\n[model]\n{model}\n[output]\npath = "{out}"\n'
    )
    assert main(["anonymize", "--config", str(job)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_verify_reads_a_manifest_as_a_job_and_refuses_a_coerced_level(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out, report = tmp_path / "people.csv", tmp_path / "r.csv", tmp_path / "r.json"
    people().to_csv(data, index=False)
    args = ["anonymize", str(data), "-o", str(out), "--report", str(report), "--k", "3"]
    assert main([*args, "--qi", "age,zip", "--numeric", "age", "--seed", "1", "-q"]) == 0
    assert main(["verify", str(data), str(out), "--manifest", str(report)]) == 0
    manifest = json.loads(report.read_text())
    manifest["guarantee"]["k"] = True  # would have been read as k = 1 by click
    report.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert main(["verify", str(data), str(out), "--manifest", str(report)]) == 2
    err = capsys.readouterr().err
    # refused by the manifest's shape (core.manifest) before it is read as a job
    assert "guarantee.k is bool, expected an integer" in err


@pytest.mark.parametrize(
    ("command", "keys", "message"),
    [
        ("anonymize", "[model]\nk = 3\nl = 0", "model.l: must be an integer of at least 1, got 0"),
        ("verify", "[model]\nk = 3\nl = 0", "model.l: must be an integer of at least 1, got 0"),
        ("anonymize", "[model]\nk = 3\nt = 1.5", "model.t: must be in (0, 1], got 1.5"),
        ("verify", "[model]\nk = 3\nt = { disease = 2.0 }", "model.t.disease: must be in (0, 1]"),
        ("anonymize", "[model]\nk = 3\n[method]\npartition_size = 4",
         "method.partition_size: must be at least 2k = 6, got 4"),
        ("verify", "[model]\nk = 3\n[execution]\nworkers = 0",
         "execution.workers: must be an integer of at least 1, got 0"),
    ],
)  # fmt: skip
def test_a_job_files_values_are_checked_by_the_typed_job_at_their_key(
    command: str, keys: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job file's model (pydantic) holds shapes and types; the typed job's ``build`` gives
    the semantic error, located at the file's key, in one line (exit 2); the same value given
    on the command line is named by its flag."""
    data, out = tmp_path / "people.csv", tmp_path / "release.csv"
    people().to_csv(data, index=False)
    job = tmp_path / "job.toml"
    job.write_text(
        f'[input]\npath = "{data}"\n[columns]\nage = {{ role = "qi", type = "numeric" }}\n'
        f'disease = {{ role = "sensitive" }}\n{keys}\n[output]\npath = "{out}"\n'
    )
    assert main([command, "--config", str(job)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"anonymatch: error: job.toml: {message}")
    assert err.count("\n") == 1 and not out.exists()
    if "l = 0" in keys:
        assert main([command, "--config", str(job), "--l", "0"]) == 2
        assert "error: --l must be an integer of at least 1, got 0" in capsys.readouterr().err
