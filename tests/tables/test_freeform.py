"""The freeform shell's inner steps (``tables.methods.freeform``): exact small cases against a
reference, k-regularity through the verifier."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.job import LONG_RUN_SECONDS, TableJob, plan
from anonymatch.tables.methods import BuildOptions, estimated_seconds, names, registry
from anonymatch.tables.methods._kernels import sortgreedy_repair, sortgreedy_scan
from anonymatch.tables.methods.freeform import _sortgreedy_step, sortgreedy
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
    job = TableJob.build(dict(qi=["n0"], k=1000, method="hungarian"))
    assert plan(job, rows=30_162).warning() is not None
    job = TableJob.build(dict(qi=["n0"], k=10, method="hungarian"))
    assert plan(job, rows=30_162).warning() is None
