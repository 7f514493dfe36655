"""Population uniqueness from the sample alone: Pitman, Zayatz, SNB, Dankar's rule, and the
individual risk of survey weights.

When no population table is at hand, the share of a sample's records that are unique in the
population is estimated from the sample's class-size histogram (c_s classes of size s among u
classes, n records) and the sampling fraction f = n / N. Each model estimates N₁, the number of
population uniques; under simple random sampling a population unique is sampled with probability
f, so N₁ / N also estimates the share of the sample's records that are population-unique.

* **Pitman** (Hoshino 2001; Pitman 1996): the sample partition follows the Ewens–Pitman
  two-parameter law; θ and α by maximum likelihood, then N₁ = Γ(θ+1)/Γ(θ+α) · N^α.
* **Zayatz** (1991): P(population unique | sample unique) from the hypergeometric chance of
  drawing one record of a class, the sample's class sizes standing in for the population's;
  N₁ = c₁ · that probability / f.
* **SNB** (Chen & Keller-McNulty 1998; the "slide negative binomial"): population class
  sizes are 1 + NegBin(α, β) over K non-empty classes; (K, α, β) solve the expected numbers
  of sample classes, of size 1 and of size 2; N₁ = K · β^α.
* **Dankar** (Dankar, El Emam, Neisa, Roffey 2012), as ARX implements it: f ≤ 0.1 → Pitman
  (Zayatz if Pitman does not converge); f > 0.1 → the smaller of Zayatz and SNB (Zayatz if SNB
  does not converge).
* **Individual risk** (Benedetti & Franconi 1998; sdcMicro's ``indivRisk``, method "approx"):
  per record, from its class's sample size f_k and summed weight F̂_k (p = f_k / F̂_k):
  p/(1−p)·log(1/p) for f_k = 1, p/(1−p) − (p/(1−p))²·log(1/p) for f_k = 2, p/(f_k − (1−p))
  above, and 1/f_k when f_k = F̂_k. Without weights, every record weighs 1/f.

Every estimator works on the histogram only: time O(u) to build it from the class sizes plus
O(number of distinct class sizes · iterations) for the solvers; memory O(distinct sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from anonymatch.core.errors import InputError
from anonymatch.core.params import param

MODELS = ("pitman", "zayatz", "snb", "dankar")
"""The population-uniqueness estimators, in the order of the report."""


@dataclass(frozen=True)
class Histogram:
    """Class sizes of a sample: ``counts[i]`` classes of size ``sizes[i]`` (sizes increasing),
    for a population of ``population`` records (N, possibly a sum of weights)."""

    sizes: np.ndarray
    counts: np.ndarray
    population: float

    @classmethod
    def of(cls, class_sizes: np.ndarray, population: float) -> Histogram:
        """The histogram of ``class_sizes`` (one entry per class). O(u log u)."""
        sizes, counts = np.unique(np.asarray(class_sizes, np.int64), return_counts=True)
        return cls(sizes, counts.astype(np.int64), float(population))

    @property
    def n(self) -> int:
        return int((self.sizes * self.counts).sum())

    @property
    def classes(self) -> int:
        return int(self.counts.sum())

    @property
    def fraction(self) -> float:
        return self.n / self.population

    def of_size(self, s: int) -> int:
        at = np.flatnonzero(self.sizes == s)
        return int(self.counts[at[0]]) if len(at) else 0


@dataclass(frozen=True)
class UniquenessEstimate:
    """One model's estimate: ``uniques`` N̂₁ (None when the model does not converge or gives
    no valid value), ``share`` N̂₁ / N, and for Dankar's rule the ``model`` it chose."""

    name: str
    uniques: float | None
    population: float
    model: str | None = None

    @property
    def share(self) -> float | None:
        return None if self.uniques is None else self.uniques / self.population

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"population_uniques": self.uniques, "share": self.share}
        if self.name == "dankar":
            out["model"] = self.model
        return out


def pitman(hist: Histogram) -> float | None:
    """Pitman's estimate of the population uniques N₁ (None if it does not converge).

    Maximises the Ewens–Pitman log-likelihood of the sample partition,
    Σ_{i<u} log(θ + iα) − Σ_{i<n} log(θ + i) + Σ_classes Σ_{j<s} log(j − α), in closed form
    with log-gamma functions, over θ > 0 and 0 < α < 1 (L-BFGS-B from ARX's moment start, then the
    likelihood equations solved from its point),
    then N₁ = Γ(θ+1)/Γ(θ+α) · N^α. O(distinct sizes) per iteration.

    References: N. Hoshino, "Applying Pitman's sampling formula to microdata disclosure risk
    assessment", J. Official Statistics 17(4), 2001; ARX ``ModelPitman``.
    """
    u, n, big_n = float(hist.classes), float(hist.n), hist.population
    c1 = float(hist.of_size(1))
    c2 = float(hist.of_size(2)) or 1.0
    if c1 == 0:
        return 0.0
    multi = hist.sizes > 1
    sizes, counts = hist.sizes[multi].astype(float), hist.counts[multi].astype(float)

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        t, a = float(x[0]), float(x[1])
        if not (0 < a < 1 and t > 0):  # the root polish may step outside the domain
            return math.inf, np.array([math.nan, math.nan])
        r = t / a
        ll = (
            (u - 1) * math.log(a)
            + special.gammaln(r + u)
            - special.gammaln(r + 1)
            - special.gammaln(t + n)
            + special.gammaln(t + 1)
            + float((counts * (special.gammaln(sizes - a) - special.gammaln(1 - a))).sum())
        )
        dpsi = special.digamma(r + u) - special.digamma(r + 1)
        dt = dpsi / a - (special.digamma(t + n) - special.digamma(t + 1))
        da = (u - 1) / a - t / a**2 * dpsi
        da -= float((counts * (special.digamma(sizes - a) - special.digamma(1 - a))).sum())
        return -ll, -np.array([dt, da])

    c = c1 * (c1 - 1) / c2
    den = (2 * c1 * u + c1 * c) - n * c
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / den if den else 1.0
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    start = np.array([min(max(t0, 1e-3), 1e9), min(max(a0, 1e-3), 1 - 1e-3)])
    res = optimize.minimize(
        negative,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=[(1e-9, 1e12), (1e-9, 1 - 1e-9)],
    )
    # L-BFGS-B stops on a flat ridge before the gradient vanishes: polish its point by solving
    # the likelihood equations (ARX's Newton–Raphson on the same equations)
    with np.errstate(all="ignore"):
        polished = optimize.root(lambda x: negative(x)[1], res.x, method="hybr")
    point = polished.x if polished.success else res.x
    t, a = (float(v) for v in point)
    if not np.all(np.isfinite(point)) or not (1e-6 < a < 1) or t <= 0:
        return None
    value = math.exp(special.gammaln(t + 1) - special.gammaln(t + a) + a * math.log(big_n))
    return value if 0 <= value <= big_n else None


def zayatz(hist: Histogram) -> float | None:
    """Zayatz's estimate of N₁: c₁ · P(population unique | sample unique) / f, the conditional
    probability from hypergeometric draws of n out of N with the sample's class sizes standing
    in for the population's. O(distinct sizes).

    References: L. Zayatz, "Estimation of the percent of unique population elements on a
    microdata file using the sample", US Census Bureau SRD Report 91/08, 1991; ARX
    ``ModelZayatz``.
    """
    c1 = hist.of_size(1)
    if c1 == 0:
        return 0.0
    big_n = int(round(hist.population))
    n = hist.n
    u = hist.classes
    one = stats.hypergeom(big_n, hist.sizes, n).pmf(1)
    temp = float((hist.counts / u * one).sum())
    p1 = float(stats.hypergeom(big_n, 1, n).pmf(1))
    if temp <= 0:
        return None
    value = c1 * (c1 / u * p1 / temp) / hist.fraction
    return value if math.isfinite(value) else None


def snb(hist: Histogram) -> float | None:
    """The slide-negative-binomial estimate of N₁ (None if its equations have no solution).

    Population class sizes are 1 + G, G ~ NegBin(α, β); a class is sampled binomially with
    probability f, so with d = (1−f)(1−β) and β' = β/(1−d), among K non-empty population
    classes the expected numbers of sample classes of size 1 and 2 are K·f·β'^α·(1 + αd/(1−d))
    and K·α·β^α·f²·(1−β)/2·(2 − (1−α)d)/(1−d)^(α+2), and of non-empty sample classes
    K·(1 − (1−f)·β'^α). The three are set to c₁, c₂ and u and solved for (K, α, β) (K
    eliminated by the third; α = e^x, β = expit(y) keep every Newton step in the domain);
    N₁ = K·β^α. O(solver iterations).

    Two departures from ARX's ``ModelSNB``: K comes from the model's own third moment, not
    from ARX's closed-form estimate of the non-empty classes (which, on synthetic censuses,
    was a third to a half of the true K, and the equations then had no solution); and the
    second equation divides by (1−d)^(α+2) as the derivation gives (ARX multiplies).

    References: G. Chen, S. Keller-McNulty, "Estimation of identification disclosure risk in
    microdata", J. Official Statistics 14(1), 1998; ARX ``ModelSNB``.
    """
    c1, c2 = float(hist.of_size(1)), float(hist.of_size(2))
    if c1 == 0:
        return 0.0
    f = hist.fraction
    if f >= 1:
        return c1
    u = float(hist.classes)

    def solve(p: np.ndarray) -> tuple[np.ndarray, float, float]:
        a = np.float64(math.exp(min(float(p[0]), 50.0)))
        b = np.float64(special.expit(p[1]))
        d = (1 - f) * (1 - b)
        shrunk = (b / (1 - d)) ** a
        k = u / (1 - (1 - f) * shrunk)
        e1 = k * f * shrunk * (a * d / (1 - d) + 1) - c1
        e2 = k * a * b**a * f * f * (1 - b) / 2 * (2 - (1 - a) * d) / (1 - d) ** (a + 2) - c2
        return np.array([e1 / c1, e2 / max(c2, 1.0)]), float(k), float(b**a)

    for a0, b0 in ((1.0, 0.5), (0.1, 0.1), (5.0, 0.9), (0.5, 0.3)):
        start = [math.log(a0), float(special.logit(b0))]
        with np.errstate(all="ignore"):
            sol = optimize.root(lambda p: solve(p)[0], start, method="hybr")
            residual, k, unique_share = solve(sol.x)
        if sol.success and np.all(np.isfinite(residual)) and np.abs(residual).max() < 1e-6:
            value = k * unique_share
            if math.isfinite(value) and 0 <= value <= hist.population:
                return value
    return None


def dankar(hist: Histogram) -> UniquenessEstimate:
    """Dankar et al.'s decision rule, as ARX implements it: f ≤ 0.1 → Pitman (Zayatz when
    Pitman gives no value); f > 0.1 → the smaller of Zayatz and SNB (Zayatz when SNB gives
    none). O(the chosen models).

    References: F. K. Dankar, K. El Emam, A. Neisa, T. Roffey, "Estimating the
    re-identification risk of clinical data sets", BMC Med. Inform. Decis. Mak. 12:66, 2012.
    """
    if hist.of_size(1) == 0:
        return UniquenessEstimate("dankar", 0.0, hist.population, "none")
    if hist.fraction <= 0.1:
        p = _valid(pitman(hist))
        if p is not None:
            return UniquenessEstimate("dankar", p, hist.population, "pitman")
        return UniquenessEstimate("dankar", zayatz(hist), hist.population, "zayatz")
    z = zayatz(hist)
    s = _valid(snb(hist))
    if s is not None and (z is None or s <= z):
        return UniquenessEstimate("dankar", s, hist.population, "snb")
    return UniquenessEstimate("dankar", z, hist.population, "zayatz")


def _valid(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) or value == 0 else value


def estimate_all(hist: Histogram) -> tuple[UniquenessEstimate, ...]:
    """Pitman, Zayatz, SNB and Dankar's rule on one histogram (in :data:`MODELS` order)."""
    p = hist.population
    return (
        UniquenessEstimate("pitman", pitman(hist), p),
        UniquenessEstimate("zayatz", zayatz(hist), p),
        UniquenessEstimate("snb", snb(hist), p),
        dankar(hist),
    )


def individual_risk(fk: np.ndarray, weight_sum: np.ndarray) -> np.ndarray:
    """sdcMicro's individual risk (``indivRisk``, method "approx") per record, from its class's
    sample frequency ``fk`` and summed weight ``weight_sum`` (F̂_k). O(n).

    References: R. Benedetti, L. Franconi, "Statistical and technological solutions for
    controlled data dissemination", NTTS 1998; L. Franconi, S. Polettini, "Individual risk
    estimation in μ-Argus", PSD 2004; sdcMicro ``indivRisk``.
    """
    fk = np.asarray(fk, np.float64)
    big = np.asarray(weight_sum, np.float64)
    pk = fk / big
    out = np.zeros(len(fk))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = pk / (1 - pk)
        log_inv = np.log(1 / pk)
        out = np.where(fk > 2, pk / (fk - (1 - pk)), out)
        out = np.where(fk == 2, ratio - ratio**2 * log_inv, out)
        out = np.where(fk == 1, ratio * log_inv, out)
    same = fk >= big
    out[same] = 1 / fk[same]
    return out


@dataclass(frozen=True)
class SampleEstimates:
    """Population figures estimated from the sample alone (module docstring): ``records`` n,
    ``population`` N (n / f, or the sum of the weights), ``weights`` the weight column (or
    None), ``sample_uniques`` on the original QIs, the four ``estimates`` and the individual
    risk per record (``individual``: its max, mean and sum, the expected re-identifications)."""

    records: int
    population: float
    weights: str | None
    sample_uniques: int
    estimates: tuple[UniquenessEstimate, ...]
    individual: np.ndarray

    @property
    def fraction(self) -> float:
        return self.records / self.population

    def to_dict(self) -> dict[str, object]:
        return {
            "sampling_fraction": self.fraction,
            "population_size": self.population,
            "weights": self.weights,
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": self.sample_uniques / self.records,
            "estimates": {e.name: e.to_dict() for e in self.estimates},
            "individual_risk": {
                "max": float(self.individual.max()),
                "mean": float(self.individual.mean()),
                "expected_reidentifications": float(self.individual.sum()),
            },
        }


MAX_POPULATION = 1e15
"""The largest population (n / f, or the sum of the weights) the estimators take: far above any
population of people, far below where their sums overflow a float."""


def check_fraction(value: object, name: str = "sampling_fraction") -> float:
    """``value`` as a sampling fraction in (0, 1]; InputError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InputError(f"{name} must be a number in (0, 1], got {value!r}")
    number = float(value)
    if not (0 < number <= 1):
        raise InputError(f"{name} must be in (0, 1], got {value!r}")
    return number


def check_weights(values: np.ndarray, name: str) -> np.ndarray:
    """Survey weights as floats, each a finite number > 0; InputError naming column ``name``
    and the first bad row otherwise. O(n)."""
    import pandas as pd

    raw = pd.Series(np.asarray(values, dtype=object))
    w = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        at = int(bad.argmax())
        raise InputError(
            f"the weights in column {name!r} must be positive numbers; row {at + 1} has "
            f"{str(raw.iloc[at])!r}"
        )
    return w


def sample_estimates(
    keys: np.ndarray, fraction: float | None = None, weights: WeightColumn | None = None
) -> SampleEstimates:
    """Estimate the population figures of a sample from its QI ``keys`` (n × d, one row per
    record, equal rows = equal QIs: ``EncodedQI.keys()``) and either a sampling ``fraction`` f
    in (0, 1] or survey ``weights`` (N = their sum; F̂_k of a class = its records' weights).

    Returns the four uniqueness estimates and the individual risk per record. Raises
    InputError on a fraction outside (0, 1] or a weight ≤ 0. Time O(n·d log n) for the classes
    plus the solvers on the histogram (module docstring); memory O(n·d).

    References: see the module docstring (Hoshino 2001; Zayatz 1991; Chen & Keller-McNulty
    1998; Dankar et al. 2012; Benedetti & Franconi 1998).

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([[1.0], [1.0], [2.0], [3.0]])
    >>> e = sample_estimates(keys, fraction=0.5)
    >>> e.population, e.sample_uniques, round(float(e.individual.max()), 4)
    (8.0, 2, 0.6931)
    """
    from anonymatch.core.view import group_rows

    _, inverse, counts = group_rows(np.asarray(keys, np.float64))
    n = len(inverse)
    fk = counts[inverse]
    if weights is not None:
        w = check_weights(weights.values, weights.name)
        population = float(w.sum())
        big = np.bincount(inverse, weights=w, minlength=len(counts))[inverse]
    else:
        f = check_fraction(1.0 if fraction is None else fraction)
        population = n / f
        big = fk / f
    if not population <= MAX_POPULATION:  # the estimators' sums overflow (and inf is no size)
        given = param("weights") if weights is not None else param("sampling_fraction")
        raise InputError(
            f"the population that {given} implies ({population:.3g} people) is above "
            f"{MAX_POPULATION:.0e}; the estimates would overflow"
        )
    hist = Histogram.of(counts, max(population, float(n)))
    return SampleEstimates(
        records=n,
        population=hist.population,
        weights=None if weights is None else weights.name,
        sample_uniques=int((counts == 1).sum()),
        estimates=estimate_all(hist),
        individual=individual_risk(fk, big),
    )


@dataclass(frozen=True)
class WeightColumn:
    """Survey weights: the column's ``name`` and its ``values`` (one per sample record)."""

    name: str
    values: np.ndarray
