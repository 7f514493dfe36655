"""Population criteria: k-map and the average journalist risk.

k-anonymity counts the people of the *sample* a published row could be; when the attacker's
list is a population register, what protects a respondent is the number of *population*
records the row could be (Sweeney's k-map; El Emam & Dankar 2008). A k-anonymous release of a
sample of fraction f usually has rows compatible with about k / f population records, so a
release at a small k can already meet a larger K against the population.

Each criterion here is a :class:`~anonymatch.core.criteria.Criterion` over the population
view (``tables.risk.population.PopulationRisk``: F_j, the population records compatible with
published row j, and f_j, the sample records) and says which rows it accepts
(:meth:`PopulationCriterion.rows_ok`); ``tables.models.widening`` widens the rows some
criterion refuses. The module is light (numpy is imported when a check runs): the command
line reads the criteria's flags at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from anonymatch.core.criteria import Criterion, Parameter, Verdict
from anonymatch.core.errors import InfeasibleError

if TYPE_CHECKING:
    import numpy as np

    from anonymatch.tables.risk.population import PopulationRisk

_EPS = 1e-12
"""Tolerance of the journalist-risk bound (float sums)."""

REFERENCE = (
    "L. Sweeney, Computational disclosure control, MIT PhD thesis, 2001 (k-map); K. El Emam, "
    "F. K. Dankar, Protecting privacy using k-anonymity, JAMIA 15(5), 2008"
)


class PopulationCriterion(Criterion):
    """A criterion counted against a population table: it accepts or refuses each published
    row from F_j and f_j (:meth:`rows_ok`), and may hold a condition on the whole release
    (:meth:`check`). In memory only: the population is read whole. Tables and relational
    releases (on their QI cells: the register holds QIs, not items) run them."""

    needs_population: ClassVar[bool] = True
    kinds: ClassVar[tuple[str, ...]] = ("table", "relational")
    needs_subset: ClassVar[bool] = False
    """Whether the sample must be part of the population (δ-presence counts it there)."""

    def rows_ok(self, big_f: np.ndarray, small_f: np.ndarray) -> np.ndarray:
        """The rows this criterion accepts (all, by default). O(rows)."""
        return big_f >= 0

    def feasible(self, n: int, big_n: int) -> None:
        """Raise InfeasibleError when no release of ``n`` sample records against a
        population of ``big_n`` can meet the criterion (all-``*`` rows included)."""


@dataclass(frozen=True)
class KMap(PopulationCriterion):
    """k-map: every published row compatible with at least ``k`` population records."""

    k: int
    name: ClassVar[str] = "kmap"
    title: ClassVar[str] = "k-map"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter(
            name="kmap",
            kind="integer",
            metavar="K",
            help="k-map: every published row must fit at least K records of the population "
            "table (rows below it are widened, then verified).",
        ),
    )
    reference: ClassVar[str] = REFERENCE

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> KMap:
        return cls(int(values["kmap"]))  # type: ignore[call-overload]

    @classmethod
    def claimed(cls, block: Mapping[str, Any]) -> dict[str, object]:
        return {"kmap": block.get("k")}

    def describe(self) -> dict[str, Any]:
        return {"k": self.k}

    def rows_ok(self, big_f: np.ndarray, small_f: np.ndarray) -> np.ndarray:
        return big_f >= self.k

    def feasible(self, n: int, big_n: int) -> None:
        if self.k > big_n:
            raise InfeasibleError(
                f"`kmap` = {self.k} cannot be met: the population has only {big_n} records"
            )

    def check(self, view: PopulationRisk) -> Verdict:
        achieved = view.kmap
        passed = achieved >= self.k
        reason = (
            f"every published row fits at least {achieved} of the {view.population} "
            f"population records (required {self.k})"
        )
        return Verdict(
            passed, reason, {"achieved": achieved, "population_records": view.population}
        )


@dataclass(frozen=True)
class JournalistRisk(PopulationCriterion):
    """A bound on the average journalist risk (ARX's: max(G / Σ F, mean 1 / F) over the G
    groups of identical rows), enforced by raising a k-map floor."""

    bound: float
    name: ClassVar[str] = "journalist_risk"
    title: ClassVar[str] = "average journalist risk"
    parameters: ClassVar[tuple[Parameter, ...]] = (
        Parameter(
            name="journalist_risk",
            kind="fraction",
            metavar="R",
            help="A bound in (0, 1] on the average journalist risk against the population "
            "table (rows are widened as for k-map, raising its floor, until the average is "
            "below it).",
        ),
    )
    reference: ClassVar[str] = REFERENCE + "; F. Prasser et al., ARX RiskModelSampleSummary"

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> JournalistRisk:
        return cls(float(values["journalist_risk"]))  # type: ignore[arg-type]

    def describe(self) -> dict[str, Any]:
        return {"journalist_risk": self.bound}

    def check(self, view: PopulationRisk) -> Verdict:
        mean = view.journalist_mean
        passed = mean <= self.bound + _EPS
        reason = f"average journalist risk {mean:.4g} (bound {self.bound:g})"
        return Verdict(passed, reason, {"mean_risk": mean})
