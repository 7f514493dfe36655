"""The exact mixed-integer program of Doka et al., "k-Anonymization by Freeform Generalization",
§4, equations (4)–(11), solved with HiGHS through ``scipy.optimize.milp``.

The program picks the k-regular generalization graph (eq. 10) that minimises the GCP of the
published records (eq. 11). Binary x(ℓ, i) says that original ℓ matches published record i;
a numeric attribute j gets continuous bounds u_i^j ≥ l_i^j of published record i (eq. 4–7); a
categorical attribute j gets one indicator u_i^h per value h, meaning "value h is in the set
published for record i" (eq. 8–9). It is NP-hard and only practical on partitions of a dozen
or so records; the ``mip`` method runs it on small partitions of the lexicographic order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from anonymatch.core.errors import InfeasibleError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions

# scipy.optimize.milp status codes (HiGHS underneath).
_OPTIMAL = 0
_LIMIT_REACHED = 1


@dataclass(frozen=True)
class MipSolution:
    """A solved program: the k-regular ``graph``; ``objective``, the value of eq. (11) with its
    "−1" constants, i.e. n × the GCP of the paper's published records (an upper bound on n × the
    GCP that ``recode`` gives this graph, see ``solve_mip``); ``proven_optimal``, False when
    HiGHS stopped at the time limit with a feasible but unproven solution."""

    graph: GeneralizationGraph
    objective: float
    proven_optimal: bool


def mip(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """A k-regular generalization graph of minimum GCP over the records of ``qi`` (Doka §4).

    Parameters: ``qi``, the encoded QIs of the n records of one partition (normalised by the
    spans and domain sizes of the full table); ``k``, the anonymity level; ``options``, of which
    ``time_limit`` bounds the solve in seconds.

    Returns the graph made of the edges with x(ℓ, i) = 1 (row ℓ = original, column i =
    published). If HiGHS reaches the time limit with a feasible solution, that solution is
    returned although it is not proven optimal; ``solve_mip`` tells the two cases apart.
    "Optimal" is up to HiGHS' default relative MIP gap (10⁻⁴).

    Raises ``InfeasibleError`` if k > n or if no feasible solution was found within the time
    limit, ``InputError`` if k < 1.

    Complexity: O(n² + n·Σ|A|) variables (Σ|A| over the values that occur among the n records)
    and O(n²·(dn + dc)) constraints with O(n²·(dn + dc)) non-zeros — at most one constraint (4),
    one (6) and one (8) per ordered pair and attribute (the paper's literal eq. (8) has one per
    value h, O(n²·Σ|A|), but all except h = q_ℓ are implied by the bounds (9)); branch and bound
    is exponential in n² in the worst case. Measured with HiGHS: n = 8 takes seconds to a
    minute, n ≥ 10 with k ≥ 3 usually does not finish proving optimality within 60 s.

    Reference: Doka, Xue, Tsoumakos, Karras, k-Anonymization by Freeform Generalization,
    ASIA CCS 2015, §4, eq. (4)–(11).
    """
    return solve_mip(qi, k, options.time_limit).graph


def solve_mip(qi: EncodedQI, k: int, time_limit: float) -> MipSolution:
    """Build and solve the program of ``mip``; see there for parameters, errors and complexity.

    The paper's eq. (5), (7) and (9) make published record i cover the value of its own
    original q_i even when x(i, i) = 0. We keep that formulation, but ``recode`` builds cells
    from the graph's edges only, so the GCP of the recoded release is at most
    ``objective / n`` (equal whenever the chosen graph contains every self-edge).
    """
    n = qi.n
    check_level_fits(k, n, records="records of the partition")  # k ≥ 1: the job checked it
    ids = np.arange(n, dtype=np.int64)
    if k == 1:
        # The identity is k-regular and loses nothing: objective 0.
        return MipSolution(GeneralizationGraph.from_edges(ids, ids, n), 0.0, True)
    if k == n:
        # The complete bipartite graph is the only n-regular graph.
        rows, cols = np.repeat(ids, n), np.tile(ids, n)
        graph = GeneralizationGraph.from_edges(rows, cols, n)
        return MipSolution(graph, _paper_objective(qi, graph), True)

    program = _Program(qi, k)
    res = milp(
        program.cost,
        integrality=program.integrality,
        bounds=Bounds(program.lower, program.upper),
        constraints=LinearConstraint(program.matrix, program.row_lower, program.row_upper),
        options={"time_limit": float(time_limit)},
    )
    if res.x is None or res.status not in (_OPTIMAL, _LIMIT_REACHED):
        if res.status == _LIMIT_REACHED:
            raise InfeasibleError(
                f"mip: no solution within the time limit of {time_limit:g} s on a partition of "
                f"{n} records; use a smaller `partition_size` or another method"
            )
        raise InfeasibleError(
            f"mip: HiGHS found no solution on a partition of {n} records ({res.message}); "
            "use a smaller `partition_size` or another method"
        )
    x = np.round(res.x[: n * n]).reshape(n, n) > 0.5
    rows, cols = np.nonzero(x)
    graph = GeneralizationGraph.from_edges(rows, cols, n)
    if not graph.is_regular(k):  # eq. (10) holds within HiGHS' tolerances, so never in practice
        raise RuntimeError(f"mip: the solver returned a graph that is not {k}-regular")
    return MipSolution(graph, float(res.fun) + program.constant, res.status == _OPTIMAL)


class _Program:
    """Eq. (4)–(11) as arrays for ``milp``: min cost·z subject to row_lower ≤ A z ≤ row_upper,
    lower ≤ z ≤ upper, z[:n²] binary.

    Variable layout: x(ℓ, i) at ℓ·n + i; then, per numeric attribute, n variables u^j and n
    variables l^j; then, per categorical attribute and per value h occurring among the n
    records, n variables u^h. Attributes whose NCP factor is 0 (one-value domain or weight 0)
    cannot change the objective and get no variables at all.
    """

    def __init__(self, qi: EncodedQI, k: int) -> None:
        n = qi.n
        num_scale, cat_scale = qi.ncp_scales()
        pair_l, pair_i = np.divmod(np.arange(n * n, dtype=np.int64), n)  # x(ℓ, i) at ℓ·n + i
        off_diag = pair_l != pair_i

        cost = [np.zeros(n * n)]
        lower, upper = [np.zeros(n * n)], [np.ones(n * n)]
        # Constraint triplets and row bounds, appended block by block.
        a_row: list[np.ndarray] = []
        a_col: list[np.ndarray] = []
        a_val: list[np.ndarray] = []
        row_lower: list[np.ndarray] = []
        row_upper: list[np.ndarray] = []
        n_vars, n_rows = n * n, 0

        def add_rows(
            var: np.ndarray,
            x_coef: np.ndarray,
            x_var: np.ndarray,
            lo: np.ndarray,
            hi: np.ndarray,
        ) -> None:
            """Rows ``lo ≤ z[var] + x_coef·z[x_var] ≤ hi``, one per entry."""
            nonlocal n_rows
            m = len(var)
            r = np.arange(n_rows, n_rows + m, dtype=np.int64)
            a_row.extend((r, r))
            a_col.extend((var, x_var))
            a_val.extend((np.ones(m), x_coef))
            row_lower.append(lo)
            row_upper.append(hi)
            n_rows += m

        # Eq. (10): every original and every published record has exactly k edges.
        deg_rows = np.concatenate([pair_l, n + pair_i])
        a_row.append(deg_rows)
        a_col.append(np.tile(np.arange(n * n, dtype=np.int64), 2))
        a_val.append(np.ones(2 * n * n))
        row_lower.append(np.full(2 * n, float(k)))
        row_upper.append(np.full(2 * n, float(k)))
        n_rows = 2 * n

        # Eq. (4)–(7), numeric attribute j: (5) and (7) are the variable bounds
        # l_i ≤ q_i ≤ u_i. Rewritten, (4) is u_i − (q_ℓ − q_i)·x(ℓ, i) ≥ q_i and (6) is
        # l_i − (q_ℓ − q_i)·x(ℓ, i) ≤ q_i; for q_ℓ ≤ q_i (resp. q_ℓ ≥ q_i, which includes ℓ = i)
        # they are implied by (5) (resp. (7)), so only the other pairs get a row. As in the paper,
        # (5), (7) and (9) hold even when x(i, i) = 0: published record i always covers q_i.
        # ``recode`` covers only the graph's edges, so the released GCP is at most objective / n.
        for a in np.flatnonzero(num_scale > 0):
            q = qi.num[:, a]
            u_var, l_var = n_vars + np.arange(n), n_vars + n + np.arange(n)
            n_vars += 2 * n
            cost.append(np.concatenate([np.full(n, num_scale[a]), np.full(n, -num_scale[a])]))
            # Tight bounds (no published range leaves the partition's hull) keep the LP bounded
            # whatever the cost.
            lower.append(np.concatenate([q, np.full(n, q.min())]))
            upper.append(np.concatenate([np.full(n, q.max()), q]))
            diff = q[pair_l] - q[pair_i]
            up, dn = np.flatnonzero(diff > 0), np.flatnonzero(diff < 0)
            add_rows(u_var[pair_i[up]], -diff[up], up, q[pair_i[up]], np.full(len(up), np.inf))
            add_rows(l_var[pair_i[dn]], -diff[dn], dn, np.full(len(dn), -np.inf), q[pair_i[dn]])

        # Eq. (8)–(9), categorical attribute j, one indicator u_i^h per value h that occurs among
        # the n records (a value that occurs nowhere is never forced up, so it needs no
        # variable). (9) is the bound u_i^h ≥ q_i^h, i.e. u_i^h is fixed to 1 for h = q_i. With
        # 0/1 indicators q^h, (8) reduces to u_i^h ≥ x(ℓ, i) for h = q_ℓ ≠ q_i and is implied by
        # (9) otherwise. u_i^h is continuous in [0, 1], not binary: for a 0/1 vector x the rows
        # force u_i^h ≥ 1 exactly when some matched original has value h and only u_i^h ≥ 0
        # otherwise, and the objective (positive factor) pushes u_i^h down to that bound, so an
        # optimal solution has 0/1 indicators anyway and integrality would only cost branching.
        constant = 0.0
        for a in np.flatnonzero(cat_scale > 0):
            c = qi.cat[:, a]
            values, code = np.unique(c, return_inverse=True)  # code[ℓ]: index of q_ℓ in values
            m = len(values)
            base = n_vars
            n_vars += m * n  # u_i^h at base + h·n + i
            cost.append(np.full(m * n, cat_scale[a]))
            own = np.zeros((m, n))
            own[code, np.arange(n)] = 1.0
            lower.append(own.reshape(-1))
            upper.append(np.ones(m * n))
            constant -= n * cat_scale[a]  # the "−1" of eq. (11), once per published record
            sel = np.flatnonzero(off_diag & (c[pair_l] != c[pair_i]))
            add_rows(
                base + code[pair_l[sel]] * n + pair_i[sel],
                np.full(len(sel), -1.0),
                sel,
                np.zeros(len(sel)),
                np.full(len(sel), np.inf),
            )

        self.cost = np.concatenate(cost)
        self.lower = np.concatenate(lower)
        self.upper = np.concatenate(upper)
        self.integrality = np.zeros(n_vars, dtype=np.int8)
        self.integrality[: n * n] = 1
        self.matrix = sp.csr_array(
            (np.concatenate(a_val), (np.concatenate(a_row), np.concatenate(a_col))),
            shape=(n_rows, n_vars),
        )
        self.row_lower = np.concatenate(row_lower)
        self.row_upper = np.concatenate(row_upper)
        self.constant = constant


def _paper_objective(qi: EncodedQI, graph: GeneralizationGraph) -> float:
    """Eq. (11) for a given graph: published record i covers q_i and its graph neighbours."""
    num_scale, cat_scale = qi.ncp_scales()
    adj = graph.published_members().toarray().astype(bool)  # adj[i, ℓ]: x(ℓ, i)
    np.fill_diagonal(adj, True)
    total = 0.0
    for a in range(qi.num.shape[1]):
        vals = np.where(adj, qi.num[None, :, a], np.nan)
        total += num_scale[a] * float(np.sum(np.nanmax(vals, axis=1) - np.nanmin(vals, axis=1)))
    for a in range(qi.cat.shape[1]):
        counts = [len(np.unique(qi.cat[row, a])) for row in adj]
        total += cat_scale[a] * float(np.sum(np.asarray(counts) - 1))
    return total
