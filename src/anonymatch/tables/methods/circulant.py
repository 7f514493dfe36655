"""Freeform releases under ℓ-diversity and t-closeness: sensitive-interleaved rings.

A ring over m records in ring order x₀ … x_{m−1} joins original x_p to the published rows
p, p−1, …, p−k+1 (mod m) (``ring.ring_edges``): published row j generalizes the k originals
x_j … x_{j+k−1}. Its k *shifts* σ_t (x_p → row p − t, t = 0 … k−1) are k disjoint perfect
matchings, and the privacy step of this construction draws one of them uniformly
(``shift_assignment``), instead of a random decomposition. Under σ_t row j shows the value of
x_{j+t}, so the rows joined to x_p show the values of the k consecutive originals
x_{p−k+1+t} … x_{p+t}: a window of the ring order. Hence if **every cyclic window of k
consecutive records satisfies the model**, every person's neighbours satisfy it under every
draw — and the condition reads the same on the published rows (their values are the ring's
values rotated by t), which is what the verifier checks from the release and the ring order
of the manifest (``tables.models.certified``; docs/guarantees/sensitive.md §6).

Construction (ours; the window idea is Xue et al.'s for transactions): within each partition
of the lexicographic order (the partitions of plain k), ``_nearest_ring`` walks from the first
record to the nearest unplaced one (``distances``: the NCP of generalizing one record to cover
the other) among those whose placement keeps the window just completed within the model and the
next window completable (``_completable``); ``_repair`` drops the records of any window that
fails across the seam and inserts the records left at the cheapest place where the windows
stay within the model. The classes of ``diverse.diverse_clusters`` are built first; a
partition that they did not merge with a neighbour gets the ring instead where the ring costs
less GCP. Tried and dropped
(docs/results.md): scanning the lexicographic order with a look-ahead, placing the most
abundant value first, merging the values in proportion — all far costlier.

References: K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform
generalization", ASIA CCS 2015 (the graph, Theorem 2.3: 1/k per edge for any decomposition);
M. Xue, P. Karras, C. Raïssi, J. Vaidya, K.-L. Tan, "Anonymizing set-valued data by
nonreciprocal recoding", KDD 2012 (rings, windows); Machanavajjhala et al., TKDD 2007 and Li
et al., ICDE 2007 (the models).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods.ring import ring_edges
from anonymatch.tables.models.sensitive import SensitiveTarget, row_ok


def windows_ok(codes: np.ndarray, k: int, target: SensitiveTarget) -> bool:
    """Whether every cyclic window of k consecutive entries of ``codes`` (ring order, one column
    per model as in ``target.codes``) satisfies ``target``'s models. O(m·(k·s + slots))."""
    m = codes.shape[0]
    if m < k:
        return False
    idx = (np.arange(m)[:, None] + np.arange(k)[None, :]) % m
    counts = np.zeros((m, int(target.offsets[-1])), np.int64)
    for c in range(codes.shape[1]):
        np.add.at(
            counts, (np.repeat(np.arange(m), k), target.offsets[c] + codes[idx, c].ravel()), 1
        )
    return bool(target.ok(counts).all())


REPAIR_SHARE = 10
"""``ring_order`` repairs a nearest-neighbour ring only if it left at most 1/REPAIR_SHARE of the
records (or 2k) unplaced: the repair costs O(k²) window checks per record and place, and a
ring that needs more is seldom cheaper than the classes (docs/results.md)."""


@dataclass(frozen=True)
class RingRelease:
    """The graph of a sensitive build, with what the privacy step and the
    certificate need: ``rings`` (each the original record ids in ring order; published record
    ``rings[r][p]`` generalizes originals ``rings[r][p … p+k−1]``), ``classes`` (the other
    records' class label, −1 on ring records) and the number of partitions."""

    graph: GeneralizationGraph
    rings: tuple[np.ndarray, ...]
    classes: np.ndarray
    parts: int
    k: int


def sensitive_build(
    qi: EncodedQI, k: int, target: SensitiveTarget, size: int, prefer_rings: bool = False
) -> RingRelease:
    """The class construction (``diverse.diverse_clusters``, partitions of ``size`` records of
    the lexicographic order, merged where a partition cannot satisfy the models alone), then,
    in every partition that it did not merge (its records are a union of its classes), a
    sensitive ring (``ring_order``) instead of the classes where the ring costs less GCP — or
    wherever one exists if ``prefer_rings`` (tests, measurements). GCP is a sum over records
    of their rows' loss, and a partition's rows generalize its own records only, so the result
    never loses more than the classes. Raises InfeasibleError if the table itself fails a model.

    Time: the class construction's O(n·P·d) plus O(P²·(d + slots)) per partition of P records
    for the ring (and its repair); memory O(P²) per partition (the distances), O(n·k) for the
    graph."""
    from anonymatch.tables.methods import partitions
    from anonymatch.tables.methods.diverse import diverse_clusters
    from anonymatch.tables.metrics import information_loss
    from anonymatch.tables.recode import recode

    class_graph, n_parts = diverse_clusters(qi, k, target, size)
    classes = _labels_of(class_graph)
    rings: list[np.ndarray] = []
    sizes = np.bincount(classes)
    for ids in partitions(qi, size):
        labels = classes[ids]
        if np.bincount(labels, minlength=len(sizes))[labels].sum() != sizes[labels].sum():
            continue  # merged with a neighbour: its classes reach outside the partition
        local = qi.take(ids)
        order = ring_order(local, k, target.take(ids))
        if order is None:
            continue
        if not prefer_rings:
            ring_gcp = information_loss(recode(_ring_graph(order, k), local), local).gcp
            own = GeneralizationGraph.from_classes(np.unique(labels, return_inverse=True)[1])
            if information_loss(recode(own, local), local).gcp <= ring_gcp:
                continue
        rings.append(ids[order])
        classes[ids] = -1
    if not rings:  # the class construction everywhere: its own class graph
        return RingRelease(class_graph, (), _labels_of(class_graph), n_parts, k)
    return RingRelease(_assemble(rings, classes, k, qi.n), tuple(rings), classes, n_parts, k)


def cheaper_ring(
    qi: EncodedQI, k: int, target: SensitiveTarget, classes: GeneralizationGraph
) -> tuple[np.ndarray, GeneralizationGraph] | None:
    """The choice of ``sensitive_build`` for one partition of its own (the streamed path's,
    never merged): the ring order of ``qi``'s records (``ring_order``) and its graph if a ring
    exists and loses less GCP than the partition's ``classes``; else None. The ring's published
    record ``order[p]`` generalizes the records ``order[p … p+k−1]``. Time and memory: those
    of ``ring_order``, plus two recodings O(m·k·d)."""
    from anonymatch.tables.metrics import information_loss
    from anonymatch.tables.recode import recode

    order = ring_order(qi, k, target)
    if order is None:
        return None
    graph = _ring_graph(order, k)
    if information_loss(recode(classes, qi), qi).gcp <= information_loss(recode(graph, qi), qi).gcp:
        return None
    return order, graph


def ring_order(qi: EncodedQI, k: int, target: SensitiveTarget) -> np.ndarray | None:
    """Positions 0 … m−1 of the records in a ring order whose every cyclic window of k
    records satisfies ``target``'s models, or None: the constrained nearest-neighbour ring
    (``_nearest_ring``) on the records' distances (``distances``), its left-overs inserted by
    ``_repair``. O(m²·(d + slots)) time, O(m²) memory."""
    if qi.n < k or not target.ok(target.counts(np.arange(target.n))[None])[0]:
        return None
    dist = distances(qi)
    near = np.argsort(dist, axis=1, kind="stable")
    codes = np.ascontiguousarray(target.codes)
    models = (
        target.offsets,
        target.kinds,
        target.ls,
        target.cs,
        target.ts,
        target.ordered,
        target.q,
    )
    order, placed = _nearest_ring(near, codes, k, models)
    if qi.n - placed > max(2 * k, qi.n // REPAIR_SHARE):  # too many left: not worth it
        return None
    if placed < qi.n or not windows_ok(codes[order], k, target):
        order, ok = _repair(dist, codes, k, order, placed, models)
        if not ok:
            return None
    return order


def distances(qi: EncodedQI) -> np.ndarray:
    """m × m distances between records: the NCP of generalizing one to cover the other, summed
    over the QIs (range over the domain for a numeric QI, the categorical weight of a
    differing value; a missing value differs from every value). O(m²·d)."""
    num_scale, cat_scale = qi.ncp_scales()
    m = qi.n
    dist = np.zeros((m, m))
    for a in range(qi.num.shape[1]):
        col = np.where(qi.num_missing[:, a], 0.0, qi.num[:, a])
        dist += np.abs(col[:, None] - col[None, :]) * num_scale[a]
        miss = qi.num_missing[:, a]
        if miss.any():
            dist += (miss[:, None] != miss[None, :]) * num_scale[a]
    for a in range(qi.cat.shape[1]):
        col = np.where(qi.cat_missing[:, a], -1, qi.cat[:, a])
        dist += (col[:, None] != col[None, :]) * cat_scale[a]
    return dist


def _ring_graph(order: np.ndarray, k: int) -> GeneralizationGraph:
    rows, cols = ring_edges(order, np.array([0, len(order)]), k)
    return GeneralizationGraph.from_edges(rows, cols, len(order))


def _labels_of(graph: GeneralizationGraph) -> np.ndarray:
    classes = graph.classes
    assert classes is not None, "diverse_clusters returns a class graph"
    return np.asarray(classes[0], np.int64)


def _assemble(rings: list[np.ndarray], classes: np.ndarray, k: int, n: int) -> GeneralizationGraph:
    """One graph: the ring edges and a complete biclique per class. O(n·k + Σ class²)."""
    rows, cols = [], []
    if rings:
        members = np.concatenate(rings)
        bounds = np.concatenate([[0], np.cumsum([len(r) for r in rings])]).astype(np.int64)
        r, c = ring_edges(members, bounds, k)
        rows.append(r)
        cols.append(c)
    in_class = np.flatnonzero(classes >= 0)
    if len(in_class):
        lab = classes[in_class]
        sort = np.argsort(lab, kind="stable")
        ids, lab = in_class[sort], lab[sort]
        starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
        sizes = np.diff(np.r_[starts, len(lab)])
        for s, z in zip(starts.tolist(), sizes.tolist(), strict=True):
            members = ids[s : s + z]
            rows.append(np.repeat(members, z))
            cols.append(np.tile(members, z))
    return GeneralizationGraph.from_edges(np.concatenate(rows), np.concatenate(cols), n)


def shift_assignment(release: RingRelease, rng: np.random.Generator) -> np.ndarray:
    """The privacy step of a ring release: one shift per ring, uniform among its k (ring
    record at position p → published record at position p − t), and a uniformly random
    permutation within each class (``core.classes.choose_class_assignment``). Returns ``a``
    with ``a[i]`` the published record whose true preimage is original i. O(n log n)."""
    from anonymatch.core.classes import choose_class_assignment

    n = len(release.classes)
    out = np.empty(n, np.int64)
    k = release.k
    for ring in release.rings:
        t = int(rng.integers(k))
        out[ring] = ring[(np.arange(len(ring)) - t) % len(ring)]
    in_class = np.flatnonzero(release.classes >= 0)
    if len(in_class):
        _, labels = np.unique(release.classes[in_class], return_inverse=True)
        out[in_class] = in_class[choose_class_assignment(labels.astype(np.int64), rng)]
    return out


@njit(cache=True, nogil=True)
def _completable(counts, free, models, scratch):  # pragma: no cover - compiled
    """Whether a window holding ``counts`` and ``free`` more records can plausibly satisfy
    the models: each column gets ``free`` greedy additions — to the value furthest below its
    table share (t-closeness) or to the rarest value (ℓ-diversity: water-filling, which
    maximizes distinct values and entropy) — and the result is checked. A pruning heuristic:
    the exact check is made on every complete window. ``models`` = (offsets, kinds, ls, cs, ts,
    ordered, q), the packed models of ``SensitiveTarget`` (as in ``diverse._cluster``).
    O(free·slots)."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    scratch[:] = counts
    for c in range(offsets.shape[0] - 1):
        a, b = offsets[c], offsets[c + 1]
        for _ in range(free):
            total = 0
            for v in range(a, b):
                total += scratch[v]
            best, pick = np.inf, a
            for v in range(a, b):
                key = scratch[v] - q[v] * (total + 1) if ts[c] >= 0 else float(scratch[v])
                if key < best:
                    best, pick = key, v
            scratch[pick] += 1
    return row_ok(scratch, offsets, kinds, ls, cs, ts, ordered, q)


@njit(cache=True, nogil=True)
def _nearest_ring(near, codes, k, models):  # pragma: no cover - compiled
    """Constrained nearest-neighbour ring: start at record 0; at each step place the unplaced
    record nearest to the last one placed (``near[i]``: all records by distance from i) whose
    placement keeps the window just completed within the models and leaves the next window
    completable (``_completable``; before the first window is complete, that it can still be
    completed). Returns (order, placed): the first ``placed`` entries are valid; the rest is
    left to ``_repair``. O(m²·slots) time in the worst case, O(m + slots) memory."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    m, s = codes.shape[0], codes.shape[1]
    slots = offsets[-1]
    order = np.empty(m, np.int64)
    used = np.zeros(m, np.bool_)
    window = np.zeros(slots, np.int64)
    trial = np.empty(slots, np.int64)
    scratch = np.empty(slots, np.int64)
    last = 0
    for step in range(m):
        choice = -1
        for idx in range(m):
            r = near[last, idx] if step > 0 else idx
            if used[r]:
                continue
            trial[:] = window
            for c in range(s):
                trial[offsets[c] + codes[r, c]] += 1
            if step + 1 >= k:
                if not row_ok(trial, offsets, kinds, ls, cs, ts, ordered, q):
                    continue
                # the next window keeps the last k − 1 of these: can one record complete it?
                old = order[step + 1 - k]
                for c in range(s):
                    trial[offsets[c] + codes[old, c]] -= 1
                if not _completable(trial, 1, models, scratch):
                    continue
            elif not _completable(trial, k - step - 1, models, scratch):
                continue
            choice = r
            break
        if choice < 0:
            return order, step
        used[choice] = True
        order[step] = choice
        last = choice
        for c in range(s):
            window[offsets[c] + codes[choice, c]] += 1
        if step + 1 >= k:
            old = order[step + 1 - k]
            for c in range(s):
                window[offsets[c] + codes[old, c]] -= 1
    return order, m


@njit(cache=True, nogil=True)
def _window_ok_at(seq, length, start, k, codes, window, models):  # pragma: no cover
    """Whether the cyclic window of k entries of ``seq[:length]`` from ``start`` is within
    the models (``window``: scratch counts). O(k·s + slots)."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    window[:] = 0
    for a in range(k):
        rec = seq[(start + a) % length]
        for c in range(codes.shape[1]):
            window[offsets[c] + codes[rec, c]] += 1
    return row_ok(window, offsets, kinds, ls, cs, ts, ordered, q)


@njit(cache=True, nogil=True)
def _repair(dist, codes, k, order, placed, models):  # pragma: no cover - compiled
    """Insert the records ``_nearest_ring`` left unplaced (those not in ``order[:placed]``)
    one by one at the cheapest place of the ring (distance added) where the k windows that
    contain them are within the models, then check every cyclic window. Returns (order, ok).
    O(T·m·k·(k·s + slots)) for T records to insert."""
    offsets, kinds, ls, cs, ts, ordered, q = models
    m = codes.shape[0]
    slots = offsets[-1]
    window = np.zeros(slots, np.int64)
    seq = np.empty(m + 1, np.int64)
    seq[:placed] = order[:placed]
    used = np.zeros(m, np.bool_)
    for p in range(placed):
        used[order[p]] = True
    length = placed
    # drop the records of every window of the prefix ring that fails (its seam was never
    # checked), until the ring left is valid everywhere; they are inserted again below
    changed = True
    while changed and length >= k:
        changed = False
        for start in range(length):
            if not _window_ok_at(seq, length, start, k, codes, window, models):
                for a in range(k):
                    used[seq[(start + a) % length]] = False
                keep = 0
                for p in range(length):
                    if used[seq[p]]:
                        seq[keep] = seq[p]
                        keep += 1
                length = keep
                changed = True
                break
    if length < k:
        for p in range(length):
            used[seq[p]] = False
        length = 0
    for x in range(m):
        if used[x]:
            continue
        best, best_cost = -1, np.inf
        for p in range(length):  # insert x after position p
            nxt = seq[(p + 1) % length] if length > 0 else x
            cost = dist[seq[p], x] + dist[x, nxt] - dist[seq[p], nxt] if length > 0 else 0.0
            if cost >= best_cost:
                continue
            if length + 1 >= k:
                # the trial sequence: seq[:p+1], x, seq[p+1:length]
                seq[length] = x
                fine = True
                tmp = np.empty(length + 1, np.int64)
                tmp[: p + 1] = seq[: p + 1]
                tmp[p + 1] = x
                tmp[p + 2 : length + 1] = seq[p + 1 : length]
                for j in range(k):  # windows containing position p + 1
                    start = (p + 1 - j) % (length + 1)
                    if not _window_ok_at(tmp, length + 1, start, k, codes, window, models):
                        fine = False
                        break
                if not fine:
                    continue
            best, best_cost = p, cost
        if best < 0:
            if length == 0:
                best = -1
            else:
                return seq[:m], False
        seq[best + 2 : length + 1] = seq[best + 1 : length].copy()
        seq[best + 1] = x
        length += 1
        used[x] = True
    for start in range(m):
        if not _window_ok_at(seq, m, start, k, codes, window, models):
            return seq[:m], False
    return seq[:m], True
