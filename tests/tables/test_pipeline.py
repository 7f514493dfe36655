"""Every method through the public pipeline and the independent verifier."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonymatch
from anonymatch.tables.columns.schema import Schema
from anonymatch.tables.methods import names, registry
from anonymatch.tables.pipeline import Release, prepare
from anonymatch.tables.recode import recode
from tests.factories import person_compatibility, random_frame

# every generalization method but the exact one, which the MIP test compares them with
HEURISTICS = tuple(m for m in names(levels=False) if m != "mip")

TABLE1 = pd.DataFrame(
    {
        "Age": [59, 57, 39, 28, 41, 37, 40, 53],
        "Salary": [25, 27, 47, 41, 20, 59, 35, 34],
        "s": list("abcdefgh"),
    }
)
# Doka et al. Table 1 (bottom left): the published ranges and (right) which originals match.
TABLE1_RELEASE = pd.DataFrame(
    {
        "Age": ["53..59", "53..59", "28..39", "28..41", "40..59", "28..39", "39..41", "40..57"],
        "Salary": ["25..34", "25..34", "41..59", "20..59", "20..35", "41..59", "20..47", "27..35"],
    }
)
TABLE1_MATCHES = [
    [0, 1, 7],
    [0, 1, 7],
    [2, 3, 5],
    [3, 4, 5],
    [0, 4, 6],
    [2, 3, 5],
    [2, 4, 6],
    [1, 6, 7],
]


def _anonymize(frame: pd.DataFrame, k: int, method: str, **kw: object) -> Release:
    qi = [c for c in frame.columns if c != "s"]
    numeric = [c for c in qi if c.startswith("n") or c in ("Age", "Salary")]
    if "l" not in kw and "t" not in kw:
        kw["l"] = 1  # the method's own graph: s published unprotected (no default ℓ = 2)
    return anonymatch.anonymize(
        frame,
        k=k,
        qi=qi,
        numeric=numeric,
        sensitive=["s"],
        method=method,
        seed=1,
        **kw,  # type: ignore[arg-type]
    )


def test_paper_table1_release_is_verified_with_the_papers_matches() -> None:
    schema = Schema.build(["Age", "Salary"], numeric=["Age", "Salary"])
    report = anonymatch.verify(
        TABLE1, TABLE1_RELEASE, k=3, qi=["Age", "Salary"], numeric=["Age", "Salary"]
    )
    assert report.passed and report.min_matches_original == 3
    _, enc, _ = prepare(TABLE1, schema)
    from anonymatch.tables.io.cells import parse_cells

    c, counts, inverse = person_compatibility(parse_cells(TABLE1_RELEASE, enc), enc)
    assert (counts == 1).all()
    dense = c.toarray()[inverse]  # originals × published
    # the paper's matches are a 3-regular graph inside the compatibility the ranges allow
    # (t'3 = 28..41 × 20..59 also contains t2 and t6, which the paper does not list)
    paper = np.zeros((8, 8), dtype=bool)
    for j, originals in enumerate(TABLE1_MATCHES):
        paper[originals, j] = True
    assert (paper.sum(axis=0) == 3).all() and (paper.sum(axis=1) == 3).all()
    assert not (paper & ~dense.astype(bool)).any()
    assert sorted(np.flatnonzero(dense[:, 3]).tolist()) == [2, 3, 4, 5, 6]


@pytest.mark.parametrize("method", names(levels=False))
def test_paper_table1_every_method(method: str) -> None:
    release = _anonymize(TABLE1, 3, method)
    graph = release.graph
    assert graph.is_regular(3) if registry()[method].regular else graph.min_degree() >= 3
    assert release.report["verification"]["passed"]  # type: ignore[index]
    assert sorted(release.table["s"]) == list("abcdefgh")


def _each_edge_in_a_perfect_matching(matrix: np.ndarray) -> bool:
    """networkx oracle: edge (i, j) lies in a perfect matching iff the graph without rows i and
    columns j has a perfect matching."""
    n = matrix.shape[0]
    for i, j in zip(*np.nonzero(matrix), strict=True):
        g = nx.Graph()
        g.add_nodes_from(range(2 * n))
        rows = [r for r in range(n) if r != i]
        cols = [c for c in range(n) if c != j]
        g.add_edges_from((r, n + c) for r in rows for c in cols if matrix[r, c])
        size = len(nx.bipartite.maximum_matching(g, top_nodes=rows)) // 2
        if size != n - 1:
            return False
    return True


@pytest.mark.parametrize("method", HEURISTICS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 40), k=st.integers(1, 5), seed=st.integers(0, 10_000))
def test_every_method_is_verified(method: str, n: int, k: int, seed: int) -> None:
    k = min(k, n)
    frame = random_frame(n, seed, n_num=2, n_cat=2, card=4)
    release = _anonymize(frame, k, method)
    spec = registry()[method]
    graph = release.graph
    assert graph.n == n and len(release.table) == n
    if spec.regular:
        assert graph.is_regular(k)
    else:  # published rows are shuffled, so compare degree multisets
        assert graph.min_degree() >= k
        assert sorted(graph.out_degrees()) == sorted(graph.in_degrees())
    assert release.report["verification"]["passed"]  # type: ignore[index]
    assert sorted(release.table["s"]) == sorted(frame["s"])
    # the release's cells are the recoding of its graph (nothing narrower, nothing wider)
    _, enc, _ = prepare(frame, Schema.build([c for c in frame if c != "s"], ["n0", "n1"], ["s"]))
    again = recode(graph, enc)
    assert np.array_equal(again.num_lo, release.cells.num_lo)
    if n <= 12:
        assert _each_edge_in_a_perfect_matching(graph.matrix.toarray())


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 8), k=st.integers(1, 3), seed=st.integers(0, 10_000))
def test_mip_is_verified(n: int, k: int, seed: int) -> None:
    k = min(k, n)
    release = _anonymize(random_frame(n, seed, 1, 2, 3), k, "mip")
    assert release.graph.is_regular(k)
    assert release.report["verification"]["passed"]  # type: ignore[index]


def test_mip_is_never_beaten_by_a_heuristic() -> None:
    rng = np.random.default_rng(5)
    for trial in range(12):
        n, k = int(rng.integers(5, 9)), int(rng.integers(2, 4))
        frame = random_frame(n, 1000 + trial, 2, 2, 4)
        best = _anonymize(frame, k, "mip").report["loss"]["gcp"]  # type: ignore[index]
        for method in HEURISTICS:
            gcp = _anonymize(frame, k, method).report["loss"]["gcp"]  # type: ignore[index]
            assert best <= gcp + 1e-9, (trial, method)


def test_hungarian_not_worse_than_greedy_on_average() -> None:
    diffs = []
    for seed in range(30):
        frame = random_frame(60, seed, 2, 3, 5)
        h = _anonymize(frame, 4, "hungarian").report["loss"]["gcp"]  # type: ignore[index]
        g = _anonymize(frame, 4, "greedy").report["loss"]["gcp"]  # type: ignore[index]
        diffs.append(g - h)
    assert np.mean(diffs) > 0


def test_partitioned_run_is_k_regular_and_verified() -> None:
    frame = random_frame(500, 3, 2, 2, 6)
    release = _anonymize(frame, 5, "hungarian", partition_size=40)
    assert release.report["parameters"]["partitions"] == 12  # type: ignore[index]
    assert release.graph.is_regular(5)
    assert release.report["verification"]["passed"]  # type: ignore[index]


def test_seed_makes_release_reproducible_and_entropy_does_not() -> None:
    frame = random_frame(80, 4, 2, 2, 4)
    a = _anonymize(frame, 3, "hungarian").table
    b = _anonymize(frame, 3, "hungarian").table
    pd.testing.assert_frame_equal(a, b)
    roles = {"qi": ["n0", "n1", "c0", "c1"], "numeric": ["n0", "n1"], "sensitive": ["s"]}
    c = anonymatch.anonymize(frame, k=3, **roles).table  # type: ignore[arg-type]
    d = anonymatch.anonymize(frame, k=3, **roles).table  # type: ignore[arg-type]
    assert not c.equals(d)  # OS entropy: different shuffles (equal with probability ~1/80!)


def test_identifiers_dropped_and_other_columns_kept() -> None:
    frame = random_frame(30, 2)
    frame.insert(0, "name", [f"p{i}" for i in range(30)])
    frame["note"] = [f"x{i}" for i in range(30)]
    release = anonymatch.anonymize(
        frame, k=3, qi=["n0", "c0"], numeric=["n0"], sensitive=["s"], identifiers=["name"], seed=2
    )
    assert "name" not in release.table.columns
    assert list(release.table.columns) == ["n0", "n1", "c0", "c1", "s", "note"]
    assert sorted(release.table["note"]) == sorted(frame["note"])
    # non-QI columns travel together: (s, note) pairs are those of the originals
    pairs = set(zip(frame["s"], frame["note"], strict=True))
    assert set(zip(release.table["s"], release.table["note"], strict=True)) == pairs


def test_weights_change_the_objective() -> None:
    frame = random_frame(120, 9, 2, 2, 6)
    qi = ["n0", "n1", "c0", "c1"]
    plain = anonymatch.anonymize(frame, k=4, qi=qi, numeric=["n0", "n1"], seed=1)
    heavy = anonymatch.anonymize(
        frame, k=4, qi=qi, numeric=["n0", "n1"], seed=1, weights={"n0": 50.0}
    )
    ncp_plain = plain.report["loss"]["ncp"]["n0"]  # type: ignore[index]
    ncp_heavy = heavy.report["loss"]["ncp"]["n0"]  # type: ignore[index]
    assert ncp_heavy < ncp_plain


def test_release_table_attaches_other_columns_of_every_dtype() -> None:
    """Other columns are taken through the true assignment with the dtypes the published
    table always had: text columns (Arrow ``str``, missing cells included) by ``take``, the
    others through numpy, as before."""
    from anonymatch.core.graph import GeneralizationGraph
    from anonymatch.tables.pipeline import _release_table

    n = 6
    data = pd.DataFrame(
        {
            "q": [str(v) for v in range(n)],
            "text": pd.Series(["a", None, "c", "d", "e", "f"], dtype=str),
            "obj": pd.Series(["x", 1, None, "y", 2.5, "z"], dtype=object),
            "ints": np.arange(n) * 10,
            "nullable": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
        }
    )
    schema = Schema.build(["q"], numeric=["q"])
    _, enc, _ = prepare(data, schema)
    graph = GeneralizationGraph.from_edges(np.arange(n), np.arange(n), n)
    source = np.array([3, 1, 0, 5, 2, 4])
    table = _release_table(data, schema, enc, recode(graph, enc), source)
    for name in ("text", "obj", "ints", "nullable"):
        expected = pd.DataFrame({name: data[name].to_numpy()[source]})[name]
        assert table[name].dtype == expected.dtype, name
        assert table[name].equals(expected), name
    assert table["q"].tolist() == [str(v) for v in range(n)]
