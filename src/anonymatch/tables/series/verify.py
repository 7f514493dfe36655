"""The composition attacker of a release series, and the series' verdict (issue 40).

The attacker of a series knows every person's quasi-identifiers in every year, knows who is in
which release (the population of each release), sees every release, and **intersects**: a
person's sensitive value must be among the values shown by the rows that can be theirs in
*each* release they are in (Ganta, Kasiviswanathan and Smith, KDD 2008). Two attackers are
measured, both from the releases and the originals only (never the steward's private map):

- the **strong** attacker intersects the values shown by each release's *candidate* rows of
  the person: the published rows that are the person's in some assignment consistent with the
  release (``core.view.AttackerView.candidates``: edges in some perfect matching of the
  compatibility graph);
- the **weak** attacker (the issue's baseline) intersects the values shown by each release's
  *compatible* rows: the rows whose cells contain the person's QIs.

Under the running intersection the series is published with (for every person, the values
shown by their classes in all their releases number ≥ ℓ: docs/guarantees/series.md) the strong
intersection holds those values: ≥ ℓ. :func:`verify_series` checks that from the outputs:
nobody, whose value changed or not, is left below ℓ values, and everybody has ≥ k candidates
in every release.

References
----------
S. R. Ganta, S. P. Kasiviswanathan, A. Smith. "Composition attacks and auxiliary information
in data privacy". KDD 2008 (the intersection attack).
X. Xiao, Y. Tao. "m-Invariance: towards privacy preserving re-publication of dynamic
datasets". SIGMOD 2007 (signatures: the equality the running intersection relaxes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.params import require_frame
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, NAValues, Schema


@dataclass(frozen=True)
class ReleaseFigures:
    """The attacker's figures of one release of a series.

    ``release`` its number (1, 2, …); ``people`` the people it publishes (one row each);
    ``matching`` whether its compatibility graph has a perfect matching (no candidates
    otherwise: every figure of the strong attacker then falls back on the compatible rows);
    ``min_candidates`` the fewest candidate rows of any person and ``below_k`` the people with
    fewer than k; ``min_compatible`` the fewest compatible rows of any person."""

    release: int
    people: int
    matching: bool
    min_candidates: int
    below_k: int
    min_compatible: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures."""
        return asdict(self)


@dataclass(frozen=True, eq=False)
class SeriesReport:
    """What :func:`verify_series` found: the verdict and the attacker's figures.

    The per-person arrays are over the P distinct person ids of the series, in sorted order
    (``person_ids``); T is the number of releases.

    Attributes
    ----------
    passed : bool
        Nobody (changed value or not) has fewer than ℓ values after intersection (strong
        attacker), everybody has ≥ k candidates in every release, every release has a perfect
        matching, and no release publishes the person-id column. The candidates after
        intersection (``after``) are measured, not part of the rule
        (docs/guarantees/series.md §3).
    reason : str
        "ok", or the first failure, one line.
    k, l : int
        The levels checked.
    releases : tuple of ReleaseFigures
        Each release's figures.
    person_ids : numpy.ndarray
        (P,) the person ids (text), sorted.
    present : numpy.ndarray
        (P, T) bool: person p is in release t.
    candidates : numpy.ndarray
        (P, T) int64: p's candidate rows in release t (0 where absent).
    changed : numpy.ndarray
        (P,) bool: p's sensitive value differs between two of their releases.
    strong_values, weak_values : numpy.ndarray
        (P,) int64: how many sensitive values are left after intersecting, over p's releases,
        the values shown by p's candidate rows (strong) or compatible rows (weak). For a person
        in one release, the distinct values of that release's rows.
    posterior : numpy.ndarray
        (P,) float64: the largest posterior of one value for the strong attacker who treats the
        releases as independent evidence (NaN when the intersection is empty, which only a
        changed value allows). With s_t(v) the share of p's candidate rows in release t showing
        v, the posterior of v is Π_t s_t(v) / Σ_w Π_t s_t(w), the sum over the values w of the
        intersection: the belief with a uniform prior over values when each release's
        assignment is drawn independently. It overstates what the releases reveal when the same
        people share a class again (the same evidence counted once per release: a class of
        8 a, 1 b, 1 c in three releases gives 0.996 for a, while they say no more than one
        release's 0.8), and it is an estimate, not a bound (docs/guarantees/series.md, limits).
    share : numpy.ndarray
        (P,) float64: the largest share of one value of the intersection among p's candidate
        rows showing a value of the intersection, in any one of p's releases (NaN as above):
        what a single release tells an attacker who has narrowed p to the intersection.
    after : numpy.ndarray
        (P, T) int64: p's **candidates after intersection** in release t, the candidate rows
        of p (strong attacker; the compatible rows without a perfect matching) whose value is
        among the values left by the intersection: the rows that can still be p's for an
        attacker who knows p is in all of p's releases with one value (0 where absent).
    """

    @property
    def fewest_after(self) -> np.ndarray:
        """(P,) p's fewest candidates after intersection over p's releases. O(P·T)."""
        after = np.where(self.present, self.after, np.iinfo(np.int64).max)
        return np.asarray(after.min(axis=1)) if after.shape[1] else np.zeros(len(after), int)

    passed: bool
    reason: str
    k: int
    l: int  # noqa: E741 - the model's own name
    releases: tuple[ReleaseFigures, ...]
    person_ids: np.ndarray
    present: np.ndarray
    candidates: np.ndarray
    changed: np.ndarray
    strong_values: np.ndarray
    weak_values: np.ndarray
    posterior: np.ndarray
    share: np.ndarray
    after: np.ndarray

    @property
    def repeated(self) -> np.ndarray:
        """(P,) bool: p is in two releases or more."""
        return np.asarray(self.present.sum(axis=1) >= 2)

    def counts(self) -> dict[str, object]:
        """The figures over people, as plain numbers. O(P·T)."""
        multi, changed = self.repeated, self.changed
        steady = multi & ~changed
        post = self.posterior[steady]
        post = post[np.isfinite(post)]
        share = self.share[steady]
        share = share[np.isfinite(share)]
        present = self.present
        cand = np.where(present, self.candidates, np.iinfo(np.int64).max)
        min_cand = int(cand.min()) if present.any() else 0

        def side(values: np.ndarray) -> dict[str, int]:
            return {
                "below_l": int((steady & (values < self.l)).sum()),
                "certain": int((steady & (values == 1)).sum()),
            }

        return {
            "people": len(self.person_ids),
            "in_two_or_more": int(multi.sum()),
            "changed": int((multi & changed).sum()),
            "strong": {
                **side(self.strong_values),
                "min_values": int(self.strong_values[steady].min()) if steady.any() else None,
                "largest_posterior": float(post.max()) if len(post) else None,
                "largest_share": float(share.max()) if len(share) else None,
            },
            "weak": side(self.weak_values),
            "changed_below_l": int((multi & changed & (self.strong_values < self.l)).sum()),
            "single_below_l": int((~multi & (self.strong_values < self.l)).sum()),
            "min_candidates": min_cand,
            "candidates_after_intersection": self._after(steady, multi & changed),
        }

    def _after(self, steady: np.ndarray, changed: np.ndarray) -> dict[str, object]:
        """The candidates after intersection of the people in two releases or more: those
        with an unchanged value (below k, fewest, median) and the changed ones apart. O(P·T)."""
        fewest = self.fewest_after
        mine = fewest[steady]
        return {
            "below_k": int((mine < self.k).sum()),
            "min": int(mine.min()) if len(mine) else None,
            "median": float(np.median(mine)) if len(mine) else None,
            "changed_below_k": int((fewest[changed] < self.k).sum()),
        }

    def to_dict(self) -> dict[str, object]:
        """The verdict and the figures, JSON-ready (no person id: the arrays stay here)."""
        return {
            "passed": self.passed,
            "reason": self.reason,
            "k": self.k,
            "l": self.l,
            "releases": [r.to_dict() for r in self.releases],
            **self.counts(),
        }


@dataclass(frozen=True)
class _Year:
    """One release's part of the attack, per person of its original: their true value codes,
    their candidate rows (0 without a perfect matching), the rows the strong attacker's shares
    are over (the candidates; the compatible rows without a perfect matching) and the
    compatible rows, and the (person, value, rows showing it) entries of both attackers."""

    true: np.ndarray
    candidates: np.ndarray
    strong_rows: np.ndarray
    compatible: np.ndarray
    strong: Entries
    weak: Entries
    figures: ReleaseFigures
    leak: bool


def _ids(original: pd.DataFrame, person_id: str, t: int) -> np.ndarray:
    """The person ids of one original as text; InputError if the column is absent, an id is
    missing or repeated (the message names rows, never ids). O(n log n)."""
    if person_id not in original.columns:
        raise InputError(f"original {t} has no person-id column {person_id!r}")
    column = original[person_id]
    missing = column.isna().to_numpy() | (column.astype(str).str.strip() == "").to_numpy()
    if missing.any():
        raise InputError(
            f"original {t} has no person id in row {int(np.flatnonzero(missing)[0]) + 1}"
        )
    ids = column.astype(str).to_numpy(dtype=str)
    order = np.argsort(ids, kind="stable")
    same = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if len(same):
        a, b = sorted((int(order[same[0]]) + 1, int(order[same[0] + 1]) + 1))
        raise InputError(
            f"original {t} repeats a person id (rows {a} and {b}): one row per person and release"
        )
    return ids


def _labels(values: pd.Series) -> np.ndarray:
    """Sensitive values as text labels, a missing value its own label "" (as
    ``models.sensitive.encode_sensitive`` reads an unordered column). O(n)."""
    return values.astype(str).where(values.notna(), "").to_numpy(dtype=str)


Entries = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(person, value, rows showing it) per pair with at least one row."""


def _entries(view: AttackerView, by_value: sp.csr_array) -> Entries:
    """Per person of ``view`` and value v: how many of the person's rows in ``view`` show v,
    as (person, value, count) entries, computed once per group of identical originals.
    O(pairs between groups · values + n · values shown)."""
    counts = sp.csr_array(sp.csr_array(view.c, dtype=np.int64) @ by_value)
    counts.sum_duplicates()
    counts.eliminate_zeros()
    counts.sort_indices()
    per = sp.csr_array(counts[view.inverse])
    person = np.repeat(np.arange(per.shape[0], dtype=np.int64), np.diff(per.indptr))
    return person, per.indices.astype(np.int64), per.data.astype(np.int64)


def _year(
    t: int,
    original: pd.DataFrame,
    release: pd.DataFrame,
    schema: Schema,
    sensitive: str,
    na_values: NAValues | None,
    drop_missing: bool,
    codebook: dict[str, int],
    k: int,
) -> tuple[np.ndarray, _Year]:
    """The attacker's view of release ``t`` (1-based) against its original: ids, value codes
    (``codebook`` grows with new labels), candidates and compatible rows with the values they
    show. Cost: the candidates of the view once (a max-flow on the groups) plus
    O(pairs between groups · values + n log n)."""
    from anonymatch.tables.io.cells import parse_cells
    from anonymatch.tables.pipeline import prepare
    from anonymatch.tables.verify import attacker_view

    release = require_frame(release, "release")
    data, enc, _ = prepare(original, schema, na_values, drop_missing)
    ids = _ids(data, schema.identifiers[0], t)
    if sensitive not in release.columns:
        raise InputError(f"release {t} has no sensitive column {sensitive!r}")
    cells = parse_cells(release, enc)
    if cells.n != enc.n:
        raise InputError(
            f"release {t} has {cells.n} rows but original {t} has {enc.n} people: give each "
            "release's published people as its original"
        )
    orig_labels, pub_labels = _labels(data[sensitive]), _labels(release[sensitive])
    if not np.array_equal(np.sort(orig_labels), np.sort(pub_labels)):
        raise InputError(
            f"release {t}'s values of sensitive column {sensitive!r} are not original {t}'s"
        )
    # one dictionary lookup per distinct label, not per row: the series' codes
    labels, inverse = np.unique(np.concatenate([orig_labels, pub_labels]), return_inverse=True)
    codes = np.array([codebook.setdefault(str(x), len(codebook)) for x in labels], np.int64)
    coded = codes[inverse.reshape(-1)]
    true, shown = coded[: len(orig_labels)], coded[len(orig_labels) :]
    view = attacker_view(cells, enc)
    by_value = sp.csr_array(
        (np.ones(len(shown), np.int64), (view.group, shown)),
        shape=(len(view.mult), max(len(codebook), 1)),
    )  # published rows of group g showing value v
    by_value.sum_duplicates()
    cand = view.candidates()
    compatible = view.per_original()[view.inverse]
    weak = _entries(view, by_value)
    if cand is None:
        candidates, rows, strong = np.zeros(enc.n, np.int64), compatible, weak
    else:
        candidates = rows = cand.per_original()[cand.inverse]
        strong = _entries(cand, by_value)
    figures = ReleaseFigures(
        release=t,
        people=enc.n,
        matching=cand is not None,
        min_candidates=int(candidates.min()) if enc.n else 0,
        below_k=int((candidates < k).sum()),
        min_compatible=int(compatible.min()) if enc.n else 0,
    )
    leak = schema.identifiers[0] in set(map(str, release.columns))
    return ids, _Year(true, candidates, rows, compatible, strong, weak, figures, leak)


def _intersect(
    entries: Sequence[Entries],
    sizes: Sequence[np.ndarray],
    releases_of: np.ndarray,
    m: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per person: the number of values shown in every one of their releases, the largest
    posterior over them, the largest share (:class:`SeriesReport`) and, per release, the rows
    showing a value of the intersection (0 where absent). ``entries[t]`` are
    release t's (global person, value, rows showing it), ``sizes[t]`` the person's rows in
    release t (per entry), ``releases_of`` each person's number of releases.
    O(E log E + P·T) for E entries in all, P people and T releases."""
    n_people, n_rel = len(releases_of), len(entries)
    person = np.concatenate([e[0] for e in entries])
    value = np.concatenate([e[1] for e in entries])
    count = np.concatenate([e[2] for e in entries]).astype(np.float64)
    release = np.repeat(np.arange(n_rel), [len(e[0]) for e in entries])
    share = count / np.maximum(np.concatenate(list(sizes)), 1)
    key = person * max(m, 1) + value
    uniq, inverse, times = np.unique(key, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    log_share = np.bincount(inverse, weights=np.log(share), minlength=len(uniq))
    owner = uniq // max(m, 1)
    kept = times == releases_of[owner]  # shown in every release of the person
    owner, log_share = owner[kept], log_share[kept]
    values = np.bincount(owner, minlength=n_people).astype(np.int64)
    top = np.full(n_people, -np.inf)
    np.maximum.at(top, owner, log_share)
    mass = np.bincount(owner, weights=np.exp(log_share - top[owner]), minlength=n_people)
    has = values > 0
    posterior = np.full(n_people, np.nan)
    posterior[has] = 1.0 / mass[has]
    # per (person, release): the rows showing the most shown value of the intersection over
    # the rows showing any value of it
    inside = kept[inverse]
    slot = (person * n_rel + release)[inside]
    total = np.bincount(slot, weights=count[inside], minlength=n_people * n_rel)
    most = np.zeros(n_people * n_rel)
    np.maximum.at(most, slot, count[inside])
    ratio = np.divide(most, total, out=np.zeros_like(most), where=total > 0)
    largest = ratio.reshape(n_people, n_rel).max(axis=1) if n_rel else np.zeros(n_people)
    largest[~has] = np.nan
    after = np.rint(total).astype(np.int64).reshape(n_people, n_rel)
    return values, posterior, largest, after


def verify_series(
    originals: Sequence[pd.DataFrame],
    releases: Sequence[pd.DataFrame],
    *,
    person_id: str,
    qi: Sequence[str],
    numeric: Sequence[str] = (),
    sensitive: str,
    k: int,
    l: int,  # noqa: E741 - the model's own name
    na_values: NAValues | None = DEFAULT_NA_VALUES,
    drop_missing: bool = False,
) -> SeriesReport:
    """Check a release series as the composition attacker sees it, from the outputs only.

    Parameters
    ----------
    originals : sequence of pandas.DataFrame
        Year by year, the people each release publishes (a person the series suppressed from
        release t is not in ``originals[t]``: the attacker knows who is in which release), with
        the person-id column, the QIs and the sensitive column.
    releases : sequence of pandas.DataFrame
        The published tables, in the same order, in the release cell format as the other
        verifiers take it (``tables.verify``): text cells as ``tables.io.cells.read_release_text``
        reads a CSV release, or a Parquet release's columns; not ``read_release``'s typed
        intervals and sets.
    person_id : str
        The column of the originals identifying a person across years (never published).
    qi, numeric : sequence of str
        The quasi-identifiers and the numeric ones (published as ranges).
    sensitive : str
        The sensitive column.
    k, l : int
        The fewest candidates per person and release, and the fewest distinct sensitive values
        a person may be left with after intersection.
    na_values, drop_missing :
        How the originals' missing QI values are read, as for ``verify``.

    Returns
    -------
    SeriesReport
        ``passed`` iff every release has a perfect matching and publishes no person id,
        every person has ≥ k candidates in every release, and every person — whose sensitive
        value changed or not — keeps ≥ ℓ values after the strong attacker's intersection (in
        one release: among their candidates), as a series release guarantees
        (docs/guarantees/series.md §3). The candidates after intersection are reported
        (``after``, ``fewest_after``, ``counts()["candidates_after_intersection"]``), not
        enforced: a release row carries only its class's cells and a value, so narrowing p's
        rows to those showing a value of the intersection tells no more than the intersection
        itself (§3). The people whose value changed are also counted apart (``changed``,
        ``changed_below_l``, ``candidates_after_intersection.changed_below_k``): their
        intersection may exclude their new value.

    Raises
    ------
    InputError
        Different numbers of originals and releases, none, k or ℓ below 1, a missing column,
        a missing or repeated person id in a year, a release whose row count or sensitive
        values are not its original's.

    Notes
    -----
    Per release the attacker's view (``tables.verify.attacker_view``) and its candidates (one
    max-flow on the groups of identical originals and published rows, then one strongly
    connected components pass); the values shown per group of identical originals
    (pairs between groups · values); the intersection over all releases by one sort of the
    (person, value) entries: time O(T · (view + n log n) + E log E) for E ≤ T · n · values
    entries, memory O(n · values shown + pairs between groups). Never a person × row matrix.

    References
    ----------
    Ganta, Kasiviswanathan, Smith, KDD 2008 (composition); Xiao, Tao, SIGMOD 2007 (signatures);
    Choromanski et al., NIPS 2013, Lemma 4.1 (candidates).

    Examples
    --------
    >>> import pandas as pd
    >>> year = pd.DataFrame({"pid": ["a", "b", "c", "d"], "age": [30, 31, 40, 41],
    ...                      "dx": ["flu", "hiv", "flu", "hiv"]})
    >>> release = pd.DataFrame({"age": ["30..41"] * 4, "dx": ["flu", "hiv", "hiv", "flu"]})
    >>> report = verify_series([year, year], [release, release], person_id="pid",
    ...                        qi=["age"], numeric=["age"], sensitive="dx", k=4, l=2)
    >>> report.passed, report.counts()["strong"]["below_l"]
    (True, 0)
    """
    if len(originals) != len(releases):
        raise InputError(
            f"{len(originals)} originals but {len(releases)} releases: give one original per "
            "release, in the same order"
        )
    if not releases:
        raise InputError("a series needs at least one release")
    for name, value in (("k", k), ("l", l)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InputError(f"`{name}` must be an integer ≥ 1, got {value!r}")
    schema = Schema.build(qi, numeric, sensitive=[sensitive], identifiers=[person_id])
    codebook: dict[str, int] = {}
    ids, years = [], []
    for t, (original, release) in enumerate(zip(originals, releases, strict=True), start=1):
        original = require_frame(original, "original")
        if person_id not in original.columns:  # before the schema's message about columns
            raise InputError(f"original {t} has no person-id column {person_id!r}")
        got, year = _year(
            t, original, release, schema, sensitive, na_values, drop_missing, codebook, int(k)
        )
        ids.append(got)
        years.append(year)
    person_ids, inverse = np.unique(np.concatenate(ids), return_inverse=True)
    inverse = inverse.reshape(-1)
    n_people, n_rel, m = len(person_ids), len(years), len(codebook)
    bounds = np.cumsum([0] + [len(i) for i in ids])
    present = np.zeros((n_people, n_rel), bool)
    candidates = np.zeros((n_people, n_rel), np.int64)
    low = np.full(n_people, np.iinfo(np.int64).max)
    high = np.full(n_people, -1, np.int64)
    strong: list[Entries] = []
    weak: list[Entries] = []
    strong_sizes: list[np.ndarray] = []
    weak_sizes: list[np.ndarray] = []
    for t, year in enumerate(years):
        people = inverse[int(bounds[t]) : int(bounds[t + 1])]
        present[people, t] = True
        candidates[people, t] = year.candidates
        np.minimum.at(low, people, year.true)
        np.maximum.at(high, people, year.true)
        strong.append((people[year.strong[0]], year.strong[1], year.strong[2]))
        strong_sizes.append(year.strong_rows[year.strong[0]])
        weak.append((people[year.weak[0]], year.weak[1], year.weak[2]))
        weak_sizes.append(year.compatible[year.weak[0]])
    releases_of = present.sum(axis=1)
    strong_values, posterior, share, after = _intersect(strong, strong_sizes, releases_of, m)
    weak_values, _, _, _ = _intersect(weak, weak_sizes, releases_of, m)
    changed = low != high
    report = SeriesReport(
        passed=False,
        reason="",
        k=int(k),
        l=int(l),
        releases=tuple(y.figures for y in years),
        person_ids=person_ids,
        present=present,
        candidates=candidates,
        changed=changed,
        strong_values=strong_values,
        weak_values=weak_values,
        posterior=posterior,
        share=share,
        after=after,
    )
    reason = _first_failure(report, years)
    return SeriesReport(**{**report.__dict__, "passed": reason == "ok", "reason": reason})


def _first_failure(report: SeriesReport, years: Sequence[_Year]) -> str:
    """The verdict's reason: "ok" or the first failure, in the order of the guarantee (no
    published id, a consistent release, k candidates, then ℓ values). O(P·T)."""
    k, l = report.k, report.l  # noqa: E741 - the model's own name
    for year in years:
        fig = year.figures
        if year.leak:
            return f"release {fig.release} publishes the person-id column"
        if not fig.matching:
            return f"release {fig.release}: the compatibility graph has no perfect matching"
        if fig.below_k:
            return (
                f"release {fig.release}: {fig.below_k} people have fewer than k = {k} candidate "
                f"rows (fewest {fig.min_candidates})"
            )
    multi = report.repeated  # changed value or not: the series keeps everyone's ≥ ℓ values
    short = multi & (report.strong_values < l)
    if short.any():
        fewest = int(report.strong_values[short].min())
        return (
            f"{int(short.sum())} people in two releases or more are left with fewer than "
            f"l = {l} sensitive values after intersecting their candidates' values (fewest "
            f"{fewest})"
        )
    single = ~multi & (report.strong_values < l)
    if single.any():
        return (
            f"{int(single.sum())} people in one release have candidates showing fewer than "
            f"l = {l} sensitive values"
        )
    return "ok"
