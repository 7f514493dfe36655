"""Freeform (nonreciprocal) generalization: Greedy, SortGreedy and Hungarian (Doka et al. §5–7).

All three share one shell: start from the self-assignment (zero loss), then run k−1
iterations, each adding one assignment disjoint from the previous ones that increases GCP as
little as the inner routine can; edge weights are recomputed between iterations as the GCP
increase of extending published record j to cover original i. The union of the k assignments
is a k-regular generalization graph. With hierarchies whose nodes the release publishes, the
weights are the increase of the hierarchy Loss metric (``metrics.gcp_increase_weights``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from anonymatch.core.errors import InfeasibleError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.lap import lapjv, two_stage
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.methods import BuildOptions, TimeUp
from anonymatch.tables.methods._kernels import (
    greedy_iteration,
    grow_cells,
    grow_members,
    sortgreedy_round,
)
from anonymatch.tables.metrics import (
    PublishedCells,
    TreeTables,
    forbidden_cost,
    gcp_increase_weights,
)
from anonymatch.tables.order import lexicographic_order

Iteration = Callable[[np.ndarray, np.ndarray], np.ndarray]


class ExtraCost(Protocol):
    """A cost added to the GCP-increase weights by a data kind that publishes more than cells
    (``anonymatch.relational``: the items a published record makes uncertain). Built for one
    partition in the shell's local (lexicographic) order, it prices every edge, then learns
    each assignment as it is taken."""

    def weights(self) -> np.ndarray:
        """The m × m extra cost of extending published j to cover original i (≥ 0)."""

    def grow(self, match: np.ndarray) -> None:
        """Published ``match[i]`` now also covers original i."""


ExtraCostFactory = Callable[[np.ndarray], ExtraCost]
"""Given the shell's local order (local position p is record ``order[p]`` of the partition),
the extra cost of the partition."""


def _greedy_step(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    return greedy_iteration(w, used)


SORT_BATCH = 8
"""The first batch of the SortGreedy scan holds about the ``SORT_BATCH``·m lightest edges,
each later one about ``SORT_BATCH`` per original still free (``_kernels.sortgreedy_round``)."""

_SAMPLE = 4096
"""About how many weights (whole rows) are sampled to place the SortGreedy batch's
threshold."""


def _sortgreedy_step(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    """One SortGreedy iteration (Doka Algorithm 2): the matching that one stable sort of all m²
    edges and a greedy scan give, without that sort (``_kernels.sortgreedy_round``, issue 38:
    the full sort was most of the method's time, 5–8× the Hungarian's at k = 50)."""
    return sortgreedy_round(w, used, SORT_BATCH, _SAMPLE)


def _hungarian_step(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    # Forbidden (already used) edges already cost more than any assignment avoiding them
    # (``gcp_increase_weights(forbidden=used)``). The unused edges form an (m−t)-regular
    # bipartite graph, so a perfect matching avoiding them exists and the optimum is one.
    match = lapjv(w)
    if used[np.arange(len(match)), match].any():  # pragma: no cover - Hall's theorem
        raise AssertionError("the assignment used a forbidden edge")
    return match


def _two_stage_step(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    # ``core.lap.two_stage`` falls back to the exact augmentation whenever its second stage
    # would take a forbidden edge, so the same Hall argument as ``_hungarian_step`` holds.
    match = two_stage(w, used)
    if used[np.arange(len(match)), match].any():  # pragma: no cover - Hall's theorem
        raise AssertionError("the assignment used a forbidden edge")
    return match


TWO_STAGE_MIN_K = 50
"""From this k on, hungarian solves each round by the two-stage assignment (``core.lap.
two_stage``): LAPJV's initialization keeps the rows it assigns and the rest are solved exactly
among the columns left. Measured on UCI Adult (8 QIs, whole table, the default partitions;
``benchmarks/rounds_variants.py``): the final GCP relative to exact rounds is +7.1 % at
k = 10, +4.3 % at 20, +2.4 % at 30, +1.1 % at 40, +0.5 % at 50 and −0.8 % at 100 (each round
is no longer optimal, and a cheaper round is not always a worse start for the next), for 1.1,
1.4, 1.5, 1.9, 2.0 and 2.3× less CPU in the rounds."""


def weights_dtype(k: int) -> type:
    """The float type of the weights that the rounds of every freeform method read at level k:
    float32 from k = :data:`TWO_STAGE_MIN_K` on (half the memory each round reads: a quarter
    less time for hungarian's two-stage assignment at m = 1,000 on Adult, 7 % for
    SortGreedy's scan; a choice may differ where weights differ below float32's precision,
    and none of these rounds is optimal anyway), float64 below it (the exact rounds' and the
    heuristics' releases there are those of float64 weights). The one rule of every path
    (tables, relational)."""
    return np.float32 if k >= TWO_STAGE_MIN_K else np.float64


def hungarian_step(k: int) -> Iteration:
    """The round of the hungarian method at level k: exact below :data:`TWO_STAGE_MIN_K`, the
    two-stage assignment from it on. The one rule of every path (tables, relational)."""
    return _two_stage_step if k >= TWO_STAGE_MIN_K else _hungarian_step


def round_assignment(method: str, k: int) -> str:
    """How each round of freeform ``method`` at level k is assigned, as the manifest's plan
    block says it: ``exact`` (Hungarian below :data:`TWO_STAGE_MIN_K`), ``two-stage``
    (Hungarian from it on), or the heuristic's name (``greedy``, ``sortgreedy``)."""
    if method != "hungarian":
        return method
    return "two-stage" if hungarian_step(k) is _two_stage_step else "exact"


def build_freeform(
    qi: EncodedQI,
    k: int,
    step: Iteration,
    extra: ExtraCostFactory | None = None,
    tick: Callable[[int], object] | None = None,
    deadline: float | None = None,
) -> GeneralizationGraph:
    """Run the k-iteration shell with ``step`` as the inner assignment routine.

    ``extra`` (optional) adds a cost of the kind's own to every allowed edge (the joint cost of
    ``anonymatch.relational``); forbidden edges are then re-priced above any assignment that
    avoids them (m times the largest allowed weight, plus ``forbidden_cost``). ``tick``
    (optional) is called with 1 after each round (the progress bar in rounds). ``deadline``
    (optional, a ``time.perf_counter()`` value): past it, the next round is not started and
    :class:`~anonymatch.tables.methods.TimeUp` is raised (the run's time limit:
    ``methods.build_graph`` publishes the partition another way). The weights' float type is
    :func:`weights_dtype` of k.

    Records are first put in lexicographic order (attributes from lower to higher cardinality,
    Doka §5), the order Greedy scans and backtracking searches. After the first round only the
    columns of the published records whose cells grew are recomputed (15–30 % of them a round
    on Adult at k = 50), bitwise the weights a full recomputation gives. Time O(k·m²·d) for
    the weights in the worst case plus the cost of ``step``; memory O(m²) — call it on
    partitions, not on a whole large table.
    """
    m = qi.n
    if k > m:
        raise InfeasibleError(f"k = {k} exceeds the {m} records to anonymize")
    order = lexicographic_order(qi)
    part = qi.take(order)
    # A missing value makes its published record's cell ``*`` (``num_star``/``cat_star``),
    # which the weights price at NCP 1 (docs/guarantees/missing.md).
    lo, hi, member, local_qi = singleton_cells(part)
    num_star, cat_star = part.num_missing.copy(), part.cat_missing.copy()
    # Attributes publishing hierarchy nodes: record j shows the node at level[j, a] above its
    # own leaf (rep = part.cat), and the weights are the Loss metric's increase.
    trees = TreeTables.build(part)
    level = np.zeros(part.cat.shape, np.int64)
    used = np.eye(m, dtype=bool)
    rounds = [np.arange(m, dtype=np.int64)]
    joint = None if extra is None else extra(order)

    def cells(rows: np.ndarray | slice) -> PublishedCells:
        """The published cells of records ``rows``."""
        grown = [mat[rows] for mat in member]
        return PublishedCells(
            lo[rows], hi[rows], grown, part.cat[rows], level[rows], num_star[rows], cat_star[rows]
        )

    dtype = weights_dtype(k)
    w = gcp_increase_weights(local_qi, cells(slice(None)), trees, part.cat, used, dtype=dtype)
    num = np.ascontiguousarray(part.num, dtype=np.float64)
    cat_codes = [np.ascontiguousarray(codes) for codes in local_qi.cat.T]
    for r in range(k - 1):
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeUp
        if joint is not None:
            w += joint.weights()
            w[used] = m * float(w[~used].max()) + forbidden_cost(m)
        match = step(w, used)
        rounds.append(match)
        used[np.arange(m), match] = True
        if joint is not None:
            joint.grow(match)
        changed = np.zeros(m, dtype=bool)  # published records whose cells grew this round
        missing = (part.num_missing, part.cat_missing)
        grow_cells(match, num, *missing, lo, hi, num_star, cat_star, changed)
        for mat, codes in zip(member, cat_codes, strict=True):
            grow_members(match, codes, mat, changed)
        for a in np.flatnonzero(trees.is_tree).tolist():  # j = match[i] now covers i leaf
            grown = trees.lca_levels(a, part.cat[:, a], part.cat[match, a], level[match, a])
            changed[match[grown != level[match, a]]] = True
            level[match, a] = grown
        if r < k - 2:  # the next round's weights: only the grown records' columns change
            if joint is None:
                w[np.arange(m), match] = forbidden_cost(m)
                cols = np.flatnonzero(changed)
                if cols.size:
                    gcp_increase_weights(local_qi, cells(cols), trees, part.cat, used, (w, cols))
            else:
                w = gcp_increase_weights(
                    local_qi, cells(slice(None)), trees, part.cat, used, dtype=dtype
                )
        if tick is not None:
            tick(1)
    assignments = np.stack(rounds)
    # back to the caller's record numbering: local position p is record order[p]
    return GeneralizationGraph.from_assignments(_relabel(assignments, order))


def singleton_cells(
    part: EncodedQI,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray], EncodedQI]:
    """Every record of ``part`` as its own published cell, the start of the weight kernels.

    Returns
    -------
    lo, hi : numpy.ndarray
        (m, dn) bounds of the present numeric values (+inf / −inf where missing).
    member : list of numpy.ndarray
        Per categorical QI, the (m, values present) membership of each record's own value.
    local_qi : EncodedQI
        ``part`` with categorical codes remapped to the values present in it, so membership
        stays m × (≤ m).

    Notes
    -----
    Time and memory O(m² · dc) for m records and dc categorical QIs (the membership).
    """
    m = part.n
    lo = np.where(part.num_missing, np.inf, part.num)
    hi = np.where(part.num_missing, -np.inf, part.num)
    local = [np.unique(part.cat[:, a], return_inverse=True)[1] for a in range(part.cat.shape[1])]
    member = []
    for codes in local:
        mat = np.zeros((m, int(codes.max()) + 1 if m else 0), dtype=bool)
        mat[np.arange(m), codes] = True
        member.append(mat)
    cat = np.column_stack(local) if local else part.cat
    return lo, hi, member, dataclasses.replace(part, cat=cat.astype(np.int64))


def _relabel(assignments: np.ndarray, order: np.ndarray) -> np.ndarray:
    """assignments[t, p] = q (positions) → out[t, order[p]] = order[q] (records)."""
    out = np.empty_like(assignments)
    out[:, order] = order[assignments]
    return out


def greedy(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """Greedy (Doka §5, Algorithm 1 with backtracking). O(k·m²) per partition of m records."""
    return build_freeform(qi, k, _greedy_step, tick=options.tick, deadline=options.deadline)


def sortgreedy(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """SortGreedy (Doka §6, Algorithm 2): the matching of one stable sort of all edges, per
    round, without that sort (``_kernels.sortgreedy_round``). O(k·m²) per partition of m
    records in practice (each round reads the weights once and sorts a few batches in linear
    time)."""
    return build_freeform(qi, k, _sortgreedy_step, tick=options.tick, deadline=options.deadline)


def hungarian(qi: EncodedQI, k: int, options: BuildOptions) -> GeneralizationGraph:
    """Hungarian (Doka §7): each iteration is a minimum-cost assignment (Jonker–Volgenant,
    ``core.lap``) on the GCP-increase weights, used edges forbidden; exact below
    :data:`TWO_STAGE_MIN_K`, two-stage from it on (:func:`hungarian_step`). O(k·m³) per
    partition of m records in the worst case."""
    step = hungarian_step(k)
    return build_freeform(qi, k, step, tick=options.tick, deadline=options.deadline)


STEPS: dict[str, Callable[[int], Iteration]] = {
    "greedy": lambda k: _greedy_step,
    "sortgreedy": lambda k: _sortgreedy_step,
    "hungarian": hungarian_step,
}
"""The inner assignment routine of each freeform method at level k, by name: other kinds run
the shell (:func:`build_freeform`) with a cost of their own (``anonymatch.relational``)."""
