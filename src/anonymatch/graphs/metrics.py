"""k-anonymity of graphs w.r.t. neighbourhoods, modular decomposition, and a graph anonymizer.

Stokes' slides §3 ("k-Anonymity in graphs"; Stokes, NORDSEC 2013): the quasi-identifier of a
vertex is its neighbourhood (Lorrain & White's structural equivalence). A graph is k-anonymous
w.r.t. open (closed) neighbourhoods when every vertex shares N(v) (N(v) ∪ {v}) with ≥ k − 1
other vertices — every row of the adjacency matrix (plus identity) repeated ≥ k times.

Modular decomposition: a module is a vertex set M whose members have the same neighbours
outside M; a strong module overlaps no other module; the strong modules form the decomposition
tree (leaves = vertices; internal nodes parallel — G[M] disconnected —, series — complement of
G[M] disconnected — or prime), and the children of the root form the maximal modular
partition. Vertices with equal open (closed) neighbourhoods are false (true) twins, and the
twin classes are exactly the sets of leaf children of one parallel (series) node. Hence the
exact form of the slides' theorem used here: G is k-anonymous w.r.t. open (closed)
neighbourhoods iff every vertex is a leaf child of a parallel (series) node having ≥ k leaf
children; the classes form a congruence partition into modules of ≥ k vertices whose factors
are edgeless (complete). Note: the slides state the theorem for *the* maximal modular partition
(children of the root); that reading fails on the slides' own 15-vertex example, whose root's
children are {1..3, 10..12} (a K_{3,3}, neither edgeless nor complete), {4..6}, {7..9},
{13..15} — the five classes of 3 are nodes of the decomposition tree one level lower.

The anonymizer partitions the vertices into groups of ≥ k with similar adjacency rows (a
k-means-style clustering, Stokes NORDSEC 2013 §4; it could later share the smooth-k
facility-location clustering of issue 5), makes each group an independent set (open) or a
clique (closed), and joins two groups completely iff the majority of their original pairs were
edges.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

# --------------------------------------------------------------------------------------------
# neighbourhood classes and the checker


# --------------------------------------------------------------------------------------------
# modular decomposition


# --------------------------------------------------------------------------------------------
# the anonymizer


def graph_metrics(before: sp.csr_array, after: sp.csr_array) -> dict[str, float]:
    """Jaccard similarity of the edge sets, edges added/removed, and the distance between the
    degree distributions (1-Wasserstein / earth mover's distance, and total variation of the
    degree histograms). O(m log m)."""
    from scipy.stats import wasserstein_distance

    a = sp.triu(sp.csr_array(before), k=1).tocsr()
    b = sp.triu(sp.csr_array(after), k=1).tocsr()
    a.data[:] = 1
    b.data[:] = 1
    both = int((a.multiply(b)).nnz)
    ea, eb = int(a.nnz), int(b.nnz)
    union = ea + eb - both
    deg_a = np.diff(sp.csr_array(before).indptr)
    deg_b = np.diff(sp.csr_array(after).indptr)
    top = int(max(deg_a.max(initial=0), deg_b.max(initial=0))) + 1
    ha = np.bincount(deg_a, minlength=top) / max(len(deg_a), 1)
    hb = np.bincount(deg_b, minlength=top) / max(len(deg_b), 1)
    return {
        "edges_before": ea,
        "edges_after": eb,
        "edges_added": eb - both,
        "edges_removed": ea - both,
        "jaccard": both / union if union else 1.0,
        "degree_emd": float(wasserstein_distance(deg_a, deg_b)) if len(deg_a) else 0.0,
        "degree_tv": float(0.5 * np.abs(ha - hb).sum()),
        "mean_degree_before": float(deg_a.mean()) if len(deg_a) else 0.0,
        "mean_degree_after": float(deg_b.mean()) if len(deg_b) else 0.0,
    }


@dataclass(frozen=True)
class GraphMetrics:
    """The figures of ``graph_metrics`` as an object (``to_dict()`` gives them back)."""

    edges_before: int
    edges_after: int
    edges_added: int
    edges_removed: int
    jaccard: float
    degree_emd: float
    degree_tv: float
    mean_degree_before: float
    mean_degree_after: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_figures(cls, figures: dict[str, float]) -> GraphMetrics:
        """From the dict returned by ``graph_metrics``."""
        counts = ("edges_before", "edges_after", "edges_added", "edges_removed")
        return cls(**{k: int(v) if k in counts else float(v) for k, v in figures.items()})  # type: ignore[arg-type]
