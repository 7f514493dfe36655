"""The certified check of ring releases (``models.certified``); the end-to-end cases, with the
construction, are in test_circulant.py."""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.io.cells import parse_cells
from anonymatch.tables.models.certified import units
from anonymatch.tables.pipeline import prepare
from anonymatch.tables.recode import published_groups


def _cells():
    data = pd.DataFrame({"age": [20, 21, 22, 23, 24, 25], "job": list("abcabc")})
    published = pd.DataFrame(
        {"age": ["20..21", "20..21", "22..25", "22..25", "22..25", "20..21"],
         "job": ["a|b", "b|a", "a|b|c", "a|b|c", "c|a|b", "a|b"]}
    )  # fmt: skip
    _, enc, _ = prepare(data, Schema.build(["age", "job"], ["age"]))
    return parse_cells(published, enc)


def test_identical_rows_groups_exactly_whatever_the_label_order():
    cells = _cells()
    assert published_groups(cells)[1].tolist() == [0, 0, 1, 1, 1, 0]
    assert published_groups(cells.take(np.array([5, 2])))[1].tolist() == [0, 1]


def test_units_are_ring_windows_and_groups_outside():
    cells = _cells()
    # one ring of rows 2, 3, 4 with k = 2; rows 0, 1, 5 outside form one group
    u = units(cells, 2, [np.array([2, 3, 4])]).toarray()
    assert u.shape == (6, 6)
    windows = {tuple(np.flatnonzero(r)) for r in u[:3]}
    assert windows == {(2, 3), (3, 4), (2, 4)}
    assert all(tuple(np.flatnonzero(r)) == (0, 1, 5) for r in u[3:])


def _person_level_exists(cells, enc, k, rings) -> bool:  # type: ignore[no-untyped-def]
    """The structure check on people and slots (before issue 25), the reference: person i
    fits ring slot p iff compatible with rows p, p−1, …, p−k+1, and a row in no ring iff
    compatible with it; a perfect matching of people to slots."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_bipartite_matching

    from tests.factories import person_compatibility

    c_unique, _, inverse = person_compatibility(cells, enc)
    c = sp.csr_array(c_unique[inverse], dtype=np.int32).toarray()
    n = cells.n
    columns = []
    in_ring = np.zeros(n, dtype=bool)
    for ring in rings:
        m = len(ring)
        for p in range(m):
            rows = [ring[(p - a) % m] for a in range(k)]
            columns.append(c[:, rows].sum(axis=1) == k)
        in_ring[ring] = True
    columns += [c[:, j] > 0 for j in np.flatnonzero(~in_ring)]
    fit = np.column_stack(columns).astype(np.int8)
    if fit.shape[0] != fit.shape[1]:
        return False
    match = maximum_bipartite_matching(sp.csr_matrix(fit), perm_type="column")
    return bool(np.all(match >= 0))


def test_structure_check_on_groups_is_the_person_level_check():
    """``structure_exists`` on groups of identical people and rows (issue 25) decides as the
    perfect matching of people to slots, on releases with repeated rows, true rings and
    arbitrary (mostly impossible) ones."""
    from anonymatch.tables.models.certified import structure_exists

    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(40):
        n = int(rng.integers(4, 12))
        data = pd.DataFrame({"age": rng.integers(20, 24, n), "job": rng.choice(list("ab"), n)})
        _, enc, _ = prepare(data, Schema.build(["age", "job"], ["age"]))
        order = rng.permutation(n)
        lo = np.minimum(data["age"].to_numpy(), data["age"].to_numpy()[np.roll(order, -1)])
        wide = rng.random(n) < 0.5  # some rows cover everyone, some one or two people
        published = pd.DataFrame(
            {"age": [("20..23" if w else f"{a}..{a + 1}") for w, a in zip(wide, lo, strict=True)],
             "job": ["a|b"] * n}
        )  # fmt: skip
        cells = parse_cells(published, enc)
        k = int(rng.integers(2, 4))
        for rings in ([], [rng.permutation(n)[: max(k, n // 2)]], [np.arange(n)]):
            want = _person_level_exists(cells, enc, k, rings)
            assert structure_exists(cells, enc, k, rings) == want
            seen.add(want)
    assert seen == {True, False}
