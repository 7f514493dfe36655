"""Databases with hostile and faulty input (issue 37): a password with unencoded ``/``, ``@``,
``:`` and ``%`` (the test server's user has one) is never shown; an unsupported scheme or driver
is refused as a database; no table is lost (a table created during the run, the input as the
output, a query that writes); every column type is read faithfully or refused naming the
column; no SQLite/DuckDB file is created for a missing input or left by a failed run; and
``report --release-table``. Against a real PostgreSQL server on a Unix socket
(``tests.pgserver``, one per test process) and SQLite/DuckDB files."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from anonymatch.cli import main
from anonymatch.tables.io.sql import is_database_url, redact_url, without_password
from tests import pgserver

sqlalchemy = pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")

PASSWORD = pgserver.PASSWORD
ROLES = ["--qi", "age,sex", "--numeric", "age", "-k", "4", "--seed", "3", "-q"]
STREAMED = ["--method", "hungarian", "--executor", "inline", "--chunk-rows", "40"]


def _raw(sockets: str, db: str = "hospital") -> str:
    """The server's URL with the password written as is: ``/``, ``@``, ``:`` and ``%`` not
    percent-encoded (SQLAlchemy reads ``/`` and ``:``; anonymatch also ``@`` and ``%``)."""
    assert all(c in PASSWORD for c in "/@:%")
    return f"postgresql://{pgserver.USER}:{PASSWORD}@/{db}?host={quote(sockets, safe='')}"


def _engine(url: str) -> sqlalchemy.Engine:
    return sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def _people(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(37)
    return pd.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["f", "m"], n),
                         "visits": rng.integers(0, 5, n)})  # fmt: skip


def _load(url: str, name: str, frame: pd.DataFrame, if_exists: str = "replace") -> None:
    engine = _engine(url)
    frame.to_sql(name, engine, index=False, if_exists=if_exists)  # type: ignore[arg-type]
    engine.dispose()


def _sql(url: str, *statements: str) -> None:
    engine = _engine(url)
    with engine.begin() as c:
        for statement in statements:
            c.exec_driver_sql(statement)
    engine.dispose()


def _rows(url: str, table: str) -> int:
    engine = _engine(url)
    try:
        with engine.connect() as c:
            return int(c.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() or 0)
    finally:
        engine.dispose()


def _has(url: str, table: str) -> bool:
    engine = _engine(url)
    try:
        return sqlalchemy.inspect(engine).has_table(table)
    finally:
        engine.dispose()


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _refused(code: int, out: str, err: str, *words: str) -> None:
    """Exit 2, one error line holding ``words`` (warnings aside), no password anywhere."""
    assert code == 2, err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("anonymatch: warning:")]
    assert len(lines) == 1 and lines[0].startswith("anonymatch: error: "), err
    assert PASSWORD not in out + err and quote(PASSWORD, safe="") not in out + err, err
    for word in words:
        assert word in err, (word, err)


# secrets ------------------------------------------------------------------------------------


def test_a_password_with_unencoded_characters_is_hidden_whole() -> None:
    raw = "postgresql://ann:s3/cr@t:Pa%-55@db.example:5432/hospital?sslmode=require"
    assert redact_url(raw) == "postgresql://ann:***@db.example:5432/hospital?sslmode=require"
    assert without_password(raw) == "postgresql://ann@db.example:5432/hospital?sslmode=require"
    encoded = "postgresql://ann:" + quote("s3/cr@t:Pa%-55", safe="") + "@db.example/h"
    assert redact_url(encoded) == "postgresql://ann:***@db.example/h"
    for text in (raw, "postgresql://ann:p@ss@h:notaport/db", "mysql://ann:p/w@h/db",
                 "postgresql://h/db?password=p/w&x=1"):  # fmt: skip
        assert "p/w" not in redact_url(text) and "Pa%" not in redact_url(text), text
        assert is_database_url(text)
    assert is_database_url("oracle://scott:tiger@h/db")  # any user:password@ is a URL
    assert not is_database_url("s3://bucket/x.parquet") and not is_database_url("a:b@c.csv")
    assert redact_url("sqlite:///data/a b.db") == "sqlite:///data/a b.db"


def test_an_unsupported_scheme_or_driver_is_refused_as_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.csv"
    _people().to_csv(data, index=False)
    out = str(tmp_path / "r.csv")
    for url, scheme in (
        (f"mysql://ann:{PASSWORD}@h/db", "unsupported database 'mysql'"),
        (f"oracle://ann:{PASSWORD}@h/db", "unsupported database 'oracle'"),
        (f"postgresql+nosuch://ann:{PASSWORD}@h/db", "unknown database driver"),
    ):
        for args in (
            [url, "--table", "h37_people", "-o", out],
            [url, "-o", out],
            [str(data), "-o", url, "--output-table", "rel"],
            [str(data), "-o", url],
        ):
            code, o, err = run(["anonymize", *args, *ROLES], capsys)
            _refused(code, o, err, scheme, "ann:***@")
        code, o, err = run(["verify", url, out, "--table", "t", "-k", "2", "--qi", "age"], capsys)
        _refused(code, o, err, scheme)
        # another kind reads it as a file: the message still hides the password (cli.one_line)
        sets = ["anonymize-sets", url, "-o", str(tmp_path / "s.jsonl"), "-k", "2"]
        code, o, err = run(sets, capsys)
        _refused(code, o, err, "ann:***@")
    assert not Path(out).exists()


def test_a_raw_password_works_and_is_never_shown(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The URL with the password unencoded connects; the password is in no error line, the
    manifest, the HTML report, the job file ``init`` writes or the web app's database form."""
    url = _raw(postgres)
    _load(pgserver.url(postgres), "raw_people", _people())
    manifest, html, job = tmp_path / "m.json", tmp_path / "r.html", tmp_path / "job.toml"
    code, o, err = run(["anonymize", url, "--table", "raw_people", "-o", url, "--output-table",
                        "raw_rel", "--report", str(manifest), *ROLES], capsys)  # fmt: skip
    assert code == 0, err
    assert json.loads(manifest.read_text())["input"]["path"].startswith("postgresql://steward:***@")
    code, o2, err2 = run(["report", url, url, "--manifest", str(manifest), "-o", str(html)], capsys)
    assert code == 0 and "re-verified" in o2, err2
    code, o3, err3 = run(["init", url, "--table", "raw_people", "-k", "4", "-o", str(job)], capsys)
    assert code == 0, err3
    assert "postgresql://steward@/hospital" in job.read_text()
    code, o4, err4 = run(["anonymize", url, "--table", "absent", "-o", str(tmp_path / "x.csv"),
                          *ROLES], capsys)  # fmt: skip
    _refused(code, o4, err4, "no table 'absent'", "steward:***@")
    from anonymatch.ui.data import database_name

    shown = database_name(url, "raw_people", None)
    texts = [o, err, o2, err2, o3, err3, shown, manifest.read_text(), html.read_text(),
             job.read_text()]  # fmt: skip
    for text in texts:
        assert PASSWORD not in text and quote(PASSWORD, safe="") not in text
        for piece in ("s3/cr", "Pa%-55"):
            assert piece not in text


# data loss ----------------------------------------------------------------------------------


def _sqlite(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    _load(url, "h37_people", _people())
    return url


@pytest.mark.parametrize("streamed", [False, True])
def test_a_table_created_during_the_run_is_kept(
    postgres: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    streamed: bool,
) -> None:
    """Without --force, a release table that someone else creates after the up-front check is
    neither dropped nor replaced: the write checks again in its own transaction (exit 2)."""
    from anonymatch.tables.io import sql

    real = sql.check_output_table
    for url in (_sqlite(tmp_path), pgserver.url(postgres)):
        _load(url, "h37_people", _people())
        if _has(url, "h37_theirs"):
            _sql(url, "DROP TABLE h37_theirs")

        def racing(text: str, *args: object, _url: str = url) -> None:
            real(text, *args)  # type: ignore[arg-type]
            _sql(_url, "CREATE TABLE h37_theirs (a integer)", "INSERT INTO h37_theirs VALUES (7)")

        monkeypatch.setattr(sql, "check_output_table", racing)
        args = [
            "anonymize",
            url,
            "--table",
            "h37_people",
            "-o",
            url,
            "--output-table",
            "h37_theirs",
        ]
        code, o, err = run([*args, *ROLES, *(STREAMED if streamed else [])], capsys)
        _refused(code, o, err, "already exists", "--force")
        assert _rows(url, "h37_theirs") == 1, url


def test_the_release_is_never_its_input(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--table T -o SAME --output-table T is refused even with --force (the same database
    written another way too), and so is a query reading the output table, directly or
    through a view; the input is untouched."""
    pg = pgserver.url(postgres)
    _load(pg, "h37_people", _people())
    _sql(pg, "DROP VIEW IF EXISTS h37_adults", "CREATE VIEW h37_adults AS SELECT * FROM h37_people "
         "WHERE age >= 30")  # fmt: skip
    lite = _sqlite(tmp_path)
    _sql(lite, "CREATE VIEW h37_adults AS SELECT * FROM h37_people WHERE age >= 30")
    same_file = f"sqlite:///{tmp_path / 'sub' / '..' / 'd.db'}"
    (tmp_path / "sub").mkdir()
    cases = [
        (lite, ["--table", "h37_people"], lite, "h37_people"),
        (lite, ["--table", "h37_people"], same_file, "H37_PEOPLE"),
        (lite, ["--query", "select * from h37_people where age > 25"], lite, "h37_people"),
        (lite, ["--query", "select * from h37_adults"], lite, "h37_people"),
        (pg, ["--table", "h37_people"], _raw(postgres), "public.h37_people"),
        (pg, ["--query", 'SELECT * FROM "h37_people"'], pg, "h37_people"),
        (pg, ["--query", "select * from h37_adults"], pg, "h37_people"),
    ]
    for source, read, out, table in cases:
        for force in ([], ["--force"]):
            args = ["anonymize", source, *read, "-o", out, "--output-table", table, *force]
            code, o, err = run([*args, *ROLES], capsys)
            _refused(code, o, err, "no output may be an input")
    for url in (lite, pg):
        assert _rows(url, "h37_people") == 60


def test_a_writing_query_exits_2_and_changes_nothing(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pg = pgserver.url(postgres)
    _load(pg, "h37_wpeople", _people())
    _load(pg, "h37_victim", _people(5))
    _sql(pg, "DROP SEQUENCE IF EXISTS h37_counter", "CREATE SEQUENCE h37_counter")
    lite = _sqlite(tmp_path)
    _load(lite, "h37_victim", _people(5))
    duck = f"duckdb:///{tmp_path / 'd.duckdb'}"
    _load(duck, "h37_people", _people())
    _load(duck, "h37_victim", _people(5))
    out = str(tmp_path / "r.csv")
    writing = {
        pg: ["commit; drop table h37_victim; commit; select * from h37_wpeople",
             "select * from h37_wpeople; drop table h37_victim",
             "with gone as (delete from h37_victim returning *) select * from h37_wpeople",
             "select p.*, nextval('h37_counter') as n from h37_wpeople p",
             "select 1 as age) as s; drop table h37_victim; select (1"],
        lite: ["delete from h37_victim returning *",
               "select * from h37_people; drop table h37_victim"],
        duck: ["delete from h37_victim returning *",
               "select * from h37_people; drop table h37_victim"],
    }  # fmt: skip
    for url, queries in writing.items():
        for query in queries:
            for path in ([], STREAMED):
                code, o, err = run(["anonymize", url, "--query", query, "-o", out, "--force",
                                    *ROLES, *path], capsys)  # fmt: skip
                _refused(code, o, err)
                assert _rows(url, "h37_victim") == 5, (url, query)
    engine = _engine(pg)
    with engine.connect() as c:
        assert c.exec_driver_sql("SELECT last_value FROM h37_counter").scalar() == 1
    engine.dispose()
    assert not Path(out).exists()


# types --------------------------------------------------------------------------------------


def test_binary_and_array_columns_are_refused_json_is_read_as_text(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bytea and arrays: one line naming the column, exit 2, on the in-memory and the
    streamed path; json/jsonb: their JSON text, written to PostgreSQL as text."""
    pg = pgserver.url(postgres)
    people = _people()
    _load(pg, "h37_typed", people)
    _sql(pg, "ALTER TABLE h37_typed ADD COLUMN photo bytea DEFAULT '\\x00ff'",
         "ALTER TABLE h37_typed ADD COLUMN tags integer[] DEFAULT '{1,2}'",
         "ALTER TABLE h37_typed ADD COLUMN doc jsonb DEFAULT '{\"a\": [1, \"x\"]}'",
         "ALTER TABLE h37_typed ADD COLUMN raw json DEFAULT '\"text\"'")  # fmt: skip
    out = str(tmp_path / "r.csv")
    for column in ("photo", "tags"):
        query = f"select age, sex, {column} from h37_typed"
        for path in ([], STREAMED):
            code, o, err = run(["anonymize", pg, "--query", query, "-o", out, *ROLES, *path],
                               capsys)  # fmt: skip
            _refused(code, o, err, f"column {column!r}", "cast it to text")
    query = "select age, sex, doc, raw from h37_typed"
    for path in ([], STREAMED):
        code, o, err = run(["anonymize", pg, "--query", query, "-o", pg, "--output-table",
                            "typed_rel", "--force", *ROLES, *path], capsys)  # fmt: skip
        assert code == 0, err
        engine = _engine(pg)
        back = pd.read_sql("SELECT doc, raw FROM typed_rel", engine)
        engine.dispose()
        assert set(back["doc"]) == {'{"a": [1, "x"]}'} and set(back["raw"]) == {'"text"'}


@pytest.mark.parametrize("streamed", [False, True])
def test_a_release_keeps_its_source_types(
    postgres: str, capsys: pytest.CaptureFixture[str], streamed: bool
) -> None:
    """smallint stays smallint, an integer column with NULLs stays integer (NULL, not NaN or
    '*'), numeric, date and boolean stay so; an integer QI with NULLs is published as '100',
    never '100.0'; from a table and from a query; the release still verifies."""
    pg = pgserver.url(postgres)
    _sql(pg, "DROP TABLE IF EXISTS h37_src", "CREATE TABLE h37_src (age integer, sex text, "
         "zip integer, visits smallint, stays integer, amount numeric(8,2), born date, "
         "flag boolean)")  # fmt: skip
    people = _people().assign(zip=lambda f: 100 + f["visits"] % 3, stays=lambda f: f["visits"])
    people["stays"] = people["stays"].astype("Int64")
    people.loc[[2, 7], "stays"] = pd.NA
    people["zip"] = people["zip"].astype("Int64")
    people.loc[5, "zip"] = pd.NA
    people = people.assign(amount=1.25, born=pd.Timestamp("2001-02-03").date(), flag=True)
    _load(pg, "h37_src", people, if_exists="append")
    roles = ["--qi", "age,sex,zip", "--numeric", "age", "-k", "4", "-q",
             *(STREAMED if streamed else ["--method", "greedy"])]  # fmt: skip
    query = "select * from h37_src where age > 0"
    for read, out in ((["--table", "h37_src"], "h37_t"), (["--query", query], "h37_q")):
        code, _, err = run(["anonymize", pg, *read, "-o", pg, "--output-table", out, "--force",
                            *roles], capsys)  # fmt: skip
        assert code == 0, err
        engine = _engine(pg)
        with engine.connect() as c:
            types = dict(c.exec_driver_sql(
                "SELECT column_name, data_type FROM information_schema.columns "
                f"WHERE table_name = '{out}'").fetchall())  # fmt: skip
            nulls = c.exec_driver_sql(f"SELECT count(*) FROM {out} WHERE stays IS NULL").scalar()
            zips = {z for (z,) in c.exec_driver_sql(f"SELECT zip FROM {out}").fetchall()}
        engine.dispose()
        assert types == {"age": "text", "sex": "text", "zip": "text", "visits": "smallint",
                         "stays": "integer", "amount": "numeric", "born": "date",
                         "flag": "boolean"}, types  # fmt: skip
        assert nulls == 2
        assert not any(".0" in z for z in zips), zips
        code, _, err = run(["verify", pg, pg, "--table", "h37_src", "--release-table", out,
                            "-k", "4", "--qi", "age,sex,zip", "--numeric", "age"],
                           capsys)  # fmt: skip
        assert code == 0, err


# files --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["sqlite", "duckdb"])
def test_no_database_file_is_created_for_a_missing_input_or_left_by_a_failed_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scheme: str
) -> None:
    missing = tmp_path / "missing.db"
    code, o, err = run(["anonymize", f"{scheme}:///{missing}", "--table", "h37_people", "-o",
                        str(tmp_path / "r.csv"), *ROLES], capsys)  # fmt: skip
    _refused(code, o, err, "no database file")
    assert not missing.exists()
    data = tmp_path / "d.csv"
    _people().to_csv(data, index=False)
    new = tmp_path / "new.db"
    target = f"{scheme}:///{new}"
    for path in ([], STREAMED):  # k > rows: infeasible, exit 3
        code, _, err = run(["anonymize", str(data), "-o", target, "--output-table", "rel",
                            *ROLES, "-k", "500", *path], capsys)  # fmt: skip
        assert code == 3, err
        assert not new.exists() and list(tmp_path.glob("new.db*")) == []


def test_a_failed_write_removes_the_file_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anonymatch.core.errors import OutputError
    from anonymatch.tables.io import sql

    def broken(self: pd.DataFrame, name: str, con: object, **kw: object) -> None:
        raise sqlalchemy.exc.OperationalError("insert", {}, Exception("disk full"))

    new = tmp_path / "new.db"
    with sql.SqlReleaseWriter(f"sqlite:///{new}", "rel") as writer:  # the streamed path's
        writer.write(pa.Table.from_pandas(_people(), preserve_index=False))
        assert new.exists()
    assert list(tmp_path.iterdir()) == []  # not committed: rolled back and removed
    monkeypatch.setattr(pd.DataFrame, "to_sql", broken)
    with pytest.raises(OutputError):
        sql.write_sql_release(f"sqlite:///{new}", "rel", _people(), replace=False)
    assert list(tmp_path.iterdir()) == []


# friction -----------------------------------------------------------------------------------


def test_report_reads_a_database_release_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database-to-database release gets the full report: --release-table names the table
    (a renamed release too); without a database RELEASE it is one line, exit 2."""
    url = _sqlite(tmp_path)
    manifest = tmp_path / "m.json"
    code, _, err = run(["anonymize", url, "--table", "h37_people", "-o", url, "--output-table",
                        "rel", "--report", str(manifest), *ROLES], capsys)  # fmt: skip
    assert code == 0, err
    _sql(url, "ALTER TABLE rel RENAME TO published")
    html = tmp_path / "r.html"
    code, out, err = run(["report", url, url, "--release-table", "published", "--manifest",
                          str(manifest), "-o", str(html)], capsys)  # fmt: skip
    assert code == 0, err
    assert "claims: re-verified" in out and "unchecked" not in out
    code, out, err = run(["report", "--release-table", "published", "--manifest",
                          str(manifest), "-o", str(tmp_path / "r2.html")], capsys)  # fmt: skip
    _refused(code, out, err, "--release-table")


def test_l_diversity_with_missing_qis_does_not_suggest_the_method_in_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    people = _people().assign(dx=lambda f: np.where(f["visits"] % 3 == 0, "flu", "gout"))
    people["age"] = people["age"].astype("Int64")
    people.loc[3, "age"] = pd.NA  # NULL
    _load(url, "h37_people", people)
    code, o, err = run(["anonymize", url, "--table", "h37_people", "-o", str(tmp_path / "r.csv"),
                        *ROLES, "--sensitive", "dx", "--l", "2", "--method", "hungarian"],
                       capsys)  # fmt: skip
    _refused(code, o, err, "--drop-missing")
    assert "method hungarian" not in err and "or method" not in err
