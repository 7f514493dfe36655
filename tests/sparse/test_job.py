"""The typed sparse job (issue 23): validated once, strict types, capabilities from the
registry; both paths take it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.sparse.io import write_sparse
from anonymatch.sparse.job import DEFAULT_CHUNK_ROWS, SparseJob
from anonymatch.sparse.methods import names, registry
from anonymatch.sparse.pipeline import anonymize_sparse, run_job
from anonymatch.sparse.streamed import anonymize_sparse_stream


def test_build_fills_the_defaults() -> None:
    job = SparseJob.build(dict(k=4))
    assert job.method is registry()["smooth"] and job.chunk_rows == DEFAULT_CHUNK_ROWS
    assert (job.beta, job.runs, job.epsilon, job.dp, job.refine) == (2.0, 10, None, "edge", True)
    assert job.execution.executor == "auto" and job.execution.progress is False
    rr = SparseJob.build(dict(k=1, method="rr", epsilon=2, dp="node"))
    assert rr.epsilon == 2.0 and isinstance(rr.epsilon, float) and rr.dp == "node"


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"k": True}, "^`k` must be an integer of at least 1, got True"),
        ({"k": "4"}, "^`k` must be an integer"),
        ({"k": 4, "runs": 0}, "^`runs` must be an integer of at least 1"),
        ({"k": 4, "runs": 2.0}, "^`runs` must be an integer"),
        ({"k": 4, "beta": 1}, r"^`beta` must be in \(1, ∞\)"),
        ({"k": 4, "beta": True}, "^`beta` must be a number"),
        ({"k": 4, "chunk_rows": 7}, "^`chunk_rows` must be at least 2k = 8, got 7"),
        ({"k": 4, "method": "rr"}, "method 'rr' needs `epsilon`"),
        ({"k": 4, "method": "rr", "epsilon": 0}, r"^`epsilon` must be in \(0, ∞\)"),
        ({"k": 4, "method": "rr", "epsilon": 1, "dp": "row"}, "^`dp` must be one of edge, node"),
        ({"k": 4, "epsilon": 1.0}, "^`epsilon` and `dp` need `method` rr"),
        ({"k": 4, "method": "kmeans"}, "^`method` must be one of smooth, nonsmooth"),
        ({"k": 4, "executor": "gpu"}, "^`executor` must be one of"),
        ({"k": 4, "executor": "threads", "scheduler": "tcp://x:1"}, "^`scheduler` needs"),
        ({"k": 4, "refine": 1}, "^`refine` must be True or False"),
        ({"k": 4, "workdir": "x"}, "^unknown parameter `workdir`"),
    ],
)
def test_build_refuses(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        SparseJob.build(keywords)


def _matrix() -> sp.csr_array:
    rng = np.random.default_rng(0)
    return sp.csr_array((rng.random((40, 12)) < 0.3).astype(np.int8))


@pytest.mark.parametrize("method", names(verified=True))
def test_the_job_and_the_keywords_publish_the_same_release(method: str) -> None:
    x = _matrix()
    a = run_job(x, SparseJob.build(dict(k=4, method=method, seed=3))).published
    b = anonymize_sparse(x, 4, method, seed=3).published
    assert (a != b).nnz == 0


def test_k_above_the_rows_is_infeasible_but_not_for_rr() -> None:
    x = _matrix()
    with pytest.raises(InfeasibleError, match="larger than the number of rows"):
        run_job(x, SparseJob.build(dict(k=41)))
    assert (
        run_job(x, SparseJob.build(dict(k=41, method="rr", epsilon=2.0, seed=0))).verification
        is None
    )


@pytest.mark.parametrize("method", names(streamable=False))
def test_the_streamed_path_refuses_what_does_not_stream(tmp_path: Path, method: str) -> None:
    src = tmp_path / "in.parquet"
    write_sparse(src, _matrix())
    job = SparseJob.build(dict(k=2, method=method, **({"epsilon": 1.0} if method == "rr" else {})))
    with pytest.raises(InputError, match="^the streamed path runs the methods smooth, nonsmooth"):
        anonymize_sparse_stream(src, tmp_path / "out.parquet", job)
