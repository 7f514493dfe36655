"""Ring generalization over small groups: the NH baseline of Doka et al. §8.

Reference: R. C.-W. Wong, N. Mamoulis, D. W.-L. Cheung, "Non-homogeneous generalization in
privacy preserving data publishing", SIGMOD 2010 — the ring construction, run as Doka et al.
("k-Anonymization by Freeform Generalization", §8) run it: the table is first partitioned into
groups of k…2k−1 records, then each group gets a ring. Within a group of m records in
lexicographic order, published record q generalizes the originals at positions q, q+1, …,
q+k−1 (mod m); equivalently original p matches the published records p, p−1, …, p−k+1 (mod m).
The graph is k-regular (m ≥ k, so the k positions are distinct) and contains the self-edges.

Partitioning (departure: Wong et al. and Doka do not fix one): relaxed multidimensional
Mondrian (LeFevre et al., ICDE 2006), shared with the Mondrian baseline in ``_partition``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods._partition import Partition, relaxed_partition, segment_distinct
from anonymatch.tables.recode import CatSets, GeneralizedQI, NodeCells, _close


def ring(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """NH ring generalization over a relaxed Mondrian partition into groups of k…2k−1 records.

    Parameters: ``qi`` the encoded QIs of the n records, ``k`` the anonymity parameter,
    ``options`` unused. Returns a k-regular generalization graph with the self-edges (n == k:
    the complete biclique). Raises ``InfeasibleError`` if n < k, ``InputError`` if k < 1.

    Complexity: O(d·n log n · log(n/k)) for the partition, O(d·n log n) for the orders within
    groups, O(k·n) edges; memory O(n·(d + k)).
    """
    n = qi.n
    check_level_fits(k, n, records="records to anonymize")  # k ≥ 1: the job checked it
    part = relaxed_partition(qi, k)
    members = lexicographic_within_groups(part)
    rows, cols = ring_edges(members, part.bounds, k)
    return GeneralizationGraph.from_edges(rows, cols, n)


def lexicographic_within_groups(part: Partition) -> np.ndarray:
    """The records of every group of ``part`` in lexicographic order, groups kept in place.

    Group by group this equals ``group[lexicographic_order(qi.take(group))]`` for
    ``group = np.sort(records of the group)``: attributes ordered by their number of distinct
    values within the group (fewest first, ties in column order, numeric first), ties between
    records in increasing record id. Computed for all groups at once with one lexsort on
    (group, per-group attribute keys), on the dense ranks ``part.ranks`` (same order as the
    values). O(d·n log n) time, O(n·d) memory.
    """
    n, n_groups = len(part.order), part.n_groups
    if n == 0:
        return part.order.copy()
    seg = part.group_of_position()
    by_id = np.argsort(seg * n + part.order, kind="stable")  # record ids ascending per group
    rec, ranks = part.order[by_id], part.ranks[by_id]
    d = ranks.shape[1]
    if d == 0:
        return rec
    card = np.column_stack(
        [segment_distinct(seg, ranks[:, a], int(part.modulus[a]), n_groups) for a in range(d)]
    )
    priority = np.argsort(card, axis=1, kind="stable")  # per group, fewest values first
    rows = np.arange(n)
    keys = [ranks[rows, priority[seg, j]] for j in range(d)]
    # np.lexsort: last key is the primary one (group, then priority[0], priority[1], ...).
    return rec[np.lexsort((*keys[::-1], seg))]


def ring_edges(members: np.ndarray, bounds: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Edges of a ring in every group: group g is ``members[bounds[g]:bounds[g + 1]]`` (each of
    ≥ k records, in ring order); the original at position p is joined to the published records
    at positions p, p−1, …, p−k+1 (mod the group size). Returns (rows, cols) of k·n edges, the
    first n being the self-edges. O(k·n)."""
    sizes = np.diff(bounds)
    if np.any(sizes < k):
        raise ValueError("every ring group needs at least k records")
    start = np.repeat(bounds[:-1], sizes)
    size = np.repeat(sizes, sizes)
    local = np.arange(len(members), dtype=np.int64) - start
    rows = np.tile(members, k)
    cols = np.concatenate([members[start + (local - t) % size] for t in range(k)])
    return rows, cols


def windows(qi: EncodedQI, k: int) -> GeneralizationGraph:
    """The k cyclic shifts of a serpentine lexicographic order of ``qi``'s records: a ring
    over the whole of them, the fast structure of a freeform partition at large k or past a
    time limit.

    In the order x₀ … x_{m−1} of :func:`windows_order` (the lexicographic order the freeform
    shell works in, made serpentine), published record x_j generalizes the originals x_j … x_{j+k−1}
    (mod m): its cell is the box of a window of k consecutive records. The graph is the union
    of the k shifts x_p → x_{p−t} (t = 0 … k−1), k disjoint perfect matchings, so it is
    k-regular with the self-edges (m ≥ k), as a freeform partition's graph is, and the
    verifier proves it from the cells like any other.

    Parameters
    ----------
    qi : EncodedQI
        The m records of one partition (m ≥ k).
    k : int
        The level.

    Returns
    -------
    GeneralizationGraph
        k·m edges, in the records' numbering.

    Raises
    ------
    ValueError
        m < k (a partition always holds at least 2k records).

    Notes
    -----
    Time O(m·d log m) for the order plus O(k·m) for the edges; memory O(k·m). No assignment
    rounds: on UCI Adult it costs about 1 % of the hungarian rounds' time at k = 50 and loses
    4 to 5 points of GCP there (docs/results.md, speed at large k), less than the classes
    of ``mondrian`` from k = 50 on.

    References
    ----------
    R. C.-W. Wong et al., SIGMOD 2010 (rings); M. Xue et al., KDD 2012 (rings along an order
    of the records); K. Doka et al., ASIA CCS 2015, Theorem 2.3 (any k disjoint assignments).
    """
    return windows_of(windows_order(qi), k)


def windows_order(qi: EncodedQI) -> np.ndarray:
    """The ring order of :func:`windows`: the lexicographic order
    (``order.lexicographic_order``: attributes from fewest to most values, records missing
    the same attributes together) made serpentine — within every group of records that agree
    on the attributes before it, an attribute runs up in one group and down in the next, so
    that the last records of a group and the first of the next, which share a window, are
    close on it too (a boustrophedon order). On UCI Adult it takes 0.8–1 point off the
    windows' GCP at k = 50, 100 and 1,000 (docs/results.md, speed at large k).
    O(n·d² + n·d log n) time, O(n·d) memory."""
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


def windows_of(order: np.ndarray, k: int) -> GeneralizationGraph:
    """The windows graph of :func:`windows` for the records in ring order ``order`` (a
    permutation of 0 … m−1, m ≥ k). O(k·m)."""
    rows, cols = ring_edges(order, np.array([0, len(order)], dtype=np.int64), k)
    return GeneralizationGraph.from_edges(rows, cols, len(order))


def windows_graph(rings: tuple[np.ndarray, ...], k: int, n: int) -> GeneralizationGraph:
    """The windows of every ring at once, when the rings cover all n records (each ring a
    part's record ids in ring order, m ≥ k): the same graph as assembling
    :func:`windows_of` part by part (``GeneralizationGraph.block_diagonal``), built as CSR
    directly — each original's k published records, sorted — instead of through k·n COO
    edges sorted twice (at k = 2,000 on Adult, 60 M edges: most of the build). The parts are
    the graph's blocks. O(k·n log k) time, O(k·n) memory (int32 where it fits)."""
    index = np.int32 if n * k < 2**31 else np.int64
    cols = np.empty((n, k), index)
    part = np.empty(n, np.int64)
    for p, ring in enumerate(rings):
        m = len(ring)
        shifted = (np.arange(m)[:, None] - np.arange(k)[None, :]) % m
        cols[ring] = ring[shifted]
        part[ring] = p
    cols.sort(axis=1)
    indptr = np.arange(0, n * k + 1, k, dtype=index)
    matrix = sp.csr_array((np.ones(n * k, np.int8), cols.reshape(-1), indptr), shape=(n, n))
    return GeneralizationGraph.from_parts(matrix, part)


def draw_assignment(
    graph: GeneralizationGraph,
    rings: tuple[np.ndarray, ...],
    k: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The privacy step of a graph some of whose parts are windows (``rings``: each part's
    record ids in ring order, published record ``ring[p]`` generalizing originals
    ``ring[p … p+k−1]``): one of each ring's k shifts, uniformly (ring record at position p →
    published record at position p − t, as ``circulant.shift_assignment``), and
    ``core.classes.privacy_step`` on the other parts, whose edges never reach a ring. The k
    shifts are k disjoint perfect matchings of the ring, so each of a person's k published
    rows is the true one with probability 1/k, as the closed walk gives (Doka et al. Theorem
    2.3), without walking the ring's k·m edges (at k = 1,000 on Adult the walk took minutes).
    With no ring it is ``privacy_step(graph, rng)``, draw for draw. Returns ``a`` with
    ``a[i]`` the published record whose true preimage is original i. O(Σ m) for the rings,
    plus the privacy step of the rest.
    """
    from anonymatch.core.classes import privacy_step

    if not rings:
        return privacy_step(graph, rng)
    n = graph.n
    out = np.empty(n, np.int64)
    in_ring = np.zeros(n, bool)
    for ring in rings:
        t = int(rng.integers(k))
        out[ring] = ring[(np.arange(len(ring)) - t) % len(ring)]
        in_ring[ring] = True
    rest = np.flatnonzero(~in_ring)
    if len(rest):  # the parts are blocks: the rest's rows and columns hold all their edges
        sub = graph.matrix[rest][:, rest]
        out[rest] = rest[privacy_step(GeneralizationGraph(sp.csr_array(sub)), rng)]
    return out


def windows_cells(rings: tuple[np.ndarray, ...], k: int, qi: EncodedQI) -> GeneralizedQI:
    """The cells of a windows release (:func:`windows_graph`: the rings cover all n records)
    straight from the rings: published ``ring[j]`` shows the box of the originals
    ``ring[j … j+k−1]`` — bounds of the present numeric values, the set of categorical values
    (closed under the hierarchy where its nodes are published), ``*`` where one of them
    misses the value. The same cells as ``recode.recode`` of the graph (checked in the tests),
    without its transpose, hashing and sorts over the k·n edges (at k = 1,000 on Adult,
    most of what followed the build). O(k·n·d) time in compiled loops, O(n·d + the sets)
    memory."""
    n = qi.n
    dn, dc = qi.num.shape[1], qi.cat.shape[1]
    flat = np.concatenate(rings).astype(np.int64) if rings else np.empty(0, np.int64)
    starts = np.concatenate([[0], np.cumsum([len(r) for r in rings])]).astype(np.int64)
    lo, hi = np.zeros((n, dn)), np.zeros((n, dn))
    num_star = np.zeros((n, dn), bool)
    cat_star = np.zeros((n, dc), bool)
    for a in range(dn):
        _window_bounds(
            flat, starts, k, qi.num[:, a], qi.num_missing[:, a], lo[:, a], hi[:, a], num_star[:, a]
        )
    sets: list[sp.csr_array | NodeCells] = []
    for a, tree in enumerate(qi.cat_hierarchies()):
        card = int(qi.cat_card[a])
        indptr, indices = _window_sets(
            flat, starts, k, qi.cat[:, a].astype(np.int64), qi.cat_missing[:, a], card,
            cat_star[:, a],
        )  # fmt: skip
        order = np.argsort(flat, kind="stable")  # the published records' rows, 0 … n−1
        lengths = np.diff(indptr)[order]
        pieces = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        take = np.repeat(indptr[:-1][order] - pieces[:-1], lengths) + np.arange(pieces[-1])
        m = sp.csr_array(
            (np.ones(int(pieces[-1]), np.int8), indices[take], pieces), shape=(n, card)
        )
        sets.append(m if tree is None else _close(tree, m, cat_star[:, a]))
    return GeneralizedQI(lo, hi, num_star, CatSets(sets), cat_star)


@njit(cache=True, nogil=True)
def _window_bounds(flat, starts, k, values, missing, lo, hi, star):  # pragma: no cover - compiled
    """Per ring position j (ring r = flat[starts[r]:starts[r+1]]): lo/hi of the present
    values of ring[j … j+k−1] (mod its length) into row ring[j]; star if one is missing
    (bounds 0, as ``recode`` leaves them). O(k) per record."""
    for r in range(len(starts) - 1):
        s, m = starts[r], starts[r + 1] - starts[r]
        for j in range(m):
            row = flat[s + j]
            low, high, gone = np.inf, -np.inf, False
            for t in range(k):
                i = flat[s + (j + t) % m]
                if missing[i]:
                    gone = True
                    break
                v = values[i]
                low = min(low, v)
                high = max(high, v)
            if gone:
                star[row] = True
                lo[row] = 0.0
                hi[row] = 0.0
            else:
                lo[row] = low
                hi[row] = high


@njit(cache=True, nogil=True)
def _window_sets(flat, starts, k, codes, missing, card, star):  # pragma: no cover - compiled
    """Per ring position j: the sorted distinct codes of ring[j … j+k−1], as CSR rows in ring
    position order (``flat``'s); an empty set and star if one is missing. O(k + set·log set)
    per record."""
    n = len(flat)
    stamp = np.full(card, -1, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    out = np.empty(n * min(k, card), np.int64)
    used = 0
    for r in range(len(starts) - 1):
        s, m = starts[r], starts[r + 1] - starts[r]
        for j in range(m):
            p = s + j
            row = flat[p]
            begin = used
            for t in range(k):
                i = flat[s + (j + t) % m]
                if missing[i]:
                    star[row] = True
                    used = begin
                    break
                c = codes[i]
                if stamp[c] != p:
                    stamp[c] = p
                    out[used] = c
                    used += 1
            out[begin:used] = np.sort(out[begin:used])
            indptr[p + 1] = used
    return indptr, out[:used]
