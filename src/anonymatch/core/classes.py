"""The privacy step on a graph stored as classes (a union of complete bicliques).

``core.assignment.choose_assignment`` is the privacy step of every graph (Xue et al. KDD 2012
§4.2, Doka et al. §2.2): it finds the weak components, gives each complete biclique K_{m,m} of
more than ``BICLIQUE_WALK_MAX`` records a uniformly random permutation (one of its m disjoint
perfect matchings drawn uniformly, each edge the true pair with probability exactly 1/m) and
runs the closed walk on the rest. On Mondrian's classes that means reading Σ m² edges to
rediscover components the builder already knew. ``choose_class_assignment`` does the same from
the class labels in O(n log n): it returns exactly what ``choose_assignment`` returns on the
graph's edges for the same generator state (same random draws, in the same order), which
``tests/core/test_classes.py`` checks on random class structures — so the privacy argument, and
every fixed-seed release, is the one of ``choose_assignment``.
"""

from __future__ import annotations

import numpy as np

from anonymatch.core.assignment import BICLIQUE_WALK_MAX, choose_assignment
from anonymatch.core.graph import GeneralizationGraph


def privacy_step(
    graph: GeneralizationGraph, rng: np.random.Generator, workers: int | None = None
) -> np.ndarray:
    """``choose_assignment(graph, rng, workers)``, without reading the edges of a graph stored
    as classes (``choose_class_assignment``). Returns ``a`` with ``a[i]`` = the published
    record whose true preimage is original i."""
    classes = graph.classes
    if classes is None:
        return choose_assignment(graph, rng, workers)
    rows, cols = classes
    if not np.array_equal(rows, cols):
        raise ValueError("the privacy step needs published record j in the class of original j")
    return choose_class_assignment(rows, rng, workers)


def choose_class_assignment(
    labels: np.ndarray, rng: np.random.Generator, workers: int | None = None
) -> np.ndarray:
    """The privacy step on the union of complete bicliques K_{m,m} of the classes ``labels``
    (0 … G−1; record i's class is ``labels[i]``, published record i belongs to it too).

    A class of more than ``BICLIQUE_WALK_MAX`` records gets a uniformly random permutation of
    its members, drawn as ``choose_assignment`` draws it (one uniform float per such record, in
    record order, members ranked by their floats within each class); the other classes (single
    records while ``BICLIQUE_WALK_MAX`` = 1: a self-loop, the identity whatever is drawn) go
    through ``choose_assignment`` on their own edges first, as they do there. Same output as
    ``choose_assignment(GeneralizationGraph.from_classes(labels), rng)`` for the same state of
    ``rng``. Time O(n log n + Σ m² over the small classes), memory O(n).
    """
    labels = np.asarray(labels, dtype=np.int64)
    n = len(labels)
    sizes = np.bincount(labels)
    big = sizes > BICLIQUE_WALK_MAX
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    rest = np.flatnonzero(~big[labels])
    if rest.size:
        # the components choose_assignment leaves to the closed walk, as its own edges
        sub = GeneralizationGraph.from_classes(labels[rest])
        out[rest] = rest[choose_assignment(GeneralizationGraph(sub.matrix), rng, workers)]
    if rest.size == n:
        return out
    members = np.flatnonzero(big[labels])
    by_class = members[np.argsort(labels[members], kind="stable")]
    shuffled = members[np.lexsort((rng.random(len(members)), labels[members]))]
    out[by_class] = shuffled
    return out
