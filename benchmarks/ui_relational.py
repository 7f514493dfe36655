"""The web app's relational run on INFORMS 2008 (issue 29, item 5): the people table and its
items table uploaded together, the form posted (k = 10, hungarian), the ``anonymize-rt`` run in
its child process, then the result page's figures (risk on the joint graph as ``risk-rt``, the
relational utility as ``evaluate-rt``) computed on the app's worker thread.

Driven through Starlette's test client (the app's own routes, guards and child process; no
browser): wall time of the upload (storing and reading both tables), of the run until the
result page is ready, and the figures the page shows.

Usage: ANONYMATCH_DATA=../shared/datasets python benchmarks/ui_relational.py
(writes docs/results.md section "ui_relational" and benchmarks/results/ui_relational.json)
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _common import data_file, dump, machine, update_results  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from anonymatch.ui.app import AppState, create_app  # noqa: E402

QI = ("DOBMM", "DOBYY", "SEX", "RACEX", "EDUCYEAR", "marry", "income")
NUMERIC = ("DOBYY", "EDUCYEAR", "income")
ORIGIN = "http://testserver"


def main() -> None:
    people = Path(data_file("informs/demographics05test.csv", "INFORMS"))
    items = Path(data_file("informs/conditions05.csv", "INFORMS"))
    private = Path(tempfile.mkdtemp(prefix="ui_relational_")) / "private"
    private.mkdir(mode=0o700)
    state = AppState("token", private, origins=(ORIGIN,))
    client = TestClient(create_app(state), follow_redirects=True, headers={"origin": ORIGIN})
    try:
        page = client.get("/?token=token")
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        started = time.perf_counter()
        page = client.post(
            "/upload",
            data={"header": "on", "sep": "auto", "csrf": csrf},
            files={"file": (people.name, people.read_bytes()),
                   "items": (items.name, items.read_bytes())},
        )  # fmt: skip
        uploaded = time.perf_counter() - started
        assert page.url.path == "/dataset", page.text[:2000]
        columns = re.findall(r'name="role:([^"]+)"', page.text)
        form = {"csrf": csrf, "id_column": "DUPERSID", "item_column": "ICD9CODX",
                "item_na": "-1,-7,-8,-9", "k": "10", "method": "hungarian"}  # fmt: skip
        for c in columns:
            form[f"role:{c}"] = "qi" if c in QI else "other"
            form[f"type:{c}"] = "numeric" if c in NUMERIC else "categorical"
        started = time.perf_counter()
        client.post("/run", data=form)
        while (status := client.get("/status").json())["state"] == "running":
            time.sleep(0.5)
        assert status["state"] == "done", status
        result = client.get("/result").text
        ran = time.perf_counter() - started
        cli = client.get("/download/manifest").json()["seconds"]["wall"]  # the CLI's own
    finally:
        state.stop_all()

    def figure(pattern: str) -> str:
        found = re.search(pattern, result)
        return found.group(1) if found else "?"

    row = {
        "people": 33961,
        "upload_seconds": uploaded,
        "run_seconds": ran,
        "cli_seconds": cli,
        "verified": "PASS" in result,
        "gcp": figure(r"Relational GCP <b>([\d.]+)%</b>"),
        "uncertain": figure(r"<b>([\d.]+)</b> uncertain items per record"),
        "query_error": figure(r"mean relative error <b>([\d.]+)</b>"),
        "risk_max": figure(r"Prosecutor risk: max <b>([\d.]+)</b>"),
        "risk_mean": figure(r"mean <b>([\d.]+)</b>;"),
    }
    print(row)
    dump("ui_relational", row)
    update_results(
        "ui_relational",
        "\n".join(
            [
                "## The web app's relational run on INFORMS 2008 (issue 29)",
                "",
                f"Machine: {machine()}; 2 cores shared with other sessions. Command:",
                "`ANONYMATCH_DATA=../shared/datasets python benchmarks/ui_relational.py`",
                "(Starlette's test client on the app's routes; the run is the app's child",
                "process `anonymize-rt --config job.toml`). `demographics05test.csv` and",
                "`conditions05.csv` uploaded together, id DUPERSID, items ICD9CODX",
                "(−1, −7, −8, −9: no item), QIs DOBMM, DOBYY, SEX, RACEX, EDUCYEAR, marry,",
                "income, k = 10, hungarian.",
                "",
                "| upload (both tables stored and read) | run until the result page "
                "| of which anonymizing (manifest `seconds.wall`) | verified | relational GCP "
                "| uncertain / record | query error | prosecutor risk max / mean |",
                "|---|---|---|---|---|---|---|---|",
                f"| {row['upload_seconds']:.1f} s | {row['run_seconds']:.1f} s "
                f"| {row['cli_seconds']:.1f} s | {'PASS' if row['verified'] else 'FAIL'} "
                f"| {row['gcp']} % | {row['uncertain']} | {row['query_error']} "
                f"| {row['risk_max']} / {row['risk_mean']} |",
                "",
                "The run until the result page is the child process (start and imports, reading,",
                "anonymizing and verifying, writing, then the HTML report, which re-verifies",
                "the release from the files) and the result page's figures (risk on the joint",
                "graph and the relational utility, computed from the files on the app's worker",
                "thread as `risk-rt` and `evaluate-rt` compute them); the page appears when",
                "both are done. The figures match `relational_informs` and `relational_risk` at",
                "k = 10.",
            ]
        ),
    )


if __name__ == "__main__":
    main()
