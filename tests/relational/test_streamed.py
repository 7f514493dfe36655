"""The streamed relational path (``anonymatch.relational.streamed``): releases that the
independent verifier passes on the whole joint graph, the same figures as in memory, bad input
refused in one line with nothing written and no temporary file left, even on a cancellation."""

from __future__ import annotations

import json
import signal
import tempfile
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core import lifecycle
from anonymatch.core.errors import InfeasibleError, InputError, VerificationError
from anonymatch.core.params import Execution
from anonymatch.relational import streamed
from anonymatch.relational.io import read_relational, read_release
from anonymatch.relational.job import RelationalJob
from anonymatch.relational.methods import names
from anonymatch.relational.methods.joint import classes
from anonymatch.relational.pipeline import encode, run_job
from anonymatch.relational.streamed import RelationalFiles, anonymize_files
from anonymatch.relational.verify import verify_relational

INLINE = Execution.build(executor="inline", chunk_rows=60)
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "manifest.schema.json"


def frames(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    people = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "town": rng.choice(["a", "b", "c"], n),
        }
    )
    rows = [(f"p{i}", str(c)) for i in range(n) for c in rng.choice(8, rng.integers(0, 3), False)]
    rows += [("p0", "-1"), ("p1", "3"), ("p1", "3")]  # a "no item" code, a repeated row
    return people, pd.DataFrame(rows, columns=["pid", "code"])


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$TMPDIR of the private directories, to see that none is left."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def check(files: RelationalFiles, out: Path, job: RelationalJob) -> None:
    """The written release passes the in-memory verifier on the whole joint graph."""
    people = read_relational(files.people, files.items, "pid", "code", list(files.na_items))
    release = read_release(out, people, job.schema.qi)
    report = verify_relational(release, people, encode(people, job.schema), job.k)
    assert report.passed and report.min_matches_original >= job.k


@pytest.mark.parametrize("method", names())
def test_streamed_and_in_memory_releases_both_verify(
    method: str, tmp_path: Path, private_tmp: Path
) -> None:
    people, items = frames(150)
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    files = RelationalFiles(tmp_path / "people.csv", tmp_path / "items.csv", "pid", "code", ("-1",))
    job = RelationalJob.build(
        dict(k=4, qi=["age", "sex", "town"], numeric=["age"], method=method, seed=1)
    )
    out = tmp_path / "s.jsonl"
    manifest = anonymize_files(files, out, job, INLINE, buckets=3, batch_rows=40)
    check(files, out, job)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(manifest)
    assert manifest["output"]["layout"] == "partitioned"
    assert manifest["plan"] == {"path": "streamed", "partition_size": 150}
    memory = run_job(read_relational(files.people, files.items, "pid", "code", ["-1"]), job)
    assert memory.verification.passed
    for name in ("items", "item_rows", "people_without_items", "duplicates_removed"):
        assert manifest["input"][name] == memory.report["input"][name], name
    if job.method.partitioned:  # the same partitions of the same order: the same graphs
        for name in ("gcp", "mean_uncertain", "mean_max_errors"):
            assert manifest["loss"][name] == pytest.approx(memory.report["loss"][name]), name
    assert not list(private_tmp.iterdir())


@st.composite
def inputs(draw: st.DrawFn) -> tuple[pd.DataFrame, int]:
    n = draw(st.integers(2, 30))
    k = draw(st.integers(1, min(n, 5)))
    rows = []
    for i in range(n):
        age, colour = draw(st.integers(0, 6)), draw(st.sampled_from("rg"))
        codes = draw(st.sets(st.sampled_from("uvwxy"), max_size=3)) or {None}
        rows += [(f"id{i}", age, colour, c) for c in sorted(codes, key=str)]
    if all(r[3] is None for r in rows):
        rows[0] = (*rows[0][:3], "u")
    return pd.DataFrame(rows, columns=["pid", "age", "colour", "code"]), k


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs(), st.sampled_from(names()), st.integers(1, 3))
def test_k_factor_of_streamed_long_tables(
    data: tuple[pd.DataFrame, int], method: str, buckets: int
) -> None:
    """Any long table, any method, any number of buckets: the release has a k-factor."""
    long, k = data
    with tempfile.TemporaryDirectory() as where:
        path, out = Path(where) / "long.parquet", Path(where) / "r.jsonl"
        long.to_parquet(path)
        files = RelationalFiles(path, None, "pid", "code")
        job = RelationalJob.build(
            dict(k=k, qi=["age", "colour"], numeric=["age"], method=method, seed=0)
        )
        if job.method.partitioned:  # several partitions (at most n people each)
            job = job.replace({"partition_size": max(2 * k, 4)})
        run = Execution.build(executor="inline", chunk_rows=7)
        anonymize_files(files, out, job, run, buckets=buckets, batch_rows=5)
        check(files, out, job)


def test_conflicting_attributes_in_a_later_batch(tmp_path: Path, private_tmp: Path) -> None:
    people, items = frames(60)
    long = items.merge(people, on="pid")
    long.loc[len(long) - 1, "town"] = "zz"  # the person's last row: read in the last batch
    person = long.loc[len(long) - 1, "pid"]
    long.to_csv(tmp_path / "long.csv", index=False)
    files = RelationalFiles(tmp_path / "long.csv", None, "pid", "code", ("-1",))
    job = RelationalJob.build(dict(k=3, qi=["age", "sex"], numeric=["age"]))
    out = tmp_path / "r.jsonl"
    with pytest.raises(InputError, match=f"person '{person}' has conflicting values of 'town'"):
        anonymize_files(files, out, job, INLINE, buckets=4, batch_rows=10)
    assert not out.exists() and not list(private_tmp.iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r.jsonl")]


def test_bad_inputs_are_refused(tmp_path: Path, private_tmp: Path) -> None:
    people, items = frames(30)
    job = RelationalJob.build(dict(k=3, qi=["age", "sex"], numeric=["age"]))
    out = tmp_path / "r.jsonl"

    def run(p: pd.DataFrame, i: pd.DataFrame, k: RelationalJob = job) -> None:
        p.to_csv(tmp_path / "p.csv", index=False)
        i.to_csv(tmp_path / "i.csv", index=False)
        files = RelationalFiles(tmp_path / "p.csv", tmp_path / "i.csv", "pid", "code", ("-1",))
        anonymize_files(files, out, k, INLINE, buckets=2, batch_rows=7)

    with pytest.raises(InputError, match="id 'p3' appears on more than one row"):
        run(pd.concat([people, people.iloc[[3]]]), items)
    with pytest.raises(InputError, match="names id 'ghost', which is not in the people table"):
        run(people, pd.concat([items, pd.DataFrame({"pid": ["ghost"], "code": ["1"]})]))
    with pytest.raises(InputError, match="every person's item set is empty"):
        run(people, items.assign(code="-1"))
    with pytest.raises(InputError, match="unknown id column 'pid'.*the items table has"):
        run(people, items.rename(columns={"pid": "nope"}))
    with pytest.raises(InfeasibleError):
        run(people, items, job.replace({"k": 31}))
    assert not out.exists() and not list(private_tmp.iterdir())


def test_a_cancellation_leaves_nothing(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    people, items = frames(100)
    people.to_parquet(tmp_path / "p.parquet")
    items.to_parquet(tmp_path / "i.parquet")
    files = RelationalFiles(tmp_path / "p.parquet", tmp_path / "i.parquet", "pid", "code")
    job = RelationalJob.build(dict(k=3, qi=["age", "sex"], numeric=["age"]))
    route = streamed._route_pairs

    def signalled(*args: object) -> object:
        lifecycle.cancel(signal.SIGTERM)  # as a SIGTERM arriving mid-run does
        return route(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(streamed, "_route_pairs", signalled)
    out = tmp_path / "r.jsonl"
    try:
        with pytest.raises(lifecycle.Interrupted):
            anonymize_files(files, out, job, INLINE, buckets=2)
    finally:
        lifecycle.reset()
    assert not out.exists() and not list(private_tmp.iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r.jsonl")]


def test_command_line(
    tmp_path: Path, private_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    people, items = frames(80)
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    common = [
        str(tmp_path / "people.csv"), "--items", str(tmp_path / "items.csv"), "--id", "pid",
        "--item-column", "code", "--na", "code=-1", "--qi", "age,sex", "--numeric", "age",
    ]  # fmt: skip
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    code = main(
        ["anonymize-rt", *common, "-k", "4", "--stream", "--executor", "inline", "-o", str(out),
         "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0
    manifest = json.loads(report.read_text())
    assert manifest["plan"]["path"] == "streamed" and manifest["input"]["items_path"]
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(manifest)
    assert main(["verify-rt", *common, str(out), "-k", "4", "-q"]) == 0
    bad = tmp_path / "long.csv"
    long = items.merge(people, on="pid")
    long.loc[len(long) - 1, "sex"] = "X"
    long.to_csv(bad, index=False)
    capsys.readouterr()
    rest = ["--id", "pid", "--item-column", "code", "--qi", "age,sex", "-k", "2", "--stream"]
    assert main(["anonymize-rt", str(bad), *rest, "-o", str(tmp_path / "b.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "conflicting values of 'sex'" in err[0]
    assert not (tmp_path / "b.jsonl").exists() and not list(private_tmp.iterdir())
    threads = ["--stream", "--executor", "threads"]
    assert main(["anonymize-rt", *common, "-k", "2", *threads, "-o", str(out), "--force"]) == 2


def test_worker_processes(tmp_path: Path, private_tmp: Path) -> None:
    """Chunks pickled to worker processes give a release that verifies."""
    people, items = frames(120, seed=3)
    people.to_parquet(tmp_path / "p.parquet")
    items.to_parquet(tmp_path / "i.parquet")
    files = RelationalFiles(tmp_path / "p.parquet", tmp_path / "i.parquet", "pid", "code", ("-1",))
    job = RelationalJob.build(dict(k=3, qi=["age", "town"], numeric=["age"], partition_size=40))
    run = Execution.build(executor="processes", workers=2, chunk_rows=40)
    manifest = anonymize_files(files, tmp_path / "r.jsonl", job, run, buckets=2)
    assert manifest["verification"]["partitions"] == 3
    check(files, tmp_path / "r.jsonl", job)
    assert not list(private_tmp.iterdir())


def sensitive_inputs(tmp_path: Path, n: int = 120) -> RelationalFiles:
    people, items = frames(n, seed=5)
    people["disease"] = np.random.default_rng(5).choice(["flu", "cold", "hiv", "gout"], n)
    people.to_csv(tmp_path / "people.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    return RelationalFiles(tmp_path / "people.csv", tmp_path / "items.csv", "pid", "code", ("-1",))


def test_streamed_l_diversity_verifies_with_its_models(tmp_path: Path, private_tmp: Path) -> None:
    """Streamed ℓ = 2 (and t-closeness) releases, partition by partition, pass the independent
    verifier with their models on the whole joint graph, as the in-memory release does."""
    files = sensitive_inputs(tmp_path)
    people = read_relational(files.people, files.items, "pid", "code", ["-1"])
    for models in ({"l": 2}, {"l": 2, "t": 0.6}):
        job = RelationalJob.build(
            dict(k=3, qi=["age", "sex"], numeric=["age"], sensitive=["disease"], partition_size=30,
            seed=2, **models),
        )  # fmt: skip
        out = tmp_path / "s.jsonl"
        manifest = anonymize_files(files, out, job, INLINE, buckets=2, batch_rows=50)
        jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(manifest)
        assert manifest["guarantee"]["sensitive"] == [m.describe() for m in job.models]
        checks = manifest["verification"]["sensitive"]
        assert len(checks) == len(job.models) and all(c["passed"] for c in checks)
        assert manifest["verification"]["partitions"] == 4
        assert checks[0]["worst_l"] >= 2
        release = read_release(out, people, job.schema.qi)
        enc = encode(people, job.schema)
        report = verify_relational(release, people, enc, job.k, models=job.models)
        assert report.passed, report.reason
        memory = run_job(people, job)
        assert memory.verification.passed and memory.verification.sensitive
    assert not list(private_tmp.iterdir())


def test_a_model_no_partition_meets_writes_nothing(
    tmp_path: Path, private_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = sensitive_inputs(tmp_path, 80)
    frame = pd.read_csv(files.people)
    frame["disease"] = np.where(np.arange(80) < 40, "flu", "cold")  # one value per partition
    frame["age"] = np.arange(80)  # everyone holds an item: the first 40 of the order are "flu"
    frame.to_csv(files.people, index=False)
    items = pd.read_csv(files.items, dtype=str)
    extra = pd.DataFrame({"pid": frame["pid"], "code": "7"})
    pd.concat([items, extra]).to_csv(files.items, index=False)
    job = RelationalJob.build(
        dict(k=2, qi=["age"], numeric=["age"], sensitive=["disease"], l=2, partition_size=40)
    )
    out = tmp_path / "r.jsonl"
    with pytest.raises(InfeasibleError, match="partition of people 1–40.*'disease'.*nothing"):
        anonymize_files(files, out, job, INLINE, buckets=2)
    assert not out.exists() and not list(private_tmp.iterdir())
    read = ["--items", str(files.items), "--id", "pid", "--item-column", "code", "--na", "code=-1"]
    model = ["--qi", "age", "--numeric", "age", "--sensitive", "disease", "--l", "2"]
    code = main(
        ["anonymize-rt", str(files.people), *read, *model, "-k", "2", "--partition-size", "40",
         "--stream", "--executor", "inline", "-o", str(out), "-q"]
    )  # fmt: skip
    assert code == 3 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'disease'" in err[0]
    report = tmp_path / "r.json"
    code = main(
        ["anonymize-rt", str(files.people), *read, *model, "-k", "2", "--stream", "--executor",
         "inline", "-o", str(out), "--report", str(report), "-q"]
    )  # fmt: skip
    assert code == 0  # one partition of 80 people mixes both values
    assert json.loads(report.read_text())["verification"]["sensitive"][0]["passed"]
    assert main(["verify-rt", str(files.people), str(out), *read, *model, "-k", "2"]) == 0


def test_the_partition_check_refuses_classes_that_miss_the_model(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain k-classes in place of diverse ones: the per-partition check fails the release
    (exit 4's error) and nothing is written."""
    files = sensitive_inputs(tmp_path, 60)
    frame = pd.read_csv(files.people)
    frame["age"] = np.arange(60)
    frame["disease"] = np.where(np.arange(60) < 30, "flu", "cold")
    frame.to_csv(files.people, index=False)
    job = RelationalJob.build(dict(k=2, qi=["age"], numeric=["age"], sensitive=["disease"], l=2))
    monkeypatch.setattr(
        streamed, "diverse_clusters", lambda qi, k, target, size: (classes(qi, k), 1)
    )
    out = tmp_path / "r.jsonl"
    with pytest.raises(VerificationError, match="partition of people 1–60.*'disease'"):
        anonymize_files(files, out, job, INLINE, buckets=2)
    assert not out.exists() and not list(private_tmp.iterdir())
