"""Strict multidimensional Mondrian, as a generalization graph (baseline).

Reference: K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional
k-anonymity", ICDE 2006. The records are partitioned top-down by strict median cuts
(``_partition.strict_partition``) into groups of ≥ k records that admit no further allowable
cut; every record of a group is published as the group's ranges (numeric) and value sets
(categorical). Categorical attributes have no generalization hierarchy here: they are cut like
numeric attributes in the order of their codes (the sorted label order), while their published
cell is the set of values present in the group, not a code range.

As a graph: each group of m records is a complete biclique K_{m,m} (every original of the group
matches every published record of the group; one exception for large groups of identical records,
see ``mondrian``), so ``recode`` returns exactly the group's cells.
The graph is m-regular within each group — not k-regular — which is all the privacy step needs
(constant degree per connected component, self-edges present).
"""

from __future__ import annotations

import numpy as np

from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods._partition import Partition, segment_ranges, strict_partition
from anonymatch.tables.methods.ring import ring_edges
from anonymatch.tables.schema import EncodedQI

# A group of identical records larger than BICLIQUE_CAP·k is joined by a k-regular ring instead
# of a biclique (see ``mondrian``).
BICLIQUE_CAP = 4


def mondrian(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """Strict multidimensional Mondrian (LeFevre et al. 2006) as a union of bicliques.

    Parameters: ``qi`` the encoded QIs of the n records, ``k`` the anonymity parameter,
    ``options.sensitive`` the models a class must satisfy (cuts that break them are not
    allowable). Returns a graph in which each final group of m ≥ k records is a complete
    biclique (in- and out-degree m within the group, self-edges included) — except a group of
    more than ``BICLIQUE_CAP``·k records that are identical on every QI, which gets a k-regular
    ring: its published cells are that one QI value whatever edges join it, so recoding is the
    same as with the biclique, and the graph keeps O(k·m) instead of m² edges (a huge group of
    duplicates is what strict Mondrian cannot cut). Departure from a plain biclique union; the
    privacy step only needs a constant degree per component. A large group that is *not* all
    identical keeps its biclique: any graph with constant degree D in the group that gives every
    published record the group's full cells needs D ≥ m / (number of records carrying the
    group's rarest value), i.e. the biclique when a value occurs once.

    Raises ``InfeasibleError`` if n < k, ``InputError`` if k < 1.

    Complexity: O(d·n log n) per level of the cut tree (depth ≈ log2(n/k) for balanced cuts),
    plus O(Σ m²) ≤ O(BICLIQUE_CAP·k·n) edges for the non-identical groups; memory O(n·d + Σ m²).
    """
    n = qi.n
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if n < k:
        raise InfeasibleError(f"k = {k} exceeds the {n} records to anonymize")
    target = options.sensitive
    if target is not None:
        target.check_table()
    part = strict_partition(qi, k, target)
    identical = _identical_groups(part)
    sizes = part.sizes
    # With sensitive models every class stays a biclique (methods.diverse explains why).
    as_ring = identical & (sizes > BICLIQUE_CAP * k) & (target is None)
    rows, cols = _biclique_edges(part, ~as_ring)
    if as_ring.any():
        lens = sizes[as_ring]
        members = part.order[segment_ranges(part.bounds[:-1][as_ring], lens)]
        ring_rows, ring_cols = ring_edges(members, np.concatenate([[0], np.cumsum(lens)]), k)
        rows, cols = np.concatenate([rows, ring_rows]), np.concatenate([cols, ring_cols])
    return GeneralizationGraph.from_edges(rows, cols, n)


def _identical_groups(part: Partition) -> np.ndarray:
    """Whether all records of each group agree on every QI. O(n·d)."""
    same = np.ones(part.n_groups, dtype=bool)
    if not len(part.order):
        return same
    starts = part.bounds[:-1]
    lo = np.minimum.reduceat(part.ranks, starts, axis=0)
    hi = np.maximum.reduceat(part.ranks, starts, axis=0)
    return np.all(lo == hi, axis=1)


def _biclique_edges(part: Partition, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (i, j) of records in the same group, over the ``chosen`` groups. O(Σ m²)."""
    lens = part.sizes[chosen]
    starts = part.bounds[:-1][chosen]
    pos = segment_ranges(starts, lens)  # positions of the chosen records in part.order
    reps = np.repeat(lens, lens)  # each original is joined to its whole group
    group_start = np.repeat(starts, lens)
    rows = np.repeat(part.order[pos], reps)
    cols = part.order[segment_ranges(group_start, reps)]
    return rows, cols
