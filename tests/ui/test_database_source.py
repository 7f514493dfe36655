"""The web app reads a database table as its source (issue 30 item 5): a PostgreSQL table (a
real server started here) is previewed and anonymized like an upload, its password never in a
page, the job file, the manifest or the session's files; a SQLite file is read only from the
data directory; a bad source is one line on the start page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests import pgserver
from tests.ui.test_app import files, login, make_app, wait

sqlalchemy = pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _people(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(6)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["f", "m"], n),
                         "visits": rng.integers(0, 5, n)})  # fmt: skip


def _load(url: str, name: str) -> None:
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    _people().to_sql(name, engine, index=False, if_exists="replace")
    engine.dispose()


def _error(page: object) -> str:
    text = page.text  # type: ignore[attr-defined]
    return text.split('<p class="error" id="error">')[1].split("</p>")[0]


def test_postgresql_table_runs_and_the_password_is_never_shown(
    postgres: str,
    tmp_path: Path,
) -> None:
    url = pgserver.url(postgres)
    _load(url, "visits_ui")
    client, state = make_app(tmp_path / "private")
    try:
        csrf = login(client)
        page = client.post("/database", data={"csrf": csrf, "url": url, "table": "visits_ui"})
        assert page.url.path == "/dataset", page.text[-2000:]
        assert "40 rows · 3 columns" in page.text and pgserver.PASSWORD not in page.text
        assert "table &#39;visits_ui&#39; in postgresql://" in page.text
        form = {"csrf": csrf, "role:age": "qi", "type:age": "numeric", "role:sex": "qi",
                "type:sex": "categorical", "role:visits": "other", "k": "4",
                "method": "greedy"}  # fmt: skip
        client.post("/run", data=form)
        assert wait(client)["state"] == "done"
        for route in ("/result", "/job", "/report", "/download/release", "/download/manifest"):
            assert pgserver.PASSWORD not in client.get(route).text, route
        assert "verified: PASS" in client.get("/result").text
        for path in files(state):  # job file, manifest, logs, the private copy
            assert pgserver.PASSWORD.encode() not in path.read_bytes(), path
        bad = pgserver.url(postgres, password="wrong-" + pgserver.PASSWORD)
        page = client.post("/database", data={"csrf": csrf, "url": bad, "table": "visits_ui"})
        assert page.url.path == "/" and "cannot connect" in _error(page)
        assert pgserver.PASSWORD not in page.text
        page = client.post("/database", data={"csrf": csrf, "url": url, "table": "nope"})
        assert "no table &#39;nope&#39;" in _error(page) and pgserver.PASSWORD not in page.text
    finally:
        state.stop_all()


def test_sqlite_files_only_from_the_data_directory(tmp_path: Path) -> None:
    shared, elsewhere = tmp_path / "shared", tmp_path / "elsewhere"
    shared.mkdir()
    elsewhere.mkdir()
    for where in (shared, elsewhere):
        _load(f"sqlite:///{where / 'people.db'}", "people")
    client, state = make_app(tmp_path / "private", data_dir=shared)
    try:
        csrf = login(client)
        outside = f"sqlite:///{elsewhere / 'people.db'}"
        page = client.post("/database", data={"csrf": csrf, "table": "people", "url": outside})
        assert "only from the app&#39;s data directory" in _error(page)
        inside = f"sqlite:///{shared / 'people.db'}"
        page = client.post("/database", data={"csrf": csrf, "table": "people", "url": inside})
        assert page.url.path == "/dataset" and "40 rows · 3 columns" in page.text
        page = client.post("/database", data={"csrf": csrf, "table": "x; drop", "url": "x"})
        assert "database URL" in _error(page)
    finally:
        state.stop_all()
