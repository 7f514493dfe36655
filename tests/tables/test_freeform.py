"""The freeform shell's inner steps (``tables.methods.freeform``): exact small cases against a
reference, k-regularity through the verifier."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import anonymatch
from anonymatch.core.errors import InputError
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.job import LONG_RUN_SECONDS, TableJob, plan
from anonymatch.tables.methods import (
    BuildOptions,
    TimeUp,
    build_graph,
    estimated_seconds,
    names,
    registry,
)
from anonymatch.tables.methods._kernels import sortgreedy_repair, sortgreedy_scan
from anonymatch.tables.methods.freeform import (
    TWO_STAGE_MIN_K,
    _greedy_step,
    _hungarian_step,
    _sortgreedy_step,
    _two_stage_step,
    build_freeform,
    hungarian,
    hungarian_step,
    sortgreedy,
)
from anonymatch.tables.methods.ring import (
    draw_assignment,
    windows,
    windows_cells,
    windows_graph,
    windows_of,
    windows_order,
)
from anonymatch.tables.recode import recode
from anonymatch.tables.verify import verify
from tests.factories import encode_frame, random_frame


def _full_sort_sortgreedy(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Doka Algorithm 2 as written: one stable sort of all m² edges, one scan, the repair."""
    m = w.shape[0]
    order = np.argsort(np.where(used, np.inf, w).ravel(), kind="stable")
    match, owner = np.full(m, -1, np.int64), np.full(m, -1, np.int64)
    if sortgreedy_scan(order, used, match, owner, 0) < m:
        sortgreedy_repair(w, used, match, owner)
    return match


@settings(max_examples=40, deadline=None)
@given(
    m=st.integers(2, 40),
    rounds=st.integers(0, 6),
    levels=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_batched_sortgreedy_is_the_full_sort(m: int, rounds: int, levels: int, seed: int) -> None:
    # few weight levels: many ties, where the scan order matters most
    rng = np.random.default_rng(seed)
    used = np.zeros((m, m), dtype=bool)
    for _ in range(min(rounds, m - 1)):  # earlier rounds: disjoint perfect matchings
        free = ~used
        perm = rng.permutation(m)
        if not used[np.arange(m), perm].any() and free.any():
            used[np.arange(m), perm] = True
    w = rng.integers(0, levels, (m, m)) / levels
    got = _sortgreedy_step(w, used)
    assert np.array_equal(got, _full_sort_sortgreedy(w, used))
    assert sorted(got.tolist()) == list(range(m))
    assert not used[np.arange(m), got].any()


@settings(max_examples=8, deadline=None)
@given(n=st.integers(12, 60), k=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_sortgreedy_graphs_are_k_regular_and_verified(n: int, k: int, seed: int) -> None:
    frame = random_frame(n, seed)
    qi = encode_frame(frame)
    graph = sortgreedy(qi, k, BuildOptions())
    assert (graph.out_degrees() == k).all() and (graph.in_degrees() == k).all()
    result = anonymatch.anonymize(
        frame, k=k, qi="n0,n1,c0,c1", numeric="n0,n1", method="sortgreedy", seed=seed
    )
    assert anonymatch.verify(frame, result.release, k=k, qi="n0,n1,c0,c1", numeric="n0,n1").passed


def test_progress_ticks_once_per_round_and_partition() -> None:
    qi = encode_frame(random_frame(90, 3))
    ticks: list[int] = []
    for name in ("hungarian", "sortgreedy", "greedy"):
        ticks.clear()
        registry()[name].build(qi, 4, BuildOptions(tick=ticks.append))  # type: ignore[misc]
        assert ticks == [1] * 3  # k − 1 rounds
    assert [m for m in names() if registry()[m].rounds] == ["hungarian", "sortgreedy", "greedy"]


def test_the_estimate_grows_with_k_and_warns_past_a_minute() -> None:
    hungarian, mondrian = registry()["hungarian"], registry()["mondrian"]
    small = estimated_seconds(hungarian, 30_162, 10, 300, 2)
    large = estimated_seconds(hungarian, 30_162, 1000, 2000, 2)
    assert 0 < small < 5 < LONG_RUN_SECONDS < large
    assert estimated_seconds(mondrian, 30_162, 1000, None, 2) == 0
    job = TableJob.build(dict(qi=["n0"], k=1000, method="hungarian", time_limit=600.0))
    run = plan(job, rows=30_162)  # a limit: the rounds run until it, and it is announced
    assert not run.windows and run.limit == 600.0 and run.warning() is not None
    job = TableJob.build(dict(qi=["n0"], k=10, method="hungarian"))
    assert plan(job, rows=30_162).warning() is None


def test_hungarian_rounds_are_exact_below_the_threshold_and_two_stage_from_it() -> None:
    assert hungarian_step(TWO_STAGE_MIN_K - 1) is _hungarian_step
    assert hungarian_step(TWO_STAGE_MIN_K) is _two_stage_step
    for k, method, said in (
        (10, "hungarian", "exact"),
        (TWO_STAGE_MIN_K, "hungarian", "two-stage"),
        (100, "sortgreedy", "sortgreedy"),
        (100, "greedy", "greedy"),
    ):
        run = plan(TableJob.build(dict(qi=["n0"], k=k, method=method)), rows=30_162)
        assert run.to_dict()["assignment"] == said
    for job in (  # no rounds run: no assignment said
        dict(qi=["n0"], k=10, method="mondrian"),
        dict(qi=["n0"], k=100, method="hungarian", structure="windows"),
        dict(qi=["n0"], sensitive=["s"], k=10, method="hungarian"),
    ):
        assert "assignment" not in plan(TableJob.build(job), rows=30_162).to_dict()
    # the two-stage rounds are priced cheaper, and the estimate still grows with k
    exact = estimated_seconds(registry()["hungarian"], 30_162, TWO_STAGE_MIN_K - 1, 1000, 2)
    two_stage = estimated_seconds(registry()["hungarian"], 30_162, TWO_STAGE_MIN_K, 1000, 2)
    assert two_stage < exact < estimated_seconds(registry()["hungarian"], 30_162, 1000, 2000, 2)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_two_stage_hungarian_graphs_are_k_regular_and_verified(seed: int) -> None:
    k = TWO_STAGE_MIN_K
    frame = random_frame(2 * k + 7, seed)
    graph = hungarian(encode_frame(frame), k, BuildOptions())
    assert (graph.out_degrees() == k).all() and (graph.in_degrees() == k).all()
    qi = "n0,n1,c0,c1"
    result = anonymatch.anonymize(frame, k=k, qi=qi, numeric="n0,n1", seed=seed)
    assert result.report["plan"]["assignment"] == "two-stage"
    assert anonymatch.verify(frame, result.release, k=k, qi=qi, numeric="n0,n1").passed


class _NoExtra:
    """A zero extra cost: the shell then recomputes every weight every round."""

    def __init__(self, order: np.ndarray) -> None:
        self.m = len(order)

    def weights(self) -> np.ndarray:
        return np.zeros((self.m, self.m))

    def grow(self, match: np.ndarray) -> None:
        pass


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(8, 70),
    k=st.integers(2, 7),
    missing=st.floats(0, 0.3),
    seed=st.integers(0, 2**16),
)
def test_weights_recomputed_for_grown_records_only_are_the_full_weights(
    n: int, k: int, missing: float, seed: int
) -> None:
    """The shell recomputes only the columns of the published records whose cells grew; every
    round's allowed weights are bitwise those of a full recomputation (the extra-cost path
    recomputes everything), missing values included, so Greedy (which never reads a forbidden
    weight) takes the same assignments."""
    frame = random_frame(n, seed).astype(object)
    rng = np.random.default_rng(seed)
    for column in ("n0", "c1"):
        frame.loc[rng.random(n) < missing, column] = None
    qi = encode_frame(frame)
    k = min(k, n)
    seen: dict[str, list[np.ndarray]] = {"grown": [], "full": []}

    def recording(name: str):
        def step(w: np.ndarray, used: np.ndarray) -> np.ndarray:
            seen[name].append(np.where(used, np.nan, w))
            return _greedy_step(w, used)

        return step

    grown = build_freeform(qi, k, recording("grown"))
    full = build_freeform(qi, k, recording("full"), extra=_NoExtra)
    assert (grown.matrix != full.matrix).nnz == 0
    assert len(seen["grown"]) == k - 1
    for a, b in zip(seen["grown"], seen["full"], strict=True):
        assert np.array_equal(a, b, equal_nan=True)


def test_windows_only_when_asked_for() -> None:
    # windows draw one shift per partition (an insider with one true row learns their
    # partition's): the plan never picks them by itself, however long the rounds would take
    for k in (10, 100, 1000, 2000):
        run = plan(TableJob.build(dict(qi=["n0"], k=k, method="hungarian")), rows=30_162)
        assert not run.windows and run.to_dict(0).get("windows") is None
    asked = TableJob.build(dict(qi=["n0"], k=1000, method="hungarian", structure="windows"))
    run = plan(asked, rows=30_162)
    assert run.windows and run.warning() is None  # windows take seconds
    assert run.to_dict(15)["windows"] == {"partitions": 15, "why": "structure"}
    with pytest.raises(InputError, match="in memory only"):
        plan(asked, rows=30_162, streamed=True)
    with pytest.raises(InputError, match="runs none"):  # a method without rounds
        TableJob.build(dict(qi=["n0"], k=10, method="mondrian", structure="windows"))
    with pytest.raises(InputError, match="k-anonymity only"):  # the default l = 2 included
        TableJob.build(dict(qi=["n0"], sensitive=["s"], k=10, structure="windows"))


def test_a_time_limit_the_run_cannot_honour_is_refused() -> None:
    limited = TableJob.build(dict(qi=["n0"], k=10, method="hungarian", time_limit=30.0))
    assert plan(limited, rows=1000).limit == 30.0
    with pytest.raises(InputError, match="streamed path runs every partition"):
        plan(limited, rows=1000, streamed=True)
    sensitive = TableJob.build(
        dict(qi=["n0"], sensitive=["s"], k=10, method="hungarian", time_limit=30.0)
    )
    with pytest.raises(InputError, match="sensitive models runs every partition"):
        plan(sensitive, rows=1000)
    # mip's limit bounds each solve, on every path
    mip = TableJob.build(dict(qi=["n0"], k=2, method="mip", time_limit=5.0))
    assert plan(mip, rows=10, streamed=False).limit is None


@settings(max_examples=10, deadline=None)
@given(n=st.integers(4, 80), k=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_windows_are_k_shifts_and_the_draw_is_one_of_them(n: int, k: int, seed: int) -> None:
    qi = encode_frame(random_frame(n, seed))
    k = min(k, n)
    graph = windows(qi, k)
    assert (graph.out_degrees() == k).all() and (graph.in_degrees() == k).all()
    order = windows_order(qi)
    assert sorted(order.tolist()) == list(range(n))
    matrix = graph.matrix.toarray().astype(bool)
    for t in range(k):  # the k shifts are perfect matchings inside the graph
        assert matrix[order, np.roll(order, t)].all()
    drawn = draw_assignment(graph, (order,), k, np.random.default_rng(seed))
    assert sorted(drawn.tolist()) == list(range(n))
    assert matrix[np.arange(n), drawn].all()
    t = (-int(np.flatnonzero(order == drawn[order[0]])[0])) % n  # the shift drawn
    assert t < k and np.array_equal(drawn[order], np.roll(order, t))


def test_the_windows_order_is_serpentine() -> None:
    # a (2 values) before b (3 values): b runs up for a = 0 and down for a = 1
    a, b = [0, 1, 0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2, 1, 0]
    frame = pd.DataFrame({"n0": a, "n1": b, "s": ["x"] * 8})
    order = windows_order(encode_frame(frame))
    got = [(a[i], b[i]) for i in order]
    assert got == [(0, 0), (0, 1), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0), (1, 0)]


@settings(max_examples=10, deadline=None)
@given(sizes=st.lists(st.integers(1, 30), min_size=1, max_size=4), k=st.integers(1, 6))
def test_the_windows_graph_at_once_is_the_parts_assembled(sizes: list[int], k: int) -> None:
    sizes = [s + k for s in sizes]
    n = sum(sizes)
    perm = np.random.default_rng(n * k).permutation(n)
    rings = tuple(np.split(perm, np.cumsum(sizes)[:-1]))
    blocks = [(ring, windows_of(np.arange(len(ring)), k)) for ring in rings]
    assembled = GeneralizationGraph.block_diagonal(blocks, n)
    at_once = windows_graph(rings, k, n)
    assert (at_once.matrix != assembled.matrix).nnz == 0 and at_once.is_regular(k)
    assert at_once.matrix.has_sorted_indices
    for got, want in zip(at_once.blocks(), assembled.blocks(), strict=True):
        assert np.array_equal(got, want)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(6, 70),
    k=st.integers(1, 6),
    parts=st.integers(1, 3),
    holes=st.floats(0, 0.1),
    seed=st.integers(0, 2**16),
)
def test_windows_cells_are_the_recoded_cells(
    n: int, k: int, parts: int, holes: float, seed: int
) -> None:
    frame = random_frame(n, seed).astype(object)
    rng = np.random.default_rng(seed)
    frame = frame.mask(rng.random(frame.shape) < holes)  # missing values: starred cells
    qi = encode_frame(frame)
    k = min(k, n // parts)
    rings = tuple(np.array_split(rng.permutation(n), parts))
    got = windows_cells(rings, k, qi)
    want = recode(windows_graph(rings, k, n), qi)
    for field in ("num_lo", "num_hi", "num_star", "cat_star"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    for a, (mine, theirs) in enumerate(zip(got.cat_sets, want.cat_sets, strict=True)):
        assert (mine != theirs).nnz == 0, a


def test_the_shift_is_uniform_and_the_rest_is_walked() -> None:
    qi = encode_frame(random_frame(40, 5))
    k = 4
    ring_ids = np.arange(20)
    left = windows(qi.take(ring_ids), k)
    right = registry()["hungarian"].build(qi.take(ring_ids + 20), k, BuildOptions())
    graph = GeneralizationGraph.block_diagonal([(ring_ids, left), (ring_ids + 20, right)], 40)
    ring = ring_ids[windows_order(qi.take(ring_ids))]
    rng = np.random.default_rng(1)
    seen = []
    matrix = graph.matrix.toarray().astype(bool)
    for _ in range(400):
        drawn = draw_assignment(graph, (ring,), k, rng)
        assert sorted(drawn.tolist()) == list(range(40)) and matrix[np.arange(40), drawn].all()
        seen.append(int(np.flatnonzero(ring == drawn[ring[0]])[0]))
    counts = np.bincount([(-s) % 20 for s in seen], minlength=k)
    assert counts.sum() == 400 and len(counts) == k
    assert stats.chisquare(counts).pvalue > 1e-4  # each shift 1/k


def _anonymize(frame: pd.DataFrame, k: int, **kw: Any) -> Any:
    return anonymatch.anonymize(
        frame, k=k, qi="n0,n1,c0,c1", numeric="n0,n1", method="hungarian", seed=3, **kw
    )


def test_a_tiny_time_limit_publishes_windows_verified_and_says_so() -> None:
    frame = random_frame(300, 8)
    k = 5
    full = _anonymize(frame, k, partition_size=60)
    assert "windows" not in full.report["plan"] and "time_limit" not in full.report["plan"]
    again = _anonymize(frame, k, partition_size=60, time_limit=1e-9)  # past before the rounds
    plan_block = again.report["plan"]
    assert plan_block["time_limit"] == 1e-9
    assert plan_block["windows"] == {"partitions": 5, "why": "time_limit"}
    # one shift per partition: a person who knows one true row knows the other 59 of theirs
    assert again.report["guarantee"]["insider_weakness"].startswith("windows:")
    assert again.report["risk"]["known_person"]["rows"]["certain_max"] == 59
    assert "insider_weakness" not in full.report["guarantee"]
    assert again.report["verification"]["passed"]
    check = anonymatch.verify(frame, again.release, k=k, qi="n0,n1,c0,c1", numeric="n0,n1")
    assert check.passed
    # the rounds lose less than the windows: the limit costs information, never privacy
    assert full.report["loss"]["gcp"] <= again.report["loss"]["gcp"]
    generous = _anonymize(frame, k, partition_size=60, time_limit=3600.0)
    assert generous.report["plan"]["windows"] == {"partitions": 0, "why": "time_limit"}
    assert generous.release.equals(full.release)  # a limit not reached changes nothing


def test_partitions_past_the_limit_are_windows_beside_the_rounds() -> None:
    qi = encode_frame(random_frame(200, 4))
    k, calls = 4, []
    spec = registry()["hungarian"]

    def every_other(sub: Any, level: int, options: BuildOptions) -> GeneralizationGraph:
        calls.append(sub.n)
        if len(calls) % 2 == 0:
            raise TimeUp  # as the rounds do past the deadline
        return hungarian(sub, level, options)

    limited = dataclasses.replace(spec, build=every_other)
    built = build_graph(qi, k, limited, 40, BuildOptions(), workers=1)
    assert built.partitions == 5 and built.windows == 2 == len(built.rings)
    assert built.graph.is_regular(k)
    for ring in built.rings:  # each fallen partition is its windows, in the graph
        local = windows_order(qi.take(np.sort(ring)))
        assert np.array_equal(ring, np.sort(ring)[local])
        sub = built.graph.matrix[ring][:, ring].toarray().astype(bool)
        assert all(
            sub[np.arange(len(ring)), np.roll(np.arange(len(ring)), t)].all() for t in range(k)
        )
    matrix = built.graph.matrix.toarray().astype(bool)
    rng = np.random.default_rng(0)
    for _ in range(20):
        drawn = draw_assignment(built.graph, built.rings, k, rng)
        assert sorted(drawn.tolist()) == list(range(200)) and matrix[np.arange(200), drawn].all()
    cells = recode(built.graph, qi)
    assert verify(cells, qi, k).passed


def test_the_time_limit_stops_the_rounds_between_two_rounds() -> None:
    qi = encode_frame(random_frame(60, 2))
    ticks: list[int] = []
    with pytest.raises(TimeUp):
        hungarian(qi, 5, BuildOptions(tick=ticks.append, deadline=time.perf_counter() - 1))
    assert ticks == []
    deadline = time.perf_counter() + 3600
    graph = hungarian(qi, 5, BuildOptions(tick=ticks.append, deadline=deadline))
    assert ticks == [1] * 4 and graph.is_regular(5)
