"""The web app and the report in a real browser: Debian's chromium driven by Playwright.

The app is started as a user would (``anonymatch ui``, a child process); the tests go through
upload → roles → run → report → downloads on heart_statlog, show a bad file's one-line error,
are refused without the token, refuse a hostile page served from another local port (forms and
fetch() to /run and /upload change nothing), open the report with every network request
blocked and print it to PDF. They skip, saying why, when Playwright or chromium is missing
(CI installs chromium: .ci/run). Screenshots go to $ANONYMATCH_SCREENSHOTS when set (docs/img, shown
in docs/cli.md).
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install playwright)"
)
pytest.importorskip("starlette", reason="the ui extra (starlette, uvicorn) is not installed")
CHROMIUM = os.environ.get("ANONYMATCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)

DATA = Path(os.environ.get("ANONYMATCH_DATA", Path(__file__).parents[3] / "shared" / "datasets"))
HEART = DATA / "heart_statlog" / "heart.dat"
HEART_NAMES = (
    "age,sex,chest_pain,resting_bp,cholesterol,fasting_blood_sugar,resting_ecg,max_heart_rate,"
    "exercise_angina,oldpeak,slope,major_vessels,thal,disease"
)
SRC = Path(__file__).parents[2] / "src"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("ANONYMATCH_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``anonymatch ui --port 0`` in a child process; yields the address with the token; on
    teardown SIGTERM must remove every file it kept."""
    tmp = tmp_path_factory.mktemp("ui-tmp")
    env = {**os.environ, "TMPDIR": str(tmp)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    process = subprocess.Popen(
        [sys.executable, "-c", "from anonymatch.cli import entry; entry()", "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
    assert found, (line, process.stderr.read() if process.poll() is not None else "")
    yield found.group(1)
    process.send_signal(signal.SIGTERM)
    assert process.wait(20) == 143  # 128 + SIGTERM
    assert list(tmp.iterdir()) == []  # uploads, runs and releases are gone


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        instance.close()


def base(url: str) -> str:
    return url.split("?")[0]


@pytest.mark.skipif(not HEART.exists(), reason=f"heart_statlog not found at {HEART}")
def test_round_trip_heart(server: str, browser: Any, shots: Path, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(server)
    assert page.url == base(server)  # the token left the address for a cookie
    page.screenshot(path=shots / "ui_upload.png", full_page=True)
    page.set_input_files("#file", str(HEART))
    page.uncheck("#upload input[name=header]")
    page.fill("#upload input[name=names]", HEART_NAMES)
    page.click("#upload-button")
    page.wait_for_url("**/dataset")
    assert "270 rows · 14 columns" in page.inner_text("#file-facts")
    assert page.locator("#preview tbody tr").count() == 10
    roles = {
        "age": "qi",
        "sex": "qi",
        "chest_pain": "qi",
        "resting_bp": "qi",
        "disease": "sensitive",
    }
    for column in HEART_NAMES.split(","):
        page.select_option(f"select[name='role:{column}']", roles.get(column, "other"))
    for column in ("age", "resting_bp"):
        page.select_option(f"select[name='type:{column}']", "numeric")
    page.fill("input[name=k]", "5")
    page.fill("input[name=l]", "2")
    page.screenshot(path=shots / "ui_dataset.png", full_page=True)
    page.click("#run-button")
    page.wait_for_url("**/job")
    page.screenshot(path=shots / "ui_job.png")
    page.wait_for_url("**/result", timeout=120_000)
    seconds = time.perf_counter() - started
    print(f"\nUI round trip on heart_statlog: {seconds:.1f} s")
    assert page.inner_text("#verified").startswith("PASS")
    assert page.inner_text("#guarantee .sensitive") == "distinct ℓ-diversity, ℓ = 2"
    assert page.inner_text("#risk-headline").startswith("Prosecutor risk: max")
    summary = page.text_content("#summary") or ""  # the CLI's own lines, folded
    assert "verified: PASS" in summary and "l = 2" in summary
    page.screenshot(path=shots / "ui_result.png", full_page=True)
    with page.expect_download() as download:
        page.click("#download-release")
    release = tmp_path / "release.csv"
    download.value.save_as(release)
    lines = release.read_text().splitlines()
    assert lines[0].split(",") == HEART_NAMES.split(",") and len(lines) == 271
    with page.expect_download() as download:
        page.click("#download-manifest")
    manifest = json.loads(Path(download.value.path()).read_text())
    assert manifest["guarantee"]["k"] == 5 and manifest["verification"]["passed"] is True
    with page.expect_download() as download:
        page.click("#download-job")
    job = Path(download.value.path()).read_text()
    assert 'schema = "anonymatch-job/1"' in job and "l = 2" in job and "k = 5" in job
    with context.expect_page() as popup:
        page.click("#open-report")
    report = popup.value
    requests: list[str] = []
    report.on("request", lambda r: requests.append(r.url))
    report.wait_for_load_state()
    report.reload()
    assert report.locator("section#risk h2").inner_text().startswith("Re-identification")
    assert report.locator("figure img").count() >= 5
    assert all(u.startswith((base(server), "data:")) for u in requests), requests
    report.set_viewport_size({"width": 1100, "height": 900})
    report.screenshot(path=shots / "report.png", full_page=False)
    context.close()


@pytest.mark.skipif(not HEART.exists(), reason=f"heart_statlog not found at {HEART}")
def test_ordinal_and_suppression_limit(server: str, browser: Any) -> None:
    """One run with an ordinal quasi-identifier (its order typed in the field the type shows)
    and a suppression limit: the result page shows the guarantee and the risk headline, and
    the job file carries both."""
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto(server)
    page.set_input_files("#file", str(HEART))
    page.uncheck("#upload input[name=header]")
    page.fill("#upload input[name=names]", HEART_NAMES)
    page.click("#upload-button")
    page.wait_for_url("**/dataset")
    roles = {"age": "qi", "sex": "qi", "slope": "qi", "disease": "sensitive"}
    for column in HEART_NAMES.split(","):
        page.select_option(f"select[name='role:{column}']", roles.get(column, "other"))
    page.select_option("select[name='type:age']", "numeric")
    order = page.locator("input[name='order:slope']")
    assert not order.is_visible()  # shown for ordinal columns only
    page.select_option("select[name='type:slope']", "ordinal")
    order.fill("1.0|2.0|3.0")
    page.check("input[name=method][value=greedy]")
    page.fill("input[name=k]", "5")
    page.fill("input[name=suppression_limit]", "0.05")
    assert not page.locator("select[name=k_column]").is_visible()  # greedy has no levels
    page.click("#run-button")
    page.wait_for_url("**/result", timeout=120_000)
    assert page.inner_text("#model") == "k-anonymity, k = 5"
    assert page.inner_text("#verified").startswith("PASS")
    assert "suppression limit 0.05" in page.inner_text("#records")
    assert "memory path" in page.inner_text("#plan")
    assert page.inner_text("#risk-headline").startswith("Prosecutor risk: max 0.")
    with page.expect_download() as download:
        page.click("#download-job")
    job = Path(download.value.path()).read_text()
    assert 'order = ["1.0", "2.0", "3.0"]' in job and "suppression_limit = 0.05" in job
    context.close()


@pytest.mark.skipif(not HEART.exists(), reason=f"heart_statlog not found at {HEART}")
def test_population_upload_and_headline(server: str, browser: Any, tmp_path: Path) -> None:
    """A population table on the form (issue 28): one lacking a quasi-identifier is refused in
    one line naming it; a good one (the table three times over) and a sampling fraction give
    the result page's population headline, k-map among them."""
    import pandas as pd

    people = pd.read_csv(HEART, sep=" ", header=None, names=HEART_NAMES.split(","))
    register = tmp_path / "register.csv"
    pd.concat([people] * 3, ignore_index=True).to_csv(register, index=False)
    lacking = tmp_path / "lacking.csv"
    people.drop(columns="sex").to_csv(lacking, index=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto(server)
    page.set_input_files("#file", str(HEART))
    page.uncheck("#upload input[name=header]")
    page.fill("#upload input[name=names]", HEART_NAMES)
    page.click("#upload-button")
    page.wait_for_url("**/dataset")
    roles = {"age": "qi", "sex": "qi", "chest_pain": "qi"}
    for column in HEART_NAMES.split(","):
        page.select_option(f"select[name='role:{column}']", roles.get(column, "other"))
    page.select_option("select[name='type:age']", "numeric")
    page.fill("input[name=k]", "5")
    page.set_input_files("input[name=population]", str(lacking))
    page.click("#run-button")
    page.wait_for_selector("#error")
    error = page.inner_text("#error")
    assert error == "error: population: lacking.csv lacks the quasi-identifier(s) sex", error
    for column in HEART_NAMES.split(","):  # the form shows what was posted before
        page.select_option(f"select[name='role:{column}']", roles.get(column, "other"))
    page.select_option("select[name='type:age']", "numeric")
    page.fill("input[name=k]", "5")
    page.set_input_files("input[name=population]", str(register))
    page.fill("input[name=sampling_fraction]", "0.25")
    page.click("#run-button")
    page.wait_for_url("**/result", timeout=120_000)
    headline = page.inner_text("#population-headline")
    assert headline.startswith("Against the population (810 records): k-map "), headline
    kmap = int(re.search(r"k-map (\d+)", headline).group(1))  # type: ignore[union-attr]
    assert kmap >= 15  # k = 5 in the sample, each person three times in the register
    assert "journalist risk max " in headline and "f = 0.25" in headline
    page.goto(base(server) + "dataset")
    assert page.inner_text("#population-name") == "register.csv"
    context.close()


def test_bad_file_shows_one_clear_line(server: str, browser: Any, tmp_path: Path) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(server)
    bad = tmp_path / "scan.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    page.set_input_files("#file", str(bad))
    page.click("#upload-button")
    page.wait_for_selector("#error")
    error = page.inner_text("#error")
    assert error.startswith("error: ") and "\n" not in error and "Traceback" not in page.content()
    assert page.url == base(server)
    context.close()


def test_second_browser_without_token_is_refused(server: str, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    for path in ("", "dataset", "status", "download/release", "?token=guess"):
        response = page.goto(base(server) + path)
        assert response is not None and response.status == 403
        assert "403 forbidden" in page.inner_text("body")
    context.close()


HOSTILE = """<!DOCTYPE html><html><body><h1>cat pictures</h1>
<form id="run" action="APP/run" method="post" target="sink">
  <input name="k" value="1"><input name="method" value="greedy">
  <input name="role:age" value="qi"><input name="type:age" value="numeric">
  <input name="role:sex" value="qi"><input name="role:zip" value="other">
</form>
<form id="read" action="APP/read" method="post" target="sink2">
  <input name="sep" value="tab"><input name="header" value="on">
</form>
<iframe name="sink"></iframe><iframe name="sink2"></iframe>
<script>
const fd = new FormData();
fd.append("header", "on");
fd.append("file", new Blob(["name,diagnosis\\nann,flu\\nbob,cold\\n"]), "evil.csv");
const k1 = new URLSearchParams({k: "1", method: "greedy", "role:age": "qi", "role:sex": "qi"});
Promise.allSettled([
  fetch("APP/upload", {method: "POST", body: fd, credentials: "include", mode: "no-cors"}),
  fetch("APP/run", {method: "POST", body: k1, credentials: "include", mode: "no-cors"}),
]).then(() => {
  document.getElementById("run").submit();
  document.getElementById("read").submit();
  setTimeout(() => { document.title = "done"; }, 1500);
});
</script></body></html>"""


@pytest.fixture()
def hostile(server: str) -> Iterator[str]:
    """A page on another 127.0.0.1 port (any local server, another app's dev server…) that
    posts forms and fetch() requests to the app as soon as it is opened."""
    page = HOSTILE.replace("APP", base(server).rstrip("/")).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_hostile_page_on_another_port_changes_nothing(
    server: str, hostile: str, browser: Any, tmp_path: Path
) -> None:
    """Cookies are not scoped by port: a page on another local port is same-site, and the
    browser sends the app's cookies with its requests. The Origin check and the CSRF token
    refuse them: the steward's table and settings stay, no run starts."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(server)
    table = tmp_path / "people.csv"
    table.write_text("age,sex,zip\n31,F,1000\n42,M,1001\n35,F,1002\n")
    page.set_input_files("#file", str(table))
    page.click("#upload-button")
    page.wait_for_url("**/dataset")
    statuses: dict[str, list[int]] = {}
    page.on("response", lambda r: statuses.setdefault(r.url.split("/")[-1], []).append(r.status))
    page.goto(hostile)
    page.wait_for_function("document.title === 'done'", timeout=20_000)
    assert statuses.get("run") and set(statuses["run"]) == {403}, statuses
    assert statuses.get("read") and set(statuses["read"]) == {403}, statuses
    assert set(statuses.get("upload", [])) <= {403}, statuses
    page.goto(base(server) + "status")
    assert json.loads(page.inner_text("body")) == {"state": "none"}  # no run started
    page.goto(base(server) + "dataset")
    assert page.inner_text("h1") == "people.csv"  # the upload was not replaced
    assert "3 rows · 3 columns" in page.inner_text("#file-facts")
    context.close()


def test_report_opens_offline_and_prints(
    browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anonymatch.cli import main
    from tests.factories import random_frame

    original = tmp_path / "people.csv"
    random_frame(40, 2).to_csv(original, index=False)
    html = tmp_path / "report.html"
    code = main(["anonymize", str(original), "-o", str(tmp_path / "rel.csv"), "--k", "3",
                 "--qi", "n0,n1,c0", "--numeric", "n0,n1", "--sensitive", "s", "-q",
                 "--report-html", str(html)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    context = browser.new_context(offline=True)
    page = context.new_page()
    fetched: list[str] = []
    page.route("**/*", lambda route: (fetched.append(route.request.url), route.continue_()))
    page.goto(html.as_uri())
    assert all(u.startswith(("file:", "data:")) for u in fetched), fetched
    assert page.locator("figure img").evaluate_all("imgs => imgs.every(i => i.naturalWidth > 0)")
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    context.close()


def test_a_wide_table_scrolls_inside_its_card(server: str, browser: Any, tmp_path: Path) -> None:
    """A table of many long-named columns: the roles table scrolls inside its card and the page
    itself never scrolls sideways (issue 37: the roles table overflowed its card, because a
    fieldset is at least as wide as its content unless told otherwise)."""
    names = ["age", "sex", *(f"a_rather_long_column_name_{i:02d}" for i in range(14))]
    rows = [[str(20 + r % 40), "FM"[r % 2], *(f"v{(r * 7 + c) % 4}" for c in range(14))]
            for r in range(60)]  # fmt: skip
    wide = tmp_path / "wide.csv"
    wide.write_text("\n".join(",".join(row) for row in [names, *rows]) + "\n")
    context = browser.new_context(viewport={"width": 760, "height": 900})
    page = context.new_page()
    page.goto(server)
    page.set_input_files("#file", str(wide))
    page.click("#upload-button")
    page.wait_for_url("**/dataset", timeout=10_000)
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    inside = page.evaluate(
        "(() => { const s = document.querySelector('#roles').parentElement;"
        " return s.scrollWidth - s.clientWidth; })()"
    )
    context.close()
    assert sideways <= 0 and inside > 0, (sideways, inside)
