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

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods._partition import Partition, relaxed_partition, segment_distinct


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
