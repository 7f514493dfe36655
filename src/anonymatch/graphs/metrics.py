"""Utility of an anonymized graph against the original: Jaccard similarity of the edge sets,
edges added and removed, and the earth mover's distance between the degree distributions.
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
