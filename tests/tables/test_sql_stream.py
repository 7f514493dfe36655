"""The streamed path from a database (issue 30): a table or query read in batches through a
server-side cursor (``tables.io.sql.iter_sql_batches``) into ``tables.streamed``, against a
real PostgreSQL server started here and SQLite files. The release equals the one streamed
from a Parquet file of the same rows in the same order; the password is never recorded."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.io import CsvOptions
from anonymatch.tables.io.sql import iter_sql_batches, redact_url
from anonymatch.tables.io.stream import count_rows, iter_table_batches
from tests import pgserver

sqlalchemy = pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")

QI = ["--qi", "age,zip,sex", "--numeric", "age", "-k", "4", "--seed", "5"]
STREAMED = ["--method", "hungarian", "--executor", "inline", "--chunk-rows", "400", "-q"]


def _engine(url: str) -> sqlalchemy.Engine:
    return sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def _people(n: int, seed: int = 0) -> pd.DataFrame:
    """A generated table: an id, QIs age (numeric, some NULL), zip (integer categories, one
    NULL), sex, and a sensitive diagnosis."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "id": np.arange(n),
            "age": pd.array(rng.integers(18, 90, n), dtype="Int64"),
            "zip": pd.array(rng.integers(100, 104, n), dtype="Int64"),
            "sex": rng.choice(["f", "m"], n),
            "dx": rng.choice(["flu", "asthma", "gout", "none"], n),
        }
    )
    frame.loc[[3, n - 2], "age"] = pd.NA
    frame.loc[n // 2, "zip"] = pd.NA
    return frame


def _load(url: str, name: str, frame: pd.DataFrame) -> None:
    engine = _engine(url)
    frame.to_sql(name, engine, index=False, if_exists="replace")
    engine.dispose()


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_batches_come_from_a_server_side_cursor(postgres: str) -> None:
    """Batches of at most ``batch_rows`` rows, one schema throughout (integers stay integers
    in a batch with a NULL; a uuid column is text), fetched with FETCH from a named cursor:
    while the first batch is held, the server is in the middle of the cursor."""
    url = pgserver.url(postgres)
    frame = _people(1_300)
    frame["token"] = [uuid.UUID(int=i) for i in range(len(frame))]
    engine = _engine(url)
    frame.to_sql("people", engine, index=False, dtype={"token": sqlalchemy.Uuid()})
    batches = iter_sql_batches(url, query="SELECT * FROM people ORDER BY id", batch_rows=500)
    first = next(batches)
    with engine.connect() as c:
        queries = [
            str(q)
            for (q,) in c.exec_driver_sql(
                "SELECT query FROM pg_stat_activity WHERE usename = 'steward' "
                "AND pid <> pg_backend_pid()"
            )
        ]
    engine.dispose()
    assert any(q.upper().startswith("FETCH") for q in queries), queries
    rest = list(batches)
    assert [b.num_rows for b in (first, *rest)] == [500, 500, 300]
    assert all(b.schema == first.schema for b in rest)
    assert str(first.schema.field("zip").type) == "int64"
    assert str(first.schema.field("token").type) == "string"
    back = pd.concat([b.to_pandas() for b in (first, *rest)], ignore_index=True)
    assert back["token"].tolist() == [str(t) for t in frame["token"]]
    assert back["age"].isna().sum() == 2 and back["zip"].isna().sum() == 1
    assert count_rows(url, CsvOptions(table="people")) == 1_300


def test_streamed_release_from_postgresql_equals_parquet(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same rows in the same order (ORDER BY id) give the same streamed release as from a
    Parquet file, verified partition by partition; the manifest names the query and the URL
    without its password, and ``verify`` re-reads the original from the database."""
    url = pgserver.url(postgres)
    frame = _people(2_000, seed=1)
    _load(url, "people2", frame)
    frame.to_parquet(tmp_path / "people.parquet", index=False)
    query = "SELECT * FROM people2 ORDER BY id"
    manifest = tmp_path / "m.json"
    code, out, err = run(
        ["anonymize", url, "--query", query, "-o", str(tmp_path / "db.csv"), *QI, *STREAMED]
        + ["--report", str(manifest)],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(
        ["anonymize", str(tmp_path / "people.parquet"), "-o", str(tmp_path / "pq.csv")]
        + [*QI, *STREAMED],
        capsys,
    )
    assert code == 0, err
    from_db = (tmp_path / "db.csv").read_text()
    assert from_db == (tmp_path / "pq.csv").read_text()
    text = manifest.read_text()
    assert pgserver.PASSWORD not in text + out + err
    m = json.loads(text)
    assert m["input"]["query"] == query and m["input"]["path"] == redact_url(url)
    assert m["input"]["sha256"] is None and m["output"]["layout"] == "partitioned"
    assert m["input"]["records"] == 2_000
    released = pd.read_csv(tmp_path / "db.csv", dtype=str, keep_default_na=False)
    assert "100.0" not in set(released["zip"])  # integer categories, NULL or not
    code, out, err = run(
        ["verify", url, str(tmp_path / "db.csv"), "--query", query, "-k", "4"]
        + ["--qi", "age,zip,sex", "--numeric", "age", "--manifest", str(manifest)],
        capsys,
    )
    assert code == 0, err + out
    assert pgserver.PASSWORD not in out + err


def test_streamed_refusals_one_line(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query with no rows, a missing table and a bad query: exit 2, one line, no password."""
    url = pgserver.url(postgres)
    _load(url, "people3", _people(50))
    out = str(tmp_path / "r.csv")
    cases = [
        (["--query", "SELECT * FROM people3 WHERE id < 0"], "has no rows"),
        (["--table", "absent"], "no table 'absent'"),
        (["--query", "SELECT nope FROM people3"], "cannot read the query"),
    ]
    for source, expected in cases:
        code, _, err = run(["anonymize", url, *source, "-o", out, *QI, *STREAMED], capsys)
        assert code == 2, err
        errors = [line for line in err.splitlines() if "error:" in line]
        assert expected in err and len(errors) == 1, err
        assert pgserver.PASSWORD not in err
        assert not Path(out).exists()


def test_a_column_changing_type_is_refused(tmp_path: Path) -> None:
    """SQLite types values, not columns: a column of integers in the first batch and text
    later is refused naming it (not published half-converted); text first takes anything."""
    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    engine = _engine(url)
    with engine.begin() as c:
        c.exec_driver_sql("CREATE TABLE t (a, b)")
        c.exec_driver_sql("INSERT INTO t VALUES " + ",".join(f"({i}, 'x{i}')" for i in range(10)))
        c.exec_driver_sql("INSERT INTO t VALUES ('eleven', 12)")
    engine.dispose()
    with pytest.raises(InputError, match="column 'a' .* changes type after row 10"):
        list(iter_sql_batches(url, table="t", batch_rows=10))
    batches = list(iter_table_batches(url, CsvOptions(query="SELECT b FROM t"), 10))
    assert batches[1].column("b").to_pylist() == ["12"]


def _job(tmp_path: Path, input_keys: str, output_keys: str) -> Path:
    job = tmp_path / "job.toml"
    job.write_text(
        f"""schema = "anonymatch-job/1"
[input]
{input_keys}
[columns]
age = {{ role = "qi", type = "numeric" }}
zip = {{ role = "qi" }}
sex = {{ role = "qi" }}
dx = {{ role = "sensitive" }}
[model]
k = 4
l = 1
[output]
{output_keys}
"""
    )
    return job


def test_job_file_reads_and_writes_databases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``input.table``/``input.query`` and ``output.table`` in a job file (``--config``); a
    relative SQLite path is the job file's; ``verify --manifest`` re-reads the original from
    the table or query the manifest records, with no --table/--query given."""
    data = tmp_path / "data"
    data.mkdir()
    _load(f"sqlite:///{data / 'people.db'}", "people", _people(300, seed=2))
    monkeypatch.chdir(tmp_path)  # relative paths are the job file's, not the working directory
    job = _job(
        data,
        'path = "sqlite:///people.db"\nquery = "SELECT * FROM people ORDER BY id"',
        'path = "sqlite:///people.db"\ntable = "release"\nreport = "m.json"',
    )
    code, _, err = run(["anonymize", "--config", str(job), "--executor", "threads", "-q"], capsys)
    assert code == 0, err
    url = f"sqlite:///{data / 'people.db'}"
    engine = _engine(url)
    release = pd.read_sql_table("release", engine)
    engine.dispose()
    assert len(release) == 300 and release.groupby(["age", "zip", "sex"]).size().min() >= 1
    manifest = json.loads((data / "m.json").read_text())
    assert manifest["input"]["query"] == "SELECT * FROM people ORDER BY id"
    assert manifest["output"]["table"] == "release"
    release.to_csv(tmp_path / "release.csv", index=False)
    code, out, err = run(
        ["verify", url, str(tmp_path / "release.csv"), "--manifest", str(data / "m.json")],
        capsys,
    )
    assert code == 0, err + out
    code, out, err = run(  # the command line's --table wins over the recorded query
        ["verify", url, str(tmp_path / "release.csv"), "--manifest", str(data / "m.json")]
        + ["--table", "people"],
        capsys,
    )
    assert code == 0, err + out


@pytest.mark.parametrize(
    ("input_keys", "output_keys", "message"),
    [
        ('path = "people.csv"\ntable = "t"', "", "input.table: reads a database path"),
        ('path = "sqlite:///x.db"', "", "input.path: a database path needs table or query"),
        ('path = "sqlite:///x.db"\ntable = "t"\nquery = "select 1"', "", "input.query: give"),
        ('path = "people.csv"\nsheet = "S"', "", "input.sheet: reads an Excel path"),
        ('path = "people.csv"', 'path = "r.csv"\ntable = "t"', "output.table: writes to a"),
        ('path = "people.csv"', 'path = "sqlite:///r.db"', "output.path: a database path needs"),
    ],
)
def test_job_file_database_keys_are_checked(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    input_keys: str,
    output_keys: str,
    message: str,
) -> None:
    job = _job(tmp_path, input_keys, output_keys)
    code, _, err = run(["anonymize", "--config", str(job)], capsys)
    assert code == 2 and message in err, err


def test_duckdb_file_in_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A DuckDB file (duckdb-engine) works like SQLite: read whole or streamed, the release
    written to a table in one transaction, an existing one refused without --force."""
    pytest.importorskip("duckdb_engine", reason="the sql extra (duckdb-engine) is missing")
    url = f"duckdb:///{tmp_path / 'people.duckdb'}"
    frame = _people(600, seed=3)
    _load(url, "people", frame)
    args = ["anonymize", url, "--table", "people", "-o", url, "--output-table", "rel", *QI]
    code, _, err = run([*args, "--executor", "threads", "-q"], capsys)
    assert code == 0, err
    engine = _engine(url)
    release = pd.read_sql("SELECT * FROM rel", engine)  # no reflection: duckdb-engine lacks it
    engine.dispose()
    assert len(release) == 600 and list(release.columns) == list(frame.columns)
    code, _, err = run([*args, "-q"], capsys)
    assert code == 2 and "already exists" in err
    out = tmp_path / "streamed.csv"
    code, _, err = run(
        ["anonymize", url, "--query", "SELECT * FROM people ORDER BY id", "-o", str(out)]
        + [*QI, *STREAMED],
        capsys,
    )
    assert code == 0, err
    frame.to_parquet(tmp_path / "people.parquet", index=False)
    code, _, err = run(
        ["anonymize", str(tmp_path / "people.parquet"), "-o", str(tmp_path / "pq.csv")]
        + [*QI, *STREAMED],
        capsys,
    )
    assert code == 0, err
    assert out.read_text() == (tmp_path / "pq.csv").read_text()


def test_init_drafts_a_job_from_a_database_and_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``infer_job(SqlSource(...))``: a sample read with LIMIT; the draft names the URL
    without its password and the table, validates, and runs with ``--config``."""
    from anonymatch.app.infer import infer_job
    from anonymatch.app.jobfile import render_toml
    from anonymatch.tables.io.sql import SqlSource, without_password

    assert without_password("postgresql://ann:pw@h/db?password=x") == "postgresql://ann@h/db"
    url = f"sqlite:///{tmp_path / 'people.db'}"
    _load(url, "people", _people(200, seed=4).drop(columns="id"))
    job = infer_job(SqlSource(url, table="people"), k=4, job_dir=tmp_path)
    assert job.input.path == url and job.input.table == "people"
    assert "age" in job.qi and "sex" in job.qi
    (tmp_path / "job.toml").write_text(render_toml(job))
    code, _, err = run(["anonymize", "--config", str(tmp_path / "job.toml"), "-q"], capsys)
    assert code == 0, err
    assert (tmp_path / "people_k4.csv").exists()


def test_streamed_release_into_a_table_in_one_transaction(
    postgres: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The streamed path writes ``--output-table`` batch by batch in one transaction: the
    same rows as the streamed CSV release; a failure after some batches were inserted leaves
    no table (and an existing one as it was)."""
    from anonymatch.tables.io import sql

    url = pgserver.url(postgres)
    _load(url, "people5", _people(1_500, seed=5))
    query = ["--query", "SELECT * FROM people5 ORDER BY id"]
    manifest = tmp_path / "m.json"
    code, out, err = run(
        ["anonymize", url, *query, "-o", url, "--output-table", "rel5", *QI, *STREAMED]
        + ["--report", str(manifest)],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(
        ["anonymize", url, *query, "-o", str(tmp_path / "r.csv"), *QI, *STREAMED], capsys
    )
    assert code == 0, err
    engine = _engine(url)
    table = pd.read_sql("SELECT * FROM rel5", engine).astype(str)
    from_csv = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(table.replace("None", ""), from_csv, check_dtype=False)
    m = json.loads(manifest.read_text())
    assert m["output"]["table"] == "rel5" and m["output"]["layout"] == "partitioned"
    assert pgserver.PASSWORD not in manifest.read_text() + out + err
    calls = {"n": 0}
    real = sql.SqlReleaseWriter.write

    def failing(self: sql.SqlReleaseWriter, batch: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        real(self, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(sql.SqlReleaseWriter, "write", failing)
    for target, force in (("fresh5", []), ("rel5", ["--force"])):
        calls["n"] = 0
        code, _, err = run(
            ["anonymize", url, *query, "-o", url, "--output-table", target, *QI, *STREAMED] + force,
            capsys,
        )
        assert code != 0 and calls["n"] == 2, err
    assert not sqlalchemy.inspect(engine).has_table("fresh5")
    assert len(pd.read_sql("SELECT * FROM rel5", engine)) == 1_500  # the old release, whole
    engine.dispose()


def test_init_command_reads_a_database(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``anonymatch init URL --table T``: the draft holds the URL without its password; the
    job runs with the password from PGPASSWORD. --table with a file, or a URL alone, is one
    line and exit 2."""
    url = pgserver.url(postgres)
    _load(url, "people6", _people(120, seed=6).drop(columns="id"))
    job = tmp_path / "job.toml"
    code, _, err = run(["init", url, "--table", "people6", "-k", "4", "-o", str(job)], capsys)
    assert code == 0, err
    text = job.read_text()
    assert pgserver.PASSWORD not in text + err and 'table = "people6"' in text
    code, _, err = run(["init", url, "-o", str(tmp_path / "j2.toml")], capsys)
    assert code == 2 and "--table" in err and "--query" in err, err
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    code, _, err = run(["init", str(tmp_path / "t.csv"), "--table", "x"], capsys)
    assert code == 2 and "database URL" in err, err
