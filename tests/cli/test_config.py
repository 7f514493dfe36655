"""``--config job.toml``, ``verify --manifest`` and ``anonymatch init`` on the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from anonymatch.app.jobfile import load_job, parse_job
from anonymatch.cli import cli, main
from anonymatch.core.errors import InputError
from tests.factories import random_frame


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


JOB = """\
[input]
path = "people.csv"

[columns]
n0 = { role = "qi", type = "numeric" }
n1 = { role = "qi", type = "numeric" }
c0 = { role = "qi" }
c1 = { role = "qi" }
s = { role = "sensitive" }

[model]
k = 3
l = 2

[output]
path = "release.csv"
report = "release.json"
"""


@pytest.fixture()
def job(tmp_path: Path) -> Path:
    random_frame(40, 5).to_csv(tmp_path / "people.csv", index=False)
    path = tmp_path / "job.toml"
    path.write_text(JOB)
    return path


def test_config_needs_nothing_else(job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["anonymize", "--config", str(job), "--seed", "1"], capsys)
    assert code == 0, err
    release = job.parent / "release.csv"
    assert release.exists()
    manifest = json.loads((job.parent / "release.json").read_text())
    assert manifest["guarantee"]["k"] == 3
    assert manifest["guarantee"]["sensitive"][0]["l"] == 2
    assert manifest["parameters"]["qi"] == ["n0", "n1", "c0", "c1"]
    assert manifest["parameters"]["input_options"]["format"] == "auto"
    for command in ("verify", "risk"):
        code, out, err = run([command, "--config", str(job)], capsys)
        assert code == 0, (command, err)
    code, out, err = run(["verify", "--config", str(job)], capsys)
    assert out.startswith("PASS") and "sensitive 's': PASS" in out
    code, out, err = run(["evaluate", "--config", str(job), "--json"], capsys)
    assert code == 0, err
    assert set(json.loads(out)[str(release)]["ncp"]) == {"n0", "n1", "c0", "c1"}


def test_flags_override_the_job(job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = job.parent / "other.csv"
    code, _, err = run(
        ["anonymize", "--config", str(job), "-o", str(other), "--k", "4", "--report",
         str(job.parent / "other.json"), "--qi", "n0,c0", "--seed", "2"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    manifest = json.loads((job.parent / "other.json").read_text())
    assert manifest["guarantee"]["k"] == 4
    assert manifest["parameters"]["qi"] == ["n0", "c0"]
    assert not (job.parent / "release.csv").exists()
    # positional arguments given on the command line replace the job's
    code, out, err = run(
        ["verify", "--config", str(job), str(job.parent / "people.csv"), str(other), "--k", "4",
         "--qi", "n0,c0"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    # the job's k = 3 model still holds for other.csv (k = 4) - but k = 5 does not
    code, out, _ = run(
        ["verify", "--config", str(job), str(job.parent / "people.csv"), str(other), "--k", "5",
         "--qi", "n0,c0"],
        capsys,
    )  # fmt: skip
    assert code == 4 and out.startswith("FAIL")


def test_verify_with_a_manifest_needs_only_the_two_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = random_frame(40, 7)
    data = tmp_path / "people.txt"
    frame.to_csv(data, index=False, header=False, sep=";")
    release, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    code, _, err = run(
        ["anonymize", str(data), "-o", str(release), "--report", str(report), "--k", "4",
         "--sep", ";", "--names", ",".join(frame.columns), "--qi", "n0,c0,c1",
         "--numeric", "n0", "--sensitive", "s", "--t", "0.9", "--seed", "3"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = run(["verify", str(data), str(release), "--manifest", str(report)], capsys)
    assert code == 0, err
    assert "k = 4" in out and "t-closeness t = 0.9" in out
    # a flag still wins over the manifest
    code, out, _ = run(
        ["verify", str(data), str(release), "--manifest", str(report), "--k", "400"], capsys
    )
    assert code in (1, 3) or "FAIL" in out


def test_missing_feature_is_refused_in_one_place(
    job: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = JOB.replace(
        'c0 = { role = "qi" }', 'c0 = { role = "qi", type = "ordinal", order = ["v0", "v1"] }'
    )
    job.write_text(text)
    # anonymize has --ordinal now; anonymize-kl still has not
    command = next(
        name
        for name in ("anonymize", "anonymize-kl")
        if "ordinal" not in {p.name for p in cli.commands[name].params}
    )
    code, _, err = run([command, "--config", str(job)], capsys)
    assert code == 2
    assert err.strip() == (
        "anonymatch: error: job.toml: columns.c0.type: ordinal columns are not supported yet "
        f"by anonymatch {command}"
    )
    assert not (job.parent / "release.csv").exists()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ('n0 = { role = "qi", type = "numeric" }', 'n9 = { role = "qi", type = "numeric" }'),
            "job.toml: columns.n9: unknown column; the input has: n0, n1, c0, c1, s",
        ),
        (
            ('type = "numeric" }\nn1', 'type = "number" }\nn1'),
            "job.toml: columns.n0.type: expected one of numeric, categorical, ordinal, date, "
            "datetime, got 'number'",
        ),
        (("k = 3", "k = -3"), "job.toml: model.k: input should be greater than or equal to 1"),
        (("l = 2", "l = { c0 = 2 }"), "job.toml: model.l.c0: 'c0' is not a column with role"),
        (("[output]", "[outptu]"), "job.toml: outptu: unknown key; did you mean 'output'?"),
        (
            ('path = "people.csv"', 'path = "${NO_SUCH_VARIABLE_X}/people.csv"'),
            "job.toml: input.path: environment variable NO_SUCH_VARIABLE_X is not set",
        ),
    ],
)
def test_bad_job_file_one_line_exit_2_nothing_written(
    job: Path, edit: tuple[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = edit
    assert old in JOB
    job.write_text(JOB.replace(old, new, 1))
    before = sorted(os.listdir(job.parent))
    for command in ("anonymize", "verify", "evaluate", "risk"):
        code, out, err = run([command, "--config", str(job)], capsys)
        assert code == 2, (command, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"anonymatch: error: {message}"), lines
    assert sorted(os.listdir(job.parent)) == before


def test_headerless_job_names_columns_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = random_frame(30, 2)
    frame.to_csv(tmp_path / "d.dat", index=False, header=False, sep=" ")
    (tmp_path / "j.toml").write_text(
        '[input]\npath = "d.dat"\nformat = "csv"\nsep = " "\nheader = false\n[columns]\n'
        'n0 = { role = "qi", type = "numeric" }\nn1 = {}\nc0 = { role = "qi" }\nc1 = {}\n'
        's = { role = "sensitive" }\n[model]\nk = 3\n[output]\npath = "r.csv"\n'
    )
    code, _, err = run(["anonymize", "--config", str(tmp_path / "j.toml"), "-q"], capsys)
    assert code == 0, err
    assert list(pd.read_csv(tmp_path / "r.csv").columns) == list(frame.columns)
    (tmp_path / "j.toml").write_text(
        (tmp_path / "j.toml").read_text().replace("c1 = {}\n", "").replace("r.csv", "r2.csv")
    )
    code, _, err = run(["anonymize", "--config", str(tmp_path / "j.toml"), "-q"], capsys)
    assert code == 2
    assert "job.toml" not in err and "j.toml: columns: 4 columns are listed but d.dat has 5" in err


def test_init_drafts_a_job_that_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame(
        {
            "PatientID": [f"p{i}" for i in range(60)],
            "age": [20 + i % 37 for i in range(60)],
            "sex": ["F", "M"] * 30,
            "zip": [f"{1000 + i % 7}" for i in range(60)],
            "diagnosis": [f"d{i % 5}" for i in range(60)],
            "EDUCYEAR": [-9 if i % 11 == 0 else 8 + i % 9 for i in range(60)],
            # independent of the QIs (a kept column that recodes one is proposed as one)
            "installs": [f"{10 ** (i // 15 % 4):,}+" for i in range(60)],
            "visit": [f"2018-0{1 + i % 9}-1{i % 3}" for i in range(60)],
            "note": ["?" if i % 10 == 0 else f"n{i % 3}" for i in range(60)],
        }
    )
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "job.toml"
    code, _, err = run(["init", str(data), "-o", str(out), "-k", "4"], capsys)
    assert code == 0, err
    text = out.read_text()
    job = load_job(out)
    assert job.identifiers == ["PatientID"]
    assert job.qi == ["age", "sex", "zip", "EDUCYEAR"]
    assert job.columns["age"].type == "numeric"
    assert job.columns["visit"].type == "date"
    assert job.columns["diagnosis"].role == "other"
    assert 'sensitive? set role = "sensitive"' in text
    assert '# na = ["-9"]' in text
    assert '# order = ["1+", "10+", "100+", "1,000+"]' in text
    assert job.input.na == ["?"]
    assert job.model.k == 4
    assert load_job(out).input.path == str(data)
    code, _, err = run(["anonymize", "--config", str(out), "-q", "--seed", "1"], capsys)
    assert code == 0, err
    assert (tmp_path / "people_k4.csv").exists()
    code, _, err = run(["init", str(data), "-o", str(out)], capsys)
    assert code == 2 and "exists" in err
    code, stdout, _ = run(["init", str(data)], capsys)
    assert code == 0 and parse_job(__import__("tomllib").loads(stdout)).qi == job.qi


KIND_JOBS = {
    "transactions": (
        "_dat",
        "t.dat",
        'kind = "transactions"\n[input]\npath = "t.dat"\nformat = "dat"\n[model]\nk = 4\n'
        '[method]\nname = "gray-tsp"\n[output]\npath = "r.jsonl"\nreport = "r.json"\n',
        ["anonymize-sets", "verify-sets", "evaluate-sets"],
    ),
    "km": (
        "_dat",
        "t.dat",
        'kind = "transactions"\n[input]\npath = "t.dat"\n[model]\nk = 3\nm = 2\n'
        '[output]\npath = "r.jsonl"\n',
        ["anonymize-km", "check-km"],
    ),
    "sparse": (
        "_edges",
        "e.csv",
        'kind = "sparse"\n[input]\npath = "e.csv"\n[model]\nk = 4\n[method]\nname = "smooth"\n'
        'runs = 2\n[output]\npath = "r.csv"\n',
        ["anonymize-sparse", "verify-sparse", "evaluate-sparse"],
    ),
    "graph": (
        "_graph",
        "g.csv",
        'kind = "graph"\n[input]\npath = "g.csv"\nvertices = 30\n[model]\nk = 3\n'
        '[method]\niterations = 3\n[output]\npath = "r.csv"\n',
        ["anonymize-graph", "check-graph"],
    ),
}


@pytest.mark.parametrize("kind", sorted(KIND_JOBS))
def test_other_kinds_run_from_a_job(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli import test_golden

    maker, data, text, commands = KIND_JOBS[kind]
    getattr(test_golden, maker)(tmp_path / data)
    job = tmp_path / "job.toml"
    job.write_text(text)
    for command in commands:
        code, out, err = run([command, "--config", str(job), "-q"], capsys)
        assert code == 0, (command, err)
    if kind == "graph":  # the check reads the job's release, not its input
        code, out, _ = run(["check-graph", "--config", str(job), "--json"], capsys)
        assert json.loads(out)["passed"] is True


def test_a_job_of_another_kind_is_refused(job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["anonymize-sets", "--config", str(job)], capsys)
    assert code == 2
    assert err.strip() == (
        'anonymatch: error: job.toml: kind: a job for kind = "table"; anonymatch anonymize-sets '
        'reads kind = "transactions"'
    )


def test_kind_specific_values_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.toml"
    job.write_text('kind = "graph"\n[input]\npath = "g.csv"\n[method]\nname = "smooth"\n')
    code, _, err = run(["anonymize-graph", "--config", str(job)], capsys)
    assert code == 2
    assert 'job.toml: method.name: expected one of graph-kmeans-majority for kind = "graph"' in err


def test_feature_keys_reach_a_command_typed_never_as_text() -> None:
    """A command with --ordinal/--date/--hierarchy/--na/--suppression-limit takes the job's
    keys typed (``app.tablejob.job_file_keywords``), not as option text: values the text could
    not carry (a category holding ``|``, a missing code holding ``|`` or ``,``) survive; a
    command without the option refuses the job in one located line."""
    import click

    from anonymatch.app.tablejob import job_file_keywords
    from anonymatch.cli.config import job_parameters

    def command(*flags: str) -> click.Command:
        options = [click.Option([f], multiple=f != "--qi", required=f == "--qi") for f in flags]
        return click.Command("anonymize", params=[click.Option(["-o", "--output"]), *options])

    job = parse_job(
        {
            "input": {"path": "x.csv"},
            "columns": {
                "Installs": {"role": "qi", "type": "ordinal", "order": ["1+", "1|2", "1,000+"]},
                "updated": {"role": "qi", "type": "date", "granularity": "month"},
                "stamp": {"role": "qi", "type": "datetime"},
                "job": {"role": "qi", "hierarchy": "/h/job.csv"},
                "EDUCYEAR": {"role": "qi", "type": "numeric", "na": [-9, "a|b", "c,d"]},
            },
            "model": {"k": 5, "suppression_limit": 0.05},
            "method": {"hierarchy_cells": "set"},
        }
    )
    full = command("--qi", "--ordinal", "--date", "--hierarchy", "--na", "--suppression-limit")
    # no option text; only a stand-in for the required --qi (the job step replaces it)
    assert job_parameters(job, full) == {"qi": "Installs,updated,stamp,job,EDUCYEAR"}
    typed = job_file_keywords(job)
    assert typed["ordinal"] == {"Installs": ["1+", "1|2", "1,000+"]}
    assert typed["dates"] == {"updated": "month", "stamp": "second"}
    assert typed["hierarchies"] == {"job": "/h/job.csv"}
    assert typed["hierarchy_cells"] == "set" and typed["suppression_limit"] == 0.05
    assert typed["na_values"].columns == {"EDUCYEAR": ("-9", "a|b", "c,d")}
    with pytest.raises(InputError, match=r"^job: columns.Installs.type: ordinal columns are not"):
        job_parameters(job, command("--qi", "--date", "--hierarchy", "--na"))
    lacking = command("--qi", "--ordinal", "--date", "--hierarchy", "--na")
    with pytest.raises(InputError, match=r"^job: model.suppression_limit: a suppression limit"):
        job_parameters(job, lacking)


def test_missing_codes_suppression_and_dedupe_run_from_a_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate is open: a job's per-column ``na`` codes and ``model.suppression_limit`` reach
    anonymize and verify (``--na``, ``--suppression-limit``), and ``input.dedupe`` reaches the
    set commands (``--dedupe``), with the effects the flags have."""
    import numpy as np

    frame = random_frame(120, 9)
    rng = np.random.default_rng(4)
    frame.loc[rng.random(120) < 0.1, "n0"] = -9
    frame.loc[rng.random(120) < 0.1, "c0"] = "-8"
    frame.to_csv(tmp_path / "people.csv", index=False)
    text = (
        JOB.replace('n0 = { role = "qi", type = "numeric" }',
                    'n0 = { role = "qi", type = "numeric", na = [-9] }')
        .replace('c0 = { role = "qi" }', 'c0 = { role = "qi", na = ["-8"] }')
        .replace("l = 2", "suppression_limit = 0.05\nl = 1")  # s unprotected: missing QIs
    )  # fmt: skip
    job = tmp_path / "job.toml"
    job.write_text(text)
    code, out, err = run(["anonymize", "--config", str(job), "--seed", "1"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "release.json").read_text())
    assert manifest["parameters"]["na_codes"] == {"n0": ["-9"], "c0": ["-8"]}
    assert manifest["parameters"]["suppression_limit"] == 0.05
    assert manifest["parameters"]["input_options"]["na"] == {"n0": ["-9"], "c0": ["-8"]}
    missing = int((frame["n0"] == -9).sum() + (frame["c0"] == "-8").sum())
    assert 0 < manifest["input"]["missing_values"] <= missing  # those of the published people
    suppressed = manifest["input"]["suppressed"]
    assert 0 < suppressed <= 6 and manifest["output"]["records"] == 120 - suppressed
    release = pd.read_csv(tmp_path / "release.csv", dtype=str, keep_default_na=False)
    assert (release["n0"] == "*").any() and not release["n0"].str.contains("-9").any()
    assert "missing QI values kept" in out
    # verify from the job, and from the manifest alone (codes and limit recorded there)
    code, out, err = run(["verify", "--config", str(job)], capsys)
    assert code == 0 and "PASS" in out, err
    data, published = tmp_path / "people.csv", tmp_path / "release.csv"
    args = ["verify", str(data), str(published), "--manifest", str(tmp_path / "release.json")]
    code, out, err = run(args, capsys)
    assert code == 0 and f"({suppressed} people suppressed)" in out, err
    # the job's limit is the only thing that lets the shorter release pass
    job.write_text(text.replace("suppression_limit = 0.05", "suppression_limit = 0.0"))
    code, out, _ = run(["verify", "--config", str(job)], capsys)
    assert code == 4 and "rows but the original has 120" in out
    # sets: input.dedupe → --dedupe
    from tests.cli.test_sets import _long_with_repeats

    _, repeats = _long_with_repeats(tmp_path / "long.csv")
    sets_job = tmp_path / "sets.toml"
    sets_text = (
        'kind = "transactions"\n[input]\npath = "long.csv"\nformat = "long"\n'
        'id_column = "person"\nitem_column = "code"\ndedupe = true\n[model]\nk = 3\n'
        '[output]\npath = "r.jsonl"\nreport = "r.json"\n'
    )
    sets_job.write_text(sets_text)
    code, out, err = run(["anonymize-sets", "--config", str(sets_job), "--seed", "1"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["input"]["duplicates_removed"] == repeats
    code, _, err = run(["verify-sets", "--config", str(sets_job)], capsys)
    assert code == 0, err
    sets_job.write_text(sets_text.replace("dedupe = true\n", ""))
    (tmp_path / "r.jsonl").unlink()
    (tmp_path / "r.json").unlink()
    code, _, err = run(["anonymize-sets", "--config", str(sets_job)], capsys)
    assert code == 2 and "--dedupe" in err and not (tmp_path / "r.jsonl").exists()


def test_init_matches_hierarchy_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.DataFrame({"zip": ["01852", "01853", "02139"] * 20, "age": range(20, 80)})
    data = tmp_path / "t.csv"
    frame.to_csv(data, index=False)
    trees = tmp_path / "trees"
    trees.mkdir()
    (trees / "h_zip.csv").write_text("01852;0185*;*\n01853;0185*;*\n02139;0213*;*\n")
    out = tmp_path / "job.toml"
    code, _, err = run(["init", str(data), "-o", str(out), "--hierarchies", str(trees)], capsys)
    assert code == 0, err
    job = load_job(out)
    assert job.columns["zip"].hierarchy is not None
    assert job.columns["zip"].hierarchy.endswith("h_zip.csv")
    code, _, err = run(["anonymize", "--config", str(out), "--k", "5", "--force"], capsys)
    assert code == 0, err


def test_a_sets_job_reaches_the_commands_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transactions job's label column, ℓ and segment sizes reach anonymize-sets and
    verify-sets typed, not as command-line text: a label column named ``group, x=y`` survives
    (it was refused), the pair ``segment`` is the pair the run used, and flags still win."""
    import numpy as np

    rng = np.random.default_rng(8)
    rows = ['person,code,"group, x=y"']
    for p in range(40):
        rows += [f"p{p},c{c},g{p % 8}" for c in rng.choice(30, rng.integers(2, 5), replace=False)]
    (tmp_path / "long.csv").write_text("\n".join(rows) + "\n")
    job = tmp_path / "sets.toml"
    job.write_text(
        'kind = "transactions"\n[input]\npath = "long.csv"\nformat = "long"\n'
        'id_column = "person"\nitem_column = "code"\n[columns."group, x=y"]\n'
        'role = "sensitive"\n[model]\nl = 2\n[method]\nsegment = [4, 6]\n'
        '[output]\npath = "r.jsonl"\nreport = "r.json"\n'
    )
    code, _, err = run(["anonymize-sets", "--config", str(job), "-q", "--seed", "1"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "r.json").read_text())
    assert manifest["guarantee"] == {"model": "l-diversity", "l": 2}
    assert manifest["parameters"]["segment"] == [4, 6] and manifest["parameters"]["labels"]
    labels = {json.loads(line)["label"] for line in (tmp_path / "r.jsonl").read_text().split()}
    assert labels == {f"g{i}" for i in range(8)}
    code, out, err = run(["verify-sets", "--config", str(job)], capsys)
    assert code == 0 and out.startswith("PASS: ok; l-diversity level 2"), err
    code, out, _ = run(["verify-sets", "--config", str(job), "--l", "40"], capsys)
    assert code == 4 and "l-diversity level 40" in out  # the flag wins
    args = ["anonymize-sets", "--config", str(job), "-q", "--force", "--segment", "5,7"]
    assert run(args, capsys)[0] == 0
    assert json.loads((tmp_path / "r.json").read_text())["parameters"]["segment"] == [5, 7]


def test_a_missing_code_holding_a_bar_reaches_the_table_commands(
    job: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table job's per-column missing codes reach anonymize and verify typed: a code holding
    ``|`` or ``,`` (which ``--na COLUMN=A|B`` splits) is one code (it was refused)."""
    frame = random_frame(40, 5)
    frame["c0"] = frame["c0"].astype(str)
    frame.loc[:3, "c0"], frame.loc[4:6, "c0"] = "n|a", "?,?"
    frame.to_csv(job.parent / "people.csv", index=False)
    text = JOB.replace('c0 = { role = "qi" }', 'c0 = { role = "qi", na = ["n|a", "?,?"] }')
    job.write_text(text.replace("l = 2", "l = 1"))
    code, _, err = run(["anonymize", "--config", str(job), "--seed", "1", "-q"], capsys)
    assert code == 0, err
    manifest = json.loads((job.parent / "release.json").read_text())
    assert manifest["parameters"]["missing"]["columns"] == {"c0": ["n|a", "?,?"]}
    release = pd.read_csv(job.parent / "release.csv", dtype=str, keep_default_na=False)
    assert (release["c0"] == "*").sum() >= 1 and not release["c0"].str.contains(r"n\|a|\?").any()
    code, out, err = run(["verify", "--config", str(job)], capsys)
    assert code == 0 and out.startswith("PASS"), err


@pytest.mark.parametrize(
    ("kind", "edit", "message"),
    [
        ("sparse", ("runs = 2", "beta = 1.0"), "method.beta: must be in (1, ∞), got 1.0"),
        ("sparse", ("[output]", "[execution]\nworkers = 0\n[output]"),
         "execution.workers: must be an integer of at least 1, got 0"),
        ("transactions", ("k = 4", "l = 0"), "model.l: must be an integer of at least 1, got 0"),
    ],
)  # fmt: skip
def test_other_kinds_check_a_jobs_values_at_their_key(
    kind: str,
    edit: tuple[str, str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The typed job's ``build`` checks a job file's values (pydantic holds the shapes), and
    the error names the file's key, in one line, exit 2."""
    from tests.cli import test_golden

    maker, data, text, commands = KIND_JOBS[kind]
    getattr(test_golden, maker)(tmp_path / data)
    job = tmp_path / "job.toml"
    job.write_text(text.replace(*edit))
    code, _, err = run([commands[0], "--config", str(job), "-q"], capsys)
    assert code == 2 and err == f"anonymatch: error: job.toml: {message}\n", err
