"""Information loss: NCP per attribute and GCP overall, exactly as Doka et al. eq. (1)–(3).

NCP of a numeric cell is (u − l)/(U − L); of a categorical cell (count − 1)/(|A| − 1); a
suppressed cell (``*``) counts 1. U, L and |A| come from the original data. GCP is the mean NCP
over cells, optionally weighted per attribute (Σ w_a NCP_a / Σ w_a, averaged over rows).

Typed QIs (``tables.columns.qitypes``): an ordinal QI is scored on its ranks with
U − L = (levels − 1) of its declared order, a date QI on its periods. A categorical QI with a
hierarchy has |A| = the hierarchy's leaves, and a published node counts as the set of leaves
under it, so its NCP is (leaves under the node − 1)/(|A| − 1): ARX's Loss metric (Iyengar, KDD
2002).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.recode import GeneralizedQI, cat_nodes


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
    for a in range(len(cells.cat_sets)):
        card = int(qi.cat_card[a])
        held = cat_nodes(cells, a)  # hierarchy nodes: their leaf counts, no leaf listed
        if held is not None:
            count = np.where(held.nodes >= 0, held.tree.count[held.nodes], 0).astype(float)
        else:
            count = np.diff(cells.cat_sets[a].indptr).astype(np.float64)
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


@dataclass(frozen=True)
class TreeTables:
    """The hierarchies of a table's categorical QIs packed for the freeform kernels.

    ``is_tree[a]``: attribute a publishes hierarchy nodes. ``anc`` stacks every hierarchy's
    ancestor table (leaf rows from ``leaf_off[a]``, padded on the right with the root to the
    tallest height H); ``count`` stacks the leaf counts of their nodes from ``node_off[a]``.
    """

    is_tree: np.ndarray
    anc: np.ndarray
    leaf_off: np.ndarray
    count: np.ndarray
    node_off: np.ndarray

    @classmethod
    def build(cls, qi: EncodedQI) -> TreeTables:
        trees = qi.cat_hierarchies()
        height = max([t.height for t in trees if t is not None], default=1)
        ancs, counts = [], []
        for t in trees:
            if t is None:
                ancs.append(np.zeros((0, height), np.int64))
                counts.append(np.zeros(0, np.int64))
                continue
            pad = np.repeat(t.anc[:, -1:], height - t.height, axis=1)
            ancs.append(np.hstack([t.anc, pad]))
            counts.append(t.count)
        leaf_off = np.concatenate([[0], np.cumsum([len(x) for x in ancs])]).astype(np.int64)
        node_off = np.concatenate([[0], np.cumsum([len(x) for x in counts])]).astype(np.int64)
        return cls(
            np.array([t is not None for t in trees], dtype=bool),
            np.ascontiguousarray(np.vstack(ancs) if ancs else np.zeros((0, 1), np.int64)),
            leaf_off,
            np.concatenate(counts) if counts else np.zeros(0, np.int64),
            node_off,
        )

    @property
    def any(self) -> bool:
        return bool(self.is_tree.any())

    def lca_levels(self, a: int, x: np.ndarray, rep: np.ndarray, level: np.ndarray) -> np.ndarray:
        """Level of the lowest common ancestor of leaves x and of the nodes (a leaf ``rep``
        under each, at ``level``) of attribute a. O(len(x)·H)."""
        ax = self.anc[self.leaf_off[a] + x]
        ar = self.anc[self.leaf_off[a] + rep]
        same = (ax == ar) & (np.arange(self.anc.shape[1]) >= level[:, None])
        return np.argmax(same, axis=1).astype(np.int64)


@dataclass(frozen=True)
class PublishedCells:
    """The current cells of the m published records of one partition, as
    :func:`gcp_increase_weights` reads them: numeric bounds ``lo``/``hi`` (m × dn), categorical
    membership ``member[a][j, code]``; for attributes publishing hierarchy nodes, record j
    shows the node at ``level[j, a]`` above leaf ``rep[j, a]``; ``num_star``/``cat_star`` mark
    the cells already suppressed (they cover a missing value). None: no hierarchy attribute,
    no suppressed cell. The arrays are referenced, not copied."""

    lo: np.ndarray
    hi: np.ndarray
    member: list[np.ndarray]
    rep: np.ndarray | None = None
    level: np.ndarray | None = None
    num_star: np.ndarray | None = None
    cat_star: np.ndarray | None = None


def gcp_increase_weights(
    qi: EncodedQI,
    cells: PublishedCells,
    trees: TreeTables | None = None,
    leaf: np.ndarray | None = None,
    forbidden: np.ndarray | None = None,
    into: tuple[np.ndarray, np.ndarray] | None = None,
    dtype: type = np.float64,
) -> np.ndarray:
    """Edge weights of Doka §5: w[i, j] = weighted GCP increase of recasting published record j
    (its ``cells``: current bounds ``lo[j]``/``hi[j]``, categorical membership
    ``member[a][j, code]``) so that it also covers original i, summed over attributes.
    Returns an m × m float64 matrix for the m records of ``qi`` (one partition). O(m²·d) time,
    O(m²) memory (one numba pass, no temporaries: large temporaries cost page faults under
    allocators that return memory to the OS eagerly, as Dask workers' do).

    With ``trees`` (attributes publishing hierarchy nodes), record j of such an attribute a
    currently shows the node at ``cells.level[j, a]`` above leaf ``cells.rep[j, a]``, originals
    have leaves ``leaf[i, a]`` (hierarchy codes), and the increase is (leaves under the lowest
    common ancestor of the node and i's leaf − leaves under the node)/(|A| − 1), weighted: the
    Loss metric's increase. O(m²·(d + H)) then.

    With missing values (``qi.num_missing``/``cat_missing``; ``cells.num_star``/``cat_star``
    mark the published records whose cell is already suppressed because they cover a missing
    value), a missing value is a point at NCP distance 1 from everything: covering it turns
    j's cell into ``*``, an increase from the cell's current NCP (a hierarchy node's included)
    to 1, and a suppressed cell covers anything at no further cost
    (docs/guarantees/missing.md).

    With ``forbidden`` (m × m bool), those entries get ``forbidden_cost(m)`` instead, above the
    cost of any assignment avoiding them (a record's weighted NCP, and so any increase, is at
    most 1), written while each row is in cache: an exact assignment on the result avoids them
    whenever it can. ``ValueError`` if an allowed weight is not finite.

    ``into`` = (w, columns): ``cells`` hold p published records only (their rows of every
    array), which are columns ``columns`` of the m × M matrix ``w`` (``forbidden`` m × M too):
    their weights are written there, bitwise those a full computation gives, and ``w`` is
    returned (the freeform shell recomputes only the records whose cells grew in a round).
    O(m·p·d).

    ``dtype``: the float type of a new matrix (float32 for the two-stage rounds: half the
    memory read by each assignment); each weight is computed in float64 and rounded once."""
    lo, hi, member, rep, level = cells.lo, cells.hi, cells.member, cells.rep, cells.level
    num_star, cat_star = cells.num_star, cells.cat_star
    num_scale, cat_scale = qi.ncp_scales()
    widths = [mat.shape[1] for mat in member]
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    p = lo.shape[0]  # published records
    stacked = np.hstack(member) if member else np.zeros((p, 0), dtype=bool)
    if trees is None:
        trees = TreeTables.build(qi)
        if trees.any:
            raise ValueError("hierarchical attributes need leaf, rep and level")
    big = forbidden_cost(qi.n)
    if forbidden is None:
        forbidden = np.zeros((0, 0), dtype=bool)
    w, columns = (np.empty((qi.n, p), dtype), np.arange(p)) if into is None else into
    leaf = np.ascontiguousarray(np.zeros(qi.cat.shape, np.int64) if leaf is None else leaf)
    empty = np.zeros((p, qi.cat.shape[1]), np.int64)
    rep = np.ascontiguousarray(empty if rep is None else rep)
    level = np.ascontiguousarray(empty if level is None else level)
    if not qi.has_missing:
        bad = _increase_weights(
            (qi.num, qi.cat, leaf),
            (lo, hi, np.ascontiguousarray(stacked), offsets, rep, level),
            (num_scale, cat_scale),
            (trees.is_tree, trees.anc, trees.leaf_off, trees.count, trees.node_off),
            forbidden,
            big,
            w,
            columns,
        )
        return _checked(w, bad)
    num_star = np.zeros((p, qi.num.shape[1]), bool) if num_star is None else num_star
    cat_star = np.zeros((p, qi.cat.shape[1]), bool) if cat_star is None else cat_star
    num_full, cat_full = qi.star_scales()
    # current weighted NCP of every published record's cells
    with np.errstate(invalid="ignore"):
        num_now = np.where(num_star, num_full, (hi - lo) * num_scale)
    cat_now = np.empty((p, len(member)))
    for a, mat in enumerate(member):
        if trees.is_tree[a]:  # leaves under the node shown (a star's rep is a placeholder)
            node = trees.anc[trees.leaf_off[a] + rep[:, a], level[:, a]]
            values = trees.count[trees.node_off[a] + node]
        else:
            values = mat.sum(axis=1)
        cat_now[:, a] = np.where(
            cat_star[:, a], cat_full[a], np.maximum(values - 1, 0) * cat_scale[a]
        )
    bad = _increase_weights_missing(
        (qi.num, qi.cat, leaf),
        (lo, hi, np.ascontiguousarray(stacked), offsets, rep, level),
        (num_scale, cat_scale),
        (trees.is_tree, trees.anc, trees.leaf_off, trees.count, trees.node_off),
        (
            np.ascontiguousarray(qi.num_missing),
            np.ascontiguousarray(qi.cat_missing),
            np.ascontiguousarray(num_star),
            np.ascontiguousarray(cat_star),
            np.ascontiguousarray(num_now),
            cat_now,
            num_full,
            cat_full,
        ),
        forbidden,
        big,
        w,
        columns,
    )
    return _checked(w, bad)


def forbidden_cost(m: int) -> float:
    """The price of a forbidden edge in an m-record partition: 2(m + 1) + 1, above m (the cost
    of any assignment of weights ≤ 1) plus a margin for rounding."""
    return 2.0 * (m + 1) + 1.0


def _checked(w: np.ndarray, bad: bool) -> np.ndarray:
    if bad:
        raise ValueError("the cost matrix has non-finite allowed entries")
    return w


# The two kernels below repeat their per-cell arithmetic on purpose: moving it into shared njit
# helpers made gcp_increase_weights ~100x slower (3.2 ms -> 336 ms on 600 Adult rows). Both
# fill one row of w at a time, attribute by attribute, over the published records j read from
# attribute-major (transposed, contiguous) copies, so that the inner loop over j is branch-light
# and SIMD-vectorized: 10x faster than a per-cell loop over attributes (8.6 -> 0.8 ms on 1,000
# Adult rows). Each w[i, j] still adds its attributes' terms in the same order, numeric first, so
# the weights are bitwise those of the per-cell loop. Both take their arrays in the groups of
# ``_increase_weights``' docstring.
@njit(cache=True, nogil=True, inline="always")
def _store_row(w, i, row, cols, forbidden, big):  # pragma: no cover - compiled
    """Write original i's increases ``row`` (one per column of ``cols``) into ``w[i]``,
    pricing the ``forbidden`` entries at ``big`` while the row is in cache (none when
    ``forbidden`` is empty). Returns whether an allowed entry is not finite. O(len(cols))."""
    out = w[i]
    bad = False
    if forbidden.shape[0]:
        no = forbidden[i]
        for j in range(len(cols)):
            c = cols[j]
            bad |= not no[c] and not np.isfinite(row[j])
            out[c] = big if no[c] else row[j]
    else:
        for j in range(len(cols)):
            out[cols[j]] = row[j]
    return bad


@njit(cache=True, nogil=True)
def _increase_weights_missing(  # pragma: no cover - compiled
    original, published, scales, trees, missing, forbidden, big, w, cols
):
    """``_increase_weights`` with missing values: an attribute of a suppressed j adds nothing;
    a missing value of i suppresses j's cell (increase: full NCP − current NCP). ``missing`` =
    (num_na, cat_na, num_star, cat_star, num_now, cat_now, num_full, cat_full): which original
    values are missing, which published cells are suppressed, every published cell's current
    weighted NCP and each attribute's full (suppressed) weighted NCP."""
    num, cat, leaf = original
    lo, hi, member, offsets, rep, level = published
    num_scale, cat_scale = scales
    is_tree, anc, leaf_off, count, node_off = trees
    num_na, cat_na, num_star, cat_star, num_now, cat_now, num_full, cat_full = missing
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    lo_t, hi_t = np.ascontiguousarray(lo.T), np.ascontiguousarray(hi.T)
    width_t = hi_t - lo_t
    num_star_t, num_now_t = np.ascontiguousarray(num_star.T), np.ascontiguousarray(num_now.T)
    cat_star_t, cat_now_t = np.ascontiguousarray(cat_star.T), np.ascontiguousarray(cat_now.T)
    member_t = np.ascontiguousarray(member.T)
    rep_t, level_t = np.ascontiguousarray(rep.T), np.ascontiguousarray(level.T)
    p = lo_t.shape[1]  # published records: the columns ``cols`` of w
    row = np.empty(p)
    bad = False
    for i in range(m):
        row[:] = 0.0
        for a in range(dn):
            star = num_star_t[a]
            if num_na[i, a]:
                full, now = num_full[a], num_now_t[a]
                for j in range(p):
                    if not star[j]:
                        row[j] += full - now[j]
            elif num_scale[a] != 0:
                v, scale = num[i, a], num_scale[a]
                low, high, width = lo_t[a], hi_t[a], width_t[a]
                for j in range(p):
                    if not star[j]:
                        row[j] += ((max(high[j], v) - min(low[j], v)) - width[j]) * scale
        for a in range(dc):
            star = cat_star_t[a]
            if cat_na[i, a]:
                full, now = cat_full[a], cat_now_t[a]
                for j in range(p):
                    if not star[j]:
                        row[j] += full - now[j]
            elif cat_scale[a] == 0:
                continue
            elif is_tree[a]:
                x = leaf_off[a] + leaf[i, a]
                for j in range(p):
                    if not star[j]:
                        r = leaf_off[a] + rep_t[a, j]
                        lv = level_t[a, j]
                        now_node = anc[r, lv]
                        while anc[x, lv] != anc[r, lv]:
                            lv += 1
                        grown = count[node_off[a] + anc[r, lv]] - count[node_off[a] + now_node]
                        row[j] += grown * cat_scale[a]
            else:
                has, scale = member_t[offsets[a] + cat[i, a]], cat_scale[a]
                for j in range(p):
                    if not star[j] and not has[j]:
                        row[j] += scale
        bad |= _store_row(w, i, row, cols, forbidden, big)
    return bad


@njit(cache=True, nogil=True)
def _increase_weights(  # pragma: no cover - compiled
    original, published, scales, trees, forbidden, big, w, cols
):
    """Returns (w, whether an allowed weight is not finite). ``original`` = (num, cat, leaf):
    the partition's encoded values and hierarchy leaves; ``published`` = (lo, hi, member,
    offsets, rep, level): the published cells (bounds, the membership matrices stacked with
    each attribute's column offset, hierarchy node as leaf and level); ``scales`` =
    (num_scale, cat_scale): the NCP weights; ``trees`` = (is_tree, anc, leaf_off, count,
    node_off): the hierarchy tables of ``TreeTables``; ``forbidden`` entries cost ``big``."""
    num, cat, leaf = original
    lo, hi, member, offsets, rep, level = published
    num_scale, cat_scale = scales
    is_tree, anc, leaf_off, count, node_off = trees
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    lo_t, hi_t = np.ascontiguousarray(lo.T), np.ascontiguousarray(hi.T)
    width_t = hi_t - lo_t
    member_t = np.ascontiguousarray(member.T)
    rep_t, level_t = np.ascontiguousarray(rep.T), np.ascontiguousarray(level.T)
    p = lo_t.shape[1]  # published records: the columns ``cols`` of w
    row = np.empty(p)
    bad = False
    for i in range(m):
        row[:] = 0.0
        for a in range(dn):  # attributes in the same order and arithmetic as Doka eq. 1–2
            if num_scale[a] != 0:
                v, scale = num[i, a], num_scale[a]
                low, high, width = lo_t[a], hi_t[a], width_t[a]
                for j in range(p):
                    row[j] += ((max(high[j], v) - min(low[j], v)) - width[j]) * scale
        for a in range(dc):
            if cat_scale[a] == 0:
                continue
            if is_tree[a]:
                x = leaf_off[a] + leaf[i, a]
                for j in range(p):
                    r = leaf_off[a] + rep_t[a, j]
                    lv = level_t[a, j]
                    now = anc[r, lv]
                    while anc[x, lv] != anc[r, lv]:
                        lv += 1
                    grown = count[node_off[a] + anc[r, lv]] - count[node_off[a] + now]
                    row[j] += grown * cat_scale[a]
            else:
                has, scale = member_t[offsets[a] + cat[i, a]], cat_scale[a]
                for j in range(p):
                    if not has[j]:
                        row[j] += scale
        bad |= _store_row(w, i, row, cols, forbidden, big)
    return bad
