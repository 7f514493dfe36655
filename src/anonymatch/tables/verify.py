"""Independent verification of a table release: from the published cells and the original QIs.

It never sees the internal graph. It rebuilds the compatibility graph an attacker would build
(original i is compatible with published row j iff every published cell of j contains i's value,
``*`` containing everything) and checks that this graph has a k-factor — k disjoint perfect
matchings, i.e. a k-regular spanning subgraph — by maximum flow. That is the condition under
which the release can be k-anonymous in the nonreciprocal sense (Doka §2.2, §3; Wong et al.).

This module supplies the tables' compatibility to the attacker's view (:func:`attacker_view`,
``core.view.AttackerView``), which decides the k-factor and the candidates for every check.

Scaling: identical originals are merged into one node with a multiplicity, and so are identical
published rows (``recode.published_groups``; the k-factor check then runs on the contracted
transportation network, which has the same maximum flow — docs/guarantees/freeform.md, "Identical
published rows are contracted too"); candidate pairs come
from two indexes, whichever admits fewer originals for a published row: per-attribute indexes
(sorted values for numeric QIs, value buckets for categorical ones: the originals allowed by its
most selective cell), and a lexicographic prefix index over all attributes at once (the unique
originals sorted on their attributes from fewest to most distinct values; the row's cells cut
that order into the ranges that agree with it on the first attributes, ``_prefix_ranges``). Every
candidate is then checked on all cells, so no n × n structure is ever built. Published rows are
independent: they are processed in slices on a thread pool (the kernel runs without the GIL). On
Adult (k = 10, in-memory release) the prefix index cut this step from 13.5 s to 0.45 s.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.runner import default_workers
from anonymatch.core.view import AttackerView, group_rows
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.recode import GeneralizedQI, cat_nodes, published_groups


@dataclass(frozen=True)
class VerificationReport:
    """Outcome of ``verify``. ``passed`` iff the row counts agree (or ``suppressed`` people, within
    the suppression limit, are missing from the release) and a k-factor exists (and, when
    sensitive models were checked, every one of ``sensitive`` passed)."""

    passed: bool
    k: int
    n_original: int
    n_published: int
    min_matches_original: int
    min_matches_published: int
    k_factor_flow: int
    k_factor_required: int
    compatible_pairs: int
    reason: str
    sensitive: tuple[dict[str, object], ...] = ()
    suppressed: int = 0

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["sensitive"] = list(self.sensitive)
        return out


@njit(cache=True, nogil=True)
def _lower(col, s, e, x):  # pragma: no cover - compiled
    """First position p in [s, e) with col[p] ≥ x (col sorted on [s, e))."""
    while s < e:
        mid = (s + e) >> 1
        if col[mid] < x:
            s = mid + 1
        else:
            e = mid
    return s


@njit(cache=True, nogil=True)
def _upper(col, s, e, x):  # pragma: no cover - compiled
    """First position p in [s, e) with col[p] > x (col sorted on [s, e))."""
    while s < e:
        mid = (s + e) >> 1
        if col[mid] <= x:
            s = mid + 1
        else:
            e = mid
    return s


@njit(cache=True, nogil=True)
def _prefix_ranges(j, levels, ranks, stars, sets, ranges, scratch):  # pragma: no cover
    """Ranges of the lexicographically sorted unique originals that agree with published row j
    on the first attributes of the level order (an index over all attributes at once, like a
    trie): level by level, every range is split into the values j's cell allows; a numeric level
    whose split would exceed the buffers narrows each range to the allowed interval instead and
    ends the descent, as does any other overflowing level (its ranges are then kept unsplit).
    ``levels`` = (lvl, lvl_kind, lvl_attr) and ``ranks`` = (rank_lo, rank_hi) are parts of the
    index of ``_prefix_index``; ``stars`` = (num_star, cat_star) and ``sets`` = (set_ptr,
    set_idx) parts of the published cells (as in ``_compatible_pairs``); ``ranges`` = (rs, re)
    the buffers of range starts/ends and ``scratch`` = (bs, be) working buffers of the same
    size. Returns the number of ranges, held in ``rs``/``re``. O(ranges · log U) per level."""
    lvl, lvl_kind, lvl_attr = levels
    rank_lo, rank_hi = ranks
    num_star, cat_star = stars
    set_ptr, set_idx = sets
    rs, re = ranges
    bs, be = scratch
    cap = rs.shape[0]
    n_r = 1
    rs[0] = 0
    re[0] = lvl.shape[1]
    for t in range(lvl.shape[0]):
        col = lvl[t]
        a = lvl_attr[t]
        m = 0
        overflow = False
        if lvl_kind[t] == 0:
            star = num_star[j, a]
            a_lo = rank_lo[j, a]
            a_hi = rank_hi[j, a]
            for r in range(n_r):
                p = rs[r] if star else _lower(col, rs[r], re[r], a_lo)
                e = re[r]
                while p < e and (star or col[p] <= a_hi):
                    q = _upper(col, p, e, col[p])
                    if m == cap:
                        overflow = True
                        break
                    bs[m] = p
                    be[m] = q
                    m += 1
                    p = q
                if overflow:
                    break
            if overflow:  # one contiguous interval per range; no further descent
                if star:
                    return n_r
                m = 0
                for r in range(n_r):
                    p = _lower(col, rs[r], re[r], a_lo)
                    q = _upper(col, p, re[r], a_hi)
                    if q > p:
                        rs[m] = p
                        re[m] = q
                        m += 1
                return m
        else:
            star = cat_star[j, a]
            for r in range(n_r):
                s, e = rs[r], re[r]
                if star:
                    p = s
                    while p < e:
                        q = _upper(col, p, e, col[p])
                        if m == cap:
                            overflow = True
                            break
                        bs[m] = p
                        be[m] = q
                        m += 1
                        p = q
                else:
                    for x in range(set_ptr[a, j], set_ptr[a, j + 1]):
                        code = set_idx[x]
                        p = _lower(col, s, e, code)
                        q = _upper(col, p, e, code)
                        if q > p:
                            if m == cap:
                                overflow = True
                                break
                            bs[m] = p
                            be[m] = q
                            m += 1
                if overflow:
                    break
            if overflow:
                return n_r
        for r in range(m):
            rs[r] = bs[r]
            re[r] = be[r]
        n_r = m
        if n_r == 0:
            return 0
    return n_r


@njit(cache=True, nogil=True)
def _most_selective(j, bounds, stars, sets, set_off, attr_index, stamp, n_u):  # pragma: no cover
    """Mark the labels of published row ``j``'s categorical cells in ``stamp`` (for the tests
    of :func:`_compatible_of`) and choose the cell whose compatible originals are fewest, the
    candidate source: returns (kind, attribute, count, first) — kind 0 a numeric cell (a run of
    ``num_order`` from ``first``), 1 a categorical cell (its label buckets), -1 none (every
    cell ``*``: count = ``n_u``). O(d log n_u + size of j's sets)."""
    lo, hi = bounds
    num_star, cat_star = stars
    set_ptr, set_idx = sets
    _, num_sorted, cat_ptr, _, cat_off = attr_index
    dn, dc = num_star.shape[1], cat_star.shape[1]
    for a in range(dc):
        if not cat_star[j, a]:
            for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
                stamp[set_off[a] + set_idx[p]] = j
    best_kind, best_a, best_count, best_lo = -1, -1, n_u + 1, 0
    for a in range(dn):
        if num_star[j, a]:
            continue
        s = _lower(num_sorted[a], 0, n_u, lo[j, a])
        t = _upper(num_sorted[a], 0, n_u, hi[j, a])
        if t - s < best_count:
            best_kind, best_a, best_count, best_lo = 0, a, t - s, s
    for a in range(dc):
        if cat_star[j, a]:
            continue
        c = 0
        for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
            code = set_idx[p]
            if code < cat_off[a + 1] - cat_off[a]:
                c += cat_ptr[cat_off[a] + code + 1] - cat_ptr[cat_off[a] + code]
        if c < best_count:
            best_kind, best_a, best_count = 1, a, c
    if best_kind == -1:
        best_count = n_u
    return best_kind, best_a, best_count, best_lo


@njit(cache=True, nogil=True)
def _compatible_pairs(j0, j1, originals, cells, attr_index, prefix):  # pragma: no cover
    """All (unique original u, published j) compatible pairs for j in [j0, j1): the u of every
    pair, row j's after row j − 1's, and each row's number of pairs (:func:`_compatible_of`
    row by row; issue 38: int64 u only, no per-pair j, at millions of pairs the verifier's
    peak memory). The arrays travel in the four groups of :func:`_compatible_of`."""
    work, found = _work_buffers(originals, cells), np.empty(256, np.int64)
    cap = max(16, 4 * (j1 - j0))
    out_u = np.empty(cap, np.int64)
    per_row = np.zeros(j1 - j0, np.int64)
    size = 0
    for j in range(j0, j1):
        count, found = _compatible_of(j, originals, cells, attr_index, prefix, work, found)
        if size + count > cap:
            cap = max(2 * cap, size + count)
            out_u = _grow(out_u, cap)
        for t in range(count):
            out_u[size + t] = found[t]
        size += count
        per_row[j - j0] = count
    return out_u[:size].copy(), per_row


@njit(cache=True, nogil=True)
def _work_buffers(originals, cells):  # pragma: no cover - compiled
    """The working arrays of :func:`_compatible_of` for one thread: the label stamps (−1:
    none), the range buffers of :func:`_prefix_ranges` (256 ranges) and the row's tests
    (numeric attribute and bounds, categorical attribute and label offset)."""
    unum, ucat = originals
    set_off = cells[6]
    # Plain loops instead of np.full: numba compiles it with its shape/argument error paths
    # (string formatting), which had tripled the first-run compile time of the listing.
    stamp = np.empty(set_off[-1], np.int64)
    for x in range(stamp.shape[0]):
        stamp[x] = -1
    n_cap = 256
    ranges = (np.empty(n_cap, np.int64), np.empty(n_cap, np.int64))
    scratch = (np.empty(n_cap, np.int64), np.empty(n_cap, np.int64))
    dn, dc = unum.shape[1], ucat.shape[1]
    tests = (
        np.empty(dn, np.int64),
        np.empty(dn, np.float64),
        np.empty(dn, np.float64),
        np.empty(dc, np.int64),
        np.empty(dc, np.int64),
    )
    return stamp, ranges, scratch, tests


@njit(cache=True, nogil=True)
def _compatible_of(j, originals, cells, attr_index, prefix, work, found):  # pragma: no cover
    """The unique originals compatible with published row ``j``: returns (count, found) with
    them in ``found[:count]`` (``found`` grown when too short). The one candidate search of
    the verifier and of the population figures.

    Candidates come from the smaller of two indexes: the originals allowed by j's most
    selective single cell (:func:`_most_selective`), or the ranges of :func:`_prefix_ranges`;
    every candidate is then tested on all of j's cells that are not ``*`` — a numeric value
    inside its cell, a label in its set (``stamp``), a missing value (numeric +inf,
    categorical −1) fitting only ``*``. The tests are laid out once per row in ``work`` and
    run in one loop here: read per candidate from the 2-D cells, through a called function,
    they took 70 % of the verifier's pair listing (issue 38).

    The arrays travel in groups: ``originals`` = (unum, ucat), the unique original values;
    ``cells`` = (lo, hi, num_star, cat_star, set_ptr, set_idx, set_off), the published cells
    (numeric bounds, stars, categorical label sets as per-attribute CSR rows into one flat
    index, and each attribute's offset in the label space); ``attr_index`` = (num_order,
    num_sorted, cat_ptr, cat_members, cat_off), the per-attribute index (sorted values per
    numeric QI, buckets per label); ``prefix`` = (lvl, lvl_kind, lvl_attr, lvl_perm, rank_lo,
    rank_hi), the prefix index of ``_prefix_index``; ``work`` = :func:`_work_buffers`.
    O(d log U + candidates · d)."""
    unum, ucat = originals
    lo, hi, num_star, cat_star, set_ptr, set_idx, set_off = cells
    num_order, _, cat_ptr, cat_members, cat_off = attr_index
    lvl, lvl_kind, lvl_attr, lvl_perm, rank_lo, rank_hi = prefix
    stamp, ranges, scratch, tests = work
    num_a, num_lo, num_hi, cat_a, cat_base = tests
    rs, re = ranges
    # The hot callees get narrow groups holding only what they read: passing them the whole
    # ``cells``/``prefix`` tuples made the listing 13% slower (CPU time on Adult, k = 10).
    bounds, stars = (lo, hi), (num_star, cat_star)
    levels, ranks, sets = (lvl, lvl_kind, lvl_attr), (rank_lo, rank_hi), (set_ptr, set_idx)
    n_u = unum.shape[0]
    best_kind, best_a, best_count, best_lo = _most_selective(
        j, bounds, stars, sets, set_off, attr_index, stamp, n_u
    )
    n_r = _prefix_ranges(j, levels, ranks, stars, sets, ranges, scratch)
    total = 0
    for r in range(n_r):
        total += re[r] - rs[r]
    if min(total, best_count) > found.shape[0]:
        found = np.empty(max(min(total, best_count), 2 * found.shape[0]), np.int64)
    c = 0
    if total < best_count:
        for r in range(n_r):
            for p in range(rs[r], re[r]):
                found[c] = lvl_perm[p]
                c += 1
    elif best_kind == 1:  # the buckets of the chosen categorical cell
        a = best_a
        for p in range(set_ptr[a, j], set_ptr[a, j + 1]):
            code = set_idx[p]
            if code >= cat_off[a + 1] - cat_off[a]:
                continue
            base = cat_off[a] + code
            for q in range(cat_ptr[base], cat_ptr[base + 1]):
                found[c] = cat_members[q]
                c += 1
    else:
        for q in range(best_count):
            found[c] = num_order[best_a, best_lo + q] if best_kind == 0 else q
            c += 1
    n_num = 0
    for a in range(num_star.shape[1]):
        if not num_star[j, a]:
            num_a[n_num], num_lo[n_num], num_hi[n_num] = a, lo[j, a], hi[j, a]
            n_num += 1
    n_cat = 0
    for a in range(cat_star.shape[1]):
        if not cat_star[j, a]:
            cat_a[n_cat], cat_base[n_cat] = a, set_off[a]
            n_cat += 1
    kept = 0
    for t in range(c):
        u = found[t]
        fits = True
        for x in range(n_num):
            v = unum[u, num_a[x]]
            if v == np.inf or v < num_lo[x] or v > num_hi[x]:
                fits = False
                break
        if fits:
            for x in range(n_cat):
                code = ucat[u, cat_a[x]]
                if code < 0 or stamp[cat_base[x] + code] != j:
                    fits = False
                    break
        if fits:
            found[kept] = u
            kept += 1
    return kept, found


@njit(cache=True, nogil=True)
def _grow(a, cap):  # pragma: no cover - compiled
    # np.int64 as in the caller's own allocations: one np.empty overload to compile, not two
    b = np.empty(cap, np.int64)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


def _prefix_index(
    unum: np.ndarray,
    ucat: np.ndarray,
    card: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    num_star: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """The index of ``_prefix_ranges``: the unique originals sorted lexicographically on their
    attributes in increasing order of distinct values (numeric values as dense ranks), the
    sorted codes level by level, and each published row's allowed rank interval per numeric
    attribute. O(U·d log U + n·d log U)."""
    n_u, dn = unum.shape
    dc = ucat.shape[1]
    codes, sizes, kinds, attrs = [], [], [], []
    rank_lo = np.zeros((lo.shape[0], dn), np.int64)
    rank_hi = np.zeros((lo.shape[0], dn), np.int64)
    for a in range(dn):
        values = np.unique(unum[:, a])
        codes.append(np.searchsorted(values, unum[:, a]).astype(np.int64))
        sizes.append(len(values))
        kinds.append(0)
        attrs.append(a)
        with np.errstate(invalid="ignore"):
            rank_lo[:, a] = np.searchsorted(values, lo[:, a], side="left")
            rank_hi[:, a] = np.searchsorted(values, hi[:, a], side="right") - 1
        rank_lo[num_star[:, a], a] = 0
        rank_hi[num_star[:, a], a] = len(values) - 1
    for b in range(dc):
        codes.append(ucat[:, b].astype(np.int64))
        sizes.append(int(card[b]))
        kinds.append(1)
        attrs.append(b)
    level = np.argsort(np.array(sizes, dtype=np.int64), kind="stable")
    if len(level):
        perm = np.lexsort([codes[t] for t in level[::-1]]).astype(np.int64)
        lvl = np.ascontiguousarray(np.stack([codes[t][perm] for t in level]))
    else:
        perm = np.arange(n_u, dtype=np.int64)
        lvl = np.zeros((0, n_u), np.int64)
    return (
        lvl,
        np.array([kinds[t] for t in level], dtype=np.int64),
        np.array([attrs[t] for t in level], dtype=np.int64),
        perm,
        rank_lo,
        rank_hi,
    )


def attacker_view(published: GeneralizedQI, original: EncodedQI) -> AttackerView:
    """The attacker's view of a table release (``core.view.AttackerView``): the unique
    original QI vectors (``core.view.group_rows`` of the encoded keys) × the groups of
    identical published rows (:func:`published_groups`), compatible iff every published cell
    contains the original's value.

    A missing original value is compatible only with a suppressed cell
    (docs/guarantees/missing.md); a present one with ``*`` or a cell containing it. The
    candidate search and the checks run once per distinct published row. Within
    ``io.reuse.reuse_parsed_release`` the view (and what it computed) is shared by every check
    of the same release and original.

    Parameters
    ----------
    published : GeneralizedQI
        The published cells.
    original : EncodedQI
        The original's encoded QIs.

    Returns
    -------
    AttackerView

    Notes
    -----
    Time O(Σ_g |candidates(g)| · d + n·d log n) with candidates(g) the originals allowed by
    g's most selective cell or prefix ranges; memory O(U·d + pairs between groups).

    References
    ----------
    Doka et al., ASIA CCS 2015, §2.2 (compatibility of an original with a generalized row).
    """
    from anonymatch.tables.io.reuse import cached, compatibility_key

    def compute() -> AttackerView:
        reps, group, mult = published_groups(published)
        distinct = published if len(reps) == published.n else published.take(reps)
        c, counts, inverse = _compatibility(distinct, original)
        return AttackerView.build(c, counts, inverse, mult, group)

    return cached(lambda: compatibility_key(published, original), compute)


def flat_sets(
    published: GeneralizedQI, card: np.ndarray, attrs: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The published categorical cells as the kernels read them: one flat array of label
    codes, per-attribute row pointers into it (``set_ptr``, shape (d_cat, n + 1)) and each
    attribute's offset in a label-stamp array (``set_off``, widths at least ``card``, the
    original's cardinalities). ``attrs``: only these categorical attributes, in this order
    (``card`` then holds theirs). O(size of the sets)."""
    attrs = list(range(len(published.cat_sets))) if attrs is None else attrs
    dc, n_pub = len(attrs), published.n
    set_ptr = np.zeros((dc, n_pub + 1), np.int64)
    widths, flat, base = [], [], 0
    for a, b in enumerate(attrs):
        sets = published.cat_sets[b]
        set_ptr[a] = sets.indptr + base
        flat.append(sets.indices.astype(np.int64))
        base += len(sets.indices)
        widths.append(max(int(sets.shape[1]), int(card[a])))
    set_idx = np.concatenate(flat) if flat else np.empty(0, np.int64)
    set_off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    return set_ptr, set_idx, set_off


@dataclass(frozen=True)
class KernelCells:
    """What the compatibility kernel reads of the unique originals and the published cells,
    with the categorical attributes that publish hierarchy nodes moved to the numeric side:
    ``unum``/``lo``/``hi``/``num_star`` the numeric values, bounds and stars followed by one
    column per node attribute (a value's depth-first leaf rank, +inf when missing; a node's
    rank interval, ``Hierarchy.spans``), ``ucat``/``card``/``cat_star`` the other categorical
    attributes and ``sets`` their indices among the published categorical cells."""

    unum: np.ndarray
    ucat: np.ndarray
    card: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    num_star: np.ndarray
    cat_star: np.ndarray
    sets: list[int]

    @classmethod
    def build(cls, published: GeneralizedQI, original: EncodedQI, uniq: np.ndarray) -> KernelCells:
        """Node cells as ranges over the leaves numbered depth first: a value is in a node
        iff its leaf's rank lies in the node's interval [lo, hi), so the numeric path of the
        kernel checks them and no node is expanded into its leaves. O(U·d + n·d) time and
        memory, plus O(N·L) once per hierarchy of N leaves and L levels."""
        dn = original.num.shape[1]
        unum = uniq[:, :dn]
        ucat = uniq[:, dn:].astype(np.int64)
        card = original.cat_card.astype(np.int64)
        lo, hi, num_star = published.num_lo, published.num_hi, published.num_star
        nodes = [cat_nodes(published, a) for a in range(ucat.shape[1])]
        kept = [a for a, x in enumerate(nodes) if x is None]
        if len(kept) < len(nodes):
            ranks, los, his = [unum], [lo], [hi]
            for a, x in enumerate(nodes):
                if x is None:
                    continue
                code = ucat[:, a]
                leaf = np.where(code >= 0, x.tree.rank[np.maximum(code, 0)], 0)
                ranks.append(np.where(code >= 0, leaf, np.inf).reshape(-1, 1))
                start, stop = x.tree.spans
                live = x.nodes >= 0  # a suppressed cell (−1) is starred: bounds unread
                node = np.where(live, x.nodes, 0)
                los.append(np.where(live, start[node], 0).astype(float).reshape(-1, 1))
                his.append(np.where(live, stop[node] - 1, 0).astype(float).reshape(-1, 1))
            unum, lo, hi = np.hstack(ranks), np.hstack(los), np.hstack(his)
            moved = [a for a, x in enumerate(nodes) if x is not None]
            num_star = np.hstack([num_star, published.cat_star[:, moved]])
        return cls(
            np.ascontiguousarray(unum, dtype=np.float64),
            np.ascontiguousarray(ucat[:, kept]),
            card[kept],
            np.ascontiguousarray(lo, dtype=np.float64),
            np.ascontiguousarray(hi, dtype=np.float64),
            np.ascontiguousarray(num_star),
            np.ascontiguousarray(published.cat_star[:, kept]),
            kept,
        )


def _compatibility(
    published: GeneralizedQI, original: EncodedQI
) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
    keys = original.keys()  # missing: numeric +inf, categorical −1
    uniq, inverse, counts = group_rows(keys)
    kc = KernelCells.build(published, original, uniq)
    unum, ucat, card = kc.unum, kc.ucat, kc.card
    n_u, n_pub = len(uniq), published.n
    dc = ucat.shape[1]
    set_ptr, set_idx, set_off = flat_sets(published, card, kc.sets)
    # indexes over the unique originals: sorted values per numeric QI, buckets per label
    num_order = np.argsort(unum, axis=0, kind="stable").T.copy()
    num_sorted = np.take_along_axis(unum, num_order.T, axis=0).T.copy()
    cat_off = np.concatenate([[0], np.cumsum(card)]).astype(np.int64)
    bucket_ptr = np.zeros(int(cat_off[-1]) + 1, np.int64)
    members: list[np.ndarray] = []
    listed = 0
    for a in range(dc):
        present = ucat[:, a] >= 0  # missing values sit in no bucket: they match only ``*``
        sizes = np.bincount(ucat[present, a], minlength=int(card[a]))
        bucket_ptr[cat_off[a] + 1 : cat_off[a + 1] + 1] = np.cumsum(sizes) + listed
        listed += int(present.sum())
        by_code = np.argsort(ucat[:, a], kind="stable")
        members.append(by_code[present[by_code]])
    cat_members = np.concatenate(members) if members else np.empty(0, np.int64)
    lo, hi, num_star, cat_star = kc.lo, kc.hi, kc.num_star, kc.cat_star
    index = _prefix_index(unum, ucat, card, lo, hi, num_star)
    args = (
        (unum, ucat),
        (lo, hi, num_star, cat_star, set_ptr, set_idx, set_off),
        (num_order, num_sorted, bucket_ptr, cat_members.astype(np.int64), cat_off),
        index,
    )
    # Rows of the release are independent: slices on a thread pool (the kernel is nogil).
    bounds = np.linspace(0, n_pub, min(4 * default_workers(), max(1, n_pub // 2048)) + 1)
    slices = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    if len(slices) == 1:
        parts = [_compatible_pairs(0, n_pub, *args)]
    else:
        with ThreadPoolExecutor(max_workers=default_workers()) as pool:
            parts = list(pool.map(lambda ab: _compatible_pairs(ab[0], ab[1], *args), slices))
    # The slices come in order of published rows, each in increasing j: the pairs are laid
    # out column by column already, so they make a CSC matrix without a COO sort, and its CSR
    # conversion sorts every row (issue 38: int32 indices instead of two int64 lists and their
    # COO copies, at millions of pairs the peak memory of large-k runs; each slice's list
    # freed once copied).
    per_row = np.zeros(n_pub + 1, np.int64)
    rows = np.empty(sum(len(p[0]) for p in parts), np.int32 if n_u < 2**31 else np.int64)
    at = 0
    parts.reverse()
    for j0, j1 in slices:
        u, count = parts.pop()
        per_row[j0 + 1 : j1 + 1] = count
        rows[at : at + len(u)] = u
        at += len(u)
        del u, count
    indptr = np.cumsum(per_row)
    int_type = rows.dtype if at < 2**31 else np.int64
    by_col = sp.csc_array(
        (np.ones(at, np.int8), rows.astype(int_type, copy=False), indptr.astype(int_type)),
        shape=(n_u, n_pub),
    )
    del rows
    c = by_col.tocsr()
    return c, counts.astype(np.int64), inverse


def allowed_suppressed(n: int, suppression_limit: float) -> int:
    """How many of n people a suppression limit (a share in [0, 1)) lets a release drop."""
    return int(np.floor(suppression_limit * n + 1e-9))


def verify(
    published: GeneralizedQI,
    original: EncodedQI,
    k: int,
    suppression_limit: float = 0.0,
    blocks: tuple[np.ndarray, np.ndarray] | None = None,
    factor: sp.csr_array | None = None,
) -> VerificationReport:
    """Check the k-anonymity guarantee of a table release from published cells + original QIs.

    Passes iff the release has as many rows as the original and the compatibility graph has a
    k-factor. Also reports the fewest matches of any original and of any published row.

    With a ``suppression_limit`` s > 0, a release may have fewer rows, n − d with
    d ≤ ⌊s·n⌋ people suppressed (dropped as outliers); it passes iff some n − d originals have a
    k-factor to the published rows (``core.matching.k_factor_subset``: a pass is a proof; the
    search for the published people is a heuristic, so a failure there is reported as such).
    The guarantee then holds for the published people; the dropped ones are not in the release.

    ``blocks`` (row_block, col_block), a block label per original and per published row, is an
    optional hint where a k-factor may be found piece by piece (``anonymize`` passes the
    components of its own graph): if the compatible pairs inside every block have a k-factor
    (``core.matching.k_factor_in_blocks``), so does the whole graph, and the single global
    max-flow is skipped; otherwise the global check runs as without the hint. The hint can
    only save time: it never makes a release pass (a pass is still a k-factor of the graph
    rebuilt from the cells) and never changes the report (min matches and compatible pairs are
    counted on the whole graph; the flow of a pass is k·n either way).

    ``factor`` (person × published row, sparse n × n), an optional hint too: a candidate
    k-factor, e.g. the anonymizer's own graph in the release's order. When every one of its
    pairs is compatible by the cells and it is k-regular (``AttackerView.is_k_factor``, O(k·n
    log) instead of a maximum flow) the graph has that k-factor; otherwise the checks above run
    as without it. Like ``blocks``, it can only save time.
    """
    n, n_pub = original.n, published.n
    allowed = allowed_suppressed(n, suppression_limit)
    if n_pub != n and not (n_pub < n and n - n_pub <= allowed):
        limit = f" (the suppression limit allows {allowed} fewer)" if allowed else ""
        return VerificationReport(
            False,
            k,
            n,
            n_pub,
            0,
            0,
            0,
            k * n_pub,
            0,
            f"the release has {n_pub} rows but the original has {n}{limit}",
        )
    view = attacker_view(published, original)
    if n_pub < n:
        return _verify_suppressed(view.expanded(), view.counts, k, n, n_pub)
    # per group; every member of a group has its group's figures
    per_original = int(view.per_original().min()) if n else 0
    per_published = int(view.per_published().min()) if n else 0
    enough = n and min(per_original, per_published) >= k
    if enough and factor is not None and view.is_k_factor(k, factor):
        flow = k * n  # a k-factor of the graph, each pair checked against the cells
    elif enough and blocks is not None and view.k_factor_in_blocks(k, *blocks):
        flow = k * n  # the blocks' k-factors make one of the whole graph
    else:
        flow = view.k_factor_flow(k) if enough else 0
    passed = flow == k * n
    if passed:
        reason = "ok"
    elif per_original < k:
        reason = f"an original record matches only {per_original} published rows (< k = {k})"
    elif per_published < k:
        reason = f"a published row matches only {per_published} original records (< k = {k})"
    else:
        reason = f"no k-factor: at most {flow} of the {k * n} required disjoint matches exist"
    return VerificationReport(
        passed, k, n, n_pub, per_original, per_published, flow, k * n, view.pairs(), reason
    )


def _verify_suppressed(
    c: sp.csr_array, counts: np.ndarray, k: int, n: int, n_pub: int
) -> VerificationReport:
    """``verify`` of a release with n_pub < n rows: a k-factor between the published rows and
    n_pub of the originals (the published people)."""
    from anonymatch.core.matching import k_factor_subset

    per_published = int((counts @ c).min()) if n_pub else 0
    chosen, flow = (None, 0) if per_published < k else k_factor_subset(c, counts, k, n_pub)
    degree = np.diff(c.indptr)
    if chosen is not None:
        per_original = int(degree[chosen > 0].min()) if n_pub else 0
        reason = "ok"
    else:
        per_original = int(degree.min()) if n else 0
        if per_published < k:
            reason = f"a published row matches only {per_published} original records (< k = {k})"
        else:
            reason = (
                f"no {n_pub} originals found with a k-factor to the {n_pub} published rows "
                f"(at most {flow} of the {k * n_pub} required disjoint matches)"
            )
    return VerificationReport(
        chosen is not None,
        k,
        n,
        n_pub,
        per_original,
        per_published,
        flow,
        k * n_pub,
        int(c.nnz),
        reason,
        suppressed=n - n_pub,
    )


@dataclass(frozen=True)
class AdaptiveVerificationReport:
    """Outcome of ``verify_adaptive``. ``passed`` iff the row counts agree, the compatibility
    graph has a perfect matching, every original i has ≥ δᵢ compatible published rows that lie
    in some perfect matching, and (uniform δ only) a δ-factor exists."""

    passed: bool
    n_original: int
    n_published: int
    uniform_k: int | None
    perfect_matching: bool
    min_slack: int
    short_records: int
    k_factor_flow: int | None
    compatible_pairs: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def verify_adaptive(
    published: GeneralizedQI, original: EncodedQI, delta: np.ndarray
) -> AdaptiveVerificationReport:
    """Check adaptive anonymity (Choromanski et al. §2, Lemma 4.2) from published cells and
    original QIs: every original i must have at least δᵢ compatible published rows each of
    which is its partner in some perfect matching of the compatibility graph (edges outside all
    perfect matchings cannot be the true match, so an attacker discards them): the candidates
    of the attacker's view (``core.view.AttackerView.candidates``: a max-flow and a
    Dulmage–Mendelsohn pass on groups of identical originals and rows, O(U + G + pairs between
    groups)). For uniform δ = k the k-factor of ``verify`` is required too.
    """
    delta = np.asarray(delta, np.int64)
    n, n_pub = original.n, published.n
    uniform = int(delta[0]) if n and np.all(delta == delta[0]) else None
    if n != n_pub:
        reason = f"the release has {n_pub} rows but the original has {n}"
        return AdaptiveVerificationReport(False, n, n_pub, uniform, False, 0, n, None, 0, reason)
    view = attacker_view(published, original)
    cand = view.candidates()
    if cand is None:
        reason = "the compatibility graph has no perfect matching"
        return AdaptiveVerificationReport(
            False, n, n_pub, uniform, False, 0, n, None, view.person_pairs(), reason
        )
    slack = cand.per_original()[view.inverse] - delta
    short = int((slack < 0).sum())
    flow = None
    if uniform is not None and short == 0:
        flow = view.k_factor_flow(uniform)
    required = (uniform or 0) * n
    passed = short == 0 and (flow is None or flow == required)
    if passed:
        reason = "ok"
    elif short:
        i = int(np.argmin(slack))
        reason = (
            f"{short} records have fewer matchable published rows than their level; "
            f"record {i + 1} has {int(slack[i] + delta[i])} < {int(delta[i])}"
        )
    else:
        reason = f"no {uniform}-factor: at most {flow} of the {required} required matches"
    return AdaptiveVerificationReport(
        passed,
        n,
        n_pub,
        uniform,
        True,
        int(slack.min()) if n else 0,
        short,
        flow,
        view.person_pairs(),
        reason,
    )
