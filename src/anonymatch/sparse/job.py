"""The typed sparse job: one validated value describes an ``anonymize-sparse`` run.

The Python front (``anonymatch.sparse.anonymize``), the ``anonymize-sparse`` command and the
keyword form of the pipeline (``anonymatch.sparse.pipeline.anonymize_sparse``) all build a
:class:`SparseJob`, as the tables build a ``TableJob``; the in-memory path
(``anonymatch.sparse.pipeline.run_job``) and the streamed path
(``anonymatch.sparse.streamed.anonymize_sparse_stream``) take it.

:meth:`SparseJob.build` makes every check that needs only the parameters, once: strict types
(``anonymatch.core.params``: a bool or a string is never a number), and what the method can do,
read from its capabilities in the registry (``anonymatch.sparse.methods``: ``rr`` needs
``epsilon``, only the min-hash methods stream). :func:`check_rows` makes the one check that
needs the data (k against the number of rows: ``InfeasibleError``, exit 3).

Messages name the parameter as a Python caller writes it (```chunk_rows```); the command line
prints its flag (``--chunk-rows``). Every function is O(1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from anonymatch.core.errors import InputError
from anonymatch.core.params import (
    Execution,
    check_level_fits,
    check_seed,
    choice,
    flag,
    integer,
    number,
    param,
    with_defaults,
)
from anonymatch.core.registry import lookup
from anonymatch.sparse.methods import SparseMethod, names, registry

DEFAULT_CHUNK_ROWS = 100_000
"""Rows per min-hash chunk (chunking starts at twice as many rows)."""

PARAMETERS: dict[str, Any] = {
    "k": None,
    "method": "smooth",
    "beta": 2.0,
    "runs": 10,
    "chunk_rows": None,
    "executor": None,
    "scheduler": None,
    "workers": None,
    "seed": None,
    "epsilon": None,
    "dp": "edge",
    "refine": True,
    "progress": False,
}
"""Every parameter of a sparse job and its default (the names ``SparseJob.build`` takes; those of
:func:`anonymatch.sparse.anonymize` but the data)."""


@dataclass(frozen=True)
class SparseJob:
    """A validated sparse run: level, method, clustering settings, DP budget, execution, seed.

    Build it with :meth:`build` (from the parameters by name), never field by field: the fields
    are trusted by both paths.

    Attributes
    ----------
    k : int
        Anonymity level (smallest class of identical published rows).
    method : SparseMethod
        The registered method (with its capabilities).
    beta : float
        Facility-location cost parameter (> 1; α = 1/β).
    runs : int
        Independent clustering runs per chunk (the cheapest is kept).
    epsilon : float or None
        Privacy budget of a DP method (``rr``); None for the others.
    dp : str
        DP level of ``rr``: ``edge`` or ``node``.
    refine : bool
        Min-hash order with the support refinement key (else the paper's plain order).
    execution : Execution
        Executor of the chunks (``auto``: inline for one chunk, else Dask), workers, scheduler,
        rows per min-hash chunk (``chunk_rows``, always set), progress.
    seed : int or None
        Seed of every random step (None: OS entropy).
    """

    k: int
    method: SparseMethod
    beta: float
    runs: int
    epsilon: float | None
    dp: str
    refine: bool
    execution: Execution
    seed: int | None
    keywords: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> SparseJob:
        """Validate a run's parameters.

        Raises
        ------
        InputError
            The first problem, naming the parameter (```beta``` must be in (1, ∞), got 1.0); an
            unknown parameter; ``epsilon`` missing for ``rr`` or given to a method that is not
            differentially private; ``chunk_rows`` below 2k.
        """
        from anonymatch.sparse.methods.randomized_response import LEVELS

        p = with_defaults(values, PARAMETERS)
        method = lookup(registry(), p["method"])
        k = integer(p["k"], "k")
        dp = choice(p["dp"], "dp", LEVELS)
        epsilon = p["epsilon"]
        if method.epsilon:
            if epsilon is None:
                raise InputError(f"method {method.name!r} needs {param('epsilon')}")
            epsilon = number(epsilon, "epsilon")
        elif epsilon is not None or dp != PARAMETERS["dp"]:
            raise InputError(
                f"{param('epsilon')} and {param('dp')} need {param('method')} "
                f"{' or '.join(names(epsilon=True))} (differential privacy)"
            )
        chunk_rows = p["chunk_rows"]
        if chunk_rows is None:
            chunk_rows = DEFAULT_CHUNK_ROWS
        execution = Execution.build(
            "auto" if p["executor"] is None else p["executor"],
            p["workers"],
            p["scheduler"],
            chunk_rows,
            p["progress"],
        )
        assert execution.chunk_rows is not None
        if execution.chunk_rows < 2 * k:
            raise InputError(
                f"{param('chunk_rows')} must be at least 2k = {2 * k}, got {execution.chunk_rows}"
            )
        return cls(
            k=k,
            method=method,
            beta=number(p["beta"], "beta", low=1.0),
            runs=integer(p["runs"], "runs"),
            epsilon=epsilon,
            dp=dp,
            refine=flag(p["refine"], "refine"),
            execution=execution,
            seed=check_seed(p["seed"]),
            keywords=dict(values),
        )

    @property
    def chunk_rows(self) -> int:
        """Rows per min-hash chunk."""
        assert self.execution.chunk_rows is not None
        return self.execution.chunk_rows

    def replace(self, changes: Mapping[str, Any]) -> SparseJob:
        """A copy with some parameters changed (``changes``: parameter → value), validated
        again."""
        return SparseJob.build({**self.keywords, **changes})


def check_rows(job: SparseJob, n: int) -> None:
    """k against the number of rows ``n`` (``InfeasibleError``, exit code 3), for a method whose
    release is verified (randomized response publishes every row whatever k)."""
    if job.method.verified:
        check_level_fits(job.k, n)


def check_streamable(job: SparseJob) -> None:
    """Refuse the streamed path to a method that does not stream (``InputError``)."""
    if not job.method.streamable:
        raise InputError(
            f"the streamed path runs the methods {', '.join(names(streamable=True))}; "
            f"{job.method.name!r} runs in memory"
        )
