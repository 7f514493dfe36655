"""Published QI cells and the recoding of a generalization graph into them.

Published record j covers the originals adjacent to it in the graph: a numeric QI becomes the
range [min, max] of their values, a categorical QI the set of their labels (Doka §3) — or, for
a QI whose hierarchy's nodes are published (``tables.hierarchy``), the leaves under the lowest
node covering those labels. A suppressed cell (``*``) matches any value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.schema import EncodedQI


@dataclass(frozen=True)
class GeneralizedQI:
    """The QI part of a release, aligned with ``EncodedQI``'s attributes.

    ``num_lo``/``num_hi`` are (n, dn) inclusive bounds; ``cat_sets[a]`` is an n × |A| 0/1 CSR
    matrix of the labels in each cell (codes of the original domain; a parsed release may use
    extra codes ≥ |A| for labels absent from the original). ``num_star``/``cat_star`` mark
    suppressed cells, whose bounds/sets are ignored.
    """

    num_lo: np.ndarray
    num_hi: np.ndarray
    num_star: np.ndarray
    cat_sets: tuple[sp.csr_array, ...]
    cat_star: np.ndarray

    @property
    def n(self) -> int:
        return int(self.num_lo.shape[0])

    def take(self, rows: np.ndarray) -> GeneralizedQI:
        """Rows in a new order (e.g. the publication shuffle)."""
        return GeneralizedQI(
            self.num_lo[rows],
            self.num_hi[rows],
            self.num_star[rows],
            tuple(s[rows] for s in self.cat_sets),
            self.cat_star[rows],
        )


def concat_cells(parts: list[GeneralizedQI]) -> GeneralizedQI:
    """The rows of ``parts`` one after the other (all coded in the same domains)."""
    n_cat = len(parts[0].cat_sets)
    width = [max(int(p.cat_sets[a].shape[1]) for p in parts) for a in range(n_cat)]
    sets = tuple(
        sp.csr_array(sp.vstack([_widen(p.cat_sets[a], width[a]) for p in parts], format="csr"))
        for a in range(n_cat)
    )
    return GeneralizedQI(
        np.concatenate([p.num_lo for p in parts]),
        np.concatenate([p.num_hi for p in parts]),
        np.concatenate([p.num_star for p in parts]),
        sets,
        np.concatenate([p.cat_star for p in parts]),
    )


def _widen(m: sp.csr_array, width: int) -> sp.csr_array:
    return sp.csr_array((m.data, m.indices, m.indptr), shape=(m.shape[0], width))


def recode(graph: GeneralizationGraph, qi: EncodedQI) -> GeneralizedQI:
    """Cells of every published record from the originals the graph maps to it.

    Complexity: O(E·d) time and O(E + n·d) memory for E graph edges (plus O(nnz·L) per
    hierarchy of L levels).
    """
    members = graph.published_members()
    starts, idx = members.indptr[:-1], members.indices
    n = graph.n
    if n and np.any(np.diff(members.indptr) == 0):
        raise ValueError("every published record needs at least one original")
    dn, dc = qi.num.shape[1], qi.cat.shape[1]
    lo = np.empty((n, dn))
    hi = np.empty((n, dn))
    for a in range(dn):
        vals = qi.num[idx, a]
        lo[:, a] = np.minimum.reduceat(vals, starts) if n else vals[:0]
        hi[:, a] = np.maximum.reduceat(vals, starts) if n else vals[:0]
    rows = np.repeat(np.arange(n), np.diff(members.indptr))
    sets = []
    for a, tree in enumerate(qi.cat_hierarchies()):
        card = int(qi.cat_card[a])
        m = sp.csr_array((np.ones(len(idx), np.int8), (rows, qi.cat[idx, a])), shape=(n, card))
        m.sum_duplicates()
        m.data[:] = 1
        m.sort_indices()
        sets.append(m if tree is None else tree.close(m))
    return GeneralizedQI(lo, hi, np.zeros((n, dn), bool), tuple(sets), np.zeros((n, dc), bool))
