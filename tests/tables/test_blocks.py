"""Blocks (``tables.methods.blocks``): consecutive classes of k … 2k − 1 records along the
serpentine order, cut at the least GCP — checked against every cut on small tables, through
the verifier, and on the whole path."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.core.graph import GeneralizationGraph
from anonymatch.tables.methods.blocks import (
    PARALLEL_MIN_K,
    block_labels,
    blocks,
    serpentine_order,
)
from anonymatch.tables.metrics import information_loss
from anonymatch.tables.recode import recode
from anonymatch.tables.verify import verify
from tests.factories import encode_frame, random_frame


def _cuts(n: int, k: int) -> list[list[int]]:
    """Every cut of 0 … n into consecutive pieces of k … 2k − 1 (the ends after 0)."""
    out: list[list[int]] = []

    def grow(at: int, ends: list[int]) -> None:
        if at == n:
            out.append(ends)
        for size in range(k, 2 * k):
            if at + size <= n:
                grow(at + size, [*ends, at + size])

    grow(0, [])
    return out


def _holes(frame: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    qi = [c for c in frame.columns if c != "s"]
    out = frame.astype(object)
    out[qi] = out[qi].mask(rng.random((len(frame), len(qi))) < share)
    return out


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 13),
    k=st.integers(1, 5),
    holes=st.sampled_from([0.0, 0.15]),
    seed=st.integers(0, 2**16),
)
def test_the_cut_has_the_least_gcp_of_all_cuts(n: int, k: int, holes: float, seed: int) -> None:
    k = min(k, n)
    qi = encode_frame(_holes(random_frame(n, seed, card=3), holes, seed))
    labels = block_labels(qi, k)
    order = serpentine_order(qi)
    along = labels[order]
    assert np.all(np.diff(along) >= 0) and along[0] == 0  # consecutive in the order
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= max(2 * k - 1, k)
    graph = GeneralizationGraph.from_classes(labels)
    got = information_loss(recode(graph, qi), qi).gcp
    best = np.inf
    for ends in _cuts(n, k):  # the verifier's own scoring of every other cut
        other = np.empty(n, np.int64)
        other[order] = np.repeat(np.arange(len(ends)), np.diff([0, *ends]))
        cells = recode(GeneralizationGraph.from_classes(other), qi)
        best = min(best, information_loss(cells, qi).gcp)
    assert got == pytest.approx(best, abs=1e-12)
    assert verify(recode(graph, qi), qi, k).passed


def test_the_cut_is_the_same_on_any_number_of_threads() -> None:
    qi = encode_frame(_holes(random_frame(1500, 4, card=5), 0.02, 4))
    for k in (PARALLEL_MIN_K, 130, 700):
        one = block_labels(qi, k, workers=1)
        assert np.array_equal(one, block_labels(qi, k, workers=2))
        assert np.array_equal(one, block_labels(qi, k, workers=3, progress=True))


def test_a_block_never_reaches_2k_records() -> None:
    # identical records: any cut costs 0, and the cut still keeps classes below 2k
    frame = pd.DataFrame({"n0": [1] * 50, "c0": ["a"] * 50, "s": ["x"] * 50})
    for k in (1, 3, 7, 25, 50):
        sizes = np.bincount(block_labels(encode_frame(frame), k))
        assert sizes.min() >= k and (sizes.max() < 2 * k or len(sizes) == 1)


def test_fewer_records_than_k_are_refused() -> None:
    with pytest.raises(ValueError, match="k ≤ n"):
        block_labels(encode_frame(random_frame(4, 0)), 5)


def test_the_serpentine_order() -> None:
    # a (2 values) before b (3 values): b runs up for a = 0 and down for a = 1
    a, b = [0, 1, 0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2, 1, 0]
    frame = pd.DataFrame({"n0": a, "n1": b, "s": ["x"] * 8})
    order = serpentine_order(encode_frame(frame))
    got = [(a[i], b[i]) for i in order]
    assert got == [(0, 0), (0, 1), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0), (1, 0)]


def test_the_cut_beats_equal_chunks_of_the_same_order() -> None:
    qi = encode_frame(random_frame(600, 3, card=6))
    order = serpentine_order(qi)
    for k in (5, 20, 60):
        cut = information_loss(recode(blocks(qi, k), qi), qi).gcp
        chunks = np.empty(qi.n, np.int64)
        chunks[order] = np.minimum(np.arange(qi.n) // k, qi.n // k - 1)
        equal = information_loss(recode(GeneralizationGraph.from_classes(chunks), qi), qi).gcp
        assert cut <= equal


def test_blocks_on_the_whole_path_are_verified_and_said() -> None:
    frame = random_frame(400, 11)
    kw = dict(qi="n0,n1,c0,c1", numeric="n0,n1", method="hungarian", seed=5)
    result = anonymatch.anonymize(frame, k=20, structure="blocks", **kw)
    report = result.report
    assert report["plan"]["blocks"] == {"partitions": 1, "why": "structure"}
    assert report["plan"]["partition_size"] is None and "assignment" not in report["plan"]
    assert report["verification"]["passed"] and "insider_weakness" not in report["guarantee"]
    assert anonymatch.verify(frame, result.release, k=20, qi="n0,n1,c0,c1", numeric="n0,n1")
    rounds = anonymatch.anonymize(frame, k=20, **kw).report
    assert "blocks" not in rounds["plan"]
    assert rounds["loss"]["gcp"] < report["loss"]["gcp"]  # the rounds lose less where they run
    again = anonymatch.anonymize(frame, k=20, structure="blocks", **kw)
    assert again.release.equals(result.release)  # seeded: the same release


def test_the_privacy_step_of_a_block_is_uniform() -> None:
    # a class of m records: each of a person's m rows is their true one with probability 1/m
    frame = random_frame(9, 2)
    qi = encode_frame(frame)
    graph = blocks(qi, 4)  # classes of 4 and 5 records
    from anonymatch.core.classes import privacy_step

    rng = np.random.default_rng(7)
    labels = graph.classes[0]
    counts = np.zeros((9, 9), np.int64)
    for _ in range(3000):
        drawn = privacy_step(graph, rng)
        counts[np.arange(9), drawn] += 1
    for i, j in itertools.product(range(9), range(9)):
        if labels[i] != labels[j]:
            assert counts[i, j] == 0
    from scipy import stats

    for i in range(9):
        row = counts[i][labels == labels[i]]
        assert stats.chisquare(row).pvalue > 1e-4


def test_blocks_with_a_hierarchy_an_ordinal_and_missing_values(tmp_path: Path) -> None:
    from tests.tables.test_hierarchy import WORK

    tree = tmp_path / "work.csv"
    tree.write_text(WORK)
    rng = np.random.default_rng(5)
    leaves = [line.split(";")[0] for line in WORK.splitlines()]
    n = 240
    frame = pd.DataFrame(
        {
            "work": rng.choice(leaves, n),
            "size": rng.choice(["S", "M", "L", "XL"], n),
            "age": rng.integers(20, 60, n).astype(object),
            "s": rng.choice(["x", "y"], n),
        }
    )
    frame.loc[rng.random(n) < 0.05, "age"] = None  # published as '*', priced at NCP 1
    kw = dict(qi="work,size,age", numeric="age", hierarchies={"work": tree})
    ordinal = {"size": "S|M|L|XL"}
    result = anonymatch.anonymize(frame, k=12, ordinal=ordinal, structure="blocks", seed=2, **kw)
    assert result.report["verification"]["passed"]
    assert result.report["plan"]["blocks"]["why"] == "structure"
    assert result.release["work"].str.startswith("~").any()  # nodes of the hierarchy
    check = anonymatch.verify(frame, result.release, k=12, ordinal=ordinal, **kw)
    assert check.passed
