"""Adaptive anonymity at scale: parts solved on their own (and on other cores), candidate lists
by each solve's own costs, the early stop of the ε sweep; every release verified."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.methods import names
from anonymatch.tables.methods.bmatching import (
    SuppressionProblem,
    cheapest_candidates,
    stars_of,
    variational_bmatching,
)
from anonymatch.tables.models.adaptive import anonymize_adaptive, solve
from anonymatch.tables.verify import verify_adaptive


def _problem(x: np.ndarray, delta) -> SuppressionProblem:
    x = np.ascontiguousarray(x, dtype=np.int64)
    delta = np.broadcast_to(np.asarray(delta, np.int64), (len(x),)).copy()
    return SuppressionProblem(x, np.zeros(x.shape, bool), np.ones(x.shape), delta)


def _frame(x: np.ndarray, levels: np.ndarray | None = None) -> pd.DataFrame:
    frame = pd.DataFrame({f"a{k}": [f"v{v}" for v in x[:, k]] for k in range(x.shape[1])})
    frame["key"] = [f"id{i}" for i in range(len(x))]
    if levels is not None:
        frame["level"] = levels
    return frame


def _degrees_ok(p: SuppressionProblem, rows: np.ndarray, cols: np.ndarray) -> bool:
    """Self-edges plus the solution: in- and out-degree equal and ≥ δᵢ for every i."""
    out = np.bincount(rows, minlength=p.n) + 1
    inn = np.bincount(cols, minlength=p.n) + 1
    return bool(np.array_equal(out, inn) and np.all(out >= p.delta))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_cheapest_candidates_are_the_cheapest(seed, size):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(size + 1, 40)), int(rng.integers(1, 6))
    p = _problem(rng.integers(0, 3, (n, d)), 1)
    weight = rng.random((n, d))
    near = cheapest_candidates(p, weight, size)
    assert near.shape == (n, size)
    for i in range(n):
        cost = ((p.codes[i] != p.codes) * weight[i]).sum(axis=1)
        assert i not in near[i] and len(set(near[i])) == size
        others = np.setdiff1d(np.delete(np.arange(n), i), near[i])
        if others.size:
            assert cost[near[i]].max() <= cost[others].min() + 1e-12


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_candidate_lists_of_every_record_equal_the_all_pairs_solve(seed, symmetric):
    """Lists as long as the table: every solve sees all pairs, so the run is the exact path's."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 16))
    p = _problem(rng.integers(0, 3, (n, 3)), int(rng.integers(2, 4)))
    exact = variational_bmatching(p, symmetric=symmetric, epsilons=[0.5, 0.1])
    listed = variational_bmatching(
        p, symmetric=symmetric, epsilons=[0.5, 0.1], neighbours=2, candidates=n - 1
    )
    assert listed.star_total(p) == exact.star_total(p)
    assert listed.history == exact.history


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_candidate_lists_keep_a_feasible_bmatching(seed, adaptive):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 40))
    x = rng.integers(0, 3, (n, 4))
    delta = rng.integers(1, 5, n) if adaptive else int(rng.integers(2, 5))
    p = _problem(x, delta)
    res = variational_bmatching(p, neighbours=2, candidates=3, patience=1)
    assert _degrees_ok(p, res.rows, res.cols)
    assert np.array_equal(res.stars, stars_of(p, res.rows, res.cols))
    assert res.star_total(p) <= min(h[2] for h in res.history)


def test_patience_stops_the_sweep_early():
    rng = np.random.default_rng(3)
    p = _problem(rng.integers(0, 3, (30, 4)), 3)
    full = variational_bmatching(p)
    short = variational_bmatching(p, patience=1)
    swept = [h[0] for h in short.history]
    assert len(set(swept)) < len({h[0] for h in full.history})
    # the sweep stops at the first ε that did not lower the stars
    assert short.history[: len(swept)] == full.history[: len(swept)]


@pytest.mark.parametrize("method", names(levels=True))
@pytest.mark.parametrize("adaptive", [False, True])
def test_parts_release_is_verified_and_no_worse_than_the_baseline(method, adaptive):
    rng = np.random.default_rng(7)
    n = 120 if method == "bmatching-symmetric" else 300
    x = rng.integers(0, 3, (n, 4))
    levels = rng.integers(1, 5, n) if adaptive else None
    kw = {"k_column": "level"} if adaptive else {"k": 3}
    release = anonymize_adaptive(
        _frame(x, levels), ["a0", "a1", "a2", "a3"], method=method, seed=1,
        partition_size=30, executor="inline", **kw,
    )  # fmt: skip
    enc = release.qi
    delta = levels if adaptive else np.full(n, 3)
    assert verify_adaptive(parse_cells(release.table, enc), enc, delta).passed
    loss = release.report["loss"]
    assert loss["baseline_stars"] is not None and loss["stars"] <= loss["baseline_stars"]
    assert release.report["parameters"]["partition_size"] == 30


def test_parts_do_not_depend_on_the_executor():
    rng = np.random.default_rng(11)
    p = _problem(rng.integers(0, 4, (240, 5)), 3)
    runs = [
        solve(p, "bmatching", partition_size=40, patience=1, candidates=5, executor=ex)
        for ex in ("inline", "threads", "processes")
    ]
    for r in runs[1:]:
        assert np.array_equal(r.stars, runs[0].stars)
        assert np.array_equal(r.rows, runs[0].rows) and np.array_equal(r.cols, runs[0].cols)
        assert r.history == runs[0].history


def test_parts_keep_every_record_in_its_own_part():
    rng = np.random.default_rng(5)
    p = _problem(rng.integers(0, 3, (200, 3)), 4)
    res = solve(p, "bmatching", partition_size=50, executor="inline")
    assert _degrees_ok(p, res.rows, res.cols)
    # the union of per-part graphs: no edge leaves a part, each part has ≥ 50 records
    g = res.adjacency(p.n)
    n_comp, _ = connected_components(g)
    assert n_comp >= 4


def test_partition_size_below_twice_the_level_is_refused():
    p = _problem(np.zeros((40, 2), np.int64), 5)
    with pytest.raises(InputError, match="at least 2k = 10"):
        solve(p, "bmatching", partition_size=9)


def test_cli_patience_needs_a_suppression_method(tmp_path, capsys):
    src = tmp_path / "t.csv"
    _frame(np.zeros((10, 2), np.int64)).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    args = ["anonymize", str(src), "-o", str(out), "--k", "2", "--qi", "a0,a1"]
    assert main([*args, "--patience", "1"]) == 2
    assert "--patience" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--method", "bmatching", "--patience", "-1"]) == 2
    assert not out.exists()


def test_cli_bmatching_runs_parts_in_worker_processes(tmp_path, capsys):
    rng = np.random.default_rng(2)
    src = tmp_path / "t.csv"
    _frame(rng.integers(0, 3, (200, 3))).to_csv(src, index=False)
    out = tmp_path / "o.csv"
    rc = main(
        ["anonymize", str(src), "-o", str(out), "--k", "3", "--qi", "a0,a1,a2",
         "--method", "bmatching", "--partition-size", "50", "--executor", "processes",
         "--workers", "2", "--seed", "1"]
    )  # fmt: skip
    assert rc == 0 and out.exists()
    assert "agglomerative baseline" in capsys.readouterr().out
