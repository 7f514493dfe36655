"""CLI of the sensitive models: anonymize/verify with --l/--t, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.cli.test_tables import QI, run
from tests.factories import random_frame

BASE = ["--k", "3", "--qi", QI, "--numeric", "n0,n1"]


@pytest.fixture()
def planted(tmp_path: Path) -> Path:
    """QIs that predict the sensitive value s (low, mid, high)."""
    frame = random_frame(60, 2)
    frame["s"] = np.where(frame["n0"] < 15, "low", np.where(frame["c0"] == "v0", "mid", "high"))
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def test_anonymize_then_verify(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rel.csv"
    code, stdout, err = run(
        ["anonymize", str(planted), "-o", str(out), *BASE, "--sensitive", "s", "--l", "s=2"], capsys
    )
    assert code == 0, err
    assert "sensitive 's': PASS" in stdout and "0 see one value only" in stdout
    verify = ["verify", str(planted), str(out), *BASE, "--sensitive", "s"]
    code, stdout, _ = run([*verify, "--l", "2"], capsys)
    assert code == 0 and stdout.startswith("PASS")
    assert "sensitive 's': PASS - distinct l-diversity l = 2" in stdout
    code, stdout, _ = run([*verify, "--l", "s=2", "--t", "s=1"], capsys)
    assert code == 0 and "sensitive 's': PASS" in stdout
    # a larger l than the release was made for: every class shows 2 values at most here
    code, stdout, _ = run([*verify, "--l", "3"], capsys)
    assert code == 4 and stdout.startswith("FAIL: ")
    fail = [line for line in stdout.splitlines() if line.startswith("sensitive 's': FAIL")]
    assert len(fail) == 1 and "l = 3" in fail[0] and "people fail" in fail[0]
    code, stdout, _ = run([*verify, "--l", "2", "--t", "0.01"], capsys)  # far too strict
    assert code == 4 and "sensitive 's': FAIL" in stdout
    # the plain k-anonymous release of the same table fails the model
    plain = tmp_path / "plain.csv"
    code, _, err = run(["anonymize", str(planted), "-o", str(plain), *BASE, "--seed", "1"], capsys)
    assert code == 0, err
    verify_plain = ["verify", str(planted), str(plain), *BASE, "--sensitive", "s"]
    code, stdout, _ = run([*verify_plain, "--l", "2"], capsys)
    assert code == 4 and "sensitive 's': FAIL" in stdout
    # a named sensitive column without --l/--t: the default ℓ = 2 is checked
    code, stdout, _ = run(verify_plain, capsys)
    assert code == 4 and "sensitive 's': FAIL" in stdout and "l = 2 by default" in stdout
    code, stdout, _ = run([*verify_plain, "--l", "1"], capsys)
    assert code == 0 and "sensitive 's'" not in stdout  # --l 1: k alone


def test_entropy_and_closeness_with_report(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    model = ["--sensitive", "s", "--l", "2", "--diversity", "entropy", "--t", "0.3"]
    code, stdout, err = run(
        ["anonymize", str(planted), "-o", str(out), "--report", str(report), *BASE, *model]
        + ["--method", "mondrian"],
        capsys,
    )
    assert code == 0, err
    assert "entropy l-diversity l = 2" in stdout and "t-closeness t = 0.3" in stdout
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["sensitive"] == [
        {"column": "s", "diversity": "entropy", "l": 2, "t": 0.3, "ground_distance": "equal"}
    ]
    assert [c["passed"] for c in manifest["verification"]["sensitive"]] == [True]
    code, stdout, _ = run(["verify", str(planted), str(out), *BASE, *model, "--json"], capsys)
    assert code == 0
    assert json.loads(stdout)["sensitive"][0]["model"]["diversity"] == "entropy"


def test_ordered_closeness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out = tmp_path / "people.csv", tmp_path / "rel.csv"
    frame = random_frame(40, 3)
    frame["s"] = frame["n0"] // 6 * 1000  # an ordered value that follows a QI
    frame.to_csv(path, index=False)
    args = ["--k", "3", "--qi", QI, "--numeric", "n0,n1,s", "--sensitive", "s", "--t", "0.3"]
    code, stdout, err = run(["anonymize", str(path), "-o", str(out), *args], capsys)
    assert code == 0, err
    assert "ordered distance" in stdout
    code, stdout, _ = run(["verify", str(path), str(out), *args], capsys)
    assert code == 0 and "sensitive 's': PASS - t-closeness t = 0.3, ordered distance" in stdout


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (["--sensitive", "s", "--l", "4"], 3, "infeasible"),
        (["--sensitive", "s", "--l", "3", "--diversity", "entropy"], 3, "even as one class"),
        (["--sensitive", "s", "--t", "0"], 2, "--t must be in (0, 1]"),
        (["--sensitive", "s", "--t", "1.5"], 2, "--t must be in (0, 1]"),
        (["--sensitive", "s", "--t", "abc"], 2, "--t expects"),
        (["--l", "3"], 2, "--sensitive"),
        (["--t", "0.5"], 2, "--sensitive"),
        (["--sensitive", "c0", "--l", "2"], 2, "both a quasi-identifier"),
        (["--sensitive", "s", "--numeric", "n0,n1,s", "--t", "0.5"], 2, "non-number"),
        (["--sensitive", "s", "--l", "2", "--diversity", "recursive"], 2, "needs --c"),
        (["--sensitive", "s", "--l", "2", "--c", "2"], 2, "--c applies"),
        (["--sensitive", "s", "--l", "2", "--diversity", "recursive", "--c", "0"], 2, "--c must"),
        (["--sensitive", "s", "--diversity", "entropy"], 2, "need --l"),
        (["--sensitive", "s", "--l", "0"], 2, "at least 1"),
        (["--sensitive", "s", "--l", "1", "--diversity", "entropy"], 2, "without ℓ-diversity"),
        (["--sensitive", "s", "--method", "bmatching"], 2, "by default"),
        (["--sensitive", "s", "--l", "2.5"], 2, "--l expects"),
        (["--sensitive", "s", "--l", "abc"], 2, "--l expects"),
        (["--sensitive", "s", "--l", "s="], 2, "--l expects"),
        (["--sensitive", "s", "--l", "zz=2"], 2, "not a --sensitive column"),
        (["--sensitive", "s", "--t", "zz=0.5"], 2, "not a --sensitive column"),
        (["--sensitive", "s", "--l", "2", "--method", "ring"], 2, "does not support"),
        (["--sensitive", "s", "--l", "2", "--method", "bmatching"], 2, "does not support --l/--t"),
    ],
)
def test_bad_model_one_line_and_nothing_written(
    planted: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    code: int,
    message: str,
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    args = ["anonymize", str(planted), "-o", str(out), "--report", str(report), "--k", "3"]
    numeric = [] if "--numeric" in extra else ["--numeric", "n0,n1"]
    got, _, err = run([*args, "--qi", QI, *numeric, *extra], capsys)
    assert got == code, err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists() and not report.exists()


@pytest.mark.parametrize("executor", ["inline", "processes"])
def test_streamed_path_publishes_and_checks_the_model(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    base = ["--k", "3", "--qi", QI, "--numeric", "n0,n1", "--sensitive", "s"]
    args = ["anonymize", str(planted), "-o", str(out), "--report", str(report), *base]
    code, _, err = run(
        [*args, "--l", "2", "--executor", executor, "--partition-size", "20"], capsys
    )
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["sensitive"] == [{"column": "s", "diversity": "distinct", "l": 2}]
    assert manifest["verification"]["sensitive"][0]["passed"]
    code, stdout, _ = run(["verify", str(planted), str(out), *base, "--l", "2"], capsys)
    assert code == 0, stdout  # the in-memory verifier on the whole release agrees
    out.unlink()
    Path(f"{out}.schema.json").unlink()  # the sidecar of the CSV release
    report.unlink()
    code, _, err = run([*args, "--l", "4", "--executor", executor], capsys)  # 3 values only
    assert code == 3 and "infeasible" in err and not out.exists() and not report.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["people.csv"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--l", "2"], "--sensitive"),
        (["--sensitive", "s", "--l", "0"], "at least 1"),
        (["--sensitive", "s", "--t", "2"], "--t must be in (0, 1]"),
        (["--sensitive", "c0", "--l", "2"], "both a quasi-identifier"),
        (["--sensitive", "s", "--l", "2", "--diversity", "recursive"], "needs --c"),
        (["--sensitive", "zz", "--l", "2"], "zz"),
    ],
)
def test_verify_bad_model_one_line(
    planted: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    out = tmp_path / "rel.csv"
    code, _, err = run(["anonymize", str(planted), "-o", str(out), *BASE], capsys)
    assert code == 0, err
    got, stdout, err = run(["verify", str(planted), str(out), *BASE, *extra], capsys)
    assert got == 2, (stdout, err)
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_verify_rejects_altered_sensitive_values(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rel.csv"
    model = ["--sensitive", "s", "--l", "2"]
    code, _, err = run(["anonymize", str(planted), "-o", str(out), *BASE, *model], capsys)
    assert code == 0, err
    release = pd.read_csv(out)
    altered, dropped = tmp_path / "altered.csv", tmp_path / "dropped.csv"
    release.assign(s=["low", *release["s"][1:]] if release["s"][0] != "low" else "low").to_csv(
        altered, index=False
    )
    release.drop(columns="s").to_csv(dropped, index=False)
    for path, message in ((altered, "not the original's"), (dropped, "no sensitive column")):
        got, _, err = run(["verify", str(planted), str(path), *BASE, *model], capsys)
        assert got == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_strict_closeness_is_not_infeasible(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the table is at distance 0 from itself: a t that no small class meets still has an answer
    out = tmp_path / "rel.csv"
    model = ["--sensitive", "s", "--t", "0.01"]
    code, _, err = run(["anonymize", str(planted), "-o", str(out), *BASE, *model], capsys)
    assert code == 0, err
    code, stdout, _ = run(["verify", str(planted), str(out), *BASE, *model], capsys)
    assert code == 0 and "sensitive 's': PASS" in stdout


# ------------------------------------------------------------ issue 36: the default ℓ = 2


def test_named_sensitive_column_gets_l2_by_default(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report, html = tmp_path / "rel.csv", tmp_path / "rel.json", tmp_path / "rel.html"
    base = [*BASE, "--sensitive", "s"]
    code, stdout, err = run(
        ["anonymize", str(planted), "-o", str(out), "--report", str(report), *base]
        + ["--report-html", str(html)],
        capsys,
    )
    assert code == 0, err
    assert "l = 2 by default" in stdout and "0 see one value only" in stdout
    assert "without protection" not in err
    page = html.read_text()
    assert "distinct ℓ = 2 applied by default" in page
    assert "published without protection" not in page
    manifest = json.loads(report.read_text())
    default = {"column": "s", "diversity": "distinct", "l": 2, "default": True}
    assert manifest["guarantee"]["sensitive"] == [default]
    assert "unprotected" not in manifest["guarantee"]
    # the candidate check, from the release and the original alone (no manifest): no person's
    # candidate rows all show one value
    import anonymatch

    original, release = pd.read_csv(planted), pd.read_csv(out, dtype=str)
    check = anonymatch.tables.verify(original, release, k=3, qi=QI, numeric="n0,n1", l=2,
                                     sensitive="s")  # fmt: skip
    assert check.passed and check.sensitive[0]["homogeneous"] == 0
    # verify with the same flags checks what anonymize promised: the default ℓ = 2
    code, stdout, _ = run(["verify", str(planted), str(out), *base], capsys)
    assert code == 0 and "sensitive 's': PASS - distinct l-diversity l = 2 by default" in stdout
    code, stdout, _ = run(["verify", str(planted), str(out), "--manifest", str(report)], capsys)
    assert code == 0 and "sensitive 's': PASS" in stdout and "UNCHECKED" not in stdout


def test_l1_publishes_unprotected_and_is_flagged(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report, html = tmp_path / "rel.csv", tmp_path / "rel.json", tmp_path / "rel.html"
    base = [*BASE, "--sensitive", "s", "--l", "1"]
    code, stdout, err = run(
        ["anonymize", str(planted), "-o", str(out), "--report", str(report), *base]
        + ["--report-html", str(html)],
        capsys,
    )
    assert code == 0, err
    assert "sensitive 's'" not in stdout  # no model checked
    assert "warning: sensitive column 's' published without protection (l = 1)" in err
    manifest = json.loads(report.read_text())
    assert manifest["guarantee"]["unprotected"] == ["s"]
    assert "sensitive" not in manifest["guarantee"]
    page = html.read_text()
    limits = page[page.index('id="limits"') :]
    assert "Sensitive column s published without protection (--l 1)" in limits
    # verify --manifest rebuilds the opt-out (no ℓ = 2 asked of an unprotected release)
    code, stdout, _ = run(["verify", str(planted), str(out), "--manifest", str(report)], capsys)
    assert code == 0 and "UNCHECKED" not in stdout, stdout
    code, stdout, _ = run(["verify", str(planted), str(out), *base], capsys)
    assert code == 0


def test_default_on_the_streamed_path(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "rel.csv", tmp_path / "rel.json"
    base = [*BASE, "--sensitive", "s"]
    code, _, err = run(
        ["anonymize", str(planted), "-o", str(out), "--report", str(report), *base]
        + ["--executor", "inline", "--partition-size", "20"],
        capsys,
    )
    assert code == 0, err
    manifest = json.loads(report.read_text())
    assert manifest["plan"]["path"] == "streamed"
    assert manifest["guarantee"]["sensitive"][0]["default"] is True
    assert manifest["verification"]["sensitive"][0]["passed"]


def test_default_infeasible_is_one_line_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = random_frame(30, 2).assign(s="same")  # one value: no ℓ = 2 exists
    path, out = tmp_path / "people.csv", tmp_path / "rel.csv"
    frame.to_csv(path, index=False)
    code, _, err = run(["anonymize", str(path), "-o", str(out), *BASE, "--sensitive", "s"], capsys)
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "infeasible" in err and "the default for a named sensitive column" in err
    assert "--l 1 publishes it unprotected" in err and not out.exists()
    code, _, err = run(
        ["anonymize", str(path), "-o", str(out), *BASE, "--sensitive", "s", "--l", "1"], capsys
    )
    assert code == 0, err


def test_python_front_and_job_file_get_the_same_default(
    planted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anonymatch
    from anonymatch.core.errors import InfeasibleError, InputError
    from anonymatch.tables.job import TableJob

    frame = pd.read_csv(planted)
    result = anonymatch.anonymize(frame, k=3, qi=QI, numeric="n0,n1", sensitive="s", seed=1)
    default = {"column": "s", "diversity": "distinct", "l": 2, "default": True}
    assert result.report["guarantee"]["sensitive"] == [default]
    assert anonymatch.verify(frame, result.release, k=3, qi=QI, numeric="n0,n1",
                             sensitive="s").passed  # fmt: skip
    opted = anonymatch.anonymize(frame, k=3, qi=QI, numeric="n0,n1", sensitive="s", l=1, seed=1)
    assert opted.report["guarantee"]["unprotected"] == ["s"]
    with pytest.raises(InfeasibleError, match="default"):
        anonymatch.anonymize(frame.assign(s="x"), k=3, qi=QI, sensitive="s")
    with pytest.raises(InputError, match="by default.*`l` 1"):
        anonymatch.anonymize(frame, k=3, qi=QI, sensitive="s", method="bmatching")
    # the job file: a sensitive column and no model
    from anonymatch.app.jobfile import load_job
    from anonymatch.app.tablejob import job_file_keywords

    job = tmp_path / "job.toml"
    columns = "".join(f'[columns.{c}]\nrole = "qi"\n' for c in QI.split(","))
    job.write_text(
        f'kind = "table"\n[input]\npath = "{planted}"\n[model]\nk = 3\n'
        f'{columns}[columns.s]\nrole = "sensitive"\n'
    )
    built = TableJob.build(job_file_keywords(load_job(job)))
    assert [m.describe() for m in built.models] == [default] and not built.unprotected
    job.write_text(job.read_text().replace("k = 3\n", "k = 3\nl = 1\n"))
    built = TableJob.build(job_file_keywords(load_job(job)))
    assert built.models == () and built.unprotected == ("s",)
