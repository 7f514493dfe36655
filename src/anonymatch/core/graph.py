"""The generalization graph: original records → published records (Doka Def. 3, bipartite view).

One representation for every method: a sparse n × n 0/1 matrix (scipy CSR), row i = original
record i, column j = published record j, an entry = "original i matches published j". Published
record j is the generalization of original record j; every heuristic and baseline includes the
self-edges, the exact MIP (Doka eq. 5/7/9) need not.
Freeform and ring methods return k-regular graphs; Mondrian and the classes of the sensitive
models return a union of m×m complete bicliques (m ≥ k), in which every vertex has equal in- and
out-degree, which is what the privacy step needs.

A union of complete bicliques is stored as its classes (``from_classes``: the class of each
original and of each published record, O(n)) rather than its Σ m² edges; its matrix is built
only when something asks for it (``matrix``, ``published_members``). The class-aware steps —
the privacy step (``core.classes``) and recoding (``tables.recode``) — read the classes
directly and never build it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit


class GeneralizationGraph:
    """A bipartite original→published graph: a CSR matrix with sorted indices, or a union of
    complete bicliques given by classes (``from_classes``), whose matrix is built on demand.
    Immutable by convention (the attributes are read-only properties)."""

    def __init__(self, matrix: sp.csr_array) -> None:
        self._matrix: sp.csr_array | None = matrix
        self._classes: tuple[np.ndarray, np.ndarray] | None = None
        self._parts: tuple[np.ndarray, np.ndarray] | None = None
        self._n = int(matrix.shape[0])

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
    def from_classes(
        cls, row_class: np.ndarray, col_class: np.ndarray | None = None
    ) -> GeneralizationGraph:
        """Union of complete bicliques: original i matches published j iff
        ``row_class[i] == col_class[j]`` (``col_class`` None: the same labels, i.e. published
        record j generalizes original j and its class is j's own).

        Labels are any non-negative integers; they are renumbered 0, 1, … in increasing order of
        label (``classes`` returns the renumbered arrays). Every class must hold as many
        originals as published records (so the graph is square and every vertex has in-degree =
        out-degree = its class size). Raises ``ValueError`` otherwise. O(n + max label) time and
        memory; the Σ m² edges are never stored unless ``matrix`` is read.
        """
        rows = np.asarray(row_class, dtype=np.int64).reshape(-1)
        cols = rows if col_class is None else np.asarray(col_class, dtype=np.int64).reshape(-1)
        if len(rows) != len(cols):
            raise ValueError("row_class and col_class must have the same length")
        if len(rows) and min(int(rows.min()), int(cols.min())) < 0:
            raise ValueError("class labels must be non-negative")
        top = int(max(rows.max(), cols.max())) + 1 if len(rows) else 0
        count = np.bincount(rows, minlength=top)
        if col_class is not None and not np.array_equal(count, np.bincount(cols, minlength=top)):
            raise ValueError("every class needs as many originals as published records")
        used = count > 0
        if not used.all():  # renumber the labels in use 0, 1, …
            rename = np.cumsum(used) - 1
            rows = rename[rows]
            cols = rows if col_class is None else rename[cols]
        graph = cls.__new__(cls)
        graph._matrix = None
        graph._classes = (rows, cols)
        graph._parts = None
        graph._n = len(rows)
        return graph

    @classmethod
    def block_diagonal(
        cls, blocks: list[tuple[np.ndarray, GeneralizationGraph]], n: int
    ) -> GeneralizationGraph:
        """Assemble per-partition graphs; ``blocks`` holds (global row ids, local graph), the
        partitions disjoint. The graph remembers its parts (``blocks`` returns them: no edge
        crosses two parts). Each global row is its local row's columns renamed and sorted, in
        place in the final CSR arrays (issue 38: no COO round trip and global sort of the n·k
        edges, 0.3 s on the critical path at k = 100 on Adult). O(E log k) for rows of k
        edges. Raises ValueError when two blocks share a record."""
        part = np.full(n, -1, dtype=np.int64)
        degree = np.zeros(n, dtype=np.int64)
        for p, (ids, graph) in enumerate(blocks):
            if np.any(part[ids] >= 0):
                raise ValueError("the blocks of a block-diagonal graph must be disjoint")
            part[ids] = p
            degree[ids] = np.diff(graph.matrix.indptr)
        indptr = np.r_[0, np.cumsum(degree)]
        index = np.int32 if max(n, int(indptr[-1])) < 2**31 else np.int64
        indices = np.empty(int(indptr[-1]), dtype=index)
        for ids, graph in blocks:
            local = graph.matrix
            _place_rows(indptr, indices, np.asarray(ids, np.int64), local.indptr, local.indices)
        matrix = sp.csr_array(
            (np.ones(len(indices), dtype=np.int8), indices, indptr.astype(index)), shape=(n, n)
        )
        matrix.has_sorted_indices = True
        assembled = cls(matrix)
        if not np.any(part < 0):
            assembled._parts = (part, part)
        return assembled

    @classmethod
    def from_parts(cls, matrix: sp.csr_array, part: np.ndarray) -> GeneralizationGraph:
        """A graph whose edges never cross two parts (``part``: the part of each record, both
        sides), built by the caller as a CSR matrix with sorted indices: ``blocks`` returns
        the parts, as for ``block_diagonal``. O(1)."""
        graph = cls(matrix)
        graph._parts = (part, part)
        return graph

    def with_published_order(self, position: np.ndarray) -> GeneralizationGraph:
        """The same graph with published record j moved to position ``position[j]``. A graph
        stored as classes stays one (its edges are not built) and assembled parts are kept.
        O(n) for classes, O(E log E) otherwise."""
        shuffle = np.empty_like(position)
        shuffle[position] = np.arange(len(position))
        if self._classes is not None:
            rows, cols = self._classes
            return GeneralizationGraph.from_classes(rows, cols[shuffle])
        # the rows stay; each row's columns are renamed and sorted again (no COO round trip:
        # issue 38, int64 edge lists of n·k entries at large k). The same sorted 0/1 matrix.
        m = self.matrix
        cols = position[m.indices].astype(m.indices.dtype, copy=False)
        matrix = sp.csr_array(
            (np.ones(len(cols), np.int8), cols, m.indptr.copy()), shape=(self.n, self.n)
        )
        matrix.sort_indices()
        moved = GeneralizationGraph(matrix)
        if self._parts is not None:
            moved._parts = (self._parts[0], self._parts[1][shuffle])
        return moved

    @property
    def classes(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(class of each original, class of each published record), classes numbered 0 … G−1,
        for a graph made by ``from_classes``; None for a graph given by its edges."""
        return self._classes

    @property
    def matrix(self) -> sp.csr_array:
        """The n × n 0/1 CSR matrix (int8, sorted indices). For a class graph it is built on
        first use, in O(Σ m²) time and memory, and kept."""
        if self._matrix is None:
            assert self._classes is not None
            self._matrix = _biclique_matrix(*self._classes)
        return self._matrix

    @property
    def n(self) -> int:
        return self._n

    @property
    def n_edges(self) -> int:
        if self._matrix is None:
            assert self._classes is not None
            sizes = np.bincount(self._classes[0])
            return int(np.dot(sizes, sizes))
        return int(self._matrix.nnz)

    def out_degrees(self) -> np.ndarray:
        if self._matrix is None:
            assert self._classes is not None
            rows, cols = self._classes
            return np.bincount(cols, minlength=_n_classes(rows))[rows]
        return np.diff(self._matrix.indptr)

    def in_degrees(self) -> np.ndarray:
        if self._matrix is None:
            assert self._classes is not None
            rows, cols = self._classes
            return np.bincount(rows, minlength=_n_classes(rows))[cols]
        return np.bincount(self._matrix.indices, minlength=self.n)

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
        if self._matrix is None:
            assert self._classes is not None
            rows, cols = self._classes
            return _biclique_matrix(cols, rows)
        t = self._matrix.T.tocsr()
        t.sort_indices()
        return t

    def blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """Blocks no edge crosses, in the bipartite view (original i and published record j are
        distinct vertices): (block of each original, block of each published record), numbered
        0 … B−1. A class graph's blocks are its classes, an assembled graph's its parts
        (``block_diagonal``), any other graph's its connected components (O(n + E))."""
        if self._classes is not None:
            return self._classes
        if self._parts is not None:
            return self._parts
        from scipy.sparse.csgraph import connected_components

        m, n = self.matrix, self.n
        indptr = np.concatenate([m.indptr, np.full(n, m.indptr[-1])])
        both = sp.csr_array(
            (m.data, m.indices.astype(np.int64) + n, indptr.astype(np.int64)), shape=(2 * n, 2 * n)
        )
        _, labels = connected_components(both, directed=True, connection="weak")
        return labels[:n].astype(np.int64), labels[n:].astype(np.int64)

    def __repr__(self) -> str:
        kind = "classes" if self._matrix is None else "edges"
        return f"GeneralizationGraph(n={self.n}, edges={self.n_edges}, stored as {kind})"


def _n_classes(labels: np.ndarray) -> int:
    return int(labels.max()) + 1 if len(labels) else 0


def class_members(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The records of each class, as (members, indptr): class c holds ``members[indptr[c] :
    indptr[c + 1]]``, in increasing order. ``labels`` are 0 … G−1. O(n log n) (a stable sort)."""
    members = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=_n_classes(labels))
    indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return members.astype(np.int64), indptr


def _biclique_matrix(rows: np.ndarray, cols: np.ndarray) -> sp.csr_array:
    """The CSR matrix (int8 ones, sorted indices) with an entry (i, j) iff rows[i] == cols[j].
    O(n + Σ m²)."""
    n = len(rows)
    members, indptr = class_members(cols)
    degree = np.diff(indptr)[rows]  # out-degree of each original
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=ptr[1:])
    offset = np.arange(ptr[-1], dtype=np.int64) - np.repeat(ptr[:-1] - indptr[:-1][rows], degree)
    indices = members[offset]
    index = np.int32 if max(n, int(ptr[-1])) < 2**31 else np.int64
    matrix = sp.csr_array(
        (np.ones(len(indices), np.int8), indices.astype(index), ptr.astype(index)), shape=(n, n)
    )
    matrix.has_sorted_indices = True
    return matrix


@njit(cache=True, nogil=True)
def _place_rows(indptr, indices, ids, local_ptr, local_idx):  # pragma: no cover - compiled
    """Local row r of a block is global row ``ids[r]``: its columns, renamed by ``ids``, go to
    ``indices[indptr[ids[r]]:…]``, sorted. O(edges · log degree)."""
    for r in range(len(ids)):
        start = indptr[ids[r]]
        width = local_ptr[r + 1] - local_ptr[r]
        for q in range(width):
            indices[start + q] = ids[local_idx[local_ptr[r] + q]]
        indices[start : start + width].sort()
