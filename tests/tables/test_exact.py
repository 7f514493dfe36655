"""The exact MIP of Doka §4 (anonymatch.methods.exact)."""

from __future__ import annotations

import functools
import itertools
import time

import numpy as np
import pandas as pd
import pytest

from anonymatch.core.errors import InfeasibleError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import EncodedQI, Schema, encode_qi
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods.exact import mip, solve_mip
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.recode import recode
from tests.factories import encode_frame, random_frame

OPTIONS = BuildOptions(time_limit=60.0)


def gcp(graph: GeneralizationGraph, qi: EncodedQI) -> float:
    return information_loss(recode(graph, qi), qi).gcp


def ring_graph(n: int, k: int) -> GeneralizationGraph:
    """Identity plus ring: original i → published (i + t) mod n for t < k."""
    rows = np.tile(np.arange(n), k)
    cols = (rows + np.repeat(np.arange(k), n)) % n
    return GeneralizationGraph.from_edges(rows, cols, n)


@functools.cache
def all_regular_graphs(n: int, k: int) -> list[GeneralizationGraph]:
    """Every k-regular bipartite graph on n + n vertices (every n × n 0/1 matrix with all row and
    column sums k), by brute force over the k-subsets chosen by each row."""
    subsets = list(itertools.combinations(range(n), k))
    graphs = []
    for choice in itertools.product(subsets, repeat=n):
        cols = np.array(choice).reshape(-1)
        if np.all(np.bincount(cols, minlength=n) == k):
            graphs.append(GeneralizationGraph.from_edges(np.repeat(np.arange(n), k), cols, n))
    return graphs


@pytest.mark.parametrize("n", range(4, 10))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_result_is_k_regular(n: int, k: int) -> None:
    qi = encode_frame(random_frame(n, seed=100 * n + k, n_num=2, n_cat=2, card=4))
    # A short time limit keeps the test fast: a solution returned at the limit (not proven
    # optimal) must be k-regular too. 0.5 s (was 2 s, which n = 8, 9 reached: 8 s in all): HiGHS
    # holds a feasible solution after 0.05 s for every n here, and n >= 7 now all stop at the
    # limit (the case this checks); proven optima are test_optimal_against_brute_force's.
    graph = mip(qi, k, BuildOptions(time_limit=0.5))
    assert graph.n == n
    assert graph.is_regular(k)


def test_brute_force_enumerates_all_regular_graphs() -> None:
    # Sanity check of the oracle: there are 90 2-regular 4 × 4 0/1 matrices and 4! = 24
    # permutation matrices.
    assert len(all_regular_graphs(4, 2)) == 90
    assert len(all_regular_graphs(4, 1)) == 24


@pytest.mark.parametrize(
    ("n", "k", "n_num", "n_cat", "card", "seeds"),
    [
        (4, 2, 2, 2, 3, 8),
        (4, 2, 3, 0, 4, 8),
        (4, 2, 0, 3, 4, 8),
        (4, 2, 1, 2, 6, 8),
        (4, 3, 2, 2, 3, 4),
        (5, 2, 2, 2, 3, 2),
        (5, 3, 1, 3, 4, 2),
    ],
)
def test_optimal_against_brute_force(
    n: int, k: int, n_num: int, n_cat: int, card: int, seeds: int
) -> None:
    graphs = all_regular_graphs(n, k)
    for seed in range(seeds):
        qi = encode_frame(random_frame(n, 10 * seed + n, n_num=n_num, n_cat=n_cat, card=card))
        best = min(gcp(g, qi) for g in graphs)
        solution = solve_mip(qi, k, OPTIONS.time_limit)
        assert solution.proven_optimal
        assert solution.graph.is_regular(k)
        assert gcp(solution.graph, qi) == pytest.approx(best, abs=1e-9)
        # The paper's objective counts q_i in published record i even without the self-edge,
        # so it bounds the recoded GCP from above.
        assert gcp(solution.graph, qi) <= solution.objective / n + 1e-9


def test_objective_is_n_times_gcp_with_self_edges() -> None:
    # The "−1" constants of eq. (11) are accounted for: objective / n is the recoded GCP when the
    # graph has every self-edge, and an upper bound on it otherwise.
    for seed in range(5):
        qi = encode_frame(random_frame(6, seed, n_num=2, n_cat=2, card=4))
        solution = solve_mip(qi, 2, OPTIONS.time_limit)
        if np.all(solution.graph.matrix.diagonal() == 1):
            assert solution.objective / 6 == pytest.approx(gcp(solution.graph, qi), abs=1e-9)
        else:
            assert gcp(solution.graph, qi) <= solution.objective / 6 + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_not_worse_than_ring(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 8)), int(rng.integers(2, 4))
    qi = encode_frame(random_frame(n, seed, n_num=2, n_cat=3, card=5))
    graph = mip(qi, k, OPTIONS)
    assert graph.is_regular(k)
    assert gcp(graph, qi) <= gcp(ring_graph(n, k), qi) + 1e-12


def test_doka_table_1() -> None:
    frame = pd.DataFrame(
        {
            "age": [59, 57, 39, 28, 41, 37, 40, 53],
            "salary": [25, 27, 47, 41, 20, 59, 35, 34],
        }
    )
    qi = encode_qi(frame, Schema.build(["age", "salary"], numeric=["age", "salary"]))
    # The paper's published records t'0..t'7 (Table 1, bottom left) as (age, salary) ranges.
    published = [
        ((53, 59), (25, 34)),
        ((53, 59), (25, 34)),
        ((28, 39), (41, 59)),
        ((28, 41), (20, 59)),
        ((40, 59), (20, 35)),
        ((28, 39), (41, 59)),
        ((39, 41), (20, 47)),
        ((40, 57), (27, 35)),
    ]
    age_span, salary_span = 59 - 28, 59 - 20
    paper_gcp = float(
        np.mean(
            [
                ((a1 - a0) / age_span + (s1 - s0) / salary_span) / 2
                for (a0, a1), (s0, s1) in published
            ]
        )
    )
    start = time.perf_counter()
    solution = solve_mip(qi, 3, 120.0)
    elapsed = time.perf_counter() - start
    assert elapsed < 120.0 + 5.0
    assert solution.proven_optimal  # HiGHS proves it in about 1 s
    assert solution.graph.is_regular(3)
    assert gcp(solution.graph, qi) <= paper_gcp + 1e-12


def test_k_larger_than_n_is_infeasible() -> None:
    qi = encode_frame(random_frame(3, seed=0))
    with pytest.raises(InfeasibleError):
        mip(qi, 4, OPTIONS)


def test_k_one_is_identity_and_k_n_is_complete() -> None:
    qi = encode_frame(random_frame(5, seed=1))
    identity = mip(qi, 1, OPTIONS)
    assert np.array_equal(identity.matrix.toarray(), np.eye(5, dtype=np.int8))
    complete = solve_mip(qi, 5, OPTIONS.time_limit)
    assert complete.graph.n_edges == 25
    assert complete.objective / 5 == pytest.approx(gcp(complete.graph, qi), abs=1e-12)


def test_time_limit_without_solution_raises() -> None:
    # A zero time limit stops HiGHS before it has any incumbent.
    qi = encode_frame(random_frame(12, seed=3, n_num=2, n_cat=4, card=6))
    with pytest.raises(InfeasibleError, match="time limit"):
        mip(qi, 3, BuildOptions(time_limit=0.0))
