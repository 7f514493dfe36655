"""The web app without a browser (Starlette's test client): the token, private uploads, one
clear error line, a run of the CLI from upload to downloads, cleanup."""

from __future__ import annotations

import json
import stat
import time
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

pytest.importorskip("starlette", reason="the ui extra (starlette) is not installed")
pytest.importorskip("httpx", reason="starlette's test client needs httpx")

with warnings.catch_warnings():  # starlette 1.x prefers httpx2 for its test client
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from anonymatch.cli import main  # noqa: E402
from anonymatch.ui.app import FORBIDDEN, AppState, create_app  # noqa: E402
from anonymatch.ui.data import human_size  # noqa: E402
from tests.factories import random_frame  # noqa: E402

TOKEN = "test-token-123"


@pytest.fixture()
def app(tmp_path: Path) -> tuple[TestClient, AppState]:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    state = AppState(TOKEN, private)
    client = TestClient(create_app(state), follow_redirects=True)
    yield client, state
    state.stop_all()


def test_token_required(app: tuple[TestClient, AppState]) -> None:
    client, _ = app
    for path in ("/", "/dataset", "/status", "/download/release", "/?token=wrong"):
        response = client.get(path)
        assert response.status_code == 403 and response.text == FORBIDDEN
    response = client.post("/upload", files={"file": ("a.csv", b"x,y\n1,2\n")})
    assert response.status_code == 403
    response = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303 and "token" not in response.headers["location"]
    cookie = response.headers.get_list("set-cookie")
    assert any("anonymatch_token" in c and "HttpOnly" in c and "SameSite=strict" in c
               for c in cookie)  # fmt: skip
    assert client.get("/").status_code == 200  # the cookie is enough from now on


def test_bad_file_is_one_clear_line(app: tuple[TestClient, AppState]) -> None:
    client, _ = app
    client.get(f"/?token={TOKEN}")
    for name, body, says in (
        ("empty.csv", b"", "is empty"),
        ("broken.parquet", b"PAR1 not really", "error: "),
        ("one.csv", b"just one column\nvalue\n", "1 column"),
    ):
        page = client.post("/upload", data={"header": "on", "sep": "auto"},
                           files={"file": (name, body)})  # fmt: skip
        assert page.status_code == 200 and page.url.path == "/"
        error = page.text.split('<p class="error" id="error">')[1].split("</p>")[0]
        assert says in error and "Traceback" not in page.text and "\n" not in error.strip()


def test_upload_run_download(app: tuple[TestClient, AppState], tmp_path: Path) -> None:
    client, state = app
    client.get(f"/?token={TOKEN}")
    frame = random_frame(40, 7)
    body = frame.to_csv(index=False).encode()
    page = client.post("/upload", data={"header": "on", "sep": "auto"},
                       files={"file": ("people.csv", body)})  # fmt: skip
    assert page.url.path == "/dataset"
    assert f"{human_size(len(body))} · 40 rows · 5 columns" in page.text
    uploaded = next(state.directory.glob("session-*/people.csv"))
    assert stat.S_IMODE(uploaded.stat().st_mode) == 0o600
    assert stat.S_IMODE(uploaded.parent.stat().st_mode) == 0o700
    form = {f"role:{c}": "other" for c in frame.columns}
    form.update({f"type:{c}": "categorical" for c in frame.columns})
    form.update({"role:n0": "qi", "type:n0": "numeric", "role:c0": "qi", "role:s": "sensitive"})
    form.update({"k": "3", "method": "greedy", "l": "", "t": ""})
    page = client.post("/run", data={**form, "k": "x"})
    assert page.url.path == "/dataset" and "error: k must be a number" in page.text
    page = client.post("/run", data=form)
    assert page.url.path in ("/job", "/result")
    deadline = time.monotonic() + 120
    while (status := client.get("/status").json())["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert status["state"] == "done", status
    page = client.get("/result")
    assert "verified: PASS" in page.text and str(state.directory) not in page.text
    release = client.get("/download/release")
    assert release.status_code == 200 and "attachment" in release.headers["content-disposition"]
    assert release.text.splitlines()[0].split(",") == list(frame.columns)
    manifest = client.get("/download/manifest").json()
    assert manifest["guarantee"] == {"model": "k-anonymity", "k": 3}
    report = client.get("/report")
    assert report.status_code == 200 and '<section id="risk">' in report.text
    assert client.get("/download/nothing").status_code == 404
    # the job file reproduces the run: beside the table, `anonymize --config` makes a release
    # with the same guarantee
    job = client.get("/download/job")
    assert "attachment" in job.headers["content-disposition"]
    (tmp_path / "people.csv").write_bytes(body)
    (tmp_path / "job.toml").write_text(job.text)
    code = main(["anonymize", "--config", str(tmp_path / "job.toml"), "-q", "--seed", "3"])
    assert code == 0
    again = json.loads((tmp_path / "manifest.json").read_text())
    assert again["guarantee"] == manifest["guarantee"] and again["method"] == "greedy"
    assert again["parameters"]["qi"] == manifest["parameters"]["qi"]
    state.stop_all()
    assert not state.directory.exists()


def test_failed_run_shows_the_cli_line(app: tuple[TestClient, AppState]) -> None:
    client, _ = app
    client.get(f"/?token={TOKEN}")
    body = random_frame(10, 1).to_csv(index=False).encode()
    client.post("/upload", data={"header": "on", "sep": "comma"},
                files={"file": ("small.csv", body)})  # fmt: skip
    form = {"role:n0": "qi", "type:n0": "numeric", "k": "50", "method": "greedy"}
    client.post("/run", data=form)
    deadline = time.monotonic() + 60
    while (status := client.get("/status").json())["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert status["state"] == "failed"
    assert status["error"] == "error: infeasible: k = 50 is larger than the number of rows (10)"
