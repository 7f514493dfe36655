"""Equivalence classes that satisfy a model on the sensitive attribute(s).

Under ℓ-diversity or t-closeness a release must protect the sensitive values against an attacker
who knows the algorithm. A freeform graph cannot do that for every draw of the true assignment:
the values shown on a person's k graph neighbours are the values of whoever the drawn
assignment puts on those rows, so they change from draw to draw unless the person's rows can
only be filled by one fixed set of people — a class (``docs/guarantees/sensitive.md`` §3), or
a ring drawn among its k shifts only (``methods.circulant``, §6; the freeform methods use it
per partition where it costs less than these classes). So
with a sensitive model every table method publishes classes: groups of ≥ k records, each a
complete biclique of the generalization graph, whose multiset of sensitive values satisfies the
model. The values shown on a class's rows are the class's values whatever the draw, and the
posterior of a member is the class's value distribution (uniform choice among the class's D = m
disjoint assignments).

Two ways to form the classes:

* ``diverse_clusters`` (the freeform methods' slot): greedy k-member clustering in the
  lexicographic order (after Byun et al., DASFAA 2007; the model-aware choice is ours):
  each class starts at the first unassigned record and grows by the record of least GCP increase
  (Doka's weights for one published record), restricted to records that help the model while it
  is unmet; records left over join the class they cost least that still satisfies the model.
  Runs per partition of the lexicographic order; a partition whose own values cannot satisfy the
  model is merged with the next one. Issue 36 made it cheaper with the sensitive column in view:
  under distinct ℓ-diversity a partition first takes, from its neighbours, the nearest records
  of the values it lacks for classes of about k (``_rebalance``), and a class does not spend a
  rare value it does not need while the classes still to come lack it (``_unhelpful``); then
  members are swapped between the classes of a partition and of neighbouring partitions where
  that lowers the GCP and both classes still satisfy the model (``_improve``). On Adult this
  took (10, 2) on income from 8.49 % to 5.46 % GCP and (10, 4) on occupation from 2.90 % to
  2.54 % (docs/results.md, "Cheaper ℓ/t with classes").
* ``mondrian`` with a model: strict Mondrian whose cuts are allowable only when both sides satisfy
  the model (LeFevre et al. 2006, whose cut rule admits any monotone constraint) —
  ``_partition`` with a predicate.

The model check on a class's value counts is ``counts_ok`` (numba), the class-based definitions
of ``tables.models.sensitive``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit

from anonymatch.core.errors import InfeasibleError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.runner import split_even
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.models.sensitive import SensitiveTarget, column_ok, describe_model, row_ok
from anonymatch.tables.order import lexicographic_order


@njit(cache=True, nogil=True)
def _pool_short(avail, a, b, ell, g):  # pragma: no cover - compiled
    """Σ_v min(avail_v, g) − ℓ·g over the value slots a:b of one distinct ℓ column: how far the
    records left are from room for g more classes (negative: short)."""
    total = 0
    for v in range(a, b):
        total += min(avail[v], g)
    return total - ell * g


@njit(cache=True, nogil=True)
def _unhelpful(counts, size, k, models, bad, avail):  # pragma: no cover - compiled
    """For every value slot v: ``bad[v] = 1`` if a record showing v does *not* help its column
    while the column is unmet — a value already present (distinct ℓ-diversity, only once the
    missing values fill the class's free slots), a value at or above a 1/ℓ share (entropy,
    recursive), a value at or above its table share (t-closeness) — else 0. A record's miss
    (the unmet columns it does not help) is the sum of ``bad`` over its values: computed once
    per growth step of a class, not once per candidate record. ``models`` = (offsets, kinds,
    ls, cs, ts, ordered, q): the sensitive models per column, as in ``_cluster``.

    Distinct ℓ-diversity also keeps the rare values for the classes still to come (issue 36):
    a value the class does not need (already present, or the column met) is bad when taking it
    leaves the records left (``avail``, per value slot) without room for their classes —
    Σ_v min(avail_v, g) < ℓ·g for the g = ⌊(left − the records this class still takes)/k⌋
    classes after this one — so that a class does not spend a second of the few ``>50K``
    records a segment holds while its neighbours then find none. O(slots)."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    left = 0
    for v in range(offsets[0], offsets[1]):
        left += avail[v]
    rest = left - 1 - max(k - size - 1, 0)  # records left once this class is complete
    g = max(rest, 0) // k
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        met = column_ok(counts[a:b], kinds[s], ls[s], cs[s], ts[s], ordered[s], q[a:b])
        spare = _pool_short(avail, a, b, ls[s], g) if kinds[s] == 1 else 0
        distinct = 0
        for v in range(a, b):
            if counts[v] > 0:
                distinct += 1
        for v in range(a, b):
            have = counts[v]
            good = True
            if not met:
                if kinds[s] == 1 and have > 0:
                    good = ls[s] - distinct < k - size  # slack left: the cheapest may be taken
                if (kinds[s] == 2 or kinds[s] == 3) and (have + 1) * ls[s] > size + 1:
                    good = False
                if ts[s] >= 0 and size > 0 and have >= q[v] * (size + 1):
                    good = False
            if good and kinds[s] == 1 and (met or have > 0) and 0 < avail[v] <= g:
                good = spare - 1 >= 0  # taking it keeps the records left with room
            bad[v] = 0 if good else 1


@njit(cache=True, nogil=True)
def _least_miss(bad, avail, offsets):  # pragma: no cover - compiled
    """A lower bound on the miss of every record left: per column, the least ``bad`` of a
    value that some record left shows (``avail``: records left per value slot). O(slots)."""
    low = 0
    for s in range(offsets.shape[0] - 1):
        least = 1
        for v in range(offsets[s], offsets[s + 1]):
            if avail[v] > 0 and bad[v] < least:
                least = bad[v]
        low += least
    return low


@njit(cache=True, nogil=True)
def _cost(r, lo, hi, num, num_scale, cat, cat_scale, member):  # pragma: no cover - compiled
    """GCP increase of growing a class (bounds lo/hi, categorical membership) to cover r."""
    s = 0.0
    for a in range(num.shape[1]):
        if num_scale[a] != 0:
            v = num[r, a]
            s += (max(hi[a], v) - min(lo[a], v) - (hi[a] - lo[a])) * num_scale[a]
    for a in range(cat.shape[1]):
        if cat_scale[a] != 0 and not member[a, cat[r, a]]:
            s += cat_scale[a]
    return s


@njit(cache=True, nogil=True)
def _unlink(r, links, codes, offsets, avail):  # pragma: no cover - compiled
    """Take record r out of the list of records left (``links`` = (after, before): record r
    is node r + 1, node 0 the head, node m + 1 the end) and out of the counts ``avail`` of
    their values. O(s)."""
    after, before = links
    p, n = before[r + 1], after[r + 1]
    after[p] = n
    before[n] = p
    for s in range(codes.shape[1]):
        avail[offsets[s] + codes[r, s]] -= 1


@njit(cache=True, nogil=True)
def _cluster(records, scales, card_max, codes, k, models):  # pragma: no cover - compiled
    """Greedy k-member clustering of m records (in scan order) into classes satisfying the
    model. Returns the class of each record, or an array of −1 if it fails.

    Each growth step takes the record left of least (miss, GCP increase), the first in scan
    order among equals. The misses come from a table of the value slots made once per step
    (``_unhelpful``); the records left are a linked list; and the scan stops at the first record
    of zero cost whose miss is the least any record left can have (``_least_miss``), since no
    later record can beat it — the classes of the plain scan of every record at every step,
    record for record (``tests/tables/test_diverse.py``), at a fraction of its time where
    records with identical or enclosed QIs lie near each other in the scan order (Adult at
    t = 0.2: 12× faster). Time O(m²·d) in the worst case, O(m·(d + s)) per step; memory
    O(m·(d + s) + (m/k)·(d·card + slots)).

    ``records`` = (num, cat): the records' numeric values and local categorical codes (below
    ``card_max``); ``scales`` = (num_scale, cat_scale): their NCP scales; ``codes``: the
    records' sensitive value codes; ``models`` = (offsets, kinds, ls, cs, ts, ordered, q): the
    sensitive models per column (value slots, kind, ℓ, c, t, whether ordered, table shares),
    as ``SensitiveTarget`` holds them."""
    num, cat = records
    num_scale, cat_scale = scales
    offsets, kinds, ls, cs, ts, ordered, q = models
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    slots = offsets[-1]
    label = np.full(m, -1, np.int64)
    max_groups = m // k + 1
    glo = np.zeros((max_groups, dn))
    ghi = np.zeros((max_groups, dn))
    gmem = np.zeros((max_groups, dc, card_max), np.bool_)
    gcnt = np.zeros((max_groups, slots), np.int64)
    gsize = np.zeros(max_groups, np.int64)
    n_groups = 0
    free = m
    # the records not in a class yet, in scan order: a doubly linked list (m ends it), and
    # how many of them show each value slot
    links = (np.arange(1, m + 3), np.arange(-1, m + 1))
    avail = np.zeros(slots, np.int64)
    for r in range(m):
        for s in range(codes.shape[1]):
            avail[offsets[s] + codes[r, s]] += 1
    bad = np.zeros(slots, np.int64)
    for seed in range(m):
        if label[seed] >= 0:
            continue
        if free < k:
            break
        g = n_groups
        members = [seed]
        glo[g] = num[seed]
        ghi[g] = num[seed]
        for a in range(dc):
            gmem[g, a, cat[seed, a]] = True
        for s in range(codes.shape[1]):
            gcnt[g, offsets[s] + codes[seed, s]] += 1
        label[seed] = g
        _unlink(seed, links, codes, offsets, avail)
        size = 1
        while not (size >= k and row_ok(gcnt[g], offsets, kinds, ls, cs, ts, ordered, q)):
            if size >= 3 * k:  # the records left cannot complete it: they become leftovers
                break
            # the record of least (miss, cost), the first in scan order among equals; no record
            # can beat (least miss, 0), so the scan stops at the first that reaches it
            _unhelpful(gcnt[g], size, k, models, bad, avail)
            floor = _least_miss(bad, avail, offsets)
            best, best_miss, best_cost = -1, 1 << 30, np.inf
            node = links[0][0]  # records before the seed are all in classes
            while node <= m:
                r = node - 1
                miss = 0
                for s in range(codes.shape[1]):
                    miss += bad[offsets[s] + codes[r, s]]
                if miss <= best_miss:
                    cost = _cost(r, glo[g], ghi[g], num, num_scale, cat, cat_scale, gmem[g])
                    if miss < best_miss or cost < best_cost:
                        best, best_miss, best_cost = r, miss, cost
                        if miss == floor and cost == 0.0:
                            break
                node = links[0][node]
            if best < 0:
                break
            members.append(best)
            label[best] = g
            _unlink(best, links, codes, offsets, avail)
            size += 1
            for a in range(dn):
                glo[g, a] = min(glo[g, a], num[best, a])
                ghi[g, a] = max(ghi[g, a], num[best, a])
            for a in range(dc):
                gmem[g, a, cat[best, a]] = True
            for s in range(codes.shape[1]):
                gcnt[g, offsets[s] + codes[best, s]] += 1
        if size >= k and row_ok(gcnt[g], offsets, kinds, ls, cs, ts, ordered, q):
            gsize[g] = size
            n_groups += 1
            free -= size
        else:  # the rest cannot form a class: undo, they become leftovers
            for r in members:
                label[r] = -1  # (the list of records left is not used after this)
            gcnt[g] = 0
            gmem[g] = False
            break
    if n_groups == 0:
        return np.full(m, -1, np.int64)
    # leftovers join the cheapest class that still satisfies the model with them
    trial = np.empty(slots, np.int64)
    for r in range(m):
        if label[r] >= 0:
            continue
        best, best_cost = -1, np.inf
        for g in range(n_groups):
            trial[:] = gcnt[g]
            for s in range(codes.shape[1]):
                trial[offsets[s] + codes[r, s]] += 1
            if not row_ok(trial, offsets, kinds, ls, cs, ts, ordered, q):
                continue
            cost = _cost(r, glo[g], ghi[g], num, num_scale, cat, cat_scale, gmem[g])
            if cost < best_cost:
                best, best_cost = g, cost
        if best < 0:
            return np.full(m, -1, np.int64)
        label[r] = best
        for a in range(dn):
            glo[best, a] = min(glo[best, a], num[r, a])
            ghi[best, a] = max(ghi[best, a], num[r, a])
        for a in range(dc):
            gmem[best, a, cat[r, a]] = True
        for s in range(codes.shape[1]):
            gcnt[best, offsets[s] + codes[r, s]] += 1
    return label


@njit(cache=True, nogil=True)
def _class_cost(lo, hi, distinct, num_scale, cat_scale):  # pragma: no cover - compiled
    """GCP of one published row of a class: its numeric widths and extra categorical values."""
    c = 0.0
    for a in range(lo.shape[0]):
        c += (hi[a] - lo[a]) * num_scale[a]
    for a in range(distinct.shape[0]):
        c += (distinct[a] - 1) * cat_scale[a]
    return c


@njit(cache=True, nogil=True)
def _without(members, num, lo, hi):  # pragma: no cover - compiled
    """Per member i of a class: the numeric bounds of the class without i (lo[i], hi[i])."""
    for i in range(members.shape[0]):
        for a in range(num.shape[1]):
            lo[i, a] = np.inf
            hi[i, a] = -np.inf
        for j in range(members.shape[0]):
            if j != i:
                for a in range(num.shape[1]):
                    v = num[members[j], a]
                    lo[i, a] = min(lo[i, a], v)
                    hi[i, a] = max(hi[i, a], v)


@njit(cache=True, nogil=True)
def _swapped_cost(lo, hi, cnt, distinct, r, s, num, cat, num_scale, cat_scale):  # pragma: no cover
    """GCP of one row of a class whose member r is replaced by record s: ``lo``/``hi`` the
    class's numeric bounds without r, ``cnt`` its categorical value counts and ``distinct``
    its numbers of values (with r). O(d)."""
    c = 0.0
    for a in range(num.shape[1]):
        v = num[s, a]
        c += (max(hi[a], v) - min(lo[a], v)) * num_scale[a]
    for a in range(cat.shape[1]):
        ra, sa = cat[r, a], cat[s, a]
        if ra == sa:
            c += (distinct[a] - 1) * cat_scale[a]
            continue
        d = distinct[a] - (1 if cnt[a, ra] == 1 else 0) + (1 if cnt[a, sa] == 0 else 0)
        c += (d - 1) * cat_scale[a]
    return c


BAND = 60
"""The swap search pairs a class with the next ``BAND`` classes only (classes are numbered in
the QI order, so these are its neighbours): a merged segment of thousands of records (t-closeness
on Adult) would otherwise try every pair of its hundreds of classes."""


@njit(cache=True, nogil=True)
def _gains(
    members, num, cat, cnt, dis, cost, lo, hi, num_scale, cat_scale, out
):  # pragma: no cover
    """Per member r of a class (cost ``cost`` per row): how much one row loses by removing r,
    cost − cost(class − r), into ``out``. ``lo``/``hi``: work space (members × dn)."""
    _without(members, num, lo, hi)
    for i in range(members.shape[0]):
        c = 0.0
        for a in range(num.shape[1]):
            c += (hi[i, a] - lo[i, a]) * num_scale[a]
        for a in range(cat.shape[1]):
            d = dis[a] - (1 if cnt[a, cat[members[i], a]] == 1 else 0)
            c += (d - 1) * cat_scale[a]
        out[i] = cost - c


@njit(cache=True, nogil=True)
def _least_side(
    members, gains, weight, there, lo, hi, cnt, num, cat, num_scale, cat_scale
):  # pragma: no cover
    """min over members r of a class of there·inc(r | other class) − weight·gain(r): the least
    that moving r out of its class (of ``weight`` records) into the other class (of ``there``
    records; bounds lo/hi, value counts cnt) can add to the GCP sum."""
    best = np.inf
    for i in range(members.shape[0]):
        r = members[i]
        c = 0.0
        for a in range(num.shape[1]):
            v = num[r, a]
            c += (max(hi[a], v) - min(lo[a], v) - (hi[a] - lo[a])) * num_scale[a]
        for a in range(cat.shape[1]):
            if cnt[a, cat[r, a]] == 0:
                c += cat_scale[a]
        best = min(best, there * c - weight * gains[i])
    return best


@njit(cache=True, nogil=True)
def _improve(label, records, scales, card_max, codes, models, passes, cross):  # pragma: no cover
    """Local search on classes that satisfy the models (issue 36): swap one member of a class
    with one of another class when that lowers the GCP (Σ size × row cost, the builder's cost
    of ``_cost``) and both classes still satisfy the models; the best swap of each pair of
    classes, pass after pass, until a pass changes nothing or ``passes`` are done. A pair is
    tried again only once one of its classes changed, and skipped when a bound shows that no
    swap can gain (``_gains``, ``_least_side``). ``cross`` > 0: only pairs of a class below
    ``cross`` and one from ``cross`` on (two neighbouring segments' classes). Sizes never
    change, so every class keeps ≥ k records. Time O(passes·G²·K²·d) for G classes of ≤ K
    records (far fewer pairs in practice); memory O(G·(d·card + slots) + m)."""
    num, cat = records
    num_scale, cat_scale = scales
    offsets, kinds, ls, cs, ts, ordered, q = models
    m, dn, dc = num.shape[0], num.shape[1], cat.shape[1]
    G = label.max() + 1
    size = np.zeros(G, np.int64)
    for r in range(m):
        size[label[r]] += 1
    start = np.zeros(G + 1, np.int64)
    for g in range(G):
        start[g + 1] = start[g] + size[g]
    mem = np.empty(m, np.int64)
    fill = start[:-1].copy()
    for r in range(m):
        mem[fill[label[r]]] = r
        fill[label[r]] += 1
    cnt = np.zeros((G, dc, card_max), np.int64)
    dis = np.zeros((G, dc), np.int64)
    scnt = np.zeros((G, offsets[-1]), np.int64)
    cost = np.zeros(G)
    lo = np.zeros((G, dn))
    hi = np.zeros((G, dn))
    big = size.max()
    for g in range(G):
        lo[g] = np.inf
        hi[g] = -np.inf
        for p in range(start[g], start[g + 1]):
            r = mem[p]
            for a in range(dn):
                lo[g, a] = min(lo[g, a], num[r, a])
                hi[g, a] = max(hi[g, a], num[r, a])
            for a in range(dc):
                cnt[g, a, cat[r, a]] += 1
            for s in range(codes.shape[1]):
                scnt[g, offsets[s] + codes[r, s]] += 1
        for a in range(dc):
            dis[g, a] = np.count_nonzero(cnt[g, a])
        cost[g] = _class_cost(lo[g], hi[g], dis[g], num_scale, cat_scale)
    loA = np.empty((big, dn))
    hiA = np.empty((big, dn))
    loB = np.empty((big, dn))
    hiB = np.empty((big, dn))
    trial = np.empty(offsets[-1], np.int64)
    gain = np.zeros(m)  # per position of mem: what removing that member saves its class
    for g in range(G):
        _gains(mem[start[g] : start[g + 1]], num, cat, cnt[g], dis[g], cost[g], loA, hiA,
               num_scale, cat_scale, gain[start[g] : start[g + 1]])  # fmt: skip
    dirty = np.ones(G, np.bool_)  # changed since the pair was last tried
    for _ in range(passes):
        changed = False
        now = np.zeros(G, np.bool_)
        for A in range(min(G, cross) if cross > 0 else G):
            for B in range(max(A + 1, cross), min(G, A + 1 + BAND)):
                if not (dirty[A] or dirty[B] or now[A] or now[B]):
                    continue  # tried, unchanged since: no better swap
                ma = mem[start[A] : start[A + 1]]
                mb = mem[start[B] : start[B + 1]]
                # a swap r ↔ s changes A's row by inc(s | A − r) − gain(r) ≥ inc(s | A) −
                # gain(r) (the increase is submodular), and B's likewise: the sum is at least
                # [|B|·inc(r | B) − |A|·gain(r)] + [|A|·inc(s | A) − |B|·gain(s)], whose two
                # terms are minimised apart; skip the pair when that cannot be negative
                low = _least_side(ma, gain[start[A] : start[A + 1]], size[A], size[B], lo[B],
                                  hi[B], cnt[B], num, cat, num_scale, cat_scale) + _least_side(
                    mb, gain[start[B] : start[B + 1]], size[B], size[A], lo[A], hi[A], cnt[A],
                    num, cat, num_scale, cat_scale)  # fmt: skip
                if low >= -1e-12:
                    continue
                _without(ma, num, loA, hiA)
                _without(mb, num, loB, hiB)
                best, bi, bj = -1e-12, -1, -1
                for i in range(ma.shape[0]):
                    r = ma[i]
                    for j in range(mb.shape[0]):
                        s = mb[j]
                        ca = _swapped_cost(loA[i], hiA[i], cnt[A], dis[A], r, s, num, cat,
                                           num_scale, cat_scale)  # fmt: skip
                        cb = _swapped_cost(loB[j], hiB[j], cnt[B], dis[B], s, r, num, cat,
                                           num_scale, cat_scale)  # fmt: skip
                        delta = size[A] * (ca - cost[A]) + size[B] * (cb - cost[B])
                        if delta >= best:
                            continue
                        trial[:] = scnt[A]
                        for c in range(codes.shape[1]):
                            trial[offsets[c] + codes[r, c]] -= 1
                            trial[offsets[c] + codes[s, c]] += 1
                        if not row_ok(trial, offsets, kinds, ls, cs, ts, ordered, q):
                            continue
                        trial[:] = scnt[B]
                        for c in range(codes.shape[1]):
                            trial[offsets[c] + codes[s, c]] -= 1
                            trial[offsets[c] + codes[r, c]] += 1
                        if not row_ok(trial, offsets, kinds, ls, cs, ts, ordered, q):
                            continue
                        best, bi, bj = delta, i, j
                if bi < 0:
                    continue
                r, s = ma[bi], mb[bj]
                mem[start[A] + bi], mem[start[B] + bj] = s, r
                label[r], label[s] = B, A
                for X, out, inn in ((A, r, s), (B, s, r)):
                    for a in range(dc):
                        cnt[X, a, cat[out, a]] -= 1
                        cnt[X, a, cat[inn, a]] += 1
                    for c in range(codes.shape[1]):
                        scnt[X, offsets[c] + codes[out, c]] -= 1
                        scnt[X, offsets[c] + codes[inn, c]] += 1
                    lo[X] = np.inf
                    hi[X] = -np.inf
                    for p in range(start[X], start[X + 1]):
                        for a in range(dn):
                            lo[X, a] = min(lo[X, a], num[mem[p], a])
                            hi[X, a] = max(hi[X, a], num[mem[p], a])
                    for a in range(dc):
                        dis[X, a] = np.count_nonzero(cnt[X, a])
                    cost[X] = _class_cost(lo[X], hi[X], dis[X], num_scale, cat_scale)
                    own = slice(start[X], start[X + 1])
                    _gains(mem[own], num, cat, cnt[X], dis[X], cost[X], loB, hiB, num_scale,
                           cat_scale, gain[own])  # fmt: skip
                now[A] = True
                now[B] = True
                changed = True
        if not changed:
            break
        dirty = now
    return label


def diverse_clusters(
    qi: EncodedQI, k: int, target: SensitiveTarget, partition_size: int
) -> tuple[GeneralizationGraph, int]:
    """Classes of ≥ k records satisfying ``target``'s models, by greedy k-member clustering
    (``_cluster``) on segments of about ``partition_size`` records of the lexicographic order.
    Under distinct ℓ-diversity a segment short of the values its classes need first takes
    them from its neighbours (``_rebalance``). A segment whose own values fail a model is
    merged with the next one (the last with the one before); a segment whose clustering fails
    likewise, and if the greedy fails on the whole table, the whole table is one class. The
    classes of each segment, then of each pair of neighbouring segments, are improved by
    swapping members (``_improve``). Returns the biclique graph of the classes and the
    number of segments (a segment's classes may hold records of its neighbours). Raises
    InfeasibleError if the whole table fails a model.
    Time O(n·P·d) for segments of P records (plus O(S·n·d) for S segments short of values);
    memory O(P·(d + slots) + n) (the graph is stored as its classes,
    ``GeneralizationGraph.from_classes``)."""
    target.check_table()
    order = lexicographic_order(qi)
    segments = [order[part] for part in split_even(qi.n, partition_size)]
    segments = _rebalance(segments, qi, k, target)
    segments = _merge_until(segments, lambda ids: bool(target.ok(target.counts(ids)[None])[0]))
    done: list[tuple[np.ndarray, np.ndarray]] = []
    while segments:
        ids = segments.pop(0)
        local = _cluster_segment(qi.take(ids), k, target.take(ids))
        if local is not None:
            done.append((ids, local))
        elif segments:  # merge with the next segment and try again
            segments[0] = np.concatenate([ids, segments[0]])
        elif done:  # the last one: merge with the previous one
            segments.append(np.concatenate([done.pop()[0], ids]))
        elif len(ids) >= k and target.ok(target.counts(ids)[None])[0]:
            # the greedy failed on the whole table, which satisfies the models
            # (check_table): one class of every record is a valid answer, not an infeasibility
            done.append((ids, np.zeros(len(ids), dtype=np.int64)))
        else:
            raise InfeasibleError(
                f"infeasible: no partition into classes of >= {k} records satisfies "
                + " and ".join(describe_model(m) for m in target.models)
            )
    labels = np.empty(qi.n, dtype=np.int64)
    bases = [0]
    for ids, local in done:
        labels[ids] = local + bases[-1]
        bases.append(bases[-1] + int(local.max()) + 1)
    if IMPROVE_PASSES:  # swaps between the classes of neighbouring segments
        for w in range(len(done) - 1):
            ids = np.flatnonzero((labels >= bases[w]) & (labels < bases[w + 2]))
            local = _improved(
                qi.take(ids), target.take(ids), labels[ids] - bases[w], bases[w + 1] - bases[w]
            )
            labels[ids] = local + bases[w]
    return GeneralizationGraph.from_classes(labels), len(done)


def _merge_until(segments: list[np.ndarray], ok: Callable[[np.ndarray], bool]) -> list[np.ndarray]:
    """Merge each segment failing ``ok`` into the next (the last into the previous)."""
    out: list[np.ndarray] = []
    carry: np.ndarray | None = None
    for seg in segments:
        seg = seg if carry is None else np.concatenate([carry, seg])
        if ok(seg):
            out.append(seg)
            carry = None
        else:
            carry = seg
    if carry is not None:
        if out:
            out[-1] = np.concatenate([out[-1], carry])
        else:
            out.append(carry)
    return out


IMPROVE_PASSES = 6
"""Passes of the swap search (``_improve``) on each segment's classes and on each pair of
neighbouring segments' classes."""


def _packed(qi: EncodedQI) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    """(numeric values, local categorical codes) of the records, and the codes' bound."""
    local = [np.unique(qi.cat[:, a], return_inverse=True)[1] for a in range(qi.cat.shape[1])]
    cat = np.column_stack(local).astype(np.int64) if local else np.empty((qi.n, 0), np.int64)
    card_max = int(cat.max()) + 1 if cat.size else 1
    return (np.ascontiguousarray(qi.num), np.ascontiguousarray(cat)), card_max


def _models(target: SensitiveTarget) -> tuple[np.ndarray, ...]:
    return (target.offsets, target.kinds, target.ls, target.cs, target.ts, target.ordered,
            target.q)  # fmt: skip


def _improved(
    qi: EncodedQI, target: SensitiveTarget, labels: np.ndarray, cross: int = 0
) -> np.ndarray:
    """``_improve`` on the classes ``labels`` (0..G−1) of these records."""
    if not IMPROVE_PASSES or qi.has_missing or qi.n == 0:
        return labels
    records, card_max = _packed(qi)
    return _improve(
        labels.copy(),
        records,
        qi.ncp_scales(),
        card_max,
        np.ascontiguousarray(target.codes),
        _models(target),
        IMPROVE_PASSES,
        cross,
    )


def _cluster_segment(qi: EncodedQI, k: int, target: SensitiveTarget) -> np.ndarray | None:
    """Class labels 0..G−1 of the records of one segment (already in scan order), improved by
    the swap search, or None."""
    if qi.n < k:
        return None
    records, card_max = _packed(qi)
    labels = _cluster(
        records, qi.ncp_scales(), card_max, np.ascontiguousarray(target.codes), k, _models(target)
    )
    if labels[0] < 0:
        return None
    return _improved(qi, target, labels)


def _distinct_only(target: SensitiveTarget) -> bool:
    """Whether every sensitive column's model is distinct ℓ-diversity alone."""
    return bool(np.all(target.kinds == 1) and np.all(target.ts < 0))


def _room(counts: np.ndarray, size: int, k: int, target: SensitiveTarget) -> bool:
    """Whether ``size`` records with value ``counts`` (flat slots) leave room for ⌊size/k⌋
    classes each distinct ℓ-diverse in every column: Σ_v min(c_v, g) ≥ ℓ·g per column, for
    g = ⌊size/k⌋ (each class needs ℓ values, a value serves at most c_v classes; enough by a
    flow argument, column by column). O(slots)."""
    g = size // k
    if g == 0:
        return False
    for s in range(len(target.offsets) - 1):
        a, b = int(target.offsets[s]), int(target.offsets[s + 1])
        if int(np.minimum(counts[a:b], g).sum()) < int(target.ls[s]) * g:
            return False
    return True


def _lacks(counts: np.ndarray, size: int, k: int, target: SensitiveTarget, slots) -> bool:
    """Whether a record with value ``slots`` (one per column) brings ``counts`` closer to room
    for ⌊size/k⌋ classes: some column short of room has fewer than g records of its value."""
    g = max(size // k, 1)
    for s in range(len(target.offsets) - 1):
        a, b = int(target.offsets[s]), int(target.offsets[s + 1])
        short = int(np.minimum(counts[a:b], g).sum()) < int(target.ls[s]) * g
        if short and counts[slots[s]] < g:
            return True
    return False


def _profile_cost(qi: EncodedQI, members: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """How far each record of ``rows`` lies from the records ``members`` (GCP weights): per
    numeric QI the distance to their median, per categorical QI the share of members with
    another value; a missing value costs a suppressed cell's weight. O((|members| + |rows|)·d)."""
    num_scale, cat_scale = qi.ncp_scales()
    num_star, cat_star = qi.star_scales()
    cost = np.zeros(len(rows))
    for a in range(qi.num.shape[1]):
        present = ~qi.num_missing[members, a]
        centre = float(np.median(qi.num[members[present], a])) if present.any() else 0.0
        far = np.abs(qi.num[rows, a] - centre) * num_scale[a]
        cost += np.where(qi.num_missing[rows, a], num_star[a], far)
    for a in range(qi.cat.shape[1]):
        seen = np.bincount(qi.cat[members, a], minlength=int(qi.cat[:, a].max()) + 1)
        share = seen / len(members)
        away = (1.0 - share[qi.cat[rows, a]]) * cat_scale[a]
        cost += np.where(qi.cat_missing[rows, a], cat_star[a], away)
    return cost


def _rebalance(
    segments: list[np.ndarray], qi: EncodedQI, k: int, target: SensitiveTarget
) -> list[np.ndarray]:
    """Segments that leave room for classes of about k records (``_room``), for distinct
    ℓ-diversity: a segment of the lexicographic order where some values are rare (Adult's
    young people earn ``>50K`` 1 time in 2,000) would otherwise give classes of hundreds of
    records, each built around one of its few rare values. Such a segment takes, one at a
    time, the record nearest to it (``_profile_cost``) among those of the values it lacks
    whose own segment keeps room without them, until it has room or no record can come.
    Records taken join the end of the segment (the scan order). Other models: unchanged.
    Time O(S·n·d) for S segments lacking room; memory O(n)."""
    if not _distinct_only(target) or len(segments) < 2:
        return segments
    n = sum(len(seg) for seg in segments)
    seg_of = np.empty(n if n == qi.n else qi.n, dtype=np.int64)
    for i, seg in enumerate(segments):
        seg_of[seg] = i
    counts = np.stack([target.counts(seg) for seg in segments])
    sizes = np.array([len(seg) for seg in segments], dtype=np.int64)
    extra: list[list[int]] = [[] for _ in segments]
    # a value slot of each record (one per sensitive column)
    slots = target.codes + target.offsets[:-1][None, :]
    for i, seg in enumerate(segments):
        if _room(counts[i], int(sizes[i]), k, target):
            continue
        # only values short of ⌊size/k⌋ copies can help, and the segment takes at most
        # ℓ·g records (ℓ per class): values with that many copies already never can
        g_max = (int(sizes[i]) + int(target.ls.max()) * (int(sizes[i]) // k + 1)) // k + 1
        rows = np.flatnonzero((seg_of != i) & (counts[i][slots] < g_max).any(axis=1))
        rows = rows[np.argsort(_profile_cost(qi, seg, rows), kind="stable")]
        for r in rows:  # nearest first
            j = int(seg_of[r])
            if j == i or not _lacks(counts[i], int(sizes[i]) + 1, k, target, slots[r]):
                continue
            left = counts[j].copy()
            left[slots[r]] -= 1
            if not _room(left, int(sizes[j]) - 1, k, target):
                continue
            counts[j] = left
            sizes[j] -= 1
            counts[i, slots[r]] += 1
            sizes[i] += 1
            seg_of[r] = i
            extra[i].append(int(r))
            if _room(counts[i], int(sizes[i]), k, target):
                break
    out = []
    for i, seg in enumerate(segments):
        came = np.array(extra[i], dtype=np.int64)
        out.append(np.concatenate([seg[seg_of[seg] == i], came[seg_of[came] == i]]))
    return [seg for seg in out if len(seg)]
