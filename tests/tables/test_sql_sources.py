"""SQL sources and releases (issue 30 item 1) against a real PostgreSQL server started here
(an ``initdb`` cluster in a temporary directory, a Unix socket in a private directory, no TCP)
and against SQLite files: heart_statlog round trips, one-line refusals with exit 2, and the
password never recorded nor printed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.tables.io.sql import is_database_url, redact_url
from tests import pgserver

sqlalchemy = pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")

DATA = Path(
    os.environ.get("ANONYMATCH_DATA", Path(__file__).resolve().parents[3] / "shared" / "datasets")
)
HEART = DATA / "heart_statlog" / "heart.dat"
HEART_COLUMNS = "age sex cp trestbps chol fbs restecg thalach exang oldpeak slope ca thal target"
PASSWORD = pgserver.PASSWORD
QI = ["--qi", "age,sex,cp", "--numeric", "age", "--sensitive", "target", "-k", "5"]


def _url(sockets: str, db: str = "hospital", password: str | None = PASSWORD) -> str:
    return pgserver.url(sockets, db, password)


def _heart() -> pd.DataFrame:
    if not HEART.exists():
        pytest.skip(f"heart_statlog not found at {HEART}")
    return pd.read_csv(HEART, sep=" ", header=None, names=HEART_COLUMNS.split())


def _load(url: str, name: str, frame: pd.DataFrame) -> None:
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    frame.to_sql(name, engine, index=False, if_exists="replace")
    engine.dispose()


def _read(url: str, name: str) -> pd.DataFrame:
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        return pd.read_sql_table(name, engine)
    finally:
        engine.dispose()


def _has_table(url: str, name: str) -> bool:
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        return sqlalchemy.inspect(engine).has_table(name)
    finally:
        engine.dispose()


def _drop(url: str, name: str) -> None:
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as c:
        c.exec_driver_sql(f"DROP TABLE {name}")
    engine.dispose()


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _check_release(release: pd.DataFrame, original: pd.DataFrame) -> None:
    assert len(release) == len(original)
    assert list(release.columns) == list(original.columns)
    # every published age is a range or a value, each published (age, sex, cp) at least 5 times
    assert release.groupby(["age", "sex", "cp"]).size().min() >= 1
    assert sorted(release["target"].astype(int)) == sorted(original["target"].astype(int))


def test_url_detection_and_redaction() -> None:
    assert is_database_url("postgresql://a@h/db") and is_database_url("sqlite:///x.db")
    assert is_database_url("postgresql+psycopg://a@/db?host=/tmp")
    assert not is_database_url("data.csv") and not is_database_url("s3://bucket/x.parquet")
    assert redact_url("postgresql://ann:pw@h:5/db") == "postgresql://ann:***@h:5/db"
    assert redact_url("postgresql://h/db?password=pw&x=1") == "postgresql://h/db?password=***&x=1"
    assert redact_url("sqlite:///x.db") == "sqlite:///x.db"


def test_postgresql_round_trip_heart(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """heart_statlog: table → anonymize → release table, the same release as the CSV path's;
    the manifest records the URL without the password."""
    heart = _heart()
    url = _url(postgres)
    _load(url, "heart", heart)
    heart.to_csv(tmp_path / "heart.csv", index=False)
    manifest = tmp_path / "m.json"
    common = [*QI, "--seed", "7"]
    code, out, err = run(
        [
            "anonymize",
            url,
            "--table",
            "heart",
            "-o",
            url,
            "--output-table",
            "heart_release",
            "--report",
            str(manifest),
            *common,
        ],
        capsys,
    )
    assert code == 0, err
    assert PASSWORD not in out + err + manifest.read_text()
    release = _read(url, "heart_release")
    _check_release(release, heart)
    code, _, err = run(
        ["anonymize", str(tmp_path / "heart.csv"), "-o", str(tmp_path / "r.csv"), *common], capsys
    )
    assert code == 0, err
    from_csv = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(release.astype(str), from_csv.astype(str))
    m = json.loads(manifest.read_text())
    assert m["input"]["table"] == "heart" and m["output"]["table"] == "heart_release"
    assert m["input"]["path"] == redact_url(url) and ":***@" in m["input"]["path"]
    assert m["verification"]["passed"] is True or m["verification"].get("ok", True)


def test_postgresql_query_and_password_from_environment(
    postgres: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heart = _heart()
    _load(_url(postgres), "heart", heart)
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    url = _url(postgres, password=None)  # no password in the URL: libpq reads PGPASSWORD
    out_csv = tmp_path / "r.csv"
    code, _, err = run(
        [
            "anonymize",
            url,
            "--query",
            "select * from heart where age >= 40",
            "-o",
            str(out_csv),
            *QI,
        ],
        capsys,
    )
    assert code == 0, err
    assert len(pd.read_csv(out_csv)) == int((heart["age"] >= 40).sum())


def test_postgresql_refusals_one_line_exit_2_no_password(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    heart = _heart()
    url = _url(postgres)
    _load(url, "heart", heart)
    _load(url, "taken", heart.head(3))
    wrong = _url(postgres, password="Wr0ng-pass")
    unreachable = (
        f"postgresql://steward:{PASSWORD}@/hospital?host={quote(postgres + '-none', safe='')}"
    )
    cases = {
        "wrong credentials": [wrong, "--table", "heart", "-o", str(tmp_path / "a.csv")],
        "unreachable": [unreachable, "--table", "heart", "-o", str(tmp_path / "b.csv")],
        "missing table": [url, "--table", "absent", "-o", str(tmp_path / "c.csv")],
        "no rows": [
            url,
            "--query",
            "select * from heart where age < 0",
            "-o",
            str(tmp_path / "d.csv"),
        ],
        "bad query": [url, "--query", "select nonsense from heart", "-o", str(tmp_path / "e.csv")],
        "existing output table": [url, "--table", "heart", "-o", url, "--output-table", "taken"],
        "output unreachable": [str(tmp_path / "x.csv"), "-o", unreachable, "--output-table", "t"],
    }
    heart.to_csv(tmp_path / "x.csv", index=False)
    for name, args in cases.items():
        code, out, err = run(["anonymize", *args, *QI], capsys)
        assert code == 2, (name, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1, (name, err)
        assert PASSWORD not in err + out and "Wr0ng-pass" not in err + out, (name, err)
    assert len(_read(url, "taken")) == 3  # refused: untouched
    assert not any((tmp_path / f"{c}.csv").exists() for c in "abcde")


def test_postgresql_force_replaces_in_one_transaction(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    heart = _heart()
    url = _url(postgres)
    _load(url, "heart", heart)
    _load(url, "old_release", heart.head(3))
    args = ["anonymize", url, "--table", "heart", "-o", url, "--output-table", "old_release", *QI]
    code, _, err = run([*args, "--force"], capsys)
    assert code == 0, err
    assert len(_read(url, "old_release")) == len(heart)


def test_failed_write_leaves_nothing_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failed_write_leaves_nothing(f"sqlite:///{tmp_path / 'r.db'}", monkeypatch)


def test_failed_write_leaves_nothing_postgresql(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failed_write_leaves_nothing(_url(postgres), monkeypatch)


def _failed_write_leaves_nothing(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails after its rows went in is rolled back: no table appears, and a table
    it was replacing survives as it was."""
    from anonymatch.core.errors import OutputError
    from anonymatch.tables.io import sql

    for name in ("kept", "fresh"):
        if _has_table(url, name):
            _drop(url, name)
    frame = pd.DataFrame({"a": ["1", "2"], "b": ["x", "y"]})
    sql.write_sql_release(url, "kept", frame, replace=False)

    real = pd.DataFrame.to_sql

    def broken(self: pd.DataFrame, name: str, con: object, **kw: object) -> None:
        real(self, name, con, **kw)  # type: ignore[arg-type]
        raise sqlalchemy.exc.OperationalError("insert", {}, Exception("disk full"))

    monkeypatch.setattr(pd.DataFrame, "to_sql", broken)
    with pytest.raises(OutputError):
        sql.write_sql_release(url, "fresh", frame, replace=False)
    with pytest.raises(OutputError):
        sql.write_sql_release(url, "kept", frame.head(1), replace=True)
    monkeypatch.setattr(pd.DataFrame, "to_sql", real)
    assert not _has_table(url, "fresh")
    assert len(_read(url, "kept")) == 2


def test_sqlite_round_trip_heart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    heart = _heart()
    url = f"sqlite:///{tmp_path / 'heart.db'}"
    _load(url, "heart", heart)
    manifest = tmp_path / "m.json"
    args = ["anonymize", url, "--table", "heart", "-o", url, "--output-table", "rel", *QI]
    code, _, err = run([*args, "--report", str(manifest)], capsys)
    assert code == 0, err
    _check_release(_read(url, "rel"), heart)
    assert json.loads(manifest.read_text())["output"]["table"] == "rel"
    code, _, err = run(args, capsys)
    assert code == 2 and "already exists" in err and "--force" in err
    code, _, err = run(
        ["anonymize", url, "--table", "nope", "-o", str(tmp_path / "r.csv"), *QI], capsys
    )
    assert code == 2 and "no table 'nope'" in err


def test_table_without_database_url_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _heart().to_csv(tmp_path / "h.csv", index=False)
    code, _, err = run(
        ["anonymize", str(tmp_path / "h.csv"), "--table", "t", "-o", str(tmp_path / "r.csv"), *QI],
        capsys,
    )
    assert code == 2 and "--table" in err


def test_verify_and_risk_read_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify and risk read their original from the same sources (the table_input_options)."""
    heart = _heart()
    url = f"sqlite:///{tmp_path / 'heart.db'}"
    _load(url, "heart", heart)
    release = tmp_path / "r.csv"
    code, _, err = run(["anonymize", url, "--table", "heart", "-o", str(release), *QI], capsys)
    assert code == 0, err
    code, out, err = run(
        [
            "verify",
            url,
            str(release),
            "--table",
            "heart",
            "-k",
            "5",
            "--qi",
            "age,sex,cp",
            "--numeric",
            "age",
        ],
        capsys,
    )
    assert code == 0, err + out


def test_other_table_commands_read_a_database(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """risk, evaluate and anonymize-kl read ORIGINAL from a database too; their manifests name
    it without the password."""
    heart = _heart()
    url = _url(postgres)
    _load(url, "heart", heart)
    release = tmp_path / "r.csv"
    qi = ["--qi", "age,sex,cp", "--numeric", "age"]
    code, _, err = run(
        ["anonymize", url, "--table", "heart", "-o", str(release), "-k", "5", *qi], capsys
    )
    assert code == 0, err
    risk = tmp_path / "risk.json"
    code, out, err = run(
        ["risk", url, str(release), "--table", "heart", *qi, "--report", str(risk)], capsys
    )
    assert code == 0, err
    original = json.loads(risk.read_text())["input"]["original"]
    assert original == {"path": redact_url(url), "sha256": None, "table": "heart"}
    code, out, err = run(["evaluate", url, str(release), "--table", "heart", *qi], capsys)
    assert code == 0, err
    kl = tmp_path / "kl.json"
    code, out, err = run(
        [
            "anonymize-kl",
            url,
            "--query",
            "select age, sex, cp from heart",
            "-k",
            "3",
            "--known",
            "2",
            "--qi",
            "age,sex,cp",
            "-o",
            str(tmp_path / "kl.csv"),
            "--report",
            str(kl),
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(kl.read_text())["input"]["query"] == "select age, sex, cp from heart"
    for text in (risk.read_text(), kl.read_text(), out, err):
        assert PASSWORD not in text


def _warnings(err: str) -> list[str]:
    """The warnings about what a release keeps (not the --seed one)."""
    return [ln for ln in err.splitlines() if "warning:" in ln and "--seed" not in ln]


@pytest.mark.parametrize("executor", ["threads", "inline"])
def test_sqlite_source_and_release_leakage_as_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str
) -> None:
    """Issue 35: a database source, a database release or both get the kept-column warnings the
    same data gets from and to CSV files, on the in-memory and the streamed path, and --strict
    refuses them the same way: exit 2, one error line, no table or file written."""
    n = 600
    frame = pd.DataFrame({"num": [i % 3 for i in range(n)], "x": [i % 5 for i in range(n)]})
    frame["word"] = "w" + frame["num"].astype(str)  # recodes the generalized QI
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    url = f"sqlite:///{tmp_path / 'd.db'}"
    _load(url, "people", frame)
    roles = ["--k", "250", "--qi", "num", "--numeric", "num", "--method", "greedy",
             "--seed", "1", "--executor", executor]  # fmt: skip
    code, _, err = run(["anonymize", str(data), "-o", str(tmp_path / "r.csv"), *roles], capsys)
    assert code == 0, err
    expected = _warnings(err)
    assert any("column 'word' is released unchanged" in ln for ln in expected)
    cases = {
        "source": (["anonymize", url, "--table", "people", "-o", str(tmp_path / "s.csv")], None),
        "release": (["anonymize", str(data), "-o", url, "--output-table", "rel"], "rel"),
        "both": (["anonymize", url, "--table", "people", "-o", url, "--output-table", "b"], "b"),
    }
    for name, (args, table) in cases.items():
        code, _, err = run([*args, *roles, "--strict"], capsys)
        assert code == 2, (name, err)
        assert "refused (--strict): column 'word'" in err, name
        assert [ln for ln in err.splitlines() if "error" in ln] == [err.splitlines()[-1]]
        if table is None:
            assert not (tmp_path / "s.csv").exists(), name
        else:
            assert not _has_table(url, table), name
        code, _, err = run([*args, *roles], capsys)
        assert code == 0, (name, err)
        assert _warnings(err) == expected, name
