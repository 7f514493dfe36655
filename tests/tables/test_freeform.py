"""The freeform shell's inner steps (``tables.methods.freeform``): exact small cases against a
reference, k-regularity through the verifier."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.tables.methods._kernels import sortgreedy_repair, sortgreedy_scan
from anonymatch.tables.methods.freeform import _sortgreedy_step


def _full_sort_sortgreedy(w: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Doka Algorithm 2 as written: one stable sort of all m² edges, one scan, the repair."""
    m = w.shape[0]
    order = np.argsort(np.where(used, np.inf, w).ravel(), kind="stable")
    match, owner = np.full(m, -1, np.int64), np.full(m, -1, np.int64)
    if sortgreedy_scan(order, used, match, owner, 0) < m:
        sortgreedy_repair(w, used, match, owner)
    return match


@settings(max_examples=60, deadline=None)
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
