"""Method registry of sparse binary matrices: every way of publishing one, with what each
method can do.

Each method declares its capabilities (:class:`SparseMethod`); the command line's ``--method``
and ``--rule`` choices, the job file's enumeration (``anonymatch.app.jobfile.METHODS``), the
typed job's checks (``anonymatch.sparse.job``), the choice of the streamed path and the tests'
parametrizations are derived from the registry with :func:`names`, never listed again.
Importing this package is cheap (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from anonymatch.core import registry as core


@dataclass(frozen=True, kw_only=True)
class SparseMethod(core.Method):
    """A registered sparse method.

    Attributes
    ----------
    name, summary, sensitive, verified
        As :class:`anonymatch.core.registry.Method` (``verified`` False: randomized response,
        whose ε-DP is a property of the mechanism, with nothing to check from the data).
    partitioned : bool
        Clusters min-hash chunks of ``chunk_rows`` rows (``beta``, ``runs`` and ``refine``
        apply).
    streamable : bool
        Runs out of core on a Parquet edge list (``anonymatch.sparse.streamed``).
    model : str
        The manifest's ``guarantee.model``.
    vote : str or None
        How a class's rows are published: ``majority`` or ``all`` (intersection); None for a
        method that publishes no classes.
    rule : str or None
        The verifier's rule for the release (``smooth``: majority support; ``nonsmooth``:
        unanimous support); None if not verified.
    epsilon : bool
        Differential privacy with a budget ``epsilon`` at the level ``dp`` (needs ``epsilon``).
    """

    model: str = "k-anonymity"
    vote: str | None = "all"
    rule: str | None = "nonsmooth"
    epsilon: bool = False


@cache
def registry() -> dict[str, SparseMethod]:
    """All sparse methods by name (the first is the default)."""
    return core.registry_of(
        SparseMethod(
            name="smooth",
            summary="facility-location clusters, majority vote: smooth k-anonymity",
            partitioned=True,
            streamable=True,
            model="smooth-k-anonymity",
            vote="majority",
            rule="smooth",
        ),
        SparseMethod(
            name="nonsmooth",
            summary="the same clusters, intersection: k-anonymity by suppression",
            partitioned=True,
            streamable=True,
        ),
        SparseMethod(
            name="mondrian",
            summary="Mondrian on binary columns, intersection (baseline)",
        ),
        SparseMethod(
            name="rr",
            summary="randomized response, ε edge- or node-DP (not k-anonymity)",
            verified=False,
            model="randomized-response",
            vote=None,
            rule=None,
            epsilon=True,
        ),
    )


def names(
    *,
    partitioned: bool | None = None,
    streamable: bool | None = None,
    verified: bool | None = None,
    model: str | None = None,
    vote: str | None = None,
    rule: str | None = None,
    epsilon: bool | None = None,
) -> tuple[str, ...]:
    """Names of the sparse methods with the given capabilities (None: any, so that ``vote`` and
    ``rule`` select among the methods that have one), in registry order
    (``names(streamable=True)``: those of the streamed path). A sparse matrix has no sensitive
    values: no sparse method is ``sensitive``, and that is not a filter here."""
    return tuple(
        m.name
        for m in core.matching(
            registry(),
            partitioned=partitioned,
            streamable=streamable,
            verified=verified,
        )
        if core.fits(m.model, model)
        and core.fits(m.vote, vote)
        and core.fits(m.rule, rule)
        and core.fits(m.epsilon, epsilon)
    )


def rules() -> tuple[str, ...]:
    """The verifier's rules of the verified methods (``verify-sparse --rule``), in order."""
    return tuple(dict.fromkeys(m.rule for m in registry().values() if m.rule is not None))
