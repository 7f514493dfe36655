"""Set-valued input formats, the JSONL release, and the three CLI commands."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from anonymatch.cli import main
from anonymatch.core.errors import InputError
from anonymatch.sets.io import read_set_release, read_transactions
from anonymatch.sets.methods import names


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def dat(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(60):
        items = sorted(set(rng.integers(0, 15, rng.integers(1, 6)).tolist()))
        lines.append(" ".join(map(str, items)) + " ")
    path = tmp_path / "t.dat"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture()
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.txt"
    path.write_text("\n".join(f"job{i % 10}" for i in range(60)) + "\n")
    return path


def test_formats_agree(tmp_path: Path) -> None:
    sets = [["a", "b"], ["b", "c", "d"], ["a"]]
    labels = ["x", "y", "x"]
    (tmp_path / "b.csv").write_text("a,b\nb, c ,d\na\n")
    (tmp_path / "l.csv").write_text("rid,item,job\n1,a,x\n1,b,x\n2,b,y\n2,c,y\n2,d,y\n3,a,x\n")
    (tmp_path / "j.jsonl").write_text(
        "\n".join(json.dumps({"items": s, "job": lab}) for s, lab in zip(sets, labels, strict=True))
    )
    (tmp_path / "lab.txt").write_text("x\ny\nx\n")
    a = read_transactions(tmp_path / "b.csv", labels_path=tmp_path / "lab.txt")
    b = read_transactions(tmp_path / "l.csv", "long", label_column="job")
    c = read_transactions(tmp_path / "j.jsonl", label_column="job")
    for t in (a, b, c):
        assert t.items == ["a", "b", "c", "d"]
        assert t.matrix.toarray().astype(int).tolist() == [[1, 1, 0, 0], [0, 1, 1, 1], [1, 0, 0, 0]]
        assert t.labels is not None and t.labels.tolist() == labels


def test_dat_reader(dat: Path) -> None:
    t = read_transactions(dat)
    assert t.n == 60 and t.integer_items
    assert [int(x) for x in t.items] == sorted(int(x) for x in t.items)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1 2\n\n3\n", "empty transaction"),
        ("1 2 2\n", "appears twice"),
        ("1 x\n", "not an integer"),
        ("", "no transactions"),
    ],
)
def test_dat_bad_input(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.dat"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_transactions(path)


def test_round_trip_k_and_l(
    dat: Path, labels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "rel.jsonl", tmp_path / "rel.json"
    code, stdout, err = run(
        ["anonymize-sets", str(dat), "-o", str(out), "--k", "4", "--seed", "1"]
        + ["--report", str(report), "--segment", "10,14"],
        capsys,
    )
    assert code == 0, err
    assert "PASS" in stdout
    manifest = json.loads(report.read_text())
    assert manifest["randomness"] == {"source": "seed"} and manifest["verification"]["passed"]
    assert (
        manifest["loss"]["order"]["hamming_gray_tsp"] <= manifest["loss"]["order"]["hamming_gray"]
    )
    first = json.loads(out.read_text().splitlines()[0])
    assert set(first) == {"items", "uncertain", "max_errors"}
    assert all(isinstance(x, int) for x in first["items"])
    code, stdout, _ = run(["verify-sets", str(dat), str(out), "--k", "4"], capsys)
    assert code == 0 and stdout.startswith("PASS")
    code, stdout, _ = run(["verify-sets", str(dat), str(out), "--k", "5"], capsys)
    assert code == 4 and stdout.startswith("FAIL")
    # ℓ-diversity, by every method that does it (ours and CAHD)
    for method in names(sensitive=True):
        rel = tmp_path / f"l_{method}.jsonl"
        code, _, err = run(
            [
                "anonymize-sets",
                str(dat),
                "-o",
                str(rel),
                "--l",
                "3",
                "--sensitive-file",
                str(labels),
            ]
            + ["--method", method, "--seed", "2", "-q"],
            capsys,
        )
        assert code == 0, err
        assert "label" in json.loads(rel.read_text().splitlines()[0])
        code, stdout, _ = run(["verify-sets", str(dat), str(rel), "--l", "3", "--json"], capsys)
        assert code == 0 and json.loads(stdout)["min_labels_original"] >= 3
    code, stdout, _ = run(
        ["evaluate-sets", str(dat), str(out), str(tmp_path / "l_cahd.jsonl"), "--json"], capsys
    )
    assert code == 0
    figures = json.loads(stdout)
    assert set(figures[str(out)]) >= {"query_error_type1", "expected_error_rate"}


def test_tampered_release_is_rejected(
    dat: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rel.jsonl"
    assert run(["anonymize-sets", str(dat), "-o", str(out), "--k", "3", "-q"], capsys)[0] == 0
    t = read_transactions(dat)
    assert read_set_release(out, t).n == 60
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for obj in lines:  # claim certainty everywhere
        obj["uncertain"], obj["max_errors"] = [], 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    code, stdout, _ = run(["verify-sets", str(dat), str(bad), "--k", "3"], capsys)
    assert code == 4 and "FAIL" in stdout
    bad.write_text("\n".join(json.dumps(x) for x in lines[1:]) + "\n")
    assert run(["verify-sets", str(dat), str(bad), "--k", "3"], capsys)[0] == 4


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("empty", 2),
        ("duplicate", 2),
        ("non_integer", 2),
        ("label_length", 2),
        ("k_too_large", 3),  # infeasible, as for every kind
        ("l_too_large", 3),
        ("both_levels", 2),
        ("not_eligible", 3),
        ("missing_input", 2),
        ("bad_segment", 2),
    ],
)
def test_bad_input_one_line_nothing_written(
    case: str,
    code: int,
    dat: Path,
    labels: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.jsonl"
    src, extra = dat, ["--k", "3"]
    if case in ("empty", "duplicate", "non_integer"):
        src = tmp_path / f"{case}.dat"
        src.write_text({"empty": "1 2\n\n3\n", "duplicate": "1 1\n", "non_integer": "1 a\n"}[case])
    elif case == "label_length":
        short = tmp_path / "short.txt"
        short.write_text("a\nb\n")
        extra = ["--l", "2", "--sensitive-file", str(short)]
    elif case == "k_too_large":
        extra = ["--k", "61"]
    elif case == "l_too_large":
        extra = ["--l", "61", "--sensitive-file", str(labels)]
    elif case == "both_levels":
        extra = ["--k", "2", "--l", "2"]
    elif case == "not_eligible":
        extra = ["--l", "8", "--sensitive-file", str(labels)]  # 10 labels of 6: not 15-eligible
    elif case == "missing_input":
        src = tmp_path / "nope.dat"
    elif case == "bad_segment":
        extra = ["--k", "2", "--segment", "5"]
    got, stdout, err = run(["anonymize-sets", str(src), "-o", str(out), *extra], capsys)
    assert got == code
    assert err.count("\n") == 1 and err.startswith("anonymatch: error:")
    assert not out.exists()


def _long_with_repeats(path: Path) -> tuple[int, int]:
    """A long file of 40 people with 2–4 codes each, some (person, code) rows repeated; returns
    (rows written, repeats)."""
    rng = np.random.default_rng(8)
    rows, repeats = ["person,code,group"], 0
    for p in range(40):
        codes = rng.choice(30, rng.integers(2, 5), replace=False).tolist()
        for c in codes:
            rows.append(f"p{p},c{c},g{p % 3}")
            if rng.random() < 0.3:
                rows.append(f"p{p},c{c},g{p % 3}")
                repeats += 1
    path.write_text("\n".join(rows) + "\n")
    return len(rows) - 1, repeats


def test_dedupe_counts_repeated_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "long.csv"
    _, repeats = _long_with_repeats(source)
    assert repeats > 0
    with pytest.raises(InputError, match="appears twice in record .*pass `dedupe`"):
        read_transactions(source, "long")
    t = read_transactions(source, "long", label_column="group", dedupe=True)
    assert t.duplicates_removed == repeats and t.n == 40
    assert t.take(np.arange(5)).duplicates_removed == repeats  # kept through take/with_labels
    out, report = tmp_path / "r.jsonl", tmp_path / "r.json"
    args = ["anonymize-sets", str(source), "-o", str(out), "--format", "long", "--k", "3"]
    code, _, err = run(args, capsys)
    assert code == 2 and "--dedupe" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    code, stdout, err = run([*args, "--dedupe", "--report", str(report), "--seed", "1"], capsys)
    assert code == 0, err
    assert f"duplicate (record, item) rows removed: {repeats}" in stdout
    assert json.loads(report.read_text())["input"]["duplicates_removed"] == repeats
    code, _, err = run(
        ["verify-sets", str(source), str(out), "--format", "long", "--k", "3", "--dedupe"], capsys
    )
    assert code == 0, err
