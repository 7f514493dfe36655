"""The running example of Xue et al. (KDD 2012): Tables 1–4, Figures 1 and 4."""

from __future__ import annotations

import numpy as np
import pytest

from anonymatch.sets.io import SetRelease, from_sets
from anonymatch.sets.methods.nonreciprocal import bit_vote, ring_graph
from anonymatch.sets.order import gray_order, gray_tsp_order, ring_length
from anonymatch.sets.pipeline import anonymize_sets
from anonymatch.sets.verify import verify_sets

# Table 1: Jogging, Swimming, Tennis, Soccer (items 0..3) and Religion.
BITS = ["1100", "0110", "1101", "0111", "1110", "1011"]
RELIGION = ["Christian", "Christian", "Muslim", "Buddhist", "Buddhist", "Muslim"]


def bits(s: str) -> list[int]:
    return [j for j, c in enumerate(s) if c == "1"]


@pytest.fixture()
def table1():  # type: ignore[no-untyped-def]
    return from_sets([bits(b) for b in BITS], RELIGION)


def test_gray_order_and_tsp_hamming_totals(table1) -> None:  # type: ignore[no-untyped-def]
    # Figure 4(a): Gray order r2 r4 r1 r3 r5 r6, Gray+TSP r2 r4 r3 r1 r5 r6; 14 -> 12 -> 10.
    assert (gray_order(table1.matrix) + 1).tolist() == [2, 4, 1, 3, 5, 6]
    order, report = gray_tsp_order(table1.matrix)
    assert (order + 1).tolist() == [2, 4, 3, 1, 5, 6]
    assert (report.hamming_input, report.hamming_gray, report.hamming_gray_tsp) == (14, 12, 10)
    assert ring_length(table1.matrix, order) == 10


def test_ring_graph_is_table_4(table1) -> None:  # type: ignore[no-untyped-def]
    order, _ = gray_tsp_order(table1.matrix)
    graph = ring_graph(order, 3)
    assert graph.is_regular(3)
    dense = graph.matrix.toarray().astype(bool)
    # Table 4, original -> anonymized matches (1-based)
    table4 = {1: {1, 5, 6}, 2: {2, 4, 3}, 3: {3, 1, 5}, 4: {4, 3, 1}, 5: {5, 6, 2}, 6: {6, 2, 4}}
    for i, matches in table4.items():
        assert set((np.flatnonzero(dense[i - 1]) + 1).tolist()) == matches


def test_bit_voting_matches_figure_4(table1) -> None:  # type: ignore[no-untyped-def]
    order, _ = gray_tsp_order(table1.matrix)
    base, unc, t = bit_vote(table1.matrix, ring_graph(order, 3))
    expected = {  # r'_j: (base, distance bitmap, threshold) — Figure 4(a)
        2: ("1110", "1101", 2),
        4: ("0111", "1101", 2),
        3: ("0111", "1011", 2),
        1: ("1101", "1011", 2),
        5: ("1100", "0011", 1),
        6: ("1110", "0111", 2),
    }
    for j, (b, d, th) in expected.items():
        assert "".join(map(str, base.toarray()[j - 1].astype(int))) == b
        assert "".join(map(str, unc.toarray()[j - 1].astype(int))) == d
        assert t[j - 1] == th


def test_table_3_release_is_3_anonymous_and_3_diverse(table1) -> None:  # type: ignore[no-untyped-def]
    order, _ = gray_tsp_order(table1.matrix)
    base, unc, t = bit_vote(table1.matrix, ring_graph(order, 3))
    labels = np.asarray(RELIGION, dtype=object)  # Table 3: r'_i carries r_i's label
    release = SetRelease(base, unc, t, labels, table1.items, True)
    assert verify_sets(release, table1, k=3).passed
    report = verify_sets(release, table1, ell=3)
    assert report.passed and report.min_labels_original == 3
    assert not verify_sets(release, table1, k=4).passed
    # possible worlds of r'5 (Table 3): 1100, 1110 and 1101 -> r1, r5, r3
    from anonymatch.sets.verify import set_view

    view = set_view(release, table1)
    dense, inverse = view.expanded().toarray(), view.inverse
    matches_of_r5 = {i + 1 for i in range(6) if dense[inverse[i], 4]}
    assert matches_of_r5 == {1, 3, 5}


def test_pipeline_on_the_example(table1) -> None:  # type: ignore[no-untyped-def]
    result = anonymize_sets(table1, k=3, seed=3)
    assert result.verification.passed
    # every original's true match is one of its Table 4 matches and carries its label
    dense = result.graph.matrix.toarray().astype(bool)
    assert sorted(result.assignment.tolist()) == list(range(6))
    for i in range(6):
        assert result.release.labels is not None
        assert result.release.labels[result.assignment[i]] == RELIGION[i]
    assert dense.sum() == 18


def test_figure_1_ring_is_not_diverse_under_every_assignment(table1) -> None:  # type: ignore[no-untyped-def]
    """The paper's 3-diversity of Table 3 holds for the identity assignment only: of the 20
    perfect matchings of the Figure 1 ring, 14 leave some original with < 3 distinct labels
    when labels travel through them (the reason for our label-interleaved ring)."""
    import itertools

    order, _ = gray_tsp_order(table1.matrix)
    dense = ring_graph(order, 3).matrix.toarray().astype(bool)
    good = bad = 0
    for perm in itertools.permutations(range(6)):
        if not all(dense[i, perm[i]] for i in range(6)):
            continue
        published = np.empty(6, object)
        published[list(perm)] = RELIGION
        if all(len(set(published[dense[i]])) == 3 for i in range(6)):
            good += 1
        else:
            bad += 1
    assert (good, bad) == (6, 14)
