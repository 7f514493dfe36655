"""Byte-identical releases across refactorings: every anonymize command and method, fixed seed.

Each case writes a small deterministic input (generated here, with numpy only), runs the CLI with
``--seed`` and compares the SHA-256 of the release with the digest recorded before the package
was restructured (issue 12). A digest changes only when an algorithm's output changes on purpose;
then re-record it with ``python tests/test_golden.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import main


def _table(path: Path, n: int = 48, seed: int = 7) -> Path:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "hours": rng.integers(1, 60, n),
            "job": [f"j{x}" for x in rng.integers(0, 5, n)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, n)],
            "level": rng.integers(2, 5, n),
            "disease": [f"d{x}" for x in rng.integers(0, 4, n)],
        }
    )
    frame.to_csv(path, index=False)
    return path


def _dat(path: Path, n: int = 60, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        items = sorted(set(rng.integers(0, 15, rng.integers(1, 6)).tolist()))
        lines.append(" ".join(map(str, items)))
    path.write_text("\n".join(lines) + "\n")
    return path


def _labels(path: Path, n: int = 60) -> Path:
    path.write_text("\n".join(f"job{i % 10}" for i in range(n)) + "\n")
    return path


def _edges(path: Path, rows: int = 80, cols: int = 30, seed: int = 5) -> Path:
    rng = np.random.default_rng(seed)
    pairs = {
        (int(r), int(c))
        for r, c in zip(rng.integers(0, rows, 400), rng.integers(0, cols, 400), strict=True)
    }
    pd.DataFrame(sorted(pairs), columns=["row", "col"]).to_csv(path, index=False)
    return path


def _graph(path: Path, n: int = 30, seed: int = 11) -> Path:
    rng = np.random.default_rng(seed)
    pairs = {tuple(sorted((int(a), int(b)))) for a, b in rng.integers(0, n, (70, 2)) if a != b}
    pd.DataFrame(sorted(pairs), columns=["source", "target"]).to_csv(path, index=False)
    return path


TABLE = ["--qi", "age,hours,job,sex", "--numeric", "age,hours", "--sensitive", "disease"]
SMALL = ["--qi", "age,job,sex", "--numeric", "age", "--sensitive", "disease"]

# name -> (command, input maker, input name, output name, arguments after INPUT -o OUTPUT)
CASES: dict[str, tuple[str, Callable[[Path], Path], str, str, list[str]]] = {
    **{
        f"tables-{m}": ("anonymize", _table, "t.csv", "r.csv", ["--k", "3", "--method", m, *TABLE])
        for m in ("hungarian", "sortgreedy", "greedy", "mondrian", "ring")
    },
    "tables-mip": (
        "anonymize",
        lambda p: _table(p, n=12),
        "t.csv",
        "r.csv",
        ["--k", "2", "--method", "mip", *SMALL],
    ),
    "tables-streamed": (
        "anonymize",
        _table,
        "t.csv",
        "r.csv",
        ["--k", "3", "--executor", "inline", "--partition-size", "12", *TABLE],
    ),
    "tables-parquet": ("anonymize", _table, "t.csv", "r.parquet", ["--k", "4", *TABLE]),
    **{
        f"tables-{m}": (
            "anonymize",
            lambda p: _table(p, n=30),
            "t.csv",
            "r.csv",
            ["--method", m, "--k-column", "level", *SMALL],
        )
        for m in ("bmatching", "bmatching-symmetric", "agglomerative")
    },
    "tables-kl": ("anonymize-kl", _table, "t.csv", "r.csv", ["--k", "3", "--known", "2", *TABLE]),
    **{
        f"sets-{m}": ("anonymize-sets", _dat, "t.dat", "r.jsonl", ["--k", "4", "--method", m])
        for m in ("gray-tsp", "gray")
    },
    "sets-cahd": (
        "anonymize-sets",
        _dat,
        "t.dat",
        "r.jsonl",
        ["--l", "2", "--method", "cahd", "--sensitive-file", "LABELS"],
    ),
    "sets-km": ("anonymize-km", _dat, "t.dat", "r.jsonl", ["--k", "3", "--m", "2"]),
    **{
        f"sparse-{m}": ("anonymize-sparse", _edges, "e.csv", "r.csv", ["--k", "4", "--method", m])
        for m in ("smooth", "nonsmooth", "mondrian")
    },
    "sparse-rr": (
        "anonymize-sparse",
        _edges,
        "e.csv",
        "r.csv",
        ["--k", "1", "--method", "rr", "--epsilon", "3"],
    ),
    "sparse-chunked": (
        "anonymize-sparse",
        lambda p: _edges(p, rows=300),
        "e.csv",
        "r.csv",
        ["--k", "4", "--chunk-rows", "100", "--executor", "inline"],
    ),
    "graphs": ("anonymize-graph", _graph, "g.csv", "r.csv", ["--k", "3"]),
}

DIGESTS: dict[str, str] = {
    "graphs": "1a65e979ec13344ab46c508ee35dbc713114b2a135c316a6eabc527cee97d4d3",
    "sets-cahd": "9c698e334817bb038ffc1230066dbb0015673f29a28435b1f6be4cd10c2c9872",
    "sets-gray": "5bfb26c7c428f8133ca85b30538babb21c9ae2c823a3c4a7e0f9debcebfeba39",
    "sets-gray-tsp": "c424d42c412d6cb39e07087ffb17dd3ad41d176967c9618a488981907df724b3",
    "sets-km": "8c0ac2b9aac6a62bd9e99dfbe383412ef2bc30c689f8b3788a734e4f92262d3b",
    "sparse-chunked": "16091f891889e472b16e30b1b40cdf7951de34bf3b4f465c5d7e9ea526b2f6c3",
    "sparse-mondrian": "00768ebfbc576d95316082e5fc3f6a1f0d366e3d09fbc5090ce3266c9f539252",
    "sparse-nonsmooth": "7084727707c1916e0190d42847fabebf6d6b2e362cda474f0a37487c1d967ec2",
    "sparse-rr": "c04c3cb9faadecabb518697791e517a6718c0d6aa40dc6f9247c8a03222ef4dd",
    "sparse-smooth": "5a860e816a0cb8ffee8ce1c4bbe7a1aeb140f1f68b38dad7b3275632d9dae97d",
    "tables-agglomerative": "9543b193a93ed0983dca6259f8e2264621e1016abcb1eed2ef528632e5c6b042",
    "tables-bmatching": "e5d09fce67b351e9ba12172fe85dfa339460a245836b8e8f7f5ef4a0bbb3893d",
    "tables-bmatching-symmetric": "e5d09fce67b351e9ba12172fe85dfa339460a245836b8e8f7f5ef4a0bbb3893d",  # noqa: E501
    "tables-greedy": "7e6d3447dbd1c8ed83b21235f00bf3d1678e8cbb20185b1120244b21c8a553b2",
    "tables-hungarian": "b8a106dd059d772a7060a8baae9b08444687e2bd6857a2ab57d14298e9f6fce6",
    "tables-kl": "fda1e6a5fb23ccff3818b7dfbef7b6caa9d4c8f60c5aaa87634308d9439f5af4",
    "tables-mip": "8bd0045d6142c9ff8decc689c3f814aa51b7a350fd3f99aabcd854ac7fa1ec64",
    "tables-mondrian": "1a8749b3629e3acc57d18069de9a39181a2e9b6c60e61e5f6eb8bb8b231041e7",
    "tables-parquet": "eb3086ff7e8b8c9117297dd1ec63f5f46e9a13aa136f470fb19c6cb314a3c700",  # noqa: E501 - issue 14: typed kept columns
    "tables-ring": "e1d4c194d76ee9adcee9bf08a48e26b0926df948a33b49b03923fe8b9a79c5e8",
    "tables-sortgreedy": "772db38b4878893f872c27fe1ca2292f5ca75d381177c97187873ac93c9ab154",
    "tables-streamed": "859eb2bcdc2edc75c9fcfcb1fbe00c1d9dfe9515ecff209b09a213af97ce9c7f",
}


def release_digest(name: str, workdir: Path) -> str:
    command, make, source, target, args = CASES[name]
    data = make(workdir / source)
    out = workdir / target
    args = [str(_labels(workdir / "labels.txt")) if a == "LABELS" else a for a in args]
    code = main([command, str(data), "-o", str(out), "--seed", "5", "-q", *args])
    assert code == 0, name
    paths = sorted(out.rglob("*")) if out.is_dir() else [out]
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_byte_identical(name: str, tmp_path: Path) -> None:
    assert release_digest(name, tmp_path) == DIGESTS[name]


if __name__ == "__main__":  # re-record the digests
    import tempfile

    for case in sorted(CASES):
        with tempfile.TemporaryDirectory() as tmp:
            print(f"    {case!r}: {release_digest(case, Path(tmp))!r},", file=sys.stdout)
