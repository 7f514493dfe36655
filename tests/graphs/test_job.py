"""The typed graph job (issue 23)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.graphs.job import GraphJob
from anonymatch.graphs.methods import registry
from anonymatch.graphs.pipeline import anonymize_graph, run_job


def test_build_fills_the_defaults() -> None:
    job = GraphJob.build(dict(k=2))
    assert (job.k, job.closed, job.iterations) == (2, False, 10)
    assert job.method is registry()["graph-kmeans-majority"]


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"k": True}, "^`k` must be an integer of at least 1, got True"),
        ({"k": 2, "iterations": -1}, "^`iterations` must be an integer of at least 0"),
        ({"k": 2, "closed": 1}, "^`closed` must be True or False"),
        ({"k": 2, "method": "rcm"}, "^`method` must be one of graph-kmeans-majority"),
        ({"k": 2, "seed": 1}, "^unknown parameter `seed`"),
    ],
)
def test_build_refuses(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        GraphJob.build(keywords)


def test_the_job_and_the_positional_form_agree_and_k_above_n_is_infeasible() -> None:
    star = np.zeros((6, 6), dtype=np.int8)
    star[0, 1:] = star[1:, 0] = 1
    adj = sp.csr_array(star)
    a = run_job(adj, GraphJob.build(dict(k=2, closed=True)))
    assert (a.adjacency != anonymize_graph(adj, 2, True).adjacency).nnz == 0
    with pytest.raises(InfeasibleError, match="larger than the number of vertices"):
        run_job(adj, GraphJob.build(dict(k=7)))
