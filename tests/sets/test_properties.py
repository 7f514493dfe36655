"""Set-valued pipeline: properties on random small inputs, brute force, statistics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from anonymatch.core.assignment import choose_assignment, random_assignments
from anonymatch.core.backtracking import backtracking_assignments
from anonymatch.core.errors import InfeasibleError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.sets.io import SetRelease, Transactions, from_sets
from anonymatch.sets.methods import names
from anonymatch.sets.methods.cahd import cahd_groups
from anonymatch.sets.methods.nonreciprocal import (
    _cyclic_conflicts,
    bit_vote,
    greedy_assignments,
    interleaved_order,
    ring_graph,
)
from anonymatch.sets.metrics import error_rate, query_error
from anonymatch.sets.order import (
    consecutive_distances,
    gray_order,
    gray_rank_bruteforce,
    gray_tsp_order,
    ring_length,
    segment_bounds,
)
from anonymatch.sets.pipeline import anonymize_sets
from anonymatch.sets.verify import set_view, verify_sets


def random_sets(n: int, b: int, density: float, seed: int, labels: int = 0) -> Transactions:
    rng = np.random.default_rng(seed)
    dense = rng.random((n, b)) < density
    dense[np.arange(n), rng.integers(0, b, n)] = True  # no empty record
    sets = [np.flatnonzero(row).tolist() for row in dense]
    lab = [f"s{x}" for x in rng.integers(0, labels, n)] if labels else None
    return from_sets(sets, lab)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 40), b=st.integers(1, 16), density=st.floats(0.05, 0.9), seed=st.integers(0)
)
def test_gray_comparator_agrees_with_bruteforce_ranks(
    n: int, b: int, density: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, b)) < density).astype(np.int64)
    order = gray_order(sp.csr_array(dense))
    ranks = gray_rank_bruteforce(dense)
    assert sorted(order.tolist()) == list(range(n))
    assert np.all(np.diff(ranks[order]) >= 0)


def test_gray_ranks_of_table_5() -> None:
    gray = np.array([[int(c) for c in f"{v:03b}"] for v in (0, 1, 3, 2, 6, 7, 5, 4)])
    assert gray_rank_bruteforce(gray).tolist() == list(range(8))


@settings(max_examples=40, deadline=None)
@given(gaps=st.lists(st.integers(0, 9), min_size=1, max_size=30), m=st.integers(2, 5))
def test_segment_dp_is_optimal(gaps: list[int], m: int) -> None:
    big_m = m + 2
    n = len(gaps) + 1
    bounds = segment_bounds(np.array(gaps), m, big_m)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == n
    if n <= big_m:
        assert len(sizes) == 1
        return
    # brute force over all compositions of n into parts in [m, M]
    best = None
    for parts in range(1, n // m + 1):
        for comp in itertools.product(range(m, big_m + 1), repeat=parts):
            if sum(comp) == n:
                cost = sum(gaps[e - 1] for e in np.cumsum(comp)[:-1])
                best = cost if best is None else min(best, cost)
    if best is not None:
        assert sizes.min() >= m and sizes.max() <= big_m
        assert sum(gaps[e - 1] for e in bounds[1:-1]) == best
    else:  # relaxed lower bound still yields segments of at most M
        assert sizes.max() <= big_m


@settings(max_examples=15, deadline=None)
@given(n=st.integers(4, 120), seed=st.integers(0, 10**6))
def test_tsp_keeps_endpoints_and_never_lengthens(n: int, seed: int) -> None:
    t = random_sets(n, 12, 0.3, seed)
    gray, rep_gray = gray_tsp_order(t.matrix, (10, 14), tsp=False)
    tsp, rep = gray_tsp_order(t.matrix, (10, 14))
    assert sorted(tsp.tolist()) == list(range(n))
    assert rep.hamming_gray_tsp <= rep.hamming_gray == rep_gray.hamming_gray_tsp
    assert ring_length(t.matrix, tsp) == rep.hamming_gray_tsp
    # endpoints of the segments actually used are fixed
    gaps = consecutive_distances(t.matrix, gray)[: n - 1]
    bounds = segment_bounds(gaps, 10, 14)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        assert tsp[lo] == gray[lo] and tsp[hi - 1] == gray[hi - 1]
        assert set(tsp[lo:hi].tolist()) == set(gray[lo:hi].tolist())


def test_tsp_exact_on_small_segment_is_optimal() -> None:
    t = random_sets(8, 10, 0.4, 5)
    order, rep = gray_tsp_order(t.matrix)
    dense = t.matrix.toarray().astype(int)

    def path_len(p: tuple[int, ...]) -> int:
        return int(sum(np.abs(dense[a] - dense[b]).sum() for a, b in itertools.pairwise(p)))

    g = gray_order(t.matrix)
    best = min(path_len((g[0], *mid, g[-1])) for mid in itertools.permutations(g[1:-1].tolist()))
    assert path_len(tuple(order.tolist())) == best


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 50), k=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_ring_extractions_are_disjoint_perfect_matchings(n: int, k: int, seed: int) -> None:
    k = min(k, n)
    graph = ring_graph(np.random.default_rng(seed).permutation(n), k)
    assert graph.is_regular(k)
    dense = graph.matrix.toarray().astype(int)
    closed = random_assignments(graph, np.random.default_rng(seed))
    wmc, steps = backtracking_assignments(graph, np.random.default_rng(seed))
    assert steps >= n * k
    for rounds in (closed, wmc):
        count = np.zeros_like(dense)
        for r in rounds:
            assert sorted(r.tolist()) == list(range(n))
            count[np.arange(n), r] += 1
        assert np.array_equal(count, dense)


def test_chosen_assignment_on_a_ring_is_uniform() -> None:
    """Chi-square: each of a record's k ring matches is its true match with probability 1/k."""
    n, k, draws = 10, 3, 3000
    graph = ring_graph(np.random.default_rng(0).permutation(n), k)
    rng = np.random.default_rng(11)
    hits = np.zeros((n, n), int)
    for _ in range(draws):
        hits[np.arange(n), choose_assignment(graph, rng)] += 1
    dense = graph.matrix.toarray().astype(bool)
    assert hits[~dense].sum() == 0
    assert min(chisquare(hits[i, dense[i]]).pvalue for i in range(n)) > 0.001 / n


@settings(max_examples=15, deadline=None)
@given(n=st.integers(6, 60), k=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_k_anonymous_release_verifies_and_tampering_is_caught(n: int, k: int, seed: int) -> None:
    t = random_sets(n, 10, 0.3, seed, labels=3)
    result = anonymize_sets(t, k=k, seed=seed, method="gray-tsp" if seed % 2 else "gray")
    assert result.verification.passed
    rel = result.release
    # labels travel with the true match
    assert rel.labels is not None and t.labels is not None
    assert np.array_equal(rel.labels[result.assignment], t.labels)
    # tamper: no uncertain items and no errors allowed -> a published record matches only the
    # originals equal to its base, so k-anonymity fails unless k copies of a set exist
    exact = SetRelease(rel.base, rel.uncertain * False, rel.max_errors * 0, rel.labels, rel.items)
    _, multiplicity = np.unique(np.asarray([str(r) for r in _rows(t)]), return_counts=True)
    if k >= 2 and multiplicity.max() < k:
        assert not verify_sets(exact, t, k=k).passed
    # dropping a record is always caught
    short = SetRelease(rel.base[1:], rel.uncertain[1:], rel.max_errors[1:], None, rel.items)
    assert not verify_sets(short, t, k=k).passed


def _rows(t: Transactions) -> list[list[int]]:
    m = t.matrix
    return [m.indices[m.indptr[i] : m.indptr[i + 1]].tolist() for i in range(t.n)]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 14), seed=st.integers(0, 10**6))
def test_compatibility_equals_bruteforce(n: int, seed: int) -> None:
    t = random_sets(n, 6, 0.4, seed)
    rng = np.random.default_rng(seed)
    base = sp.csr_array(rng.random((n, 7)) < 0.4)
    unc = sp.csr_array(rng.random((n, 7)) < 0.4)
    thr = rng.integers(0, 4, n)
    items = [*t.items, *[f"new{j}" for j in range(7 - t.n_items)]]  # 7 columns, some unknown
    rel = SetRelease(base, unc, thr, None, items, True)
    view = set_view(rel, t)
    c, inverse = view.expanded(), view.inverse
    x = np.zeros((n, 7), bool)
    x[:, : t.n_items] = t.matrix.toarray()
    bd, ud = base.toarray(), unc.toarray()
    dense = c.toarray().astype(bool)
    for i in range(n):
        for j in range(n):
            certain = ~ud[j]
            ok = np.array_equal(x[i][certain], bd[j][certain]) and (x[i] != bd[j]).sum() <= thr[j]
            assert dense[inverse[i], j] == ok


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 4), ell=st.integers(2, 4), seed=st.integers(0, 10**6))
def test_l_diverse_releases_have_l_labels_per_original(m: int, ell: int, seed: int) -> None:
    n = 6 * ell * m  # 3ℓ labels, each on 2m records: (2ℓ−1)-eligible
    t = random_sets(n, 10, 0.3, seed, labels=3 * ell)
    labels = np.asarray([f"s{i % (3 * ell)}" for i in range(n)], dtype=object)
    t = t.with_labels(np.random.default_rng(seed).permutation(labels))
    for method in names(sensitive=True):
        result = anonymize_sets(t, ell=ell, seed=seed, method=method)
        rel = result.release
        assert rel.labels is not None
        assert np.array_equal(rel.labels[result.assignment], t.labels)
        # on the generating graph, under the chosen assignment: ℓ distinct labels per original
        dense = result.graph.matrix.toarray().astype(bool)
        published = rel.labels[result.rows]  # label of graph's published record j
        for i in range(n):
            assert len(set(published[dense[i]])) >= ell  # CAHD groups hold ℓ…2ℓ−1
        report = verify_sets(rel, t, ell=ell)
        assert report.passed and report.min_labels_original is not None
        assert report.min_labels_original >= ell
        # tampering with labels: give every record the same label -> rejected
        same = SetRelease(rel.base, rel.uncertain, rel.max_errors, rel.labels * 0 + "x", rel.items)
        assert not verify_sets(same, t, ell=ell).passed


def test_any_perfect_matching_of_an_interleaved_ring_is_diverse() -> None:
    """Why the interleaved ring is sound: brute force over all perfect matchings."""
    n, ell = 10, 2
    t = random_sets(n, 6, 0.4, 1)
    labels = np.asarray([f"s{i % 4}" for i in range(n)], dtype=object)
    order = interleaved_order(t.matrix, labels, gray_order(t.matrix), 2 * ell - 1)
    _, codes = np.unique(labels, return_inverse=True)
    assert len(_cyclic_conflicts(order, codes, 2 * ell - 1)) == 0
    dense = ring_graph(order, ell).matrix.toarray().astype(bool)
    for perm in itertools.permutations(range(n)):
        if not all(dense[i, perm[i]] for i in range(n)):
            continue
        published_label = np.empty(n, object)
        published_label[list(perm)] = labels
        for i in range(n):
            assert len(set(published_label[dense[i]])) == ell


def test_paper_greedy_graph_has_diverse_anchor_labels_but_not_after_reextraction() -> None:
    t = random_sets(60, 10, 0.3, 2)
    labels = np.asarray([f"s{i % 6}" for i in range(60)], dtype=object)
    order, _ = gray_tsp_order(t.matrix)
    rounds = greedy_assignments(t.matrix, labels, order, 3, np.random.default_rng(0))
    assert np.array_equal(rounds[0], np.arange(60))  # round 1 is the identity
    for r in rounds:
        assert sorted(r.tolist()) == list(range(60))
    pairs = {(i, int(r[i])) for r in rounds for i in range(60)}
    assert len(pairs) == 3 * 60  # disjoint
    for i in range(60):
        assert len({labels[r[i]] for r in rounds}) == 3  # criterion (iii)
    # labels attached through a random re-extracted assignment: diversity can break
    graph = GeneralizationGraph.from_assignments(rounds)
    dense = graph.matrix.toarray().astype(bool)
    broken = 0
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = choose_assignment(graph, rng)
        published = np.empty(60, object)
        published[a] = labels
        broken += sum(len(set(published[dense[i]])) < 3 for i in range(60))
    assert broken > 0


def test_not_eligible_inputs_are_refused() -> None:
    t = random_sets(20, 6, 0.3, 0).with_labels(["a"] * 11 + ["b"] * 9)
    with pytest.raises(InfeasibleError):
        anonymize_sets(t, ell=2, method="cahd")
    with pytest.raises(InfeasibleError):
        anonymize_sets(t, ell=2)


def test_cahd_groups_are_diverse() -> None:
    t = random_sets(200, 12, 0.3, 4)
    rng = np.random.default_rng(0)
    labels = np.asarray([f"s{x}" for x in rng.integers(0, 10, 200)], dtype=object)
    for ell in (2, 4, 6):
        groups = cahd_groups(t.matrix, labels, ell)
        assert sorted(np.concatenate(groups).tolist()) == list(range(200))
        for g in groups:
            assert len(g) >= ell
            _, counts = np.unique(labels[g], return_counts=True)
            assert counts.max() * ell <= len(g)


def test_error_rate_and_query_error_by_hand() -> None:
    orig = from_sets([[0, 1], [1, 2], [0, 2, 3]])
    base = sp.csr_array(np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1]], bool))
    # true matches: 0 -> row 0 (0 flips), 1 -> row 1 (1 flip of 2), 2 -> row 2 (1 of 3)
    assert error_rate(orig.matrix, base, np.array([0, 1, 2])) == pytest.approx(
        (0 + 0.5 + 1 / 3) / 3
    )
    qe = query_error(orig.matrix, base, 1, 1, np.random.default_rng(0), n_queries=200)
    # single-item queries: counts per item original [2,2,2,1] vs base [2,2,2,1]
    assert qe.type1 == 0.0 and qe.type2 == 0.0
    shifted = sp.csr_array(np.array([[1, 1, 1, 1]] * 3, bool))
    qe2 = query_error(orig.matrix, shifted, 1, 1, np.random.default_rng(0), n_queries=200)
    assert 0 < qe2.type1 < 1 and 0 < qe2.type2 < 1


def test_bit_vote_against_bruteforce() -> None:
    t = random_sets(30, 9, 0.35, 8)
    graph = ring_graph(gray_order(t.matrix), 4)
    base, unc, thr = bit_vote(t.matrix, graph)
    x = t.matrix.toarray().astype(int)
    for j in range(30):
        pre = x[graph.matrix.toarray()[:, j].astype(bool)]
        votes = pre.sum(axis=0)
        assert np.array_equal(base.toarray()[j], 2 * votes > len(pre))
        assert np.array_equal(unc.toarray()[j], (votes > 0) & (votes < len(pre)))
        assert thr[j] == np.abs(pre - base.toarray()[j]).sum(axis=1).max()
