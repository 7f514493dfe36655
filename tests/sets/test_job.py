"""The typed set-valued job (issue 23): validated once, strict types, capabilities from the
registry, the same release as the keyword form."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import anonymatch
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.sets.io import from_sets
from anonymatch.sets.job import PARAMETERS, SetJob
from anonymatch.sets.methods import names, registry
from anonymatch.sets.pipeline import anonymize_sets, run_job

RECORDS = [["a", "b"], ["a", "b", "c"], ["a", "c"], ["b", "d"], ["c", "d"], ["d"]] * 3


def test_build_fills_the_defaults_and_reads_the_registry() -> None:
    job = SetJob.build(dict(k=3))
    assert (job.k, job.ell, job.segment, job.seed) == (3, None, (300, 350), None)
    assert job.method is registry()[PARAMETERS["method"]] and job.level == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.k = 4  # type: ignore[misc]
    assert job.replace({"seed": 2}).seed == 2 and job.replace({"seed": 2}).k == 3


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"k": True}, "^`k` must be an integer of at least 1, got True"),
        ({"k": "3"}, "^`k` must be an integer"),
        ({"k": 0}, "^`k` must be an integer of at least 1, got 0"),
        ({"ell": 2.0}, "^`ell` must be an integer"),
        ({}, "exactly one of `k`"),
        ({"k": 2, "ell": 2}, "exactly one of `k`"),
        ({"k": 2, "method": "tsp"}, "^`method` must be one of gray-tsp, gray, cahd"),
        ({"k": 2, "method": "km-hypergraph"}, "^`method` must be one of"),
        ({"k": 2, "method": "cahd"}, "ℓ-diversity baseline: give `ell`"),
        ({"k": 2, "segment": (5, 2)}, "^`segment` must be two integers"),
        ({"k": 2, "seed": True}, "^seed must be None or a non-negative integer"),
        ({"k": 2, "labels": ["a"]}, "^unknown parameter `labels`"),
    ],
)
def test_build_refuses(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        SetJob.build(keywords)


@pytest.mark.parametrize("method", names(command="anonymize-sets", anonymity=True))
def test_the_job_and_the_keywords_publish_the_same_release(method: str) -> None:
    t = from_sets(RECORDS)
    a = run_job(t, SetJob.build(dict(k=3, method=method, seed=4))).release
    b = anonymize_sets(t, k=3, method=method, seed=4).release
    c = anonymatch.sets.anonymize(RECORDS, k=3, method=method, seed=4).release
    for other in (b, c):
        assert (a.base != other.base).nnz == 0 and np.array_equal(a.max_errors, other.max_errors)


def test_data_checks_k_above_records_and_labels() -> None:
    t = from_sets(RECORDS)
    with pytest.raises(InfeasibleError, match="larger than the number of records"):
        run_job(t, SetJob.build(dict(k=len(RECORDS) + 1)))
    with pytest.raises(InputError, match="needs sensitive labels"):
        run_job(t, SetJob.build(dict(ell=2)))
