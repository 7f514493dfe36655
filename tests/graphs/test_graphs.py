"""Graph k-anonymity: the slides' 15-vertex graph, modular decomposition vs brute force,
the anonymizer through its checker, edge-list input, CLI."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from anonymatch.cli import main
from anonymatch.core.errors import InfeasibleError, InputError
from anonymatch.graphs.io import read_edge_list
from anonymatch.graphs.modular import (
    is_module,
    maximal_modular_partition,
    modular_decomposition,
    twin_classes_from_decomposition,
)
from anonymatch.graphs.pipeline import anonymize_graph, graph_from_groups
from anonymatch.graphs.verify import check_graph, neighbourhood_classes
from tests.tables.kl_examples import SLIDES_GRAPH, SLIDES_GRAPH_ROWS


def test_slides_graph_matches_printed_matrix() -> None:
    printed = np.array([[int(c) for c in row] for row in SLIDES_GRAPH_ROWS.split()])
    assert np.array_equal(printed, SLIDES_GRAPH)


def test_slides_graph_is_3_anonymous() -> None:
    adj = sp.csr_array(SLIDES_GRAPH)
    report = check_graph(adj, 3)
    assert report.passed and report.class_sizes == [3, 3, 3, 3, 3]
    assert not check_graph(adj, 4).passed
    classes = neighbourhood_classes(adj)
    assert sorted(np.flatnonzero(classes == c).tolist() for c in range(5)) == [
        [3 * i, 3 * i + 1, 3 * i + 2] for i in range(5)
    ]
    # closed neighbourhoods: no two vertices share one (the groups are independent sets)
    assert check_graph(adj, 1, closed=True).class_sizes == [1] * 15


def test_slides_graph_modular_decomposition() -> None:
    tree = modular_decomposition(SLIDES_GRAPH)
    # five parts of three, read off the tree: each a parallel node with three leaf children
    classes = twin_classes_from_decomposition(tree)
    assert [c.tolist() for c in classes] == [[3 * i, 3 * i + 1, 3 * i + 2] for i in range(5)]
    parallel = [n for n in tree.nodes() if n.kind == "parallel"]
    assert sorted(n.vertices.tolist() for n in parallel) == [
        [3 * i, 3 * i + 1, 3 * i + 2] for i in range(5)
    ]
    assert all(len(n.children) == 3 and n.children[0].kind == "leaf" for n in parallel)
    # the maximal modular partition (children of the prime root) merges groups 1 and 4, which
    # are twins in the quotient: the slides' theorem holds for the twin partition, not for it
    assert tree.kind == "prime"
    parts = sorted(p.tolist() for p in maximal_modular_partition(tree))
    assert parts == [[0, 1, 2, 9, 10, 11], [3, 4, 5], [6, 7, 8], [12, 13, 14]]
    for c in classes:  # a congruence partition into modules with edgeless factors
        assert is_module(SLIDES_GRAPH.astype(bool), c)
        assert SLIDES_GRAPH[np.ix_(c, c)].sum() == 0


def all_modules(adj: np.ndarray) -> list[frozenset[int]]:
    n = adj.shape[0]
    out = []
    for size in range(1, n + 1):
        for members in combinations(range(n), size):
            if is_module(adj, np.array(members)):
                out.append(frozenset(members))
    return out


def random_graph(seed: int, n: int, p: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, 1)
    return upper | upper.T


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 7), p=st.floats(0.1, 0.9))
def test_decomposition_matches_brute_force(seed: int, n: int, p: float) -> None:
    adj = random_graph(seed, n, p)
    modules = all_modules(adj)
    strong = {m for m in modules if all(m <= x or x <= m or not (m & x) for x in modules)}
    tree = modular_decomposition(adj)
    nodes = tree.nodes()
    assert {frozenset(x.vertices.tolist()) for x in nodes} == strong
    g = nx.from_numpy_array(adj.astype(int))
    for node in nodes:
        if node.kind == "leaf":
            continue
        sub = g.subgraph(node.vertices.tolist())
        if node.kind == "parallel":
            assert not nx.is_connected(sub)
        elif node.kind == "series":
            assert not nx.is_connected(nx.complement(sub))
        else:
            assert nx.is_connected(sub) and nx.is_connected(nx.complement(sub))
        # children: the maximal strong modules strictly inside the node
        inside = [m for m in strong if m < frozenset(node.vertices.tolist())]
        maximal = {m for m in inside if not any(m < x for x in inside)}
        assert {frozenset(c.vertices.tolist()) for c in node.children} == maximal
    # classes read off the tree = neighbourhood classes computed directly
    for closed in (False, True):
        ids = neighbourhood_classes(sp.csr_array(adj.astype(np.int8)), closed)
        direct = sorted(sorted(np.flatnonzero(ids == c).tolist()) for c in np.unique(ids))
        from_tree = sorted(c.tolist() for c in twin_classes_from_decomposition(tree, closed))
        assert direct == from_tree


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    n=st.integers(2, 40),
    p=st.floats(0.05, 0.7),
    k=st.integers(1, 5),
    closed=st.booleans(),
)
def test_anonymizer_output_passes_checker(
    seed: int, n: int, p: float, k: int, closed: bool
) -> None:
    k = min(k, n)
    adj = sp.csr_array(random_graph(seed, n, p).astype(np.int8))
    result = anonymize_graph(adj, k, closed)
    out = result.adjacency
    assert check_graph(out, k, closed).passed
    assert (out != out.T).nnz == 0 and out.diagonal().sum() == 0
    sizes = np.bincount(result.groups)
    assert sizes.min() >= k
    # the majority rule, pair by pair of groups
    dense, new = adj.toarray(), out.toarray()
    for i in range(len(sizes)):
        for j in range(len(sizes)):
            a, b = np.flatnonzero(result.groups == i), np.flatnonzero(result.groups == j)
            block = new[np.ix_(a, b)]
            if i == j:
                off = block[~np.eye(len(a), dtype=bool)]
                assert np.all(off == (1 if closed else 0))
            else:
                assert np.all(block == (2 * dense[np.ix_(a, b)].sum() > len(a) * len(b)))
    m = result.metrics
    assert m["edges_after"] == m["edges_before"] + m["edges_added"] - m["edges_removed"]
    assert 0.0 <= m["jaccard"] <= 1.0


def test_tampering_is_detected() -> None:
    adj = sp.csr_array(SLIDES_GRAPH)
    dense = SLIDES_GRAPH.copy()
    dense[0, 3] = dense[3, 0] = 0  # one edge removed: vertices 0 and 3 leave their classes
    assert check_graph(adj, 3).passed and not check_graph(sp.csr_array(dense), 3).passed


def test_k_1_keeps_the_graph_and_k_too_large() -> None:
    adj = sp.csr_array(random_graph(3, 12, 0.4).astype(np.int8))
    groups = np.arange(12)
    assert (graph_from_groups(adj, groups, False) != adj).nnz == 0
    assert anonymize_graph(adj, 1).metrics["jaccard"] == 1.0
    with pytest.raises(InfeasibleError):
        anonymize_graph(adj, 13)
    with pytest.raises(InputError):
        anonymize_graph(adj, 0)


def test_edge_list_normalization(tmp_path: Path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("source,target\n1,2\n2,1\n3,3\n2,5\n# comment\n5 7\n")
    g = read_edge_list(path)
    assert g.ids.tolist() == [1, 2, 3, 5, 7]
    assert g.m == 3 and len(g.warnings) == 2
    assert "1 self-loop" in g.warnings[0] and "1 duplicate" in g.warnings[1]
    g = read_edge_list(path, n_vertices=9)
    assert g.n == 9 and g.m == 3
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n2,x\n")
    with pytest.raises(InputError, match="'x' is not an integer"):
        read_edge_list(bad)
    bad.write_text("1,2\n2\n")
    with pytest.raises(InputError, match="expected two vertex ids"):
        read_edge_list(bad)
    with pytest.raises(InputError, match="outside"):
        read_edge_list(path, n_vertices=4)


def write_graph(path: Path, adj: np.ndarray) -> None:
    rows, cols = np.nonzero(np.triu(adj, 1))
    path.write_text(
        "source,target\n" + "".join(f"{a},{b}\n" for a, b in zip(rows, cols, strict=True))
    )


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slides = tmp_path / "slides.csv"
    write_graph(slides, SLIDES_GRAPH)
    code, out, _ = run(["check-graph", str(slides), "--k", "3", "--decomposition"], capsys)
    assert code == 0 and out.startswith("PASS") and "classes (sizes 3, 3, 3, 3, 3)" in out
    code, out, _ = run(["check-graph", str(slides), "--k", "4", "--json"], capsys)
    assert code == 4 and json.loads(out)["smallest_class"] == 3
    src = tmp_path / "g.csv"
    write_graph(src, random_graph(5, 30, 0.3))
    with src.open("a") as fh:
        fh.write("4,4\n")
    for closed in ([], ["--closed"]):
        out_path, rep = tmp_path / "anon.csv", tmp_path / "anon.json"
        code, out, err = run(
            ["anonymize-graph", str(src), "-o", str(out_path), "--k", "3", "--seed", "1"]
            + ["--report", str(rep), "--force", *closed],
            capsys,
        )
        assert code == 0, err
        assert "warning" in err and "self-loop" in err
        manifest = json.loads(rep.read_text())
        assert manifest["verification"]["passed"] and manifest["randomness"] == {"source": "seed"}
        code, out, _ = run(["check-graph", str(out_path), "--k", "3", "--n", "30", *closed], capsys)
        assert code == 0, out
    keep = tmp_path / "keep.csv"
    code, _, err = run(
        ["anonymize-graph", str(src), "-o", str(keep), "--k", "2", "--keep-ids", "-q"], capsys
    )
    assert code == 0, err


def test_cli_graph_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\nx,3\n")
    out = tmp_path / "out.csv"
    code, _, err = run(["anonymize-graph", str(bad), "-o", str(out), "--k", "2"], capsys)
    assert code == 2 and "not an integer" in err and not out.exists()
    good = tmp_path / "good.csv"
    write_graph(good, random_graph(1, 6, 0.5))
    code, _, err = run(["anonymize-graph", str(good), "-o", str(out), "--k", "7"], capsys)
    assert code == 3 and "infeasible" in err and not out.exists()
    code, _, err = run(["check-graph", str(good), "--k", "0"], capsys)
    assert code == 2
    code, _, err = run(["check-graph", str(tmp_path / "missing.csv"), "--k", "2"], capsys)
    assert code == 2 and "not found" in err
