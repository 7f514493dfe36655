"""The graph front: anonymatch.graphs.anonymize / verify / evaluate."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import anonymatch
from anonymatch.graphs.pipeline import anonymize_graph


def _random_graph(n: int = 30, p: float = 0.2, seed: int = 4) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, 1)
    return sp.csr_array((upper | upper.T).astype(np.int8))


@pytest.mark.parametrize("closed", [False, True])
def test_front_is_the_pipeline_plus_verification(closed: bool) -> None:
    g = _random_graph()
    result = anonymatch.graphs.anonymize(g, k=3, closed=closed)
    same = anonymize_graph(g, 3, closed)
    assert (result.release != same.adjacency).nnz == 0
    assert result.verification is not None and result.verification.passed
    assert result.report["verification"]["passed"]  # type: ignore[index]
    assert anonymatch.graphs.verify(g, result, k=3, closed=closed).passed
    figures = anonymatch.graphs.evaluate(g, result).to_dict()
    assert figures == pytest.approx(result.metrics)


def test_verify_reports_failures() -> None:
    g = _random_graph()
    report = anonymatch.graphs.verify(g, g, k=2)
    assert not report.passed and "fewer than k - 1" in report.reason
    smaller = anonymatch.graphs.anonymize(_random_graph(20), k=2).release
    report = anonymatch.graphs.verify(g, smaller, k=2)
    assert not report.passed and "vertices" in report.to_dict()["reason"]  # type: ignore[operator]


def test_front_validates() -> None:
    g = _random_graph(8)
    with pytest.raises(TypeError, match="^data must be"):
        anonymatch.graphs.anonymize([[0, 1], [1, 0]], k=1)
    with pytest.raises(anonymatch.InputError, match="square"):
        anonymatch.graphs.anonymize(np.zeros((2, 3)), k=1)
    with pytest.raises(anonymatch.InputError, match="symmetric"):
        anonymatch.graphs.anonymize(np.array([[0, 1], [0, 0]]), k=1)
    with pytest.raises(anonymatch.InputError, match="self-loops"):
        anonymatch.graphs.anonymize(np.eye(2), k=1)
    with pytest.raises(anonymatch.InputError, match="^`k` must be an integer of at least 1"):
        anonymatch.graphs.anonymize(g, k=0)
    with pytest.raises(anonymatch.InfeasibleError):
        anonymatch.graphs.anonymize(g, k=9)
    with pytest.raises(anonymatch.InputError, match="iterations"):
        anonymatch.graphs.anonymize(g, k=2, iterations=-1)
    with pytest.raises(anonymatch.InputError, match="vertices"):
        anonymatch.graphs.evaluate(g, _random_graph(9))
