"""Median-split partitioning shared by the Mondrian and ring baselines.

Reference: K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional
k-anonymity", ICDE 2006, §4 (greedy top-down partitioning). A region of records is cut in two
along one attribute, the one with the widest normalized range among the region's records, at the
median; the pieces are cut again until no allowable cut is left. Two flavours:

* **strict** (``strict_partition``, used by Mondrian): a cut is a value threshold — records with
  value ≤ x go left, > x right — so equal values never straddle it; it is allowable iff both sides
  keep ≥ k records. The attributes are tried in decreasing width until one has an allowable cut.
* **relaxed** (``relaxed_partition``, used by the ring baseline): the region's records are sorted
  on the widest attribute and cut at the median *position* (equal values may straddle), so every
  region of ≥ 2k records splits into two halves of ≥ k; regions are cut until all have k…2k−1.

Width of an attribute over a region (ties in width are broken by the unweighted width, then by
attribute position, numeric attributes first): numeric (max − min), categorical (distinct − 1),
each times its factor of ``EncodedQI.ncp_scales()`` — i.e. the normalized range (max−min)/(U−L)
or (distinct−1)/(|A|−1) times the attribute's weight share, which is exactly the attribute's
contribution to the GCP of a group spanning the region. With unit weights this is the paper's
normalized range up to a common factor 1/d. Categorical attributes have no hierarchy here: they
are ordered by their integer code (= sorted label order) and cut like numeric ones; the published
cell of a group is still the set of values present, not a code range.

Implementation: instead of a recursion (depth up to n/k in degenerate data) or a Python loop
over regions (≈ 2n/k regions), the regions are processed level by level: one round cuts every
open region at once with segmented numpy operations on the records laid out region by region in
``order``. A round costs O(N·d + N log N) for the N records still in open regions, so the whole
partition costs O(d·n log n · depth) time, depth ≈ log2(n/k) for balanced cuts, and O(n·d)
memory. Values are replaced once by their dense rank per attribute (O(d·n log n)), so that a
round can sort all regions together on one int64 key (region, rank).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from anonymatch.tables.columns.schema import EncodedQI

if TYPE_CHECKING:
    from anonymatch.tables.models.sensitive import SensitiveTarget


@dataclass(frozen=True)
class Partition:
    """Groups of records laid out contiguously: group g is ``order[bounds[g]:bounds[g + 1]]``.

    ``order`` is a permutation of 0..n−1 and ``bounds`` increases from 0 to n; groups appear in
    the left-to-right order of the cuts. ``ranks[p]`` holds the dense ranks (``_ranks_and_levels``)
    of record ``order[p]``, laid out like ``order``, for callers that need per-group statistics.
    """

    order: np.ndarray
    bounds: np.ndarray
    ranks: np.ndarray
    modulus: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    @property
    def n_groups(self) -> int:
        return len(self.bounds) - 1

    def group_of_position(self) -> np.ndarray:
        """Group id of each position of ``order``."""
        return np.repeat(np.arange(self.n_groups, dtype=np.int64), self.sizes)

    def groups(self) -> list[np.ndarray]:
        """The groups as arrays of record ids (a Python list: for tests and small inputs)."""
        return [self.order[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]


def strict_partition(qi: EncodedQI, k: int, target: SensitiveTarget | None = None) -> Partition:
    """Strict multidimensional Mondrian partition (LeFevre et al. 2006, Fig. 2 with strict cuts).

    Every group has ≥ k records if n ≥ k (a group of n < k records otherwise), and no group has
    an allowable strict cut on any attribute. The cut on an attribute is taken next to the
    median value m = v[(c−1)//2] (v sorted, c records): "≤ m | > m" as in the paper, or, when
    that one is not allowable or is less balanced, "< m | ≥ m". Departure from the paper's
    pseudo-code, which only tries "≤ m": with ties at the median it would miss the allowable cut
    just below the median block (e.g. two clusters of k and k+2 identical records would stay one
    group). Any other value threshold leaves fewer records on the short side than one of these
    two, so an attribute has an allowable strict cut iff one of the two is allowable — the
    partition stops exactly when no allowable strict cut exists.

    With a sensitive ``target``, a cut is allowable only if both sides also satisfy its models
    (LeFevre et al. 2006: any monotone constraint may gate a cut); the caller checks that the whole
    table does (``SensitiveTarget.check_table``). Extra cost O(N·S + R·slots) per attribute
    tried, for N records in R open regions, S sensitive columns.

    Complexity: see the module docstring; O(d·n log n) per level of the cut tree.
    """
    return _partition(qi, k, strict=True, target=target)


def relaxed_partition(qi: EncodedQI, k: int) -> Partition:
    """Relaxed multidimensional Mondrian partition (LeFevre et al. 2006, relaxed cuts): regions
    of ≥ 2k records are sorted on their widest attribute and cut at position ⌊c/2⌋, so every
    group ends with k…2k−1 records (if n ≥ k). Regions whose records all agree on every
    attribute are still cut (at position ⌊c/2⌋ of their current layout).

    Complexity: O(d·n log n · ⌈log2(n/k)⌉) time, O(n·d) memory.
    """
    return _partition(qi, k, strict=False)


def _ranks_and_levels(qi: EncodedQI) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Dense ranks of every record in every attribute, numeric first then categorical, as an
    (n, d) array, the number of possible ranks per attribute and, per numeric attribute, its
    sorted distinct values (the value of each rank). Categorical codes are used as they are
    (0..|A|−1 in sorted label order; depth first in a QI's hierarchy). O(d·n log n)."""
    n, dn, dc = qi.n, qi.num.shape[1], qi.cat.shape[1]
    ranks = np.empty((n, dn + dc), dtype=np.int32 if n < 2**31 - 1 else np.int64)
    modulus = np.empty(dn + dc, dtype=np.int64)
    levels = []
    for a in range(dn):
        # a missing value (+inf in the keys) takes the last rank, level +inf
        uniq, inv = np.unique(np.where(qi.num_missing[:, a], np.inf, qi.num[:, a]),
                              return_inverse=True)  # fmt: skip
        ranks[:, a] = inv.reshape(-1)
        modulus[a] = max(len(uniq), 1)
        levels.append(uniq)
    cat = qi.cat_order_codes()  # hierarchy leaves depth first: cuts fall between subtrees
    for b in range(dc):
        top = max(int(qi.cat_card[b]), int(qi.cat[:, b].max(initial=-1)) + 1, 1)
        gone = qi.cat_missing[:, b]
        ranks[:, dn + b] = np.where(gone, top, cat[:, b])  # missing: the rank after the codes
        modulus[dn + b] = top + 1 if gone.any() else top
    return ranks, modulus, levels


def _missing_ranks(qi: EncodedQI, modulus: np.ndarray) -> np.ndarray:
    """The rank of "missing" per attribute (the last one), −1 where nothing is missing."""
    gone = np.concatenate([qi.num_missing.any(axis=0), qi.cat_missing.any(axis=0)])
    return np.where(gone, modulus - 1, -1)


def segment_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` over the pairs, without a Python loop. O(Σl)."""
    total = int(lengths.sum())
    shift = starts - (np.cumsum(lengths) - lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(shift, lengths)


def segment_distinct(seg: np.ndarray, values: np.ndarray, modulus: int, n_seg: int) -> np.ndarray:
    """Number of distinct ``values`` (ints in [0, modulus)) per segment id ``seg`` (ints in
    [0, n_seg)). A bincount when the table n_seg × modulus is small, else a sort.
    O(N + n_seg·modulus) or O(N log N)."""
    key = seg * modulus + values
    if n_seg * modulus <= 8 * len(values) + 1024:
        counts = np.bincount(key, minlength=n_seg * modulus).reshape(n_seg, modulus)
        return np.count_nonzero(counts, axis=1).astype(np.int64)
    key = np.sort(key)
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    return np.bincount(key[first] // modulus, minlength=n_seg).astype(np.int64)


def _attribute_preference(
    qi: EncodedQI,
    block: np.ndarray,
    levels: list[np.ndarray],
    modulus: np.ndarray,
    seg: np.ndarray,
    starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each region (ranks ``block`` of its records, region id ``seg``, contiguous from
    ``starts``): the attributes in the order to try them, widest first, as an (n_seg, d) array,
    and whether each of them takes more than one value in the region (same layout). Attributes
    that take a single value sort last. O(N·d) (plus a sort per categorical attribute with a
    large domain)."""
    dn, dc = qi.num.shape[1], qi.cat.shape[1]
    n_seg = len(starts)
    num_scale, cat_scale = qi.ncp_scales()
    weighted = np.zeros((n_seg, dn + dc))
    plain = np.zeros((n_seg, dn + dc))
    varies = np.zeros((n_seg, dn + dc), dtype=bool)
    if dn:
        lo = np.minimum.reduceat(block[:, :dn], starts, axis=0)
        hi = np.maximum.reduceat(block[:, :dn], starts, axis=0)
    for a in range(dn):
        with np.errstate(invalid="ignore"):
            width = levels[a][hi[:, a]] - levels[a][lo[:, a]]  # inf: missing and present
        width = np.where(np.isnan(width), 0.0, width)  # only missing values: one value
        weighted[:, a] = width * num_scale[a] if num_scale[a] > 0 else 0.0
        plain[:, a] = width / qi.num_span[a] if qi.num_span[a] > 0 else 0.0
        varies[:, a] = width > 0
    for b in range(dc):
        card = int(qi.cat_card[b])
        extra = segment_distinct(seg, block[:, dn + b], int(modulus[dn + b]), n_seg) - 1
        weighted[:, dn + b] = extra * cat_scale[b]
        plain[:, dn + b] = extra / (card - 1) if card > 1 else 0.0
        varies[:, dn + b] = extra > 0
    gone = _missing_ranks(qi, modulus)
    if (gone >= 0).any():
        # A group mixing missing and present values publishes ``*`` there (NCP 1): the
        # widest possible range, so such regions are cut on that attribute first.
        num_full, cat_full = qi.star_scales()
        full = np.concatenate([num_full, cat_full])
        top = np.maximum.reduceat(block, starts, axis=0)
        for col in np.flatnonzero(gone >= 0):
            mixed = (top[:, col] == gone[col]) & varies[:, col]
            weighted[mixed, col] = full[col]
            plain[mixed, col] = 1.0
    # np.lexsort: last key is the primary one; it is stable, so equal keys keep column order.
    pref = np.lexsort((-plain, -weighted, ~varies), axis=-1)
    return pref, np.take_along_axis(varies, pref, axis=1)


def _sides_ok(
    target: SensitiveTarget,
    slay: np.ndarray,
    starts: np.ndarray,
    lens: np.ndarray,
    cut: np.ndarray,
) -> np.ndarray:
    """Whether both sides of each region's cut (the first ``cut`` records of the region laid out
    from ``starts``, and the rest) satisfy the sensitive models. O(N·S + R·slots)."""
    cut = np.clip(cut, 0, lens)
    left = _range_counts(slay, starts, cut, target.offsets)
    whole = _range_counts(slay, starts, lens, target.offsets)
    return target.ok(left) & target.ok(whole - left)


@njit(cache=True, nogil=True)
def _range_counts(codes, starts, lens, offsets):  # pragma: no cover - compiled
    out = np.zeros((starts.shape[0], offsets[-1]), np.int64)
    for r in range(starts.shape[0]):
        for p in range(starts[r], starts[r] + lens[r]):
            for s in range(codes.shape[1]):
                out[r, offsets[s] + codes[p, s]] += 1
    return out


def _partition(
    qi: EncodedQI, k: int, strict: bool, target: SensitiveTarget | None = None
) -> Partition:
    n = qi.n
    order = np.arange(n, dtype=np.int64)
    ranks, modulus, levels = _ranks_and_levels(qi)
    if n == 0:
        return Partition(order, np.zeros(1, dtype=np.int64), ranks, modulus)
    d = ranks.shape[1]
    # ``lay`` moves with ``order`` (lay[p] = ranks of record order[p]), so that every round reads
    # the records of the open regions from nearly contiguous memory.
    lay = ranks if d else np.zeros((n, 1), dtype=np.int64)
    slay = target.codes.copy() if target is not None else None  # moves with ``order`` too
    width = int(modulus.max()) if d else 1  # sort key = region * width + rank
    done: list[np.ndarray] = []
    s, e = np.zeros(1, dtype=np.int64), np.full(1, n, dtype=np.int64)
    while s.size:
        # Regions of < 2k records cannot be cut into two sides of ≥ k: they are final.
        small = e - s < 2 * k
        done.append(s[small])
        s, e = s[~small], e[~small]
        if not s.size:
            break
        lens = e - s
        n_seg = len(s)
        pos = segment_ranges(s, lens)
        seg = np.repeat(np.arange(n_seg, dtype=np.int64), lens)
        starts = np.cumsum(lens) - lens
        block = lay[pos]
        if d:
            pref, varies = _attribute_preference(qi, block, levels, modulus, seg, starts)
        else:  # no attribute: nothing to cut strictly; a relaxed cut splits by position
            pref, varies = np.zeros((n_seg, 1), np.int64), np.zeros((n_seg, 1), dtype=bool)
        cut = np.full(n_seg, -1, dtype=np.int64)  # records left of the cut; −1: no cut
        pending = np.arange(n_seg, dtype=np.int64)
        for t in range(pref.shape[1] if strict else 1):
            if strict:  # an attribute with one value has no cut, nor have the ones after it
                pending = pending[varies[pending, t]]
            if not pending.size:
                break
            if t == 0 and len(pending) == n_seg:  # ``block`` is still current
                sub_lens, sub_pos, sub_seg, sub_starts = lens, pos, seg, starts
            else:
                sub_lens = lens[pending]
                sub_pos = segment_ranges(s[pending], sub_lens)
                sub_seg = np.repeat(np.arange(len(pending), dtype=np.int64), sub_lens)
                sub_starts = np.cumsum(sub_lens) - sub_lens
                block = lay[sub_pos]
            vals = block[np.arange(len(sub_pos)), pref[pending, t][sub_seg]]
            key = sub_seg * width + vals
            by_value = np.argsort(key, kind="stable")
            # Lay each pending region out sorted on the attribute (regions stay in place).
            order[sub_pos] = order[sub_pos[by_value]]
            lay[sub_pos] = block[by_value]
            if slay is not None:
                slay[sub_pos] = slay[sub_pos[by_value]]
            if not strict:
                cut[pending] = sub_lens // 2
                break
            key = key[by_value]
            med = key[sub_starts + (sub_lens - 1) // 2]
            n_le = np.searchsorted(key, med, side="right") - sub_starts
            n_lt = np.searchsorted(key, med, side="left") - sub_starts
            ok_le = (n_le >= k) & (sub_lens - n_le >= k)
            ok_lt = (n_lt >= k) & (sub_lens - n_lt >= k)
            if target is not None and slay is not None:
                ok_le &= _sides_ok(target, slay, s[pending], sub_lens, n_le)
                ok_lt &= _sides_ok(target, slay, s[pending], sub_lens, n_lt)
            closer = np.abs(2 * n_lt - sub_lens) < np.abs(2 * n_le - sub_lens)
            use_lt = ok_lt & (~ok_le | closer)
            ok = ok_le | ok_lt
            cut[pending[ok]] = np.where(use_lt, n_lt, n_le)[ok]
            pending = pending[~ok]
        split = cut >= 0
        done.append(s[~split])
        mid = s[split] + cut[split]
        s = np.concatenate([s[split], mid])
        e = np.concatenate([mid, e[split]])
    group_starts = np.sort(np.concatenate(done))
    bounds = np.append(group_starts, n).astype(np.int64)
    return Partition(order, bounds, lay[:, :d], modulus)
