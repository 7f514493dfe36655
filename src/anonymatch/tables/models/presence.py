"""δ-presence: how sure an attacker holding the population can be that a person is in the release.

The attacker knows the population (a register with the QIs) and that the release is a sample of
it. For a published row j, F_j population records and f_j sample records are compatible with it;
a population member compatible with row j is in the sample with probability f_j / F_j (every
compatible population record equally likely, the attacker knowing nothing else). δ-presence
(Nergiz, Atzori & Clifton, SIGMOD 2007) bounds that share for every published row:
δmin ≤ f_j / F_j ≤ δmax. The upper bound hides membership (an attacker never learns that a
person was sampled with more than δmax confidence); the lower bound keeps the release from
revealing that some people were *not* sampled with near certainty.

Adversary model and verifier: ``docs/guarantees/presence.md``. The verdict is computed from the
release, the original QIs (the sample) and the population alone
(``tables.risk.population.population_risk``); the enforcement is the widening shared by the
population criteria (``tables.models.kmap.enforce_population``): an all-``*`` row has
f / F = n / N, so bounds containing n / N can always be met, and bounds that exclude it raise
InfeasibleError (exit 3) before anything runs. The sample must be part of the population (per
QI combination, the population has at least as many records as the sample); otherwise the
shares are not probabilities and the criterion is refused (exit 2).

References
----------
.. [1] M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals from shared
   databases", SIGMOD 2007, Definition 3 (δ-presence).
.. [2] F. Prasser et al., ARX, ``DPresence`` (the criterion over a research subset).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from anonymatch.core.criteria import Parameter, Verdict
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.tables.models.kmap import PopulationCriterion

if TYPE_CHECKING:
    import numpy as np

    from anonymatch.tables.risk.population import PopulationRisk

_EPS = 1e-12


@dataclass(frozen=True)
class DeltaPresence(PopulationCriterion):
    """δ-presence: δmin ≤ f_j / F_j ≤ δmax for every published row j (module docstring).

    Attributes
    ----------
    low, high : float
        δmin in [0, 1] and δmax in (0, 1], δmin ≤ δmax.

    Notes
    -----
    :meth:`rows_ok` and :meth:`check` are O(rows) on the population view.
    """

    low: float
    high: float
    name: ClassVar[str] = "presence"
    title: ClassVar[str] = "delta-presence"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter(
            name="delta_max",
            kind="fraction",
            metavar="D",
            help="delta-presence: for every published row, at most this share of the "
            "population records it fits may be in the release (rows above are widened).",
        ),
        Parameter(
            name="delta_min",
            kind="share",
            metavar="D",
            help="delta-presence: for every published row, at least this share of the "
            "population records it fits must be in the release (default 0).",
        ),
    )
    needs_subset: ClassVar[bool] = True
    reference: ClassVar[str] = "Nergiz, Atzori, Clifton, SIGMOD 2007"

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> DeltaPresence:
        high = values.get("delta_max")
        low = values.get("delta_min")
        if high is None:
            raise InputError("`delta_min` needs `delta_max` (the bound that hides membership)")
        low_value = 0.0 if low is None else float(low)  # type: ignore[arg-type]
        if low_value > float(high):  # type: ignore[arg-type]
            raise InputError(f"`delta_min` = {low_value:g} is above `delta_max` = {high:g}")
        return cls(low_value, float(high))  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        return {"delta_min": self.low, "delta_max": self.high}

    def rows_ok(self, big_f: np.ndarray, small_f: np.ndarray) -> np.ndarray:
        import numpy as np

        share = small_f / np.maximum(big_f, 1)
        return (big_f > 0) & (share >= self.low - _EPS) & (share <= self.high + _EPS)

    def feasible(self, n: int, big_n: int) -> None:
        share = n / big_n
        if not self.low - _EPS <= share <= self.high + _EPS:
            raise InfeasibleError(
                f"delta-presence [{self.low:g}, {self.high:g}] cannot be met: even rows that "
                f"fit everybody show the sample's share of the population, {share:.4g}"
            )

    def check(self, view: PopulationRisk) -> Verdict:
        if view.presence is None:
            return Verdict(
                False,
                "the population does not contain the sample: delta-presence is undefined",
                {"achieved_min": None, "achieved_max": None},
            )
        import numpy as np

        share = view.sample_per_row / np.maximum(view.population_per_row, 1)
        bad = int((~self.rows_ok(view.population_per_row, view.sample_per_row)).sum())
        lo, hi = float(share.min()), float(share.max())
        reason = (
            f"every published row has {lo:.4g} to {hi:.4g} of its compatible population "
            f"records in the release (required [{self.low:g}, {self.high:g}])"
            + (f"; {bad} rows outside" if bad else "")
        )
        return Verdict(bad == 0, reason, {"achieved_min": lo, "achieved_max": hi})
