"""Method registry of relational-transaction data: every way of publishing people with a row and
a set, with what each method can do.

Each method declares its capabilities (:class:`RelationalMethod`); the command line's
``--method`` choices, the typed job's checks (``anonymatch.relational.job``) and the tests'
parametrizations are derived from the registry with :func:`names`, never listed again.
Importing this package is cheap (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from anonymatch.core import registry as core


@dataclass(frozen=True, kw_only=True)
class RelationalMethod(core.Method):
    """A registered relational-transaction method.

    Attributes
    ----------
    name, summary, partitioned, sensitive, streamable, verified
        As :class:`anonymatch.core.registry.Method` (``sensitive``: ℓ-diversity and
        t-closeness, by classes that satisfy the models — the tables' ``diverse_clusters`` —
        for every method, as the tables' freeform methods do, in memory; ``streamable``: the
        streamed path ``anonymatch.relational.streamed`` runs it partition by partition, the
        class baseline within each partition).
    step : str
        For a freeform method, the tables' inner assignment routine it runs on the joint cost
        (``hungarian``, ``sortgreedy``, ``greedy``: ``anonymatch.tables.methods.freeform``);
        empty for a class-based method.
    classes : bool
        Publishes classes of ≥ k people (complete bicliques), items held by all certain and
        the rest uncertain: the baseline.
    """

    step: str = ""
    classes: bool = False


@cache
def registry() -> dict[str, RelationalMethod]:
    """All relational-transaction methods by name (the first is the default)."""
    return core.registry_of(
        RelationalMethod(
            name="hungarian",
            summary="freeform k-anonymity by minimum-cost assignments on the joint cost (Doka §7)",
            partitioned=True,
            sensitive=True,
            streamable=True,
            step="hungarian",
        ),
        RelationalMethod(
            name="sortgreedy",
            summary="freeform k-anonymity by sorted greedy assignments on the joint cost",
            partitioned=True,
            sensitive=True,
            streamable=True,
            step="sortgreedy",
        ),
        RelationalMethod(
            name="classes",
            summary="Mondrian classes, items held by all certain and the rest uncertain (baseline)",
            sensitive=True,
            streamable=True,
            classes=True,
        ),
    )


def names(
    *,
    partitioned: bool | None = None,
    sensitive: bool | None = None,
    streamable: bool | None = None,
    verified: bool | None = None,
    step: str | None = None,
    classes: bool | None = None,
) -> tuple[str, ...]:
    """Names of the relational-transaction methods with the given capabilities (None: any), in
    registry order (``names()``: the choices of ``--method``)."""
    return tuple(
        m.name
        for m in core.matching(
            registry(),
            partitioned=partitioned,
            sensitive=sensitive,
            streamable=streamable,
            verified=verified,
        )
        if core.fits(m.step, step) and core.fits(m.classes, classes)
    )
