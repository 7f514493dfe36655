"""Hypothesis-driven hostile database input (issue 37): URLs, column types and queries.

Held to the contract of ``contract.check`` — a verified release, or a documented exit code with
one line and nothing left behind (here also no SQLite file created) — and two more promises:
a password, however written (unencoded ``/``, ``@``, ``:``, ``%``, ``?``, ``#``), never
appears on stdout or stderr; a query never changes the database it reads. No server: a
PostgreSQL URL points at a socket directory that does not exist (the refusal is immediate),
the tables are SQLite files.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.contract import FUZZ, STATS, case_dir, check, run
from tests.fuzz.test_fuzz_cli import tables

pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")

SECRET = st.text(alphabet="aZ9/@:%?#&=+ é-_.", min_size=1, max_size=12).map(
    lambda s: f"Qx{s}Qx"  # bounded by a marker, so that it is never found by chance
)
SCHEMES = st.sampled_from(
    ["postgresql", "postgres", "postgresql+psycopg", "postgresql+nosuch", "mysql", "oracle",
     "mssql+pyodbc", "sqlite", "duckdb", "s3", "http"]
)  # fmt: skip


def _hidden(secret: str, *texts: str) -> list[str]:
    """The texts that show ``secret`` (as written or percent-encoded)."""
    shown = {secret, quote(secret, safe=""), secret.replace("Qx", "")}
    return [t for t in texts if any(s and len(s) > 3 and s in t for s in shown)]


@FUZZ
@given(scheme=SCHEMES, secret=SECRET, encoded=st.booleans(), role=st.sampled_from(["in", "out"]))
def test_fuzz_database_urls(scheme: str, secret: str, encoded: bool, role: str) -> None:
    work = case_dir()
    password = quote(secret, safe="") if encoded else secret
    url = f"{scheme}://ann:{password}@/hospital?host={quote(str(work / 'none'), safe='')}"
    src, out = work / "in.csv", work / "out.csv"
    pd.DataFrame({"age": range(10), "sex": ["f", "m"] * 5}).to_csv(src, index=False)
    if role == "in":
        args = ["anonymize", url, "--table", "people", "-o", out]
    else:
        args = ["anonymize", src, "-o", url, "--output-table", "rel"]
    outcome = check("database-url", [*args, "--qi", "age,sex", "-k", "2", "-q"], [out])
    shown = _hidden(secret, outcome.stdout, *outcome.errors)
    if shown:
        STATS["database-url"].breaks.append(f"{url} -> password shown: {shown[0][:200]}")
        raise AssertionError(f"password shown: {shown[0]}")
    assert outcome.code != 0  # nothing listens there


@FUZZ
@given(frame=tables(), k=st.sampled_from([1, 2, 3]), streamed=st.booleans(), blob=st.booleans())
def test_fuzz_sqlite_tables(frame: pd.DataFrame, k: int, streamed: bool, blob: bool) -> None:
    """A hostile table stored in SQLite (mixed types per column, blobs, NULLs), anonymized into
    a new SQLite file: a verified release, or a refusal leaving no file."""
    work = case_dir()
    db = work / "in.db"
    names = [str(c) for c in frame.columns]
    with sqlite3.connect(db) as c:
        try:
            frame.to_sql("people", c, index=False)
        except (ValueError, sqlite3.Error):
            return  # a header SQLite cannot hold (empty, duplicated): not the case here
        if blob and len(frame) and names:
            c.execute(f"UPDATE people SET \"{names[0]}\" = x'00ff' WHERE rowid = 1")  # a BLOB
    url, out = f"sqlite:///{db}", work / "out.db"
    qi = names[-1:]
    args = ["anonymize", url, "--table", "people", "-o", f"sqlite:///{out}", "--output-table",
            "rel", "--qi", ",".join(qi), "-k", k, "-q"]  # fmt: skip
    if streamed:
        args += ["--executor", "inline", "--chunk-rows", 7]
    verify = ["verify", url, f"sqlite:///{out}", "--table", "people", "--release-table", "rel",
              "-k", k, "--qi", ",".join(qi), "-q"]  # fmt: skip
    check("database-table", args, [out], verify)


WRITING = st.sampled_from(
    ["delete from people returning *", "select * from people; drop table people",
     "update people set a = 1 returning *", "insert into people select * from people returning *",
     "pragma query_only = off", "drop table people", "vacuum", "vacuum into 'copy.db'",
     "pragma user_version = 7", "select * from pragma_table_info('people')",
     "attach database 'other.db' as o", "create table x as select * from people",
     "select * from people) as s; drop table people; select * from (select 1",
     "with d as (delete from people returning *) select * from d", "select * from people"]
)  # fmt: skip


@FUZZ
@given(query=WRITING, streamed=st.booleans(), wrap=st.sampled_from(["", " ", ";", ";;", "\n"]))
def test_fuzz_queries_never_write(query: str, streamed: bool, wrap: str) -> None:
    work = case_dir()
    db = work / "in.db"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE people (a INTEGER, b TEXT)")
        c.executemany("INSERT INTO people VALUES (?, ?)", [(i % 4, "xy"[i % 2]) for i in range(12)])
    before = db.read_bytes()
    out = work / "out.csv"
    args = ["anonymize", f"sqlite:///{db}", "--query", query + wrap, "-o", out,
            "--qi", "a,b", "-k", 2, "-q", "--force"]  # fmt: skip
    if streamed:
        args += ["--executor", "inline", "--chunk-rows", 5]
    check("database-query", args, [out])
    assert db.read_bytes() == before, query
    assert [p.name for p in work.iterdir() if not p.name.startswith("out.csv")] == ["in.db"]
    assert not Path("other.db").exists() and not Path("copy.db").exists(), query


def test_missing_database_file_stays_missing() -> None:
    work = case_dir()
    outcome, _ = run(["anonymize", f"sqlite:///{work / 'nope.db'}", "--table", "t", "-o",
                      work / "r.csv", "--qi", "a", "-k", "2"])  # fmt: skip
    assert outcome.code == 2 and not (work / "nope.db").exists()
    assert not any(Path(work).iterdir())
