"""The typed jobs take their parameters as one mapping (issue 35): ``build(values)``,
``replace(changes)`` and ``ReleaseCheck.of(schema, values)``, checked against each job's
``PARAMETERS`` table as before, with the same messages; a release check is changed field by
field with ``dataclasses.replace``."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from anonymatch.core.errors import InputError
from anonymatch.graphs.job import GraphJob
from anonymatch.relational.job import RelationalJob
from anonymatch.sets.job import SetJob
from anonymatch.sparse.job import SparseJob
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.job import PARAMETERS, ReleaseCheck, TableJob

JOBS: dict[type[Any], dict[str, Any]] = {
    TableJob: {"qi": ["a", "b"], "k": 2},
    ReleaseCheck: {"qi": ["a", "b"], "k": 2},
    SetJob: {"k": 2},
    SparseJob: {"k": 2},
    GraphJob: {"k": 2},
    RelationalJob: {"qi": ["a", "b"], "k": 2},
}


@pytest.mark.parametrize("job_type", JOBS, ids=lambda t: t.__name__)
def test_build_takes_one_mapping(job_type: type[Any]) -> None:
    signature = inspect.signature(job_type.build)
    assert list(signature.parameters) == ["values"]
    values = JOBS[job_type]
    assert job_type.build(values) == job_type.build(dict(values))
    with pytest.raises(TypeError):
        job_type.build(**values)  # the parameters are one argument, not keywords
    with pytest.raises(InputError, match="^unknown parameter `bogus`; known: "):
        job_type.build({**values, "bogus": 1})


@pytest.mark.parametrize("job_type", [t for t in JOBS if t is not ReleaseCheck])
def test_replace_takes_a_mapping_and_validates_again(job_type: type[Any]) -> None:
    job = job_type.build(JOBS[job_type])
    assert job.replace({"k": 3}).k == 3 and job.k == 2
    with pytest.raises(InputError, match="^`k` must be an integer"):
        job.replace({"k": True})
    with pytest.raises(InputError, match="^unknown parameter `bogus`"):
        job.replace({"bogus": 1})


def test_the_caller_s_mapping_is_left_alone() -> None:
    values = {"qi": ["a", "b"], "k": 2, "certificate": None}
    check = ReleaseCheck.build(values)
    assert values == {"qi": ["a", "b"], "k": 2, "certificate": None} and check.k == 2
    job = TableJob.build(JOBS[TableJob])
    assert job.keywords == JOBS[TableJob] and job.keywords is not JOBS[TableJob]
    with pytest.raises(InputError, match="must be a mapping"):
        ReleaseCheck.build({"qi": ["a"], "certificate": 3})


def test_a_check_on_a_schema_and_its_changed_copies() -> None:
    schema = Schema.build(["a", "b"], ["a"])
    assert ReleaseCheck.of(schema) == ReleaseCheck.of(schema, {})
    check = ReleaseCheck.of(schema, {"k": 3, "suppression_limit": 0.1})
    assert (check.k, check.suppression_limit) == (3, 0.1)
    with pytest.raises(InputError, match="^unknown parameter `qi`"):
        ReleaseCheck.of(schema, {"qi": ["a"]})  # the roles come from the schema
    changed = dataclasses.replace(check, certificate={"rings": []})
    assert changed.certificate == {"rings": []} and check.certificate is None
    assert set(JOBS[TableJob]) <= set(PARAMETERS)
