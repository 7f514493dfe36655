"""Adaptive anonymity by variational b-matching (Choromanski, Jebara, Tang, NIPS 2013, §3).

Model. X is an n×d table of discrete values; the release Y has yᵢ(k) ∈ {xᵢ(k), ∗}. A graph G
(n×n, 0/1) says which originals each published row must cover: Gᵢⱼ = 1 ⇒ yᵢ is starred wherever
xⱼ differs from xᵢ, so xⱼ is compatible with yᵢ. The true matching (i, i) is always in G. Row
sums count the originals a published row covers, column sums the published rows an original
matches; both must be ≥ δᵢ.

Algorithm 1 (bipartite) and Algorithm 2 (symmetric, Gᵢⱼ = Gⱼᵢ) alternate
  Ĝ = argmin_G Σᵢⱼ Gᵢⱼ Σₖ Uᵢₖ Wᵢₖ [Xᵢₖ ≠ Xⱼₖ]     (a minimum-weight b-matching)
  Wᵢₖ = (ε/(1+ε))^cᵢₖ,  cᵢₖ = #{j : Ĝᵢⱼ = 1, Xⱼₖ ≠ Xᵢₖ}
with U the per-cell utility weights (footnote 4; all 1 by default). Our copy of the paper is
garbled at the reweighting; this is our reading, derived as a majorize–minimize step. The stars
are s(G) = Σᵢₖ Uᵢₖ [cᵢₖ(G) ≥ 1]. Replace the indicator by the concave surrogate
f_ε(c) = 1 − (ε/(1+ε))^c (exact at c = 0, within ε/(1+ε) of 1 for c ≥ 1, → [c ≥ 1] as ε → 0).
Its tangent at the current counts c⁰ bounds it from above (concavity):
  f_ε(c) ≤ f_ε(c⁰) + f_ε′(c⁰)(c − c⁰),  f_ε′(c⁰) = −ln(ε/(1+ε)) · (ε/(1+ε))^c⁰ ∝ Wᵢₖ,
and c is linear in G, so minimizing Σ Uᵢₖ Wᵢₖ cᵢₖ(G) minimizes the bound: the surrogate never
increases (Theorem 2 is stated for the stars; tests check it on the star counts, and we keep
the best iterate in any case). A cell already starred (c⁰ ≥ 1) costs at most ε/(1+ε) per further
differing neighbour: it is nearly free. Cells starred from the start (missing values,
footnote 4) get W = 0. The first iteration (W = 1) minimizes the Hamming error h(G), which
gives Theorem 1's bound s(Ĝ) ≤ δ · min s.

Degree constraints, as the algorithms state them: Σⱼ Gᵢⱼ = Σⱼ Gⱼᵢ ≥ δᵢ (Algorithm 1) and
Σⱼ Gᵢⱼ ≥ δᵢ, Gᵢⱼ = Gⱼᵢ (Algorithm 2); exact degrees can be infeasible for adaptive levels (e.g.
δ = (3, 3, 1)). For uniform δ = k the release must also keep a k-factor (the guarantee of the
core; §2's families G_b/G_s are k-regular): an iteration whose Ĝ has none is re-solved with
exact degrees (a k-regular graph, or for Algorithm 2 one vertex of degree k + 1 whose self-edge
completes the factor). Departure: the paper's figures compare k-regular families; allowing
degrees ≥ k with a k-factor keeps k-anonymity's cliques feasible and found 8 stars instead of
10 for the symmetric graph of its Figure 1/2 example.

Solvers. Algorithm 1's b-matching is a min-cost flow (OR-Tools): out-node i supplies δᵢ − 1,
in-node j demands δⱼ − 1, arcs out_i → in_j (capacity 1, cost cᵢⱼ) for candidate pairs, and, for
adaptive δ, arcs in_j → out_j of unbounded capacity that let a vertex carry more than δⱼ (its
in- and out-degree stay equal). Algorithm 2's symmetric b-matching is a general (non-bipartite)
b-matching, solved exactly as an integer program with HiGHS (scipy.optimize.milp, zero gap).
Both run on all pairs for small n and on candidate neighbourhoods beyond (see
``candidate_pairs``), optionally widened at every solve by each record's cheapest records under
that solve's own costs (``cheapest_candidates``, the ``candidates`` option).

Scale (issue 17; ``anonymatch.tables.models.adaptive.solve``): large tables are solved in parts of a
few hundred records, so each min-cost flow has O(part · neighbours) arcs and the whole run is
linear in n; the ε sweep may stop once the stars stop falling (``patience``). Profiled on Adult
before this: OR-Tools' min-cost flow took 73 % of the samples on 5,000 rows (two solves per
iteration — the relaxed one seldom had a δ-factor), ~70 flows of 0.7 s each.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit
from ortools.graph.python import min_cost_flow
from scipy.optimize import Bounds, LinearConstraint, milp

from anonymatch.core.errors import InfeasibleError
from anonymatch.tables.methods import (
    ALL_PAIRS_MAX_N,
    DEFAULT_EPSILONS,
    SYMMETRIC_ALL_PAIRS_MAX_N,
)

_log = logging.getLogger(__name__)

_COST_SCALE = 2**24  # integer costs for the min-cost flow: max cost ↦ 2^24


@dataclass(frozen=True)
class SuppressionProblem:
    """What the suppression methods need. ``codes`` (n×d int64): discrete values; ``forced``
    (n×d bool): cells starred from the start (missing values); ``utility`` (n×d float ≥ 0): the
    cost of starring each cell; ``delta`` (n int64): per-record anonymity levels, 1 ≤ δᵢ ≤ n."""

    codes: np.ndarray
    forced: np.ndarray
    utility: np.ndarray
    delta: np.ndarray

    @classmethod
    def uniform(cls, codes: np.ndarray, k: int) -> SuppressionProblem:
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        n = codes.shape[0]
        return cls(
            codes, np.zeros(codes.shape, bool), np.ones(codes.shape), np.full(n, k, np.int64)
        )

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    @property
    def d(self) -> int:
        return int(self.codes.shape[1])

    @property
    def is_uniform(self) -> bool:
        return bool(self.n == 0 or np.all(self.delta == self.delta[0]))


@dataclass
class BMatching:
    """A b-matching solution: off-diagonal edges ``rows[e] → cols[e]`` (published row rows[e]
    covers original cols[e]; self-edges are implicit), the resulting ``stars`` (n×d bool) and
    the star count after every iteration, as (ε, iteration, weighted stars)."""

    rows: np.ndarray
    cols: np.ndarray
    stars: np.ndarray
    history: list[tuple[float, int, float]] = field(default_factory=list)
    baseline: int | None = None  # the agglomerative baseline's star count, if computed

    def star_total(self, problem: SuppressionProblem) -> float:
        return float((problem.utility * self.stars).sum())

    def adjacency(self, n: int) -> sp.csr_array:
        """G as an n×n CSR matrix, self-edges included."""
        rows = np.concatenate([np.arange(n), self.rows])
        cols = np.concatenate([np.arange(n), self.cols])
        m = sp.csr_array((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
        m.sum_duplicates()
        m.data[:] = 1
        return m


# ---------------------------------------------------------------------------------------------
# Stars, counts, weights and edge costs


def differing_counts(problem: SuppressionProblem, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """cᵢₖ: for each row i and attribute k, how many neighbours j (edges i → j) differ from xᵢ
    at k. O(m·d) for m edges."""
    n, d = problem.n, problem.d
    diff = problem.codes[rows] != problem.codes[cols]
    out = np.empty((n, d), np.int64)
    for k in range(d):
        out[:, k] = np.bincount(rows, weights=diff[:, k], minlength=n).astype(np.int64)
    return out


def stars_of(problem: SuppressionProblem, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The star pattern a graph forces: yᵢ(k) = ∗ iff forced or some neighbour differs."""
    return problem.forced | (differing_counts(problem, rows, cols) > 0)


def variational_weights(counts: np.ndarray, forced: np.ndarray, eps: float) -> np.ndarray:
    """Wᵢₖ = (ε/(1+ε))^cᵢₖ, and 0 for cells starred from the start."""
    w = np.power(eps / (1.0 + eps), counts.astype(np.float64))
    w[forced] = 0.0
    return w


@njit(cache=True, nogil=True)
def _edge_costs(codes, weight, rows, cols):  # pragma: no cover - compiled
    out = np.zeros(rows.shape[0])
    d = codes.shape[1]
    for e in range(rows.shape[0]):
        i, j = rows[e], cols[e]
        s = 0.0
        for k in range(d):
            if codes[i, k] != codes[j, k]:
                s += weight[i, k]
        out[e] = s
    return out


def edge_costs(
    problem: SuppressionProblem, weight: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Cost of edge i → j: Σₖ weightᵢₖ [Xᵢₖ ≠ Xⱼₖ] (weight = U ⊙ W). O(m·d), no m×d array."""
    return _edge_costs(problem.codes, np.ascontiguousarray(weight, dtype=np.float64), rows, cols)


# ---------------------------------------------------------------------------------------------
# Candidate pairs


def lexicographic_codes_order(codes: np.ndarray) -> np.ndarray:
    """Rows sorted by their codes, attributes of fewest distinct values first."""
    if codes.shape[1] == 0:
        return np.arange(codes.shape[0])
    card = np.array([len(np.unique(codes[:, k])) for k in range(codes.shape[1])])
    keys = [codes[:, k] for k in np.argsort(card, kind="stable")]
    return np.lexsort(keys[::-1])


def nearest_neighbours(problem: SuppressionProblem, size: int, block: int = 512) -> np.ndarray:
    """The ``size`` nearest other records of every record by weighted Hamming distance
    Σₖ Uᵢₖ [Xᵢₖ ≠ Xⱼₖ] (ties broken arbitrarily). Blocked: O(n²·d) time, O(block·n) memory."""
    n = problem.n
    size = min(size, n - 1)
    out = np.empty((n, size), np.int64)
    codes, util = problem.codes, problem.utility
    for start in range(0, n, block):
        stop = min(start + block, n)
        dist = np.zeros((stop - start, n), np.float32)
        for k in range(problem.d):
            dist += util[start:stop, k, None] * (codes[start:stop, k, None] != codes[None, :, k])
        dist[np.arange(stop - start), np.arange(start, stop)] = np.inf
        part = np.argpartition(dist, size - 1, axis=1)[:, :size] if size else dist[:, :0]
        out[start:stop] = part
    return out


@njit(cache=True, nogil=True)
def _cheapest(codes, weight, size):  # pragma: no cover - compiled
    n, d = codes.shape
    out = np.empty((n, size), np.int64)
    dist = np.empty(n)
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(d):
                if codes[i, k] != codes[j, k]:
                    s += weight[i, k]
            dist[j] = s
        dist[i] = np.inf
        out[i] = np.argsort(dist, kind="mergesort")[:size]
    return out


def cheapest_candidates(problem: SuppressionProblem, weight: np.ndarray, size: int) -> np.ndarray:
    """Each record's ``size`` cheapest other records under the current edge cost
    Σₖ weightᵢₖ [Xᵢₖ ≠ Xⱼₖ] (the cost the b-matching pays for i → j; ties by index).
    O(n²·(d + log n)) time, O(n) memory besides the n × size result."""
    size = min(size, problem.n - 1)
    return _cheapest(problem.codes, np.ascontiguousarray(weight, dtype=np.float64), size)


def _with_candidates(
    base: tuple[np.ndarray, np.ndarray],
    near: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``base`` pairs ∪ (i → near[i], both directions) ∪ the current edges, sorted unique."""
    ids = np.repeat(np.arange(n), near.shape[1])
    flat = near.reshape(-1)
    r = np.concatenate([base[0], ids, flat, rows])
    c = np.concatenate([base[1], flat, ids, cols])
    key = np.unique(r * n + c)
    return key // n, key % n


def candidate_pairs(
    problem: SuppressionProblem, neighbours: int | None = None, all_pairs_max: int = ALL_PAIRS_MAX_N
) -> tuple[np.ndarray, np.ndarray]:
    """Off-diagonal pairs (i, j) the b-matching may use, as sorted unique arrays.

    All pairs when ``neighbours`` is None and n ≤ ``all_pairs_max``. Otherwise each record's
    ``neighbours`` nearest records (default max(20, 4·max δ)), both directions, plus a ring
    over the lexicographic order joining every record to its max δ nearest successors and
    predecessors: the ring alone holds a δ-regular graph (and a symmetric one), so the
    restricted problem is always feasible. O(n²·d) time for the neighbour search (blocked),
    O(n·neighbours) memory.
    """
    n = problem.n
    dmax = int(problem.delta.max()) if n else 1
    if (neighbours is None and n <= all_pairs_max) or (
        neighbours is not None and neighbours >= n - 1
    ):
        i, j = np.nonzero(~np.eye(n, dtype=bool))
        return i.astype(np.int64), j.astype(np.int64)
    size = neighbours if neighbours is not None else max(20, 4 * dmax)
    near = nearest_neighbours(problem, size)
    rows = [np.repeat(np.arange(n), near.shape[1]), near.reshape(-1)]
    order = lexicographic_codes_order(problem.codes)
    ring_r, ring_c = [], []
    for off in range(1, min(dmax, n - 1) + 1):
        ring_r.append(order)
        ring_c.append(np.roll(order, -off))
    r = np.concatenate([rows[0], rows[1], *ring_r, *ring_c])
    c = np.concatenate([rows[1], rows[0], *ring_c, *ring_r])
    keep = r != c
    key = np.unique(r[keep] * n + c[keep])
    return key // n, key % n


# ---------------------------------------------------------------------------------------------
# b-matching solvers


def bipartite_bmatching(
    n: int, rows: np.ndarray, cols: np.ndarray, cost: np.ndarray, delta: np.ndarray, exact: bool
) -> np.ndarray:
    """Minimum-cost bipartite b-matching over candidate pairs by min-cost flow (OR-Tools).

    Chooses off-diagonal edges so that every i has out-degree = in-degree = δᵢ − 1 (``exact``)
    or out-degree = in-degree ≥ δᵢ − 1; the self-edge makes it δᵢ. Returns the chosen-edge mask.
    Raises InfeasibleError if the candidate pairs admit no solution. Time: OR-Tools' cost-scaling
    push-relabel on 2n nodes and m + n arcs.
    """
    need = np.asarray(delta, np.int64) - 1
    flow = min_cost_flow.SimpleMinCostFlow()
    top = float(cost.max()) if len(cost) else 0.0
    scaled = np.rint(cost * (_COST_SCALE / top)) if top > 0 else np.zeros(len(cost))
    flow.add_arcs_with_capacity_and_unit_cost(
        rows.astype(np.int32),
        (cols + n).astype(np.int32),
        np.ones(len(rows), np.int64),
        scaled.astype(np.int64),
    )
    if not exact:
        nodes = np.arange(n, dtype=np.int32)
        flow.add_arcs_with_capacity_and_unit_cost(
            nodes + n, nodes, np.full(n, n, np.int64), np.zeros(n, np.int64)
        )
    flow.set_nodes_supplies(np.arange(2 * n, dtype=np.int32), np.concatenate([need, -need]))
    status = flow.solve()
    if status != flow.OPTIMAL:
        raise InfeasibleError(
            "no b-matching exists on the candidate pairs (min-cost flow status "
            f"{status}); raise the neighbourhood size"
        )
    return flow.flows(np.arange(len(rows), dtype=np.int32))[: len(rows)] > 0


def symmetric_bmatching(
    n: int,
    rows: np.ndarray,
    cols: np.ndarray,
    cost: np.ndarray,
    delta: np.ndarray,
    exact: bool,
    time_limit: float = 600.0,
) -> np.ndarray:
    """Minimum-cost symmetric (general, non-bipartite) b-matching, solved exactly as an integer
    program with HiGHS. ``rows``/``cols``: undirected candidate pairs (i < j); ``cost``: the cost
    of using the pair in both directions. Every i gets degree δᵢ − 1 besides its self-edge
    (``exact``; if Σ(δᵢ − 1) is odd, one vertex of the solver's choice gets one more — its
    self-edge then completes a δ-factor), or ≥ δᵢ − 1. Returns the chosen-pair mask.
    If HiGHS reaches ``time_limit`` with a feasible solution, that solution is used (the
    variational loop is a heuristic around it; optimality is then not proven). Raises
    InfeasibleError when no solution exists within the candidates or none is found in time.
    """
    m = len(rows)
    need = np.asarray(delta, np.float64) - 1
    inc = sp.csr_array(
        (np.ones(2 * m), (np.concatenate([rows, cols]), np.tile(np.arange(m), 2))), shape=(n, m)
    )
    integrality = np.ones(m)
    c = np.asarray(cost, np.float64)
    if exact and int(need.sum()) % 2 == 1:
        # one slack unit, on any vertex: degree δ − 1 + sᵢ, Σ sᵢ = 1
        a = sp.hstack([inc, -sp.eye_array(n)]).tocsr()
        cons = [
            LinearConstraint(a, need, need),
            LinearConstraint(np.concatenate([np.zeros(m), np.ones(n)])[None, :], 1, 1),
        ]
        c = np.concatenate([c, np.zeros(n)])
        integrality = np.ones(m + n)
    else:
        cons = [LinearConstraint(inc, need, need if exact else np.inf)]
    res = milp(
        c,
        constraints=cons,
        integrality=integrality,
        bounds=Bounds(0, 1),
        options={"time_limit": time_limit, "mip_rel_gap": 0.0},
    )
    if res.x is None:
        raise InfeasibleError(
            f"no symmetric b-matching found on the candidate pairs ({res.message})"
        )
    return np.asarray(res.x[:m]) > 0.5


# ---------------------------------------------------------------------------------------------
# The variational algorithms


def _solve(
    problem: SuppressionProblem,
    pairs: tuple[np.ndarray, np.ndarray],
    weight: np.ndarray,
    symmetric: bool,
    time_limit: float,
    regular_only: bool = False,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """One b-matching step. Returns the chosen edges and whether the relaxed degrees (≥ δᵢ)
    were kept (False: uniform δ, and the relaxed solution had no δ-factor, or ``regular_only``
    asked to skip it, so the solution is the δ-regular one)."""
    rows, cols = pairs
    cost = edge_costs(problem, weight, rows, cols)
    exact = problem.is_uniform
    n, k = problem.n, int(problem.delta[0])
    if not symmetric:
        # Σⱼ Gᵢⱼ = Σⱼ Gⱼᵢ ≥ δᵢ as in Algorithm 1; for uniform δ the release must keep a δ-factor
        # (the core's guarantee), else the iteration is re-solved δ-regular (G_b, §2).
        if exact and regular_only:
            chosen = bipartite_bmatching(n, rows, cols, cost, problem.delta, True)
            return rows[chosen], cols[chosen], False
        chosen = bipartite_bmatching(n, rows, cols, cost, problem.delta, False)
        if exact and not _has_factor(n, rows[chosen], cols[chosen], k):
            chosen = bipartite_bmatching(n, rows, cols, cost, problem.delta, True)
            return rows[chosen], cols[chosen], False
        return rows[chosen], cols[chosen], True
    # undirected pairs i < j; the cost of {i, j} stars cells in both rows
    upper = rows < cols
    n = problem.n
    key = rows * n + cols
    rev = np.searchsorted(key, cols * n + rows)  # pairs are symmetric and sorted by key
    ui, uj = rows[upper], cols[upper]
    ucost = cost[upper] + cost[rev[upper]]
    # Uniform δ: degrees ≥ δ (so k-anonymity's cliques of k…2k−1 records are feasible) as long
    # as a δ-factor remains; else the iteration is re-solved with exact degrees.
    relaxed = not (exact and regular_only)
    if relaxed:
        chosen = symmetric_bmatching(n, ui, uj, ucost, problem.delta, False, time_limit)
        a, b = ui[chosen], uj[chosen]
    if exact and (
        not relaxed or not _has_factor(n, np.concatenate([a, b]), np.concatenate([b, a]), k)
    ):
        chosen = symmetric_bmatching(n, ui, uj, ucost, problem.delta, True, time_limit)
        a, b = ui[chosen], uj[chosen]
        relaxed = False
    return np.concatenate([a, b]), np.concatenate([b, a]), relaxed


def _has_factor(n: int, a: np.ndarray, b: np.ndarray, k: int) -> bool:
    """Does the graph of edges a → b plus self-edges, as a bipartite graph, have a k-factor?"""
    from anonymatch.core.matching import has_k_factor

    rows = np.concatenate([np.arange(n), a])
    cols = np.concatenate([np.arange(n), b])
    g = sp.csr_array((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
    return has_k_factor(g, np.ones(n, np.int64), k) == k * n


def _symmetrize(rows: np.ndarray, cols: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    key = np.unique(np.concatenate([rows * n + cols, cols * n + rows]))
    return key // n, key % n


def variational_bmatching(
    problem: SuppressionProblem,
    symmetric: bool = False,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    neighbours: int | None = None,
    max_iter: int = 20,
    warm_start: np.ndarray | None = None,
    time_limit: float = 600.0,
    progress: Callable[[str], None] | None = None,
    incumbent: BMatching | None = None,
    patience: int | None = None,
    regular_after_miss: bool = False,
    candidates: int | None = None,
) -> BMatching:
    """Algorithm 1 (``symmetric=False``) or Algorithm 2 of Choromanski et al.

    The first solve uses W = 1 (or the weights of ``warm_start``, a star pattern, e.g.
    Algorithm 1's for Algorithm 2 — §5). Then, for each ε from largest to smallest, iterate
    reweighting and solving until the star pattern repeats (or ``max_iter``), each ε starting
    from the best solution so far; return the solution with the fewest (weighted) stars.
    ``incumbent``: a feasible solution of the same family to start from if it is better than the
    first solve (``anonymatch.tables.models.adaptive.solve`` passes the agglomerative baseline's
    cliques).
    ``patience``: stop the sweep after this many ε values in a row that did not lower the
    stars (None: sweep every ε, as the paper). ``regular_after_miss`` (uniform δ): once a solve
    with degrees ≥ δ had no δ-factor and was re-solved δ-regular, solve δ-regular directly from
    then on (one min-cost flow per iteration instead of two).
    ``candidates``: besides the fixed candidate pairs, give every solve each record's
    ``candidates`` cheapest records under that solve's own edge costs (both directions) and the
    current edges (``cheapest_candidates``; ignored when all pairs are candidates). The current
    solution stays feasible for the restricted problem, so the bound of Theorem 2 still never
    increases; O(n²·d) per iteration, for partitions.
    ``history`` lists (ε, iteration, stars); iteration 0 is the first solve.
    Time: (iterations) × (one b-matching on m candidate pairs) + O(m·d) per iteration.
    """
    if problem.n == 0:
        empty = np.empty(0, np.int64)
        return BMatching(empty, empty, problem.forced.copy())
    if patience is not None and patience < 1:
        patience = None
    limit = SYMMETRIC_ALL_PAIRS_MAX_N if symmetric else ALL_PAIRS_MAX_N
    pairs = candidate_pairs(problem, neighbours, limit)
    if symmetric:
        pairs = _symmetrize(*pairs, problem.n)
    n = problem.n
    if candidates is not None and len(pairs[0]) >= n * (n - 1):
        candidates = None  # all pairs already

    def restricted(weight: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple:
        if candidates is None:
            return pairs
        near = cheapest_candidates(problem, weight, candidates)
        return _with_candidates(pairs, near, rows, cols, n)

    if warm_start is None:
        weight = problem.utility * np.where(problem.forced, 0.0, 1.0)
    else:
        counts = (warm_start & ~problem.forced).astype(np.int64)
        weight = problem.utility * variational_weights(counts, problem.forced, epsilons[0])
    empty = np.empty(0, np.int64)
    rows, cols, relaxed = _solve(
        problem, restricted(weight, empty, empty), weight, symmetric, time_limit
    )
    regular_only = regular_after_miss and not relaxed
    best = BMatching(rows, cols, stars_of(problem, rows, cols))
    best.history.append((epsilons[0], 0, best.star_total(problem)))
    if incumbent is not None and incumbent.star_total(problem) < best.star_total(problem):
        best = BMatching(incumbent.rows, incumbent.cols, incumbent.stars, best.history)
    stale = 0
    for eps in epsilons:
        rows, cols = best.rows, best.cols
        seen = best.stars
        before = best.star_total(problem)
        for it in range(1, max_iter + 1):
            counts = differing_counts(problem, rows, cols)
            weight = problem.utility * variational_weights(counts, problem.forced, eps)
            rows, cols, relaxed = _solve(
                problem, restricted(weight, rows, cols), weight, symmetric, time_limit, regular_only
            )
            regular_only = regular_only or (regular_after_miss and not relaxed)
            stars = stars_of(problem, rows, cols)
            total = float((problem.utility * stars).sum())
            best.history.append((eps, it, total))
            if total < best.star_total(problem):
                best = BMatching(rows, cols, stars, best.history)
            if np.array_equal(stars, seen):
                break
            seen = stars
        (progress or _log.debug)(f"eps={eps:g}: best {best.star_total(problem):g} stars")
        stale = stale + 1 if best.star_total(problem) >= before else 0
        if patience is not None and stale >= patience:
            break
    return best
