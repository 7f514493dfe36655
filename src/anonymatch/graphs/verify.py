"""k-anonymity of graphs w.r.t. neighbourhoods: the checker (Stokes' slides §3, "k-Anonymity in
graphs"; Stokes, NORDSEC 2013).

The quasi-identifier of a vertex is its neighbourhood (Lorrain & White's structural
equivalence). A graph is k-anonymous w.r.t. open (closed) neighbourhoods when every vertex
shares N(v) (N(v) ∪ {v}) with ≥ k − 1 other vertices — every row of the adjacency matrix (plus
identity) repeated ≥ k times. The check hashes the rows: O(n + m) time and memory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.view import group_rows

# --------------------------------------------------------------------------------------------
# neighbourhood classes and the checker


def neighbourhood_classes(adjacency: sp.csr_array, closed: bool = False) -> np.ndarray:
    """Class id of every vertex: equal ids iff equal open (closed) neighbourhoods.

    Rows are hashed (sum of random 64-bit words of the neighbours, with the degree) and the
    buckets are confirmed exactly, so the result is exact. O(n + m) expected.
    """
    a = sp.csr_array(adjacency)
    n = a.shape[0]
    if closed:
        a = sp.csr_array(a + sp.identity(n, dtype=a.dtype, format="csr"))
    a.sort_indices()
    rng = np.random.default_rng(0x5EED)  # fixed: hashing only, no privacy role
    words = rng.integers(0, 2**63 - 1, size=(2, max(n, 1)), dtype=np.int64).astype(np.uint64)
    rows = np.repeat(np.arange(n), np.diff(a.indptr))
    h1 = np.zeros(n, np.uint64)
    h2 = np.zeros(n, np.uint64)
    np.add.at(h1, rows, words[0][a.indices])
    np.add.at(h2, rows, words[1][a.indices])
    deg = np.diff(a.indptr).astype(np.uint64)
    keys = np.column_stack([deg, h1, h2])
    _, ids, _ = group_rows(keys)
    # exact confirmation: every member of a bucket has the bucket leader's row
    order = np.argsort(ids, kind="stable")
    leader = np.full(ids.max() + 1 if n else 0, -1, np.int64)
    out = ids.copy()
    next_id = int(ids.max()) + 1 if n else 0
    for v in order.tolist():
        lead = leader[ids[v]]
        if lead < 0:
            leader[ids[v]] = v
            continue
        row_v = a.indices[a.indptr[v] : a.indptr[v + 1]]
        row_l = a.indices[a.indptr[lead] : a.indptr[lead + 1]]
        if not np.array_equal(row_v, row_l):  # hash collision: astronomically rare
            out[v] = next_id
            next_id += 1
    _, dense = np.unique(out, return_inverse=True)
    return dense.reshape(-1).astype(np.int64)


@dataclass
class GraphAnonymityReport:
    """Outcome of ``check_graph``: ``classes`` sizes (descending), the smallest class, the number
    of vertices in classes smaller than k."""

    passed: bool
    k: int
    closed: bool
    n_vertices: int
    n_edges: int
    n_classes: int
    smallest_class: int
    vertices_below_k: int
    class_sizes: list[int] = field(default_factory=list)
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def check_graph(adjacency: sp.csr_array, k: int, closed: bool = False) -> GraphAnonymityReport:
    """Is the graph k-anonymous w.r.t. open (closed) neighbourhoods? O(n + m)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    ids = neighbourhood_classes(adjacency, closed)
    n = len(ids)
    sizes = np.bincount(ids) if n else np.zeros(0, np.int64)
    small = sizes < k
    below = int(sizes[small].sum())
    kind = "closed" if closed else "open"
    reason = (
        f"{below} vertices share their {kind} neighbourhood with fewer than k - 1 others"
        if below
        else f"every vertex shares its {kind} neighbourhood with at least k - 1 others"
    )
    return GraphAnonymityReport(
        passed=bool(not small.any()),
        k=int(k),
        closed=closed,
        n_vertices=n,
        n_edges=int(sp.csr_array(adjacency).nnz // 2),
        n_classes=len(sizes),
        smallest_class=int(sizes.min()) if n else 0,
        vertices_below_k=below,
        class_sizes=sorted(sizes.tolist(), reverse=True),
        reason=reason,
    )


# --------------------------------------------------------------------------------------------
# modular decomposition


# --------------------------------------------------------------------------------------------
# the anonymizer
