"""The leakage check on the streamed path (issue 25): the same figures as the in-memory check on
the written release, a manifest block, warnings, and ``--strict`` refusing with nothing left."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io import read_table
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.risk.headline import headline
from anonymatch.tables.risk.leakage import (
    LeakageReport,
    LeakRefused,
    check_leakage,
    distinct_cells,
)
from anonymatch.tables.streamed import release_frame
from tests.factories import stream_file

QI = ["age", "zip", "sex"]
SCHEMA = Schema.build(QI, ["age"], sensitive=["disease"])


def people(n: int, seed: int) -> pd.DataFrame:
    """QIs age, zip, sex; kept columns that leak (edu is a function of age, rel nearly one of
    sex), one that singles people out (serial), free text (note) and noise."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    rel = np.where(sex == "M", "Husband", "Wife")
    rel[rng.random(n) < 0.005] = "Other"
    return pd.DataFrame(
        {
            "age": age,
            "zip": rng.choice([f"Z{i:02d}" for i in range(8)], n),
            "sex": sex,
            "edu": np.array(["young", "mid", "old"])[np.digitize(age, [30, 55])],
            "rel": rel,
            "serial": rng.permutation(n) * 7 + 1000,
            "note": [f"note number {i} by {w}" for i, w in enumerate(rng.integers(0, 9, n))],
            "noise": rng.integers(0, 4, n),
            "disease": rng.choice(["flu", "cold", "none"], n),
        }
    )


def in_memory_check(source: Path, release: Path) -> dict[str, object]:
    """The in-memory check on the written release, read back as the report reads it."""
    original = read_table(source)
    shown = read_table(release)
    data, enc, _ = prepare(original, SCHEMA)
    return check_leakage(data, enc, parse_cells(shown, enc), shown, SCHEMA).to_dict()


def in_memory_headline(source: Path, release: Path) -> dict[str, object]:
    """The in-memory utility headline of the written release (as the report computes it)."""
    _, enc, _ = prepare(read_table(source), SCHEMA)
    return headline(parse_cells(read_table(release), enc), enc).to_dict()


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(120, 420),
    seed=st.integers(0, 2**16),
    k=st.sampled_from([2, 3, 5]),
    parquet=st.booleans(),
)
def test_streamed_leakage_equals_the_in_memory_check(
    tmp_path: Path, n: int, seed: int, k: int, parquet: bool
) -> None:
    source = tmp_path / f"in-{seed}-{n}.csv"
    people(n, seed).to_csv(source, index=False)
    out = tmp_path / f"out-{seed}-{n}-{k}.{'parquet' if parquet else 'csv'}"
    # l = 1: 'disease' unprotected, as the check compared here does not depend on it (the
    # default l = 2 makes a random partition of 4k people infeasible now and then)
    manifest = stream_file(
        source, out, k, SCHEMA, partition_size=4 * k, chunk_rows=60, executor="inline",
        replace=True, l=1,
    )  # fmt: skip
    assert manifest["verification"]["partitions"] > 1
    assert manifest["leakage"] == in_memory_check(source, out)
    streamed, in_memory = manifest["loss"]["headline"], in_memory_headline(source, out)
    by_qi = "loss_present_by_qi"  # the same cells, summed in another order
    assert streamed.pop(by_qi) == pytest.approx(in_memory.pop(by_qi), rel=1e-12)
    assert streamed.pop("verdict") == in_memory.pop("verdict")
    assert streamed == pytest.approx(in_memory, rel=1e-12)
    assert "leakage" in manifest["seconds"]
    assert LeakageReport.from_dict(manifest["leakage"]).to_dict() == manifest["leakage"]


def test_streamed_leakage_flags_what_leaks(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    people(600, 1).to_csv(source, index=False)
    manifest = stream_file(
        source, tmp_path / "out.csv", 3, SCHEMA, partition_size=12, chunk_rows=150,
        executor="inline",
    )  # fmt: skip
    block = manifest["leakage"]
    assert block["rows"] == 600
    assert {"serial", "note", "edu"} <= set(block["flagged"])
    assert "noise" not in block["flagged"]
    assert [c["column"] for c in block["columns"]] == [
        "edu", "rel", "serial", "note", "noise", "disease"
    ]  # fmt: skip


def test_strict_job_commits_nothing(tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    people(300, 2).to_csv(source, index=False)
    out = tmp_path / "parts"  # a directory of Parquet parts
    with pytest.raises(LeakRefused, match="column 'serial'"):
        stream_file(source, out, 3, SCHEMA, partition_size=12, chunk_rows=60, executor="inline",
                    strict=True)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


@pytest.mark.parametrize("output", ["r.csv", "parts"])
def test_strict_refuses_a_streamed_release_exit_2_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    source = tmp_path / "in.csv"
    people(300, 3).to_csv(source, index=False)
    out = tmp_path / output
    args = ["anonymize", str(source), "-o", str(out), "--k", "3", "--qi", ",".join(QI),
            "--numeric", "age", "--sensitive", "disease", "--chunk-rows", "60",
            "--partition-size", "12", "--executor", "inline"]  # fmt: skip
    code = main([*args, "--strict", "--quiet"])
    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "refused (--strict): column 'edu'" in err and "nothing written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]
    if output == "parts":
        return  # the rest is the same for a directory of parts
    manifest = tmp_path / "m.json"
    code = main([*args, "--quiet", "--report", str(manifest)])  # no --strict: written, warned
    _, err = capsys.readouterr()
    assert code == 0 and "warning: column 'serial' is released unchanged" in err
    assert len(release_frame(out)) == 300
    html = tmp_path / "r.html"  # the report of a streamed release shows the manifest's leakage
    assert (
        main(["report", str(source), str(out), "--manifest", str(manifest), "-o", str(html)]) == 0
    )
    text = html.read_text()
    assert "column released unchanged" in text and "From the manifest" in text
    assert "Leak: Column &#39;serial&#39; is released unchanged" in text
    capsys.readouterr()
    written = sorted(p.name for p in tmp_path.iterdir())
    code = main([*args, "--strict", "--force", "--quiet"])  # the release it would replace stays
    assert code == 2 and "nothing written" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == written
    assert len(release_frame(out)) == 300


def test_distinct_cells_groups_identical_rows() -> None:
    frame = pd.DataFrame({"age": ["1..3", "1..3", "4", "*"], "zip": ["a|b", "a|b", "a", "*"]})
    schema = Schema.build(["age", "zip"], ["age"])
    data = pd.DataFrame({"age": [1, 3, 4, 2], "zip": ["a", "b", "a", "b"]})
    _, enc, _ = prepare(data, schema)
    chunk = distinct_cells(parse_cells(frame, enc))
    assert chunk.cells.n == 3 and chunk.group[0] == chunk.group[1]
    assert len(set(chunk.group.tolist())) == 3


def test_an_all_missing_kept_column_in_a_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the database fuzzing (issue 37): a kept column with no value at all (NULL in a
    SQLite table) made the streamed leakage tally index an empty rule table (an internal
    error)."""
    import sqlite3

    db = tmp_path / "in.db"
    with sqlite3.connect(db) as connection:
        connection.execute('create table people ("x y" integer, z text, w text)')
        rows = [(i % 9, None, f"a{i % 3}") for i in range(30)]
        connection.executemany("insert into people values (?, ?, ?)", rows)
    for executor in ("inline", "threads"):
        code = main(["anonymize", f"sqlite:///{db}", "--table", "people", "--qi", "x y", "-k",
                     "2", "-o", str(tmp_path / f"r-{executor}.csv"), "-q", "--executor",
                     executor, "--chunk-rows", "7"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
