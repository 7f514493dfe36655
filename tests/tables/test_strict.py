"""``strict`` is a parameter of the typed jobs, not a side channel (issue 35): the leakage
check's one declaration (``tables.risk.leakcheck.CHECK_OPTIONS``) gives the Python fronts'
keyword (tables, relational, (k,ℓ)), the job file's ``[model] strict`` key, the command line's
``--strict`` and the web form's check box; every front refuses a leaking release with the
error the command line turns into exit 2 and accepts a clean one, a non-bool is refused, and a
path without the leakage check refuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.app.jobfile import parse_job
from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.relational import anonymize as anonymize_rt
from anonymatch.relational.io import from_frames
from anonymatch.relational.job import RelationalJob
from anonymatch.tables.job import ReleaseCheck, TableJob
from anonymatch.tables.models.kl import anonymize_kl
from anonymatch.tables.risk.leakage import LeakRefused
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS, STRICT, Leakage
from anonymatch.ui import data as ui

N = 60


def table() -> pd.DataFrame:
    """60 people: the QIs age and sex, and a kept ``serial`` unique per person (flagged: a
    value of its own on every row)."""
    return pd.DataFrame(
        {
            "age": [20 + (7 * i) % 50 for i in range(N)],
            "sex": list("FM") * (N // 2),
            "serial": [7919 * i % 100_003 for i in range(N)],
        }
    )


def people() -> anonymatch.relational.io.People:
    rows = table().assign(pid=[f"p{i}" for i in range(N)])
    items = pd.DataFrame(
        [(f"p{i}", str(c)) for i in range(N) for c in {i % 4, i % 3}], columns=["pid", "code"]
    )
    return from_frames(rows, items, "pid", "code")


ROLES = {"qi": ["age", "sex"], "numeric": ["age"]}


def test_one_declaration() -> None:
    assert [p.name for p in CHECK_OPTIONS.parameters()] == ["strict"]
    assert STRICT is Leakage.parameters[0] and STRICT.kind == "flag" and STRICT.default is False
    job = TableJob.build({"k": 3, **ROLES})
    assert job.strict is False and job.check.strict is False
    assert TableJob.build({"k": 3, **ROLES, "strict": True}).strict is True
    assert RelationalJob.build({"k": 3, **ROLES}).strict is False
    assert ReleaseCheck.build({**ROLES, "strict": True}).strict is True
    # the fronts' docs list it from the declaration
    assert "``strict`` (bool, default False)" in (anonymatch.tables.anonymize.__doc__ or "")


@settings(max_examples=20, deadline=None)
@given(st.one_of(st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.none()))
def test_a_non_bool_is_refused_everywhere(value: object) -> None:
    """A flag is a bool: text, a number or anything else is refused, naming ``strict``, by
    the table job, the release check and the relational job (None: not given)."""
    for build in (
        lambda v: TableJob.build({"k": 3, **ROLES, "strict": v}),
        lambda v: ReleaseCheck.build({**ROLES, "strict": v}),
        lambda v: RelationalJob.build({"k": 3, **ROLES, "strict": v}),
    ):
        if value is None:
            with pytest.raises(InputError, match="`strict` must be true or false"):
                build("None")
            continue
        with pytest.raises(InputError, match="`strict` must be true or false"):
            build(value)


def test_table_front_refuses_a_leak_and_accepts_a_clean_release() -> None:
    data = table()
    with pytest.raises(LeakRefused, match=r"refused \(`strict`\): column 'serial'"):
        anonymatch.tables.anonymize(data, k=3, **ROLES, seed=1, strict=True)
    released = anonymatch.tables.anonymize(data, k=3, **ROLES, seed=1)  # warned, published
    assert released.report["leakage"]["flagged"] == ["serial"]
    clean = anonymatch.tables.anonymize(
        data, k=3, **ROLES, identifiers=["serial"], seed=1, strict=True
    )
    assert "serial" not in clean.table.columns and clean.report["leakage"]["flagged"] == []
    assert clean.report["verification"]["passed"]
    with pytest.raises(InputError, match="`strict` must be true or false"):
        anonymatch.tables.anonymize(data, k=3, **ROLES, strict="yes")
    with pytest.raises(InputError, match="`strict` is not checked on the adaptive path"):
        anonymatch.tables.anonymize(data, k=3, **ROLES, method="bmatching", strict=True)


def test_kl_front_refuses_a_leak_and_accepts_a_clean_release() -> None:
    data = table()
    with pytest.raises(LeakRefused, match="column 'serial'"):
        anonymize_kl(data, 3, 1, ROLES["qi"], numeric=ROLES["numeric"], strict=True)
    clean = anonymize_kl(
        data, 3, 1, ROLES["qi"], numeric=ROLES["numeric"], identifiers=["serial"], strict=True
    )
    assert clean.report["leakage"]["flagged"] == [] and "serial" not in clean.table.columns
    with pytest.raises(InputError, match="`strict` must be true or false"):
        anonymize_kl(data, 3, 1, ROLES["qi"], strict=1)


def test_relational_front_refuses_a_leak_and_accepts_a_clean_release() -> None:
    who = people()
    with pytest.raises(LeakRefused, match="column 'serial'"):
        anonymize_rt(who, k=3, **ROLES, seed=2, options={"strict": True})
    clean = anonymize_rt(
        who, k=3, **ROLES, seed=2, options={"strict": True, "identifiers": ["serial"]}
    )
    assert clean.verification.passed and clean.report["leakage"]["flagged"] == []
    with pytest.raises(InputError, match="`strict` must be true or false"):
        anonymize_rt(who, k=3, **ROLES, options={"strict": "true"})


TABLE_JOB = """schema = "anonymatch-job/1"
[input]
path = "in.csv"
[columns]
age = { role = "qi", type = "numeric" }
sex = { role = "qi" }
serial = { role = "ROLE" }
[model]
k = 3
strict = STRICT
"""

RT_JOB = """schema = "anonymatch-job/1"
kind = "relational"
[input]
path = "people.csv"
items = "items.csv"
id_column = "pid"
item_column = "code"
[columns]
pid = { role = "identifier" }
age = { role = "qi", type = "numeric" }
sex = { role = "qi" }
serial = { role = "ROLE" }
[model]
k = 3
strict = STRICT
"""


def write_job(tmp_path: Path, text: str, role: str, strict: str) -> Path:
    job = tmp_path / "job.toml"
    job.write_text(text.replace("ROLE", role).replace("STRICT", strict))
    return job


@pytest.mark.parametrize("kind", ["table", "relational"])
def test_job_file_strict_through_config(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``strict = true`` in the job file's ``[model]`` refuses the leaking release (exit 2,
    one line, nothing written), publishes the clean one, and ``strict = "yes"`` is refused at
    its key."""
    if kind == "table":
        table().to_csv(tmp_path / "in.csv", index=False)
        command, text, source = "anonymize", TABLE_JOB, "in.csv"
    else:
        who = table().assign(pid=[f"p{i}" for i in range(N)])
        who.to_csv(tmp_path / "people.csv", index=False)
        items = [(f"p{i}", c) for i in range(N) for c in {i % 4, i % 3}]
        pd.DataFrame(items, columns=["pid", "code"]).to_csv(tmp_path / "items.csv", index=False)
        command, text, source = "anonymize-rt", RT_JOB, "people.csv"
    out, report = tmp_path / "out", tmp_path / "m.json"
    ext = ".csv" if kind == "table" else ".jsonl"

    def run(role: str, strict: str) -> tuple[int, str]:
        job = write_job(tmp_path, text, role, strict)
        args = [command, "--config", str(job), "-o", f"{out}{ext}", "--report", str(report),
                "-q", "--force", "--", str(tmp_path / source)]  # fmt: skip
        code = main(args)
        return code, capsys.readouterr().err

    code, err = run("other", "true")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "refused (--strict): column 'serial'" in err
    assert not Path(f"{out}{ext}").exists() and not report.exists()
    code, err = run("other", "false")  # warned, published
    assert code == 0 and "column 'serial'" in err
    assert json.loads(report.read_text())["leakage"]["flagged"] == ["serial"]
    report.unlink()
    code, err = run("identifier", "true")  # clean: published
    assert code == 0, err
    assert json.loads(report.read_text())["leakage"]["flagged"] == []
    code, err = run("other", '"yes"')
    assert code == 2 and "model.strict" in err and len(err.strip().splitlines()) == 1


def test_flag_given_on_the_command_line_or_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--strict`` on the command line asks for it without a job file; the (k,ℓ) command
    takes it the same way; without it nothing is refused."""
    table().to_csv(tmp_path / "in.csv", index=False)
    for command, extra in (
        ("anonymize", ["--k", "3"]),
        ("anonymize-kl", ["--k", "3", "--known", "1"]),
    ):
        args = [command, str(tmp_path / "in.csv"), "-o", str(tmp_path / "o.csv"), *extra,
                "--qi", "age,sex", "--numeric", "age", "-q", "--force"]  # fmt: skip
        assert main([*args, "--strict"]) == 2
        assert "refused (--strict)" in capsys.readouterr().err
        assert main(args) == 0
        assert main([*args, "--strict", "--identifiers", "serial"]) == 0
        capsys.readouterr()


FORM = {"role:age": "qi", "type:age": "numeric", "role:sex": "qi", "role:serial": "other",
        "k": "3", "method": "hungarian"}  # fmt: skip


def test_web_form_keeps_and_honours_strict(tmp_path: Path) -> None:
    """The web form's check box is the job's ``[model] strict`` (the run is ``anonymize
    --config`` on that job, so it is honoured there); an opened job file's ``strict = true``
    is shown ticked, never silently dropped."""
    path = tmp_path / "in.csv"
    table().to_csv(path, index=False)
    ds = ui.load(ui.Dataset(path, "in.csv", path.stat().st_size))
    ticked = ui.Settings.from_form({**FORM, "strict": "on"}, ds)
    assert ticked.job.model.strict is True and ticked.table_job(ds, criteria=False).strict
    assert ui.form_view(ds, ticked)["strict"] is True
    plain = ui.Settings.from_form(FORM, ds)
    assert plain.job.model.strict is None and not plain.table_job(ds, criteria=False).strict
    assert ui.form_view(ds, plain)["strict"] is False and ui.form_view(ds, None)["strict"] is False
    opened = parse_job(
        {"input": {"path": "in.csv"}, "columns": {"age": {"role": "qi", "type": "numeric"}},
         "model": {"k": 3, "strict": True}}, "job.toml",
    )  # fmt: skip
    assert ui.form_view(ds, ui.Settings(opened))["strict"] is True
