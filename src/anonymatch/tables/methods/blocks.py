"""Blocks: consecutive classes of k … 2k − 1 records along a serpentine lexicographic order,
cut where they cost the least GCP — the structure of a freeform run at large k.

The freeform methods build a partition in k − 1 assignment rounds, which at large k takes
minutes (UCI Adult, k = 1,000: about 15 CPU s a partition of 2,000 records, 15 partitions).
Blocks need no rounds. The records are put in the serpentine lexicographic order of
:func:`serpentine_order` (the order the freeform partitions are cut from, made serpentine so
that neighbours in the order are close on every attribute), and the order is cut into
consecutive classes of k … 2k − 1 records by dynamic programming so that the total GCP of the
classes is the least among all such cuts (:func:`block_labels`). Each class is published as
a class — every member's cells are the class's box, the complete biclique of its records —
so the release is k-anonymous in the classical sense, with none of the insider weakness of
a ring (one known true row reveals nothing certain about the other members' rows), and its
privacy step, verification and risk figures take the cheap paths of class releases (as
Mondrian's).

On UCI Adult (8 QIs) the blocks lose less than the strict Mondrian classes at every k from
50 on, and less than the k cyclic windows of the same order (the structure they replace):
GCP 12.08 / 17.15 / 43.6 % at k = 50 / 100 / 1,000, against 13.19 / 18.75 / 46.52 % for the
windows and 16.27 / 22.35 / 62.96 % for Mondrian's classes; the hungarian rounds lose less
where they can run (9.84 / 14.74 % at k = 50 / 100; docs/results.md, speed at large k).

References
----------
K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by Freeform Generalization", ASIA
CCS 2015 (§8.1: the lexicographic order the freeform partitions are cut from); K. LeFevre,
D. DeWitt, R. Ramakrishnan, "Mondrian multidimensional k-anonymity", ICDE 2006 (classes of
k … 2k − 1 records); R. Bellman, "Dynamic Programming", 1957 (optimal segmentation of a
sequence).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.runner import default_workers
from anonymatch.tables.columns.schema import EncodedQI


def serpentine_order(qi: EncodedQI) -> np.ndarray:
    """The lexicographic order (``order.lexicographic_order``: attributes from fewest to most
    values, records missing the same attributes together) made serpentine: within every group
    of records that agree on the attributes before it, an attribute runs up in one group and
    down in the next, so that the last records of a group and the first of the next, which
    may share a class, are close on it too (a boustrophedon order). On UCI Adult it takes
    0.8–1 point off the GCP of consecutive groups at k = 50, 100 and 1,000 (docs/results.md,
    speed at large k). O(n·d² + n·d log n) time, O(n·d) memory."""
    from anonymatch.tables.order import attribute_cardinalities, lexicographic_order

    order = lexicographic_order(qi)
    if qi.n < 2:
        return order
    priority = np.argsort(attribute_cardinalities(qi), kind="stable")
    keys = qi.keys(ordered=True)[order][:, priority]
    gone = np.hstack([qi.num_missing, qi.cat_missing])[order]
    changed = np.any(gone[1:] != gone[:-1], axis=1)  # the missing pattern: the outer group
    serpent = keys.copy()
    for j in range(1, keys.shape[1]):
        changed |= keys[1:, j - 1] != keys[:-1, j - 1]  # a new group of the first j attributes
        odd = np.concatenate([[0], np.cumsum(changed)]) % 2 == 1
        serpent[odd, j] = -keys[odd, j]
    pattern = np.concatenate([[0], np.cumsum(np.any(gone[1:] != gone[:-1], axis=1))])
    columns = [serpent[:, j] for j in range(keys.shape[1] - 1, -1, -1)]
    return order[np.lexsort((*columns, pattern))].astype(np.int64)


PARALLEL_MIN_K = 100
"""From this k on the cut's ends are priced on a thread pool (each run of k consecutive ends is
independent given the cuts before it); below, one thread, as the work per run is too small."""


def block_labels(
    qi: EncodedQI, k: int, progress: bool = False, workers: int | None = None
) -> np.ndarray:
    """Each record's class: the serpentine order (:func:`serpentine_order`) cut into
    consecutive classes of k … 2k − 1 records with the least total GCP.

    Parameters
    ----------
    qi : EncodedQI
        The n records (n ≥ k).
    k : int
        The level (≥ 1).
    progress : bool, default False
        Show a progress bar (in records) on stderr when the cut takes more than a second.
    workers : int, optional
        Threads pricing the ends from k = ``PARALLEL_MIN_K`` on (None: one per core).

    Returns
    -------
    labels : (n,) int64 array
        Class 0, 1, … of each record, numbered along the order.

    Raises
    ------
    ValueError
        n < k.

    Notes
    -----
    A class's cost is its size times the weighted NCP of its box, as ``metrics.
    information_loss`` scores it: the span of the present values of a numeric attribute (NCP
    1, a ``*``, when a member misses it), the number of distinct values less one of a
    categorical one (``*`` likewise). For a categorical attribute with a published hierarchy
    the cell is the values' closure under the hierarchy, which the count of distinct values
    only approximates (the cut is then near-optimal; the published cells and the loss the
    manifest reports are the true ones). Classes of 2k or more records never need to be
    considered: splitting one into two of k or more never makes its cost larger.

    The dynamic program prices every end e = k … n by extending its last class backwards
    over at most 2k − 1 records; the ends e … e + k − 1 read only the least costs of the ends
    before e, so each such run is split among the threads (the same cut whatever their
    number). Time O(n·k·d) (UCI Adult, 8 QIs: 0.05 s at k = 50, 0.4 s at k = 1,000 on one
    core), memory O(n + threads·d·|largest domain|). The cut is deterministic.
    """
    n = qi.n
    if n < k or k < 1:
        raise ValueError(f"blocks need 1 ≤ k ≤ n records, got k = {k}, n = {n}")
    order = serpentine_order(qi)
    num_scale, cat_scale = qi.ncp_scales()
    num_star, cat_star = qi.star_scales()
    card = qi.cat_card.astype(np.int64) if len(qi.cat_card) else np.zeros(0, np.int64)
    data = (
        np.ascontiguousarray(qi.num[order], dtype=np.float64),
        np.ascontiguousarray(qi.num_missing[order]),
        np.ascontiguousarray(qi.cat[order], dtype=np.int64),
        np.ascontiguousarray(qi.cat_missing[order]),
        card,
        num_scale,
        cat_scale,
        num_star,
        cat_star,
    )
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    start = np.full(n + 1, -1, np.int64)
    threads = 1 if k < PARALLEL_MIN_K else max(1, workers or default_workers())
    width = max([1, *card.tolist()])
    stamps = [np.full((max(len(card), 1), width), -1, np.int64) for _ in range(threads)]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n + 1 - k, desc="blocks", unit="record", delay=1.0, leave=False)
    pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
    try:
        for first in range(k, n + 1, k):  # the ends first … first + k − 1: independent
            last = min(first + k, n + 1)
            if pool is None:
                _price_ends(*data, k, best, start, stamps[0], first, last)
            else:
                ends = np.linspace(first, last, threads + 1).astype(np.int64)
                jobs = [(stamps[t], ends[t], ends[t + 1]) for t in range(threads)]
                list(pool.map(lambda job: _price_ends(*data, k, best, start, *job), jobs))
            if bar is not None:
                bar.update(last - first)
    finally:
        if pool is not None:
            pool.shutdown()
        if bar is not None:
            bar.close()
    cuts = _trace(start, n)
    labels = np.empty(n, np.int64)
    labels[order] = np.repeat(np.arange(len(cuts) - 1), np.diff(cuts))
    return labels


def blocks(qi: EncodedQI, k: int) -> GeneralizationGraph:
    """The blocks of :func:`block_labels` as a generalization graph stored as classes
    (``GeneralizationGraph.from_classes``: every record generalized to its class's box, the
    complete biclique of the class). O(n·k·d) time, O(n) memory beyond the order."""
    return GeneralizationGraph.from_classes(block_labels(qi, k))


@njit(cache=True, nogil=True)
def _price_ends(
    num, num_missing, cat, cat_missing, card, num_scale, cat_scale, num_star, cat_star, k,
    best, start, stamp, first, last,
):  # fmt: skip  # pragma: no cover - compiled
    """The least cost ``best[e]`` of the first e records (rows in order) and the start
    ``start[e]`` of its last class, for the ends e = ``first`` … ``last`` − 1 (see
    :func:`block_labels`): the class [s, e) of k … 2k − 1 records extended one record at a
    time backwards from e − 1 with its box kept up to date (bounds, and per categorical
    attribute a stamp per value: ``stamp``, this thread's, keyed by e). Reads ``best`` below
    ``first`` − k + 1 only. O((last − first)·k·d) time."""
    dn, dc = num.shape[1], cat.shape[1]
    big = np.inf
    lo = np.empty(dn)
    hi = np.empty(dn)
    gone_num = np.zeros(dn, np.bool_)
    gone_cat = np.zeros(dc, np.bool_)
    distinct = np.zeros(dc, np.int64)
    for e in range(first, last):
        for a in range(dn):
            lo[a], hi[a], gone_num[a] = big, -big, False
        for a in range(dc):
            distinct[a], gone_cat[a] = 0, False
        for s in range(e - 1, max(-1, e - 2 * k), -1):
            for a in range(dn):
                if num_missing[s, a]:
                    gone_num[a] = True
                else:
                    v = num[s, a]
                    lo[a] = min(lo[a], v)
                    hi[a] = max(hi[a], v)
            for a in range(dc):
                if cat_missing[s, a]:
                    gone_cat[a] = True
                elif stamp[a, cat[s, a]] != e:
                    stamp[a, cat[s, a]] = e
                    distinct[a] += 1
            size = e - s
            if size < k or best[s] == big:
                continue
            ncp = 0.0
            for a in range(dn):
                ncp += num_star[a] if gone_num[a] else (hi[a] - lo[a]) * num_scale[a]
            for a in range(dc):
                ncp += cat_star[a] if gone_cat[a] else max(distinct[a] - 1, 0) * cat_scale[a]
            cost = best[s] + size * ncp
            if cost < best[e]:
                best[e] = cost
                start[e] = s


@njit(cache=True, nogil=True)
def _trace(start, n):  # pragma: no cover - compiled
    """The ends 0 = c₀ < c₁ < … < c_G = n of the cut whose classes end where ``start``
    points back from n. O(n)."""
    count = 0
    e = n
    while e > 0:
        count += 1
        e = start[e]
    cuts = np.empty(count + 1, np.int64)
    e = n
    for i in range(count, -1, -1):
        cuts[i] = e
        if e > 0:
            e = start[e]
    return cuts
