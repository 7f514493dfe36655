"""Risk beyond the sample: a release measured against a population table.

A statistics office publishes a sample; its attacker holds a population register with the same
quasi-identifiers (QIs). The figures here answer "how many people *in the population* could this
published row be" rather than "how many records of the release" (``risk.assess``, the prosecutor
model). For each published row j, **F_j** is the number of population records compatible with it
(every published cell contains the record's value, ``*`` containing everything, a missing value
matching only ``*``: the compatibility of ``tables.verify``), and **f_j** the number of records of
the original (the sample) compatible with it. From these:

* **k-map** = min_j F_j: every published row could be at least k-map people of the population
  (El Emam & Dankar, JAMIA 2008; Sweeney's k-map);
* **journalist risk**: 1 / F_j per published row, its max (1 / k-map) and mean — the mean as ARX
  defines it, max(G / Σ_g F_g, marketer risk) over the G groups of identical published rows;
* **marketer risk**: (1/n) Σ_j 1 / F_j, the expected share of correct links when every published
  row is linked to one of its F_j compatible population records chosen uniformly (ARX's marketer
  risk (1/n) Σ_classes f/F on a release made of classes);
* **uniques**: for the original QIs (as if published unchanged), the sample records whose QI
  combination occurs once in the population (population uniques), beside the sample uniques;
* **presence** (δ-presence, Nergiz, Atzori & Clifton, SIGMOD 2007): f_j / F_j per published row,
  the share of the population people row j could be who are in the release; its min and max bound
  how sure an attacker is that a population member compatible with row j was sampled, and the
  population records compatible with no published row are known *not* to be in it. Reported
  only when the sample is a subset of the population (per QI combination, the population has at
  least as many records as the sample).

On a release made of equivalence classes F_j is the class's population size and every figure is
the textbook class-based one; on a freeform release a published row is not a class, and the same
definitions hold row by row.

Scaling: the sample and the population are encoded together (one code space), grouped into
distinct QI combinations with their multiplicities in each, and the release into groups of
identical rows (``recode.published_groups``). A numba kernel then walks, for every distinct
published row, the candidate combinations of the verifier's indexes (most selective cell or the
lexicographic prefix ranges, ``verify._prefix_ranges``) and adds the multiplicities of the
compatible ones: nothing of size rows × combinations is stored, only O(U) per thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

import numpy as np
import pandas as pd
from numba import njit

from anonymatch.core.errors import InputError
from anonymatch.core.runner import default_workers
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.qitypes import QITypes
from anonymatch.tables.columns.schema import (
    DEFAULT_NA_VALUES,
    EncodedQI,
    NAValues,
    Schema,
    encode_qi,
    missing_qi_mask,
)
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.recode import GeneralizedQI, cat_nodes, published_groups
from anonymatch.tables.risk.estimators import (
    SampleEstimates,
    WeightColumn,
    check_fraction,
    check_weights,
    sample_estimates,
)
from anonymatch.tables.verify import (
    KernelCells,
    _compatible_of,
    _prefix_index,
    _work_buffers,
    flat_sets,
)

if TYPE_CHECKING:
    from anonymatch.tables.job import ReleaseCheck, TableJob

_EPS = 1e-12

DEFAULT_THRESHOLD = 0.2
"""Journalist risk above which a published row is counted: ``risk.DEFAULT_THRESHOLD`` (kept
here, not imported: ``risk.risk`` imports the pipeline, which runs k-map through this
module)."""


@dataclass(frozen=True)
class Uniques:
    """The original QIs (published unchanged) against the population: ``records`` of the
    sample, ``sample_uniques`` alone in the sample, ``population_uniques`` alone in the
    population, and ``not_in_population`` sample records whose QI combination the population
    lacks (or has fewer times than the sample)."""

    records: int
    sample_uniques: int
    population_uniques: int
    not_in_population: int

    def to_dict(self) -> dict[str, object]:
        return {
            "records": self.records,
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": self.sample_uniques / self.records,
            "population_uniques": self.population_uniques,
            "population_unique_share": self.population_uniques / self.records,
            "not_in_population": self.not_in_population,
        }


@dataclass(frozen=True)
class Presence:
    """δ-presence of the release: f_j / F_j per published row, its ``min`` and ``max``, and
    the ``outside`` population records compatible with no published row (presence 0)."""

    min: float
    max: float
    outside: int

    def to_dict(self) -> dict[str, object]:
        return {"delta_min": self.min, "delta_max": self.max, "population_outside": self.outside}


@dataclass(frozen=True)
class PopulationRisk:
    """Figures of a release against a population (module docstring); ``to_dict()`` gives the
    JSON under ``population`` of a risk report.

    ``population``: records of the population table; ``published``: rows of the release;
    ``kmap`` = min F_j; ``population_per_row``: F_j per published row (in release order);
    ``sample_per_row``: f_j; ``journalist_max``/``journalist_mean``; ``marketer``;
    ``above``: published rows whose journalist risk 1 / F_j exceeds ``threshold``;
    ``presence`` None when the sample is not a subset of the population."""

    population: int
    published: int
    kmap: int
    population_per_row: np.ndarray
    sample_per_row: np.ndarray
    journalist_max: float
    journalist_mean: float
    marketer: float
    threshold: float
    above: int
    uniques: Uniques
    presence: Presence | None

    def to_dict(self) -> dict[str, object]:
        return {
            "records": self.population,
            "published_rows": self.published,
            "kmap": self.kmap,
            "journalist_risk": {
                "max": self.journalist_max,
                "mean": self.journalist_mean,
                "threshold": self.threshold,
                "above_threshold": self.above,
                "above_threshold_share": self.above / self.published,
            },
            "marketer_risk": self.marketer,
            "uniques": self.uniques.to_dict(),
            "presence": None if self.presence is None else self.presence.to_dict(),
        }


@dataclass(frozen=True)
class PopulationInput:
    """How to read the QIs of the sample, the release and the population (the options of
    :func:`population_risk` beyond the three tables): ``qi``, ``numeric``, ``types`` as for
    ``risk.assess``; ``na_values`` the missing-value codes; ``drop_missing`` drops sample and
    population records with a missing QI; ``threshold`` the journalist risk above which a
    published row is counted."""

    qi: tuple[str, ...]
    numeric: tuple[str, ...] = ()
    types: QITypes | None = None
    na_values: NAValues = DEFAULT_NA_VALUES
    drop_missing: bool = False
    threshold: float = DEFAULT_THRESHOLD

    @classmethod
    def of(cls, check: ReleaseCheck | TableJob, threshold: float = DEFAULT_THRESHOLD) -> Self:
        """How a check (or a job) reads its columns: its QIs, numeric QIs, types and missing
        values. O(number of QIs)."""
        schema = check.schema
        numeric = tuple(a for a in schema.qi if a in schema.numeric)
        return cls(schema.qi, numeric, schema.types, check.na, check.drop_missing, threshold)


def population_risk(
    original: pd.DataFrame,
    release: pd.DataFrame,
    population: pd.DataFrame,
    options: PopulationInput,
) -> PopulationRisk:
    """Exact population figures of ``release`` (made from ``original``, a sample) against
    ``population`` (a table with the same QI columns).

    Parameters
    ----------
    original : pandas.DataFrame
        The sample the release was made from (one published row per record).
    release : pandas.DataFrame
        The release, in the release cell format (any method or tool).
    population : pandas.DataFrame
        The attacker's population table: a register, a census extract or a larger file. It
        should contain the sample's people; when it does not, ``presence`` is None and
        ``uniques.not_in_population`` counts the sample records it lacks.
    options : PopulationInput
        QI names and types, missing values, threshold.

    Returns
    -------
    PopulationRisk
        k-map, journalist and marketer risk, population uniques, δ-presence.

    Raises
    ------
    InputError
        A QI missing from the population (or the original), a release of another row count, a
        malformed cell, an empty population, a bad threshold.

    Notes
    -----
    Time O((n + N)·d log(n + N)) to group the records into U distinct QI combinations, plus
    Σ_g |candidates(g)|·d over the G distinct published rows (the verifier's candidate
    indexes); memory O((n + N)·d + U·threads). A population row compatible with no published
    row has presence 0; F_j = 0 (a published row no population record matches) makes the
    journalist risk of that row 1 and k-map 0.

    References
    ----------
    K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008
    (prosecutor, journalist, marketer risk; k-map). M. E. Nergiz, M. Atzori, C. Clifton,
    "Hiding the presence of individuals from shared databases", SIGMOD 2007 (δ-presence).
    F. Prasser et al., ARX, ``RiskModelSampleSummary`` (journalist mean, marketer risk).

    Examples
    --------
    >>> import pandas as pd
    >>> sample = pd.DataFrame({"age": ["30", "31", "40", "41"], "sex": ["F", "F", "M", "M"]})
    >>> release = pd.DataFrame({"age": ["30..31"] * 2 + ["40..41"] * 2,
    ...                         "sex": ["F", "F", "M", "M"]})
    >>> people = pd.DataFrame({"age": ["30", "31", "31", "40", "41", "50"],
    ...                        "sex": ["F", "F", "F", "M", "M", "M"]})
    >>> r = population_risk(sample, release, people,
    ...                     PopulationInput(qi=("age", "sex"), numeric=("age",)))
    >>> r.kmap, r.population_per_row.tolist(), round(r.marketer, 4)
    (2, [3, 3, 2, 2], 0.4167)
    >>> round(r.presence.min, 4), r.presence.max, r.presence.outside
    (0.6667, 1.0, 1)
    """
    threshold = check_fraction(options.threshold, "threshold")
    schema = Schema.build(options.qi, options.numeric, (), types=options.types)
    for name in schema.qi:
        if name not in population.columns:
            raise InputError(f"the population has no column {name!r}")
    joint, n, dropped = _joint(original, population, schema, options)
    cells = parse_cells(release.reset_index(drop=True), joint)
    if cells.n != n:
        hint = " (was it made with `drop_missing`?)" if dropped else ""
        raise InputError(
            f"the release does not match the original: it has {cells.n} rows, the original "
            f"{n}{hint}"
        )
    uniq, inverse, _ = group_rows(joint.keys())
    u = len(uniq)
    sample_count = np.bincount(inverse[:n], minlength=u).astype(np.int64)
    pop_count = np.bincount(inverse[n:], minlength=u).astype(np.int64)
    reps, group, mult = published_groups(cells)
    distinct = cells if len(reps) == cells.n else cells.take(reps)
    pop_g, samp_g, covered = compatible_counts(distinct, joint, (pop_count, sample_count))
    big_f = pop_g[group]
    small_f = samp_g[group]
    risk = 1.0 / np.maximum(big_f, 1)
    marketer = float(risk.mean())
    total = float(pop_g.sum())
    journalist_mean = max(len(reps) / total, marketer) if total > 0 else 1.0
    short = np.maximum(sample_count - pop_count, 0)
    subset = not short.any()
    presence = None
    if subset:
        share = small_f / np.maximum(big_f, 1)
        presence = Presence(float(share.min()), float(share.max()), int(pop_count[~covered].sum()))
    sample_sizes = sample_count[inverse[:n]]
    pop_sizes = pop_count[inverse[:n]]
    uniques = Uniques(
        records=n,
        sample_uniques=int((sample_sizes == 1).sum()),
        population_uniques=int((pop_sizes == 1).sum()),
        not_in_population=int(short.sum()),
    )
    return PopulationRisk(
        population=joint.n - n,
        published=cells.n,
        kmap=int(big_f.min()),
        population_per_row=big_f,
        sample_per_row=small_f,
        journalist_max=float(risk.max()),
        journalist_mean=journalist_mean,
        marketer=marketer,
        threshold=threshold,
        above=int((risk > threshold + _EPS).sum()),
        uniques=uniques,
        presence=presence,
    )


def _joint(
    original: pd.DataFrame, population: pd.DataFrame, schema: Schema, options: PopulationInput
) -> tuple[EncodedQI, int, int]:
    """The sample's and the population's QIs encoded together (sample rows first): one code
    space, so a combination has the same key in both. Returns (codes, sample rows, sample rows
    dropped for a missing QI). O((n + N)·d)."""
    schema.check_columns(original)
    qi = list(schema.qi)
    parts = []
    dropped = 0
    for frame, what in ((original, "original"), (population, "population")):
        frame = frame[qi]
        if options.drop_missing:
            mask = missing_qi_mask(frame, schema, options.na_values)
            if what == "original":
                dropped = int(mask.sum())
            frame = frame.loc[~mask]
        if len(frame) == 0:
            raise InputError(f"the {what} has no data rows")
        parts.append(frame.reset_index(drop=True))
    n = len(parts[0])
    both = pd.concat(parts, ignore_index=True)
    return encode_qi(both, schema, options.na_values), n, dropped


def compatible_counts(
    published: GeneralizedQI,
    original: EncodedQI,
    weights: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per published row, the summed weights of the distinct QI combinations compatible with it.

    ``weights`` are two arrays over the U distinct combinations of ``original.keys()`` (in the
    order of ``core.view.group_rows``), e.g. their multiplicities in the population and in the
    sample. Returns (first sums, second sums) per published row and a U-bool ``covered``: the
    combinations compatible with some published row. :meth:`CountIndex.counts` on a new
    index; build the index once to count several releases. Time O(U·d log U + Σ_j
    |candidates(j)|·d); memory O(U·(d + threads)).
    """
    return CountIndex.build(original).counts(published, weights)


class CountIndex:
    """The verifier's candidate indexes over the U distinct QI combinations of an encoded
    table (sorted values per numeric QI, buckets per label, the lexicographic prefix order,
    as ``verify._compatibility`` builds them), built once and reused for every release whose
    compatible weights are counted (:meth:`counts`). O(U·d log U) to build, O(U·d) memory."""

    def __init__(self, original: EncodedQI, parts: tuple[np.ndarray, ...]) -> None:
        self.original = original
        (
            self.unum,
            self.ucat,
            self.num_order,
            self.num_sorted,
            self.bucket_ptr,
            self.cat_members,
            self.cat_off,
            self.card,
            self.lvl,
            self.lvl_kind,
            self.lvl_attr,
            self.lvl_perm,
        ) = parts
        self.values = [np.unique(self.unum[:, a]) for a in range(self.unum.shape[1])]
        self._nodes: dict[tuple[tuple[int, int], ...], CountIndex] = {}

    @property
    def size(self) -> int:
        return int(self.unum.shape[0])

    @classmethod
    def build(cls, original: EncodedQI) -> CountIndex:
        """The index of ``original`` (keys as ``EncodedQI.keys``: missing numeric +inf,
        missing categorical −1)."""
        uniq, _, _ = group_rows(original.keys())
        dn = original.num.shape[1]
        unum = np.ascontiguousarray(uniq[:, :dn])
        ucat = np.ascontiguousarray(uniq[:, dn:]).astype(np.int64)
        return cls._assemble(original, unum, ucat, original.cat_card.astype(np.int64))

    @classmethod
    def _assemble(
        cls, original: EncodedQI, unum: np.ndarray, ucat: np.ndarray, card: np.ndarray
    ) -> CountIndex:
        """The index over distinct combinations already split into the kernel's numeric
        values ``unum`` and categorical codes ``ucat`` (of cardinalities ``card``)."""
        dn = unum.shape[1]
        dc = ucat.shape[1]
        num_order = np.argsort(unum, axis=0, kind="stable").T.copy()
        num_sorted = np.take_along_axis(unum, num_order.T, axis=0).T.copy()
        cat_off = np.concatenate([[0], np.cumsum(card)]).astype(np.int64)
        bucket_ptr = np.zeros(int(cat_off[-1]) + 1, np.int64)
        members: list[np.ndarray] = []
        listed = 0
        for a in range(dc):
            present = ucat[:, a] >= 0  # a missing value sits in no bucket: it matches only *
            sizes = np.bincount(ucat[present, a], minlength=int(card[a]))
            bucket_ptr[cat_off[a] + 1 : cat_off[a + 1] + 1] = np.cumsum(sizes) + listed
            listed += int(present.sum())
            by_code = np.argsort(ucat[:, a], kind="stable")
            members.append(by_code[present[by_code]])
        cat_members = np.concatenate(members).astype(np.int64) if members else np.empty(0, np.int64)
        # the prefix order of verify._prefix_index, without its per-release rank intervals
        no_rows = np.zeros((0, dn))
        lvl, lvl_kind, lvl_attr, perm, _, _ = _prefix_index(
            unum, ucat, card, no_rows, no_rows, np.zeros((0, dn), bool)
        )
        parts = (unum, ucat, num_order, num_sorted, bucket_ptr, cat_members, cat_off, card)
        return cls(original, (*parts, lvl, lvl_kind, lvl_attr, perm))

    def counts(
        self, published: GeneralizedQI, weights: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`compatible_counts` of ``published`` on this index. Rows are processed in
        slices on a thread pool (the kernel is nogil). O(n·d log U + Σ_j |candidates(j)|·d).

        Hierarchy nodes (``recode.NodeCells``) are counted as ranges of depth-first leaf
        ranks, as ``verify`` checks them (``verify.KernelCells``), on a variant of this index
        built once per set of node attributes: a node is never expanded into its leaves."""
        moved = tuple(
            (a, id(x.tree))
            for a in range(len(published.cat_sets))
            if (x := cat_nodes(published, a)) is not None
        )
        uniq = np.hstack([self.unum, self.ucat.astype(np.float64)])
        kc = KernelCells.build(published, self.original, uniq)
        if not moved:
            return self._count(kc, flat_sets(published, self.card), weights)
        index = self._nodes.get(moved)
        if index is None:
            index = self._assemble(self.original, kc.unum, kc.ucat, kc.card)
            self._nodes[moved] = index
        return index._count(kc, flat_sets(published, kc.card, kc.sets), weights)

    def _count(
        self,
        kc: KernelCells,
        sets: tuple[np.ndarray, np.ndarray, np.ndarray],
        weights: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`counts` of the published cells as the kernel reads them (``kc``, ``sets``
        = ``verify.flat_sets`` of its categorical attributes)."""
        n_pub = kc.lo.shape[0]
        dn = self.unum.shape[1]
        set_ptr, set_idx, set_off = sets
        lo, hi, num_star, cat_star = kc.lo, kc.hi, kc.num_star, kc.cat_star
        rank_lo = np.zeros((n_pub, dn), np.int64)
        rank_hi = np.zeros((n_pub, dn), np.int64)
        for a, values in enumerate(self.values):
            with np.errstate(invalid="ignore"):
                rank_lo[:, a] = np.searchsorted(values, lo[:, a], side="left")
                rank_hi[:, a] = np.searchsorted(values, hi[:, a], side="right") - 1
            rank_lo[num_star[:, a], a] = 0
            rank_hi[num_star[:, a], a] = len(values) - 1
        args = (
            (self.unum, self.ucat),
            (lo, hi, num_star, cat_star, set_ptr, set_idx, set_off),
            (self.num_order, self.num_sorted, self.bucket_ptr, self.cat_members, self.cat_off),
            (self.lvl, self.lvl_kind, self.lvl_attr, self.lvl_perm, rank_lo, rank_hi),
        )
        pair = tuple(np.ascontiguousarray(w, dtype=np.int64) for w in weights)
        workers = default_workers()
        bounds = np.linspace(0, n_pub, min(4 * workers, max(1, n_pub // 2048)) + 1)
        slices = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

        def run(ab: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return _count_kernel(ab[0], ab[1], pair, *args)

        if len(slices) == 1:
            parts = [run(slices[0])]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                parts = list(pool.map(run, slices))
        out_a = np.zeros(n_pub, np.int64)
        out_b = np.zeros(n_pub, np.int64)
        covered = np.zeros(self.size, bool)
        for (a, b), (sa, sb, cov) in zip(slices, parts, strict=True):
            out_a[a:b] = sa
            out_b[a:b] = sb
            covered |= cov
        return out_a, out_b, covered


@njit(cache=True, nogil=True)
def _count_kernel(j0, j1, weights, originals, cells, attr_index, prefix):  # pragma: no cover
    """Σ wa[u] and Σ wb[u] (``weights`` = (wa, wb)) over the combinations u compatible with each
    published row j in [j0, j1), and the combinations compatible with any of them. The
    candidate search of the verifier (``verify._compatible_of``), accumulating instead of
    listing pairs; ``originals``, ``cells``, ``attr_index`` and ``prefix`` are its groups of
    arrays."""
    wa, wb = weights
    work, found = _work_buffers(originals, cells), np.empty(256, np.int64)
    out_a = np.zeros(j1 - j0, np.int64)
    out_b = np.zeros(j1 - j0, np.int64)
    covered = np.zeros(originals[0].shape[0], np.bool_)
    for j in range(j0, j1):
        count, found = _compatible_of(j, originals, cells, attr_index, prefix, work, found)
        sa = 0
        sb = 0
        for t in range(count):
            u = found[t]
            sa += wa[u]
            sb += wb[u]
            covered[u] = True
        out_a[j - j0] = sa
        out_b[j - j0] = sb
    return out_a, out_b, covered


@dataclass(frozen=True)
class PopulationSource:
    """What is known of the population: a ``table`` (exact figures), a sampling ``fraction``
    f in (0, 1], or the name of a ``weights`` column of the original (survey weights); at least
    one. With a table and neither of the others, f = n / N for the estimates."""

    table: pd.DataFrame | None = None
    fraction: float | None = None
    weights: str | None = None


@dataclass(frozen=True)
class PopulationReport:
    """The ``population`` section of a risk report: the ``exact`` figures against a population
    table (or None) and the ``estimates`` from the sample alone."""

    exact: PopulationRisk | None
    estimates: SampleEstimates

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {} if self.exact is None else self.exact.to_dict()
        out.update(self.estimates.to_dict())
        return out


def assess_population(
    original: pd.DataFrame,
    release: pd.DataFrame,
    options: PopulationInput,
    source: PopulationSource,
) -> PopulationReport:
    """The population figures of ``release`` (made from the sample ``original``): exact ones
    against ``source.table`` (:func:`population_risk`) and the estimates of
    ``estimators.sample_estimates`` from the sample's original QIs.

    Parameters
    ----------
    original, release : pandas.DataFrame
        The sample and its release.
    options : PopulationInput
        QI names and types, missing values, threshold.
    source : PopulationSource
        A population table, a sampling fraction and/or a weights column of ``original``.

    Returns
    -------
    PopulationReport
        ``to_dict()`` is the ``population`` section of a risk report.

    Raises
    ------
    InputError
        No source, a fraction outside (0, 1], a weights column that is absent or holds a value
        ≤ 0, a population lacking a QI, and the errors of :func:`population_risk`.

    Notes
    -----
    Time and memory of :func:`population_risk` plus O(n·d log n) for the sample's classes.

    References
    ----------
    See :func:`population_risk` and ``tables.risk.estimators``.

    Examples
    --------
    >>> import pandas as pd
    >>> sample = pd.DataFrame({"age": ["30", "31", "40", "41"], "sex": ["F", "F", "M", "M"]})
    >>> release = pd.DataFrame({"age": ["30..31"] * 2 + ["40..41"] * 2,
    ...                         "sex": ["F", "F", "M", "M"]})
    >>> report = assess_population(sample, release,
    ...     PopulationInput(qi=("age", "sex"), numeric=("age",)), PopulationSource(fraction=0.1))
    >>> report.exact is None, report.estimates.population
    (True, 40.0)
    """
    if source.table is None and source.fraction is None and source.weights is None:
        raise InputError("give a population table, a sampling fraction or a weights column")
    fraction = None if source.fraction is None else check_fraction(source.fraction)
    weights = None
    kept = original
    if options.drop_missing:
        schema = Schema.build(options.qi, options.numeric, (), types=options.types)
        kept = original.loc[~missing_qi_mask(original, schema, options.na_values)]
    if source.weights is not None:
        if source.weights not in original.columns:
            raise InputError(f"the original has no weights column {source.weights!r}")
        values = check_weights(kept[source.weights].to_numpy(), source.weights)
        weights = WeightColumn(source.weights, values)
    exact = None
    if source.table is not None:
        exact = population_risk(original, release, source.table, options)
        if fraction is None and weights is None:
            fraction = min(1.0, exact.uniques.records / exact.population)
    schema = Schema.build(options.qi, options.numeric, (), types=options.types)
    estimates = sample_estimates(encode_sample(original, schema, options).keys(), fraction, weights)
    return PopulationReport(exact, estimates)


def encode_sample(frame: pd.DataFrame, schema: Schema, options: PopulationInput) -> EncodedQI:
    """The QIs of ``frame`` encoded, rows with a missing QI dropped when
    ``options.drop_missing`` (what ``pipeline.prepare`` does, without importing the
    pipeline). O(n·d)."""
    schema.check_columns(frame)
    if options.drop_missing:
        frame = frame.loc[~missing_qi_mask(frame, schema, options.na_values)]
    if len(frame) == 0:
        raise InputError("the original has no data rows")
    return encode_qi(frame.reset_index(drop=True), schema, options.na_values)
