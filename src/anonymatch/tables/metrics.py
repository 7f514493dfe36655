"""Information loss: NCP per attribute and GCP overall, exactly as Doka et al. eq. (1)–(3).

NCP of a numeric cell is (u − l)/(U − L); of a categorical cell (count − 1)/(|A| − 1); a
suppressed cell (``*``) counts 1. U, L and |A| come from the original data. GCP is the mean NCP
over cells, optionally weighted per attribute (Σ w_a NCP_a / Σ w_a, averaged over rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.schema import EncodedQI


@dataclass(frozen=True)
class InformationLoss:
    """GCP overall and the mean NCP of each QI (in the QI order of the schema)."""

    gcp: float
    ncp: dict[str, float]

    def to_dict(self) -> dict[str, object]:
        return {"gcp": self.gcp, "ncp": dict(self.ncp)}


def cell_ncp(cells: GeneralizedQI, qi: EncodedQI) -> tuple[np.ndarray, np.ndarray]:
    """(n, dn) and (n, dc) arrays of per-cell NCP in [0, 1]. O(n·d + nnz)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        width = cells.num_hi - cells.num_lo
        num = np.where(qi.num_span > 0, width / qi.num_span, 0.0)
    num = np.where(cells.num_star, 1.0, np.clip(num, 0.0, 1.0))
    cat = np.empty((cells.n, len(cells.cat_sets)))
    for a, sets in enumerate(cells.cat_sets):
        card = int(qi.cat_card[a])
        count = np.diff(sets.indptr).astype(np.float64)
        cat[:, a] = (count - 1) / (card - 1) if card > 1 else 0.0
    cat = np.where(cells.cat_star, 1.0, np.clip(cat, 0.0, 1.0))
    return num, cat


def information_loss(cells: GeneralizedQI, qi: EncodedQI) -> InformationLoss:
    """GCP (Doka eq. 3, with optional attribute weights) and mean NCP per attribute."""
    return loss_from_sums(ncp_sums(cells, qi), cells.n, qi)


def ncp_sums(cells: GeneralizedQI, qi: EncodedQI) -> np.ndarray:
    """Per-attribute sums of cell NCP, numeric attributes first then categorical (so that the
    sums of the parts of a release add up to the release's). O(n·d + nnz)."""
    num, cat = cell_ncp(cells, qi)
    return np.concatenate([num.sum(axis=0), cat.sum(axis=0)])


def loss_from_sums(sums: np.ndarray, n: int, qi: EncodedQI) -> InformationLoss:
    """GCP and per-attribute NCP from the ``ncp_sums`` of n published rows."""
    means = sums / n if n else np.zeros_like(sums)
    weights = np.concatenate([qi.num_w, qi.cat_w])
    gcp = float(means @ weights / weights.sum()) if weights.sum() > 0 else 0.0
    per_attr = dict(zip((*qi.num_names, *qi.cat_names), means.tolist(), strict=True))
    return InformationLoss(gcp, {a: per_attr[a] for a in qi.names})


def gcp_increase_weights(
    qi: EncodedQI,
    lo: np.ndarray,
    hi: np.ndarray,
    member: list[np.ndarray],
    num_star: np.ndarray | None = None,
    cat_star: np.ndarray | None = None,
) -> np.ndarray:
    """Edge weights of Doka §5: w[i, j] = weighted GCP increase of recasting published record j
    (current bounds ``lo[j]``/``hi[j]``, categorical membership ``member[a][j, code]``) so that it
    also covers original i, summed over attributes. Returns an m × m float64 matrix for the m
    records of ``qi`` (one partition). O(m²·d) time, O(m²) memory (one numba pass, no
    temporaries: large temporaries cost page faults under allocators that return memory to the
    OS eagerly, as Dask workers' do).

    With missing values (``qi.num_missing``/``cat_missing``; ``num_star``/``cat_star`` mark
    the published records whose cell is already suppressed because they cover a missing value),
    a missing value is a point at NCP distance 1 from everything: covering it turns j's cell
    into ``*``, an increase from the cell's current NCP to 1, and a suppressed cell covers
    anything at no further cost (docs/guarantees/missing.md)."""
    num_scale, cat_scale = qi.ncp_scales()
    widths = [mat.shape[1] for mat in member]
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    stacked = np.hstack(member) if member else np.zeros((qi.n, 0), dtype=bool)
    if not qi.has_missing:
        return _increase_weights(
            qi.num, lo, hi, num_scale, qi.cat, np.ascontiguousarray(stacked), offsets, cat_scale
        )
    m = qi.n
    num_star = np.zeros(qi.num.shape, bool) if num_star is None else num_star
    cat_star = np.zeros(qi.cat.shape, bool) if cat_star is None else cat_star
    num_full, cat_full = qi.star_scales()
    # current weighted NCP of every published record's cells
    with np.errstate(invalid="ignore"):
        num_now = np.where(num_star, num_full, (hi - lo) * num_scale)
    cat_now = np.empty((m, len(member)))
    for a, mat in enumerate(member):
        cat_now[:, a] = np.where(
            cat_star[:, a], cat_full[a], np.maximum(mat.sum(axis=1) - 1, 0) * cat_scale[a]
        )
    return _increase_weights_missing(
        qi.num,
        np.ascontiguousarray(qi.num_missing),
        lo,
        hi,
        num_scale,
        num_full,
        np.ascontiguousarray(num_star),
        np.ascontiguousarray(num_now),
        qi.cat,
        np.ascontiguousarray(qi.cat_missing),
        np.ascontiguousarray(stacked),
        offsets,
        cat_scale,
        cat_full,
        np.ascontiguousarray(cat_star),
        cat_now,
    )


@njit(cache=True, nogil=True)
def _increase_weights_missing(  # pragma: no cover - compiled
    num,
    num_na,
    lo,
    hi,
    num_scale,
    num_full,
    num_star,
    num_now,
    cat,
    cat_na,
    member,
    offsets,
    cat_scale,
    cat_full,
    cat_star,
    cat_now,
):
    """``_increase_weights`` with missing values: an attribute of a suppressed j adds nothing;
    a missing value of i suppresses j's cell (increase: full NCP − current NCP)."""
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    w = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            s = 0.0
            for a in range(dn):
                if num_star[j, a]:
                    continue
                if num_na[i, a]:
                    s += num_full[a] - num_now[j, a]
                elif num_scale[a] != 0:
                    v = num[i, a]
                    grown = max(hi[j, a], v) - min(lo[j, a], v)
                    s += (grown - (hi[j, a] - lo[j, a])) * num_scale[a]
            for a in range(dc):
                if cat_star[j, a]:
                    continue
                if cat_na[i, a]:
                    s += cat_full[a] - cat_now[j, a]
                elif cat_scale[a] != 0 and not member[j, offsets[a] + cat[i, a]]:
                    s += cat_scale[a]
            w[i, j] = s
    return w


@njit(cache=True, nogil=True)
def _increase_weights(num, lo, hi, num_scale, cat, member, offsets, cat_scale):  # pragma: no cover
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    w = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            s = 0.0
            for a in range(dn):  # attributes in the same order and arithmetic as Doka eq. 1–2
                if num_scale[a] != 0:
                    v = num[i, a]
                    grown = max(hi[j, a], v) - min(lo[j, a], v)
                    s += (grown - (hi[j, a] - lo[j, a])) * num_scale[a]
            for a in range(dc):
                if cat_scale[a] != 0 and not member[j, offsets[a] + cat[i, a]]:
                    s += cat_scale[a]
            w[i, j] = s
    return w
