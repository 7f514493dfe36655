"""Recoding: each published record's cells are exactly the values of the originals it
generalizes (bounds, value sets, ``*`` where one of them is missing)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.tables.recode import _recode_members
from tests.factories import encode_frame, random_frame


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    degree=st.integers(1, 6),
    missing=st.floats(0, 0.4),
    seed=st.integers(0, 2**16),
)
def test_recoded_cells_are_the_members_values(
    n: int, degree: int, missing: float, seed: int
) -> None:
    frame = random_frame(n, seed, card=5).astype(object)
    rng = np.random.default_rng(seed)
    for column in ("n1", "c0"):
        frame.loc[rng.random(n) < missing, column] = None
    qi = encode_frame(frame)
    dense = rng.random((n, n)) < degree / n  # published row j generalizes originals i
    dense[np.arange(n), np.arange(n)] = True  # (with repeats of the same value)
    members = sp.csr_array(dense)
    cells = _recode_members(members, qi)
    for j in range(n):
        who = np.flatnonzero(dense[j])
        for a in range(qi.num.shape[1]):
            gone = qi.num_missing[who, a]
            assert cells.num_star[j, a] == gone.any()
            if not gone.any():
                assert cells.num_lo[j, a] == qi.num[who, a].min()
                assert cells.num_hi[j, a] == qi.num[who, a].max()
        for a in range(qi.cat.shape[1]):
            gone = qi.cat_missing[who, a]
            assert cells.cat_star[j, a] == gone.any()
            shown = cells.cat_sets[a][[j]]
            assert shown.indices.tolist() == (
                [] if gone.any() else sorted(set(qi.cat[who, a].tolist()))
            )
            assert set(shown.data.tolist()) <= {1}
