"""Out-of-core path (Parquet edge list → staged shards → min-hash chunks → runner jobs → parts)
and the support refinement of the min-hash order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from anonymatch.cli import main
from anonymatch.sparse.io import binary_csr, read_sparse, write_sparse
from anonymatch.sparse.job import SparseJob
from anonymatch.sparse.order import memory_shards, minhash_chunks, shard_order
from anonymatch.sparse.pipeline import anonymize_sparse
from anonymatch.sparse.streamed import anonymize_sparse_stream
from anonymatch.sparse.verify import verify_sparse


def communities(groups: int = 30, size: int = 40, seed: int = 0) -> tuple[sp.csr_array, np.ndarray]:
    """Users in ``groups`` communities of ``size``: ~8 draws from the community's 12 favourite
    items (Zipf weights) and 3 from 3,000 global items — the structure of the scale generator
    in miniature. Returns the matrix and every row's community."""
    rng = np.random.default_rng(seed)
    fav = rng.integers(0, 3000, size=(groups, 12))
    w = 1.0 / np.arange(1, 13)
    w /= w.sum()
    comm = np.repeat(np.arange(groups), size)
    rng.shuffle(comm)
    rows, cols = [], []
    for i, c in enumerate(comm):
        items = np.concatenate([fav[c, rng.choice(12, 8, p=w)], rng.integers(0, 3000, 3)])
        rows.append(np.full(items.size, i))
        cols.append(items)
    x = binary_csr(np.concatenate(rows), np.concatenate(cols), (comm.size, 3000))
    return x, comm


def mates(chunks: list[np.ndarray], comm: np.ndarray) -> float:
    """Mean number of a row's community members in its own chunk."""
    counts = []
    for ids in chunks:
        _, inverse, c = np.unique(comm[ids], return_inverse=True, return_counts=True)
        counts.append(c[inverse.ravel()])
    return float(np.concatenate(counts).mean())


def test_support_refinement_keeps_communities_together() -> None:
    x, comm = communities()
    plain = minhash_chunks(x, 120, seed=1, refine=False)
    refined = minhash_chunks(x, 120, seed=1, refine=True)
    assert np.array_equal(np.sort(np.concatenate(refined)), np.arange(x.shape[0]))
    random_chunks = 40 / len(refined)  # expected mates per chunk if chunks were random
    assert mates(plain, comm) < 0.6 * mates(refined, comm)
    assert mates(refined, comm) > 4 * random_chunks


def test_order_does_not_depend_on_shard_boundaries() -> None:
    x, _ = communities(groups=8, size=20, seed=3)
    n, m = x.shape
    one = shard_order(memory_shards(x), n, m, seed=5)
    many = shard_order(memory_shards(x, rows=37), n, m, seed=5)
    assert np.array_equal(one, many)


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_streamed_release_equals_in_memory_release(tmp_path: Path, ext: str) -> None:
    x, _ = communities(groups=12, size=20, seed=4)
    x.resize((x.shape[0] + 3, x.shape[1]))  # trailing rows without edges are users too
    src = tmp_path / "in.parquet"
    # an unsorted edge list with duplicates, in several row groups
    coo = x.tocoo()
    order = np.random.default_rng(0).permutation(coo.nnz)
    rows = np.concatenate([coo.row[order], coo.row[:5], [x.shape[0] - 1]])
    cols = np.concatenate([coo.col[order], coo.col[:5], [0]])
    x = binary_csr(rows, cols, x.shape)
    pq.write_table(pa.table({"row": rows, "col": cols}), src, row_group_size=700)
    out = tmp_path / f"out.{ext}"
    job = SparseJob.build(dict(k=4, chunk_rows=60, executor="threads", workers=2, seed=9))
    report = anonymize_sparse_stream(src, out, job, workdir=tmp_path)
    memory = anonymize_sparse(x, 4, chunk_rows=60, executor="inline", seed=9)
    published = read_sparse(out)
    published.resize(x.shape)
    assert report["parameters"]["chunks"] == 4 == memory.report["parameters"]["chunks"]
    assert (published != memory.published).nnz == 0
    assert report["loss"]["jaccard"] == pytest.approx(memory.report["loss"]["jaccard"])
    assert verify_sparse(published, x, 4, "smooth").passed
    assert report["verification"]["passed"]
    assert not list(tmp_path.glob(".anonymatch-stream-*"))  # scratch removed


def test_stream_cli_and_bad_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x, _ = communities(groups=6, size=20, seed=2)
    src = tmp_path / "in.parquet"
    write_sparse(src, x)
    out, rep = tmp_path / "out.parquet", tmp_path / "r.json"
    args = ["anonymize-sparse", str(src), "-o", str(out), "--k", "4", "--chunk-rows", "40"]
    code = main([*args, "--executor", "inline", "--seed", "1", "--report", str(rep), "-q"])
    assert code == 0, capsys.readouterr().err
    manifest = json.loads(rep.read_text())
    p = manifest["parameters"]
    assert p["streamed"] and p["chunks"] == 3 and p["lsh"]["refine"]
    assert main(["verify-sparse", str(src), str(out), "--k", "4"]) == 0
    capsys.readouterr()
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"row": [0, 1, -2], "col": [0, 1, 1]}), bad)
    out2 = tmp_path / "out2.parquet"
    assert main(["anonymize-sparse", str(bad), "-o", str(out2), "--k", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "negative" in err
    assert not out2.exists() and not list(tmp_path.glob(".anonymatch-stream-*"))
    # k larger than the rows, found after staging (--force: out.parquet exists)
    assert main([*args[:-2], "--k", "500", "--force"]) == 3  # infeasible
    assert "larger than the number of rows" in capsys.readouterr().err


def test_public_api_exports() -> None:
    import anonymatch

    x, _ = communities(groups=4, size=10, seed=6)
    release = anonymatch.sparse.anonymize(x, k=4, seed=0)
    assert release.release is release.published
    assert anonymatch.sparse.verify(x, release.release, k=4).passed
    figures = anonymatch.sparse.evaluate(x, release)
    assert figures.jaccard == release.report["loss"]["jaccard"]
    assert {"sparse", "anonymize", "verify", "evaluate"} <= set(anonymatch.__all__)
    assert not hasattr(anonymatch, "anonymize_sparse")  # moved to anonymatch.sparse
