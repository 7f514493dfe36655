"""Strict multidimensional Mondrian, as a generalization graph (baseline).

Reference: K. LeFevre, D. J. DeWitt, R. Ramakrishnan, "Mondrian multidimensional
k-anonymity", ICDE 2006. The records are partitioned top-down by strict median cuts
(``_partition.strict_partition``) into groups of ≥ k records that admit no further allowable
cut; every record of a group is published as the group's ranges (numeric) and value sets
(categorical). Categorical attributes have no generalization hierarchy here: they are cut like
numeric attributes in the order of their codes (the sorted label order), while their published
cell is the set of values present in the group, not a code range.

As a graph: each group of m records is a complete biclique K_{m,m} (every original of the group
matches every published record of the group), so ``recode`` returns exactly the group's cells.
The graph is m-regular within each group — not k-regular — which is all the privacy step needs
(constant degree per connected component, self-edges present). It is stored as the group of
each record (``GeneralizationGraph.from_classes``), O(n), not as its Σ m² edges: the privacy
step (``core.classes``) and ``recode`` work on the groups directly.
"""

from __future__ import annotations

import numpy as np

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods._partition import strict_partition


def mondrian(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """Strict multidimensional Mondrian (LeFevre et al. 2006) as a union of bicliques.

    Parameters: ``qi`` the encoded QIs of the n records, ``k`` the anonymity parameter,
    ``options.sensitive`` the models a class must satisfy (cuts that break them are not
    allowable). Returns a graph in which each final group of m ≥ k records is a complete
    biclique (in- and out-degree m within the group, self-edges included), stored as classes:
    group g is class g, numbered in the left-to-right order of the cuts.

    Until issue 17 the graph was stored edge by edge, and a group of more than 4k records
    identical on every QI got a k-regular ring instead of its biclique to bound the Σ m² edges
    (same cells either way). As classes a group costs O(m) whatever its size, so every group is
    its biclique again: each published record of such a group now has all m identical records
    as equally likely preimages instead of k.

    Raises ``InfeasibleError`` if n < k, ``InputError`` if k < 1.

    Complexity: O(d·n log n) per level of the cut tree (depth ≈ log2(n/k) for balanced cuts);
    memory O(n·d).
    """
    n = qi.n
    check_level_fits(k, n, records="records to anonymize")  # k ≥ 1: the job checked it
    target = options.sensitive
    if target is not None:
        target.check_table()
    part = strict_partition(qi, k, target)
    group = np.empty(n, dtype=np.int64)
    group[part.order] = part.group_of_position()
    return GeneralizationGraph.from_classes(group)
