"""The min-hash chunked path on a real dask.distributed LocalCluster (2 worker processes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from anonymatch.core.runner import Placement, run_partitions
from anonymatch.sparse.io import read_sparse, write_sparse
from anonymatch.sparse.job import SparseJob
from anonymatch.sparse.pipeline import anonymize_sparse
from anonymatch.sparse.streamed import anonymize_sparse_stream
from tests.factories import planted

pytest.importorskip("distributed")


def _draw(job: int, seed: np.random.SeedSequence) -> tuple[int, float]:
    import os

    return os.getpid(), job + float(np.random.default_rng(seed).random())


def test_chunks_run_as_dask_tasks_on_a_local_cluster(tmp_path: Path, dask_scheduler: str) -> None:
    x = planted(blocks=16, size=10, items=10, noise=0.01, seed=3)
    src, out = tmp_path / "x.parquet", tmp_path / "p.parquet"
    write_sparse(src, x)
    address = dask_scheduler  # tests/conftest.py: the session's LocalCluster, 2 worker processes
    on_dask = anonymize_sparse(x, 4, seed=7, chunk_rows=40, scheduler=address)
    drawn = run_partitions(_draw, list(range(6)), placement=Placement(scheduler=address), seed=1)
    # the out-of-core path: chunk files read by the worker processes, parts written by them
    job = SparseJob.build(dict(k=4, seed=7, chunk_rows=40, scheduler=address))
    streamed = anonymize_sparse_stream(src, out, job)
    local = anonymize_sparse(x, 4, seed=7, chunk_rows=40, executor="inline")
    assert on_dask.report["parameters"]["chunks"] == 4
    assert on_dask.report["parameters"]["executor"] == "dask"
    assert on_dask.verification is not None and on_dask.verification.passed
    # same seed, same release, whatever ran it
    assert (on_dask.published != local.published).nnz == 0
    assert np.array_equal(on_dask.labels, local.labels)
    assert streamed["parameters"]["executor"] == "dask"
    assert streamed["parameters"]["chunks"] == 4
    published = read_sparse(out)
    published.resize(local.published.shape)
    assert (published != local.published).nnz == 0
    # tasks ran in the worker processes, results in job order, seeded per job
    import os

    assert all(pid != os.getpid() for pid, _ in drawn)
    inline = run_partitions(_draw, list(range(6)), placement=Placement("inline"), seed=1)
    assert [v for _, v in drawn] == [v for _, v in inline]
