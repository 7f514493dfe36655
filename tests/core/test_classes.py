"""Graphs stored as classes (unions of complete bicliques) and their privacy step.

``GeneralizationGraph.from_classes`` must describe exactly the graph of its bicliques' edges,
and ``core.classes.choose_class_assignment`` must return exactly what ``choose_assignment``
returns on those edges for the same generator state — so Mondrian's releases keep the privacy
argument (and the fixed-seed bytes) of the edge-level privacy step.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from anonymatch.core.assignment import choose_assignment
from anonymatch.core.classes import choose_class_assignment, privacy_step
from anonymatch.core.graph import GeneralizationGraph, class_members


def _edges_of(labels: np.ndarray, col_labels: np.ndarray | None = None) -> GeneralizationGraph:
    """The biclique union by brute force: an edge (i, j) iff i's and j's classes agree."""
    cols = labels if col_labels is None else col_labels
    i, j = np.nonzero(labels[:, None] == cols[None, :])
    return GeneralizationGraph.from_edges(i, j, len(labels))


# class labels: sizes 1…7 (singletons take the closed walk in choose_assignment), shuffled
labelings = st.lists(st.integers(1, 7), min_size=0, max_size=12).flatmap(
    lambda sizes: st.permutations(np.repeat(np.arange(len(sizes)), sizes).tolist())
)


@settings(max_examples=150, deadline=None)
@given(labels=labelings, seed=st.integers(0, 2**32 - 1))
def test_same_assignment_as_choose_assignment_on_the_edges(labels: list[int], seed: int) -> None:
    lab = np.array(labels, dtype=np.int64)
    edges = _edges_of(lab)
    want = choose_assignment(edges, np.random.default_rng(seed))
    got = choose_class_assignment(lab, np.random.default_rng(seed))
    assert np.array_equal(got, want)
    # and through the front, on the class graph
    graph = GeneralizationGraph.from_classes(lab)
    assert np.array_equal(privacy_step(graph, np.random.default_rng(seed)), want)
    assert np.array_equal(privacy_step(edges, np.random.default_rng(seed)), want)


@settings(max_examples=100, deadline=None)
@given(labels=labelings, gap=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_from_classes_is_the_biclique_union(labels: list[int], gap: int, seed: int) -> None:
    """Matrix, degrees, members and published members equal those of the brute-force edges,
    for labels with holes (renumbered in order) and for published records in another order."""
    lab = np.array(labels, dtype=np.int64) * (gap + 1)  # unused labels in between
    perm = np.random.default_rng(seed).permutation(len(lab))
    for cols in (None, lab[perm]):
        graph = GeneralizationGraph.from_classes(lab, cols)
        edges = _edges_of(lab, cols)
        assert graph.n == edges.n and graph.n_edges == edges.n_edges
        assert np.array_equal(graph.out_degrees(), edges.out_degrees())
        assert np.array_equal(graph.in_degrees(), edges.in_degrees())
        assert graph.is_balanced() == edges.is_balanced()
        assert cols is not None or graph.is_balanced()  # same labels: degree = class size
        assert graph.min_degree() == edges.min_degree()
        members = graph.published_members()
        assert members.has_sorted_indices and (members != edges.published_members()).nnz == 0
        assert graph.classes is not None
        rows, _ = graph.classes
        assert len(rows) == 0 or sorted(set(rows.tolist())) == list(range(int(rows.max()) + 1))
        m = graph.matrix
        assert m.dtype == np.int8 and m.has_sorted_indices
        assert np.array_equal(m.indptr, edges.matrix.indptr)
        assert np.array_equal(m.indices, edges.matrix.indices)
        assert (m.data == 1).all()
        again = pickle.loads(pickle.dumps(graph))
        assert again.classes is not None and (again.matrix != m).nnz == 0


def test_class_members_in_record_order() -> None:
    members, indptr = class_members(np.array([2, 0, 2, 1, 0, 2]))
    assert indptr.tolist() == [0, 2, 3, 6]
    assert members.tolist() == [1, 4, 3, 0, 2, 5]


def test_from_classes_refuses_bad_labels() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        GeneralizationGraph.from_classes(np.array([0, -1]))
    with pytest.raises(ValueError, match="as many originals"):
        GeneralizationGraph.from_classes(np.array([0, 0, 1]), np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="same length"):
        GeneralizationGraph.from_classes(np.array([0, 0]), np.array([0]))
    shuffled = GeneralizationGraph.from_classes(np.array([0, 0, 1]), np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="privacy step"):
        privacy_step(shuffled, np.random.default_rng(0))


def test_uniform_true_match_within_a_class() -> None:
    """Each record of a class of 4 is the true preimage of each of the class's published
    records with probability 1/4 (Doka Theorem 2.3), and never of another class's."""
    labels = np.array([0, 1, 0, 0, 1, 1, 0, 1])
    counts = np.zeros((8, 8), dtype=int)
    rng = np.random.default_rng(12345)
    for _ in range(4000):
        a = choose_class_assignment(labels, rng)
        counts[np.arange(8), a] += 1
    assert np.all(counts[labels[:, None] != labels[None, :]] == 0)
    for i in range(8):
        observed = counts[i, labels == labels[i]]
        assert chisquare(observed).pvalue > 1e-4
