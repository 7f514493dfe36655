"""The dense LAPJV solver: optimal like scipy's, forbidden edges avoided, bad input refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy.optimize import linear_sum_assignment

from anonymatch.core.lap import _initialize, _masked_min, forbid, lapjv, solve_dense, two_stage


def _matrix(kind: int, m: int, rng: np.random.Generator) -> np.ndarray:
    if kind == 0:  # continuous
        return rng.random((m, m))
    if kind == 1:  # few distinct values: many ties and many optimal assignments
        return rng.integers(0, 3, (m, m)).astype(float)
    if kind == 2:  # all ties
        return np.zeros((m, m))
    # low rank, rounded: the shape of the GCP-increase matrices (ties within blocks)
    return np.round(rng.random((m, 2)) @ rng.random((2, m)), 1) - 0.5


def _forbidden(m: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """r disjoint perfect matchings (so the allowed edges form an (m − r)-regular graph)."""
    used = np.zeros((m, m), dtype=bool)
    p, q = rng.permutation(m), rng.permutation(m)
    for s in range(r):
        used[p, q[(np.arange(m) + s) % m]] = True
    return used


COST_CASES = given(
    m=st.integers(1, 45),
    kind=st.integers(0, 3),
    share=st.floats(0, 0.95),
    seed=st.integers(0, 2**32 - 1),
)
"""Cost matrices of ``_matrix`` (size m, kind, share of ties) with ``_forbidden`` rounds."""


@settings(max_examples=150, deadline=None)
@COST_CASES
def test_optimal_cost_equals_scipy_and_forbidden_edges_are_avoided(
    m: int, kind: int, share: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    w = _matrix(kind, m, rng)
    used = _forbidden(m, int(share * m), rng)
    blocked = np.where(used, np.inf, w)
    rows, cols = linear_sum_assignment(blocked)
    match = solve_dense(w, used)
    assert sorted(match.tolist()) == list(range(m))  # a permutation
    assert not used[np.arange(m), match].any()
    got = blocked[np.arange(m), match].sum()
    assert got == pytest.approx(blocked[rows, cols].sum(), rel=1e-12, abs=1e-9)


def test_larger_tie_heavy_matrices() -> None:
    rng = np.random.default_rng(7)
    for m in (120, 300):
        w = _matrix(3, m, rng)
        used = _forbidden(m, m // 3, rng)
        blocked = np.where(used, np.inf, w)
        rows, cols = linear_sum_assignment(blocked)
        match = solve_dense(w, used)
        assert blocked[np.arange(m), match].sum() == pytest.approx(blocked[rows, cols].sum())


def test_forbid_prices_above_every_allowed_assignment() -> None:
    w = np.array([[0.0, 5.0], [1.0, 2.0]])
    used = np.array([[True, False], [False, False]])
    big = forbid(w, used)
    assert w[0, 0] == big and big > 5.0 + 2.0 + 1.0  # above the worst allowed assignment


def test_empty_and_bad_input() -> None:
    assert solve_dense(np.zeros((0, 0))).shape == (0,)
    with pytest.raises(ValueError, match="square"):
        solve_dense(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        solve_dense(np.array([[0.0, np.inf], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="avoids"):  # every edge of row 0 forbidden
        solve_dense(np.zeros((2, 2)), np.array([[True, True], [False, False]]))


@settings(max_examples=150, deadline=None)
@COST_CASES
def test_two_stage_is_a_permutation_avoiding_forbidden_edges_and_keeps_the_initialization(
    m: int, kind: int, share: float, seed: int
) -> None:
    """The two-stage assignment is a perfect matching of allowed edges whenever one exists,
    costs at least the optimum, and either keeps every row the initialization assigned (its
    first stage) or is the exact optimum (the fallback)."""
    rng = np.random.default_rng(seed)
    w = _matrix(kind, m, rng)
    used = _forbidden(m, int(share * m), rng)
    blocked = np.where(used, np.inf, w)
    rows, cols = linear_sum_assignment(blocked)
    optimum = blocked[rows, cols].sum()
    priced = w.copy()
    forbid(priced, used)
    match = two_stage(np.ascontiguousarray(priced), used)
    assert sorted(match.tolist()) == list(range(m))
    assert not used[np.arange(m), match].any()
    got = blocked[np.arange(m), match].sum()
    assert got >= optimum - 1e-9 * max(1.0, abs(optimum))
    x, _, _, free, n_free = _initialize(np.ascontiguousarray(priced))
    settled = np.ones(m, dtype=bool)
    settled[free[:n_free]] = False
    kept = np.array_equal(match[settled], x[settled])
    assert kept or got == pytest.approx(optimum, rel=1e-12, abs=1e-9)


@settings(max_examples=100, deadline=None)
@COST_CASES
def test_float32_solves_are_permutations_avoiding_forbidden_edges_and_exact_in_float32(
    m: int, kind: int, share: float, seed: int
) -> None:
    """On float32 matrices (the two-stage rounds' weights) the solvers work in float32
    throughout: both return perfect matchings of allowed edges, LAPJV's is optimal for the
    float32 costs (as scipy finds them, up to float32 rounding of the sums) and the
    two-stage one costs no less."""
    rng = np.random.default_rng(seed)
    w = _matrix(kind, m, rng).astype(np.float32)
    used = _forbidden(m, int(share * m), rng)
    blocked = np.where(used, np.inf, w.astype(np.float64))
    rows, cols = linear_sum_assignment(blocked)
    optimum = blocked[rows, cols].sum()
    priced = w.copy()
    forbid(priced, used)
    assert priced.dtype == np.float32
    for match in (lapjv(priced), two_stage(priced, used)):
        assert sorted(match.tolist()) == list(range(m))
        assert not used[np.arange(m), match].any()
        assert blocked[np.arange(m), match].sum() >= optimum - 1e-4 * max(1.0, abs(optimum))
    exact = blocked[np.arange(m), lapjv(priced)].sum()
    assert exact == pytest.approx(optimum, rel=1e-5, abs=1e-4)


def test_two_stage_falls_back_to_the_exact_augmentation() -> None:
    """Here the initialization leaves rows whose only completion among the columns left free
    takes a forbidden edge (one disjoint matching forbidden, as after the freeform's first
    round), so the exact augmentation from the initialization's state decides: the optimum."""
    w = np.array(
        [[3, 3, 2, 3, 3], [3, 0, 1, 2, 1], [1, 2, 3, 2, 0], [2, 3, 0, 2, 1], [3, 0, 1, 3, 1]],
        dtype=float,
    )
    used = np.zeros((5, 5), dtype=bool)
    used[[0, 1, 2, 3, 4], [4, 1, 0, 2, 3]] = True
    priced = w.copy()
    forbid(priced, used)
    x, y, _, free, n_free = _initialize(priced)
    rows, cols = free[:n_free], np.flatnonzero(y < 0)
    second = lapjv(np.ascontiguousarray(priced[np.ix_(rows, cols)]))
    assert used[rows, cols[second]].any()  # the second stage alone would take one
    match = two_stage(priced, used)
    assert not used[np.arange(5), match].any()
    best_rows, best_cols = linear_sum_assignment(np.where(used, np.inf, w))
    assert w[np.arange(5), match].sum() == w[best_rows, best_cols].sum()
    assert np.array_equal(match, lapjv(priced))


_FLOATS = st.sampled_from([-np.inf, -2.5, -1.0, -0.0, 0.0, 0.1, 0.3, 1.0, 1e300, np.inf])


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.one_of(_FLOATS, st.floats(allow_nan=False)), min_size=1, max_size=70),
    seed=st.integers(0, 2**32 - 1),
)
def test_masked_min_on_integer_keys_is_the_float_minimum(values: list[float], seed: int) -> None:
    """The augmentation's vector minimum (on order-preserving int64 / int32 keys of float64 /
    float32 values) equals the float minimum over the masked entries, infinities and signed
    zeros included."""
    todo = np.random.default_rng(seed).random(len(values)) < 0.7
    for dtype in (np.float64, np.float32):
        with np.errstate(over="ignore"):
            d = np.array(values).astype(dtype)
        want = d[todo].min() if todo.any() else dtype(np.inf)
        got = _compiled_masked_min(d, todo, np.empty(1, dtype))
        assert got == want


@njit
def _compiled_masked_min(d, todo, scratch):  # the overload is compiled only
    return _masked_min(d, todo, scratch)
