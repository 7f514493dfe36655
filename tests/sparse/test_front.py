"""The sparse front: anonymatch.sparse.anonymize / verify / evaluate."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import anonymatch
from anonymatch.sparse.pipeline import anonymize_sparse
from tests.sparse.test_streamed import communities


def test_front_is_the_pipeline() -> None:
    x, _ = communities(groups=3, size=8, seed=2)
    result = anonymatch.sparse.anonymize(x, k=4, seed=3)
    same = anonymize_sparse(x, 4, seed=3)
    assert (result.release != same.published).nnz == 0
    assert anonymatch.sparse.verify(x, result, k=4).passed
    assert not anonymatch.sparse.verify(x, x, k=4).passed
    figures = anonymatch.sparse.evaluate(x, result).to_dict()
    assert figures.items() <= result.report["loss"].items()  # type: ignore[union-attr]


def test_dense_arrays_are_accepted() -> None:
    x, _ = communities(groups=2, size=6, seed=1)
    dense = sp.csr_array(x).toarray()
    result = anonymatch.sparse.anonymize(dense, k=3, seed=0, method="nonsmooth")
    assert anonymatch.sparse.verify(dense, result.release, k=3, rule="nonsmooth").passed


def test_front_validates() -> None:
    x, _ = communities(groups=2, size=6, seed=1)
    with pytest.raises(TypeError, match="^data must be a scipy sparse matrix"):
        anonymatch.sparse.anonymize([[1, 0]], k=1)
    with pytest.raises(anonymatch.InputError, match="binary"):
        anonymatch.sparse.anonymize(np.array([[2, 0], [0, 1]]), k=1)
    with pytest.raises(anonymatch.InputError, match="^`k` must be an integer of at least 1"):
        anonymatch.sparse.anonymize(x, k=1.5)  # type: ignore[arg-type]
    with pytest.raises(anonymatch.InputError, match="^seed must"):
        anonymatch.sparse.anonymize(x, k=2, seed=-3)
    with pytest.raises(anonymatch.InputError, match="^`rule` must be one of smooth, nonsmooth"):
        anonymatch.sparse.verify(x, x, k=2, rule="majority")
    with pytest.raises(TypeError, match="^release must be"):
        anonymatch.sparse.evaluate(x, "x")
