"""The web app's form is a job file (issue 23): each field flows into the job the app writes
(``anonymatch-job/1``, validated by the job file's own models), the CLI builds from it the same
``TableJob`` as ``TableJob.build`` with the same keywords; opening a job file fills the form
(never reading a path outside DATA_DIR); hierarchy uploads; a failed run shows as failed with
its exit code; the result page shows the guarantee and the risk headline."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.ui.test_app import TestClient, login, make_app, wait

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

from anonymatch.app.jobfile import parse_job  # noqa: E402
from anonymatch.app.tablejob import job_file_keywords  # noqa: E402
from anonymatch.cli import main  # noqa: E402
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes  # noqa: E402
from anonymatch.tables.job import TableJob  # noqa: E402
from anonymatch.ui.app import AppState  # noqa: E402

EDU = ["low", "mid", "high", "top"]


def people(n: int = 60, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.to_datetime("2020-01-01") + pd.to_timedelta(rng.integers(0, 700, n), unit="D")
    zips = rng.integers(1000, 1010, n).astype(str)
    zips[:3] = "-9"  # a survey code meaning missing, in this column only
    return pd.DataFrame({
        "name": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 80, n),
        "sex": rng.choice(["F", "M"], n),
        "edu": rng.choice(EDU, n),
        "visit": days.strftime("%Y-%m-%d"),
        "zip": zips,
        "dis": rng.choice(["flu", "cold", "none", "asthma"], n),
    })  # fmt: skip


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


@pytest.fixture()
def app(tmp_path: Path) -> Any:
    client, state = make_app(tmp_path / "private")
    yield client, state
    state.stop_all()


def start(client: TestClient, csrf: str, frame: pd.DataFrame, name: str = "people.csv") -> None:
    page = client.post("/upload", data={"header": "on", "sep": "comma", "csrf": csrf},
                       files={"file": (name, csv_bytes(frame))})  # fmt: skip
    assert page.url.path == "/dataset", page.text


def error_of(page: Any) -> str:
    found = re.search(r'<p class="error" id="error">([^<]*)</p>', page.text)
    assert found, page.text[:2000]
    return html.unescape(found.group(1))


def session_of(state: AppState) -> Any:
    (session,) = state.sessions.values()
    return session


def same_job(a: TableJob, b: TableJob) -> None:
    """Field by field (the method by name: the registry builds new builder objects)."""
    for f in dataclasses.fields(TableJob):
        if f.name == "keywords":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "method":
            x, y = x.name, y.name
        assert x == y, (f.name, x, y)


FORM = {
    "role:name": "identifier",
    "role:age": "qi", "type:age": "numeric", "weight:age": "2",
    "role:sex": "qi", "type:sex": "categorical",
    "role:edu": "qi", "type:edu": "ordinal", "order:edu": "low|mid|high|top",
    "role:visit": "qi", "type:visit": "date", "granularity:visit": "month",
    "role:zip": "other", "na:zip": "-9",
    "role:dis": "sensitive", "type:dis": "categorical",
    "k": "3", "l": "2", "diversity": "distinct", "t": "0.95",
    "suppression_limit": "0.05", "method": "greedy", "partition_size": "40",
    "na_values": "NA,?", "drop_missing": "on",
}  # fmt: skip


def test_form_is_a_job_file(app: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every field lands in the job the app wrote; the CLI's TableJob from that job equals
    TableJob.build with the same keywords; the run is `anonymize --config` with only output
    paths added."""
    client, state = app
    csrf = login(client)
    frame = people()
    start(client, csrf, frame)
    page = client.post("/run", data={**FORM, "csrf": csrf})
    assert page.url.path in ("/job", "/result"), error_of(page)
    status = wait(client, 240)
    assert status["state"] == "done", status
    session = session_of(state)
    written = (session.directory / "job.toml").read_text()
    expected = parse_job({
        "input": {"path": session.dataset.path.name, "format": "csv", "sep": ",",
                  "na": ["NA", "?"], "drop_missing": True},
        "columns": {
            "name": {"role": "identifier"},
            "age": {"role": "qi", "type": "numeric", "weight": 2.0},
            "sex": {"role": "qi", "type": "categorical"},
            "edu": {"role": "qi", "type": "ordinal", "order": EDU},
            "visit": {"role": "qi", "type": "date", "granularity": "month"},
            "zip": {"role": "other", "na": ["-9"]},
            "dis": {"role": "sensitive", "type": "categorical"},
        },
        "model": {"k": 3, "l": 2, "t": 0.95, "suppression_limit": 0.05},
        "method": {"name": "greedy", "partition_size": 40},
        "output": {"path": "run/release.csv", "report": "run/manifest.json"},
    })  # fmt: skip
    assert parse_job(tomllib.loads(written)) == expected
    argv = session.run.argv
    assert argv[:3] == ["anonymize", "--config", "job.toml"]
    flags = [a for a in argv[3:] if a.startswith("-")]
    assert flags == ["-o", "--report", "--report-html", "--force", "--"], argv
    # the CLI's TableJob, from that file, equals TableJob.build with the same keywords
    (tmp_path / "people.csv").write_bytes(csv_bytes(frame))
    (tmp_path / "run").mkdir()
    job_file = tmp_path / "job.toml"
    job_file.write_text(written.replace(session.dataset.path.name, "people.csv"))
    built: list[TableJob] = []
    original_build = TableJob.build.__func__  # type: ignore[attr-defined]

    def capture(cls: type[TableJob], values: Mapping[str, Any]) -> TableJob:
        job = original_build(cls, values)
        built.append(job)
        return job

    monkey = pytest.MonkeyPatch()
    monkey.setattr(TableJob, "build", classmethod(capture))
    try:
        code = main(["anonymize", "--config", str(job_file), "-q", "--force"])
    finally:
        monkey.undo()
    assert code == 0, capsys.readouterr().err
    hand = dict(
        qi=["age", "sex", "edu", "visit"], numeric=["age"], sensitive=["dis"],
        identifiers=["name"], weights={"age": 2.0}, ordinal={"edu": EDU},
        dates={"visit": "month"}, k=3, l=2, t=0.95, suppression_limit=0.05, method="greedy",
        partition_size=40, na_values=MissingCodes(("NA", "?"), {"zip": ("-9",)}),
        drop_missing=True,
    )  # fmt: skip
    same_job(built[0], TableJob.build(hand))  # the command line's job
    same_job(TableJob.build(job_file_keywords(expected)), TableJob.build(hand))  # the app's
    manifest = json.loads(client.get("/download/manifest").text)
    assert manifest["parameters"]["ordinal"] == {"edu": EDU}
    assert manifest["parameters"]["suppression_limit"] == 0.05
    assert manifest["plan"] == {"path": "memory", "partition_size": 40}
    assert session.directory.name not in json.dumps(manifest["input"])  # relative paths
    # the downloaded job names the table as uploaded and runs beside it
    downloaded = parse_job(tomllib.loads(client.get("/download/job").text))
    assert downloaded.input.path == "people.csv" and downloaded.columns == expected.columns
    assert downloaded.input.na == ["NA", "?"] and tuple(downloaded.input.na) != DEFAULT_NA_VALUES


def test_form_errors_are_one_located_line(app: Any) -> None:
    client, state = app
    csrf = login(client)
    start(client, csrf, people())
    cases = {
        ("type:edu", "ordinal", "order:edu", ""): "the form: columns.edu.order: ",
        ("type:age", "interval", "k", "3"): "the form: columns.age.type: expected one of",
        ("method", "ring", "l", "2"): "method 'ring' does not support `l`/`t`",
        ("method", "bmatching", "k", "3"): "date and hierarchy QIs are not supported by the "
        "method 'bmatching'",
        ("method", "mondrian", "suppression_limit", "1.5"): "the form: model.suppression_limit: "
        "input should be less than 1",
        ("partition_size", "4", "k", "3"): "`partition_size` must be at least 2k = 6, got 4",
    }
    for (key, value, key2, value2), says in cases.items():
        page = client.post("/run", data={**FORM, key: value, key2: value2, "csrf": csrf})
        assert page.url.path == "/dataset"
        line = error_of(page)
        assert says in line and "\n" not in line, (key, value, line)
    assert session_of(state).run is None


def test_failed_run_is_failed_with_its_exit_code(app: Any) -> None:
    client, state = app
    csrf = login(client)
    start(client, csrf, people(10))
    form = {**FORM, "k": "50", "suppression_limit": "", "partition_size": "", "l": "", "t": ""}
    client.post("/run", data={**form, "csrf": csrf})
    status = wait(client)
    assert status["state"] == "failed" and status["stage"] == "failed"
    assert status["exit_code"] == 3
    assert status["error"] == "error: infeasible: k = 50 is larger than the number of rows (10)"
    page = client.get("/job").text
    assert "The run failed" in page and "(exit code 3)" in page and "starting" not in page
    assert client.get("/result").url.path == "/job"  # no result page for a failed run


def test_result_page_guarantee_and_risk(app: Any, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    client, state = app
    csrf = login(client)
    frame = people(50, seed=9)
    start(client, csrf, frame)
    form = {**FORM, "suppression_limit": "", "t": "", "partition_size": "", "drop_missing": "",
            "na_values": "", "role:visit": "other"}  # fmt: skip
    client.post("/run", data={**form, "csrf": csrf})
    assert wait(client, 240)["state"] == "done"
    page = client.get("/result").text
    assert "k-anonymity, k = 3" in page
    assert "distinct ℓ-diversity, ℓ = 2" in page
    assert re.search(r"memory path, partitions of \d+ records", page)
    assert "PASS" in page
    # the headline: the same figures as `anonymatch risk --json` on the release
    (tmp_path / "people.csv").write_bytes(csv_bytes(frame))
    (tmp_path / "release.csv").write_bytes(client.get("/download/release").content)
    capsys.readouterr()
    code = main(["risk", str(tmp_path / "people.csv"), str(tmp_path / "release.csv"),
                 "--qi", "age,sex,edu", "--numeric", "age", "--ordinal", "edu=low|mid|high|top",
                 "--sensitive", "dis", "--na", "zip=-9", "--json"])  # fmt: skip
    assert code == 0
    figures = json.loads(capsys.readouterr().out)
    prosecutor = figures["release"]["prosecutor"]
    headline = re.search(r'id="risk-headline">(.*?)</p>', page, re.S)
    assert headline, page
    text = re.sub(r"<[^>]+>", "", headline.group(1))
    assert f"max {prosecutor['max']:.4f}, mean {prosecutor['mean']:.4f}" in text, text
    fewest = figures["release"]["candidates"]["min"]
    assert f"(1 in {fewest})" in text and "% of the records" in text


# -- opening a job file ---------------------------------------------------------------------

JOB = """schema = "anonymatch-job/1"
[input]
path = "PATH"
format = "csv"
sep = ","
[columns]
name = { role = "identifier" }
age = { role = "qi", type = "numeric" }
edu = { role = "qi", type = "ordinal", order = ["low", "mid", "high", "top"] }
zip = { role = "other", na = ["-9"] }
dis = { role = "sensitive" }
[model]
k = 4
l = 2
suppression_limit = 0.1
[method]
name = "sortgreedy"
time_limit = 30.0
"""


def open_job(client: TestClient, csrf: str, text: str, name: str = "job.toml") -> Any:
    return client.post("/open", data={"csrf": csrf}, files={"job": (name, text.encode())})


def test_open_a_job_file(tmp_path: Path) -> None:
    shared = tmp_path / "data"
    shared.mkdir()
    frame = people()
    (shared / "table.csv").write_bytes(csv_bytes(frame))
    secret = tmp_path / "secret.csv"
    secret.write_bytes(csv_bytes(frame))
    client, state = make_app(tmp_path / "private", data_dir=shared)
    try:
        csrf = login(client)
        # outside DATA_DIR and no table yet: refused, nothing read
        for path in (str(secret), "../secret.csv", "/etc/passwd", "${HOME}/x.csv"):
            page = open_job(client, csrf, JOB.replace("PATH", path))
            assert page.url.path == "/" and "is not a table of the data directory" in error_of(page)
            assert session_of(state).dataset is None
        # inside: that table is read, the job fills the form
        page = open_job(client, csrf, JOB.replace("PATH", "table.csv"))
        assert page.url.path == "/dataset", page.text[:3000]
        session = session_of(state)
        assert session.dataset.name == "table.csv" and session.dataset.path == shared / "table.csv"
        assert 'value="low|mid|high|top"' in page.text
        assert re.search(r'name="type:edu".*?<option value="ordinal" selected', page.text, re.S)
        assert re.search(r'value="sortgreedy"[^>]*checked', page.text)
        assert 'name="suppression_limit" step="any" min="0" max="0.99" value="0.1"' in page.text
        assert '<select name="structure"><option value="classes" selected>' in page.text
        assert "method.time_limit = 30.0" in page.text  # kept, though the form has no field
        assert session.settings.job.columns["sex"].role == "other"  # not in the job
        # a table is open: a job whose input is outside is applied to it, the path unread
        page = open_job(client, csrf, JOB.replace("PATH", str(secret)).replace("k = 4", "k = 5"))
        assert page.url.path == "/dataset" and "is applied to table.csv" in page.text
        assert session_of(state).dataset.path == shared / "table.csv"
        assert session_of(state).settings.job.model.k == 5
        # invalid: one located line, the settings unchanged
        for text, says in (
            (JOB.replace('type = "numeric"', 'type = "interval"'),
             "job.toml: columns.age.type: expected one of numeric, categorical, ordinal"),
            (JOB.replace("k = 4", "kk = 4"), "job.toml: model.kk: unknown key; did you mean 'k'?"),
            ("not = [toml", "job.toml: not valid TOML"),
            (JOB.replace("dis = {", "disease = {"), "job.toml: columns.disease: unknown column"),
        ):  # fmt: skip
            page = open_job(client, csrf, text.replace("PATH", "table.csv"))
            line = error_of(page)
            assert line.startswith("error: " + says) and "\n" not in line, line
            assert session_of(state).settings.job.model.k == 5
        # the opened job runs (time_limit carried into the run's job; a limit bounds the
        # rounds of a run without sensitive models, so dis is kept as "other" here)
        run = {"csrf": csrf, "method": "sortgreedy", "k": "4",
               "suppression_limit": "0.1", "role:name": "identifier", "role:age": "qi",
               "type:age": "numeric", "role:edu": "qi", "type:edu": "ordinal",
               "order:edu": "low|mid|high|top", "role:dis": "other",
               "na:zip": "-9", "structure": "blocks"}  # fmt: skip
        page = client.post("/run", data=run)
        assert page.url.path in ("/job", "/result"), error_of(page)
        assert wait(client, 240)["state"] == "done"
        written = tomllib.loads((session_of(state).directory / "job.toml").read_text())
        assert written["method"]["time_limit"] == 30.0
        assert written["method"]["structure"] == "blocks"  # the form's select, by name
    finally:
        state.stop_all()


# -- hierarchies ------------------------------------------------------------------------------

HIERARCHY = b"flu;respiratory;*\ncold;respiratory;*\nasthma;respiratory;*\nnone;healthy;*\n"
SEX = b"F;*\nM;*\n"
REGION = b"".join(b"%d;%s;*\n" % (z, b"low" if z < 1005 else b"high") for z in range(1000, 1010))


def test_hierarchy_upload(app: Any) -> None:
    client, state = app
    csrf = login(client)
    frame = people(60, seed=2)
    frame["zip"] = frame["zip"].replace("-9", "1000")
    start(client, csrf, frame)
    form = {"csrf": csrf, "role:name": "identifier", "role:age": "qi", "type:age": "numeric",
            "role:zip": "qi", "type:zip": "categorical", "role:sex": "qi",
            "type:sex": "categorical", "k": "4", "method": "greedy", "role:dis": "sensitive",
            "hierarchy_cells": "node"}  # fmt: skip
    bad = b"1000;low;*\n1001;low\n"
    page = client.post("/run", data=form, files={"hierarchy:zip": ("../zips bad.csv", bad)})
    line = error_of(page)
    assert page.url.path == "/dataset" and line.startswith("error: hierarchy zips bad.csv:")
    assert "hierarchy-" not in line and session_of(state).run is None
    assert not list(session_of(state).directory.glob("hierarchy-*"))  # nothing kept
    page = client.post("/run", data=form, files={"hierarchy:zip": ("zips.csv", REGION)})
    assert page.url.path in ("/job", "/result"), error_of(page)
    assert wait(client, 240)["state"] == "done"
    release = pd.read_csv(pd.io.common.StringIO(client.get("/download/release").text), dtype=str)
    assert release["zip"].str.startswith("~").any(), release["zip"].head()
    job = tomllib.loads(client.get("/download/job").text)
    assert job["columns"]["zip"]["hierarchy"] == "zips.csv"
    (stored,) = session_of(state).directory.glob("hierarchy-*.csv")
    # the hierarchy is kept for the next run without uploading it again; removed when asked
    assert "hierarchy zips.csv" in client.get("/dataset").text
    page = client.post("/run", data={**form, "hierarchy_clear:zip": "on", "k": "2"})
    assert wait(client, 240)["state"] == "done"
    assert "hierarchy" not in tomllib.loads(client.get("/download/job").text)["columns"]["zip"]
    assert not stored.exists()


def test_result_page_states_the_rings_insider_weakness() -> None:
    from anonymatch.tables.job import RINGS_WEAKNESS
    from anonymatch.ui.data import guarantee

    rings = {"guarantee": {"model": "k-anonymity", "k": 3, "construction": "rings",
                           "insider_weakness": RINGS_WEAKNESS}}  # fmt: skip
    assert "learns every ring member's value" in guarantee(rings)["insider_warning"]
    classes = {"guarantee": {"model": "k-anonymity", "k": 3, "construction": "classes"}}
    assert guarantee(classes)["insider_warning"] is None
