"""Adaptive anonymity (Choromanski, Jebara, Tang 2013): b-matching, verification, attacks."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from anonymatch.cli import main
from anonymatch.core.view import AttackerView
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.methods import names
from anonymatch.tables.methods.agglomerative import agglomerative
from anonymatch.tables.methods.bmatching import (
    SuppressionProblem,
    bipartite_bmatching,
    stars_of,
    symmetric_bmatching,
    variational_bmatching,
)
from anonymatch.tables.models.adaptive import anonymize_adaptive, starred_cells
from anonymatch.tables.risk.attack import candidate_counts, simulate_attack
from anonymatch.tables.verify import verify_adaptive

# Figures 1 and 2 of the paper: 6 users, d = 4, δ = 2.
PAPER_X = np.array(
    [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 1], [1, 0, 1, 1], [1, 1, 0, 0], [0, 1, 1, 1]]
)
METHODS = names(levels=True)


def star_count(x: np.ndarray, adjacency: np.ndarray) -> int:
    """s(G) = Σᵢₖ [some j with Gᵢⱼ = 1 differs from xᵢ at k]."""
    diff = x[:, None, :] != x[None, :, :]
    return int(np.any(adjacency[:, :, None] & diff, axis=1).sum())


def brute_min_stars(x: np.ndarray, delta: int) -> int:
    """The fewest stars over all δ-regular graphs (self-edges included) on n ≤ 5 records, by
    enumerating every off-diagonal 0/1 matrix (vectorized over the 2^(n(n−1)) of them)."""
    n = len(x)
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    bits = (np.arange(2 ** len(rows))[:, None] >> np.arange(len(rows))) & 1
    out_deg = bits @ (rows[:, None] == np.arange(n))
    in_deg = bits @ (cols[:, None] == np.arange(n))
    feasible = bits[np.all(out_deg == delta - 1, axis=1) & np.all(in_deg == delta - 1, axis=1)]
    best = None
    for b in feasible:
        g = np.eye(n, dtype=bool)
        g[rows[b == 1], cols[b == 1]] = True
        s = star_count(x, g)
        best = s if best is None else min(best, s)
    assert best is not None
    return best


def derangement_min_stars(x: np.ndarray) -> int:
    """δ = 2: a 2-regular graph with self-edges is the identity plus a derangement."""
    n = len(x)
    best = None
    for perm in itertools.permutations(range(n)):
        if any(p == i for i, p in enumerate(perm)):
            continue
        g = np.eye(n, dtype=bool)
        g[np.arange(n), perm] = True
        s = star_count(x, g)
        best = s if best is None else min(best, s)
    assert best is not None
    return best


def pairing_min_stars(x: np.ndarray) -> int:
    """δ = 2, symmetric: the identity plus a perfect matching of the records (pairs)."""
    n = len(x)
    best = None
    for matching in _pairings(list(range(n))):
        g = np.eye(n, dtype=bool)
        for i, j in matching:
            g[i, j] = g[j, i] = True
        s = star_count(x, g)
        best = s if best is None else min(best, s)
    assert best is not None
    return best


def _pairings(items: list[int]):
    if not items:
        yield []
        return
    first = items[0]
    for idx in range(1, len(items)):
        rest = items[1:idx] + items[idx + 1 :]
        for tail in _pairings(rest):
            yield [(first, items[idx]), *tail]


def kanon_min_stars(x: np.ndarray, k: int) -> int:
    """The fewest stars of a k-anonymous suppression: every set partition into blocks ≥ k."""
    n = len(x)
    best = None
    for labels in itertools.product(range(n), repeat=n):
        if labels[0] != 0 or any(labels[i] > max(labels[:i]) + 1 for i in range(1, n)):
            continue  # canonical labelling only
        lab = np.array(labels)
        sizes = np.bincount(lab)
        if np.any(sizes[sizes > 0] < k):
            continue
        s = sum(
            int(sizes[c]) * int(np.any(x[lab == c] != x[lab == c][0], axis=0).sum())
            for c in np.unique(lab)
        )
        best = s if best is None else min(best, s)
    assert best is not None
    return best


def _problem(x: np.ndarray, delta) -> SuppressionProblem:
    x = np.ascontiguousarray(x, dtype=np.int64)
    delta = np.broadcast_to(np.asarray(delta, np.int64), (len(x),)).copy()
    return SuppressionProblem(x, np.zeros(x.shape, bool), np.ones(x.shape), delta)


def _frame(x: np.ndarray, levels: np.ndarray | None = None) -> pd.DataFrame:
    cols = {f"a{k}": [f"v{v}" for v in x[:, k]] for k in range(x.shape[1])}
    frame = pd.DataFrame(cols)
    frame["key"] = [f"id{i}" for i in range(len(x))]
    if levels is not None:
        frame["level"] = levels
    return frame


# --- the paper's worked example -------------------------------------------------------------


def symmetric_at_least_min_stars(x: np.ndarray, delta: int) -> int:
    """The fewest stars over symmetric graphs with every degree ≥ δ (self-edges included) that
    keep a δ-factor: the family Algorithm 2 searches for uniform δ (see bmatching.py)."""
    from anonymatch.core.matching import has_k_factor

    n = len(x)
    iu = np.triu_indices(n, 1)
    best = None
    for bits in itertools.product((0, 1), repeat=len(iu[0])):
        g = np.eye(n, dtype=bool)
        g[iu] = bits
        g |= g.T
        if np.any(g.sum(1) < delta):
            continue
        s = star_count(x, g)
        if best is not None and s >= best:
            continue
        if has_k_factor(sp.csr_array(g.astype(np.int8)), np.ones(n, np.int64), delta) == delta * n:
            best = s
    assert best is not None
    return best


def test_paper_example_optima_by_brute_force():
    """Figures 1–2: k-anonymity (cliques) needs 10 stars, a 2-regular b-matching 8, a symmetric
    2-regular one 10. Symmetric graphs with degrees ≥ 2 that keep a 2-factor reach 8."""
    assert kanon_min_stars(PAPER_X, 2) == 10
    assert derangement_min_stars(PAPER_X) == 8
    assert brute_min_stars(PAPER_X[:5], 2) == derangement_min_stars(PAPER_X[:5])
    assert pairing_min_stars(PAPER_X) == 10
    assert symmetric_at_least_min_stars(PAPER_X, 2) == 8


def test_paper_example_algorithms_reach_the_optima():
    p = _problem(PAPER_X, 2)
    assert variational_bmatching(p).star_total(p) == 8
    sym = variational_bmatching(p, symmetric=True)
    assert sym.star_total(p) == 8  # the optimum of its family (degrees ≥ δ with a δ-factor)
    assert agglomerative(p).star_total(p) >= 10


@pytest.mark.parametrize("method", METHODS)
def test_paper_example_release_verified(method):
    frame = _frame(PAPER_X)
    release = anonymize_adaptive(frame, qi=["a0", "a1", "a2", "a3"], k=2, method=method, seed=1)
    assert release.report["verification"]["passed"]
    expected = {"bmatching": 8, "bmatching-symmetric": 8}
    if method in expected:
        assert release.report["loss"]["stars"] == expected[method]
    assert (release.table == "*").to_numpy().sum() == release.report["loss"]["stars"]


# --- the b-matching solvers against brute force ---------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 3))
def test_bipartite_bmatching_optimal(seed, delta):
    rng = np.random.default_rng(seed)
    n = 4
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    cost = rng.integers(0, 5, len(rows)).astype(float)
    chosen = bipartite_bmatching(n, rows, cols, cost, np.full(n, delta), exact=True)
    g = np.zeros((n, n), bool)
    g[rows[chosen], cols[chosen]] = True
    assert np.all(g.sum(0) == delta - 1) and np.all(g.sum(1) == delta - 1)
    best = min(
        sum(cost[e] for e in range(len(rows)) if bits[e])
        for bits in itertools.product((0, 1), repeat=len(rows))
        if _degrees_ok(n, rows, cols, bits, delta - 1)
    )
    assert cost[chosen].sum() == pytest.approx(best)


def _degrees_ok(n, rows, cols, bits, need) -> bool:
    g = np.zeros((n, n), int)
    for e, b in enumerate(bits):
        g[rows[e], cols[e]] += b
    return bool(np.all(g.sum(0) == need) and np.all(g.sum(1) == need))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 6), st.booleans())
def test_symmetric_bmatching_optimal(seed, n, adaptive):
    rng = np.random.default_rng(seed)
    rows, cols = np.triu_indices(n, 1)
    cost = rng.integers(0, 6, len(rows)).astype(float)
    delta = rng.integers(1, 4, n) if adaptive else np.full(n, int(rng.integers(2, 4)))
    exact = not adaptive
    chosen = symmetric_bmatching(n, rows, cols, cost, delta, exact)
    deg = np.bincount(np.concatenate([rows[chosen], cols[chosen]]), minlength=n)
    need = delta - 1
    odd = exact and int(need.sum()) % 2 == 1
    if exact:
        assert np.all((deg == need) | (odd & (deg == need + 1))) and (deg - need).sum() == odd
    else:
        assert np.all(deg >= need)
    best = np.inf
    for bits in itertools.product((0, 1), repeat=len(rows)):
        b = np.array(bits, bool)
        dg = np.bincount(np.concatenate([rows[b], cols[b]]), minlength=n)
        ok = np.all(dg >= need) and (dg - need).sum() == odd if exact else np.all(dg >= need)
        if ok:
            best = min(best, cost[b].sum())
    assert cost[chosen].sum() == pytest.approx(best)


# --- Theorems 1 and 2 -----------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 5), st.integers(2, 3))
def test_theorem1_first_iteration_within_delta_of_optimum(seed, n, delta):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, (n, 3))
    p = _problem(x, delta)
    first = variational_bmatching(p, epsilons=[0.5], max_iter=1).history[0][2]
    optimum = brute_min_stars(x, delta)
    assert first <= delta * optimum
    assert variational_bmatching(p).star_total(p) >= optimum


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.booleans())
def test_theorem2_stars_never_increase(seed, symmetric, adaptive):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(6, 30)), int(rng.integers(2, 7))
    x = rng.integers(0, int(rng.integers(2, 4)), (n, d))
    delta = rng.integers(1, 5, n) if adaptive else np.full(n, int(rng.integers(2, 5)))
    p = _problem(x, np.minimum(delta, n))
    result = variational_bmatching(p, symmetric=symmetric)
    # Theorem 2 bounds the variational objective Σ U·(1 − (ε/(1+ε))^c), not the star count:
    # a reweighting iteration may add a star (seed 1835, not symmetric, uniform δ: 9 -> 10
    # stars at ε = 0.5, found by hypothesis in issue 36's session), and a new, smaller ε
    # restarts from other weights (seed 1813: 17 -> 18 stars at ε = 2^-6). What the sweep
    # guarantees is that no iteration is lost: the solution returned has the fewest stars of
    # every solve.
    assert result.star_total(p) <= min(h[2] for h in result.history)


# --- properties of every release ------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(METHODS), st.booleans())
def test_every_release_verified(seed, method, adaptive):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    x = rng.integers(0, 3, (n, 3))
    levels = rng.integers(1, 5, n) if adaptive else None
    frame = _frame(x, levels)
    kw = {"k_column": "level"} if adaptive else {"k": int(rng.integers(1, 4))}
    release = anonymize_adaptive(frame, ["a0", "a1", "a2"], method=method, seed=seed, **kw)
    enc = release.qi
    delta = levels if adaptive else np.full(n, kw["k"])
    assert verify_adaptive(parse_cells(release.table, enc), enc, delta).passed
    assert "level" not in release.table.columns  # levels are never published
    # rows keep their own values or a star; the multiset of keys is preserved
    assert sorted(release.table["key"]) == sorted(frame["key"])
    for col in ["a0", "a1", "a2"]:
        pub = release.table.set_index("key")[col]
        orig = frame.set_index("key")[col]
        assert ((pub == orig.loc[pub.index]) | (pub == "*")).all()


def test_symmetric_output_is_symmetric_wrt_canonical_matching():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (40, 4))
    p = _problem(x, rng.integers(1, 5, 40))
    g = variational_bmatching(p, symmetric=True).adjacency(40).toarray()
    assert np.array_equal(g, g.T)
    assert np.all(g.sum(1) >= p.delta)


def test_missing_values_are_initial_stars():
    x = PAPER_X.copy()
    frame = _frame(x)
    frame.loc[0, "a1"] = "?"
    release = anonymize_adaptive(frame, ["a0", "a1", "a2", "a3"], k=2, seed=0)
    row = release.table.set_index("key").loc["id0"]
    assert row["a1"] == "*"
    assert release.report["loss"]["initial_stars"] == 1


def test_cell_weights_steer_the_stars():
    x = PAPER_X
    frame = _frame(x)
    weights = pd.DataFrame(np.ones(x.shape), columns=["a0", "a1", "a2", "a3"])
    weights["a0"] = 100.0  # starring attribute a0 is very expensive
    release = anonymize_adaptive(frame, ["a0", "a1", "a2", "a3"], k=2, cell_weights=weights)
    plain = anonymize_adaptive(frame, ["a0", "a1", "a2", "a3"], k=2)
    assert (release.table["a0"] == "*").sum() < (plain.table["a0"] == "*").sum()


def test_publication_order_is_uniform():
    frame = _frame(PAPER_X[:4])
    counts = np.zeros(4)
    for seed in range(400):
        table = anonymize_adaptive(
            frame, ["a0", "a1", "a2", "a3"], k=2, method="agglomerative", seed=seed
        ).table
        counts[int(np.flatnonzero(table["key"].to_numpy() == "id0")[0])] += 1
    assert chisquare(counts).pvalue > 1e-3


# --- verification: tampering and the matchable-edge computation ------------------------------


def _release(seed: int = 0, n: int = 30):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (n, 3))
    levels = rng.integers(2, 5, n)
    frame = _frame(x, levels)
    release = anonymize_adaptive(frame, ["a0", "a1", "a2"], k_column="level", seed=seed)
    return release, levels


def test_tampered_releases_rejected():
    release, levels = _release()
    enc = release.qi
    table = release.table
    assert verify_adaptive(parse_cells(table, enc), enc, levels).passed
    stars = np.argwhere(table[["a0", "a1", "a2"]].to_numpy() == "*")
    assert len(stars)
    rejected = 0
    for r, c in stars:  # un-starring a cell (publishing the true value) loses candidates
        bad = table.copy()
        key = bad.loc[r, "key"]
        idx = int(key[2:])
        x = release.qi.cat[idx]
        bad.iloc[r, c] = str(enc.cat_domains[c][x[c]])
        rejected += not verify_adaptive(parse_cells(bad, enc), enc, levels).passed
    assert rejected >= 1
    assert not verify_adaptive(parse_cells(table.iloc[1:], enc), enc, levels).passed
    raised = levels.copy()
    raised[0] = 30  # a stricter level than the release was made for
    assert not verify_adaptive(parse_cells(table, enc), enc, raised).passed


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 7), st.floats(0.2, 0.7))
def test_matchable_edges_agree_with_networkx(seed, n, density):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < density) | np.eye(n, dtype=bool)
    c = sp.csr_array(dense.astype(np.int8))
    cand = AttackerView.singletons(c).candidates()
    assert cand is not None
    ok = cand.person_matrix().toarray().astype(bool)
    for i, j in zip(*np.nonzero(dense), strict=True):
        assert ok[i, j] == _in_some_perfect_matching(dense, i, j)


def _in_some_perfect_matching(dense: np.ndarray, i: int, j: int) -> bool:
    n = len(dense)
    rest = np.delete(np.delete(dense, i, axis=0), j, axis=1)
    g = nx.Graph()
    g.add_nodes_from(range(2 * (n - 1)))
    g.add_edges_from((a, n - 1 + b) for a, b in zip(*np.nonzero(rest), strict=True))
    m = nx.bipartite.maximum_matching(g, top_nodes=range(n - 1)) if n > 1 else {}
    return len(m) // 2 == n - 1


# --- the attack simulator -------------------------------------------------------------------


def _brute_candidates(dense: np.ndarray, truth: np.ndarray, known: np.ndarray) -> list[int]:
    n = len(dense)
    cand: dict[int, set[int]] = {i: set() for i in np.flatnonzero(~known)}
    for perm in itertools.permutations(range(n)):
        if not all(dense[i, perm[i]] for i in range(n)):
            continue
        if any(perm[i] != truth[i] for i in np.flatnonzero(known)):
            continue
        for i in cand:
            cand[i].add(perm[i])
    return [len(cand[i]) for i in sorted(cand)]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 7))
def test_attack_agrees_with_enumeration(seed, n):
    rng = np.random.default_rng(seed)
    truth = rng.permutation(n)
    dense = rng.random((n, n)) < 0.4
    dense[np.arange(n), truth] = True
    known = np.zeros(n, bool)
    known[rng.choice(n, int(rng.integers(0, n)), replace=False)] = True
    got = candidate_counts(sp.csr_array(dense.astype(np.int8)), truth, known)
    assert list(got) == _brute_candidates(dense, truth, known)


# bmatching (Choromanski Algorithm 1) need not give a graph symmetric w.r.t. the true matching
@pytest.mark.parametrize("method", [m for m in names(levels=True) if m != "bmatching"])
def test_lemmas_4_3_and_4_5_hold(method):
    """Cliques (k-anonymity) and graphs symmetric w.r.t. the true matching keep every unknown
    person (δᵢ − c)-anonymous, here on the method's own graph (the weakest adversary view)."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, (60, 5))
    delta = rng.integers(2, 7, 60) if method != "agglomerative" else np.full(60, 5)
    frame = _frame(x, delta)
    release = anonymize_adaptive(
        frame, [f"a{k}" for k in range(5)], k_column="level", method=method, seed=0
    )
    key = release.table["key"].to_numpy()
    truth = np.empty(60, np.int64)
    truth[[int(v[2:]) for v in key]] = np.arange(60)
    graph = release.graph.matrix
    for c in (1, 2):
        report = simulate_attack(graph, truth, delta, c, 20, np.random.default_rng(c))
        assert report.min_slack >= 0, report


def test_asymmetric_graph_can_degrade():
    """Theorem 4.1's caveat: in this asymmetric 3-regular graph, knowing original 0's true row
    leaves original 4 a single candidate (< δ − c = 2); its symmetric closure keeps ≥ 2."""
    g = np.array(
        [
            [1, 1, 0, 1, 0, 0],
            [0, 1, 0, 1, 1, 0],
            [1, 0, 1, 0, 0, 1],
            [0, 1, 0, 1, 1, 0],
            [0, 0, 1, 0, 1, 1],
            [1, 0, 1, 0, 0, 1],
        ],
        bool,
    )
    known = np.zeros(6, bool)
    known[0] = True
    counts = candidate_counts(sp.csr_array(g.astype(np.int8)), np.arange(6), known)
    assert counts.min() == 1 and counts[3] == 1  # original 4 is the 4th unknown
    closure = sp.csr_array((g | g.T).astype(np.int8))
    for i in range(6):
        known = np.zeros(6, bool)
        known[i] = True
        degrees = np.asarray((g | g.T).sum(1))[~known]
        assert np.all(candidate_counts(closure, np.arange(6), known) >= degrees - 1)


def test_attack_cli_and_bad_inputs(tmp_path, capsys):
    x = np.random.default_rng(0).integers(0, 3, (25, 3))
    levels = np.random.default_rng(1).integers(2, 5, 25)
    src = tmp_path / "in.csv"
    _frame(x, levels).to_csv(src, index=False)
    out = tmp_path / "out.csv"
    base = ["--qi", "a0,a1,a2", "--k-column", "level"]
    assert (
        main(
            [
                "anonymize",
                str(src),
                "-o",
                str(out),
                "--method",
                "bmatching",
                "--sensitive",
                "key",
                "--l",
                "1",  # per-record levels run no sensitive model: key published unprotected
                "--seed",
                "1",
                "-q",
                *base,
            ]
        )
        == 0
    )
    assert main(["verify", str(src), str(out), *base]) == 0
    assert (
        main(
            [
                "attack",
                str(src),
                str(out),
                "--known",
                "2",
                "--trials",
                "5",
                "--key",
                "key",
                "--json",
                *base,
            ]
        )
        == 0
    )
    for levels_bad, needle in [
        (np.r_[0, levels[1:]], "at least 1"),
        (np.r_[99, levels[1:]], "exceeds"),
        (np.r_[2.5, levels[1:]], "not an integer"),
        (np.r_[np.nan, levels[1:]], "missing"),
    ]:
        bad = tmp_path / "bad.csv"
        _frame(x, levels_bad).to_csv(bad, index=False)
        target = tmp_path / "never.csv"
        assert main(["anonymize", str(bad), "-o", str(target), "--method", "bmatching", *base]) == 2
        assert not target.exists()
        assert needle in capsys.readouterr().err
    target = tmp_path / "never.csv"
    assert (
        main(
            [
                "anonymize",
                str(src),
                "-o",
                str(target),
                "--method",
                "bmatching",
                "--qi",
                "a0,level",
                "--k-column",
                "level",
            ]
        )
        == 2
    )
    assert not target.exists()


def test_starred_cells_round_trip():
    frame = _frame(PAPER_X)
    enc = encode_qi(frame, Schema.build(["a0", "a1", "a2", "a3"]))
    p = _problem(PAPER_X, 2)
    res = variational_bmatching(p)
    cells = starred_cells(enc, stars_of(p, res.rows, res.cols))
    assert verify_adaptive(cells, enc, np.full(6, 2)).passed
