"""The attacker's view (``core.view``) against a brute force on the person-level graph: on tiny
random table and set releases, the candidates (edges in some perfect matching) and the k-factor
verdict computed on groups equal networkx's, computed person by person."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.view import AttackerView, group_rows, group_sets
from anonymatch.sets.io import SetRelease, from_sets
from anonymatch.sets.verify import set_view
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.verify import attacker_view
from tests.factories import dense_compatibility

QI, NUMERIC = ["age", "job"], ["age"]


def _has_perfect_matching(dense: np.ndarray) -> bool:
    n, m = dense.shape
    if n != m:
        return False
    g = nx.Graph()
    g.add_nodes_from(range(n + m))
    g.add_edges_from((i, n + j) for i, j in zip(*np.nonzero(dense), strict=True))
    return len(nx.bipartite.maximum_matching(g, top_nodes=range(n))) == 2 * n


def _brute_candidates(dense: np.ndarray) -> np.ndarray | None:
    """Person × row: (i, j) is a candidate iff it is an edge and the graph without i and j has
    a perfect matching; None if the graph has none."""
    if not _has_perfect_matching(dense):
        return None
    out = np.zeros(dense.shape, bool)
    for i, j in zip(*np.nonzero(dense), strict=True):
        rest = np.delete(np.delete(dense, i, axis=0), j, axis=1)
        out[i, j] = _has_perfect_matching(rest)
    return out


def _brute_k_factor(dense: np.ndarray, k: int) -> bool:
    """A k-factor of the person-level graph: a flow source → person (k) → row (1) → sink (k)
    of value k·n, by networkx."""
    n, m = dense.shape
    if n != m:
        return False
    g = nx.DiGraph()
    for i in range(n):
        g.add_edge("s", ("o", i), capacity=k)
    for j in range(m):
        g.add_edge(("p", j), "t", capacity=k)
    for i, j in zip(*np.nonzero(dense), strict=True):
        g.add_edge(("o", int(i)), ("p", int(j)), capacity=1)
    if n == 0:
        return True
    return nx.maximum_flow_value(g, "s", "t") == k * n


def _check(view: AttackerView, dense: np.ndarray) -> None:
    """The view's figures against the brute force on the person-level matrix ``dense``."""
    assert np.array_equal(view.person_matrix().toarray().astype(bool), dense)
    assert view.person_pairs() == int(dense.sum())
    per_person = view.per_original()[view.inverse]
    assert np.array_equal(per_person, dense.sum(axis=1))
    want = _brute_candidates(dense)
    cand = view.candidates()
    if want is None:
        assert cand is None
    else:
        assert cand is not None
        assert np.array_equal(cand.person_matrix().toarray().astype(bool), want)
        assert np.array_equal(cand.per_original()[cand.inverse], want.sum(axis=1))
        # the same candidates from a perfect matching the attacker already holds
        n = len(dense)
        g = nx.Graph()
        g.add_nodes_from(range(2 * n))
        g.add_edges_from((i, n + j) for i, j in zip(*np.nonzero(dense), strict=True))
        pm = nx.bipartite.maximum_matching(g, top_nodes=range(n))
        match = np.array([pm[i] - n for i in range(n)], np.int64)
        assert view.compatible(np.arange(n), match).all()
        given_pm = view.candidates(matching=match)
        assert given_pm is not None
        assert np.array_equal(given_pm.person_matrix().toarray(), cand.person_matrix().toarray())
    for k in (1, 2, 3):
        assert view.has_k_factor(k) == _brute_k_factor(dense, k)
        if dense.shape[0] == dense.shape[1]:
            assert (view.k_factor_flow(k) == k * len(dense)) == _brute_k_factor(dense, k)


@st.composite
def _table_release(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A tiny original with repeated QI vectors and random published cells (repeated too),
    sometimes with fewer or more rows than people."""
    n = draw(st.integers(1, 6))
    original = pd.DataFrame(
        {
            "age": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "job": draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)),
        }
    )
    m = n if draw(st.integers(0, 5)) else draw(st.integers(1, 6))
    ranges = st.sampled_from(["0", "1", "2", "0..1", "1..2", "0..2", "*"])
    sets = st.sampled_from(["a", "b", "a|b", "*"])
    release = pd.DataFrame(
        {
            "age": draw(st.lists(ranges, min_size=m, max_size=m)),
            "job": draw(st.lists(sets, min_size=m, max_size=m)),
        }
    )
    return original, release


@settings(max_examples=150, deadline=None)
@given(_table_release())
def test_table_view_is_the_person_level_brute_force(case: tuple[pd.DataFrame, pd.DataFrame]):
    original, release = case
    enc = encode_qi(original, Schema.build(QI, NUMERIC))
    view = attacker_view(parse_cells(release, enc), enc)
    _check(view, dense_compatibility(original, release, QI, NUMERIC))
    # groups: identical originals, identical published rows
    keys = original.astype(str).agg("|".join, axis=1).to_numpy()
    text = release.astype(str).agg("/".join, axis=1).to_numpy()
    for labels, inverse, counts in (
        (keys, view.inverse, view.counts),
        (text, view.group, view.mult),
    ):
        assert np.array_equal(np.bincount(inverse, minlength=len(counts)), counts)
        for t in set(labels):
            assert len(set(inverse[labels == t].tolist())) == 1
        assert len(counts) == len(set(labels))


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 6),
    seed=st.integers(0, 10**6),
    shuffled=st.booleans(),
)
def test_set_view_is_the_person_level_brute_force(n: int, seed: int, shuffled: bool) -> None:
    rng = np.random.default_rng(seed)
    b = 3  # few items: identical item sets are common
    dense_sets = rng.random((n, b)) < 0.5
    dense_sets[np.arange(n), rng.integers(0, b, n)] = True
    t = from_sets([np.flatnonzero(row).tolist() for row in dense_sets])
    x = np.zeros((n, b), bool)
    x[:, : t.n_items] = t.matrix.toarray()
    # published records: the originals (shuffled or not) with random uncertain items
    base = x[rng.permutation(n)] if shuffled else rng.random((n, b)) < 0.5
    unc = rng.random((n, b)) < 0.4
    thr = rng.integers(0, 3, n)
    items = [*t.items, *[f"new{j}" for j in range(b - t.n_items)]]
    rel = SetRelease(sp.csr_array(base), sp.csr_array(unc), thr, None, items, True)
    dense = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(n):
            certain = ~unc[j]
            dense[i, j] = (
                np.array_equal(x[i][certain], base[j][certain])
                and (x[i] != base[j]).sum() <= thr[j]
            )
    view = set_view(rel, t)
    _check(view, dense)
    assert len(view.counts) == len({tuple(row) for row in x.tolist()})


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 7), seed=st.integers(0, 10**6), density=st.floats(0.2, 0.8))
def test_restricted_view_is_the_subgraph(n: int, seed: int, density: float) -> None:
    """``restrict`` keeps the chosen people and rows; its figures are the subgraph's."""
    rng = np.random.default_rng(seed)
    dense = rng.random((n, n)) < density
    people = np.flatnonzero(rng.random(n) < 0.7)
    rows = rng.permutation(n)[: len(people)]
    view = AttackerView.singletons(sp.csr_array(dense.astype(np.int8)))
    sub = view.restrict(people, rows)
    _check(sub, dense[np.ix_(people, rows)])


def test_groups_of_rows_and_of_sets() -> None:
    uniq, inverse, counts = group_rows(np.array([[1, 2], [0, 5], [1, 2]]))
    assert uniq.tolist() == [[0, 5], [1, 2]] and inverse.tolist() == [1, 0, 1]
    assert counts.tolist() == [1, 2]
    m = sp.csr_array(np.array([[0, 1, 1], [1, 0, 0], [0, 1, 1], [0, 0, 0]]))
    sets, counts, inverse = group_sets(m)
    assert sets.shape == (3, 3) and counts.tolist() == [2, 1, 1]
    assert inverse.tolist() == [0, 1, 0, 2]


def test_one_class_view_is_linear() -> None:
    """A release of one class of n identical rows and n identical people: one pair between
    groups, the k-factor for every k ≤ n and every row a candidate of everyone."""
    n = 5000
    view = AttackerView.build(
        sp.csr_array(np.ones((1, 1), np.int8)),
        np.array([n]),
        np.zeros(n, np.int64),
        np.array([n]),
        np.zeros(n, np.int64),
    )
    assert view.pairs() == n and view.person_pairs() == n * n
    assert view.has_k_factor(n) and not view.has_k_factor(n + 1)
    cand = view.candidates()
    assert cand is not None and cand.c.nnz == 1 and cand.per_original().tolist() == [n]
    assert [a.tolist()[:2] for a in view.class_sizes()] == [[n, n], [n, n]]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 10**6), density=st.floats(0.0, 0.4))
def test_candidates_keep_their_flow_for_the_components(n: int, seed: int, density: float) -> None:
    """A view of candidates keeps the perfect flow it was found from, and a component of it
    (``restrict``) inherits its part: a perfect flow there (each group's people and rows
    filled, on candidate pairs only), no max-flow run, and the same candidates as one."""
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    n_u, n_g = int(rng.integers(1, n + 1)), int(rng.integers(1, n + 1))
    inverse = np.r_[np.arange(n_u), rng.integers(0, n_u, n - n_u)]
    group = np.r_[np.arange(n_g), rng.integers(0, n_g, n - n_g)]
    truth = rng.permutation(n)
    pairs = rng.random((n_u, n_g)) < density
    pairs[inverse, group[truth]] = True
    mult = np.bincount(group, minlength=n_g)
    view = AttackerView.build(sp.csr_array(pairs.astype(np.int8)), np.bincount(inverse),
                              inverse, mult, group)  # fmt: skip
    for cand in (view.candidates(truth), view.candidates()):
        assert cand is not None
        both = sp.bmat([[None, cand.c], [cand.c.T, None]])
        _, label = connected_components(both, directed=False)
        for comp in np.unique(label):
            who = np.flatnonzero(label[cand.inverse] == comp)
            where = np.flatnonzero(label[n_u + cand.group] == comp)
            if len(who) == 0:
                continue
            sub = cand.restrict(who, where)
            flow = sub.perfect_flow()
            assert flow is not None and "flow" not in sub._cache  # carried, no max-flow
            pair_u = np.repeat(np.arange(sub.c.shape[0]), np.diff(sub.c.indptr))
            assert (flow >= 0).all()
            assert np.array_equal(np.bincount(pair_u, flow, len(sub.counts)), sub.counts)
            assert np.array_equal(np.bincount(sub.c.indices, flow, len(sub.mult)), sub.mult)
            fresh = AttackerView.build(sub.c, sub.counts, sub.inverse, sub.mult, sub.group)
            want = fresh.candidates()
            assert want is not None
            got = sub.candidates_of(flow)
            assert (got.person_matrix() != want.person_matrix()).nnz == 0


def _k_factor_nx(dense: np.ndarray, k: int) -> bool:
    """networkx's max flow on the person-level network source → i (k) → j (1) → sink (k)."""
    n, m = dense.shape
    if n != m:
        return False
    g = nx.DiGraph()
    g.add_nodes_from(["s", "t"])
    for i in range(n):
        g.add_edge("s", ("i", i), capacity=k)
        g.add_edge(("j", i), "t", capacity=k)
    for i, j in zip(*np.nonzero(dense), strict=True):
        g.add_edge(("i", int(i)), ("j", int(j)), capacity=1)
    return nx.maximum_flow_value(g, "s", "t") == k * n


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 24),
    k=st.integers(1, 3),
    seed=st.integers(0, 10**6),
    density=st.floats(0.0, 0.6),
    batch=st.sampled_from([1, 2, 5, 40, 1 << 19]),
)
def test_blocks_checked_in_batches_are_each_block_s_k_factor(
    n: int, k: int, seed: int, density: float, batch: int
) -> None:
    """``k_factor_in_blocks`` answers, whatever the batches its flows run on (as small as one
    block each, or all of them), whether every block has a k-factor of its own (networkx)."""
    import anonymatch.core.matching as matching

    rng = np.random.default_rng(seed)
    n_blocks = int(rng.integers(1, 5))
    rows = rng.integers(0, n_blocks, n)
    cols = rows[rng.permutation(n)]  # as many rows as originals in every block
    dense = rng.random((n, n)) < density
    for b in range(n_blocks):  # usually a k-factor inside each block: a few shifted diagonals
        who, where = np.flatnonzero(rows == b), np.flatnonzero(cols == b)
        if rng.random() < 0.8:
            for s in range(k):
                dense[who, where[(np.arange(len(who)) + s) % len(who)]] = True
    u_keys = rng.integers(0, max(1, n // 2), n)  # some originals identical: groups
    dense = dense[np.argsort(u_keys, kind="stable")]
    view = AttackerView.singletons(sp.csr_array(dense.astype(np.int8)))
    _, inverse = np.unique(dense, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    grouped = AttackerView.build(
        sp.csr_array(dense[np.unique(inverse, return_index=True)[1]].astype(np.int8)),
        np.bincount(inverse),
        inverse,
    )
    expected = all(_k_factor_nx(dense[np.ix_(rows == b, cols == b)], k) for b in range(n_blocks))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(matching, "BLOCK_BATCH_ARCS", batch)
        assert view.k_factor_in_blocks(k, rows, cols) == expected
        assert grouped.k_factor_in_blocks(k, rows, cols) == expected


def _grouped(rng: np.random.Generator, n: int, density: float) -> AttackerView:
    """A random view on groups of n people and n rows, a planted perfect matching in it."""
    n_u, n_g = int(rng.integers(1, n + 1)), int(rng.integers(1, n + 1))
    inverse = np.r_[np.arange(n_u), rng.integers(0, n_u, n - n_u)]
    group = np.r_[np.arange(n_g), rng.integers(0, n_g, n - n_g)]
    pairs = rng.random((n_u, n_g)) < density
    pairs[inverse, group[rng.permutation(n)]] = True
    return AttackerView.build(sp.csr_array(pairs.astype(np.int8)), np.bincount(inverse),
                              inverse, np.bincount(group, minlength=n_g), group)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 10**6), density=st.floats(0.0, 0.6))
def test_restrict_on_groups_is_scipy_s_submatrix(n: int, seed: int, density: float) -> None:
    """``restrict`` (a compiled pass) gives scipy's ``c[live_u][:, live_g]`` exactly: the
    same stored pairs in the same order, and the groups shrunk to the members kept."""
    rng = np.random.default_rng(seed)
    view = _grouped(rng, n, density)
    people = rng.permutation(n)[: int(rng.integers(0, n + 1))]
    rows = rng.permutation(n)[: int(rng.integers(0, n + 1))]
    sub = view.restrict(people, rows)
    live_u = np.flatnonzero(np.bincount(view.inverse[people], minlength=view.c.shape[0]))
    live_g = np.flatnonzero(np.bincount(view.group[rows], minlength=view.c.shape[1]))
    expected = sp.csr_array(view.c[live_u][:, live_g])
    expected.sort_indices()
    assert sub.c.shape == expected.shape
    for got, want in ((sub.c.indptr, expected.indptr), (sub.c.indices, expected.indices)):
        assert got.tolist() == want.tolist()
    assert sub.c.data.dtype == np.int8 and sub.c.data.tolist() == expected.data.tolist()
    assert sub.counts.tolist() == np.bincount(sub.inverse, minlength=len(live_u)).tolist()
    assert sub.mult.tolist() == np.bincount(sub.group, minlength=len(live_g)).tolist()
    assert (live_u[sub.inverse] == view.inverse[people]).all()
    assert (live_g[sub.group] == view.group[rows]).all()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 10**6), density=st.floats(0.0, 0.5))
def test_candidates_of_a_part_use_the_flow_it_carries(n: int, seed: int, density: float) -> None:
    """A part of a view with a perfect flow (two disjoint halves, one restricted to) finds its
    candidates from the flow it carries, with no max-flow: the same candidates as a fresh
    view of the part, and the flow's nonzero pairs are ``perfect_flow``'s."""
    rng = np.random.default_rng(seed)
    half = n // 2
    left, right = _grouped(rng, half or 1, density), _grouped(rng, n - half, density)
    if not half:
        return
    c = sp.block_diag([left.c, right.c], format="csr").astype(np.int8)
    whole = AttackerView.build(
        c,
        np.r_[left.counts, right.counts],
        np.r_[left.inverse, left.c.shape[0] + right.inverse],
        np.r_[left.mult, right.mult],
        np.r_[left.group, left.c.shape[1] + right.group],
    )
    assert whole.perfect_flow() is not None
    part = whole.restrict(np.arange(half), np.arange(half))
    nonzero = part.perfect_flow_nonzero()
    assert nonzero is not None
    flow = part.perfect_flow()
    assert flow is not None and np.flatnonzero(flow).tolist() == nonzero[0].tolist()
    assert flow[nonzero[0]].tolist() == nonzero[1].tolist()

    def no_max_flow() -> None:
        raise AssertionError("a max-flow ran")

    object.__setattr__(part, "_perfect_flow", no_max_flow)
    cand = part.candidates()
    fresh = AttackerView.build(part.c, part.counts, part.inverse, part.mult, part.group)
    expected = fresh.candidates()
    assert cand is not None and expected is not None
    assert (cand.person_matrix() != expected.person_matrix()).nnz == 0


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(2, 9),
    k=st.integers(1, 3),
    seed=st.integers(0, 10**6),
    density=st.floats(0.0, 0.6),
    change=st.sampled_from(["none", "foreign", "degree", "column", "row", "twice"]),
)
def test_a_k_factor_hint_is_accepted_exactly_when_it_is_one(
    n: int, k: int, seed: int, density: float, change: str
) -> None:
    """``is_k_factor``: a planted union of k disjoint permutations inside the compatible pairs
    is accepted; with a pair moved off them (degrees kept), a pair dropped, a pair moved to a
    row or a person that then has k + 1, or a pair stored twice in place of another, it is
    refused (each a mutation the check must catch)."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    shifts, base = rng.permutation(n)[:k], rng.permutation(n)
    rows = np.repeat(np.arange(n), k)
    cols = base[(rows + np.tile(shifts, n)) % n]
    dense = rng.random((n, n)) < density
    dense[rows, cols] = True
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    if change == "foreign":  # two people swap a row each, one of them onto a pair not allowed
        for i, b in np.argwhere(~dense):  # degrees unchanged: only compatibility can refuse it
            mine = cols[rows == i]
            holders = [int(q) for q in rows[cols == b] if q != i]
            swap = [(q, a) for q in holders for a in mine
                    if a not in cols[rows == q] and b not in mine]  # fmt: skip
            if swap:
                q, a = swap[0]
                cols[np.flatnonzero((rows == i) & (cols == a))[0]] = b
                cols[np.flatnonzero((rows == q) & (cols == b))[0]] = a
                break
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
    elif change == "degree":
        rows, cols = rows[1:], cols[1:]
    elif change == "column":  # person 0's first pair to an allowed row it lacks
        free = [int(b) for b in np.flatnonzero(dense[0]) if b not in cols[rows == 0]]
        if free:
            cols[0] = free[0]
            order = np.lexsort((cols, rows))
            rows, cols = rows[order], cols[order]
    elif change == "row":  # one of person 0's pairs to person 1, on an allowed row it lacks
        give = [t for t in np.flatnonzero(rows == 0) if dense[1, cols[t]]]
        give = [t for t in give if cols[t] not in cols[rows == 1]]
        if give:
            rows[give[0]] = 1
            order = np.lexsort((cols, rows))
            rows, cols = rows[order], cols[order]
    elif change == "twice" and k > 1:  # person 0 takes its first row twice, another person
        c0, c1 = cols[0], cols[1]  # with that row takes person 0's second: degrees unchanged
        other = np.flatnonzero((cols == c0) & (rows != 0))[0]
        cols[1], cols[other] = c0, c1
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
    factor = sp.csr_array((np.ones(len(cols), np.int8), cols, indptr), shape=(n, n))
    view = AttackerView.singletons(sp.csr_array(dense.astype(np.int8)))
    regular = np.array_equal(np.bincount(rows, minlength=n), np.full(n, k)) and np.array_equal(
        np.bincount(cols, minlength=n), np.full(n, k)
    )
    distinct = len(set(zip(rows.tolist(), cols.tolist(), strict=True))) == len(rows)
    truth = regular and distinct and bool(dense[rows, cols].all())
    assert view.is_k_factor(k, factor) == truth
    if change == "none":
        assert truth
