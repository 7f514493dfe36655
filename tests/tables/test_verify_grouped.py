"""The verifier's contraction of identical published rows (docs/guarantees/freeform.md): the
k-factor check on groups with multiplicities must give exactly the figures of the uncontracted
graph — checked here against a dense compatibility matrix built cell by cell and a plain
augmenting-path max flow on the expanded network (one node per original, per published row)."""

from __future__ import annotations

from collections import deque
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.methods import names
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.verify import attacker_view, published_groups, verify
from tests.factories import dense_compatibility, random_frame


def _max_flow_expanded(dense: np.ndarray, k: int) -> int:
    """Edmonds–Karp on source → original (k) → compatible published row (1) → sink (k): the
    uncontracted network, no node merged, nothing shared with the code under test."""
    n, m = dense.shape
    size = 2 + n + m
    src, sink = 0, size - 1
    cap = np.zeros((size, size), np.int64)
    cap[src, 1 : 1 + n] = k
    cap[1 : 1 + n, 1 + n : 1 + n + m] = dense
    cap[1 + n : 1 + n + m, sink] = k
    flow = 0
    while True:
        parent = [-1] * size
        parent[src] = src
        queue = deque([src])
        while queue and parent[sink] < 0:
            x = queue.popleft()
            for y in np.flatnonzero(cap[x] > 0):
                if parent[y] < 0:
                    parent[y] = x
                    queue.append(int(y))
        if parent[sink] < 0:
            return flow
        y, push = sink, k * n
        while y != src:
            push = min(push, int(cap[parent[y], y]))
            y = parent[y]
        y = sink
        while y != src:
            cap[parent[y], y] -= push
            cap[y, parent[y]] += push
            y = parent[y]
        flow += push


def _check(frame: pd.DataFrame, published: pd.DataFrame, k: int) -> None:
    """The contracted verifier's report equals the uncontracted figures."""
    qi = [c for c in frame.columns if c != "s"]
    numeric = [c for c in qi if c.startswith("n")]
    _, enc, _ = prepare(frame, Schema.build(qi, numeric))
    cells = parse_cells(published, enc)
    report = verify(cells, enc, k)
    dense = dense_compatibility(frame, published, qi, numeric)
    per_original, per_published = int(dense.sum(1).min()), int(dense.sum(0).min())
    assert report.min_matches_original == per_original
    assert report.min_matches_published == per_published
    keys = frame[qi].astype(str).agg("\x1f".join, axis=1)
    distinct = ~keys.duplicated().to_numpy()
    assert report.compatible_pairs == int(dense[distinct].sum())
    flow = _max_flow_expanded(dense, k)
    if min(per_original, per_published) >= k:
        assert report.k_factor_flow == flow
    assert report.passed == (flow == k * len(frame))
    # the groups are groups of identical rows, each with one column of the expanded matrix
    grouped = attacker_view(cells, enc)
    # a block hint never changes the report, right or wrong; a True of the blocks is a proof
    n = len(frame)
    rng = np.random.default_rng(n * 31 + k)
    hints = [(np.zeros(n, np.int64), np.zeros(n, np.int64))]  # one block: the global check
    hints += [(rng.integers(0, 3, n), rng.integers(0, 3, n)) for _ in range(3)]
    perm = rng.permutation(n)
    hints.append((np.arange(n) % 2, perm % 2))
    for i, (rows, cols) in enumerate(hints):
        assert verify(cells, enc, k, blocks=(rows, cols)) == report
        found = grouped.k_factor_in_blocks(k, rows, cols)
        if i == 0:  # one block is exactly the global question
            assert found == (flow == k * n)
        elif found:
            assert flow == k * n
            for b in range(3):  # each block has a k-factor of its own
                inside = dense[np.ix_(rows == b, cols == b)]
                assert _max_flow_expanded(inside, k) == k * inside.shape[0]
    text = published[qi].astype(str).agg("\x1f".join, axis=1).to_numpy()
    for g in range(len(grouped.mult)):
        members = np.flatnonzero(grouped.group == g)
        assert len(members) == grouped.mult[g]
        assert (dense[:, members] == dense[:, members[:1]]).all()
    # rows written identically are in one group
    assert all(len(set(grouped.group[text == t])) == 1 for t in set(text))
    assert np.array_equal(grouped.expanded().toarray()[grouped.inverse].astype(bool), dense)


def _cell(draw: st.DrawFn, numeric: bool, values: list[str]) -> str:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return "*"
    if numeric:
        a, b = sorted(draw(st.lists(st.integers(-1, 31), min_size=2, max_size=2)))
        return f"{a}..{b}" if kind > 1 else str(a)
    pool = [*values, "absent"]
    return "|".join(sorted(set(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4)))))


@st.composite
def _random_release(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """A tiny original and a release drawn from a pool of a few distinct rows (so that rows
    repeat, as in Mondrian's classes), k from 1 to 3."""
    n = draw(st.integers(1, 9))
    n_num, n_cat = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    if n_num + n_cat == 0:
        n_num = 1
    frame = random_frame(n, draw(st.integers(0, 10_000)), n_num, n_cat, draw(st.integers(1, 4)))
    qi = [c for c in frame.columns if c != "s"]
    domains = {c: sorted(set(frame[c].astype(str))) for c in qi}
    pool = [
        {c: _cell(draw, c.startswith("n"), domains[c]) for c in qi}
        for _ in range(draw(st.integers(1, 3)))
    ]
    rows = [pool[draw(st.integers(0, len(pool) - 1))] for _ in range(n)]
    return frame, pd.DataFrame(rows, columns=qi), draw(st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(case=_random_release())
def test_contracted_check_equals_uncontracted(case) -> None:
    frame, published, k = case
    _check(frame, published, k)


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(4, 12),
    seed=st.integers(0, 10_000),
    k=st.integers(2, 3),
    edits=st.lists(
        st.tuples(st.integers(0, 11), st.integers(0, 3), st.integers(0, 11)), max_size=3
    ),
)
def test_tampered_mondrian_releases(n: int, seed: int, k: int, edits: list) -> None:
    """An honest Mondrian release (classes of identical rows) passes; after edits — a cell of
    row j narrowed to one original's value, a label removed, row j overwritten by row j2 (which
    makes classes of the wrong size) — the contracted verdict and figures still equal the
    uncontracted ones, so every tampered release that lacks a k-factor fails."""
    frame = random_frame(n, seed, 1, 2, 3)
    qi = ["n0", "c0", "c1"]
    if n < k:
        return
    release = anonymatch.anonymize(frame, k=k, qi=qi, numeric=["n0"], method="mondrian", seed=1)
    table = release.table[qi].astype(str).reset_index(drop=True)
    _check(frame, table, k)
    for j, kind, j2 in edits:
        j, j2 = j % n, j2 % n
        if kind == 0:
            table.at[j, "n0"] = str(int(frame["n0"][j2]))
        elif kind == 1:
            labels = table.at[j, "c0"].split("|")
            table.at[j, "c0"] = "|".join(labels[1:]) or "absent"
        elif kind == 2:
            table.loc[j, qi] = table.loc[j2, qi].to_numpy()
        else:
            table.at[j, "c1"] = "*"
    _check(frame, table, k)


def test_duplicated_rows_do_not_hide_a_missing_k_factor() -> None:
    """Degrees are enough but Hall's condition fails; the four rows "4" form one group of 4."""
    original = pd.DataFrame({"n0": [1, 1, 1, 4, 4, 4]})
    published = pd.DataFrame({"n0": ["1..4", "1..4", "4", "4", "4", "4"]})
    _check(original, published, 2)
    report = anonymatch.verify(original, published, k=2, qi=["n0"], numeric=["n0"])
    assert not report.passed and report.k_factor_flow == 10


def test_published_groups_regroup_hash_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every label weighing the same, {v0, v3} and {v1, v2} collide (same size, same
    hash): the exact comparison must keep them apart, and the rows that lost to the collision
    must still be grouped among themselves (rows 1 and 3 are identical)."""
    frame = pd.DataFrame({"c0": ["v0", "v1", "v2", "v3"]})
    published = pd.DataFrame({"c0": ["v0|v3", "v1|v2", "v0|v3", "v1|v2"]})
    _, enc, _ = prepare(frame, Schema.build(["c0"], []))
    cells = parse_cells(published, enc)

    class Ones:
        def integers(self, lo: int, hi: int, size: int) -> np.ndarray:
            return np.ones(size, np.int64)

    real = np.random.default_rng
    calls: list[int] = []

    def first_collides(*args: object) -> object:  # the retry draws fresh, real weights
        calls.append(1)
        return Ones() if len(calls) == 1 else real()

    monkeypatch.setattr(np.random, "default_rng", first_collides)
    reps, group, mult = published_groups(cells)
    monkeypatch.undo()
    assert len(calls) == 2
    assert group.tolist() == [0, 1, 0, 1]
    assert mult.tolist() == [2, 2] and reps.tolist() == [0, 1]
    _check(frame, published, 2)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10_000), stars=st.booleans())
def test_published_groups_are_exactly_identical_rows(n: int, seed: int, stars: bool) -> None:
    """Rows share a group iff their cells are the same, suppressed cells compared as ``*``
    whatever they store (checked against the formatted cells, row by row)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"c0": rng.choice(["a", "b", "c"], n), "n0": rng.integers(0, 4, n)})
    lo = rng.integers(0, 4, n)
    published = pd.DataFrame(
        {
            "c0": rng.choice(["a", "a|b", "b|c", "*"] if stars else ["a", "a|b"], n),
            "n0": [f"{a}..{a + int(w)}" for a, w in zip(lo, rng.integers(0, 2, n), strict=True)],
        }
    )
    _, enc, _ = prepare(frame, Schema.build(["c0", "n0"], ["n0"]))
    cells = parse_cells(published, enc)
    _, group, mult = published_groups(cells)
    rows = [tuple(r) for r in published.itertuples(index=False)]
    for i in range(n):
        for j in range(n):
            assert (group[i] == group[j]) == (rows[i] == rows[j])
    assert mult.sum() == n


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 14),
    seed=st.integers(0, 10_000),
    pool=st.integers(1, 4),
    collide=st.booleans(),
)
def test_recode_of_identical_member_lists_equals_row_by_row(
    n: int, seed: int, pool: int, collide: bool
) -> None:
    """``recode`` computes the cells of published rows adjacent to the same originals once
    (Mondrian's bicliques); the cells equal those computed row by row, also when every
    original weighs the same in the grouping hash (collisions must be split exactly)."""
    from anonymatch.core.graph import GeneralizationGraph
    from anonymatch.tables.recode import _recode_members, recode
    from tests.factories import encode_frame

    rng = np.random.default_rng(seed)
    frame = random_frame(n, seed, 2, 2, 3)
    lists = [np.unique(rng.integers(0, n, rng.integers(1, n + 1))) for _ in range(pool)]
    chosen = [lists[int(rng.integers(0, pool))] for _ in range(n)]
    cols = np.concatenate([np.full(len(m), j) for j, m in enumerate(chosen)])
    graph = GeneralizationGraph.from_edges(np.concatenate(chosen), cols, n)
    enc = encode_frame(frame)

    class Ones:
        def integers(self, lo: int, hi: int, size: int) -> np.ndarray:
            return np.ones(size, np.int64)

    with patch.object(np.random, "default_rng", lambda *args: Ones() if collide else rng):
        got = recode(graph, enc)
    want = _recode_members(graph.published_members(), enc)
    for a, b in zip(
        (got.num_lo, got.num_hi, got.num_star, got.cat_star),
        (want.num_lo, want.num_hi, want.num_star, want.cat_star),
        strict=True,
    ):
        assert np.array_equal(a, b)
    for a, b in zip(got.cat_sets, want.cat_sets, strict=True):
        assert np.array_equal(a.toarray(), b.toarray())


@pytest.mark.parametrize("method", [m for m in names(levels=False) if m != "mip"])
def test_the_anonymizers_own_blocks_carry_a_k_factor(method: str) -> None:
    """The hint ``anonymize`` gives its verifier (the components of its own graph, in the
    published order) holds a k-factor block by block, so the global max-flow is skipped."""
    frame = random_frame(240, 5, 2, 2, 4)
    qi = [c for c in frame.columns if c != "s"]
    numeric = [c for c in qi if c.startswith("n")]
    size = 60 if method in names(partitioned=True) else None  # several partitions of 240 rows
    release = anonymatch.anonymize(
        frame, k=4, qi=qi, numeric=numeric, method=method, partition_size=size, seed=3
    )
    cells = parse_cells(release.table, release.qi)
    grouped = attacker_view(cells, release.qi)
    rows, cols = release.graph.blocks()
    assert len(set(rows.tolist())) > 1
    assert grouped.k_factor_in_blocks(4, rows, cols)
    assert release.report["verification"]["k_factor_flow"] == 4 * 240
