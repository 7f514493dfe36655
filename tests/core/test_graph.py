"""The generalization graph's blocks: assembled parts, classes, components, under reordering."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.core.graph import GeneralizationGraph


def _no_edge_crosses(graph: GeneralizationGraph) -> bool:
    rows, cols = graph.blocks()
    coo = graph.matrix.tocoo()
    return bool(np.array_equal(rows[coo.row], cols[coo.col]))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_assembled_parts_are_blocks_and_follow_the_published_order(data: st.DataObject) -> None:
    sizes = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=5), label="sizes")
    n = sum(sizes)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    ids = np.split(rng.permutation(n), np.cumsum(sizes)[:-1])
    parts = []
    for part in ids:  # identity plus random permutations inside each part
        m = len(part)
        rounds = [np.arange(m)] + [rng.permutation(m) for _ in range(data.draw(st.integers(1, 3)))]
        local = GeneralizationGraph.from_assignments(np.stack(rounds))
        parts.append((part, local))
    graph = GeneralizationGraph.block_diagonal(parts, n)
    # the same canonical CSR (sorted, no duplicates) as the edges' union built by scipy
    union = GeneralizationGraph.from_edges(
        np.concatenate([part[g.matrix.tocoo().row] for part, g in parts]),
        np.concatenate([part[g.matrix.tocoo().col] for part, g in parts]),
        n,
    ).matrix
    assert graph.matrix.has_canonical_format
    assert np.array_equal(graph.matrix.indptr, union.indptr)
    assert np.array_equal(graph.matrix.indices, union.indices)
    rows, cols = graph.blocks()
    for p, part in enumerate(ids):
        assert np.all(rows[part] == p) and np.all(cols[part] == p)
    assert _no_edge_crosses(graph)
    position = rng.permutation(n)
    moved = graph.with_published_order(position)
    before, after = graph.matrix.toarray(), moved.matrix.toarray()
    assert np.array_equal(after[:, position], before)
    assert _no_edge_crosses(moved)
    assert np.array_equal(moved.blocks()[0], rows)


def test_a_plain_graph_has_its_components_as_blocks() -> None:
    graph = GeneralizationGraph.from_edges(
        np.array([0, 0, 1, 1, 2, 3]), np.array([0, 1, 0, 1, 2, 3]), 4
    )
    rows, cols = graph.blocks()
    assert rows[0] == rows[1] == cols[0] == cols[1]
    assert len({rows[0], rows[2], rows[3]}) == 3
    assert _no_edge_crosses(graph)


def test_a_class_graph_keeps_its_classes_when_reordered() -> None:
    graph = GeneralizationGraph.from_classes(np.array([0, 0, 1, 1, 1]))
    moved = graph.with_published_order(np.array([4, 3, 2, 1, 0]))
    assert moved.classes is not None
    assert np.array_equal(moved.blocks()[1], [1, 1, 1, 0, 0])
    assert _no_edge_crosses(moved)


def test_blocks_that_share_a_record_are_refused() -> None:
    one = GeneralizationGraph.from_assignments(np.arange(2)[None, :])
    with pytest.raises(ValueError, match="disjoint"):
        GeneralizationGraph.block_diagonal([(np.array([0, 1]), one), (np.array([1, 2]), one)], 3)
