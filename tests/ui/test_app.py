"""The web app without a browser (Starlette's test client): the token, private uploads, one
clear error line, a run of the CLI from upload to downloads, cleanup; the guards (Host, Origin,
CSRF token, per-instance cookies, security headers), the upload and table limits, hostile file
names, and the server's exits (signals, a killed instance swept at the next start)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

pytest.importorskip("starlette", reason="the ui extra (starlette) is not installed")
pytest.importorskip("httpx", reason="starlette's test client needs httpx")

with warnings.catch_warnings():  # starlette 1.x prefers httpx2 for its test client
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from anonymatch.cli import main  # noqa: E402
from anonymatch.ui.app import FORBIDDEN, AppState, create_app  # noqa: E402
from anonymatch.ui.data import Limits, human_size  # noqa: E402
from tests.factories import random_frame  # noqa: E402

TOKEN = "test-token-123"
ORIGIN = "http://testserver"  # the test client's own origin, sent as a browser would
SRC = Path(__file__).parents[2] / "src"
CSV = b"age,sex,zip\n31,F,1000\n42,M,1001\n35,F,1002\n"


def make_app(private: Path, **kwargs: object) -> tuple[TestClient, AppState]:
    private.mkdir(mode=0o700, exist_ok=True)
    state = AppState(TOKEN, private, origins=(ORIGIN,), **kwargs)  # type: ignore[arg-type]
    client = TestClient(create_app(state), follow_redirects=True, headers={"origin": ORIGIN})
    return client, state


@pytest.fixture()
def app(tmp_path: Path) -> tuple[TestClient, AppState]:
    client, state = make_app(tmp_path / "private")
    yield client, state
    state.stop_all()


def login(client: TestClient) -> str:
    """Open the app with the token; returns the session's CSRF token (from the page's form)."""
    page = client.get(f"/?token={TOKEN}")
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def upload(client: TestClient, csrf: str, name: str = "people.csv", body: bytes = CSV,
           **headers: str) -> object:  # fmt: skip
    return client.post("/upload", data={"header": "on", "sep": "auto", "csrf": csrf},
                       files={"file": (name, body)}, headers=headers)  # fmt: skip


def run_form(csrf: str, k: str = "2") -> dict[str, str]:
    return {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "role:sex": "qi",
            "type:sex": "categorical", "role:zip": "other", "k": k, "method": "greedy"}  # fmt: skip


def wait(client: TestClient, seconds: float = 120) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while (status := client.get("/status").json())["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return status


def files(state: AppState) -> list[Path]:
    return sorted(p for p in state.directory.rglob("*") if p.is_file())


def test_token_required(app: tuple[TestClient, AppState]) -> None:
    client, state = app
    for path in ("/", "/dataset", "/status", "/download/release", "/?token=wrong"):
        response = client.get(path)
        assert response.status_code == 403 and response.text == FORBIDDEN
    response = client.post("/upload", files={"file": ("a.csv", b"x,y\n1,2\n")})
    assert response.status_code == 403
    response = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303 and "token" not in response.headers["location"]
    cookie = response.headers.get_list("set-cookie")
    assert any(f"anonymatch_{state.instance}_token=" in c and "HttpOnly" in c
               and "SameSite=strict" in c and "Path=/" in c for c in cookie)  # fmt: skip
    assert client.get("/").status_code == 200  # the cookie is enough from now on


def test_bad_file_is_one_clear_line(app: tuple[TestClient, AppState]) -> None:
    client, _ = app
    csrf = login(client)
    for name, body, says in (
        ("empty.csv", b"", "is empty"),
        ("broken.parquet", b"PAR1 not really", "error: "),
        ("one.csv", b"just one column\nvalue\n", "1 column"),
    ):
        page = upload(client, csrf, name, body)
        assert page.status_code == 200 and page.url.path == "/"
        error = page.text.split('<p class="error" id="error">')[1].split("</p>")[0]
        assert says in error and "Traceback" not in page.text and "\n" not in error.strip()


def test_upload_run_download(app: tuple[TestClient, AppState], tmp_path: Path) -> None:
    client, state = app
    csrf = login(client)
    frame = random_frame(40, 7)
    body = frame.to_csv(index=False).encode()
    page = upload(client, csrf, "people.csv", body)
    assert page.url.path == "/dataset"
    assert f"{human_size(len(body))} · 40 rows · 5 columns" in page.text
    uploaded = next(state.directory.glob("session-*/upload-*.csv"))
    assert stat.S_IMODE(uploaded.stat().st_mode) == 0o600
    assert stat.S_IMODE(uploaded.parent.stat().st_mode) == 0o700
    form = {f"role:{c}": "other" for c in frame.columns}
    form.update({f"type:{c}": "categorical" for c in frame.columns})
    form.update({"role:n0": "qi", "type:n0": "numeric", "role:c0": "qi", "role:s": "sensitive"})
    form.update({"k": "3", "method": "greedy", "l": "", "t": "", "csrf": csrf})
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
    assert '<section id="honest">' in page.text and 'id="utility-headline"' in page.text
    assert "exact cells" in page.text  # issue 25: what the release keeps, with its figures
    assert 'id="analyst-hint"' in page.text and "anonymatch draw" in page.text  # issue 39
    assert "applied by default" in page.text  # issue 36: the form's sensitive column, ℓ = 2
    release = client.get("/download/release")
    assert release.status_code == 200 and "attachment" in release.headers["content-disposition"]
    assert 'filename="people_release.csv"' in release.headers["content-disposition"]
    assert release.text.splitlines()[0].split(",") == list(frame.columns)
    manifest = client.get("/download/manifest").json()
    default = {"column": "s", "diversity": "distinct", "l": 2, "default": True}
    assert manifest["guarantee"] == {
        "model": "k-anonymity", "k": 3, "sensitive": [default], "construction": "classes"
    }  # fmt: skip
    report = client.get("/report")
    assert report.status_code == 200 and '<section id="risk">' in report.text
    assert client.get("/download/nothing").status_code == 404
    # issue 39: the result page offers five plain draws of the release, with their manifest
    assert 'id="download-draws"' in page.text
    draws = client.get("/download/draws")
    assert draws.status_code == 200 and 'filename="people_draws.zip"' in (
        draws.headers["content-disposition"])  # fmt: skip
    with zipfile.ZipFile(io.BytesIO(draws.content)) as archive:
        names = sorted(archive.namelist())
        assert names == [*(f"draw_{i}.csv" for i in range(1, 6)), "draws.json"]
        meta = json.loads(archive.read("draws.json"))
        drawn = pd.read_csv(io.BytesIO(archive.read("draw_1.csv")))
    assert meta["weights"] == "anchored" and meta["degree"] == 3 and meta["guarantee"]["k"] == 3
    assert meta["randomness"] == {"source": "os-entropy"}  # fresh randomness, no seed
    assert list(drawn.columns) == list(frame.columns) and len(drawn) == len(frame)
    assert pd.api.types.is_numeric_dtype(drawn["n0"])
    assert client.get("/download/draws").content == draws.content  # made once per run
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
    csrf = login(client)
    body = random_frame(10, 1).to_csv(index=False).encode()
    client.post("/upload", data={"header": "on", "sep": "comma", "csrf": csrf},
                files={"file": ("small.csv", body)})  # fmt: skip
    form = {"role:n0": "qi", "type:n0": "numeric", "k": "50", "method": "greedy", "csrf": csrf}
    client.post("/run", data=form)
    deadline = time.monotonic() + 60
    while (status := client.get("/status").json())["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert status["state"] == "failed"
    assert status["error"] == "error: infeasible: k = 50 is larger than the number of rows (10)"


# -- the guards ------------------------------------------------------------------------------


def test_refused_requests_change_nothing(app: tuple[TestClient, AppState]) -> None:
    """A foreign Origin (another local port), Origin null, no Origin nor Referer, a foreign
    Referer, a missing, wrong or non-ASCII CSRF token, a wrong Host: 403, and the upload, the
    settings and the files stay as they were."""
    client, state = app
    csrf = login(client)
    assert upload(client, csrf).url.path == "/dataset"
    (session,) = state.sessions.values()
    before = files(state)
    other = b"name,age,sex\nx,1,F\ny,2,M\n"
    attempts = {
        "other port": {"origin": "http://127.0.0.1:8123"},
        "other host": {"origin": "http://evil.example"},
        "origin null": {"origin": "null"},
        "foreign referer": {"origin": "", "referer": "http://127.0.0.1:8123/x"},
        "no origin": {"origin": ""},
        "wrong host": {"host": "evil.example"},
        "wrong port": {"host": "testserver:8123"},
    }
    for what, headers in attempts.items():
        headers = {k: v for k, v in headers.items() if v}
        if "origin" not in headers:  # drop the client's default Origin
            client.headers.pop("origin", None)
        try:
            for response in (
                upload(client, csrf, "other.csv", other, **headers),
                client.post("/run", data=run_form(csrf, k="1"), headers=headers),
                client.post("/read", data={"csrf": csrf, "sep": "tab"}, headers=headers),
            ):
                assert response.status_code == 403, (what, response.text)
        finally:
            client.headers["origin"] = ORIGIN
    for token in (None, "", "wrong", "é", csrf[:-1]):
        data = run_form(csrf, k="1")
        data.pop("csrf") if token is None else data.update(csrf=token)
        assert client.post("/run", data=data).status_code == 403
        form = {"header": "on", "sep": "auto"} | ({} if token is None else {"csrf": token})
        response = client.post("/upload", data=form, files={"file": ("other.csv", other)})
        assert response.status_code == 403
    routes = [r.path for r in client.app.routes if "POST" in getattr(r, "methods", ())]
    assert routes == ["/upload", "/pick", "/database", "/read", "/run", "/open"]
    for path in routes:  # every POST needs the token
        assert client.post(path, data={"name": "x"}).status_code == 403, path
    assert client.get("/", headers={"host": "evil.example"}).status_code == 403  # rebinding
    assert session.dataset is not None and session.dataset.name == "people.csv"
    assert session.dataset.columns == ["age", "sex", "zip"] and session.dataset.sep == "auto"
    assert session.settings is None and session.run is None
    assert files(state) == before
    # the app's own origin, by Origin or (without it) by Referer, is accepted
    client.headers.pop("origin")
    page = client.post("/read", data={"csrf": csrf, "sep": "comma", "header": "on"},
                       headers={"referer": f"{ORIGIN}/dataset"})  # fmt: skip
    assert page.status_code == 200 and session.dataset.sep == "comma"


def test_security_headers(app: tuple[TestClient, AppState]) -> None:
    client, _ = app
    for response in (client.get("/"), client.get("/?token=no")):
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["cache-control"] == "no-store"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers["content-security-policy"].startswith("default-src 'self'")
        assert response.headers["referrer-policy"] in ("same-origin", "no-referrer")
    login(client)
    for path in ("/", "/status", "/static/app.css", "/static/job.js", "/nowhere"):
        response = client.get(path)
        assert response.headers["cache-control"] == "no-store", path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
    page = client.get("/").text
    assert "<script>" not in page and "<style>" not in page and "style=" not in page  # CSP


def test_two_instances_in_one_browser(tmp_path: Path) -> None:
    """Cookies are not scoped by port: each instance names its own, so logging into a second
    one keeps the first logged in, and neither's cookies open the other."""
    first, one = make_app(tmp_path / "one")
    second, two = make_app(tmp_path / "two")
    second.cookies = first.cookies  # one browser, one cookie jar for the host
    login(first)
    assert first.get("/").status_code == 200
    assert second.get("/").status_code == 403  # the first instance's cookie opens nothing here
    login(second)
    assert first.get("/").status_code == 200 and second.get("/").status_code == 200
    assert one.token_cookie != two.token_cookie and one.session_cookie != two.session_cookie
    one.stop_all()
    two.stop_all()


def test_non_ascii_token_and_names_are_no_500(app: tuple[TestClient, AppState]) -> None:
    client, state = app
    assert client.get("/?token=é€").status_code == 403
    cookie = "; ".join(f"anonymatch_{state.instance}_{n}=é" for n in ("token", "session"))
    assert client.get("/", headers={"cookie": cookie.encode()}).status_code == 403
    csrf = login(client)
    page = upload(client, csrf, "données «été».csv")
    assert page.url.path == "/dataset" and "données «été».csv" in page.text
    assert client.post("/run", data={**run_form(csrf), "csrf": "jeton-é"}).status_code == 403


# -- limits -----------------------------------------------------------------------------------


def test_upload_limit(tmp_path: Path) -> None:
    client, state = make_app(tmp_path / "private", limits=Limits(max_upload_bytes=4096))
    csrf = login(client)
    assert upload(client, csrf, "small.csv").url.path == "/dataset"
    before = files(state)
    big = CSV + b"".join(b"%d,F,%d\n" % (i, i) for i in range(5000))
    page = upload(client, csrf, "big.csv", big)
    assert page.status_code == 413 and "larger than the limit of 4.0 KiB" in page.text
    assert "--max-upload-mb" in page.text and page.headers["x-frame-options"] == "DENY"
    # without Content-Length (chunked): refused once past the limit, while being read
    boundary = "b0undary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"big.csv\"\r\nContent-Type: text/csv\r\n\r\n").encode() + big + (
            f"\r\n--{boundary}--\r\n").encode()  # fmt: skip
    chunks = (body[i : i + 1024] for i in range(0, len(body), 1024))
    kind = {"content-type": f"multipart/form-data; boundary={boundary}"}
    page = client.post("/upload", content=chunks, headers=kind)
    assert page.status_code == 413
    assert files(state) == before  # nothing of the refused uploads kept
    (session,) = state.sessions.values()
    assert session.dataset is not None and session.dataset.name == "small.csv"
    state.stop_all()


def test_table_budgets(tmp_path: Path) -> None:
    """Past the cell budget, or a small Parquet file that expands past the byte budget (read
    from its footer, nothing decompressed): one line, nothing kept."""
    import pandas as pd

    limits = Limits(max_cells=1000, max_table_bytes=1 << 20)
    client, state = make_app(tmp_path / "private", limits=limits)
    csrf = login(client)
    many = CSV + b"".join(b"%d,F,%d\n" % (i, i) for i in range(400))  # 403 rows x 3 columns
    page = upload(client, csrf, "cells.csv", many)
    assert page.url.path == "/" and "budget of 1,000 cells" in page.text
    bomb = tmp_path / "bomb.parquet"
    values = ["x" * 100_000 + str(i) for i in range(100)]  # 10 MB, compressed to a few KB
    pd.DataFrame({"a": values, "b": range(100)}).to_parquet(bomb, compression="zstd")
    assert bomb.stat().st_size < 50_000
    page = upload(client, csrf, "bomb.parquet", bomb.read_bytes())
    error = page.text.split('id="error">')[-1].split("</p>")[0]
    assert page.url.path == "/" and "once decompressed" in error, error
    assert files(state) == []
    state.stop_all()


# -- file names --------------------------------------------------------------------------------


def test_dangerous_names_run(app: tuple[TestClient, AppState]) -> None:
    """An upload named like an option, or like the run's directory, runs as any other: stored
    under a generated name, passed after `--`; the name shown and downloaded is the original."""
    client, state = app
    csrf = login(client)
    for name in ("--help", "-q.csv", "run"):
        assert upload(client, csrf, name).url.path == "/dataset", name
        (stored,) = (p for p in files(state) if p.name.startswith("upload-"))
        assert stored.parent.parent == state.directory and not stored.name.startswith("-")
        client.post("/run", data=run_form(csrf))
        status = wait(client)
        assert status["state"] == "done", (name, status)
        release = client.get("/download/release")
        assert release.status_code == 200 and release.text.startswith("age,sex,zip"), name
        assert name in client.get("/result").text


def test_upload_during_a_run_relabels_nothing(app: tuple[TestClient, AppState]) -> None:
    client, state = app
    csrf = login(client)
    upload(client, csrf, "first.csv")
    assert client.post("/run", data=run_form(csrf)).url.path in ("/job", "/result")
    other = b"name,age,sex\nx,1,F\ny,2,M\n"
    assert upload(client, csrf, "second.csv", other).url.path == "/dataset"
    assert wait(client)["state"] == "done"
    assert "first.csv" in client.get("/result").text
    release = client.get("/download/release")
    assert 'filename="first_release.csv"' in release.headers["content-disposition"]
    assert release.text.startswith("age,sex,zip")
    assert 'path = "first.csv"' in client.get("/download/job").text
    (session,) = state.sessions.values()
    assert session.dataset is not None and session.dataset.name == "second.csv"


def test_symlinks_do_not_leave_the_data_dir(tmp_path: Path) -> None:
    outside = tmp_path / "secret.csv"
    outside.write_bytes(CSV)
    shared = tmp_path / "data"
    shared.mkdir()
    (shared / "table.csv").write_bytes(CSV)
    (shared / "escape.csv").symlink_to(outside)
    (shared / "alias.csv").symlink_to(shared / "table.csv")
    client, state = make_app(tmp_path / "private", data_dir=shared)
    csrf = login(client)
    assert [name for name, _ in state.pickable()] == ["alias.csv", "table.csv"]
    page = client.post("/pick", data={"csrf": csrf, "name": "escape.csv", "header": "on"})
    assert page.url.path == "/" and "no such file to pick" in page.text
    page = client.post("/pick", data={"csrf": csrf, "name": "table.csv", "header": "on"})
    assert page.url.path == "/dataset"
    state.stop_all()


NAMES = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    st.sampled_from(
        [
            "--help",
            "-q.csv",
            "run",
            "../../x.csv",
            "/etc/passwd",
            "..",
            ".",
            "a/../../b.parquet",
            "-",
            "--",
            "C:\\\\x\\\\y.csv",
            "é.CSV",
        ]
    ),  # fmt: skip
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
def test_any_upload_name_is_stored_safely(tmp_path_factory: pytest.TempPathFactory,
                                          name: str) -> None:  # fmt: skip
    from anonymatch.ui.data import TABLE_SUFFIXES, shown_name, stored_name

    stored = stored_name(name)
    assert re.fullmatch(r"upload-[0-9a-f]{16}(\.[a-z]+)?", stored), stored
    assert stored.endswith(TABLE_SUFFIXES) or "." not in stored
    assert "/" not in shown_name(name) and shown_name(name).isprintable()
    client, state = make_app(tmp_path_factory.mktemp("names") / "private")
    csrf = login(client)
    upload(client, csrf, name or "x")
    for path in files(state):
        assert path.resolve().is_relative_to(state.directory.resolve())
        assert not path.name.startswith("-") and path.name != "run"
    state.stop_all()


# -- the server's exits ------------------------------------------------------------------------


def start_server(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    process = subprocess.Popen(
        [sys.executable, "-c", "from anonymatch.cli import entry; entry()", "ui", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
        text=True)  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"open (http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
    assert found, (line, process.stderr.read() if process.poll() is not None else "")
    return process, found.group(0).removeprefix("open ")


def session_of(url: str) -> tuple[object, str]:
    import httpx

    base = url.split("/?")[0]
    client = httpx.Client(base_url=base, headers={"origin": base}, follow_redirects=True)
    page = client.get(url)
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return client, found.group(1)


def test_killed_instance_swept_and_exit_codes(tmp_path: Path) -> None:
    """After a SIGKILL the uploaded table stays in the dead instance's directory; the next
    start sweeps it. SIGTERM exits 143, Ctrl-C 130 (pressed many times during a run too), and
    nothing is left."""
    killed, url = start_server(tmp_path)
    client, csrf = session_of(url)
    upload(client, csrf)  # type: ignore[arg-type]
    killed.kill()
    killed.wait(10)
    (left,) = tmp_path.iterdir()
    assert left.name.startswith("anonymatch-ui-") and list(left.rglob("upload-*.csv"))
    second, url = start_server(tmp_path)
    assert not left.exists()  # swept at start
    second.send_signal(signal.SIGTERM)
    assert second.wait(20) == 143
    assert list(tmp_path.iterdir()) == []
    third, url = start_server(tmp_path)
    client, csrf = session_of(url)
    upload(client, csrf)  # type: ignore[arg-type]
    client.post("/run", data=run_form(csrf))  # type: ignore[attr-defined]
    for _ in range(6):  # Ctrl-C, again and again, while the run and the cleanup go on
        third.send_signal(signal.SIGINT)
        time.sleep(0.15)
    assert third.wait(30) == 130
    assert list(tmp_path.iterdir()) == []
