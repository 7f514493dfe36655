"""Baselines: strict Mondrian (bicliques) and the NH ring over relaxed Mondrian groups.

The partition checks use a plain recursive re-implementation of the median-split rules and an
exhaustive "no allowable strict cut" check, both independent of the vectorized partitioner.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from anonymatch.core.classes import privacy_step
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.columns.schema import EncodedQI, Schema, encode_qi
from anonymatch.tables.job import TableJob
from anonymatch.tables.methods import Builder, BuildOptions
from anonymatch.tables.methods._partition import relaxed_partition, strict_partition
from anonymatch.tables.methods.mondrian import mondrian
from anonymatch.tables.methods.ring import ring
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.order import lexicographic_order
from anonymatch.tables.recode import GeneralizedQI, recode
from tests.factories import encode_frame, random_frame

OPTS = BuildOptions()
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- table generation


@st.composite
def tables(draw: st.DrawFn, max_n: int = 60) -> tuple[EncodedQI, int]:
    """A small random encoded table (often with many duplicates) and a k in 1..5."""
    n = draw(st.integers(1, max_n))
    n_num = draw(st.integers(0, 2))
    n_cat = draw(st.integers(0 if n_num else 1, 2))
    card = draw(st.integers(1, 5))
    frame = random_frame(n, draw(st.integers(0, 2**32 - 1)), n_num, n_cat, card)
    value_range = draw(st.sampled_from([2, 4, 30]))  # small ranges → ties and duplicates
    for a in range(n_num):
        frame[f"n{a}"] = frame[f"n{a}"] % value_range
    qi_names = [c for c in frame.columns if c != "s"]
    weights = None
    if draw(st.booleans()):
        w = draw(
            st.lists(
                st.sampled_from([0.0, 0.5, 1.0, 3.0]),
                min_size=len(qi_names),
                max_size=len(qi_names),
            )
        )
        if sum(w) > 0:
            weights = dict(zip(qi_names, w, strict=True))
    schema = Schema.build(
        qi_names,
        numeric=[c for c in qi_names if c.startswith("n")],
        sensitive=["s"],
        weights=weights,
    )
    k = draw(st.integers(1, 5))
    return encode_qi(frame, schema), k


def _columns(qi: EncodedQI, rows: np.ndarray) -> list[np.ndarray]:
    """Values of every attribute (numeric first, then categorical codes) for ``rows``."""
    return [qi.num[rows, a] for a in range(qi.num.shape[1])] + [
        qi.cat[rows, b] for b in range(qi.cat.shape[1])
    ]


# ---------------------------------------------------------------- reference partitions


def _preference(qi: EncodedQI, rows: np.ndarray) -> list[tuple[int, bool, np.ndarray]]:
    """Attributes widest first: weighted normalized width, then unweighted, then column order;
    attributes taking a single value last. (attribute, varies, values) triples."""
    num_scale, cat_scale = qi.ncp_scales()
    dn = qi.num.shape[1]
    items = []
    for a, values in enumerate(_columns(qi, rows)):
        if a < dn:
            width = values.max() - values.min()
            weighted = width * num_scale[a]
            plain = width / qi.num_span[a] if qi.num_span[a] > 0 else 0.0
            varies = bool(width > 0)
        else:
            card = int(qi.cat_card[a - dn])
            extra = len(np.unique(values)) - 1
            weighted = extra * cat_scale[a - dn]
            plain = extra / (card - 1) if card > 1 else 0.0
            varies = extra > 0
        items.append(((not varies, -weighted, -plain, a), a, varies, values))
    items.sort(key=lambda item: item[0])
    return [(a, varies, values) for _, a, varies, values in items]


def _strict_cut(qi: EncodedQI, rows: np.ndarray, k: int) -> np.ndarray | None:
    """Left-side mask of the strict cut of ``rows``, or None: next to the median value,
    "≤ med" or "< med", the allowable one closest to balanced ("≤" on a tie), trying the
    attributes widest first."""
    m = len(rows)
    for _, varies, values in _preference(qi, rows):
        if not varies:
            return None
        med = np.sort(values)[(m - 1) // 2]
        le, lt = int((values <= med).sum()), int((values < med).sum())
        ok_le, ok_lt = min(le, m - le) >= k, min(lt, m - lt) >= k
        if ok_le and (not ok_lt or abs(2 * le - m) <= abs(2 * lt - m)):
            return values <= med
        if ok_lt:
            return values < med
    return None


def reference_strict(qi: EncodedQI, k: int) -> set[frozenset[int]]:
    """Strict Mondrian by plain recursion (an explicit stack)."""
    groups: set[frozenset[int]] = set()
    stack = [np.arange(qi.n)]
    while stack:
        rows = stack.pop()
        left = _strict_cut(qi, rows, k)
        if left is None:
            groups.add(frozenset(rows.tolist()))
        else:
            stack += [rows[left], rows[~left]]
    return groups


def reference_relaxed(qi: EncodedQI, k: int) -> set[frozenset[int]]:
    """Relaxed Mondrian by plain recursion: stable sort on the widest attribute, cut at ⌊m/2⌋."""
    groups: set[frozenset[int]] = set()
    stack = [np.arange(qi.n)]
    while stack:
        rows = stack.pop()
        m = len(rows)
        if m < 2 * k:
            groups.add(frozenset(rows.tolist()))
            continue
        _, _, values = _preference(qi, rows)[0]
        rows = rows[np.argsort(values, kind="stable")]
        stack += [rows[: m // 2], rows[m // 2 :]]
    return groups


def reference_ring(qi: EncodedQI, k: int, groups: set[frozenset[int]]) -> sp.csr_array:
    """The ring of Wong et al. within each group, in ``lexicographic_order`` of the group."""
    rows, cols = [], []
    for group in groups:
        members = np.array(sorted(group))
        members = members[lexicographic_order(qi.take(members))]
        m = len(members)
        for p in range(m):
            for t in range(k):
                rows.append(members[p])
                cols.append(members[(p - t) % m])
    return GeneralizationGraph.from_edges(np.array(rows), np.array(cols), qi.n).matrix


# ---------------------------------------------------------------- graph checks


def _components(graph: GeneralizationGraph) -> list[np.ndarray]:
    _, labels = connected_components(graph.matrix, directed=True, connection="weak")
    return [np.flatnonzero(labels == c) for c in range(labels.max() + 1)]


def _assert_same_cells(a: GeneralizedQI, b: GeneralizedQI) -> None:
    for x, y in ((a.num_lo, b.num_lo), (a.num_hi, b.num_hi), (a.num_star, b.num_star)):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.cat_star, b.cat_star)
    for x, y in zip(a.cat_sets, b.cat_sets, strict=True):
        assert x.shape == y.shape and (x != y).nnz == 0


def _gcp(graph: GeneralizationGraph, qi: EncodedQI) -> float:
    return information_loss(recode(graph, qi), qi).gcp


def _single_group_gcp(qi: EncodedQI) -> float:
    everyone = np.arange(qi.n)
    rows, cols = np.repeat(everyone, qi.n), np.tile(everyone, qi.n)
    return _gcp(GeneralizationGraph.from_edges(rows, cols, qi.n), qi)


def _assert_group_cells(qi: EncodedQI, graph: GeneralizationGraph, group: np.ndarray) -> None:
    """Every published record of ``group`` is recoded to the group's own ranges and sets."""
    cells = recode(graph, qi)
    for a in range(qi.num.shape[1]):
        np.testing.assert_array_equal(cells.num_lo[group, a], qi.num[group, a].min())
        np.testing.assert_array_equal(cells.num_hi[group, a], qi.num[group, a].max())
    for b, sets in enumerate(cells.cat_sets):
        present = np.zeros(sets.shape[1], dtype=np.int8)
        present[np.unique(qi.cat[group, b])] = 1
        for j in group:
            np.testing.assert_array_equal(sets[[j], :].toarray()[0], present)


def _assert_no_allowable_strict_cut(qi: EncodedQI, group: np.ndarray, k: int) -> None:
    """Exhaustive: no value threshold x of any attribute leaves ≥ k records on both sides."""
    m = len(group)
    for values in _columns(qi, group):
        for x in np.unique(values)[:-1]:
            left = int((values <= x).sum())
            assert left < k or m - left < k, f"allowable cut at {x} in a group of {m}"


# ---------------------------------------------------------------- ring


@SETTINGS
@given(tables())
def test_ring_properties(table: tuple[EncodedQI, int]) -> None:
    qi, k = table
    if k > qi.n:
        with pytest.raises(InfeasibleError):
            ring(qi, k, OPTS)
        return
    graph = ring(qi, k, OPTS)
    assert graph.is_regular(k)
    assert np.all(graph.matrix.diagonal() == 1)  # self-edges
    sizes = relaxed_partition(qi, k).sizes
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    if k >= 2:  # a ring of ≥ 2 records is connected: components are the groups
        for comp in _components(graph):
            assert k <= len(comp) <= 2 * k - 1
    groups = reference_relaxed(qi, k)
    assert {frozenset(g.tolist()) for g in relaxed_partition(qi, k).groups()} == groups
    assert (graph.matrix != reference_ring(qi, k, groups)).nnz == 0
    if qi.n >= 2 * k:
        assert _gcp(graph, qi) <= _single_group_gcp(qi) + 1e-12


def test_ring_n_equals_k_is_complete_biclique() -> None:
    qi = encode_frame(random_frame(4, seed=3))
    graph = ring(qi, 4, OPTS)
    assert graph.n_edges == 16 and graph.is_regular(4)


def test_ring_k_1_is_identity() -> None:
    qi = encode_frame(random_frame(30, seed=4))
    graph = ring(qi, 1, OPTS)
    assert graph.n_edges == 30 and np.all(graph.matrix.diagonal() == 1)
    assert _gcp(graph, qi) == 0.0


# ---------------------------------------------------------------- mondrian


@SETTINGS
@given(tables())
def test_mondrian_properties(table: tuple[EncodedQI, int]) -> None:
    qi, k = table
    if k > qi.n:
        with pytest.raises(InfeasibleError):
            mondrian(qi, k, OPTS)
        return
    graph = mondrian(qi, k, OPTS)
    assert graph.is_balanced()
    assert graph.min_degree() >= k
    assert np.all(graph.matrix.diagonal() == 1)
    groups = reference_strict(qi, k)
    assert {frozenset(g.tolist()) for g in strict_partition(qi, k).groups()} == groups
    dense = graph.matrix.toarray()
    covered = np.zeros_like(dense)
    for frozen in groups:
        group = np.array(sorted(frozen))
        m = len(group)
        assert m >= k
        _assert_no_allowable_strict_cut(qi, group, k)
        _assert_group_cells(qi, graph, group)
        assert dense[np.ix_(group, group)].all()  # a complete biclique
        covered[np.ix_(group, group)] = 1
    assert not np.any(dense & ~covered.astype(bool))  # no edge between groups
    # Stored as classes, recoded from them: the same cells as from its edges.
    assert graph.classes is not None and graph.n_edges == int(dense.sum())
    cells = recode(graph, qi)
    _assert_same_cells(cells, recode(GeneralizationGraph(graph.matrix), qi))
    # Components of the graph never straddle groups and recode to identical cells.
    for comp in _components(graph):
        assert np.all(cells.num_lo[comp] == cells.num_lo[comp[0]])
        assert np.all(cells.num_hi[comp] == cells.num_hi[comp[0]])
        for sets in cells.cat_sets:
            assert (sets[comp] != sets[np.repeat(comp[0], len(comp))]).nnz == 0


@pytest.mark.parametrize("k", [1, 2, 5])
@pytest.mark.parametrize("extra", [(0, 0), (0, 3), (3, 0), (2, 7), (9, 1)])
def test_mondrian_two_clusters_lose_nothing(k: int, extra: tuple[int, int]) -> None:
    """Two well-separated clusters of ≥ k identical records each (sizes k+a and k+b) end up in
    groups of identical records, whatever side of the cluster boundary the median falls on."""
    sizes = (k + extra[0], k + extra[1])
    frame = pd.DataFrame(
        {
            "n0": [3] * sizes[0] + [90] * sizes[1],
            "n1": [7.5] * sizes[0] + [-2.0] * sizes[1],
            "c0": ["a"] * sizes[0] + ["z"] * sizes[1],
            "s": ["x"] * sum(sizes),
        }
    )
    qi = encode_frame(frame)
    graph = mondrian(qi, k, OPTS)
    assert _gcp(graph, qi) == 0.0
    assert graph.is_balanced() and graph.min_degree() >= k


def test_strict_falls_back_to_the_next_attribute() -> None:
    """The widest attribute (n0: two outliers) has no allowable cut for k = 3, the next one
    (n1) has; the first attempt re-lays the records out, the second must see that layout."""
    k = 3
    frame = pd.DataFrame(
        {
            "n0": [100] * 10 + [0] * 2,
            "n1": [11, 3, 7, 0, 9, 1, 10, 5, 2, 8, 6, 4],
            "s": ["x"] * 12,
        }
    )
    qi = encode_frame(frame)
    groups = {frozenset(g.tolist()) for g in strict_partition(qi, k).groups()}
    assert groups == reference_strict(qi, k)
    assert len(groups) > 1
    for group in groups:
        _assert_no_allowable_strict_cut(qi, np.array(sorted(group)), k)


def test_mondrian_large_identical_group_is_a_biclique() -> None:
    k, m = 3, 40
    frame = pd.DataFrame(
        {"n0": [5] * m + [9] * k, "c0": ["a"] * m + ["b"] * k, "s": ["x"] * (m + k)}
    )
    qi = encode_frame(frame)
    graph = mondrian(qi, k, OPTS)
    assert graph.n_edges == m * m + k * k  # K_{m,m} and K_{k,k}
    assert graph.matrix.nnz == graph.n_edges
    assert graph.is_balanced() and graph.min_degree() == k
    assert _gcp(graph, qi) == 0.0


def test_mondrian_huge_group_never_builds_its_edges() -> None:
    """200,000 identical records form one class of 4·10^10 edges: the graph, its degrees, the
    recoding and the privacy step work from the class (O(n)), never from the edges."""
    m = 200_000
    qi = encode_frame(pd.DataFrame({"n0": [5] * m, "c0": ["a"] * m, "s": ["x"] * m}))
    graph = mondrian(qi, 2, OPTS)
    assert graph.n_edges == m * m and graph.min_degree() == m and graph.is_balanced()
    assert _gcp(graph, qi) == 0.0
    truth = privacy_step(graph, np.random.default_rng(0))
    assert np.array_equal(np.sort(truth), np.arange(m))  # a permutation of the one class


def test_mondrian_large_mixed_group_keeps_its_biclique() -> None:
    """k−1 outliers cannot be cut off, so the group is not all identical: biclique."""
    k, m = 3, 30
    frame = pd.DataFrame({"n0": [0] * (k - 1) + [1] * (m - k + 1), "s": ["x"] * m})
    qi = encode_frame(frame)
    graph = mondrian(qi, k, OPTS)
    assert graph.n_edges == m * m
    assert _gcp(graph, qi) == 1.0


@pytest.mark.parametrize("builder", [mondrian, ring])
def test_bad_k(builder: Builder) -> None:
    qi = encode_frame(random_frame(5, seed=1))
    with pytest.raises(InfeasibleError):
        builder(qi, 6, OPTS)
    with pytest.raises(InputError):  # the builders trust k ≥ 1: the typed job checks it
        TableJob.build(dict(qi=["n0"], k=0, method=builder.__name__))
    with pytest.raises(InfeasibleError):
        builder(encode_frame(random_frame(0, seed=1)), 1, OPTS)


@pytest.mark.parametrize("k", [2, 7])
def test_larger_table(k: int) -> None:
    """Many rounds of the level-by-level partitioner on a few thousand records."""
    qi = encode_frame(random_frame(3000, seed=11, n_num=3, n_cat=3, card=6))
    graph = mondrian(qi, k, OPTS)
    assert graph.is_balanced() and graph.min_degree() >= k
    part = strict_partition(qi, k)
    for group in part.groups():
        _assert_no_allowable_strict_cut(qi, group, k)
    ring_graph = ring(qi, k, OPTS)
    assert ring_graph.is_regular(k)
    sizes = relaxed_partition(qi, k).sizes
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert _gcp(ring_graph, qi) < _single_group_gcp_closed_form(qi)


def _single_group_gcp_closed_form(qi: EncodedQI) -> float:
    """GCP of one group of all records: every cell is the full range/set (no n² graph)."""
    scales = qi.ncp_scales()
    num_width = qi.num.max(axis=0) - qi.num.min(axis=0)
    cat_extra = np.array([len(np.unique(qi.cat[:, b])) - 1 for b in range(qi.cat.shape[1])])
    return float(num_width @ scales[0] + cat_extra @ scales[1])
