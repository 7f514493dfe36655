"""Sensitive models (ℓ-diversity, t-closeness) on the streamed, partitioned table path: classes
per partition, checked per partition, the whole release checked by the in-memory verifier,
infeasible tables and partitions exit before anything is written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import anonymatch.tables as tables
from anonymatch.cli import main
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.tables import streamed as scale
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.models.disclosure import build_models
from anonymatch.tables.models.sensitive import SensitiveTarget, encode_sensitive
from anonymatch.tables.order import lexicographic_order
from anonymatch.tables.recode import GeneralizedQI, published_groups
from anonymatch.tables.streamed import release_frame, scan_table
from tests.factories import random_frame, stream_file

QI = ["n0", "n1", "c0", "c1"]
NUMERIC = ["n0", "n1"]
SCHEMA = Schema.build(QI, NUMERIC, sensitive=["s"])
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "manifest.schema.json"


def people(n: int = 200, seed: int = 2) -> pd.DataFrame:
    """Three sensitive values that follow the QIs, so plain k-anonymity leaves people whose
    rows all show one value."""
    frame = random_frame(n, seed)
    frame["s"] = np.where(frame["n0"] < 15, "low", np.where(frame["c1"] == "v0", "mid", "high"))
    return frame


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sens") / "people.csv"
    people().to_csv(path, index=False)
    return path


def run(src: Path, out: Path, **kw: object) -> dict[str, object]:
    options: dict[str, object] = {
        "seed": 3,
        "partition_size": 40,
        "chunk_rows": 80,
        "executor": "inline",
    }
    options.update(kw)
    return stream_file(src, out, 3, SCHEMA, **options)


def check(
    src: Path, out: Path, manifest: dict[str, object] | None = None, **model: object
) -> tables.VerificationReport:
    """The in-memory verifier on the whole release (global candidates, no partitions), with
    the ``manifest``'s ring certificate if it has one (every draw of its rings, §6)."""
    original = pd.read_csv(src)
    guarantee = (manifest or {}).get("guarantee")
    certificate = guarantee.get("certificate") if isinstance(guarantee, dict) else None
    return tables.verify(
        original,
        release_frame(out),
        k=3,
        qi=QI,
        numeric=NUMERIC,
        sensitive="s",
        certificate=certificate,
        **model,
    )


@pytest.mark.parametrize("executor", ["inline", "processes"])
def test_streamed_release_satisfies_l_diversity_as_a_whole(
    table: Path, tmp_path: Path, executor: str
) -> None:
    plain = tmp_path / "plain.csv"
    run(table, plain, executor=executor, workers=2, l=1)  # s unprotected: plain k
    assert not check(table, plain, l=2).passed  # plain k leaves homogeneous people
    out = tmp_path / "diverse.csv"
    manifest = run(table, out, executor=executor, workers=2, l=2)
    report = check(table, out, manifest, l=2)
    assert report.passed, report.to_dict()
    # rows are neither lost nor duplicated: the sensitive column is the original's multiset
    assert Counter(release_frame(out)["s"]) == Counter(pd.read_csv(table)["s"])
    guarantee, verification = manifest["guarantee"], manifest["verification"]
    assert isinstance(guarantee, dict) and isinstance(verification, dict)
    assert guarantee["sensitive"] == [{"column": "s", "diversity": "distinct", "l": 2}]
    (entry,) = verification["sensitive"]
    assert entry["passed"] and entry["people"] == 200 and entry["homogeneous"] == 0
    assert entry["worst_l"] >= 2
    assert verification["partitions"] == 5
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(manifest)))


def test_same_seed_same_release_whatever_the_executor_and_chunking(
    table: Path, tmp_path: Path
) -> None:
    inline, procs = tmp_path / "inline.csv", tmp_path / "procs.csv"
    run(table, inline, l=2)
    run(table, procs, l=2, executor="processes", workers=2, chunk_rows=40)
    assert inline.read_bytes() == procs.read_bytes()


@pytest.mark.parametrize(
    "model",
    [
        {"l": 2, "diversity": "entropy"},
        {"l": 2, "diversity": "recursive", "c": 3.0},
        {"t": 0.5},
        {"l": 2, "t": 0.5},
    ],
)
def test_other_models(table: Path, tmp_path: Path, model: dict[str, object]) -> None:
    out = tmp_path / "r.parquet"
    manifest = run(table, out, partition_size=100, **model)
    assert check(table, out, manifest, **model).passed
    verification = manifest["verification"]
    assert isinstance(verification, dict) and verification["sensitive"][0]["passed"]


def test_ordered_t_closeness_on_a_numeric_sensitive_column(tmp_path: Path) -> None:
    frame = people()
    frame["s"] = frame["n0"] // 3 + np.arange(len(frame)) % 4
    src = tmp_path / "numeric.csv"
    frame.to_csv(src, index=False)
    schema = Schema.build(QI, [*NUMERIC, "s"], sensitive=["s"])
    out = tmp_path / "r.csv"
    manifest = stream_file(src, out, 3, schema, seed=1, partition_size=50, executor="inline", t=0.3)
    guarantee = manifest["guarantee"]
    assert isinstance(guarantee, dict)
    assert guarantee["sensitive"][0]["ground_distance"] == "ordered"
    guarantee = manifest["guarantee"]
    assert isinstance(guarantee, dict)
    report = tables.verify(
        frame,
        release_frame(out),
        k=3,
        qi=QI,
        numeric=[*NUMERIC, "s"],
        sensitive="s",
        t=0.3,
        certificate=guarantee.get("certificate"),
    )
    assert report.passed, report.to_dict()


def test_hopeless_model_fails_before_any_work(
    table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(job: scale.ChunkJob) -> scale.ChunkResult:
        raise AssertionError("a chunk ran")

    monkeypatch.setattr(scale, "anonymize_chunk", never)
    out = tmp_path / "r.csv"
    with pytest.raises(InfeasibleError, match="3 distinct values.*l = 4"):
        run(table, out, l=4)  # three values only
    assert list(tmp_path.iterdir()) == []


def test_infeasible_partition_names_it_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the sensitive value follows the first attribute of the order (c0): the table has both
    # values, but partitions of 40 records inside one c0 block have one value only
    frame = random_frame(200, 4)
    frame["s"] = np.where(frame["c0"].isin(["v0", "v1"]), "x", "y")
    src = tmp_path / "blocks.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "out" / "r.csv"
    out.parent.mkdir()
    for executor in ("inline", "processes"):
        with pytest.raises(InfeasibleError) as error:
            run(src, out, l=2, executor=executor, workers=2)
        message = str(error.value)
        assert message.startswith("infeasible: partition 1 (records 1–40 of the QI order)")
        assert "`partition_size`" in message and "\n" not in message
        assert list(out.parent.iterdir()) == []
    args = ["anonymize", str(src), "-o", str(out), "--k", "3", "--qi", ",".join(QI)]
    args += ["--numeric", ",".join(NUMERIC), "--sensitive", "s", "--l", "2", "-q"]
    args += ["--executor", "inline", "--partition-size", "40", "--report", str(out) + ".json"]
    assert main(args) == 3
    err = capsys.readouterr().err
    assert "partition 1" in err and len(err.strip().splitlines()) == 1
    assert list(out.parent.iterdir()) == []
    run(src, out, l=2, partition_size=200)  # one partition of both values: feasible
    assert check(src, out, l=2).passed


def test_models_refused_for_a_method_without_classes(
    table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = scale.registry()
    ring = registry["ring"]
    fake = {**registry, "ring": type(ring)(**{**ring.__dict__, "partitioned": True})}
    monkeypatch.setattr(scale, "registry", lambda: fake)
    with pytest.raises(InputError, match="does not support `l`/`t`"):
        run(table, tmp_path / "r.csv", l=2, method="ring")
    with pytest.raises(InputError, match="`sensitive`"):
        stream_file(table, tmp_path / "r.csv", 3, Schema.build(QI, NUMERIC), l=2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_scan_codes_the_sensitive_column_like_the_in_memory_encoder(
    tmp_path: Path, fmt: str
) -> None:
    frame = people(300, seed=5)
    frame.loc[[7, 150], "s"] = None  # a missing value is a value of its own
    src = tmp_path / f"p.{fmt}"
    if fmt == "csv":
        frame.to_csv(src, index=False)
    else:
        frame.astype({"s": "category"}).to_parquet(src)  # dictionary-encoded column
    models = build_models(["s"], l=2)
    scanned = scan_table(src, SCHEMA, batch_rows=64, models=models)
    ((codes, m),) = scanned.sensitive
    expected = encode_sensitive("s", frame["s"], frame["s"], False)
    assert m == expected.m == 4
    assert np.array_equal(codes, expected.original)


def test_scan_names_the_input_row_of_a_non_number(tmp_path: Path) -> None:
    frame = people(300, seed=5)
    frame["s"] = frame["n0"].astype(str)
    frame.loc[130, "n1"] = None  # dropped: the rows after it keep their input numbers
    frame.loc[200, "s"] = "abc"
    src = tmp_path / "p.csv"
    frame.to_csv(src, index=False)
    schema = Schema.build(QI, [*NUMERIC, "s"], sensitive=["s"])
    models = build_models(["s"], t=0.5, ordered=["s"])
    with pytest.raises(InputError, match=r"non-number 'abc' \(row 201\)"):
        scan_table(src, schema, drop_missing=True, batch_rows=64, models=models)


def _one_chunk(frame: pd.DataFrame, k: int, **model: object) -> scale.ChunkJob:
    """A chunk job of two partitions over the whole of ``frame``."""
    models = build_models(["s"], **model)
    enc = encode_qi(frame, SCHEMA)
    order = lexicographic_order(enc)
    codes = encode_sensitive("s", frame["s"], frame["s"], False)
    target = SensitiveTarget.build([codes.original], [codes.m], models)
    bounds = np.array([0, len(frame) // 2, len(frame)])
    return scale.ChunkJob(
        0,
        enc.take(order),
        bounds,
        list(np.random.SeedSequence(1).spawn(2)),
        k,
        "hungarian",
        BuildOptions(),
        False,
        target.take(order),
        0,
    )


def test_partition_check_catches_a_homogeneous_class() -> None:
    job = _one_chunk(people(80, seed=7), 3, l=2)
    result = scale.anonymize_chunk(job)
    assert result.failure is None and result.sensitive[0].passed
    written = parse_cells(result.cells.to_pandas(), job.qi)
    assert job.sensitive is not None
    preimage = result.source.copy()
    # rows show the values of other people: make every row of the second partition show "low"
    codes = job.sensitive.codes[:, 0]
    low = int(codes[preimage[0]])
    donors = np.flatnonzero(codes == low)
    second = np.arange(int(job.bounds[1]), int(job.bounds[2]))
    preimage[second] = donors[np.arange(len(second)) % len(donors)]
    failure, checks = scale.check_sensitive_partitions(written, job, preimage)
    assert failure is not None and checks == ()
    assert failure.startswith("partition 2 (records 41–80 of the QI order): a class of")


def test_identical_rows_groups_exactly() -> None:
    sets = sp.csr_array(np.array([[1, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]]))
    cells = GeneralizedQI(
        num_lo=np.array([[1.0], [1.0], [1.0], [2.0], [5.0]]),
        num_hi=np.array([[3.0], [3.0], [3.0], [3.0], [9.0]]),
        num_star=np.array([[False], [False], [False], [False], [True]]),
        cat_sets=(sets,),
        cat_star=np.array([[False], [False], [False], [False], [True]]),
    )
    _, labels, _ = published_groups(cells)
    assert labels[0] == labels[1]
    assert len(set(labels.tolist())) == 4
    star = GeneralizedQI(
        cells.num_lo[[4, 4]] + np.array([[0.0], [1.0]]),
        cells.num_hi[[4, 4]],
        cells.num_star[[4, 4]],
        (sp.csr_array(np.array([[1, 0, 0], [0, 1, 0]])),),
        cells.cat_star[[4, 4]],
    )
    _, star_labels, _ = published_groups(star)
    assert star_labels[0] == star_labels[1]  # suppressed cells are equal whatever they store


def test_streamed_rings_are_certified_and_verify_manifest_checks_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # four values at random: some partitions of 40 are cheaper as a ring than as the greedy's
    # classes — without their swap search (issue 36), which makes classes cheaper everywhere
    from anonymatch.tables.methods import diverse

    monkeypatch.setattr(diverse, "IMPROVE_PASSES", 0)
    frame = random_frame(200, 3)
    frame["s"] = np.random.default_rng(3).choice(["a", "b", "c", "d"], 200)
    src = tmp_path / "p.csv"
    frame.to_csv(src, index=False)
    out, report = tmp_path / "r.csv", tmp_path / "r.json"
    args = ["anonymize", str(src), "-o", str(out), "--report", str(report), "--k", "3"]
    args += ["--qi", ",".join(QI), "--numeric", ",".join(NUMERIC), "--sensitive", "s"]
    args += ["--l", "3", "-q", "--executor", "inline", "--partition-size", "40", "--seed", "3"]
    assert main(args) == 0, capsys.readouterr().err  # the default structure: classes
    manifest = json.loads(report.read_text())
    assert manifest["plan"]["path"] == "streamed"
    assert manifest["guarantee"]["construction"] == "classes"
    assert "certificate" not in manifest["guarantee"]
    assert main(["verify", str(src), str(out), "--k", "3", "--qi", ",".join(QI), "--numeric",
                 ",".join(NUMERIC), "--sensitive", "s", "--l", "3"]) == 0  # fmt: skip
    assert main([*args, "--structure", "rings", "--force"]) == 0, capsys.readouterr().err
    manifest = json.loads(report.read_text())
    guarantee = manifest["guarantee"]
    assert manifest["plan"]["path"] == "streamed" and guarantee["construction"] == "rings"
    assert "learns every ring member's value" in guarantee["insider_weakness"]
    rings = guarantee["certificate"]["rings"]
    assert 0 < sum(map(len, rings)) == manifest["verification"]["ring_records"] < 200
    # every cyclic window of 3 rows of every ring shows 3 values: every draw passes (§6)
    shown = release_frame(out)["s"].to_numpy()
    for ring in rings:
        for p in range(len(ring)):
            assert len({shown[ring[(p + a) % len(ring)]] for a in range(3)}) == 3
    verify = ["verify", str(src), str(out), "--manifest", str(report)]
    capsys.readouterr()
    assert main(verify) == 0, capsys.readouterr().out
    # a certificate whose ring order does not fit the release
    tampered = json.loads(report.read_text())
    ring = tampered["guarantee"]["certificate"]["rings"][0]
    tampered["guarantee"]["certificate"]["rings"][0] = ring[::2] + ring[1::2]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(tampered))
    assert main(["verify", str(src), str(out), "--manifest", str(bad)]) == 4
    # the same values, two swapped: a window of the first ring shows its first value twice
    release = release_frame(out)
    values = release["s"].to_numpy().copy()
    twin = next(x for x in range(len(values)) if x != ring[0] and values[x] == values[ring[0]])
    values[[ring[1], twin]] = values[[twin, ring[1]]]
    release["s"] = values
    forged = tmp_path / "forged.csv"
    release.to_csv(forged, index=False)
    capsys.readouterr()
    assert main(["verify", str(src), str(forged), "--manifest", str(report)]) == 4
    assert "some draw fails" in capsys.readouterr().out
