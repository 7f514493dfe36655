"""The widening that enforces every population criterion (k-map, the journalist-risk bound,
δ-presence).

:func:`enforce_population` takes any release of the sample and widens the published cells of
the rows some criterion refuses (``PopulationCriterion.rows_ok``) until every criterion holds.
Widening a cell keeps every compatibility the release had, so the release stays k-anonymous
(its k-factor is still there); it is verified again from the cells anyway, and every criterion
is checked from the release and the population alone. Each round tries, for every row still
refused, one widening step on every QI — a numeric range doubled in rank among the values
present (the whole domain: ``*``), a categorical cell to ``*`` — and keeps, per row, the step
that makes the row acceptable at the smallest information loss (NCP), or else the one that
brings the most population records. A row whose cells are all ``*`` matches the whole
population (F = N, f = n), so every criterion that such rows meet can be met; the others raise
InfeasibleError (exit 3, ``PopulationCriterion.feasible``) before anything is widened.

References
----------
.. [1] L. Sweeney, "Computational disclosure control", MIT PhD thesis, 2001 (k-map).
.. [2] K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5), 2008.
.. [3] M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals from shared
   databases", SIGMOD 2007 (δ-presence).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.criteria import Criterion
from anonymatch.core.errors import InfeasibleError, InputError, VerificationError
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.schema import EncodedQI, Schema
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.models.kmap import JournalistRisk, KMap, PopulationCriterion
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.risk.population import (
    CountIndex,
    PopulationInput,
    PopulationRisk,
    _joint,
)

_EPS = 1e-12


@dataclass(frozen=True)
class Widening:
    """What :func:`enforce_population` did: ``before`` min F_j of the release given,
    ``widened_rows`` rows changed, ``widened_cells`` cells changed, ``rounds`` of widening
    (the manifest's ``loss.widening``), ``population`` N."""

    before: int
    widened_rows: int
    widened_cells: int
    rounds: int
    population: int

    def to_dict(self) -> dict[str, object]:
        return {
            "before": self.before,
            "widened_rows": self.widened_rows,
            "widened_cells": self.widened_cells,
            "rounds": self.rounds,
        }


def enforce_population(
    original: pd.DataFrame,
    release: pd.DataFrame,
    population: pd.DataFrame,
    criteria: Sequence[PopulationCriterion],
    options: PopulationInput,
    k: int | None = None,
) -> tuple[pd.DataFrame, Widening, PopulationRisk]:
    """Widen the cells of ``release`` until every population criterion holds; verify
    k-anonymity (when ``k`` is given) and every criterion from the cells.

    Parameters
    ----------
    original : pandas.DataFrame
        The sample the release was made from.
    release : pandas.DataFrame
        Its release (release cell format; other columns are kept as they are).
    population : pandas.DataFrame
        The population table (the same QI columns).
    criteria : sequence of PopulationCriterion
        k-map, the journalist-risk bound, δ-presence (each at most once).
    options : PopulationInput
        QI names and types, missing values.
    k : int or None
        The k-anonymity the release claims; checked again after the widening.

    Returns
    -------
    (pandas.DataFrame, Widening, PopulationRisk)
        The repaired release (the same rows, QI cells widened), what was done, and the
        population view of the repaired release (``population_risk``) it was verified on.

    Raises
    ------
    InputError
        A population lacking a QI, a release of another row count, a criterion that needs the
        sample to be part of the population when it is not.
    InfeasibleError
        A criterion no release can meet (k-map above N, δ bounds excluding n / N, a
        journalist-risk bound below what all-``*`` rows give).
    VerificationError
        The repaired release fails k-anonymity or a criterion (should never happen).

    Notes
    -----
    Each round costs one count of the refused rows per QI (``CountIndex.counts``); rounds
    are at most d · log₂(distinct values) per floor since every step at least doubles a cell
    or makes it ``*``; the journalist-risk floor rises by a quarter at a time. Time
    O((n + N)·d log(n + N)) for the index plus the rounds; memory O((n + N)·d).

    References
    ----------
    L. Sweeney, 2001 (k-map); K. El Emam, F. K. Dankar, JAMIA 15(5), 2008; M. E. Nergiz,
    M. Atzori, C. Clifton, "Hiding the presence of individuals from shared databases",
    SIGMOD 2007 (δ-presence).

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.tables.models.kmap import KMap
    >>> from anonymatch.tables.risk.population import PopulationInput
    >>> sample = pd.DataFrame({"age": ["30", "31", "40", "41"], "sex": ["F", "F", "M", "M"]})
    >>> release = pd.DataFrame({"age": ["30..31"] * 2 + ["40..41"] * 2,
    ...                         "sex": ["F", "F", "M", "M"]})
    >>> people = pd.DataFrame({"age": ["30", "31", "31", "40", "41", "50"],
    ...                        "sex": ["F", "F", "F", "M", "M", "M"]})
    >>> out, rep, _ = enforce_population(sample, release, people, [KMap(3)],
    ...                         PopulationInput(qi=("age", "sex"), numeric=("age",)), k=2)
    >>> out["age"].tolist(), rep.before, rep.widened_rows
    (['30..31', '30..31', '31..50', '31..50'], 2, 2)
    """
    schema = Schema.build(options.qi, options.numeric, (), types=options.types)
    for name in schema.qi:
        if name not in population.columns:
            raise InputError(f"the population has no column {name!r}")
    joint, n, _ = _joint(original, population, schema, options)
    big_n = joint.n - n
    for criterion in criteria:
        criterion.feasible(n, big_n)
    release = release.reset_index(drop=True)
    cells = parse_cells(release, joint)
    if cells.n != n:
        raise InputError(
            f"the release does not match the original: it has {cells.n} rows, the original {n}"
        )
    index = CountIndex.build(joint)
    _, inverse, _ = group_rows(joint.keys())
    pop = np.bincount(inverse[n:], minlength=index.size).astype(np.int64)
    sample = np.bincount(inverse[:n], minlength=index.size).astype(np.int64)
    if any(c.needs_subset for c in criteria) and (sample > pop).any():
        raise InputError(
            "δ-presence needs the population to contain the sample: "
            f"{int(np.maximum(sample - pop, 0).sum())} sample records have no population record "
            "with their QI values"
        )
    weights = (pop, sample)
    big_f, small_f, _ = index.counts(cells, weights)
    before = int(big_f.min())
    widened = np.zeros((n, len(joint.num_names) + len(joint.cat_names)), bool)
    rounds = 0
    floor = max([1, *(c.k for c in criteria if isinstance(c, KMap))])
    journalist = [c for c in criteria if isinstance(c, JournalistRisk)]

    def accepted(big: np.ndarray, small: np.ndarray) -> np.ndarray:
        ok = big >= floor
        for criterion in criteria:
            ok &= criterion.rows_ok(big, small)
        return ok

    while True:
        while not (ok := accepted(big_f, small_f)).all():
            rounds += 1
            low = np.flatnonzero(~ok)
            cells, big_f, small_f, changed = _widen_round(
                cells, (big_f, small_f), low, index, (joint, weights, accepted)
            )
            widened[low] |= changed
        if all(journalist_mean(cells, big_f) <= c.bound + _EPS for c in journalist):
            break
        if floor >= big_n:  # every row fits the whole population: the risk cannot go lower
            raise InfeasibleError(
                f"`journalist_risk` = {journalist[0].bound:g} cannot be met: the population "
                f"has only {big_n} records"
            )
        floor = min(big_n, max(floor + 1, -(-5 * floor // 4)))
    out = release.copy()
    if rounds:
        text = format_cells(cells, joint)
        for name in joint.names:
            out[name] = text[name]
    view = _check(original, out, population, criteria, options, k)
    report = Widening(
        before=before,
        widened_rows=int(widened.any(axis=1).sum()),
        widened_cells=int(widened.sum()),
        rounds=rounds,
        population=big_n,
    )
    return out, report, view


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
    counts: tuple[np.ndarray, np.ndarray],
    low: np.ndarray,
    index: CountIndex,
    context: tuple[EncodedQI, tuple[np.ndarray, np.ndarray], Any],
) -> tuple[GeneralizedQI, np.ndarray, np.ndarray, np.ndarray]:
    """One widening step for each row in ``low``: every QI tried, the best kept per row
    (module docstring). ``counts`` are (F, f) per row, ``context`` the joint codes, the
    (population, sample) weights and the rows' acceptance test. Returns the new cells, F, f
    and the (len(low), d) cells changed."""
    joint, weights, accepted = context
    big_f, small_f = counts
    sub = cells.take(low)
    d_num, d_cat = len(joint.num_names), len(joint.cat_names)
    tries: list[GeneralizedQI] = []
    big_try, small_try, losses = [], [], []
    for a in range(d_num + d_cat):
        wider, loss = _step(sub, a, index, joint)
        tries.append(wider)
        big, small, _ = index.counts(wider, weights)
        big_try.append(big)
        small_try.append(small)
        losses.append(loss)
    f_try = np.stack(big_try, axis=1)  # (len(low), d)
    s_try = np.stack(small_try, axis=1)
    loss_try = np.stack(losses, axis=1)
    open_ = np.isfinite(loss_try)  # a cell already ``*`` cannot widen
    reach = accepted(f_try.ravel(), s_try.ravel()).reshape(f_try.shape) & open_
    best_reach = np.argmin(np.where(reach, loss_try, np.inf), axis=1)
    # no step is accepted: the most population records, ties to the smaller loss; a row with
    # an open cell always has one (the loop ends: every step widens a cell, and all-``*``
    # rows meet every feasible criterion)
    gain = np.where(open_, f_try, -1).astype(np.float64)
    best = gain == gain.max(axis=1, keepdims=True)
    best_gain = np.argmin(np.where(best & open_, loss_try, np.inf), axis=1)
    choice = np.where(reach.any(axis=1), best_reach, best_gain)
    new = _assemble(cells, low, tries, choice, d_num)
    big_f, small_f = big_f.copy(), small_f.copy()
    big_f[low] = f_try[np.arange(len(low)), choice]
    small_f[low] = s_try[np.arange(len(low)), choice]
    changed = np.zeros((len(low), d_num + d_cat), bool)
    changed[np.arange(len(low)), choice] = True
    return new, big_f, small_f, changed


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
    criteria: Sequence[PopulationCriterion],
    options: PopulationInput,
    k: int | None,
) -> PopulationRisk:
    """Verify the repaired release from its cells: k-anonymity against the original (when
    ``k`` is given) and every criterion against the population; the population view checked.
    VerificationError otherwise."""
    from anonymatch.tables.risk.population import encode_sample, population_risk
    from anonymatch.tables.verify import verify

    if k is not None:
        schema = Schema.build(options.qi, options.numeric, (), types=options.types)
        enc = encode_sample(original, schema, options)
        report = verify(parse_cells(release, enc), enc, int(k))
        if not report.passed:
            raise VerificationError(f"the widened release fails k-anonymity: {report.reason}")
    view = population_risk(original, release, population, options)
    for criterion in criteria:
        verdict = criterion.check(view)
        if not verdict.passed:
            raise VerificationError(
                f"the widened release fails {criterion.title}: {verdict.reason}"
            )
    return view


def apply_population(
    data: pd.DataFrame,
    table: pd.DataFrame,
    criteria: Sequence[Criterion],
    population: str | os.PathLike[str] | pd.DataFrame,
    options: PopulationInput,
    k: int | None = None,
) -> tuple[pd.DataFrame, Widening, PopulationRisk, dict[str, object]]:
    """:func:`enforce_population` for a run's release, whatever its kind: ``data`` the records
    published (after missing values and outliers were dropped), ``table`` their verified
    release (the tables', or the relational release's table part), ``population`` a
    DataFrame or a path (read by ``tables.io.read_table`` with default options). Returns the
    release, the widening, the population view it was verified on, and the population's
    ``source`` for the manifest (its path and SHA-256; None for a DataFrame). O(that of
    :func:`enforce_population` + reading the population)."""
    from anonymatch.core.manifest import file_digest
    from anonymatch.tables.io import read_table

    counted = [c for c in criteria if isinstance(c, PopulationCriterion)]
    assert counted, "apply_population runs population criteria"
    frame = population if isinstance(population, pd.DataFrame) else read_table(population)
    out, widening, view = enforce_population(data, table, frame, counted, options, k=k)
    named = None if isinstance(population, pd.DataFrame) else str(population)
    where: dict[str, object] = {
        "population": named,
        "population_sha256": named and file_digest(named),
    }
    return out, widening, view, where
