"""The web app's other sources (issue 30 item 5): an uploaded SPSS file (value labels shown
and published) and an Excel workbook run like a CSV upload; a workbook past the decompressed
budget is refused with one line before it is read."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from tests.ui.test_app import login, make_app, upload, wait

pyreadstat = pytest.importorskip("pyreadstat", reason="the stats extra (pyreadstat) is missing")
openpyxl = pytest.importorskip("openpyxl", reason="the excel extra (openpyxl) is missing")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _people(n: int = 30) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [20.0 + (i * 7) % 40 for i in range(n)],
            "sex": [float(i % 2) for i in range(n)],
            "visits": [float(i % 5) for i in range(n)],
        }
    )


def _form(csrf: str) -> dict[str, str]:
    return {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "role:sex": "qi",
            "type:sex": "categorical", "role:visits": "other", "k": "3",
            "method": "greedy"}  # fmt: skip


@pytest.mark.parametrize("suffix", [".sav", ".xlsx"])
def test_spss_and_excel_uploads_run(tmp_path: Path, suffix: str) -> None:
    client, state = make_app(tmp_path / "private")
    try:
        csrf = login(client)
        path = tmp_path / f"people{suffix}"
        if suffix == ".sav":
            labels = {"sex": {0.0: "female", 1.0: "male"}}
            pyreadstat.write_sav(_people(), str(path), variable_value_labels=labels)
        else:
            frame = _people()
            frame["sex"] = frame["sex"].map({0.0: "female", 1.0: "male"})
            frame.to_excel(path, index=False)
        page = upload(client, csrf, path.name, path.read_bytes())
        assert page.url.path == "/dataset", page.text[-2000:]
        assert "30 rows · 3 columns" in page.text and "female" in page.text
        page = client.post("/run", data=_form(csrf))
        status = wait(client)
        assert status["state"] == "done", status
        assert "verified: PASS" in client.get("/result").text
        release = client.get("/download/release").text
        assert "female" in release and "male" in release
    finally:
        state.stop_all()


def test_a_workbook_past_the_budget_is_refused(tmp_path: Path) -> None:
    from anonymatch.ui.data import Limits

    client, state = make_app(tmp_path / "private", limits=Limits(max_table_bytes=1 << 20))
    try:
        csrf = login(client)
        body = io.BytesIO()
        with zipfile.ZipFile(body, "w", zipfile.ZIP_DEFLATED) as book:
            book.writestr("xl/worksheets/sheet1.xml", b"<" + b" " * (4 << 20) + b">")
        page = upload(client, csrf, "bomb.xlsx", body.getvalue())
        error = page.text.split('<p class="error" id="error">')[1].split("</p>")[0]
        assert "once decompressed" in error and page.url.path == "/"
    finally:
        state.stop_all()
