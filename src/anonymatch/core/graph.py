"""The generalization graph: original records → published records (Doka Def. 3, bipartite view).

One representation for every method: a sparse n × n 0/1 matrix (scipy CSR), row i = original
record i, column j = published record j, an entry = "original i matches published j". Published
record j is the generalization of original record j; every heuristic and baseline includes the
self-edges, the exact MIP (Doka eq. 5/7/9) need not.
Freeform and ring methods return k-regular graphs; Mondrian returns a union of m×m bicliques
(m ≥ k; k-regular rings for large groups of identical records, whose cells are the same either
way), in which every vertex has equal in- and out-degree, which is what the privacy step needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class GeneralizationGraph:
    """A bipartite original→published graph stored as a CSR matrix with sorted indices."""

    matrix: sp.csr_array

    @classmethod
    def from_assignments(cls, assignments: np.ndarray) -> GeneralizationGraph:
        """Union of r assignments given as an (r, n) array: ``assignments[t, i]`` is the published
        record that original i is matched to in assignment t. O(rn)."""
        r, n = assignments.shape
        rows = np.tile(np.arange(n, dtype=np.int64), r)
        return cls.from_edges(rows, assignments.reshape(-1).astype(np.int64), n)

    @classmethod
    def from_edges(cls, rows: np.ndarray, cols: np.ndarray, n: int) -> GeneralizationGraph:
        """Graph from edge lists; duplicate edges collapse to one. O(E log E)."""
        data = np.ones(len(rows), dtype=np.int8)
        m = sp.csr_array((data, (rows, cols)), shape=(n, n))
        m.sum_duplicates()
        m.data[:] = 1
        m.sort_indices()
        return cls(m)

    @classmethod
    def block_diagonal(
        cls, blocks: list[tuple[np.ndarray, GeneralizationGraph]], n: int
    ) -> GeneralizationGraph:
        """Assemble per-partition graphs; ``blocks`` holds (global row ids, local graph)."""
        rows, cols = [], []
        for ids, graph in blocks:
            coo = graph.matrix.tocoo()
            rows.append(ids[coo.row])
            cols.append(ids[coo.col])
        if not rows:
            return cls.from_edges(np.empty(0, np.int64), np.empty(0, np.int64), n)
        return cls.from_edges(np.concatenate(rows), np.concatenate(cols), n)

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_edges(self) -> int:
        return int(self.matrix.nnz)

    def out_degrees(self) -> np.ndarray:
        return np.diff(self.matrix.indptr)

    def in_degrees(self) -> np.ndarray:
        return np.bincount(self.matrix.indices, minlength=self.n)

    def is_regular(self, k: int) -> bool:
        """True iff every original and every published vertex has degree exactly k."""
        return bool(np.all(self.out_degrees() == k) and np.all(self.in_degrees() == k))

    def is_balanced(self) -> bool:
        """True iff each vertex v has out-degree(v) = in-degree(v) in the unified view, the
        precondition of Doka Lemma 2.1–2.2 (every edge lies in a perfect matching)."""
        return bool(np.array_equal(self.out_degrees(), self.in_degrees()))

    def min_degree(self) -> int:
        if self.n == 0:
            return 0
        return int(min(self.out_degrees().min(), self.in_degrees().min()))

    def published_members(self) -> sp.csr_array:
        """Transpose as CSR: row j lists the originals that published record j generalizes."""
        t = self.matrix.T.tocsr()
        t.sort_indices()
        return t
