"""One manifest schema for every command (issue 12, item 4).

Runs every command that writes a manifest (``--report``) on the tiny inputs of the golden test,
validates each manifest against ``docs/manifest.schema.json`` and checks what the schema cannot:
the same top-level keys everywhere, no seed anywhere, digests and record counts that match the
files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.core.files import sha256_file
from anonymatch.core.manifest import (
    SCHEMA,
    TOP_LEVEL_KEYS,
    finish_manifest,
    load_manifest,
    new_manifest,
    randomness_block,
    to_json,
    write_manifest,
)
from tests.cli.test_golden import CASES as GOLDEN
from tests.cli.test_golden import TABLE, _labels, _table

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "manifest.schema.json"


def _parquet_edges(path: Path, rows: int = 300, cols: int = 30, seed: int = 5) -> Path:
    from anonymatch.sparse.io import write_sparse

    rng = np.random.default_rng(seed)
    r, c = rng.integers(0, rows, 1200), rng.integers(0, cols, 1200)
    x = sp.csr_array((np.ones(r.size), (r, c)), shape=(rows, cols))
    x.sum_duplicates()
    x.data[:] = 1
    write_sparse(path, x)
    return path


# every golden case (every command and method), plus the out-of-core paths the golden test
# does not reach: a table streamed into a directory of Parquet parts and a streamed sparse run
CASES: dict[str, tuple[str, Callable[[Path], Path], str, str, list[str]]] = {
    **GOLDEN,
    "tables-streamed-parts": (
        "anonymize",
        _table,
        "t.csv",
        "parts",
        ["--k", "3", "--executor", "inline", "--partition-size", "12", *TABLE],
    ),
    "sparse-streamed": (
        "anonymize-sparse",
        _parquet_edges,
        "e.parquet",
        "r.parquet",
        ["--k", "4", "--chunk-rows", "100", "--executor", "inline"],
    ),
}

DATA_KIND = {
    "anonymize": "table",
    "anonymize-kl": "table",
    "anonymize-sets": "transactions",
    "anonymize-km": "transactions",
    "anonymize-sparse": "sparse",
    "anonymize-graph": "graph",
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _run(name: str, workdir: Path, seed: bool = True) -> tuple[dict[str, Any], Path, Path]:
    command, make, source, target, args = CASES[name]
    data = make(workdir / source)
    out, report = workdir / target, workdir / "manifest.json"
    args = [str(_labels(workdir / "labels.txt")) if a == "LABELS" else a for a in args]
    seeded = ["--seed", "5"] if seed else []
    code = main([command, str(data), "-o", str(out), *seeded, "-q", "--report", str(report), *args])
    assert code == 0, name
    return json.loads(report.read_text()), data, out


def _keys(obj: object) -> set[str]:
    """Every key anywhere in a JSON value."""
    if isinstance(obj, dict):
        return set(obj) | set().union(*(_keys(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(_keys(v) for v in obj))
    return set()


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_command_writes_a_valid_manifest(
    name: str, tmp_path: Path, validator: jsonschema.Draft202012Validator
) -> None:
    manifest, data, out = _run(name, tmp_path)
    validator.validate(manifest)
    command = CASES[name][0]
    # the same keys, in the same order, everywhere; a table release also records its plan,
    # and an in-memory or streamed one (and a (k,l) one) what its kept columns leak (issue 25)
    plan = ("plan",) if command == "anonymize" else ()
    path = manifest.get("plan", {}).get("path")
    kept = command == "anonymize-kl" or (command == "anonymize" and path in ("memory", "streamed"))
    leakage = ("leakage",) if kept else ()
    # and an in-memory table release its known-person figures (issue 36)
    risk = ("risk",) if command == "anonymize" and path == "memory" else ()
    assert tuple(manifest) == (*TOP_LEVEL_KEYS, *plan, *leakage, *risk)
    assert manifest["schema"] == SCHEMA and manifest["command"] == command
    assert manifest["data_kind"] == DATA_KIND[command]
    # the seed was given but is written nowhere: only where the randomness came from
    assert manifest["randomness"] == {"source": "seed"}
    assert "seed" not in _keys(manifest)
    # digests and counts match the files
    assert manifest["input"]["path"] == str(data)
    assert manifest["input"]["sha256"] == sha256_file(data)
    assert manifest["output"]["path"] == str(out)
    if out.is_dir():
        parts = sorted(p for p in out.iterdir() if p.is_file())
        assert parts and manifest["output"]["sha256"] == {p.name: sha256_file(p) for p in parts}
        assert manifest["output"]["layout"] == "partitioned"
    else:
        assert manifest["output"]["sha256"] == sha256_file(out)
    assert manifest["input"]["records"] >= manifest["output"]["records"] > 0
    assert manifest["seconds"]["wall"] >= 0
    if name == "tables-streamed-parts":
        assert out.is_dir()
    if name == "sparse-streamed":
        assert manifest["parameters"]["streamed"] is True
    if manifest["guarantee"]["model"] != "randomized-response":
        assert manifest["verification"]["passed"] is True


def test_same_spelling_of_shared_figures(tmp_path: Path) -> None:
    """The disjoint-match figures are ``k_factor_flow`` for tables and transactions alike."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    tables, _, _ = _run("tables-hungarian", tmp_path / "a")
    sets, _, _ = _run("sets-gray-tsp", tmp_path / "b")
    for manifest in (tables, sets):
        assert {"k_factor_flow", "k_factor_required"} <= set(manifest["verification"])
        assert "factor_flow" not in manifest["verification"]


@pytest.mark.parametrize("name", ["tables-hungarian", "sparse-smooth", "graphs", "sets-km"])
def test_no_seed_means_os_entropy(
    name: str, tmp_path: Path, validator: jsonschema.Draft202012Validator
) -> None:
    manifest, _, _ = _run(name, tmp_path, seed=False)
    validator.validate(manifest)
    assert manifest["randomness"] == {"source": "os-entropy"}


def test_graph_with_kept_ids_has_no_randomness(
    tmp_path: Path, validator: jsonschema.Draft202012Validator
) -> None:
    command, make, source, target, args = CASES["graphs"]
    data, out, rep = make(tmp_path / source), tmp_path / target, tmp_path / "m.json"
    assert (
        main([command, str(data), "-o", str(out), "--keep-ids", "-q", "--report", str(rep), *args])
        == 0
    )
    manifest = json.loads(rep.read_text())
    validator.validate(manifest)
    assert manifest["randomness"] == {"source": "none"}


def test_python_api_report_is_schema_shaped(validator: jsonschema.Draft202012Validator) -> None:
    import anonymatch

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.integers(0, 50, 20), "b": rng.integers(0, 3, 20)})
    release = anonymatch.anonymize(frame, k=2, qi=["a", "b"], numeric=["a"], seed=3)
    report = to_json(release.report)
    validator.validate(report)
    assert report["command"] == "python-api" and report["input"]["path"] is None
    assert report["randomness"] == {"source": "seed"} and "seed" not in _keys(report)


def test_schema_rejects_a_seed_and_a_failed_release(
    validator: jsonschema.Draft202012Validator, tmp_path: Path
) -> None:
    manifest = new_manifest(
        data_kind="graph",
        method="m",
        parameters={},
        guarantee={"model": "graph-k-anonymity", "k": 2},
        verification={"passed": True},
        loss={"edges_added": 0, "edges_removed": 0, "jaccard": 1.0},
        seconds={"wall": 0.0},
        randomness_seeded=True,
        input_records=3,
        output_records=np.int64(3),
    )
    path = tmp_path / "m.json"
    write_manifest(path, manifest)  # numpy scalars are converted
    written = json.loads(path.read_text())
    validator.validate(written)
    for bad in (
        {**written, "randomness": {"source": "seed", "seed": 5}},
        {**written, "parameters": {"seed": 5}},
        {**written, "verification": {"passed": False}},
        {**written, "schema": "anonymatch-manifest/0"},
        {k: v for k, v in written.items() if k != "loss"},
    ):
        assert not validator.is_valid(bad)
    with pytest.raises(ValueError, match="seed"):
        new_manifest(**{**_args(), "parameters": {"seed": 1}})
    finished = finish_manifest(dict(written), path, path, None, command="anonymize-graph")
    assert finished["input"]["sha256"] == sha256_file(path)
    assert randomness_block(False) == {"source": "os-entropy"}


def _args() -> dict[str, Any]:
    return {
        "data_kind": "table",
        "method": "m",
        "parameters": {},
        "guarantee": {"model": "k-anonymity", "k": 2},
        "verification": {"passed": True},
        "loss": {"gcp": 0.0, "ncp": {}},
        "seconds": {"wall": 0.0},
        "randomness_seeded": False,
        "input_records": 1,
        "output_records": 1,
    }


def test_the_one_reader_reads_what_the_writer_wrote(tmp_path: Path) -> None:
    written = {"schema": SCHEMA, "data_kind": "table", "parameters": {"qi": ["a"], "k": 3}}
    path = tmp_path / "m.json"
    write_manifest(path, written)
    assert load_manifest(path) == written


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([1, 2], r"\(the document\) is list, expected an object"),
        ({"parameters": {"qi": "a"}}, "parameters.qi is str, expected a list"),
        ({"input": {"records": True}}, "input.records is bool, expected an integer"),
    ],
)
def test_the_one_reader_refuses_a_damaged_manifest(
    tmp_path: Path, document: object, message: str
) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(document))
    refused = f"^manifest {re.escape(str(path))}: not an anonymatch manifest: {message}"
    with pytest.raises(InputError, match=refused):
        load_manifest(path)
    with pytest.raises(InputError, match="not JSON"):
        path.write_text("{")
        load_manifest(path)
