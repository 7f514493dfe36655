"""Method registry of graphs: every way of publishing a graph, with what each method can do.

The job file's enumeration (``anonymatch.app.jobfile.METHODS``) and the typed job's checks
(``anonymatch.graphs.job``) are derived from the registry with :func:`names`. Importing this
module is cheap (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from anonymatch.core import registry as core


@dataclass(frozen=True, kw_only=True)
class GraphMethod(core.Method):
    """A registered graph method.

    Attributes
    ----------
    name, summary, partitioned, sensitive, streamable, verified
        As :class:`anonymatch.core.registry.Method`.
    neighbourhoods : tuple of str
        The neighbourhoods it anonymizes (``closed`` applies when both are listed).
    """

    neighbourhoods: tuple[str, ...] = ("open", "closed")


@cache
def registry() -> dict[str, GraphMethod]:
    """All graph methods by name (the first is the default)."""
    return core.registry_of(
        GraphMethod(
            name="graph-kmeans-majority",
            summary="k-means-style groups of similar vertices joined by the majority rule "
            "(Stokes 2013)",
        ),
    )


def names(*, verified: bool | None = None, neighbourhood: str | None = None) -> tuple[str, ...]:
    """Names of the graph methods with the given capabilities (None: any), in registry order;
    ``neighbourhood``: those that anonymize that neighbourhood (``open`` or ``closed``). A
    graph has no partitioned or streamed path and no sensitive values: no graph method is
    ``partitioned``, ``streamable`` or ``sensitive``, and those are not filters here."""
    return tuple(
        m.name
        for m in core.matching(registry(), verified=verified)
        if neighbourhood is None or neighbourhood in m.neighbourhoods
    )
