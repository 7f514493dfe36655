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
  model is merged with the next one.
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
def _helps(counts, size, k, codes_r, models):  # pragma: no cover - compiled
    """How many unmet columns record r (values ``codes_r``) does *not* help: a new value
    (distinct ℓ-diversity, only once the missing values fill the class's free slots), a value
    below a 1/ℓ share (entropy, recursive), a value below its table share (t-closeness).
    ``models`` = (offsets, kinds, ls, cs, ts, ordered, q): the sensitive models per column,
    as in ``_cluster``."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    miss = 0
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        if column_ok(counts[a:b], kinds[s], ls[s], cs[s], ts[s], ordered[s], q[a:b]):
            continue
        have = counts[a + codes_r[s]]
        good = True
        if kinds[s] == 1 and have > 0:
            distinct = 0
            for v in range(a, b):
                if counts[v] > 0:
                    distinct += 1
            good = ls[s] - distinct < k - size  # slack left: the cheapest record may be taken
        if (kinds[s] == 2 or kinds[s] == 3) and (have + 1) * ls[s] > size + 1:
            good = False
        if ts[s] >= 0 and size > 0 and have >= q[a + codes_r[s]] * (size + 1):
            good = False
        if not good:
            miss += 1
    return miss


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
def _cluster(records, scales, card_max, codes, k, models):  # pragma: no cover - compiled
    """Greedy k-member clustering of m records (in scan order) into classes satisfying the
    model. Returns the class of each record, or an array of −1 if it fails. O(m²·d).

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
        size = 1
        while not (size >= k and row_ok(gcnt[g], offsets, kinds, ls, cs, ts, ordered, q)):
            if size >= 3 * k:  # the records left cannot complete it: they become leftovers
                break
            best, best_miss, best_cost = -1, 1 << 30, np.inf
            for r in range(seed + 1, m):
                if label[r] >= 0:
                    continue
                miss = _helps(gcnt[g], size, k, codes[r], models)
                if miss > best_miss:
                    continue
                cost = _cost(r, glo[g], ghi[g], num, num_scale, cat, cat_scale, gmem[g])
                if miss < best_miss or cost < best_cost:
                    best, best_miss, best_cost = r, miss, cost
            if best < 0:
                break
            members.append(best)
            label[best] = g
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
                label[r] = -1
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


def diverse_clusters(
    qi: EncodedQI, k: int, target: SensitiveTarget, partition_size: int
) -> tuple[GeneralizationGraph, int]:
    """Classes of ≥ k records satisfying ``target``'s models, by greedy k-member clustering
    (``_cluster``) on segments of about ``partition_size`` records of the lexicographic order.
    A segment whose own values fail a model is merged with the next one (the last with the one
    before); a segment whose clustering fails likewise, and if the greedy fails on the whole
    table, the whole table is one class. Returns the biclique graph of the classes and the
    number of segments. Raises InfeasibleError if the whole table fails a model.
    Time O(n·P·d) for segments of P records; memory O(P·(d + slots) + n) (the graph is
    stored as its classes, ``GeneralizationGraph.from_classes``)."""
    target.check_table()
    order = lexicographic_order(qi)
    segments = [order[part] for part in split_even(qi.n, partition_size)]
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
    base = 0
    for ids, local in done:
        labels[ids] = local + base
        base += int(local.max()) + 1
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


def _cluster_segment(qi: EncodedQI, k: int, target: SensitiveTarget) -> np.ndarray | None:
    """Class labels 0..G−1 of the records of one segment (already in scan order), or None."""
    if qi.n < k:
        return None
    local = [np.unique(qi.cat[:, a], return_inverse=True)[1] for a in range(qi.cat.shape[1])]
    cat = np.column_stack(local).astype(np.int64) if local else np.empty((qi.n, 0), np.int64)
    card_max = int(cat.max()) + 1 if cat.size else 1
    num_scale, cat_scale = qi.ncp_scales()
    labels = _cluster(
        (np.ascontiguousarray(qi.num), np.ascontiguousarray(cat)),
        (num_scale, cat_scale),
        card_max,
        np.ascontiguousarray(target.codes),
        k,
        (target.offsets, target.kinds, target.ls, target.cs, target.ts, target.ordered, target.q),
    )
    return None if labels[0] < 0 else labels
