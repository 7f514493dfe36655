"""The level of a table release as a criterion: k for everyone, or a level per person.

Every table release claims exactly one level: k-anonymity with one ``k`` for everyone
(:class:`KAnonymity`: every person matches at least k published rows through k disjoint
assignments, Doka et al. §2.2), or per-record levels read from a column of the original
(:class:`PerRecordLevels`: person i matches at least δᵢ rows, Choromanski et al. §2). Their
parameters (``k``, ``k_column``) are declared here once as
:class:`~anonymatch.core.criteria.Parameter` data — the command line's ``-k/--k`` and
``--k-column``, the job file's ``[model]`` keys and the job's keywords derive from them —,
``describe`` states the level in the manifest (``guarantee.model``, ``guarantee.k``; a
per-record release adds its levels' figures, ``guarantee.levels``), ``claimed_in`` reads it
back, and ``check`` is the verifier (``tables.verify.verify``: a k-factor by max-flow;
``verify_adaptive``: ≥ δᵢ disjoint matches per person), never re-implemented here.

Which of the two a run takes, and which methods can make it, is the job's rule
(``tables.job``: exactly one of ``k`` and ``k_column``; per-record levels need a method with
the ``levels`` capability). The module is light (the command line reads the parameters at
start-up); the verifiers are imported when a check runs.

References
----------
.. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform generalization",
   ASIA CCS 2015, §2.2 (k-anonymity as a k-factor of the compatibility graph).
.. [2] K. Choromanski, T. Jebara, K. Tang, "Adaptive anonymity via b-matching", NIPS 2013, §2
   (per-record levels).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from anonymatch.core.criteria import Criterion, Parameter, Verdict
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from anonymatch.tables.columns.schema import EncodedQI
    from anonymatch.tables.recode import GeneralizedQI

K = Parameter(
    name="k",
    kind="integer",
    short="-k",
    metavar="K",
    help="Anonymity level k >= 1 for everyone: every person matches at least k published rows "
    "through k disjoint assignments.",
)
K_COLUMN = Parameter(
    name="k_column",
    kind="column",
    metavar="COLUMN",
    help="Per-record levels, instead of k: the original's column holding each person's own "
    "level (b-matching and agglomerative methods).",
)


@dataclass(frozen=True)
class LevelView:
    """What a level is checked on: the release's parsed QI cells, the original's encoded QIs
    and table (its level column), and the share of people the release may lack."""

    cells: GeneralizedQI
    original: EncodedQI
    original_table: pd.DataFrame
    suppression_limit: float = 0.0


@dataclass(frozen=True)
class KAnonymity(Criterion):
    """k-anonymity: every person matches at least ``k`` published rows through k disjoint
    assignments (a k-factor of the compatibility graph)."""

    k: int
    name: ClassVar[str] = "k"
    title: ClassVar[str] = "k-anonymity"
    parameters: ClassVar[tuple[Parameter, ...]] = (K,)
    level: ClassVar[bool] = True
    kinds: ClassVar[tuple[str, ...]] = ("table", "relational")
    paths: ClassVar[tuple[str, ...]] = ("memory", "streamed")
    reference: ClassVar[str] = "Doka et al., ASIA CCS 2015, §2.2"

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> KAnonymity:
        return cls(int(values["k"]))  # type: ignore[call-overload]

    def describe(self) -> dict[str, Any]:
        """The manifest's ``guarantee`` keys: ``model`` and ``k``."""
        return {"model": "k-anonymity", "k": self.k}

    @classmethod
    def claimed_in(
        cls, guarantee: Mapping[str, Any], roles: Mapping[str, Any]
    ) -> dict[str, object]:
        """``k`` of a release that claims no per-record levels (``guarantee.k``)."""
        if PerRecordLevels.claimed_in(guarantee, roles):
            return {}
        return {"k": guarantee.get("k")}

    def check(self, view: LevelView) -> Verdict:
        """A k-factor of the compatibility graph rebuilt from the cells
        (``tables.verify.verify``; its figures). O(compatible pairs + max-flow)."""
        from anonymatch.tables.verify import verify

        report = verify(view.cells, view.original, self.k, view.suppression_limit)
        return _verdict(report)


@dataclass(frozen=True)
class PerRecordLevels(Criterion):
    """Adaptive anonymity: person i matches at least δᵢ published rows, δᵢ read from the
    original's ``column``."""

    column: str
    name: ClassVar[str] = "levels"
    title: ClassVar[str] = "per-record levels"
    parameters: ClassVar[tuple[Parameter, ...]] = (K_COLUMN,)
    level: ClassVar[bool] = True
    paths: ClassVar[tuple[str, ...]] = ("adaptive",)
    reference: ClassVar[str] = "Choromanski, Jebara, Tang, NIPS 2013, §2"

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> PerRecordLevels:
        return cls(str(values["k_column"]))

    def describe(self) -> dict[str, Any]:
        """The manifest's ``guarantee`` keys: ``model`` and the ``levels`` column (the path
        adds the levels' figures, and ``k`` when they are all equal)."""
        return {"model": "adaptive-anonymity", "levels": {"column": self.column}}

    @classmethod
    def claimed_in(
        cls, guarantee: Mapping[str, Any], roles: Mapping[str, Any]
    ) -> dict[str, object]:
        """``k_column`` of a release that claims per-record levels (``guarantee.levels``)."""
        levels = guarantee.get("levels")
        if isinstance(levels, Mapping) and levels.get("column"):
            return {"k_column": levels["column"]}
        return {}

    def check(self, view: LevelView) -> Verdict:
        """At least δᵢ disjoint matches per person (``tables.verify.verify_adaptive``; its
        figures). O(compatible pairs + b-matching flow)."""
        from anonymatch.tables.verify import verify_adaptive

        delta = parse_levels(view.original_table, self.column)
        return _verdict(verify_adaptive(view.cells, view.original, delta))


def parse_levels(data: pd.DataFrame, column: str, n: int | None = None) -> np.ndarray:
    """δ from a column: integers 1 ≤ δᵢ ≤ n, none missing; InputError otherwise. O(n)."""
    import numpy as np
    import pandas as pd

    if column not in data.columns:
        raise InputError(f"level column {column!r} is not in the input")
    values = data[column]
    text = values.astype(str).str.strip()
    missing = values.isna().to_numpy() | text.isin(["", "nan", "NaN", "NA", "null"]).to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise InputError(f"missing privacy level in column {column!r} (row {row + 1})")
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(numbers) | (numbers != np.round(numbers))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"privacy level {text.iloc[row]!r} in column {column!r} (row {row + 1}) "
            "is not an integer"
        )
    delta = numbers.astype(np.int64)
    n = len(delta) if n is None else n
    if delta.min() < 1:
        row = int(np.argmin(delta))
        raise InputError(f"privacy level {delta[row]} (row {row + 1}) must be at least 1")
    if delta.max() > n:
        row = int(np.argmax(delta))
        raise InputError(
            f"privacy level {delta[row]} (row {row + 1}) exceeds the number of rows ({n})"
        )
    return delta


def _verdict(report: Any) -> Verdict:
    """A verifier's report as a verdict: its figures, the report itself as ``detail``."""
    figures = report.to_dict()
    del figures["passed"], figures["reason"]
    return Verdict(report.passed, report.reason, figures, report)
