"""Adaptive anonymity with suppression: per-person levels δᵢ, b-matching (Choromanski et al.).

Pipeline: validate → encode (every QI is a discrete value; categorical missing values become
initial stars, footnote 4) → solve (Algorithm 1, Algorithm 2 or the agglomerative baseline) →
stars → random permutation of the published rows, other columns attached through it (§3, last
step of both algorithms) → verify from the published text (``verify_adaptive``) → report.
The level column itself is never published: a published δ would let an attacker who knows a
person's δ discard the rows showing another level.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.core.params import check_level_fits, integer, param, require_frame
from anonymatch.core.release import Produced, publish
from anonymatch.core.runner import Placement, run_partitions
from anonymatch.tables.columns.schema import EncodedQI
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.job import ReleaseCheck, TableJob, plan
from anonymatch.tables.methods import DEFAULT_EPSILONS, names, registry
from anonymatch.tables.methods.agglomerative import agglomerative
from anonymatch.tables.methods.bmatching import (
    BMatching,
    SuppressionProblem,
    lexicographic_codes_order,
    variational_bmatching,
)
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.models.levels import parse_levels
from anonymatch.tables.pipeline import Release, _release_table, plan_blocks, prepare
from anonymatch.tables.recode import GeneralizedQI
from anonymatch.tables.risk.attack import Adversary, AttackReport, simulate_attack
from anonymatch.tables.risk.checks import ReleaseView, release_checks
from anonymatch.tables.verify import AdaptiveVerificationReport, attacker_view, verify_adaptive

ADAPTIVE_TIME_LIMIT = 600.0  # seconds per b-matching integer program (Python default)
DEFAULT_PATIENCE = 2  # ε values without fewer stars before the sweep stops


def discrete_codes(enc: EncodedQI) -> np.ndarray:
    """n×d int64 codes in the order numeric QIs, categorical QIs (``enc`` layout); a numeric
    value is a discrete value here (published exactly or starred). A missing value gets a code
    of its own, shared with no other record, so any row covering it is starred there."""
    keys = enc.keys()
    gone = np.hstack([enc.num_missing, enc.cat_missing])
    cols = []
    for a in range(keys.shape[1]):
        codes = np.unique(keys[:, a], return_inverse=True)[1].reshape(-1).astype(np.int64)
        lost = np.flatnonzero(gone[:, a])
        codes[lost] = codes.max(initial=-1) + 1 + np.arange(len(lost))
        cols.append(codes)
    if not cols:
        return np.empty((enc.n, 0), np.int64)
    return np.ascontiguousarray(np.column_stack(cols), dtype=np.int64)


def layout_names(enc: EncodedQI) -> tuple[str, ...]:
    return enc.num_names + enc.cat_names


def build_problem(
    enc: EncodedQI,
    delta: np.ndarray,
    forced: np.ndarray | None = None,
    cell_weights: np.ndarray | None = None,
) -> SuppressionProblem:
    """The suppression problem of an encoded table: utility = attribute weight × cell weight."""
    codes = discrete_codes(enc)
    attr_w = np.concatenate([enc.num_w, enc.cat_w])
    utility = np.broadcast_to(attr_w, codes.shape).astype(np.float64)
    if cell_weights is not None:
        utility = utility * cell_weights
    if forced is None:
        forced = np.zeros(codes.shape, bool)
    return SuppressionProblem(codes, forced, np.ascontiguousarray(utility), delta)


def solve(
    problem: SuppressionProblem,
    method: str,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    neighbours: int | None = None,
    time_limit: float = 600.0,
    progress: Callable[[str], None] | None = None,
    *,
    partition_size: int | None = None,
    patience: int | None = None,
    candidates: int | None = None,
    executor: str = "auto",
    scheduler: str | None = None,
    workers: int | None = None,
) -> BMatching:
    """Run one suppression method. ``bmatching-symmetric`` is warm-started from Algorithm 1's
    star pattern (§5).

    Partitions: a table of at least 2 · ``partition_size`` records (default
    ``adaptive_partition_size``) is cut along the lexicographic order of its codes into
    ⌊n / size⌋ parts of nearly equal length, and each part is solved on its own — the baseline
    and the b-matching alike — on ``executor`` (``auto``: worker processes when there are more
    than two parts, else this process; ``inline``, ``threads``, ``processes``, ``dask`` with
    ``scheduler``/``workers``; see ``core.runner``; the result does not depend on it). Each
    part's graph satisfies the degree conditions on its own records and contains their
    self-edges, so the union does on all records (and is symmetric, or keeps a
    δ-factor, when every part's is): the guarantee of docs/guarantees/adaptive.md holds for the
    whole release, which is verified as a whole in any case. A part's b-matching runs on
    O(size · neighbours) candidate pairs whatever n, so the whole solve is linear in n.
    ``patience``: see ``variational_bmatching`` (None: the full ε sweep); on partitioned tables
    the δ-regular re-solve also becomes sticky (``regular_after_miss``).

    Departure: both b-matching algorithms also start from the baseline's solution when it has
    fewer stars than their first solve — its cliques of ≥ max δᵢ records are feasible for both
    (symmetric, degrees ≥ δᵢ, a δ-factor) — so they never return more stars than k-anonymity.
    ``BMatching.baseline`` holds the baseline's star count.
    """
    if method not in names(levels=True):
        raise InputError(f"unknown suppression method {method!r}")
    n = problem.n
    k = int(problem.delta.max()) if n else 1
    size = registry()[method].partition_size_for(k, partition_size)
    assert size is not None
    options = _PartOptions(method, k, tuple(epsilons), neighbours, time_limit, patience, candidates)
    if n < 2 * size:  # a single part
        return _solve_part((problem, options), progress)
    order = lexicographic_codes_order(problem.codes)
    parts = np.array_split(order, max(1, n // size))
    jobs = [
        (
            SuppressionProblem(
                problem.codes[ids], problem.forced[ids], problem.utility[ids], problem.delta[ids]
            ),
            replace(options, partitioned=True),
        )
        for ids in parts
    ]
    if executor == "auto":
        executor = "processes" if len(jobs) > 2 else "inline"
    results = run_partitions(
        _solve_part,
        jobs,
        placement=Placement(executor, scheduler, workers),  # type: ignore[arg-type]
    )
    rows = np.concatenate([ids[r.rows] for ids, r in zip(parts, results, strict=True)])
    cols = np.concatenate([ids[r.cols] for ids, r in zip(parts, results, strict=True)])
    stars = np.empty_like(problem.forced)
    for ids, r in zip(parts, results, strict=True):
        stars[ids] = r.stars
    out = BMatching(rows, cols, stars, _merged_history(results, options.epsilons))
    out.baseline = sum(r.baseline or 0 for r in results)
    if progress is not None:
        progress(f"{len(parts)} partitions: {out.star_total(problem):g} stars")
    return out


@dataclass(frozen=True)
class _PartOptions:
    method: str
    k: int  # the baseline's k = max δᵢ over the whole table
    epsilons: tuple[float, ...]
    neighbours: int | None
    time_limit: float
    patience: int | None
    candidates: int | None
    partitioned: bool = False


def _solve_part(
    job: tuple[SuppressionProblem, _PartOptions],
    progress: Callable[[str], None] | None = None,
) -> BMatching:
    """Baseline, then (unless the method is the baseline) Algorithm 1, then Algorithm 2, on one
    part (or the whole table). A worker-process entry point: module level, picklable job."""
    problem, opt = job
    baseline = agglomerative(
        SuppressionProblem(
            problem.codes, problem.forced, problem.utility, np.full(problem.n, opt.k, np.int64)
        )
    )
    baseline_stars = int(baseline.stars.sum())
    if opt.method == "agglomerative":
        baseline.baseline = baseline_stars
        return baseline
    common = {
        "epsilons": opt.epsilons,
        "neighbours": opt.neighbours,
        "progress": progress,
        "incumbent": baseline,
        "patience": opt.patience,
        "regular_after_miss": opt.partitioned,
        "candidates": opt.candidates,
    }
    result = variational_bmatching(problem, False, **common)  # type: ignore[arg-type]
    if opt.method == "bmatching-symmetric":
        result = variational_bmatching(
            problem,
            True,
            warm_start=result.stars,
            time_limit=opt.time_limit,
            **common,  # type: ignore[arg-type]
        )
    result.baseline = baseline_stars
    return result


def _merged_history(
    results: Sequence[BMatching], epsilons: Sequence[float]
) -> list[tuple[float, int, float]]:
    """One history for a partitioned solve: (ε, solves the parts ran at ε, Σ over parts of each
    part's fewest stars so far) after the first solve (ε₀, 0, …) and after each ε swept by some
    part; a part that stopped early counts with its final figure."""
    if not results or any(not r.history for r in results):
        return []  # the baseline keeps no history
    rank = {e: i for i, e in enumerate(epsilons)}
    out = [(float(epsilons[0]), 0, float(sum(r.history[0][2] for r in results)))]
    for idx, eps in enumerate(epsilons):
        solves = sum(1 for r in results for e, it, _ in r.history if it > 0 and e == eps)
        if solves == 0:
            break
        total = sum(min(s for e, it, s in r.history if it == 0 or rank[e] <= idx) for r in results)
        out.append((float(eps), solves, float(total)))
    return out


def starred_cells(enc: EncodedQI, stars: np.ndarray) -> GeneralizedQI:
    """Published cells: each record's own values, starred where ``stars`` says."""
    n, dn = enc.n, enc.num.shape[1]
    sets = tuple(
        sp.csr_array(
            (np.ones(n, np.int8), (np.arange(n), enc.cat[:, a])), shape=(n, int(enc.cat_card[a]))
        )
        for a in range(enc.cat.shape[1])
    )
    values = np.where(enc.num_missing, 0.0, enc.num)  # a missing value's cell is starred
    return GeneralizedQI(
        values.copy(), values.copy(), stars[:, :dn].copy(), sets, stars[:, dn:].copy()
    )


def missing_cells(enc: EncodedQI) -> np.ndarray:
    """Initial stars (footnote 4): the QI cells holding a missing value (``enc`` layout)."""
    return np.ascontiguousarray(np.hstack([enc.num_missing, enc.cat_missing]))


def read_cell_weights(frame: pd.DataFrame, enc: EncodedQI) -> np.ndarray:
    """Per-cell star costs from a table with one column per QI and one row per record."""
    missing = [a for a in layout_names(enc) if a not in frame.columns]
    if missing:
        raise InputError(f"the cell-weight table has no column {missing[0]!r}")
    if len(frame) != enc.n:
        raise InputError(f"the cell-weight table has {len(frame)} rows but the input has {enc.n}")
    values = frame[list(layout_names(enc))].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InputError("cell weights must be finite non-negative numbers")
    return values


def anonymize_adaptive(
    data: pd.DataFrame,
    qi: Sequence[str] | str | None = None,
    k: int | None = None,
    *,
    job: TableJob | None = None,
    progress: Callable[[str], None] | None = None,
    **keywords: Any,
) -> Release:
    """Publish ``data`` with suppression so that every person i is compatible with at least δᵢ
    published rows and vice versa (δᵢ = ``k`` for all, or from the column ``k_column``).

    Parameters
    ----------
    data : pandas.DataFrame
        The original table.
    qi, k : optional
        The quasi-identifiers and the level for everyone (or give ``k_column``).
    job : TableJob, optional
        A validated job of a suppression method (instead of ``qi``, ``k`` and ``keywords``).
    progress : callable, optional
        Called with one line per solve step.
    **keywords
        The other parameters of :meth:`TableJob.build <anonymatch.tables.job.TableJob.build>`:
        ``k_column``, ``method`` (default ``bmatching``; ``bmatching-symmetric``,
        ``agglomerative``), ``numeric``, ``sensitive``, ``identifiers``, ``seed``, ``weights``,
        ``cell_weights``, ``epsilons``, ``neighbours``, ``na_values``, ``drop_missing``,
        ``time_limit`` (default 600 s), ``partition_size``, ``patience``, ``candidates``,
        ``executor``, ``scheduler``, ``workers``.

    Returns
    -------
    Release

    Notes
    -----
    Tables of at least 2 · ``partition_size`` records (default 500, at least 2 · max δ) are
    solved part by part along the lexicographic order, on ``executor``/``workers`` (see
    ``solve``). ``patience``: stop the ε sweep after that many ε values in a row that did not
    lower the stars (0: the full sweep of the paper). ``candidates``: each record's cheapest
    records under every solve's own costs join its candidate pairs (None: max(20, 4·max δ);
    0: the fixed neighbourhoods only; see ``variational_bmatching``). The report's
    ``loss.baseline_stars`` gives the stars of the agglomerative baseline (k-anonymity with
    suppression, k = max δᵢ) on the same parts.

    Raises InputError (bad parameters or levels), InfeasibleError (a level above n, or no
    b-matching within the candidates) and VerificationError (should never happen).
    Complexity: see ``variational_bmatching`` (per ε and iteration one b-matching on
    O(size · neighbours) candidate pairs per part, so O(n) per iteration) and
    ``verify_adaptive``.
    """
    started = time.perf_counter()
    data = require_frame(data)
    if job is None:
        defaults = {"method": "bmatching", "time_limit": ADAPTIVE_TIME_LIMIT}
        job = TableJob.build({**defaults, **keywords, "qi": qi, "k": k})
    elif qi is not None or k is not None or keywords:
        raise InputError(f"give {param('job')} or the parameters, not both")
    if not job.method.levels:
        raise InputError(
            f"{param('method')} must be one of {', '.join(names(levels=True))}, "
            f"got {job.method.name!r}"
        )
    method, schema, options = job.method.name, job.schema, job.adaptive
    checks = release_checks("table", "adaptive", schema.identifiers, job.strict)
    k, k_column, seed = job.k, job.k_column, job.seed
    epsilons, neighbours, cell_weights = options.epsilons, options.neighbours, options.cell_weights
    data, enc, dropped = prepare(data, schema, job.na, job.drop_missing)
    n = enc.n
    delta = levels(data, k, k_column, n)
    run = plan(job, rows=n, level=int(delta.max()) if n else 1)
    forced = missing_cells(enc)
    weights_arr = read_cell_weights(cell_weights, enc) if cell_weights is not None else None
    problem = build_problem(enc, delta, forced, weights_arr)

    t0 = time.perf_counter()
    candidates = options.candidates
    solution = solve(
        problem,
        method,
        epsilons,
        neighbours,
        job.time_limit,
        progress,
        partition_size=run.partition_size,
        patience=options.patience or None,
        candidates=(max(20, 4 * int(delta.max())) if candidates is None else candidates) or None,
        executor=job.execution.executor,
        scheduler=job.execution.scheduler,
        workers=job.execution.workers,
    )
    t_build = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    shuffle = rng.permutation(n)  # output position p shows the record shuffle[p]
    cells = starred_cells(enc, solution.stars).take(shuffle)
    table = _release_table(data, schema, enc, cells, shuffle)

    t0 = time.perf_counter()
    check = verify_adaptive(parse_cells(table, enc), enc, delta)
    t_verify = time.perf_counter() - t0
    position = np.empty(n, np.int64)
    position[shuffle] = np.arange(n)
    adj = solution.adjacency(n).tocoo()  # published row i covers original j
    graph = GeneralizationGraph.from_edges(adj.col, position[adj.row], n)
    stars = int(solution.stars.sum())
    suppression, run_plan = plan_blocks(run, job)
    produced = Produced(
        kind="table",
        method=method,
        parameters={
            **schema.roles(),
            "k_column": k_column,
            "epsilons": list(epsilons) if method != "agglomerative" else None,
            "neighbours": neighbours,
            "cell_weights": cell_weights is not None,
            "partition_size": run.partition_size,
            "patience": options.patience if method != "agglomerative" else None,
            "candidates": candidates if method != "agglomerative" else None,
            **suppression,
        },
        guarantee={
            "model": "adaptive-anonymity",
            "k": int(delta[0]) if problem.is_uniform else None,
            "levels": {
                "column": k_column,
                "min": int(delta.min()),
                "max": int(delta.max()),
                "mean": float(delta.mean()),
            },
        },
        verification=check.to_dict(),
        loss={
            "stars": stars,
            "initial_stars": int(forced.sum()),
            "weighted_stars": solution.star_total(problem),
            "baseline_stars": solution.baseline,
            "utility": 1.0 - stars / max(1, n * problem.d),
            "graph_edges": int(len(solution.rows) + n),
            **information_loss(cells, enc).to_dict(),
            "iterations": [list(h) for h in solution.history],
        },
        seconds={
            "build": t_build,
            "verify": t_verify,
            "wall": time.perf_counter() - started,
        },
        seeded=seed is not None,
        records_in=n + dropped,
        records_out=n,
        input_extra={"dropped_missing": dropped},
        plan=run_plan,
    )
    report = publish(produced, checks=checks, shown=ReleaseView.of(data, enc, cells, table, schema))
    return Release(table, cells, graph, enc, report)


def levels(data: pd.DataFrame, k: int | None, k_column: str | None, n: int) -> np.ndarray:
    """δ for every row: from ``k_column`` (see ``parse_levels``) or ``k`` for all."""
    if k_column is not None:
        return parse_levels(data, k_column)
    k = integer(k, "k")
    check_level_fits(k, n)
    return np.full(n, k, np.int64)


def verify_adaptive_release(
    published: pd.DataFrame, original: pd.DataFrame, check: ReleaseCheck
) -> AdaptiveVerificationReport:
    """Verify a suppression release against the original table and its level column
    (``check.k_column``)."""
    if check.k_column is None:
        raise InputError(f"missing {param('k_column')}")
    from anonymatch.tables.models.levels import LevelView, PerRecordLevels

    data, enc, _ = prepare(original, check.schema, check.na, check.drop_missing)
    level = PerRecordLevels(check.k_column)  # the criterion's check: ≥ δᵢ disjoint matches
    report: AdaptiveVerificationReport = level.check(
        LevelView(parse_cells(published, enc), enc, data)
    ).detail
    return report


def attack_release(
    published: pd.DataFrame,
    original: pd.DataFrame,
    check: ReleaseCheck,
    adversary: Adversary,
    seed: int | None = None,
) -> AttackReport:
    """Attack analysis of any table release (suppression or generalization): the compatibility
    graph from published cells + original QIs (``check``: the columns, the level ``k`` or
    ``k_column``, missing values), the true matching from the adversary's ``key`` column (a
    unique value per person carried into the release), ``known`` true pairs revealed at random
    in each of ``trials`` trials. See ``attack.simulate_attack``."""
    key, known, trials = adversary
    if key not in original.columns:
        raise InputError(f"the original has no key column {key!r}")
    data, enc, _ = prepare(original, check.schema, check.na, check.drop_missing)
    n = enc.n
    if key not in published.columns:
        raise InputError(f"the release has no key column {key!r}")
    orig_key = data[key].astype(str).to_numpy()
    pub_key = published[key].astype(str).to_numpy()
    if len(set(orig_key)) != n:
        raise InputError(f"key column {key!r} is not unique in the original")
    if len(pub_key) != n or set(pub_key) != set(orig_key):
        raise InputError(f"key column {key!r} does not pair the release with the original")
    position = {v: p for p, v in enumerate(pub_key)}
    truth = np.array([position[v] for v in orig_key], np.int64)
    delta = levels(data, check.k, check.k_column, n)
    view = attacker_view(parse_cells(published, enc), enc)
    return simulate_attack(view, truth, delta, known, trials, np.random.default_rng(seed))
