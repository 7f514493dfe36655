"""The anchored imputation model of a release's cells (issue 27): what a cell tells of its row.

A published cell is the hull of the values of the d people the row is compatible with (its
neighbours in the generalization graph; d = k for the k-regular freeform methods, the class
size for a class-based one), and the person behind the row is each of them with probability
1/d (the privacy step draws one of d disjoint assignments uniformly). So a range ``a..b`` says
more than "somewhere in [a, b]": one neighbour *is* at a and one *is* at b — a value set says
every label in it is some neighbour's — and only the other neighbours are unknown inside the
cell. The row's value is drawn accordingly: each end (each label of a set) with probability
1/d, otherwise from a model of the interior.

The interior is the part the release does not identify. Its model is a density ∝ F(x)^γ on
the cell, F the column's distribution: γ = 0 is flat inside the cell (neighbours chosen
regardless of how common a value is), γ = 1 is F restricted to the cell (neighbours a random
draw of the people in the range). F itself is estimated by self-consistency over all cells
(every person is a neighbour of exactly d rows, so the d·n neighbour slots are d copies of the
column's empirical distribution: Turnbull-style EM where each cell contributes its exact ends
and d − 2 interior slots). A *proper* multiple imputation (Rubin 1987) redraws the model's
unknowns for every table: the cells' weights from a Bayesian bootstrap (Rubin 1981) before the
EM, and γ uniformly in ``shape`` — so the between-imputation variance carries the uncertainty
of the unidentified interior, not only that of the draws.

References
----------
Rubin, D. B. "The Bayesian bootstrap". Annals of Statistics 9(1), 130–134, 1981.
Rubin, D. B. *Multiple Imputation for Nonresponse in Surveys*. Wiley, 1987.
Turnbull, B. W. "The empirical distribution function with arbitrarily grouped, censored and
truncated data". JRSS B 38(3), 290–295, 1976.
Doka, K., Xue, M., Tsoumakos, D., Karras, P. "k-Anonymization by Freeform Generalization".
ASIACCS 2015 (the k-regular graph and the uniform choice of an assignment).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.view import group_rows

_ITERATIONS = 300
_TOLERANCE = 1e-10


@dataclass(frozen=True)
class AnchoredModel:
    """The unknowns of one anchored draw: the cells' bootstrap weights and the interior's γ.

    ``degree`` is d (per row), ``gamma`` the interior exponent, ``bootstrap`` whether the
    cells are reweighted (Bayesian bootstrap) before F is estimated.
    """

    degree: np.ndarray
    gamma: float
    bootstrap: bool = True


def row_degrees(release: pd.DataFrame, qi: list[str], degree: int) -> np.ndarray:
    """d per row: ``degree``, or the number of rows publishing the same QI cells when more (a
    class of a class-based release). O(n·|qi|)."""
    if int(degree) < 1:
        raise InputError(f"degree must be at least 1, got {degree}")
    if not qi:
        return np.full(len(release), int(degree))
    codes = np.column_stack([pd.factorize(release[c].astype(object))[0] for c in qi])
    _, inverse, counts = group_rows(codes)
    sizes = counts[inverse]
    return np.maximum(sizes, int(degree))


def _weights(counts: np.ndarray, rng: np.random.Generator, bootstrap: bool) -> np.ndarray:
    """Bayesian-bootstrap weights of groups of ``counts`` rows (a sum of Exp(1) per row)."""
    if not bootstrap:
        return counts.astype(float)
    return rng.gamma(np.maximum(counts, 1e-12), 1.0)


def _range_em(
    cells: tuple[np.ndarray, np.ndarray, np.ndarray], w: np.ndarray, size: int, gamma: float
) -> np.ndarray:
    """Self-consistent F on ``size`` sorted support points from range cells (a, b, d) of
    weight w: each contributes its ends exactly and d − 2 interior slots spread as F^γ.
    O(iterations·(C + size))."""
    a, b, d = cells
    exact = a == b
    anchors = np.zeros(size)
    np.add.at(anchors, a, w * np.where(exact, d, 1))
    np.add.at(anchors, b[~exact], w[~exact])
    inner = np.where(exact, 0.0, w * np.maximum(d - 2, 0))
    p = np.full(size, 1.0 / size)
    for _ in range(_ITERATIONS):
        q = p**gamma
        cum = np.concatenate([[0.0], np.cumsum(q)])
        mass = cum[b + 1] - cum[a]
        share = np.where(mass > 0, inner / np.where(mass > 0, mass, 1), 0.0)
        diff = np.zeros(size + 1)
        np.add.at(diff, a, share)
        np.add.at(diff, b + 1, -share)
        new = anchors + q * np.cumsum(diff)[:-1]
        new /= new.sum()
        if np.abs(new - p).max() < _TOLERANCE:
            return new
        p = new
    return p


def draw_ranges(
    lo: np.ndarray, hi: np.ndarray, model: AnchoredModel, rng: np.random.Generator
) -> np.ndarray:
    """One anchored draw per row of a range column (NaN bounds: suppressed, drawn from F).

    The support is the cells' distinct ends (the values the release shows to exist); a row
    takes its lower end with probability 1/d, its upper end with 1/d, else a support point
    inside its range with probability ∝ F^γ. Time O(n log n + iterations·(C + S)) for C
    distinct cells and S support points.
    """
    gone = np.isnan(lo)
    if gone.all():
        raise InputError("a column is suppressed in every row")
    support = np.unique(np.concatenate([lo[~gone], hi[~gone]]))
    ia = np.searchsorted(support, np.where(gone, support[0], lo))
    ib = np.searchsorted(support, np.where(gone, support[-1], hi))
    d = model.degree
    keys = np.stack([ia[~gone], ib[~gone], d[~gone]], axis=1)
    groups, _, counts = group_rows(keys)
    w = _weights(counts, rng, model.bootstrap)
    f = _range_em((groups[:, 0], groups[:, 1], groups[:, 2]), w, len(support), model.gamma)
    q = f**model.gamma
    cum = np.concatenate([[0.0], np.cumsum(q)])
    # interior draw by inverse CDF of F^γ restricted to [a, b]; a suppressed row: F itself
    cum_f = np.concatenate([[0.0], np.cumsum(f)])
    u = rng.random(len(lo))
    target = cum[ia] + u * (cum[ib + 1] - cum[ia])
    inside = np.clip(np.searchsorted(cum, target, side="right") - 1, ia, ib)
    if gone.any():
        spread = np.searchsorted(cum_f, u[gone] * cum_f[-1], side="right") - 1
        inside[gone] = np.clip(spread, 0, len(support) - 1)
    pick = rng.random(len(lo)) * d
    index = np.where(pick < 1, ia, np.where(pick < 2, ib, inside))
    index = np.where(gone, inside, index)
    return support[index]


def _set_em(
    member: np.ndarray, cells: tuple[np.ndarray, np.ndarray, np.ndarray], gamma: float
) -> np.ndarray:
    """Self-consistent F over L labels from C distinct set cells (``member`` C × L booleans;
    cells = (weight, d, anchored)): each label of an anchored set is some neighbour's, the
    d − |set| others are spread as F^γ over the set (all d for a set not anchored: a hierarchy
    node, whose leaves need not all occur). O(iterations·C·L)."""
    w, d, anchored = cells
    size = np.where(anchored, member.sum(axis=1), 0)
    anchors = ((w * anchored)[:, None] * member).sum(axis=0)
    inner = w * np.maximum(d - size, 0)
    p = np.full(member.shape[1], 1.0 / member.shape[1])
    for _ in range(_ITERATIONS):
        q = p**gamma
        mass = member @ q
        share = np.where(mass > 0, inner / np.where(mass > 0, mass, 1), 0.0)
        new = anchors + q * (share @ member)
        new /= new.sum()
        if np.abs(new - p).max() < _TOLERANCE:
            return new
        p = new
    return p


def draw_sets(
    member: np.ndarray,
    codes: np.ndarray,
    model: AnchoredModel,
    rng: np.random.Generator,
    anchored: np.ndarray | None = None,
) -> np.ndarray:
    """One label index per row of a set column: ``codes`` index the rows' distinct cells
    (rows of ``member``, C × L booleans; −1 suppressed, drawn from F). A row takes each label
    of its set with probability 1/d, else a label of its set with probability ∝ F^γ;
    ``anchored`` (C booleans, default all) marks the cells whose every label occurs (not a
    hierarchy node). O(iterations·C·L + n·L)."""
    if anchored is None:
        anchored = np.ones(len(member), bool)
    d = model.degree
    keep = codes >= 0
    if not keep.any():
        raise InputError("a column is suppressed in every row")
    keys = np.stack([codes[keep], d[keep]], axis=1)
    groups, _, counts = group_rows(keys)
    w = _weights(counts, rng, model.bootstrap)
    cells = (w, groups[:, 1].astype(float), anchored[groups[:, 0]])
    f = _set_em(member[groups[:, 0]], cells, model.gamma)
    q = f**model.gamma
    full = np.vstack([member, np.ones((1, member.shape[1]), bool)])
    rows = full[np.where(keep, codes, len(member))]
    size = rows.sum(axis=1)
    anchor = rows / np.maximum(size, 1)[:, None]  # a label of the set, uniformly
    interior = rows * np.where(keep[:, None], q[None, :], f[None, :])
    interior /= np.maximum(interior.sum(axis=1, keepdims=True), 1e-300)
    shown = np.append(anchored, False)[np.where(keep, codes, len(member))]
    pa = np.where(shown, np.minimum(size, d) / d, 0.0)  # the labels the set shows exist
    probs = pa[:, None] * anchor + (1 - pa)[:, None] * interior
    cum = np.cumsum(probs, axis=1)
    u = rng.random(len(codes)) * cum[:, -1]
    pick = (cum < u[:, None]).sum(axis=1)
    return np.minimum(pick, member.shape[1] - 1)
