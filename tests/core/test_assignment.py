"""The privacy step: closed-walk extraction of disjoint assignments and the uniform choice."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components
from scipy.stats import chisquare

from anonymatch.core.assignment import (
    BICLIQUE_WALK_MAX,
    choose_assignment,
    random_assignments,
)
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.view import component_labels
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods.freeform import hungarian
from tests.core.test_walk_distribution import _circulant, _union
from tests.factories import encode_frame, random_frame


def _random_regular(n: int, k: int, rng: np.random.Generator) -> GeneralizationGraph:
    """Union of the identity and k−1 random permutations made disjoint by rejection."""
    perms = [np.arange(n)]
    used = np.eye(n, dtype=bool)
    while len(perms) < k:
        p = rng.permutation(n)
        if not used[np.arange(n), p].any():
            perms.append(p)
            used[np.arange(n), p] = True
    return GeneralizationGraph.from_assignments(np.array(perms))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_rounds_are_disjoint_perfect_matchings_covering_the_graph(
    n: int, k: int, seed: int
) -> None:
    k = min(k, n)
    qi = encode_frame(random_frame(n, seed % 1000, 2, 2, 4))
    graph = hungarian(qi, k, BuildOptions())
    rounds = random_assignments(graph, np.random.default_rng(seed))
    assert rounds.shape == (k, n)
    dense = graph.matrix.toarray()
    count = np.zeros_like(dense, dtype=int)
    for r in rounds:
        assert sorted(r.tolist()) == list(range(n))  # a permutation
        assert dense[np.arange(n), r].all()  # along graph edges
        count[np.arange(n), r] += 1
    assert np.array_equal(count, dense)  # each edge in exactly one assignment


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), edges=st.integers(0, 80), seed=st.integers(0, 2**32 - 1))
def test_weak_components_are_scipy_s(n: int, edges: int, seed: int) -> None:
    """Any directed graph (self-loops, isolated vertices, int32 or int64 indices): the same
    weak components, numbered the same way (by their smallest vertex), as scipy's."""
    rng = np.random.default_rng(seed)
    rows, cols = (rng.integers(0, max(n, 1), edges if n else 0) for _ in range(2))
    matrix = sp.csr_array((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
    _, want = connected_components(matrix, directed=True, connection="weak")
    for index in (np.int32, np.int64):
        got = component_labels(matrix.indptr.astype(index), matrix.indices.astype(index), n, 0)
        assert np.array_equal(got, want)


def test_components_of_different_degree() -> None:
    # a biclique K_{3,3} and a 2-regular ring on 4 vertices: degrees 3 and 2
    rows = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    cols = [0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 3]
    graph = GeneralizationGraph.from_edges(np.array(rows), np.array(cols), 7)
    rounds = random_assignments(graph, np.random.default_rng(0))
    assert rounds.shape == (3, 7)
    assert (rounds[2, 3:] == -1).all() and (rounds[2, :3] >= 0).all()
    for _ in range(20):
        a = choose_assignment(graph, np.random.default_rng(_))
        assert sorted(a.tolist()) == list(range(7))


def test_chosen_match_is_uniform_over_each_records_matches() -> None:
    """Seeded chi-square test: over many draws, original i's true match is each of its k
    neighbours with probability 1/k (Doka §2.2)."""
    n, k, draws = 12, 4, 4000
    graph = _random_regular(n, k, np.random.default_rng(1))
    rng = np.random.default_rng(2024)
    hits = np.zeros((n, n), dtype=int)
    for _ in range(draws):
        a = choose_assignment(graph, rng)
        hits[np.arange(n), a] += 1
    dense = graph.matrix.toarray().astype(bool)
    assert hits[~dense].sum() == 0
    p_values = [chisquare(hits[i, dense[i]]).pvalue for i in range(n)]
    # Bonferroni over the n records at family level 0.001
    assert min(p_values) > 0.001 / n


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 30), st.integers(1, 8)), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_chosen_assignment_is_a_perfect_matching_of_the_graph(
    sizes: list[tuple[int, int]], seed: int
) -> None:
    """Components of different sizes and degrees (each walk stopped after its own pick): the
    chosen assignment is a permutation along the graph's edges."""
    rng = np.random.default_rng(seed)
    graph = _union([_circulant(size, min(degree, size), rng) for size, degree in sizes])
    a = choose_assignment(graph, rng)
    assert sorted(a.tolist()) == list(range(graph.n))
    assert graph.matrix.toarray()[np.arange(graph.n), a].all()


def test_each_edge_is_true_with_probability_one_over_its_degree() -> None:
    """Seeded chi-square test on four components of degrees 2, 3, 4 and 5 in one chunk (one
    generator; the picks stop their walks after different rounds): each of a record's D
    edges is chosen with probability 1/D (Bonferroni over the records)."""
    rng = np.random.default_rng(11)
    graph = _union([_circulant(n, d, rng) for n, d in [(5, 2), (6, 3), (9, 4), (8, 5)]])
    n, draws = graph.n, 3000
    hits = np.zeros((n, n), dtype=int)
    for _ in range(draws):
        hits[np.arange(n), choose_assignment(graph, rng)] += 1
    dense = graph.matrix.toarray().astype(bool)
    assert hits[~dense].sum() == 0
    p_values = [chisquare(hits[i, dense[i]]).pvalue for i in range(n)]
    assert min(p_values) > 0.001 / n


def test_the_set_of_assignments_is_random() -> None:
    """Resisting an adversary who knows the algorithm: different seeds give different sets."""
    graph = _random_regular(30, 3, np.random.default_rng(7))
    a = random_assignments(graph, np.random.default_rng(1))
    b = random_assignments(graph, np.random.default_rng(2))
    assert not np.array_equal(np.sort(a, axis=0), np.sort(b, axis=0)) or not np.array_equal(a, b)
    assert any(not np.array_equal(a[0], b[t]) for t in range(3))


def _classes(sizes: list[int]) -> GeneralizationGraph:
    rows, cols, start = [], [], 0
    for m in sizes:
        members = np.arange(start, start + m)
        rows.append(np.repeat(members, m))
        cols.append(np.tile(members, m))
        start += m
    return GeneralizationGraph.from_edges(np.concatenate(rows), np.concatenate(cols), start)


def test_big_bicliques_get_a_permutation_inside_each_class() -> None:
    sizes = [BICLIQUE_WALK_MAX + 5, 3, BICLIQUE_WALK_MAX + 1]
    graph = _classes(sizes)
    out = choose_assignment(graph, np.random.default_rng(1))
    assert sorted(out) == list(range(graph.n))  # a perfect matching
    dense = graph.matrix.toarray()
    assert dense[np.arange(graph.n), out].all()  # of the graph's edges


def test_big_biclique_true_row_is_uniform() -> None:
    """Each of the m rows of a class is person 0's true row with probability 1/m."""
    m = BICLIQUE_WALK_MAX + 1
    graph = _classes([m, 2])
    rng = np.random.default_rng(7)
    draws = np.array([choose_assignment(graph, rng)[0] for _ in range(40 * m)])
    counts = np.bincount(draws, minlength=m)
    assert chisquare(counts).pvalue > 1e-3
