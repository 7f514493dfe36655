"""anonymatch: k-anonymous publication by freeform generalization, verified on every release.

One front per data kind, all with the same shape — ``anonymize(data, *, k=..., ...)``,
``verify(original, release, *, k=..., ...)`` and ``evaluate(original, release, ...)``, the
original always before the release, options keyword-only::

    anonymatch.tables    DataFrames (Doka et al. 2015); also anonymatch.anonymize, verify,
                         evaluate and risk
    anonymatch.sets      set-valued records (Xue et al. 2012)
    anonymatch.sparse    sparse binary matrices (smooth k-anonymity, Esfandiari et al.)
    anonymatch.graphs    graphs, k-anonymity of neighbourhoods (Stokes)
    anonymatch.relational people with a row and a set of items (freeform on the joint graph)

    result = anonymatch.anonymize(df, k=10, qi="age,sex,zip", numeric="age")
    result.release, result.report
    anonymatch.verify(df, result.release, k=10, qi="age,sex,zip", numeric="age").passed
    anonymatch.evaluate(df, result.release, qi="age,sex,zip", numeric="age").to_dict()
    anonymatch.risk(df, result.release, qi="age,sex,zip", numeric="age").to_dict()

Importing the package is cheap: the heavy modules load on the first call.
"""

from __future__ import annotations

from anonymatch import graphs, relational, sets, sparse, tables
from anonymatch.core.errors import (
    AnonymatchError,
    InfeasibleError,
    InputError,
    VerificationError,
    WorkerError,
)
from anonymatch.core.version import __version__
from anonymatch.tables import anonymize, evaluate, risk, verify

__all__ = [
    "AnonymatchError",
    "InfeasibleError",
    "InputError",
    "VerificationError",
    "WorkerError",
    "__version__",
    "anonymize",
    "evaluate",
    "graphs",
    "relational",
    "risk",
    "sets",
    "sparse",
    "tables",
    "verify",
    "read_release",
    "midpoints",
    "mean_bounds",
    "uniform_histogram",
]

_RELEASE_READERS = ("read_release", "midpoints", "mean_bounds", "uniform_histogram")


def __getattr__(name: str) -> object:
    """``read_release`` and its helpers (``anonymatch.tables.io.release``), loaded on first use."""
    if name in _RELEASE_READERS:
        from anonymatch.tables.io import release

        return getattr(release, name)
    raise AttributeError(f"module 'anonymatch' has no attribute {name!r}")
