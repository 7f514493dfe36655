"""The sidecar's typing travels with a database release (issue 30): a release written to
``--output-table`` carries the typing a CSV release's ``.schema.json`` carries — column and
table comments on PostgreSQL (a real server started here), a companion table
``T__anonymatch`` on SQLite — written in the release's transaction, and
``read_release(URL, table=T)`` types ordinal, date, hierarchy, numeric and kept cells exactly as
the CSV + sidecar round trip does (in-memory and streamed paths)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.io.release import read_release
from tests import pgserver

sqlalchemy = pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")

ORDER = "S|M|L|XL"


def _engine(url: str) -> sqlalchemy.Engine:
    return sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def _people(n: int, seed: int) -> pd.DataFrame:
    """Generated rows with every typed QI: age (numeric), size (ordinal), day (date by month),
    work (a hierarchy), and kept columns dx (text) and cost (integers written as text)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 70, n).astype(str),
            "size": rng.choice(ORDER.split("|"), n),
            "day": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 700, n), "D"))
            .strftime("%Y-%m-%d")
            .to_numpy(),
            "work": rng.choice(["a1", "a2", "b1", "b2", "c1"], n),
            "dx": rng.choice(["x", "y", "z"], n),
            "cost": rng.integers(100, 900, n).astype(str),
        }
    )


def _args(tmp_path: Path) -> list[str]:
    tree = tmp_path / "work.csv"
    tree.write_text("a1;a;*\na2;a;*\nb1;b;*\nb2;b;*\nc1;c;*\n")
    return ["-k", "4", "--qi", "age,size,day,work", "--numeric", "age", "--ordinal",
            f"size={ORDER}", "--date", "day=month", "--hierarchy", f"work={tree}",
            "--sensitive", "dx", "--seed", "3", "-q"]  # fmt: skip


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 0, err


def _round_trips(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], path: list[str]
) -> pd.DataFrame:
    """The release of the table ``people`` written to ``rel`` and to a CSV file on the same
    path with the same seed, both read back typed; asserted equal. Returns the typed one."""
    engine = _engine(url)
    _people(300, seed=1).to_sql("typed_people", engine, index=False, if_exists="replace")
    engine.dispose()
    common = [*_args(tmp_path), *path, "--force"]  # the server is shared by the tests
    to_table = ["-o", url, "--output-table", "typed_rel"]
    _run(["anonymize", url, "--table", "typed_people", *to_table, *common], capsys)
    csv = tmp_path / "rel.csv"
    _run(["anonymize", url, "--table", "typed_people", "-o", str(csv), *common], capsys)
    from_db = read_release(url, table="typed_rel")
    from_csv = read_release(csv)
    _assert_same(from_db, from_csv)
    assert from_db.attrs == from_csv.attrs
    for ranges in ("interval", "bounds"):
        _assert_same(
            read_release(url, table="typed_rel", ranges=ranges), read_release(csv, ranges=ranges)
        )
    assert str(from_db["size"].dtype) == "interval[int64, both]"
    assert str(from_db["day"].dtype).startswith("interval[datetime64")
    if "mondrian" in path:  # the streamed path's sidecar leaves kept columns text
        assert from_db["cost"].dtype == np.int64
    nodes = {cell for cell in from_db["work"] if cell is not pd.NA}
    assert all(isinstance(cell, frozenset) or "~" in str(cell) for cell in nodes)
    return from_db


def _assert_same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    """Equal typed releases (value-set columns compared cell by cell: pandas' frame check
    cannot compare frozensets)."""
    assert list(left.columns) == list(right.columns)
    for name in left.columns:
        if left[name].dtype == object:
            assert right[name].dtype == object
            assert left[name].tolist() == right[name].tolist(), name
        else:
            pd.testing.assert_series_equal(left[name], right[name])


def _check_typed(typed: pd.DataFrame, original: pd.DataFrame) -> None:
    """Every person's size and day lie in some published row's cells (a worked property)."""
    order = ORDER.split("|")
    ranks = original["size"].map(order.index)
    assert typed["size"].array.left.min() <= ranks.min()
    assert typed["size"].array.right.max() >= ranks.max()
    days = pd.to_datetime(original["day"])
    assert typed["day"].array.left.min() <= days.min() < typed["day"].array.right.max()


def test_postgresql_release_keeps_its_typing(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL: the typing is the table comment (the whole sidecar) and one comment per
    column (its description); a release read back is typed like the CSV + sidecar one."""
    url = pgserver.url(postgres)
    typed = _round_trips(url, tmp_path, capsys, ["--method", "mondrian"])
    _check_typed(typed, _people(300, seed=1))
    engine = _engine(url)
    inspector = sqlalchemy.inspect(engine)
    sidecar = json.loads(inspector.get_table_comment("typed_rel")["text"])
    assert json.loads((tmp_path / "rel.csv.schema.json").read_text()) == sidecar
    comments = {c["name"]: json.loads(c["comment"]) for c in inspector.get_columns("typed_rel")}
    engine.dispose()
    assert comments["size"]["order"] == ORDER.split("|")
    assert comments["day"]["granularity"] == "month"
    assert comments["work"]["hierarchy"]["file"] == "work.csv"
    # verify reads the release side from the database too (--release-table)
    args = [a for a in _args(tmp_path) if a not in ("--seed", "3", "--sensitive", "dx")]
    code = main(
        ["verify", url, url, "--table", "typed_people", "--release-table", "typed_rel", *args]
    )
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("PASS"), err
    assert pgserver.PASSWORD not in out + err
    code = main(["verify", url, url, "--table", "typed_people", *args])
    out, err = capsys.readouterr()
    assert code == 2 and "needs --release-table" in err and pgserver.PASSWORD not in err


def test_streamed_postgresql_release_keeps_its_typing(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The streamed path (SqlReleaseWriter) stores the same typing in its transaction."""
    url = pgserver.url(postgres)
    streamed = ["--method", "hungarian", "--executor", "inline", "--chunk-rows", "100"]
    _round_trips(url, tmp_path, capsys, streamed)


def test_sqlite_release_keeps_its_typing_in_a_companion_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SQLite: the companion table ``typed_rel__anonymatch`` holds the sidecar; replaced with the
    release under --force; a table without typing needs the manifest."""
    url = f"sqlite:///{tmp_path / 'people.db'}"
    _round_trips(url, tmp_path, capsys, ["--method", "mondrian"])
    engine = _engine(url)
    stored = pd.read_sql("SELECT sidecar FROM typed_rel__anonymatch", engine)
    assert len(stored) == 1
    assert json.loads(stored["sidecar"][0]) == json.loads(
        (tmp_path / "rel.csv.schema.json").read_text()
    )
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE typed_rel__anonymatch")
    engine.dispose()
    with pytest.raises(InputError, match="no stored typing"):
        read_release(url, table="typed_rel")
    with pytest.raises(InputError, match="needs its `table`"):
        read_release(url)


def test_checking_commands_read_a_database_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify, risk and evaluate read the release from a database table (--release-table) as
    they read it from its CSV twin: the same verdict and the same figures."""
    people = tmp_path / "people.csv"
    frame = _people(120, seed=4)
    frame.to_csv(people, index=False)
    url = f"sqlite:///{tmp_path / 'rel.db'}"
    roles = ["-k", "3", "--qi", "age,size", "--numeric", "age", "--sensitive", "dx"]
    _run(["anonymize", str(people), "-o", url, "--output-table", "rel", *roles,
          "--seed", "2", "-q"], capsys)  # fmt: skip
    _run(["anonymize", str(people), "-o", str(tmp_path / "rel.csv"), *roles,
          "--seed", "2", "-q"], capsys)  # fmt: skip
    figures = {}
    for source in ([url, "--release-table", "rel"], [str(tmp_path / "rel.csv")]):
        for command, extra in (("risk", roles[2:]), ("evaluate", roles[2:6])):
            code = main([command, str(people), *source, *extra, "--json"])
            out, err = capsys.readouterr()
            assert code == 0, err
            figures.setdefault(command, []).append(json.loads(out))
        assert main(["verify", str(people), *source, *roles, "-q"]) == 0
        capsys.readouterr()
    assert figures["risk"][0]["release"] == figures["risk"][1]["release"]
    (db_loss,), (csv_loss,) = (f.values() for f in figures["evaluate"])
    assert db_loss == csv_loss
    assert main(["risk", str(people), str(tmp_path / "rel.csv"), "--release-table", "rel",
                 *roles[2:]]) == 2  # fmt: skip
    assert "reads a release from a database URL" in capsys.readouterr().err


def test_report_reads_a_database_original_by_its_recorded_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report ORIGINAL-URL RELEASE --manifest M re-reads the table the manifest records and
    re-verifies the claim; a manifest without a table or query is refused in one line."""
    url = f"sqlite:///{tmp_path / 'people.db'}"
    engine = _engine(url)
    _people(90, seed=5).to_sql("people", engine, index=False)
    engine.dispose()
    release, manifest = tmp_path / "rel.csv", tmp_path / "m.json"
    roles = ["-k", "3", "--qi", "age,size", "--numeric", "age", "--sensitive", "dx", "-q"]
    _run(["anonymize", url, "--table", "people", "-o", str(release), "--report",
          str(manifest), *roles], capsys)  # fmt: skip
    html = tmp_path / "r.html"
    _run(["report", url, str(release), "--manifest", str(manifest), "-o", str(html)], capsys)
    assert "re-ran the verifier" in html.read_text()
    document = json.loads(manifest.read_text())
    del document["input"]["table"]
    manifest.write_text(json.dumps(document))
    code = main(["report", url, str(release), "--manifest", str(manifest), "-o", str(html),
                 "--force"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "records no table or query" in err and err.count("\n") == 1
