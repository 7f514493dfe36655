"""k-map: every published row compatible with at least K records of a population table.

k-anonymity counts the people of the *sample* a published row could be; when the attacker's
list is a population register, what protects a respondent is the number of *population*
records the row could be (Sweeney's k-map; El Emam & Dankar 2008). A k-anonymous release of a
sample of fraction f usually has rows compatible with about k / f population records, so a
release at a small k can already meet a larger K against the population.

:func:`enforce_kmap` takes any release of the sample and widens the published cells of the rows
below K until each is compatible with ≥ K population records (F_j of
``tables.risk.population``). Widening a cell keeps every compatibility the release had, so the
release stays k-anonymous (its k-factor is still there); it is verified again from the cells
anyway, and k-map is checked from the release and the population alone. Each round tries, for
every row still below K, one widening step on every QI — a numeric range doubled in rank
among the values present (the whole domain: ``*``), a categorical cell to ``*`` — and keeps,
per row, the step that reaches K at the smallest information loss (NCP), or else the one that
brings the most population records. A row whose cells are all ``*`` matches the whole
population, so K ≤ N can always be met; K > N raises InfeasibleError (exit 3).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InfeasibleError, InputError, VerificationError
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.risk.population import CountIndex, PopulationInput, _joint

if TYPE_CHECKING:
    from anonymatch.tables.job import TableJob


@dataclass(frozen=True)
class KMapReport:
    """Outcome of :func:`enforce_kmap`: ``kmap`` K asked, ``achieved`` min F_j after the
    repair, ``before`` min F_j of the release given, ``widened_rows`` rows changed,
    ``widened_cells`` cells changed, ``rounds`` of widening, ``population`` N."""

    kmap: int
    achieved: int
    before: int
    widened_rows: int
    widened_cells: int
    rounds: int
    population: int
    mean_risk: float | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "mean_risk": self.mean_risk,
            "kmap": self.kmap,
            "achieved": self.achieved,
            "before": self.before,
            "widened_rows": self.widened_rows,
            "widened_cells": self.widened_cells,
            "rounds": self.rounds,
            "population_records": self.population,
        }


def enforce_kmap(
    original: pd.DataFrame,
    release: pd.DataFrame,
    population: pd.DataFrame,
    kmap: int,
    options: PopulationInput,
    k: int | None = None,
    mean_risk: float | None = None,
) -> tuple[pd.DataFrame, KMapReport]:
    """Widen the cells of ``release`` until every row is compatible with ≥ ``kmap`` records of
    ``population`` (and, with ``mean_risk``, until the average journalist risk is at most
    that); verify k-anonymity (when ``k`` is given), k-map and the average risk from the cells.

    Parameters
    ----------
    original : pandas.DataFrame
        The sample the release was made from.
    release : pandas.DataFrame
        Its release (release cell format; other columns are kept as they are).
    population : pandas.DataFrame
        The population table (the same QI columns).
    kmap : int
        K, the population records every published row must be compatible with.
    options : PopulationInput
        QI names and types, missing values.
    k : int or None
        The k-anonymity the release claims; checked again after the widening.
    mean_risk : float or None
        A bound in (0, 1] on the average journalist risk (ARX's: max(G / Σ F, mean 1 / F) over
        the G groups of identical rows): the floor K is raised by steps of a quarter, the
        widening continuing from the cells reached, until the average is below the bound.

    Returns
    -------
    (pandas.DataFrame, KMapReport)
        The repaired release (the same rows, QI cells widened) and what was done.

    Raises
    ------
    InputError
        ``kmap`` not a positive integer, and the errors of ``population_risk``.
    InfeasibleError
        ``kmap`` larger than the population (no release can meet it).
    VerificationError
        The repaired release fails k-anonymity or k-map (should never happen).

    Notes
    -----
    Each round costs one count of the rows below K per QI (``CountIndex.counts``); rounds are
    at most d · log₂(distinct values) since every step at least doubles a cell or makes it
    ``*``. Time O((n + N)·d log(n + N)) for the index plus the rounds; memory O((n + N)·d).

    References
    ----------
    L. Sweeney, "Computational disclosure control", MIT PhD thesis, 2001 (k-map); K. El Emam,
    F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008.

    Examples
    --------
    >>> import pandas as pd
    >>> sample = pd.DataFrame({"age": ["30", "31", "40", "41"], "sex": ["F", "F", "M", "M"]})
    >>> release = pd.DataFrame({"age": ["30..31"] * 2 + ["40..41"] * 2,
    ...                         "sex": ["F", "F", "M", "M"]})
    >>> people = pd.DataFrame({"age": ["30", "31", "31", "40", "41", "50"],
    ...                        "sex": ["F", "F", "F", "M", "M", "M"]})
    >>> out, rep = enforce_kmap(sample, release, people, 3,
    ...                         PopulationInput(qi=("age", "sex"), numeric=("age",)), k=2)
    >>> out["age"].tolist(), rep.before, rep.achieved
    (['30..31', '30..31', '31..50', '31..50'], 2, 3)
    """
    if isinstance(kmap, bool) or not isinstance(kmap, int | np.integer) or kmap < 1:
        raise InputError(f"kmap must be a positive integer, got {kmap!r}")
    schema = Schema.build(options.qi, options.numeric, (), types=options.types)
    for name in schema.qi:
        if name not in population.columns:
            raise InputError(f"the population has no column {name!r}")
    joint, n, _ = _joint(original, population, schema, options)
    big_n = joint.n - n
    if kmap > big_n:
        raise InfeasibleError(
            f"`kmap` = {kmap} cannot be met: the population has only {big_n} records"
        )
    release = release.reset_index(drop=True)
    cells = parse_cells(release, joint)
    if cells.n != n:
        raise InputError(
            f"the release does not match the original: it has {cells.n} rows, the original {n}"
        )
    index = CountIndex.build(joint)
    _, inverse, _ = group_rows(joint.keys())
    pop = np.bincount(inverse[n:], minlength=index.size).astype(np.int64)
    weights = (pop, np.zeros_like(pop))
    big_f = index.counts(cells, weights)[0]
    before = int(big_f.min())
    widened = np.zeros((n, len(joint.num_names) + len(joint.cat_names)), bool)
    rounds = 0
    floor = int(kmap)
    while True:
        while (big_f < floor).any():
            rounds += 1
            low = np.flatnonzero(big_f < floor)
            cells, big_f, changed = _widen_round(cells, big_f, low, index, (joint, weights, floor))
            widened[low] |= changed
        if mean_risk is None or journalist_mean(cells, big_f) <= mean_risk + 1e-12:
            break
        if floor >= big_n:  # every row fits the whole population: the risk cannot go lower
            raise InfeasibleError(
                f"`journalist_risk` = {mean_risk:g} cannot be met: the population has only "
                f"{big_n} records"
            )
        floor = min(big_n, max(floor + 1, -(-5 * floor // 4)))
    out = release.copy()
    if rounds:
        text = format_cells(cells, joint)
        for name in joint.names:
            out[name] = text[name]
    _check(original, out, population, (kmap, mean_risk), options, k)
    report = KMapReport(
        kmap=int(kmap),
        achieved=int(big_f.min()),
        before=before,
        widened_rows=int(widened.any(axis=1).sum()),
        widened_cells=int(widened.sum()),
        rounds=rounds,
        population=big_n,
        mean_risk=None if mean_risk is None else journalist_mean(cells, big_f),
    )
    return out, report


def journalist_mean(cells: GeneralizedQI, big_f: np.ndarray) -> float:
    """ARX's average journalist risk of a release: max(G / Σ_g F_g, (1/n) Σ_j 1 / F_j) over
    the G groups of identical published rows (``recode.published_groups``). O(n·d)."""
    from anonymatch.tables.recode import published_groups

    reps, _, _ = published_groups(cells)
    risk = 1.0 / np.maximum(big_f, 1)
    total = float(big_f[reps].sum())
    return max(len(reps) / total, float(risk.mean())) if total > 0 else 1.0


def _widen_round(
    cells: GeneralizedQI,
    big_f: np.ndarray,
    low: np.ndarray,
    index: CountIndex,
    context: tuple[EncodedQI, tuple[np.ndarray, np.ndarray], int],
) -> tuple[GeneralizedQI, np.ndarray, np.ndarray]:
    """One widening step for each row in ``low``: every QI tried, the best kept per row
    (module docstring). Returns the new cells, F and the (len(low), d) cells changed."""
    joint, weights, kmap = context
    sub = cells.take(low)
    d_num, d_cat = len(joint.num_names), len(joint.cat_names)
    tries: list[GeneralizedQI] = []
    counts, losses = [], []
    for a in range(d_num + d_cat):
        wider, loss = _step(sub, a, index, joint)
        tries.append(wider)
        counts.append(index.counts(wider, weights)[0])
        losses.append(loss)
    f_try = np.stack(counts, axis=1)  # (len(low), d)
    loss_try = np.stack(losses, axis=1)
    open_ = np.isfinite(loss_try)  # a cell already ``*`` cannot widen
    reach = (f_try >= kmap) & open_
    best_reach = np.argmin(np.where(reach, loss_try, np.inf), axis=1)
    # no step reaches K: the most population records, ties to the smaller loss; a row with
    # an open cell always has one (the loop ends: every step widens a cell)
    gain = np.where(open_, f_try, -1).astype(np.float64)
    best = gain == gain.max(axis=1, keepdims=True)
    best_gain = np.argmin(np.where(best & open_, loss_try, np.inf), axis=1)
    choice = np.where(reach.any(axis=1), best_reach, best_gain)
    new = _assemble(cells, low, tries, choice, d_num)
    big_f = big_f.copy()
    big_f[low] = f_try[np.arange(len(low)), choice]
    changed = np.zeros((len(low), d_num + d_cat), bool)
    changed[np.arange(len(low)), choice] = True
    return new, big_f, changed


def _step(
    sub: GeneralizedQI, a: int, index: CountIndex, joint: EncodedQI
) -> tuple[GeneralizedQI, np.ndarray]:
    """``sub`` with attribute ``a`` widened one step, and the NCP added per row."""
    d_num = len(joint.num_names)
    span_num, scale_cat = joint.ncp_scales()
    if a < d_num:
        values = index.values[a]
        values = values[np.isfinite(values)]
        lo, hi = sub.num_lo[:, a].copy(), sub.num_hi[:, a].copy()
        star = sub.num_star[:, a].copy()
        r_lo = np.searchsorted(values, lo, side="left")
        r_hi = np.searchsorted(values, hi, side="right") - 1
        step = np.maximum((r_hi - r_lo + 2) // 2, 1)  # half the width each side: doubled
        new_lo = np.maximum(r_lo - step, 0)
        new_hi = np.minimum(r_hi + step, len(values) - 1)
        full = (new_lo == 0) & (new_hi == len(values) - 1)
        old_width = np.where(star, 0.0, hi - lo)
        lo = np.where(star, lo, np.minimum(lo, values[new_lo]))
        hi = np.where(star, hi, np.maximum(hi, values[new_hi]))
        star = star | full
        span = joint.num_span[a] if joint.num_span[a] > 0 else 1.0
        new_width = np.where(star, span, hi - lo)
        loss = np.where(sub.num_star[:, a], np.inf, (new_width - old_width) * span_num[a])
        num_lo, num_hi, num_star = sub.num_lo.copy(), sub.num_hi.copy(), sub.num_star.copy()
        num_lo[:, a], num_hi[:, a], num_star[:, a] = lo, hi, star
        return replace(sub, num_lo=num_lo, num_hi=num_hi, num_star=num_star), loss
    b = a - d_num
    sizes = np.diff(sp.csr_array(sub.cat_sets[b]).indptr).astype(np.float64)
    card = float(joint.cat_card[b])
    loss = np.where(sub.cat_star[:, b], np.inf, (card - sizes) * scale_cat[b])
    cat_star = sub.cat_star.copy()
    cat_star[:, b] = True
    return replace(sub, cat_star=cat_star), loss


def _assemble(
    cells: GeneralizedQI,
    low: np.ndarray,
    tries: list[GeneralizedQI],
    choice: np.ndarray,
    d_num: int,
) -> GeneralizedQI:
    """``cells`` with row ``low[i]`` taken from ``tries[choice[i]]``."""
    num_lo, num_hi = cells.num_lo.copy(), cells.num_hi.copy()
    num_star, cat_star = cells.num_star.copy(), cells.cat_star.copy()
    for a, wider in enumerate(tries):
        pick = choice == a
        if not pick.any():
            continue
        rows = low[pick]
        if a < d_num:
            num_lo[rows, a] = wider.num_lo[pick, a]
            num_hi[rows, a] = wider.num_hi[pick, a]
            num_star[rows, a] = wider.num_star[pick, a]
        else:
            cat_star[rows, a - d_num] = True
    return replace(cells, num_lo=num_lo, num_hi=num_hi, num_star=num_star, cat_star=cat_star)


def _check(
    original: pd.DataFrame,
    release: pd.DataFrame,
    population: pd.DataFrame,
    targets: tuple[int, float | None],
    options: PopulationInput,
    k: int | None,
) -> None:
    """Verify the repaired release from its cells: k-anonymity against the original (when
    ``k`` is given), k-map and the average journalist risk (``targets``) against the
    population. VerificationError otherwise."""
    kmap, mean_risk = targets
    from anonymatch.tables.risk.population import encode_sample, population_risk
    from anonymatch.tables.verify import verify

    if k is not None:
        schema = Schema.build(options.qi, options.numeric, (), types=options.types)
        enc = encode_sample(original, schema, options)
        report = verify(parse_cells(release, enc), enc, int(k))
        if not report.passed:
            raise VerificationError(f"the k-map release fails k-anonymity: {report.reason}")
    figures = population_risk(original, release, population, options)
    if figures.kmap < kmap:
        raise VerificationError(f"the k-map release has k-map {figures.kmap} < {kmap}")
    if mean_risk is not None and figures.journalist_mean > mean_risk + 1e-12:
        raise VerificationError(
            f"the release has an average journalist risk {figures.journalist_mean:g} > "
            f"{mean_risk:g}"
        )


def apply_kmap(
    data: pd.DataFrame, table: pd.DataFrame, job: TableJob
) -> tuple[pd.DataFrame, KMapReport]:
    """:func:`enforce_kmap` for a job's release: ``data`` the records published (after missing
    values and outliers were dropped), ``table`` their verified release, the population read
    from ``job.kmap.population`` (a path: ``tables.io.read_table`` with default options).
    O(that of :func:`enforce_kmap` + reading the population)."""
    from anonymatch.tables.io import read_table

    assert job.kmap is not None and job.k is not None
    source = job.kmap.population
    population = source if isinstance(source, pd.DataFrame) else read_table(source)
    options = PopulationInput.of(job)
    return enforce_kmap(
        data, table, population, job.kmap.k, options, k=job.k, mean_risk=job.kmap.mean_risk
    )
