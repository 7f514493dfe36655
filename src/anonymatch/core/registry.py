"""The shape of every data kind's method registry: a method's name, summary and capabilities.

Each kind registers its methods once (``anonymatch.tables.methods.registry``,
``anonymatch.sets.methods.registry``, ``anonymatch.sparse.methods.registry``,
``anonymatch.graphs.methods.registry``, ``anonymatch.relational.methods.registry``): the
command line's ``--method`` choices, the job file's enumeration
(``anonymatch.app.jobfile.METHODS``), the typed jobs' capability checks and the tests'
parametrizations are derived from the registry with :func:`names`, never listed again.

A kind extends :class:`Method` with its own capabilities (a ``kw_only`` dataclass, so that a
subclass may add fields of its own, with or without defaults, and every entry is built with
keywords), and its ``names`` takes every capability that applies to the kind as a
keyword-only filter (None: any value; the shared ones go to :func:`matching`, the kind's own
are checked with :func:`fits`): every call site's filter is typed and checked by mypy. Every
helper is O(number of methods).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from anonymatch.core.params import choice


@dataclass(frozen=True, kw_only=True)
class Method:
    """A registered method and the capabilities every kind shares.

    Attributes
    ----------
    name, summary : str
        The method's name (``--method``) and one line on what it does.
    partitioned : bool
        Runs once per part of the records (partitions, chunks) rather than on all at once.
    sensitive : bool
        Protects sensitive values (ℓ-diversity, t-closeness).
    streamable : bool
        Runs on the streamed path (inputs larger than memory).
    verified : bool
        Its release is checked from the data by an independent verifier before it is returned
        (False for a mechanism whose guarantee is a property of the randomness, as randomized
        response's ε-DP).
    """

    name: str
    summary: str
    partitioned: bool = False
    sensitive: bool = False
    streamable: bool = False
    verified: bool = True


M = TypeVar("M", bound=Method)


def registry_of(*methods: M) -> dict[str, M]:
    """Methods by name, in the order given (a name registered twice is a programming error)."""
    table = {m.name: m for m in methods}
    assert len(table) == len(methods), "a method name is registered twice"
    return table


def fits(value: object, wanted: object) -> bool:
    """Whether a method's capability ``value`` is the one a filter asks for (``wanted``; None:
    any value)."""
    return wanted is None or value == wanted


def matching(
    registry: Mapping[str, M],
    *,
    partitioned: bool | None = None,
    sensitive: bool | None = None,
    streamable: bool | None = None,
    verified: bool | None = None,
) -> tuple[M, ...]:
    """The registered methods whose shared capabilities have the given values (None: any), in
    registry order; a kind's ``names`` filters them further by its own capabilities."""
    return tuple(
        m
        for m in registry.values()
        if fits(m.partitioned, partitioned)
        and fits(m.sensitive, sensitive)
        and fits(m.streamable, streamable)
        and fits(m.verified, verified)
    )


def names(
    registry: Mapping[str, Method],
    *,
    partitioned: bool | None = None,
    sensitive: bool | None = None,
    streamable: bool | None = None,
    verified: bool | None = None,
) -> tuple[str, ...]:
    """Names of the registered methods whose capabilities have the given values (None: any), in
    registry order (``names(SETS, sensitive=True)``: the methods that do ℓ-diversity)."""
    chosen = matching(
        registry,
        partitioned=partitioned,
        sensitive=sensitive,
        streamable=streamable,
        verified=verified,
    )
    return tuple(m.name for m in chosen)


def lookup(registry: Mapping[str, M], value: object, name: str = "method") -> M:
    """The registered method called ``value`` (``InputError`` naming the parameter and the
    known methods otherwise)."""
    return registry[choice(value, name, tuple(registry))]
