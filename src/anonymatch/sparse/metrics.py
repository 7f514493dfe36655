"""Utility of a sparse binary release (Esfandiari et al., Definition 3.6 and §6).

* Jaccard similarity of the edge sets |E ∩ E′| / |E ∪ E′|;
* suppressed |E \\ E′| / |E| and created |E′ \\ E| / |E| entries (Table 1's S.E. and C.E.);
* downstream accuracy (Figure 4, 7): a one-hidden-layer, 10-unit ReLU network (scikit-learn
  ``MLPClassifier``) trained on the (anonymized) features with the true labels and tested on
  original test features.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class EdgeMetrics:
    """Jaccard similarity and the suppressed / created fractions (normalized by |E|)."""

    jaccard: float
    suppressed: float
    created: float
    edges_original: int
    edges_published: int
    edges_common: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _binary(m: sp.spmatrix | sp.sparray, shape: tuple[int, int]) -> sp.csr_array:
    out = sp.csr_array(m)
    out.sum_duplicates()
    out.eliminate_zeros()
    out.data[:] = 1
    out.resize(shape)
    return out


def edge_metrics(
    original: sp.spmatrix | sp.sparray, published: sp.spmatrix | sp.sparray
) -> EdgeMetrics:
    """Jaccard, suppressed and created fractions of ``published`` w.r.t. ``original``.
    O(nnz) time and memory."""
    shape = (
        max(original.shape[0], published.shape[0]),
        max(original.shape[1], published.shape[1]),
    )
    x, p = _binary(original, shape), _binary(published, shape)
    common = int(x.multiply(p).nnz)
    union = x.nnz + p.nnz - common
    e = max(1, x.nnz)
    return EdgeMetrics(
        jaccard=common / union if union else 1.0,
        suppressed=(x.nnz - common) / e,
        created=(p.nnz - common) / e,
        edges_original=int(x.nnz),
        edges_published=int(p.nnz),
        edges_common=common,
    )


def downstream_accuracy(
    train_x: sp.spmatrix | sp.sparray,
    train_y: np.ndarray,
    test_x: sp.spmatrix | sp.sparray,
    test_y: np.ndarray,
    seed: int | None = 0,
    max_iter: int = 200,
) -> float:
    """Test accuracy of a 1-hidden-layer, 10-unit ReLU MLP (scikit-learn, adam) trained on
    ``train_x`` (e.g. anonymized features) with ``train_y``. A training set with one label only
    predicts it."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    train_y = np.asarray(train_y)
    if np.unique(train_y).size < 2:
        return float(np.mean(np.asarray(test_y) == train_y[0]))
    model = MLPClassifier(
        hidden_layer_sizes=(10,), activation="relu", max_iter=max_iter, random_state=seed
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(sp.csr_matrix(train_x, dtype=np.float32), train_y)
    return float(model.score(sp.csr_matrix(test_x, dtype=np.float32), np.asarray(test_y)))


def majority_accuracy(train_y: np.ndarray, test_y: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent training label."""
    values, counts = np.unique(np.asarray(train_y), return_counts=True)
    return float(np.mean(np.asarray(test_y) == values[np.argmax(counts)]))
