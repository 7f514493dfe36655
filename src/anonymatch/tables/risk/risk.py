"""Risk figures of a table release, from the release and the original only.

The attacker of every figure knows each person's quasi-identifiers (QIs) and sees the whole
release. Person i's **candidates** are the published rows that can be i's row in some world
consistent with the release: the compatible rows (every published cell contains i's value) that
lie in some perfect matching of the compatibility graph (the attacker's view of
``tables.verify.attacker_view``, ``core.view.AttackerView.candidates``: Dulmage–Mendelsohn).
This needs nothing but the published cells, so the figures hold for every method — freeform,
Mondrian, b-matching — and for releases anonymatch did not make. On a release
made of equivalence classes a person's candidates are their class, and every figure below is
the textbook class-based one.

Figures (``assess``):

* candidates per person: distribution (min, mean, median, max, histogram);
* prosecutor risk: 1 / candidates per person, its max and mean, and the records whose risk is
  above a threshold (El Emam & Dankar, JAMIA 2008; ARX's "records at risk");
* ``class_k``: the smallest group of identical published QI rows — the k an equivalence-class
  checker (pyCANON, ARX) reports; a freeform release has mostly distinct rows, so this is
  usually 1 although every person has ≥ k candidates;
* per sensitive column: homogeneous records (every candidate shows one value: the value is
  disclosed), the largest posterior max_v c_v / candidates per person (distribution), the
  distance of the candidates' values to the table's (EMD, equal or ordered ground distance, as
  t-closeness), the fewest distinct values (distinct ℓ) and the smallest exp(entropy)
  (effective ℓ);
* with a claimed k: whether the release has the k-factor it claims (as ``verify``), and the
  mechanism-aware bound min(1, c_v / k) on the posterior of an attacker who knows the release
  was made by choosing one of k disjoint assignments uniformly (person i's true row is then
  uniform over the k rows of i's assignments, all among i's candidates);
* the original alone (the baseline of publishing the QIs unchanged): QI equivalence classes,
  sample uniques, class size per record, prosecutor risk and records above the threshold.

Every figure is computed on groups of identical original QI vectors and of identical published
rows (``core.view.AttackerView``, the view ``verify`` uses): two people with the
same QIs have the same candidates, and candidate rows come in whole groups, so each group's
figures are computed once and dealt to its members — the same numbers as person by person.

Complexity: a max-flow on the contracted compatibility graph for the candidates plus O(pairs
between groups × values shown) for the sensitive figures, O(n·d log n) for the classes, and a
max-flow on the contracted candidate graph when k is given; memory O(n·d + pairs between
groups), so a release of one class of n identical rows needs O(n), not n² pairs.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.params import param
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import (
    EncodedQI,
    Schema,
    missing_qi_mask,
)
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.job import ReleaseCheck
from anonymatch.tables.models.disclosure import SensitiveModel
from anonymatch.tables.models.sensitive import (
    EncodedSensitive,
    PersonStats,
    encode_sensitive,
    grouped_person_stats,
    person_stats,
)
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.risk.known import KnownPersonRisk, known_figures
from anonymatch.tables.verify import attacker_view

SCHEMA = "anonymatch-risk/1"
"""The ``schema`` key of a risk report's JSON."""

DEFAULT_THRESHOLD = 0.2
"""Default prosecutor-risk threshold: 1/5, a person among fewer than 5 candidates is at risk."""

_EPS = 1e-12  # float slack of the threshold comparison


@dataclass(frozen=True)
class Distribution:
    """Summary of one integer figure per record: min, mean, median, max and the histogram
    ``{value: records}`` (sorted by value)."""

    min: int
    mean: float
    median: float
    max: int
    histogram: dict[int, int]

    @classmethod
    def of(cls, values: np.ndarray) -> Distribution:
        """The summary of ``values`` (non-empty integer array). O(n log n)."""
        keys, counts = np.unique(values, return_counts=True)
        return cls(
            int(values.min()),
            float(values.mean()),
            float(np.median(values)),
            int(values.max()),
            {int(a): int(b) for a, b in zip(keys, counts, strict=True)},
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "min": self.min,
            "mean": self.mean,
            "median": self.median,
            "max": self.max,
            "histogram": dict(self.histogram),
        }


@dataclass(frozen=True)
class ProsecutorRisk:
    """Prosecutor risk 1 / (candidates or class size) per record: ``max``, ``mean`` and the
    ``above`` records (and their ``above_share``) whose risk exceeds ``threshold``."""

    max: float
    mean: float
    threshold: float
    above: int
    above_share: float

    @classmethod
    def of(cls, sizes: np.ndarray, threshold: float) -> ProsecutorRisk:
        risk = 1.0 / sizes
        above = int((risk > threshold + _EPS).sum())
        return cls(float(risk.max()), float(risk.mean()), threshold, above, above / len(sizes))

    def to_dict(self) -> dict[str, object]:
        return {
            "max": self.max,
            "mean": self.mean,
            "threshold": self.threshold,
            "above_threshold": self.above,
            "above_threshold_share": self.above_share,
        }


@dataclass(frozen=True)
class SensitiveRisk:
    """Attribute-disclosure figures of one sensitive column over every person's candidates.

    ``posterior`` per person is the share of the candidates showing the most common value
    (what an attacker guessing that value is right with); ``distance`` the EMD of the
    candidates' values to the table's distribution; ``effective_l`` exp(entropy). The
    ``mechanism_*`` figures need a claimed k (else None)."""

    column: str
    ground_distance: str
    values: int
    prior_max: float
    homogeneous: int
    homogeneous_share: float
    posterior_max: float
    posterior_mean: float
    posterior_half_share: float
    posterior_one_share: float
    distance_max: float
    distance_mean: float
    min_distinct: int
    min_effective_l: float
    mechanism_bound_max: float | None
    mechanism_disclosed: int | None

    @classmethod
    def of(
        cls,
        column: str,
        ordered: bool,
        enc: EncodedSensitive,
        stats: PersonStats,
        mechanism: tuple[float | None, int | None] = (None, None),
    ) -> SensitiveRisk:
        """The figures of one column from its encoding and every person's statistics over
        their candidates (``stats``, with distances); ``mechanism``: the mechanism-aware bound
        and people disclosed (None, None without a claimed k). O(n)."""
        assert stats.emd is not None
        posterior = stats.top / stats.size
        homogeneous = int((stats.distinct == 1).sum())
        return cls(
            column=column,
            ground_distance="ordered" if ordered else "equal",
            values=int(np.count_nonzero(np.bincount(enc.original, minlength=enc.m))),
            prior_max=float(enc.table_distribution().max()),
            homogeneous=homogeneous,
            homogeneous_share=homogeneous / len(stats.size),
            posterior_max=float(posterior.max()),
            posterior_mean=float(posterior.mean()),
            posterior_half_share=float((posterior >= 0.5).mean()),
            posterior_one_share=float((stats.top == stats.size).mean()),
            distance_max=float(stats.emd.max()),
            distance_mean=float(stats.emd.mean()),
            min_distinct=int(stats.distinct.min()),
            min_effective_l=float(np.exp(stats.entropy.min())),
            mechanism_bound_max=mechanism[0],
            mechanism_disclosed=mechanism[1],
        )

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "ground_distance": self.ground_distance,
            "values": self.values,
            "prior_max": self.prior_max,
            "homogeneous": self.homogeneous,
            "homogeneous_share": self.homogeneous_share,
            "posterior": {
                "max": self.posterior_max,
                "mean": self.posterior_mean,
                "share_at_least_half": self.posterior_half_share,
                "share_one": self.posterior_one_share,
            },
            "distance": {"max": self.distance_max, "mean": self.distance_mean},
            "min_distinct": self.min_distinct,
            "min_effective_l": self.min_effective_l,
        }
        if self.mechanism_bound_max is not None:
            out["mechanism"] = {
                "bound_max": self.mechanism_bound_max,
                "disclosed": self.mechanism_disclosed,
            }
        return out


@dataclass(frozen=True)
class BaselineRisk:
    """The original table alone, as if its QIs were published unchanged: ``classes`` groups of
    records with equal QIs, ``sample_uniques`` records alone in theirs, ``class_size`` per
    record and the prosecutor risk 1 / class size."""

    records: int
    classes: int
    sample_uniques: int
    sample_unique_share: float
    class_size: Distribution
    prosecutor: ProsecutorRisk

    def to_dict(self) -> dict[str, object]:
        return {
            "records": self.records,
            "classes": self.classes,
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": self.sample_unique_share,
            "class_size": self.class_size.to_dict(),
            "prosecutor": self.prosecutor.to_dict(),
        }


@dataclass(frozen=True)
class RiskReport:
    """Risk figures of a table release (see the module docstring); ``to_dict()`` for JSON.

    ``people``: records of the original (after ``drop_missing``) = published rows;
    ``candidates``: candidates per person; ``prosecutor``: 1 / candidates; ``class_k`` and
    ``identical_groups``: the smallest group and the number of groups of identical published
    QI rows; ``k`` the claimed anonymity (or None) and ``k_holds`` whether its k-factor exists;
    ``sensitive``: per sensitive column; ``original``: the baseline of the original alone;
    ``explanation``: plain-language lines."""

    people: int
    qi: tuple[str, ...]
    numeric: tuple[str, ...]
    dropped_missing: int
    k: int | None
    k_holds: bool | None
    candidates: Distribution
    prosecutor: ProsecutorRisk
    class_k: int
    identical_groups: int
    sensitive: tuple[SensitiveRisk, ...]
    original: BaselineRisk
    explanation: tuple[str, ...]
    basis: str = "candidates"
    """What the sensitive figures are computed over: ``candidates`` (each person's candidate
    rows), or ``certificate`` (the graph a ring release's certificate proves, for the attacker
    who knows it: ``certified_sensitive``)."""
    known: KnownPersonRisk | None = None
    """The attacker who also knows one person's true row (``risk.known``; over the certified
    graph with ``basis`` ``certificate``)."""

    @property
    def threshold(self) -> float:
        return self.prosecutor.threshold

    def to_dict(self) -> dict[str, object]:
        release: dict[str, object] = {
            "candidates": self.candidates.to_dict(),
            "prosecutor": self.prosecutor.to_dict(),
            "class_k": self.class_k,
            "identical_groups": self.identical_groups,
        }
        if self.k is not None:
            release["claimed_k"] = {"k": self.k, "holds": self.k_holds}
        return {
            "schema": SCHEMA,
            "people": self.people,
            "parameters": {
                "qi": list(self.qi),
                "numeric": list(self.numeric),
                "sensitive": [s.column for s in self.sensitive],
                "k": self.k,
                "threshold": self.threshold,
                "dropped_missing": self.dropped_missing,
                "sensitive_basis": self.basis,
            },
            "release": release,
            "sensitive": {s.column: s.to_dict() for s in self.sensitive},
            "original": self.original.to_dict(),
            "known_person": None if self.known is None else self.known.to_dict(),
            "explanation": list(self.explanation),
        }


def check_threshold(value: object, name: str = "threshold") -> float:
    """``value`` as a float in (0, 1]; InputError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a number in (0, 1], got {value!r}")
    number = float(value)
    if not (0 < number <= 1):
        raise InputError(f"{name} must be in (0, 1], got {value!r}")
    return number


def assess(
    original: pd.DataFrame,
    release: pd.DataFrame,
    check: ReleaseCheck,
    threshold: float = DEFAULT_THRESHOLD,
) -> RiskReport:
    """Risk figures of ``release`` (any table in the release cell format) against ``original``.

    ``check`` (``tables.job.ReleaseCheck``) gives the columns (numeric QIs and ordered
    sensitive columns, ordinal, date and hierarchical QIs), the missing values and the level
    ``k`` the release claims (optional). Raises InputError on
    bad parameters, a missing or malformed column, or a release that cannot be a release of
    this original (another row count, no perfect matching of people to compatible rows, other
    sensitive values). Time O(pairs·√n + pairs log pairs + n·d log n), plus the max-flow of the
    k-factor check when ``k`` is given, all on groups of identical rows (module docstring);
    memory O(n·d + pairs between groups).
    """
    threshold = check_threshold(threshold)
    schema, k = check.schema, check.k
    data, enc, dropped = prepare(original, schema, check.na, check.drop_missing)
    release = release.reset_index(drop=True)
    for name in schema.sensitive:
        if name not in release.columns:
            raise InputError(f"the release has no column {name!r}")
    cells = parse_cells(release, enc)
    n = enc.n
    if cells.n != n:
        hint = ""
        if not check.drop_missing and missing_qi_mask(original, schema, check.na).any():
            hint = f" (was it made with {param('drop_missing')}?)"
        raise InputError(
            f"the release does not match the original: it has {cells.n} rows, the original "
            f"{n}{hint}"
        )
    report = assess_cells(data, enc, cells, release, schema, k, threshold, dropped)
    if check.certificate is None:
        return report
    inputs = CertifiedInput(data, enc, cells, release, schema)
    return certified_sensitive(report, inputs, check.certificate)


@dataclass(frozen=True)
class CertifiedInput:
    """What ``certified_sensitive`` reads: the prepared original (``data``, ``enc``), the
    parsed release (``cells``) and its table (``release``, for the sensitive columns), and the
    columns' roles (``schema``)."""

    data: pd.DataFrame
    enc: EncodedQI
    cells: GeneralizedQI
    release: pd.DataFrame
    schema: Schema


def certified_sensitive(
    report: RiskReport, inputs: CertifiedInput, certificate: Mapping[str, object]
) -> RiskReport:
    """``report`` with its sensitive figures computed over the graph that the ring
    ``certificate`` (a manifest's ``guarantee.certificate``) proves (``models.certified``), for
    the attacker of docs/guarantees/sensitive.md §6 who knows it: a ring position's posterior
    P(s = v | release) is the share of v among the k rows of its window (the same under every
    draw), a class row's is its class's share (§3). One unit per person (``certified.units``),
    as in the benchmark's table; homogeneous: units whose rows all show one value; the
    mechanism bound is the posterior itself (every unit has k rows on a ring). Raises
    InputError if the certificate is malformed or its graph does not fit the release and the
    original. Time: the compatibility and matching of ``certified.structure_exists``, plus
    O(n·k) per sensitive column."""
    from anonymatch.tables.models.certified import parse_certificate, structure_exists, units
    from anonymatch.tables.verify import attacker_view

    k, rings = parse_certificate(certificate, inputs.cells.n)
    if not structure_exists(inputs.cells, inputs.enc, k, rings):
        raise InputError(
            f"the ring graph of {param('certificate')} does not fit the release and the original"
        )
    cand = units(inputs.cells, k, rings)
    num = inputs.schema.numeric
    sens = []
    for name in inputs.schema.sensitive:
        enc = encode_sensitive(name, inputs.release[name], inputs.data[name], name in num)
        stats = person_stats(cand, enc, SensitiveModel(name, t=1.0, ordered=name in num))
        whole = stats.top == stats.size  # a unit has k rows: the bound is the posterior itself
        mechanism = (
            (float((stats.top / stats.size).max()), int(whole.sum()))
            if report.k is not None
            else (None, None)
        )
        sens.append(SensitiveRisk.of(name, name in num, enc, stats, mechanism))
    explanation = explain(report.candidates.min, report.class_k, sens)
    view = attacker_view(inputs.cells, inputs.enc)
    known = known_figures(view, inputs.release, inputs.data, inputs.schema, (k, rings))
    return dataclasses.replace(
        report, sensitive=tuple(sens), explanation=explanation, basis="certificate", known=known
    )


def assess_cells(
    data: pd.DataFrame,
    enc: EncodedQI,
    cells: GeneralizedQI,
    release: pd.DataFrame,
    schema: Schema,
    k: int | None,
    threshold: float,
    dropped: int = 0,
) -> RiskReport:
    """:func:`assess` on an original already prepared (``pipeline.prepare``: rows kept,
    encoded QIs) and a release already parsed (``cells``, as many rows as ``enc``), for callers
    that need the cells too (the HTML report). ``release`` supplies the sensitive columns."""
    n = enc.n
    num = tuple(a for a in (*schema.qi, *schema.sensitive) if a in schema.numeric)
    sens_names = schema.sensitive
    release = release.reset_index(drop=True)
    for name in sens_names:
        if name not in release.columns:
            raise InputError(f"the release has no column {name!r}")
    view = attacker_view(cells, enc)
    cand = view.candidates()
    if cand is None:
        raise InputError(
            "the release does not match the original: its rows cannot be paired one to one "
            "with the original's records they generalize (a release of another tool? give "
            "the hierarchies its generalized labels come from (`hierarchies`), and the same "
            "separator, missing values and `drop_missing` as the release)"
        )
    sizes = cand.per_original()[cand.inverse]
    # decided on the candidates: every edge of a k-factor is a candidate edge (a k-regular
    # bipartite graph is a union of k perfect matchings, König), so both graphs have the same
    # k-factors, and the candidate graph is smaller
    k_holds = None if k is None else cand.has_k_factor(int(k))
    class_k, groups = int(view.mult.min()), len(view.mult)  # classes of identical rows
    sens = tuple(
        _sensitive_risk(cand, name, release[name], data[name], name in num, k)
        for name in sens_names
    )
    candidate_dist = Distribution.of(sizes)
    return RiskReport(
        people=n,
        qi=schema.qi,
        numeric=tuple(
            a
            for a in (*schema.qi, *schema.sensitive)
            if a in schema.numeric and a not in schema.types.scaled
        ),
        dropped_missing=dropped,
        k=None if k is None else int(k),
        k_holds=k_holds,
        candidates=candidate_dist,
        prosecutor=ProsecutorRisk.of(sizes, threshold),
        class_k=class_k,
        identical_groups=groups,
        sensitive=sens,
        original=_baseline(view.counts, view.inverse, threshold),
        explanation=explain(candidate_dist.min, class_k, sens),
        known=known_figures(cand, release, data, schema),
    )


def _sensitive_risk(
    cand: AttackerView,
    column: str,
    published: pd.Series,
    original: pd.Series,
    ordered: bool,
    k: int | None,
) -> SensitiveRisk:
    """The figures of one sensitive column. O(pairs log pairs), plus O(n·m) when ordered."""
    enc = encode_sensitive(column, published, original, ordered)
    stats = grouped_person_stats(cand, enc, SensitiveModel(column, t=1.0, ordered=ordered))
    mechanism: tuple[float | None, int | None] = (None, None)
    if k is not None:
        mechanism = (float(np.minimum(1.0, stats.top / k).max()), int((stats.top >= k).sum()))
    return SensitiveRisk.of(column, ordered, enc, stats, mechanism)


def _baseline(counts: np.ndarray, inverse: np.ndarray, threshold: float) -> BaselineRisk:
    """The original's equivalence classes: ``counts[u]`` people in class u, person i in class
    ``inverse[i]`` (the original groups of an attacker's view). O(n log n)."""
    sizes = counts[inverse].astype(np.int64)
    n = len(sizes)
    uniques = int((sizes == 1).sum())
    return BaselineRisk(
        records=n,
        classes=len(counts),
        sample_uniques=uniques,
        sample_unique_share=uniques / n,
        class_size=Distribution.of(sizes),
        prosecutor=ProsecutorRisk.of(sizes, threshold),
    )


def explain(
    min_candidates: int, class_k: int, sensitive: Sequence[SensitiveRisk]
) -> tuple[str, ...]:
    """Plain-language lines: freeform k-anonymity against equivalence classes, and when to
    choose Mondrian. O(number of sensitive columns)."""
    lines = [
        "Freeform k-anonymity (anonymatch's default methods): every person matches at least k "
        "published rows, through k disjoint ways of pairing all people with all rows, one of "
        "which is the true one; the matching rows need not be identical.",
    ]
    if class_k < min_candidates:
        lines.append(
            "Equivalence-class checkers such as pyCANON or ARX count groups of identical "
            f"quasi-identifier rows; here rows are mostly all different, so they report "
            f"k = {class_k} although every person has at least {min_candidates} candidate rows."
        )
    else:
        lines.append(
            "This release is made of groups of identical rows (equivalence classes), so "
            f"class-based checkers such as pyCANON or ARX report the same k = {class_k}."
        )
    lines.append(
        "Choose --method mondrian when downstream users or tools need equivalence classes "
        "(e.g. to count people per class) or an auditor uses class-based tools; it loses more "
        "information."
    )
    if any(s.homogeneous for s in sensitive):
        lines.append(
            "Homogeneous records show their sensitive value on every candidate row: being "
            "hidden among k rows does not hide that value (protect it with l-diversity or "
            "t-closeness)."
        )
    return tuple(lines)
