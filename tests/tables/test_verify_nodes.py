"""Hierarchy cells checked as nodes (issue 25, "Remove the cliffs"): a published node is the
interval of depth-first leaf ranks it covers (``Hierarchy.spans``), never its leaf set.

Properties on random small hierarchies and random releases — honest ones and tampered ones
(nodes and leaves of any level, ``*``, value sets, labels outside the hierarchy): the
compatibility the kernel finds equals a brute-force check on leaf sets, and ``verify`` reports
exactly what it reports on the same cells held as leaf sets; every node's span is its leaves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonymatch.core.errors import InputError
from anonymatch.core.view import group_rows
from anonymatch.tables.columns.hierarchy import parse_hierarchy
from anonymatch.tables.columns.qitypes import build_types
from anonymatch.tables.columns.schema import Schema, encode_qi
from anonymatch.tables.io.cells import format_cells, parse_cells
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.recode import GeneralizedQI, cat_nodes, published_groups
from anonymatch.tables.risk.population import compatible_counts
from anonymatch.tables.verify import verify
from tests.factories import person_compatibility
from tests.tables.test_hierarchy import trees


@settings(max_examples=40, deadline=None)
@given(trees())
def test_spans_are_the_leaves_under_each_node(text: str) -> None:
    h = parse_hierarchy(text)
    lo, hi = h.spans
    for v in range(len(h.labels)):
        under = set(h.node_leaves[[v]].indices.tolist())
        assert set(np.flatnonzero((h.rank >= lo[v]) & (h.rank < hi[v])).tolist()) == under
        assert hi[v] - lo[v] == h.count[v]


def _leaf_sets(cells: GeneralizedQI) -> GeneralizedQI:
    """The same cells with every categorical attribute as a plain tuple of leaf-set CSR
    matrices: the path of releases without node cells (the reference)."""
    sets = tuple(sp.csr_array(cells.cat_sets[a]) for a in range(len(cells.cat_sets)))
    return GeneralizedQI(cells.num_lo, cells.num_hi, cells.num_star, sets, cells.cat_star)


def _partition(cells: GeneralizedQI) -> set[frozenset[int]]:
    """The groups of identical published rows (``published_groups``), as sets of rows."""
    group = published_groups(cells)[1]
    return {frozenset(np.flatnonzero(group == g).tolist()) for g in np.unique(group)}


@st.composite
def cell_text(draw: st.DrawFn, h, tampered: bool) -> str:  # type: ignore[no-untyped-def]
    """One published ``w`` cell: a node of any level (``~label``, the root ``*``), a leaf, or
    (``tampered``) a value set of leaves, which is no node, or a label outside the
    hierarchy."""
    kinds = ["node", "leaf", "star"] + (["set", "alien"] if tampered else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "star":
        return "*"
    if kind == "alien":  # a label of no leaf and no node
        return "zz"
    if kind == "leaf":
        return str(h.leaves[draw(st.integers(0, h.n_leaves - 1))])
    if kind == "set":
        picked = draw(st.sets(st.integers(0, h.n_leaves - 1), min_size=2, max_size=4))
        return "|".join(sorted(str(h.leaves[c]) for c in picked)) if len(picked) > 1 else "*"
    v = draw(st.integers(h.n_leaves, len(h.labels) - 1))
    label = h.labels[v]
    return "*" if label == "*" else "~" + label


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.data())
def test_node_compatibility_matches_leaf_sets(text: str, data: st.DataObject) -> None:
    """Random originals (with missing values) and a random release of ``w`` cells beside a
    numeric and a plain categorical QI: the node path gives the brute-force compatibility and
    the same verification report, loss and population counts as the leaf-set path."""
    h = parse_hierarchy(text, "h.csv")
    n = data.draw(st.integers(2, 12))
    tampered = data.draw(st.booleans())
    leaves = data.draw(st.lists(st.integers(-1, h.n_leaves - 1), min_size=n, max_size=n))
    frame = pd.DataFrame(
        {
            "w": [None if c < 0 else str(h.leaves[c]) for c in leaves],
            "x": data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
            "c": ["p", "q", *data.draw(st.lists(st.sampled_from("pq"), min_size=n - 2))][:n],
        }
    )
    types = build_types(hierarchies={"w": h})
    schema = Schema.build(["w", "x", "c"], ["x"], types=types)
    enc = encode_qi(frame, schema)
    shown = [data.draw(cell_text(h, tampered)) for _ in range(n)]
    bounds = [sorted(data.draw(st.tuples(st.integers(0, 4), st.integers(0, 4)))) for _ in range(n)]
    release = pd.DataFrame(
        {
            "w": shown,
            "x": [f"{a}..{b}" if a < b else str(a) for a, b in bounds],
            "c": data.draw(
                st.lists(st.sampled_from(["p", "q", "p|q", "*"]), min_size=n, max_size=n)
            ),
        }
    )
    cells = parse_cells(release, enc)
    as_sets = any("|" in s or s == "zz" for s in shown)
    assert (cat_nodes(cells, 0) is None) == as_sets  # value sets: the leaf-set path
    c, _, inverse = person_compatibility(cells, enc)
    got = c[inverse].toarray().astype(bool)
    leaf_of = {str(v): i for i, v in enumerate(h.leaves)}
    for i in range(n):
        for j in range(n):
            cell = shown[j]
            if cell == "*":
                w_ok = True
            elif leaves[i] < 0:
                w_ok = False
            elif cell.startswith("~"):
                under = h.node_leaves[[h.node(cell[1:])]].indices
                w_ok = leaves[i] in set(under.tolist())
            else:
                w_ok = leaves[i] in {leaf_of.get(p) for p in cell.split("|")}
            x = frame["x"][i]
            x_ok = bounds[j][0] <= x <= bounds[j][1]
            cj = release["c"][j]
            c_ok = cj == "*" or frame["c"][i] in cj.split("|")
            assert got[i, j] == (w_ok and x_ok and c_ok), (i, j, cell)
    reference = _leaf_sets(cells)
    for k in (1, 2):
        assert verify(cells, enc, k) == verify(reference, enc, k)
    assert information_loss(cells, enc) == information_loss(reference, enc)
    same = _partition(cells) == _partition(reference)
    assert same  # equal leaf sets group together, whichever node (chains of one child) shows them
    u = len(group_rows(enc.keys())[0])  # the population kernel counts the same pairs
    weights = (np.arange(1, u + 1, dtype=np.int64), np.ones(u, np.int64))
    for got_c, want_c in zip(
        compatible_counts(cells, enc, weights),
        compatible_counts(reference, enc, weights),
        strict=True,
    ):
        assert np.array_equal(got_c, want_c)
    if not as_sets:  # written back: the same text (nodes shown as their lowest label)
        again = format_cells(parse_cells(pd.DataFrame(format_cells(cells, enc)), enc), enc)
        assert again == format_cells(cells, enc)


def test_unknown_node_and_unnumbered_leaf_are_refused() -> None:
    """A node not in the hierarchy, and a value that is no leaf of it, keep their one-line
    errors on the node path."""
    h = parse_hierarchy("a;x;*\nb;x;*\nc;y;*\n", "h.csv")
    enc = encode_qi(
        pd.DataFrame({"w": ["a", "b", "c"]}),
        Schema.build(["w"], types=build_types(hierarchies={"w": h})),
    )
    with pytest.raises(InputError, match=r"^~'nope' is not a node of hierarchy h\.csv$"):
        parse_cells(pd.DataFrame({"w": ["~x", "~nope", "c"]}), enc)
    with pytest.raises(InputError, match="is not a leaf of the hierarchy"):
        encode_qi(
            pd.DataFrame({"w": ["a", "zz", "c"]}),
            Schema.build(["w"], types=build_types(hierarchies={"w": h})),
        )
    cells = parse_cells(pd.DataFrame({"w": ["~x", "~x", "c"]}), enc)
    held = cat_nodes(cells, 0)
    assert held is not None and held.nodes.tolist() == [h.node("x"), h.node("x"), 2]


def test_nodes_with_the_same_leaves_are_the_same_cell() -> None:
    """``x`` and its only parent ``p`` cover the same leaves: rows showing either are
    identical cells (grouping, identical-row counts), as their leaf sets are."""
    h = parse_hierarchy("a;x;p;*\nb;x;p;*\nc;y;q;*\n", "h.csv")
    enc = encode_qi(
        pd.DataFrame({"w": ["a", "b", "c"]}),
        Schema.build(["w"], types=build_types(hierarchies={"w": h})),
    )
    cells = parse_cells(pd.DataFrame({"w": ["~x", "~p", "c"]}), enc)
    held = cat_nodes(cells, 0)
    assert held is not None and held.nodes[0] != held.nodes[1]
    keys = held.keys()
    assert keys[0] == keys[1] != keys[2]
    assert published_groups(cells)[1].tolist() == [0, 0, 1]
    reps, group, sets = held.distinct()
    assert len(reps) == 2 and group.tolist() == [0, 0, 1]
    assert sorted(sets[[0]].indices.tolist()) == [0, 1]
