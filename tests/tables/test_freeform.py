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

import anonymatch
from anonymatch.core.classes import privacy_step
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
from anonymatch.tables.methods._kernels import sortgreedy_repair, sortgreedy_round, stable_order
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
from anonymatch.tables.recode import recode
from anonymatch.tables.verify import verify
from tests.factories import encode_frame, random_frame


def _full_sort_sortgreedy(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Doka Algorithm 2 as written: one stable sort of all m² edges, one scan, the repair."""
    m = w.shape[0]
    order = np.argsort(np.where(used, np.inf, w).ravel(), kind="stable")
    match, owner = np.full(m, -1, np.int64), np.full(m, -1, np.int64)
    for i, j in zip(*np.divmod(order, m), strict=True):
        if match[i] < 0 and owner[j] < 0 and not used[i, j]:
            match[i], owner[j] = j, i
    if (match < 0).any():
        sortgreedy_repair(w, used, match, owner)
    return match


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.floats(allow_nan=False, width=32), max_size=200)
    | st.lists(st.sampled_from([0.0, -0.0, 0.25, 1e-300, -3.5, np.inf, -np.inf]), max_size=200),
    single=st.booleans(),
)
def test_stable_order_is_numpys_stable_argsort(values: list[float], single: bool) -> None:
    array = np.array(values, dtype=np.float32 if single else np.float64)
    assert np.array_equal(stable_order(array), np.argsort(array, kind="stable"))


@settings(max_examples=80, deadline=None)
@given(
    m=st.integers(2, 40),
    rounds=st.integers(0, 6),
    levels=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
    batch=st.integers(1, 8),
    sample=st.sampled_from([1, 16, 16384]),
)
def test_batched_sortgreedy_is_the_full_sort(
    m: int, rounds: int, levels: int, seed: int, batch: int, sample: int
) -> None:
    # few weight levels: many ties, where the scan order matters most; small batches and
    # samples: many later batches and thresholds far from the target rank, the result the same
    rng = np.random.default_rng(seed)
    used = np.zeros((m, m), dtype=bool)
    for _ in range(min(rounds, m - 1)):  # earlier rounds: disjoint perfect matchings
        free = ~used
        perm = rng.permutation(m)
        if not used[np.arange(m), perm].any() and free.any():
            used[np.arange(m), perm] = True
    w = rng.integers(0, levels, (m, m)) / levels
    got = sortgreedy_round(w, used, batch, sample)
    assert np.array_equal(got, _full_sort_sortgreedy(w, used))
    assert np.array_equal(_sortgreedy_step(w, used), got)
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
    assert not run.blocks and run.limit == 600.0 and run.warning() is not None
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
        dict(qi=["n0"], k=100, method="hungarian", structure="blocks"),
        dict(qi=["n0"], k=1000, method="hungarian"),  # blocks by the estimate
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


def test_blocks_when_asked_for_or_when_the_rounds_would_take_minutes() -> None:
    # the choice depends on k (and the partition size), not on the table's size or the machine
    for rows in (30_162, 1_000_000):
        for k in (10, 100, 400):
            run = plan(TableJob.build(dict(qi=["n0"], k=k, method="hungarian")), rows=rows)
            assert run.blocks is None and run.to_dict(0).get("blocks") is None
        for k in (500, 1000, 2000):
            run = plan(TableJob.build(dict(qi=["n0"], k=k, method="hungarian")), rows=rows)
            assert run.blocks == "estimate" and run.partition_size is None
            assert run.warning() is None and run.to_dict(1)["blocks"]["why"] == "estimate"
    for k, chosen in ((476, None), (477, "estimate")):  # the switch (docs/results.md)
        assert plan(TableJob.build(dict(qi=["n0"], k=k)), rows=30_162).blocks == chosen
    limited = TableJob.build(dict(qi=["n0"], k=1000, method="hungarian", time_limit=60.0))
    assert plan(limited, rows=30_162).blocks is None  # a limit: the rounds run until it
    streamed = plan(TableJob.build(dict(qi=["n0"], k=1000)), rows=30_162, streamed=True)
    assert streamed.blocks == "estimate" and streamed.partition_size == 2000  # each partition
    mondrian = TableJob.build(dict(qi=["n0"], k=1000, method="mondrian"))
    assert plan(mondrian, rows=30_162).blocks is None
    asked = TableJob.build(dict(qi=["n0"], k=10, method="hungarian", structure="blocks"))
    run = plan(asked, rows=30_162)
    assert run.blocks == "structure" and run.warning() is None and run.partition_size is None
    assert run.to_dict(1)["blocks"] == {"partitions": 1, "why": "structure"}
    assert "assignment" not in run.to_dict(1)
    assert plan(asked, rows=30_162, streamed=True).partition_size == 300
    with pytest.raises(InputError, match="runs none"):  # a method without rounds
        TableJob.build(dict(qi=["n0"], k=10, method="mondrian", structure="blocks"))
    with pytest.raises(InputError, match="k-anonymity only"):  # the default l = 2 included
        TableJob.build(dict(qi=["n0"], sensitive=["s"], k=10, structure="blocks"))


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


def _anonymize(frame: pd.DataFrame, k: int, **kw: Any) -> Any:
    return anonymatch.anonymize(
        frame, k=k, qi="n0,n1,c0,c1", numeric="n0,n1", method="hungarian", seed=3, **kw
    )


def test_a_tiny_time_limit_publishes_blocks_verified_and_says_so() -> None:
    frame = random_frame(300, 8)
    k = 5
    full = _anonymize(frame, k, partition_size=60)
    assert "blocks" not in full.report["plan"] and "time_limit" not in full.report["plan"]
    again = _anonymize(frame, k, partition_size=60, time_limit=1e-9)  # past before the rounds
    plan_block = again.report["plan"]
    assert plan_block["time_limit"] == 1e-9
    assert plan_block["blocks"] == {"partitions": 5, "why": "time_limit"}
    # classes: no insider weakness, one known true row makes no other row certain
    assert "insider_weakness" not in again.report["guarantee"]
    assert again.report["risk"]["known_person"]["rows"]["certain_max"] == 0
    assert again.report["verification"]["passed"]
    check = anonymatch.verify(frame, again.release, k=k, qi="n0,n1,c0,c1", numeric="n0,n1")
    assert check.passed
    # the rounds lose less than the blocks: the limit costs information, never privacy
    assert full.report["loss"]["gcp"] <= again.report["loss"]["gcp"]
    generous = _anonymize(frame, k, partition_size=60, time_limit=3600.0)
    assert generous.report["plan"]["blocks"] == {"partitions": 0, "why": "time_limit"}
    assert generous.release.equals(full.release)  # a limit not reached changes nothing


def test_partitions_past_the_limit_are_blocks_beside_the_rounds() -> None:
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
    assert built.partitions == 5 and built.blocks == 2
    graph = built.graph
    assert (graph.out_degrees() >= k).all() and graph.is_balanced()
    regular = 0
    part = graph.blocks()[0]
    for ids in (np.flatnonzero(part == p) for p in range(5)):  # its rounds, or its blocks
        sub = graph.matrix[ids][:, ids].toarray().astype(bool)
        if (sub.sum(axis=1) == k).all():
            regular += 1
            continue
        _, group = np.unique(sub, axis=0, return_inverse=True)  # bicliques of k … 2k − 1
        group = group.reshape(-1)
        assert np.array_equal(sub, group[:, None] == group[None, :])
        sizes = np.bincount(group)
        assert sizes.min() >= k and sizes.max() < 2 * k
    assert regular == 3
    matrix = graph.matrix.toarray().astype(bool)
    rng = np.random.default_rng(0)
    for _ in range(20):
        drawn = privacy_step(graph, rng)
        assert sorted(drawn.tolist()) == list(range(200)) and matrix[np.arange(200), drawn].all()
    cells = recode(graph, qi)
    assert verify(cells, qi, k).passed

    def always_late(sub: Any, level: int, options: BuildOptions) -> GeneralizationGraph:
        raise TimeUp

    late = dataclasses.replace(spec, build=always_late)
    alone = build_graph(qi, k, late, 40, BuildOptions(), workers=1)
    assert alone.blocks == alone.partitions == 5 and alone.graph.classes is not None


def test_the_time_limit_stops_the_rounds_between_two_rounds() -> None:
    qi = encode_frame(random_frame(60, 2))
    ticks: list[int] = []
    with pytest.raises(TimeUp):
        hungarian(qi, 5, BuildOptions(tick=ticks.append, deadline=time.perf_counter() - 1))
    assert ticks == []
    deadline = time.perf_counter() + 3600
    graph = hungarian(qi, 5, BuildOptions(tick=ticks.append, deadline=deadline))
    assert ticks == [1] * 4 and graph.is_regular(5)
