"""Method registry of set-valued data: every way of publishing transactions, with what each
method can do.

Each method declares its capabilities (:class:`SetMethod`); the command line's ``--method``
choices, the job file's enumeration (``anonymatch.app.jobfile.METHODS``), the typed job's
checks (``anonymatch.sets.job``) and the tests' parametrizations are derived from the registry
with :func:`names`, never listed again. Importing this package is cheap (no numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from anonymatch.core import registry as core


@dataclass(frozen=True, kw_only=True)
class SetMethod(core.Method):
    """A registered set-valued method.

    Attributes
    ----------
    name, summary, partitioned, sensitive, streamable, verified
        As :class:`anonymatch.core.registry.Method` (``sensitive``: ℓ-diversity on the
        sensitive labels, ``ell``).
    anonymity : bool
        k-anonymity at a level ``k`` (nonreciprocal recoding).
    km : bool
        k^m-anonymity (levels ``k`` and ``m``; global item grouping).
    ordered : bool
        Joins the records by a ring over their Gray-code order; ℓ-diversity then needs the labels
        to be (2ℓ−1)-eligible (the label-interleaved order), else ℓ-eligible.
    tsp : bool
        Improves the Gray order by a TSP over segments (``segment`` applies).
    command : str
        The command that runs it (``anonymize-sets`` or ``anonymize-km``).
    """

    anonymity: bool = False
    km: bool = False
    ordered: bool = False
    tsp: bool = False
    command: str = "anonymize-sets"


@cache
def registry() -> dict[str, SetMethod]:
    """All set-valued methods by name (the first is the default)."""
    return core.registry_of(
        SetMethod(
            name="gray-tsp",
            summary="ring over the Gray order improved by TSP (Xue et al. 2012)",
            anonymity=True,
            sensitive=True,
            ordered=True,
            tsp=True,
        ),
        SetMethod(
            name="gray",
            summary="ring over the Gray order only (the paper's ablation)",
            anonymity=True,
            sensitive=True,
            ordered=True,
        ),
        SetMethod(
            name="cahd",
            summary="CAHD groups published by bit voting, an ℓ-diversity baseline",
            sensitive=True,
        ),
        SetMethod(
            name="km-hypergraph",
            summary="k^m-anonymity by global item grouping (anonymize-km)",
            km=True,
            command="anonymize-km",
        ),
    )


def names(
    *,
    sensitive: bool | None = None,
    verified: bool | None = None,
    anonymity: bool | None = None,
    km: bool | None = None,
    ordered: bool | None = None,
    tsp: bool | None = None,
    command: str | None = None,
) -> tuple[str, ...]:
    """Names of the set-valued methods with the given capabilities (None: any), in registry
    order (``names(command="anonymize-sets")``: the choices of ``--method``). Sets have no
    partitioned or streamed path: no set method is ``partitioned`` or ``streamable``, and those
    two are not filters here."""
    return tuple(
        m.name
        for m in core.matching(registry(), sensitive=sensitive, verified=verified)
        if core.fits(m.anonymity, anonymity)
        and core.fits(m.km, km)
        and core.fits(m.ordered, ordered)
        and core.fits(m.tsp, tsp)
        and core.fits(m.command, command)
    )
