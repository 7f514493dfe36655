"""Sparse commands: round trips in every format, and one clear line + exit 2 + nothing written
for each bad input the issue lists."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from anonymatch.cli import main
from anonymatch.sparse.io import read_sparse, write_sparse
from anonymatch.sparse.methods import names
from tests.factories import planted


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def matrix() -> sp.csr_array:
    return planted(blocks=6, size=8, items=6, noise=0.05, seed=1)


@pytest.mark.parametrize("ext", ["csv", "mtx", "parquet", "dat"])
def test_formats_round_trip(tmp_path: Path, matrix: sp.csr_array, ext: str) -> None:
    path = tmp_path / f"m.{ext}"
    write_sparse(path, matrix)
    back = read_sparse(path)
    assert back.shape == matrix.shape and (back != matrix).nnz == 0


def test_edge_list_header_comments_and_adjacency(tmp_path: Path) -> None:
    path = tmp_path / "g.txt"
    path.write_text("# a graph\nsource target\n0 1\n1 2\n2 2\n0 1\n")
    m = read_sparse(path)
    assert m.shape == (3, 3) and m.nnz == 3
    und = read_sparse(path, adjacency="undirected")
    assert (und != und.T).nnz == 0 and und.nnz == 5
    assert read_sparse(path, adjacency="directed").shape == (3, 3)


@pytest.mark.parametrize("method", names(verified=True))
def test_anonymize_verify_evaluate(
    tmp_path: Path, matrix: sp.csr_array, method: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.csv"
    write_sparse(src, matrix)
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    args = ["anonymize-sparse", str(src), "-o", str(out), "--k", "4", "--method", method]
    code, stdout, err = run([*args, "--seed", "3", "--report", str(report)], capsys)
    assert code == 0, err
    assert "PASS" in stdout
    manifest = json.loads(report.read_text())
    assert manifest["verification"]["passed"] and manifest["randomness"] == {"source": "seed"}
    rule = "smooth" if method == "smooth" else "nonsmooth"
    code, stdout, _ = run(["verify-sparse", str(src), str(out), "--k", "4", "--rule", rule], capsys)
    assert code == 0 and stdout.startswith("PASS")
    code, stdout, _ = run(["verify-sparse", str(src), str(out), "--k", "40"], capsys)
    assert code == 4 and stdout.startswith("FAIL")
    code, stdout, _ = run(["evaluate-sparse", str(src), str(out), "--json"], capsys)
    figures = json.loads(stdout)[str(out)]
    assert figures["jaccard"] == pytest.approx(manifest["loss"]["jaccard"])


def test_randomized_response_and_chunked_cli(
    tmp_path: Path, matrix: sp.csr_array, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.mtx"
    write_sparse(src, matrix)
    out = tmp_path / "rr.parquet"
    code, stdout, err = run(
        ["anonymize-sparse", str(src), "-o", str(out), "--k", "2", "--method", "rr",
         "--epsilon", "2", "--seed", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "verified: n/a" in stdout
    assert read_sparse(out).shape[0] <= matrix.shape[0]
    out = tmp_path / "chunked.csv"
    code, stdout, err = run(
        ["anonymize-sparse", str(src), "-o", str(out), "--k", "4", "--chunk-rows", "16",
         "--executor", "threads", "--seed", "1", "-q"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, _, _ = run(["verify-sparse", str(src), str(out), "--k", "4"], capsys)
    assert code == 0


BAD_EDGES = {
    "malformed": "row,col\n0,1\n2\n",
    "negative": "0,1\n-3,2\n",
    "non_integer": "0,1\n1.5,2\n",
    "text_id": "0,1\nalice,2\n",
}


@pytest.mark.parametrize("case", sorted(BAD_EDGES))
def test_bad_edge_lists(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bad.csv"
    src.write_text(BAD_EDGES[case])
    out = tmp_path / "out.csv"
    code, _, err = run(["anonymize-sparse", str(src), "-o", str(out), "--k", "1"], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("anonymatch: error:") and "line" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--k", "0"], "--k must be an integer of at least 1, got 0"),
        (["--k", "2", "--method", "rr", "--epsilon", "0"], "epsilon"),
        (["--k", "2", "--method", "rr", "--epsilon", "-1"], "epsilon"),
        (["--k", "2", "--method", "rr"], "needs --epsilon"),
        (["--k", "2", "--beta", "1"], "beta"),
        (["--k", "8", "--chunk-rows", "10"], "--chunk-rows must be at least 2k = 16"),
    ],
)
def test_bad_parameters(
    tmp_path: Path,
    matrix: sp.csr_array,
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src = tmp_path / "in.csv"
    write_sparse(src, matrix)
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    code, _, err = run(
        ["anonymize-sparse", str(src), "-o", str(out), "--report", str(report), *extra], capsys
    )
    assert code == 2 and message in err and err.count("\n") == 1
    assert not out.exists() and not report.exists()


def test_k_above_the_rows_is_infeasible(
    tmp_path: Path, matrix: sp.csr_array, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.csv"
    write_sparse(src, matrix)
    out = tmp_path / "out.csv"
    code, _, err = run(["anonymize-sparse", str(src), "-o", str(out), "--k", "50"], capsys)
    assert code == 3 and "larger than the number of rows" in err  # exit 3 on every kind
    assert not out.exists()


def test_bad_matrix_market_and_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "w.mtx"
    with src.open("wb") as handle:
        import scipy.io

        scipy.io.mmwrite(handle, sp.coo_matrix(np.array([[0, 2.5], [1, 0]])))
    code, _, err = run(
        ["anonymize-sparse", str(src), "-o", str(tmp_path / "o.csv"), "--k", "1"], capsys
    )
    assert code == 2 and "binary" in err
    code, _, err = run(
        ["anonymize-sparse", str(tmp_path / "nope.csv"), "-o", "o.csv", "--k", "1"], capsys
    )
    assert code == 2 and "not found" in err


def test_evaluate_accuracy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = planted(blocks=8, size=20, items=6, noise=0.02, seed=5)
    labels = (np.arange(x.shape[0]) // 20) % 2  # the label is a function of the block
    src, lab, out = tmp_path / "x.csv", tmp_path / "y.txt", tmp_path / "p.csv"
    write_sparse(src, x)
    lab.write_text("\n".join(map(str, labels)) + "\n")
    code, _, err = run(["anonymize-sparse", str(src), "-o", str(out), "--k", "4", "-q",
                        "--seed", "1"], capsys)  # fmt: skip
    assert code == 0, err
    code, stdout, err = run(
        [
            "evaluate-sparse",
            str(src),
            str(out),
            "--accuracy",
            str(lab),
            "--nets",
            "1",
            "--json",
            "--seed",
            "2",
        ],
        capsys,
    )
    assert code == 0, err
    figures = json.loads(stdout)
    base = figures["accuracy_baselines"]
    assert base["original"] > 0.9 and 0.3 < base["majority_label"] < 0.7
    assert figures[str(out)]["accuracy"] > 0.9  # the clusters keep the blocks
    # an explicit test split: the first 40 rows
    test, test_lab = tmp_path / "t.csv", tmp_path / "ty.txt"
    write_sparse(test, x[:40])
    test_lab.write_text("\n".join(map(str, labels[:40])))
    code, stdout, err = run(
        ["evaluate-sparse", str(src), str(out), "--accuracy", str(lab), "--test", str(test),
         "--test-labels", str(test_lab), "--nets", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "accuracy" in stdout and "majority label" in stdout
    lab.write_text("1\n0\n")
    code, _, err = run(["evaluate-sparse", str(src), str(out), "--accuracy", str(lab)], capsys)
    assert code == 2 and "2 labels for 160 rows" in err and err.count("\n") == 1
