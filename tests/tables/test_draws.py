"""Plain draws of a release and estimates written as text (issue 39; tables/models/draws.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.tables.io.cells import write_release
from anonymatch.tables.io.release import read_release
from anonymatch.tables.models.draws import (
    combine,
    complete_data,
    parse_estimate,
    plain_draws,
    write_table,
)
from anonymatch.tables.models.imputation import ols, rubin_combine


def people(n: int = 90, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 70, n)
    sex = rng.choice(["F", "M"], n)
    edu = rng.choice(["low", "mid", "high"], n)
    hours = 20 + 0.3 * age + 5 * (sex == "M") + rng.normal(0, 2, n)
    return pd.DataFrame({"age": age, "sex": sex, "edu": edu, "hours": hours.round(1)})


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = people()
    result = anonymatch.anonymize(
        df, k=4, qi="age,sex,edu", numeric="age", ordinal={"edu": ["low", "mid", "high"]}, seed=3
    )
    out = tmp_path_factory.mktemp("rel") / "r.csv"
    write_release(out, result.release, result.cells, result.qi)
    return df, read_release(out)


def test_each_drawn_row_lies_in_its_published_row(released: tuple) -> None:
    df, rel = released
    for weights in ("uniform", "anchored"):
        for table in plain_draws(rel, 3, weights=weights, degree=4, seed=1):
            assert list(table.columns) == list(rel.columns)
            lo, hi = rel["age"].array.left, rel["age"].array.right
            assert ((table["age"] >= lo) & (table["age"] <= hi)).all()
            assert table["age"].dtype == np.int64
            assert all(s in cell for s, cell in zip(table["sex"], rel["sex"], strict=True))
            ranks = {"low": 0, "mid": 1, "high": 2}  # ordinal: labels back, inside the range
            r = table["edu"].map(ranks).to_numpy()
            assert ((r >= rel["edu"].array.left) & (r <= rel["edu"].array.right)).all()
            assert table["hours"].tolist() == rel["hours"].tolist()  # kept columns untouched


def test_set_labels_come_back_as_numbers_when_they_all_are() -> None:
    rel = pd.DataFrame({"code": [frozenset({"1", "3"}), frozenset({"2"})], "y": [1, 2]})
    rel.attrs.update(qi=["code"], ranges=[])
    (table,) = plain_draws(rel, 1, weights="uniform", seed=0)
    assert table["code"].dtype == np.int64 and table["code"].iloc[1] == 2


def test_refusals() -> None:
    rel = pd.DataFrame({"y": [1.0]})
    with pytest.raises(InputError, match="no quasi-identifier"):
        plain_draws(rel, 2, weights="uniform")
    rel.attrs["qi"] = ["y"]
    with pytest.raises(InputError, match="weights"):
        plain_draws(rel, 2, weights="midpoint")


@pytest.mark.parametrize(
    "text",
    [
        "mean(age",
        "mean()",
        "__import__('os')",
        "ols(y ~ )",
        "ols(y ~ x + x)",
        "ols(y ~ y)",
        "median(age)",
        "mean(age) + 1",
    ],
)
def test_estimates_are_parsed_strictly(text: str) -> None:
    with pytest.raises(InputError, match="cannot read the estimate"):
        parse_estimate(text)


def test_parse_forms() -> None:
    assert parse_estimate(" mean( age ) ").column == "age"
    spec = parse_estimate("ols(hours per week ~ age + sex)")
    assert (spec.column, spec.terms) == ("hours per week", ("age", "sex"))
    assert parse_estimate("proportion(sex=F)").value == "F"


def test_rubin_on_a_known_case() -> None:
    """Two tables whose means are 2 and 3: Q̄ = 2.5, B = 0.5, U = s²/n = 1/3, T = U + 1.5 B."""
    tables = [pd.DataFrame({"x": [1.0, 2.0, 3.0]}), pd.DataFrame({"x": [2.0, 3.0, 4.0]})]
    r = combine(tables, "mean(x)")["mean(x)"]
    assert r.estimate == 2.5 and r.between == pytest.approx(0.5)
    assert r.within == pytest.approx(1 / 3)
    assert r.std_error == pytest.approx(np.sqrt(1 / 3 + 1.5 * 0.5))
    assert r.fraction_missing == pytest.approx(0.75 / (1 / 3 + 0.75))
    assert r.interval[0] < 2.5 < r.interval[1]


def test_ols_with_a_text_regressor_matches_indicator_coding() -> None:
    df = people(200, 5)
    (res,) = [combine([df, df], "ols(hours ~ age + sex)")]
    assert list(res) == ["(intercept)", "age", "sex[M]"]
    x = np.column_stack([df["age"], (df["sex"] == "M").astype(float)])
    coef, var = ols(df["hours"].to_numpy(), x)
    assert res["sex[M]"].estimate == pytest.approx(coef[2])
    assert res["sex[M]"].between == 0 and res["sex[M]"].std_error == pytest.approx(np.sqrt(var[2]))
    assert complete_data(df, parse_estimate("ols(hours ~ age + sex)"))["age"] == pytest.approx(
        coef[1]
    )
    share = combine([df], "proportion(sex = M)")["proportion(sex = M)"]
    assert share.estimate == pytest.approx((df["sex"] == "M").mean())
    same = rubin_combine([coef[1]] * 2, [var[1]] * 2, complete_df=197)
    assert res["age"].interval == pytest.approx(same.interval)


def test_anchored_intervals_cover_the_original_mean(released: tuple) -> None:
    df, rel = released
    tables = plain_draws(rel, 20, weights="anchored", degree=4, seed=7)
    r = combine(tables, "mean(age)")["mean(age)"]
    assert r.interval[0] <= df["age"].mean() <= r.interval[1]
    assert 0 < r.fraction_missing < 1


@pytest.mark.parametrize("ext", [".csv", ".tsv", ".parquet"])
def test_written_tables_read_back(tmp_path, ext: str) -> None:  # type: ignore[no-untyped-def]
    frame = pd.DataFrame({"a": [1, 2], "b": ["=cmd", "x"]})
    path = tmp_path / f"t{ext}"
    write_table(path, frame)
    assert path.exists() and not list(tmp_path.glob(".*"))
    if ext == ".csv":
        assert "'=cmd" in path.read_text()  # the formula guard of CSV releases


# --- draws in the release's format (anonymatch draw; cli/draw.py, write_sql_tables) ---------

DRAW_QI = ["--qi", "age,sex,edu", "--numeric", "age"]


def _released_file(tmp_path: Path, ext: str, frame: pd.DataFrame | None = None) -> Path:
    from anonymatch.cli import main

    df = people() if frame is None else frame
    source = tmp_path / "people.csv"
    df.to_csv(source, index=False)
    out = tmp_path / f"r{ext}"
    code = main(["anonymize", str(source), "-o", str(out), "--k", "4", *DRAW_QI,
                 "--report", str(tmp_path / "r.json"), "-q"])  # fmt: skip
    assert code == 0
    return out


@pytest.mark.parametrize("ext", [".csv", ".tsv", ".parquet", ".xlsx", ".sav", ".dta"])
def test_draws_are_written_in_the_release_format(tmp_path: Path, ext: str) -> None:
    """Each draw is a file of the release's own format, read back with the original's column
    types (numbers as numbers, text as text) and every drawn value inside its cell."""
    from anonymatch.cli import main
    from anonymatch.tables.models.draws import draw_files, read_draw

    release = _released_file(tmp_path, ext)
    out = tmp_path / "draws"
    code = main(["draw", str(release), "-m", "2", "-o", str(out), "--manifest",
                 str(tmp_path / "r.json"), "--seed", "5", "-q"])  # fmt: skip
    assert code == 0
    files = draw_files(out)
    assert [Path(f).name for f in files] == [f"draw_1{ext}", f"draw_2{ext}"]
    typed = read_release(release, tmp_path / "r.json")
    for file in files:
        draw = read_draw(file)
        assert list(draw.columns) == ["age", "sex", "edu", "hours"]
        assert pd.api.types.is_numeric_dtype(draw["age"]) and (draw["age"] % 1 == 0).all()
        assert pd.api.types.is_float_dtype(draw["hours"])
        assert not pd.api.types.is_numeric_dtype(draw["sex"])
        lo, hi = typed["age"].array.left, typed["age"].array.right
        assert ((draw["age"] >= lo) & (draw["age"] <= hi)).all()
        assert all(v in cell for v, cell in zip(draw["sex"], typed["sex"], strict=True))
        assert np.allclose(draw["hours"], pd.to_numeric(typed["hours"]))


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_statistical_draws_keep_the_release_labels(tmp_path: Path, ext: str) -> None:
    """An SPSS/Stata release's variable labels and a kept column's value labels are the
    draws' too: the labelled column is written as its codes with their labels."""
    pyreadstat = pytest.importorskip("pyreadstat")
    from anonymatch.cli import main

    df = people(120, seed=2)
    df["band"] = np.where(df["hours"] > 35, 2.0, 1.0)
    source = tmp_path / f"people{ext}"
    writer = pyreadstat.write_sav if ext == ".sav" else pyreadstat.write_dta
    writer(df, str(source), column_labels=["Age in years", "Sex", "Education", "Hours", "Band"],
           variable_value_labels={"band": {1.0: "part time", 2.0: "full time"}})  # fmt: skip
    release = tmp_path / f"r{ext}"
    assert main(["anonymize", str(source), "-o", str(release), "--k", "4", *DRAW_QI,
                 "--report", str(tmp_path / "r.json"), "-q"]) == 0  # fmt: skip
    out = tmp_path / "draws"
    assert main(["draw", str(release), "-m", "2", "-o", str(out), "--manifest",
                 str(tmp_path / "r.json"), "-q"]) == 0  # fmt: skip
    reader = pyreadstat.read_sav if ext == ".sav" else pyreadstat.read_dta
    frame, meta = reader(str(out / f"draw_1{ext}"))
    assert meta.column_names_to_labels["age"] == "Age in years"
    assert meta.variable_value_labels["band"] == {1: "part time", 2: "full time"}
    assert sorted(set(frame["band"])) == [1.0, 2.0]
    assert pd.api.types.is_numeric_dtype(frame["band"]) and (frame["age"] % 1 == 0).all()
    assert pd.api.types.is_float_dtype(frame["hours"])  # stored as numbers, as in the original


def test_draws_of_a_database_release_are_tables_all_or_none(tmp_path: Path) -> None:
    """A SQLite release's draws are tables NAME_1 … of its database, typed (integers as
    integers); taken tables are refused before anything is written, and a failing write
    creates none of them (one transaction)."""
    import sqlalchemy

    from anonymatch.cli import main
    from anonymatch.core.errors import InputError as Refused
    from anonymatch.tables.io.sql import write_sql_tables

    source = tmp_path / "people.csv"
    people().to_csv(source, index=False)
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["anonymize", str(source), "-o", url, "--output-table", "rel", "--k", "4",
                 *DRAW_QI, "--report", str(tmp_path / "r.json"), "-q"]) == 0  # fmt: skip
    args = ["draw", url, "--release-table", "rel", "-m", "3", "-o", str(tmp_path / "d"),
            "--manifest", str(tmp_path / "r.json"), "--output-table", "drawn", "-q"]  # fmt: skip
    assert main(args) == 0
    engine = sqlalchemy.create_engine(url)
    inspector = sqlalchemy.inspect(engine)
    assert {"drawn_1", "drawn_2", "drawn_3"} <= set(inspector.get_table_names())
    types = {c["name"]: str(c["type"]) for c in inspector.get_columns("drawn_2")}
    assert types["age"] in ("BIGINT", "INTEGER") and types["sex"] == "TEXT"
    meta = json.loads((tmp_path / "d" / "draws.json").read_text())
    assert [t["table"] for t in meta["tables"]] == ["drawn_1", "drawn_2", "drawn_3"]
    assert meta["release"]["table"] == "rel"
    with engine.connect() as connection:
        drawn = pd.read_sql_table("drawn_1", connection)
    typed = read_release(url, table="rel")
    assert len(drawn) == len(typed) and drawn["age"].dtype == np.int64
    lo, hi = typed["age"].array.left, typed["age"].array.right
    assert ((drawn["age"] >= lo) & (drawn["age"] <= hi)).all()
    # taken: refused up front (exit 2), the new directory not left behind
    again = [a if a != str(tmp_path / "d") else str(tmp_path / "e") for a in args]
    assert main(again) == 2 and not (tmp_path / "e").exists()
    # a draw's table never replaces the release table, even with --force
    fresh = [a if a != str(tmp_path / "e") else str(tmp_path / "f") for a in again]
    fresh[fresh.index("drawn")] = "rel"
    assert main([*fresh, "--force"]) == 0  # rel_1 … rel_3: beside the release, not over it
    assert main([*fresh, "--force", "-m", "1"]) == 0
    names = set(sqlalchemy.inspect(engine).get_table_names())
    assert {"rel", "rel_1"} <= names
    # one transaction: the second table taken → the first is not created either
    frame = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(Refused, match="already exists"):
        write_sql_tables(url, {"fresh_1": frame, "drawn_1": frame}, replace=False)
    assert "fresh_1" not in sqlalchemy.inspect(engine).get_table_names()
    engine.dispose()


def test_draw_refuses_what_it_cannot_honour(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from anonymatch.cli import main

    release = _released_file(tmp_path, ".csv")
    capsys.readouterr()
    weird = tmp_path / "r.json.bak"
    weird.write_text("x")
    for args, message in (
        ([str(release), "--output-table", "t"], "--output-table names the draws' tables"),
        ([str(weird)], "cannot write draws in the format of r.json.bak"),
        (["sqlite:///" + str(tmp_path / "x.db")], "give its table (--release-table)"),
    ):
        out = tmp_path / "out"
        code = main(["draw", *args, "-o", str(out), "-m", "2"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and message in err, err
        assert not out.exists()


def test_postgresql_draws_are_tables_of_its_database(
    postgres: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL: the draws are tables of the release's database, created in one
    transaction, kept columns with the release table's types; no password is printed."""
    import sqlalchemy

    from anonymatch.cli import main
    from tests import pgserver

    url = pgserver.url(postgres)
    source = tmp_path / "people.csv"
    people().to_csv(source, index=False)
    assert main(["anonymize", str(source), "-o", url, "--output-table", "draw_rel", "--k", "4",
                 *DRAW_QI, "--report", str(tmp_path / "r.json"), "-q"]) == 0  # fmt: skip
    code = main(["draw", url, "--release-table", "draw_rel", "-m", "2", "-o",
                 str(tmp_path / "d"), "--manifest", str(tmp_path / "r.json")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "draw_rel_draw_1 … draw_rel_draw_2" in out and pgserver.PASSWORD not in out + err
    meta = (tmp_path / "d" / "draws.json").read_text()
    assert pgserver.PASSWORD not in meta
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as connection:
        drawn = pd.read_sql_table("draw_rel_draw_2", connection)
        kinds = {c["name"]: c["type"] for c in sqlalchemy.inspect(connection).get_columns(
            "draw_rel_draw_2")}  # fmt: skip
    engine.dispose()
    assert isinstance(kinds["age"], sqlalchemy.types.Integer)
    assert isinstance(kinds["hours"], sqlalchemy.types.Float | sqlalchemy.types.Numeric)
    assert len(drawn) == 90 and drawn["age"].between(20, 70).all()
