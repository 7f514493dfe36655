"""The typed graph job: one validated value describes an ``anonymize-graph`` run.

The Python front (``anonymatch.graphs.anonymize``), the ``anonymize-graph`` command and the
positional form of the pipeline (``anonymatch.graphs.pipeline.anonymize_graph``) all build a
:class:`GraphJob` with :meth:`GraphJob.build` (strict types, ``anonymatch.core.params``; the
method read from the registry, ``anonymatch.graphs.methods``); the pipeline
(``anonymatch.graphs.pipeline.run_job``) takes it and checks k against the vertices
(``InfeasibleError``, exit 3). O(1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from anonymatch.core.params import flag, integer, with_defaults
from anonymatch.core.registry import lookup
from anonymatch.graphs.methods import GraphMethod, names, registry

PARAMETERS: dict[str, Any] = {
    "k": None,
    "closed": False,
    "iterations": 10,
    "method": names()[0],
}
"""Every parameter of a graph job and its default (the names ``GraphJob.build`` takes)."""


@dataclass(frozen=True)
class GraphJob:
    """A validated graph run. Build it with :meth:`build`, never field by field.

    Attributes
    ----------
    k : int
        Anonymity level (smallest class of vertices with equal neighbourhoods).
    closed : bool
        Anonymize closed neighbourhoods N(v) ∪ {v} instead of open ones.
    iterations : int
        Rounds of k-means-style refinement of the groups (≥ 0).
    method : GraphMethod
        The registered method.
    """

    k: int
    closed: bool
    iterations: int
    method: GraphMethod
    keywords: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> GraphJob:
        """Validate a run's parameters, given by name (``InputError`` naming the first bad one,
        or an unknown parameter)."""
        p = with_defaults(values, PARAMETERS)
        return cls(
            k=integer(p["k"], "k"),
            closed=flag(p["closed"], "closed"),
            iterations=integer(p["iterations"], "iterations", minimum=0),
            method=lookup(registry(), p["method"]),
            keywords=dict(values),
        )

    def replace(self, changes: Mapping[str, Any]) -> GraphJob:
        """A copy with some parameters changed (``changes``: parameter → value), validated
        again."""
        return GraphJob.build({**self.keywords, **changes})
