"""(k,ℓ)-anonymization of wide tables by global generalization — the hypergraph algorithm of
Stokes' slides ("Computational anonymity and some combinatorics", §2; Stokes, PSD 2012).

The table T is a hypergraph H(T): its points are sets of ℓ entries (attribute, value), its edges
are the records; the degree of a point is the number of records holding those ℓ entries, and T
is (k,ℓ)-anonymous iff no point has degree in (0, k). The algorithm:

    while some point p has 0 < deg(p) < k:
        choose q minimizing d(N(p), N(q))      (N = multiset of what the records of p also hold)
        generalize values globally so that p and q become one point p ∨ q

Generalization is global recoding: every attribute's values are partitioned into groups — value
sets for categorical attributes (``brown|blond``), contiguous ranges for numeric ones — and a
record's cell is the group of its value. Merging only coarsens, so a point's degree never falls;
the levels s = 1 … ℓ are processed in turn (a (k,s−1)-anonymous table only has rare s-points
whose sub-points are all frequent) and within a level the attribute subsets in lexicographic
order, the rarest point first.

Departures from the slides, for tractability (each is also stated where it happens):
* candidate points q: those differing from p in exactly one attribute a (the slides' own
  example, hair colour brown vs blond). One always exists: p's sub-point without a is frequent
  (≥ k records), p has < k, so some record agrees with p off a and differs on a. For a numeric a
  only the nearest lower and higher range are candidates (merging distant ranges would swallow
  the ranges between).
* the neighbourhood N(p) is the multiset of single entries (attribute, group) of the other
  attributes over p's records — the projection of the slides' multiset of ℓ-sets onto 1-sets —
  and d is the size of the multiset symmetric difference, Σ_x |N_p(x) − N_q(x)|.
* the slides choose q by neighbourhood distance alone. Across the attributes of p that would,
  e.g., merge sex = Male|Female to repair one rare combination of a near-unique attribute, so
  the neighbourhood distance chooses q within each attribute and, across attributes, the merge
  that adds the least GCP (Doka eq. 3 scaling) is made, the distance breaking ties.
* order: levels 1 … ℓ, attribute subsets in lexicographic order, within a subset the rarest
  point first; a point still rare after one merge is treated again at once (p ∨ q becomes the
  new p). (Processing all rare points of a level globally rarest-first was tried on Adult: GCP
  within 0.5 points, 3× slower.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import scipy.sparse as sp

from anonymatch.core.counting import check_k, check_level, combo_ids
from anonymatch.core.errors import InfeasibleError
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods._partition import segment_ranges
from anonymatch.tables.recode import GeneralizedQI

_log = logging.getLogger(__name__)


@dataclass
class GlobalRecoding:
    """A global generalization of a table: for each attribute (in ``qi.names`` order), the group
    (representative raw code) of each raw value code. ``raw`` are the raw codes (n × d): the
    numeric attributes' ranks among their sorted distinct values, the categorical codes.
    ``values`` holds each numeric attribute's sorted distinct values (None for categorical)."""

    names: tuple[str, ...]
    numeric: np.ndarray  # (d,) bool
    raw: np.ndarray  # (n, d) int64
    group_of: list[np.ndarray]  # per attribute: raw code -> group id (smallest code of the group)
    values: list[np.ndarray | None]
    merges: int = 0

    @property
    def codes(self) -> np.ndarray:
        """Current group ids (n × d)."""
        return np.column_stack([g[self.raw[:, a]] for a, g in enumerate(self.group_of)])

    def n_groups(self) -> list[int]:
        return [len(np.unique(g)) for g in self.group_of]


def _raw_codes(qi: EncodedQI) -> GlobalRecoding:
    num_pos = {name: a for a, name in enumerate(qi.num_names)}
    cat_pos = {name: a for a, name in enumerate(qi.cat_names)}
    cols, numeric, group_of = [], [], []
    values: list[np.ndarray | None] = []
    for name in qi.names:
        if name in num_pos:
            vals, inv = np.unique(qi.num[:, num_pos[name]], return_inverse=True)
            cols.append(inv.reshape(-1).astype(np.int64))
            numeric.append(True)
            values.append(vals)
            group_of.append(np.arange(len(vals), dtype=np.int64))
        else:
            a = cat_pos[name]
            cols.append(qi.cat[:, a].astype(np.int64))
            numeric.append(False)
            values.append(None)
            group_of.append(np.arange(int(qi.cat_card[a]), dtype=np.int64))
    n = qi.n
    raw = np.column_stack(cols) if cols else np.empty((n, 0), np.int64)
    return GlobalRecoding(qi.names, np.array(numeric, bool), raw, group_of, values)


class _State:
    """Mutable state of the table anonymizer: current group codes, per-attribute row index by
    raw code, counts per raw code and the GCP scale of each attribute."""

    def __init__(self, rec: GlobalRecoding, qi: EncodedQI) -> None:
        self.rec = rec
        self.cur = rec.codes
        n, d = self.cur.shape
        self.cards = np.array([len(g) for g in rec.group_of], np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.cards)[:-1]]).astype(np.int64)
        self.total = int(self.cards.sum())
        self.order = [np.argsort(rec.raw[:, a], kind="stable") for a in range(d)]
        self.count = [np.bincount(rec.raw[:, a], minlength=int(self.cards[a])) for a in range(d)]
        self.starts = [np.concatenate([[0], np.cumsum(c)]) for c in self.count]
        num_scale, cat_scale = qi.ncp_scales()
        pos_num = {name: j for j, name in enumerate(qi.num_names)}
        pos_cat = {name: j for j, name in enumerate(qi.cat_names)}
        self.scale = np.array(
            [
                num_scale[pos_num[name]] if name in pos_num else cat_scale[pos_cat[name]]
                for name in rec.names
            ]
        )

    def group_end(self, a: int, g: int) -> int:
        """Last raw code of numeric group g (groups are contiguous code ranges)."""
        groups = self.rec.group_of[a]
        e = g
        while e + 1 < len(groups) and groups[e + 1] == g:
            e += 1
        return e

    def merge_cost(self, a: int, g1: int, g2: int) -> float:
        """GCP (summed over records, Doka eq. 3 scaling) that merging g1 and g2 adds."""
        rec = self.rec
        groups = rec.group_of[a]
        count = self.count[a]
        if rec.numeric[a]:
            vals = rec.values[a]
            assert vals is not None
            lo, end = min(g1, g2), self.group_end(a, max(g1, g2))
            sl = groups[lo : end + 1]
            change = np.flatnonzero(np.diff(sl)) + 1
            seg_start = np.concatenate([[0], change])
            seg_end = np.concatenate([change, [len(sl)]]) - 1
            width = vals[lo + seg_end] - vals[lo + seg_start]
            seg_count = np.add.reduceat(count[lo : end + 1], seg_start)
            new = vals[end] - vals[lo]
            return float(((new - width) * seg_count).sum() * self.scale[a])
        m1, m2 = groups == g1, groups == g2
        n1, n2 = int(count[m1].sum()), int(count[m2].sum())
        return float((n1 * int(m2.sum()) + n2 * int(m1.sum())) * self.scale[a])

    def merge(self, a: int, g1: int, g2: int) -> None:
        """Merge groups g1 and g2 of attribute a globally (numeric: the range hull) and update
        the current codes of the records concerned. O(|A| + records changed)."""
        rec = self.rec
        groups = rec.group_of[a]
        lo = min(g1, g2)
        if rec.numeric[a]:
            end = self.group_end(a, max(g1, g2))
            groups[lo : end + 1] = lo
            rows = self.order[a][self.starts[a][lo] : self.starts[a][end + 1]]
        else:
            hi = max(g1, g2)
            groups[groups == hi] = lo
            rows = np.flatnonzero(self.cur[:, a] == hi)
        self.cur[rows, a] = lo
        rec.merges += 1

    def numeric_rows(self, a: int, lo_code: int, end: int) -> np.ndarray:
        return self.order[a][self.starts[a][lo_code] : self.starts[a][end + 1]]


def _best_merge(state: _State, subset: tuple[int, ...], point: np.ndarray) -> tuple[int, int]:
    """The (attribute, group) to merge p's value with. Within each attribute a of p, the
    candidate q of least neighbourhood distance (module docstring); across attributes, the merge
    that adds the least GCP, then the least distance. O(r·d log(r·d)) for the r records agreeing
    with p off a (numeric a at level 1: only p's and its two neighbour ranges' records)."""
    cur, rec = state.cur, state.rec
    n, d = cur.shape
    others = np.array([b for b in range(d) if b not in subset], np.int64)
    best: tuple[float, float, int, int, int] | None = None
    for i, a in enumerate(subset):
        pa = int(point[i])
        if len(subset) == 1 and rec.numeric[a]:
            groups = rec.group_of[a]
            end = state.group_end(a, pa)
            cand_l = [int(groups[pa - 1])] if pa > 0 else []
            cand_r = [end + 1] if end + 1 < len(groups) else []
            cand = np.array(cand_l + cand_r, np.int64)
            if not len(cand):
                continue
            lo_code = int(cand[0]) if cand_l else pa
            hi_end = state.group_end(a, int(cand[-1])) if cand_r else end
            rows = state.numeric_rows(a, lo_code, hi_end)
            vals = cur[rows, a]
        else:
            agree = np.ones(n, bool)
            for j, b in enumerate(subset):
                if j != i:
                    agree &= cur[:, b] == point[j]
            rows = np.flatnonzero(agree)
            vals = cur[rows, a]
            cand = np.unique(vals[vals != pa])
            if not len(cand):
                continue
            if rec.numeric[a]:
                below, above = cand[cand < pa], cand[cand > pa]
                cand = np.array(
                    ([below.max()] if len(below) else []) + ([above.min()] if len(above) else []),
                    np.int64,
                )
                keep = np.isin(vals, cand) | (vals == pa)
                rows, vals = rows[keep], vals[keep]
        # slot 0 = p, slots 1.. = candidates
        slot = np.searchsorted(cand, vals) + 1
        slot[vals == pa] = 0
        deg = np.bincount(slot, minlength=len(cand) + 1)
        if len(others) and len(rows) * len(others) <= 50_000:
            # few records: one sort of (slot, entry) keys
            total = state.total
            entries = (cur[rows][:, others] + state.offsets[others]).reshape(-1)
            key = np.repeat(slot, len(others)) * total + entries
            ukey, kcnt = np.unique(key, return_counts=True)
            kslot, kent = ukey // total, ukey % total
            on_p = kslot == 0
            p_ent, p_cnt = kent[on_p], kcnt[on_p]
            pos = np.minimum(np.searchsorted(p_ent, kent[~on_p]), len(p_ent) - 1)
            hit = p_ent[pos] == kent[~on_p]
            shared = np.bincount(
                kslot[~on_p][hit].astype(np.int64),
                weights=np.minimum(kcnt[~on_p][hit], p_cnt[pos[hit]]),
                minlength=len(cand) + 1,
            )
            dist = (deg[0] + deg[1:]) * len(others) - 2 * shared[1:]
        elif len(others):
            # many records: shared[q] = Σ_x min(c_p(x), c_q(x)) over the entries x of p's
            # records, one attribute at a time (p has < k records: few values per attribute)
            pmask = slot == 0
            shared = np.zeros(len(cand) + 1, np.float64)
            for b in others.tolist():
                col = cur[rows, b]
                pv, pc = np.unique(col[pmask], return_counts=True)
                pos = np.minimum(np.searchsorted(pv, col), len(pv) - 1)
                hit = pv[pos] == col
                cnt = np.bincount(
                    slot[hit] * len(pv) + pos[hit], minlength=(len(cand) + 1) * len(pv)
                ).reshape(len(cand) + 1, len(pv))
                shared += np.minimum(cnt, pc[None, :]).sum(axis=1)
            dist = (deg[0] + deg[1:]) * len(others) - 2 * shared[1:]
        else:
            dist = np.zeros(len(cand))
        # within the attribute: least distance, then the smaller q, then the lower group id
        c = int(np.lexsort((cand, deg[1:], dist))[0])
        q = int(cand[c])
        cost = state.merge_cost(a, pa, q)
        score = (cost, float(dist[c]), int(deg[1 + c]), i, q)
        if best is None or score < best:
            best = score
    if best is None:  # cannot happen once the lower levels are anonymous (see docstring)
        raise InfeasibleError("no point to merge a rare combination with")
    return subset[best[3]], best[4]


def _repair(
    state: _State,
    k: int,
    subset: tuple[int, ...],
    rows: np.ndarray,
    ids: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Merge until none of the points held by the records ``rows`` on ``subset`` has a degree
    in (0, k). A record's current combination *is* its point after any merges, so a point's
    degree is read from the combination counts, recomputed (O(n·s)) only after a merge — the
    cost is O((merges + 1)·n·s + |rows|), not O(|rows|·n·s)."""
    cur = state.cur
    cols = list(subset)
    cards = [int(c) for c in state.cards[cols]]
    for r in rows.tolist():
        while True:
            deg = int(counts[ids[r]])
            if deg >= k:
                break
            point = cur[r, cols].copy()
            a, q = _best_merge(state, subset, point)
            state.merge(a, int(point[subset.index(a)]), q)
            ids, counts = combo_ids(cur[:, cols], cards)


def kl_anonymize(
    qi: EncodedQI,
    k: int,
    level: int,
    progress: Callable[[str], None] | None = None,
) -> GlobalRecoding:
    """Global generalization of ``qi`` that is (k, ``level``)-anonymous (module docstring).

    Raises InputError on bad k/ℓ, InfeasibleError if k > n.
    Complexity: per merge O(r·d log(r·d)) for the r records agreeing with the rare point off one
    attribute (≤ n); per attribute subset one O(n log n) count; C(d,1)+…+C(d,ℓ) subsets.
    Memory O(n·d).
    Reference: Stokes, slides §2 "Algorithm" (hypergraph H(T), merge p with the q of closest
    neighbourhood); Stokes, PSD 2012.
    """
    k = check_k(k)
    level = check_level(level, len(qi.names))
    n = qi.n
    if k > n:
        raise InfeasibleError(f"infeasible: k = {k} is larger than the number of rows ({n})")
    rec = _raw_codes(qi)
    state = _State(rec, qi)
    cur = state.cur
    d = cur.shape[1]
    for s in range(1, level + 1):
        for subset in combinations(range(d), s):
            cols = list(subset)
            ids, counts = combo_ids(cur[:, cols], [int(c) for c in state.cards[cols]])
            rare = np.flatnonzero(counts < k)
            if not len(rare):
                continue
            (progress or _log.info)(f"level {s}, attributes {subset}: {len(rare)} rare points")
            first = np.full(len(counts), -1, np.int64)
            first[ids[::-1]] = np.arange(n)[::-1]
            order = rare[np.argsort(counts[rare], kind="stable")]
            _repair(state, k, subset, first[order], ids, counts)  # rarest point first
    return rec


def generalized_cells(rec: GlobalRecoding, qi: EncodedQI) -> GeneralizedQI:
    """Published cells of a global recoding: numeric ranges [lowest, highest value of the
    group], categorical sets = the group's values. O(n·d + Σ cell sizes)."""
    n = qi.n
    pos = {name: a for a, name in enumerate(rec.names)}
    dn, dc = len(qi.num_names), len(qi.cat_names)
    lo, hi = np.empty((n, dn)), np.empty((n, dn))
    for j, name in enumerate(qi.num_names):
        a = pos[name]
        groups = rec.group_of[a]
        vals = rec.values[a]
        assert vals is not None
        last = np.zeros(len(groups), np.int64)
        np.maximum.at(last, groups, np.arange(len(groups)))
        g = groups[rec.raw[:, a]]
        lo[:, j], hi[:, j] = vals[g], vals[last[g]]
    sets = []
    for name in qi.cat_names:
        a = pos[name]
        groups = rec.group_of[a]
        members = np.argsort(groups, kind="stable")
        starts = np.searchsorted(groups[members], groups)  # start of each code's group
        sizes = np.bincount(groups, minlength=len(groups))[groups]
        g_start, g_size = starts[rec.raw[:, a]], sizes[rec.raw[:, a]]
        idx = members[segment_ranges(g_start, g_size)]
        ptr = np.concatenate([[0], np.cumsum(g_size)])
        m = sp.csr_array((np.ones(len(idx), np.int8), idx, ptr), shape=(n, len(groups)))
        m.sort_indices()
        sets.append(m)
    return GeneralizedQI(lo, hi, np.zeros((n, dn), bool), tuple(sets), np.zeros((n, dc), bool))


# --------------------------------------------------------------------------------------------
# transactions (k^m)
