"""The set-valued front: anonymatch.sets.anonymize / verify / evaluate."""

from __future__ import annotations

import numpy as np
import pytest

import anonymatch
from anonymatch.sets.io import from_sets


def _records(n: int = 40, seed: int = 2) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [sorted(set(rng.integers(0, 12, rng.integers(1, 5)).tolist())) for _ in range(n)]


def test_front_round_trip() -> None:
    records = _records()
    result = anonymatch.sets.anonymize(records, k=3, seed=0)
    assert result.report["verification"]["passed"]  # type: ignore[index]
    assert anonymatch.sets.verify(records, result.release, k=3).passed
    assert anonymatch.sets.verify(from_sets(records), result, k=3).to_dict()["passed"]
    assert not anonymatch.sets.verify(records, result, k=4).passed
    figures = anonymatch.sets.evaluate(records, result, queries=40)
    assert set(figures.to_dict()) == {
        "query_error_type1",
        "query_error_type2",
        "expected_error_rate",
        "mean_max_errors",
        "mean_uncertain",
    }


def test_same_release_as_the_pipeline() -> None:
    from anonymatch.sets.pipeline import anonymize_sets

    records = _records()
    a = anonymatch.sets.anonymize(records, k=3, seed=5).release
    b = anonymize_sets(from_sets(records), k=3, seed=5).release
    assert (a.base != b.base).nnz == 0 and np.array_equal(a.max_errors, b.max_errors)


def test_ell_diversity_with_labels() -> None:
    records = _records(60)
    labels = [f"l{i % 6}" for i in range(60)]
    result = anonymatch.sets.anonymize(records, ell=2, labels=labels, seed=1)
    assert anonymatch.sets.verify(records, result, ell=2, labels=labels).passed


def test_front_validates() -> None:
    records = _records()
    with pytest.raises(anonymatch.InputError, match="exactly one of `k`"):
        anonymatch.sets.anonymize(records, seed=0)
    with pytest.raises(anonymatch.InputError, match="exactly one of `k`"):
        anonymatch.sets.verify(records, anonymatch.sets.anonymize(records, k=2), k=2, ell=2)
    with pytest.raises(anonymatch.InputError, match="^`k` must be an integer of at least 1"):
        anonymatch.sets.anonymize(records, k=0)
    with pytest.raises(anonymatch.InputError, match="^seed must"):
        anonymatch.sets.anonymize(records, k=2, seed=True)
    with pytest.raises(TypeError, match="^data must be Transactions"):
        anonymatch.sets.anonymize("abc", k=2)
    with pytest.raises(TypeError, match=r"^data\[0\] must be a collection"):
        anonymatch.sets.anonymize([3, 4], k=2)
    with pytest.raises(TypeError, match="^release must be a SetRelease"):
        anonymatch.sets.verify(records, records, k=2)  # type: ignore[arg-type]
    with pytest.raises(anonymatch.InputError, match="labels has 2 entries"):
        anonymatch.sets.anonymize(records, ell=2, labels=["a", "b"])
