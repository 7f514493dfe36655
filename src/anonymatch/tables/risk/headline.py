"""The utility headline of a table release: what it keeps, in four figures anyone can read.

GCP averages the normalized width of every cell over the *declared* domain: a numeric span, a
value set's labels, a hierarchy's leaves. It can read small while the release keeps little —
a ZIP hierarchy of 100,000 leaves over a table showing 6,000 of them makes ``55***`` cost 1 %
although it hides 3 of 5 digits — and it never says that a release of stars is useless. The
headline counts instead, over the QI cells of the release:

* ``exact_cells``: the share of cells published as one value (neither a range, a set nor
  ``*``);
* ``rows_fully_generalized``: the share of rows whose every QI cell covers every value present
  in the original (or is ``*``): rows that say nothing about anybody's QIs;
* ``codes_merged``: the share of the distinct values present in the original (per QI, summed)
  that are never published on their own: every row holding them shows them merged with others;
* ``loss_present``: the mean cell loss measured on the values *present* in the original
  ((values covered − 1) / (values present − 1) per cell; 1 for ``*``), per QI and overall
  (attribute weights as GCP's).

A release whose ``loss_present`` reaches :data:`USELESS_LOSS` is called useless: the CLI warns,
the report's top card and the web app's result page say so beside the guarantee.

Complexity: O(n·d log u + nnz) for n rows, d QIs, u distinct values per numeric QI and nnz
labels in the published sets; memory O(n + u).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from anonymatch.core.criteria import Check, Verdict
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.recode import GeneralizedQI, cat_distinct
from anonymatch.tables.risk.leakage import RowCells

USELESS_LOSS = 0.9
"""``loss_present`` at or above which a release is called useless (its cells keep less than a
tenth of the values present): the CLI warns, the report and the web app say it in the top card."""

WARN_LOSS = 0.5
"""``loss_present`` at or above which the CLI warns that the release keeps less than half of
what its QIs held (documented in docs/guarantees/leakage.md › Utility headline)."""


@dataclass(frozen=True)
class Headline:
    """The four figures of :mod:`anonymatch.tables.risk.headline` (shares in [0, 1]) and the
    per-QI ``loss_present``."""

    cells: int
    exact_cells: float
    rows_fully_generalized: float
    codes_merged: float
    codes: int
    loss_present: float
    by_qi: dict[str, float]

    @property
    def verdict(self) -> str:
        """``useless``, ``poor`` (above :data:`WARN_LOSS`) or ``useful``."""
        if self.loss_present >= USELESS_LOSS - 1e-12 or self.rows_fully_generalized >= 1.0:
            return "useless"
        return "poor" if self.loss_present >= WARN_LOSS - 1e-12 else "useful"

    def to_dict(self) -> dict[str, object]:
        return {
            "exact_cells": self.exact_cells,
            "rows_fully_generalized": self.rows_fully_generalized,
            "codes_merged": self.codes_merged,
            "codes": self.codes,
            "loss_present": self.loss_present,
            "loss_present_by_qi": dict(self.by_qi),
            "verdict": self.verdict,
        }


class Kept(Check):
    """The utility headline as a release check: what a table release keeps
    (:func:`headline`), stated as the manifest's ``loss.headline`` on every table release, in
    memory and streamed. It refuses nothing (the CLI warns about a poor or useless release:
    ``app.honest``). Checked on a ``tables.risk.checks.ReleaseView``; time and memory as
    :func:`headline`."""

    name = "headline"
    title = "utility headline"
    parameters = ()
    kinds = ("table",)
    at = ("loss", "headline")
    seconds = "leakage"  # timed with the leakage check, as before it was a check
    reference = "Doka et al., AsiaCCS 2015, eq. (1)-(3)"

    def check(self, view: Any) -> Verdict:
        kept = headline(view.rows, view.enc)
        return Verdict(True, kept.verdict, kept.to_dict(), kept)


def headline(cells: GeneralizedQI | RowCells, qi: EncodedQI) -> Headline:
    """The utility headline of published ``cells`` against the original's encoded QIs.

    Parameters
    ----------
    cells : GeneralizedQI or RowCells
        The published QI cells, one per row, or (the streamed path) each distinct cell once
        with every row's cell number (``risk.leakage.RowCells``): the figures are the same.
    qi : EncodedQI
        The original QIs (their present values define each QI's domain here).

    Returns
    -------
    Headline
        Exact cells, rows fully generalized, codes merged, loss on the values present.

    Notes
    -----
    Time O(n·d log u + nnz), memory O(n + u) (see the module). Unlike GCP (Doka et al. eq. 3)
    the loss is counted on the values present, not on declared domains.

    References
    ----------
    Doka et al., "k-Anonymization by Freeform Generalization", AsiaCCS 2015, eq. (1)–(3)
    (NCP and GCP, of which ``loss_present`` is the variant over present values).

    Examples
    --------
    >>> import pandas as pd
    >>> from anonymatch.tables.columns.schema import Schema, encode_qi
    >>> from anonymatch.tables.io.cells import parse_cells
    >>> data = pd.DataFrame({"age": ["1", "2", "3", "4"], "sex": ["F", "F", "M", "M"]})
    >>> enc = encode_qi(data, Schema.build(["age", "sex"], ["age"]))
    >>> release = pd.DataFrame({"age": ["1..2", "1..2", "3", "4"], "sex": ["*", "*", "M", "M"]})
    >>> h = headline(parse_cells(release, enc), enc)
    >>> h.exact_cells, h.rows_fully_generalized, h.codes_merged
    (0.5, 0.0, 0.5)
    """
    view = cells if isinstance(cells, RowCells) else RowCells(cells)
    n = view.n
    d = len(qi.num_names) + len(qi.cat_names)
    if n == 0 or d == 0:
        return Headline(0, 1.0, 0.0, 0.0, 0, 0.0, {})
    cells = view.cells  # from here on: each distinct cell once, ``mult`` rows each
    if view.group is None:
        mult = np.ones(cells.n, np.int64)
    else:
        mult = np.bincount(view.group, minlength=cells.n)
    exact = np.zeros(cells.n, np.int64)
    full = np.ones(cells.n, bool)
    losses: dict[str, np.ndarray] = {}
    merged = codes = 0
    for a, name in enumerate(qi.num_names):
        present = qi.num[~qi.num_missing[:, a], a]
        vals = np.unique(present)
        star = cells.num_star[:, a]
        lo = np.searchsorted(vals, cells.num_lo[:, a], side="left")
        hi = np.searchsorted(vals, cells.num_hi[:, a], side="right")
        covered = np.where(star, len(vals), np.maximum(hi - lo, 0))
        one = ~star & (cells.num_lo[:, a] == cells.num_hi[:, a])
        exact += one
        full &= star | (covered >= len(vals))
        losses[name] = _loss(covered, star, len(vals))
        alone = np.unique(cells.num_lo[one, a])
        merged += len(vals) - int(np.isin(vals, alone).sum())
        codes += len(vals)
    for a, name in enumerate(qi.cat_names):
        present = np.unique(qi.cat[~qi.cat_missing[:, a], a])
        m = len(present)
        star = cells.cat_star[:, a]
        # distinct cells first: a release of hierarchy nodes has few, but rows × leaves labels
        if view.sets is None:
            _, group, rep_sets = cat_distinct(cells, a)
        else:
            rep_sets, group = view.sets[a]
        idx = np.asarray(rep_sets.indices, np.int64)
        ptr = np.asarray(rep_sets.indptr, np.int64)
        rows = np.repeat(np.arange(rep_sets.shape[0]), np.diff(ptr).astype(np.int64))
        inside = np.isin(idx, present)
        covered = np.bincount(rows[inside], minlength=rep_sets.shape[0])[group]
        one = ~star & (np.diff(ptr)[group] == 1)
        exact += one
        full &= star | (covered >= m)
        covered = np.where(star, m, covered)
        losses[name] = _loss(covered, star, m)
        alone = np.unique(group[one])  # distinct cells of one label that some row publishes
        single = idx[np.isin(rows, alone) & inside]
        merged += m - len(np.unique(single))
        codes += m
    by_qi = {name: float((losses[name] * mult).sum() / n) for name in qi.names}
    weights = dict(zip(qi.num_names, qi.num_w.tolist(), strict=True))
    weights.update(zip(qi.cat_names, qi.cat_w.tolist(), strict=True))
    total = sum(weights.values())
    overall = (
        sum(weights[a] * by_qi[a] for a in qi.names) / total
        if total > 0
        else float(np.mean(list(by_qi.values())))
    )
    return Headline(
        n * d,
        float((exact * mult).sum() / (n * d)),
        float(mult[full].sum() / n),
        merged / codes if codes else 0.0,
        codes,
        float(overall),
        by_qi,
    )


def _loss(covered: np.ndarray, star: np.ndarray, present: int) -> np.ndarray:
    """Per cell (values covered − 1) / (values present − 1), 1 for a star; 0 everywhere for a
    QI with one value present (it cannot lose anything but a star)."""
    if present <= 1:
        return star.astype(np.float64)
    loss = (np.maximum(covered, 1) - 1) / (present - 1)
    return np.where(star, 1.0, np.clip(loss, 0.0, 1.0))
