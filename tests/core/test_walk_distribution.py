"""The closed walk after issue 17 draws from the same distribution as before.

The privacy argument needs every hop of the walk drawn uniformly from the candidate set of the
rule (Xue et al. §4.2 plus our rule (2), see ``_closed_walk_rounds``). The kernel now draws a
hop by rejection with an exact fallback scan, keeps the available edges in compacted per-node
slots and draws its integers straight from the bit generator; since issue 38 it draws in
batches, skips the draws where the walk expects few fresh edges and draws rule (3) by rejection
too. Every test runs it both as shipped and with ``skip`` = 0 (draws before every scan, so the
batches are exercised on small graphs too, where the shipped threshold mostly scans at once).
Checked here against
(a) the exact distribution of the whole output — all rounds — on small graphs, computed by
enumerating every random choice of the rule in plain Python (an independent third
implementation), and (b) the kernel as it was (``walk_reference``) on larger graphs, edge by
edge. Fixed seeds: the tests are deterministic.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from types import FunctionType

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy.stats import chi2_contingency, chisquare

from anonymatch.core.assignment import (
    _below,
    _closed_walk_rounds,
    _component_degrees,
    _source,
    choose_assignment,
    random_assignments,
)
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.methods import BuildOptions
from anonymatch.tables.methods.freeform import hungarian
from tests.core.walk_reference import closed_walk_rounds as reference_rounds
from tests.factories import encode_frame, random_frame

Outcome = tuple[tuple[int, ...], ...]


def _regular(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """``degree`` disjoint random permutations of range(n) (the identity first), by rejection."""
    perms = [np.arange(n)]
    used = np.eye(n, dtype=bool)
    while len(perms) < degree:
        p = rng.permutation(n)
        if not used[np.arange(n), p].any():
            perms.append(p)
            used[np.arange(n), p] = True
    return np.array(perms)


def _union(components: list[np.ndarray]) -> GeneralizationGraph:
    """Disjoint union of components, each given as its (degree, size) array of permutations."""
    rows, cols, start = [], [], 0
    for perms in components:
        size = perms.shape[1]
        rows.append(np.tile(np.arange(size), len(perms)) + start)
        cols.append(perms.reshape(-1) + start)
        start += size
    return GeneralizationGraph.from_edges(np.concatenate(rows), np.concatenate(cols), start)


def _circulant(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """``degree`` disjoint permutations of range(n) for any degree ≤ n: distinct random shifts
    x ↦ x + s (mod n), relabelled by random permutations of both sides."""
    rows, cols = rng.permutation(n), rng.permutation(n)
    shifts = rng.choice(n, size=degree, replace=False)
    perms = np.empty((degree, n), dtype=np.int64)
    for t, s in enumerate(shifts):
        perms[t, rows] = cols[(np.arange(n) + s) % n]
    return perms


def _draws_first(
    indptr: np.ndarray,
    indices: np.ndarray,
    needed: np.ndarray,
    n_rows: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The kernel with ``skip`` = 0: rejection draws before every scan."""
    return _closed_walk_rounds(indptr, indices, needed, n_rows, rng, 0)


def _csr(graph: GeneralizationGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    m = graph.matrix
    degree = np.diff(m.indptr).astype(np.int64)
    return m.indptr.astype(np.int64), m.indices.astype(np.int64), degree, int(degree.max())


# ---- the rule, enumerated exactly -------------------------------------------------------------


def _walk_outcomes(
    avail: tuple[frozenset[int], ...], match: tuple[int, ...], start: int, close_early: bool
) -> dict[tuple[tuple[int, ...], frozenset[int]], float]:
    """Every closed walk from ``start`` under the hop rule, with its probability: (the new
    matching, the originals it covers) → probability. ``close_early`` False drops our rule (2)
    (the closing edge is then just one of the untraversed edges when no fresh one is left)."""
    inv = {y: x for x, y in enumerate(match)}
    target = match[start]
    out: dict[tuple[tuple[int, ...], frozenset[int]], float] = defaultdict(float)

    def hop(
        x: int,
        visited: frozenset[int],
        traversed: frozenset[tuple[int, int]],
        nxt: dict[int, int],
        p: float,
    ) -> None:
        open_ = [y for y in sorted(avail[x]) if (x, y) not in traversed]
        fresh = [y for y in open_ if y != target and inv[y] not in visited]
        if fresh:
            choices = fresh
        elif close_early and target in open_:
            choices = [target]
        else:
            choices = open_
        for y in choices:
            after = {**nxt, x: y}  # last exit from x: erases the deviant cycles
            q = p / len(choices)
            if y == target:
                new, cycle, c = list(match), [], start
                while True:
                    cycle.append(c)
                    new[c] = after[c]
                    if after[c] == target:
                        break
                    c = inv[after[c]]
                out[(tuple(new), frozenset(cycle))] += q
            else:
                hop(inv[y], visited | {inv[y]}, traversed | {(x, y)}, after, q)

    hop(start, frozenset([start]), frozenset(), {}, 1.0)
    return out


def exact_distribution(
    graph: GeneralizationGraph, close_early: bool = True
) -> dict[Outcome, float]:
    """Probability of every possible output of the closed-walk rounds (all rounds; −1 for the
    originals whose degree is used up), by enumerating the rule's random choices: the uniform
    start among the uncovered originals and the uniform hop among the rule's candidates."""
    adj = [
        frozenset(graph.matrix.indices[a:b].tolist())
        for a, b in zip(graph.matrix.indptr[:-1], graph.matrix.indptr[1:], strict=True)
    ]
    n, rounds = len(adj), max(len(a) for a in adj)
    degree = [len(a) for a in adj]
    states: dict[tuple, float] = {(0, tuple(adj), tuple(range(n)), frozenset(), ()): 1.0}
    final: dict[Outcome, float] = defaultdict(float)
    while states:
        following: dict[tuple, float] = defaultdict(float)
        for (r, avail, match, covered, out), p in states.items():
            if r == rounds:
                final[out] += p
                continue
            pool = [x for x in range(n) if x not in covered and degree[x] > r]
            if not pool:  # round over: record it, remove its edges, restart from the identity
                row = tuple(match[x] if degree[x] > r else -1 for x in range(n))
                left = tuple(a - {match[x]} if degree[x] > r else a for x, a in enumerate(avail))
                following[(r + 1, left, tuple(range(n)), frozenset(), (*out, row))] += p
                continue
            for start in pool:
                walks = _walk_outcomes(avail, match, start, close_early)
                for (new, cycle), q in walks.items():
                    following[(r, avail, new, covered | cycle, out)] += p * q / len(pool)
        states = following
    return dict(final)


def _sample(kernel, graph: GeneralizationGraph, draws: int, seed: int) -> Counter[Outcome]:
    indptr, indices, degree, rounds = _csr(graph)
    rng = np.random.default_rng(seed)
    counts: Counter[Outcome] = Counter()
    for _ in range(draws):
        out = kernel(indptr, indices, degree, rounds, rng)
        counts[tuple(map(tuple, out.tolist()))] += 1
    return counts


def _goodness_of_fit(counts: Counter[Outcome], exact: dict[Outcome, float]) -> float:
    """Chi-square p-value of the sample against the exact law (outcomes expected < 5 times
    pooled into one cell); an outcome the law does not allow gives 0."""
    draws = sum(counts.values())
    if set(counts) - set(exact):
        return 0.0
    big = [o for o in exact if exact[o] * draws >= 5]
    observed = [counts[o] for o in big]
    expected = [exact[o] * draws for o in big]
    rest = draws - sum(observed)
    if rest or len(big) < len(exact):
        observed.append(rest)
        expected.append(draws - sum(expected))
    return float(chisquare(observed, expected).pvalue)


SMALL = {
    "6 records, degree 3": _union([_regular(6, 3, np.random.default_rng(1))]),
    "7 records, degree 3": _union([_regular(7, 3, np.random.default_rng(2))]),
    "degrees 3 and 2": _union(
        [_regular(5, 3, np.random.default_rng(3)), _regular(3, 2, np.random.default_rng(4))]
    ),
}


def test_output_law_is_the_rule_s_exact_law() -> None:
    """The kernels (now, now drawing before every scan, and before issue 17) against the exact
    law of the whole output, and, for power, the new kernel against the law of a different rule
    (no rule (2)): rejected."""
    for name, graph in SMALL.items():
        exact = exact_distribution(graph)
        assert abs(sum(exact.values()) - 1) < 1e-9
        new = _sample(_closed_walk_rounds, graph, 8000, seed=17)
        drawn = _sample(_draws_first, graph, 8000, seed=19)
        old = _sample(reference_rounds, graph, 8000, seed=18)
        assert _goodness_of_fit(new, exact) > 1e-3, name
        assert _goodness_of_fit(drawn, exact) > 1e-3, name
        assert _goodness_of_fit(old, exact) > 1e-3, name
        other = exact_distribution(graph, close_early=False)
        if other != exact:
            assert _goodness_of_fit(new, other) < 1e-6, name


def _edge_rounds(kernel, graph: GeneralizationGraph, draws: int, seed: int) -> np.ndarray:
    """counts[e, t]: in how many draws edge e (CSR order) was in round t."""
    indptr, indices, degree, rounds = _csr(graph)
    n = len(degree)
    slot = {
        (x, int(y)): e
        for x in range(n)
        for e, y in zip(
            range(indptr[x], indptr[x + 1]), indices[indptr[x] : indptr[x + 1]], strict=True
        )
    }
    counts = np.zeros((len(indices), rounds), dtype=np.int64)
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        out = kernel(indptr, indices, degree, rounds, rng)
        for t in range(rounds):
            for x in range(n):
                if out[t, x] >= 0:
                    counts[slot[(x, int(out[t, x]))], t] += 1
    return counts


def test_each_edge_s_round_has_the_same_law_as_before() -> None:
    """Larger graphs (degree up to 6, where the rejection draws do most hops): for every edge,
    the round it lands in has the same law under the new kernel as under the old one
    (chi-square homogeneity per edge, Bonferroni over the edges)."""
    qi = encode_frame(random_frame(40, 5, 2, 2, 4))
    graphs = {
        "random 6-regular on 14": _union([_regular(14, 6, np.random.default_rng(5))]),
        "hungarian k = 5 on 40": hungarian(qi, 5, BuildOptions()),
    }
    for name, graph in graphs.items():
        old = _edge_rounds(reference_rounds, graph, 3000, seed=2)
        for seed, kernel in [(1, _closed_walk_rounds), (3, _draws_first)]:
            new = _edge_rounds(kernel, graph, 3000, seed=seed)
            p_values = []
            for a, b in zip(new, old, strict=True):
                table = np.array([a, b])
                table = table[:, table.sum(axis=0) > 0]
                if table.shape[1] > 1:
                    p_values.append(chi2_contingency(table).pvalue)
            assert min(p_values) > 1e-3 / (2 * len(p_values)), (name, seed)


@njit
def _draws(rng, bounds):  # pragma: no cover - compiled
    bits = _source(rng)
    return np.array([_below(bits, m) for m in bounds])


@njit
def _integers(rng, bounds):  # pragma: no cover - compiled
    return np.array([rng.integers(0, m) for m in bounds])


def test_draws_are_exactly_those_of_integers() -> None:
    """``_below`` returns what ``rng.integers(0, m)`` returns (numba's and numpy's), from the
    same bit-generator draws: below and above 2³², and m = 1, which draws nothing."""
    bounds = np.array(
        [1, 2, 3, 7, 1000, 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 3 * 2**40 + 5, 5] * 200,
        dtype=np.int64,
    )
    a, b, c = (np.random.default_rng(9) for _ in range(3))
    ours = _draws(a, bounds)
    assert np.array_equal(ours, _integers(b, bounds))
    assert np.array_equal(ours, [c.integers(0, int(m)) for m in bounds])
    assert a.bit_generator.state == b.bit_generator.state == c.bit_generator.state


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.tuples(st.integers(1, 30), st.integers(1, 8)), min_size=1, max_size=5),
    seed=st.integers(0, 2**32 - 1),
)
def test_rounds_decompose_any_balanced_graph(sizes: list[tuple[int, int]], seed: int) -> None:
    """Components of different sizes and degrees (a component of degree D ≤ its size): round t
    is a perfect matching of the components of degree > t, and every edge is in exactly one
    round."""
    rng = np.random.default_rng(seed)
    graph = _union([_circulant(size, min(degree, size), rng) for size, degree in sizes])
    rounds = random_assignments(graph, np.random.default_rng(seed))
    dense = graph.matrix.toarray().astype(int)
    degree = dense.sum(axis=1)
    count = np.zeros_like(dense)
    for t, row in enumerate(rounds):
        active = degree > t
        assert (row[~active] == -1).all()
        assert sorted(row[active].tolist()) == sorted(np.flatnonzero(active).tolist())
        assert dense[np.flatnonzero(active), row[active]].all()
        count[np.flatnonzero(active), row[active]] += 1
    assert np.array_equal(count, dense)


def test_many_chunks_on_threads_decompose_the_graph() -> None:
    """More vertices than one closed-walk job (``_CHUNK``): chunks run on a thread pool; the
    result depends on the seed only, and is a decomposition."""
    rng = np.random.default_rng(4)
    graph = _union([_circulant(50, 1 + i % 12, rng) for i in range(200)])
    one = random_assignments(graph, np.random.default_rng(8), workers=1)
    two = random_assignments(graph, np.random.default_rng(8), workers=2)
    assert np.array_equal(one, two)
    dense = graph.matrix.tocsr()
    edges = set(zip(*dense.nonzero(), strict=True))
    seen = [(x, int(y)) for row in one for x, y in enumerate(row) if y >= 0]
    assert len(seen) == len(edges) and set(seen) == edges


def _chosen_law(graph: GeneralizationGraph) -> dict[tuple[int, ...], float]:
    """Exact law of "extract every round, then pick one round per component uniformly": from
    ``exact_distribution`` of all rounds, each component's pick t uniform over its degree."""
    labels, comp_degree = _component_degrees(graph)
    law: dict[tuple[int, ...], float] = defaultdict(float)
    for rounds, p in exact_distribution(graph).items():
        table = np.array(rounds)
        for picks in np.ndindex(*comp_degree.tolist()):
            chosen = table[np.array(picks)[labels], np.arange(graph.n)]
            law[tuple(chosen.tolist())] += p / float(np.prod(comp_degree))
    return dict(law)


def test_choose_assignment_has_the_law_of_pick_after_all_rounds() -> None:
    """``choose_assignment`` draws the picks first and stops each component's walk after its
    picked round, components of different degrees sharing one chunk (one generator): the law
    of the chosen matching must be that of picking among all rounds, computed exactly."""
    for name, graph in SMALL.items():
        law = _chosen_law(graph)
        assert abs(sum(law.values()) - 1) < 1e-9
        rng = np.random.default_rng(23)
        counts: Counter[Outcome] = Counter()
        for _ in range(6000):
            counts[(tuple(choose_assignment(graph, rng).tolist()),)] += 1
        exact = {(o,): p for o, p in law.items()}
        assert _goodness_of_fit(counts, exact) > 1e-3, name


@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 40), degree=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_stopping_early_leaves_the_earlier_rounds_as_they_were(
    size: int, degree: int, seed: int
) -> None:
    """One component: with the same generator, the kernel asked for rounds 0 … t only (one
    output row) makes the same draws as the full decomposition up to round t, so it returns
    exactly round t of it — stopping changes nothing before the stop."""
    graph = _union([_circulant(size, min(degree, size), np.random.default_rng(seed))])
    indptr, indices, full_degree, rounds = _csr(graph)
    full = _closed_walk_rounds(indptr, indices, full_degree, rounds, np.random.default_rng(seed))
    for t in range(rounds):
        needed = np.full(graph.n, t + 1, np.int64)
        last = _closed_walk_rounds(indptr, indices, needed, 1, np.random.default_rng(seed))
        assert last.shape == (1, graph.n)
        assert np.array_equal(last[0], full[t])


def test_stamp_restart_changes_nothing() -> None:
    """The walk stamps restart (all cleared) when the walk number reaches ``_STAMP_MAX``
    (2³¹ − 1 in the package): a copy of the kernel compiled with a limit of 3, so that it
    restarts every few walks, returns exactly what the kernel returns from the same generator
    state, on every index type the package passes."""
    small = dict(_closed_walk_rounds.py_func.__globals__, _STAMP_MAX=3)
    source = _closed_walk_rounds.py_func
    kernel = njit(FunctionType(source.__code__, small, "kernel", source.__defaults__))
    graph = _union(
        [_circulant(60, 7, np.random.default_rng(6)), _regular(9, 4, np.random.default_rng(7))]
    )
    indptr, indices, degree, rounds = _csr(graph)
    for index_type in (np.int16, np.int32, np.int64):
        heads = indices.astype(index_type)
        ours = kernel(indptr, heads, degree, rounds, np.random.default_rng(12))
        theirs = _closed_walk_rounds(indptr, heads, degree, rounds, np.random.default_rng(12))
        assert np.array_equal(ours, theirs), index_type
