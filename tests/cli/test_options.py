"""Every command speaks alike (issue 12): shared options, their names and their behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import cli, main

COMMANDS = sorted(cli.commands)
# commands that read an input file (all but the generator and the web app; draw reads a release
# typed by its sidecar or manifest, not a table with reading options)
READERS = [c for c in COMMANDS if c not in ("generate-census", "ui", "warmup", "draw")]
WRITERS = [c for c in COMMANDS if c.startswith("anonymize") or c == "generate-census"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _table(path: Path, n: int = 24) -> Path:
    rng = np.random.default_rng(1)
    pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "job": [f"j{x}" for x in rng.integers(0, 3, n)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, n)],
            "disease": [f"d{x}" for x in rng.integers(0, 3, n)],
        }
    ).to_csv(path, index=False)
    return path


def _dat(path: Path, n: int = 40) -> Path:
    rng = np.random.default_rng(2)
    lines = [
        " ".join(map(str, sorted(set(rng.integers(0, 8, rng.integers(1, 4)).tolist()))))
        for _ in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


TABLE = ["--qi", "age,job,sex", "--numeric", "age", "--sensitive", "disease"]


def test_every_command_is_listed_with_a_one_line_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    for name in COMMANDS:
        assert f"  {name} " in out
        doc = (cli.commands[name].help or "").strip()
        first = doc.splitlines()[0]
        assert first.endswith(".") and len(first) <= 60, (name, first)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_and_shared_options(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0
    assert "-v, --verbose" in out and "-q, --quiet" in out
    if command in READERS:
        assert "--format" in out
    if command in WRITERS:
        assert "-o, --output" in out and "--force" in out
    for old in ("--input-format", "--published-format", "--labels", "--label-column"):
        assert old not in out
    flat = " ".join(out.split())  # help text is wrapped
    if "--seed" in out:
        assert "OS entropy" in flat and "reproducible" in flat
    if "--executor" in out:
        assert "[auto|inline|threads|processes|dask]" in flat


def test_force_refuses_then_replaces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _table(tmp_path / "t.csv")
    out, rep = tmp_path / "r.csv", tmp_path / "r.json"
    args = ["anonymize", str(src), "-o", str(out), "--k", "3", *TABLE, "--seed", "1", "-q"]
    assert run(args, capsys)[0] == 0
    before = out.read_bytes()
    code, stdout, err = run([*args, "--seed", "2"], capsys)
    assert code == 2 and stdout == ""
    assert err == f"anonymatch: error: {out} exists; pass --force to replace it\n"
    assert out.read_bytes() == before
    # a report that exists is refused too, and nothing is written
    rep.write_text("keep")
    other = tmp_path / "other.csv"
    code, _, err = run([*args[:3], str(other), *args[4:], "--report", str(rep)], capsys)
    assert code == 2 and "r.json exists" in err and not other.exists()
    assert rep.read_text() == "keep"
    code, _, err = run([*args, "--report", str(rep), "--force"], capsys)
    assert code == 0, err
    assert json.loads(rep.read_text())["guarantee"]["k"] == 3


def test_force_replaces_a_directory_of_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _table(tmp_path / "t.csv")
    out = tmp_path / "rel"
    args = ["anonymize", str(src), "-o", f"{out}/", "--k", "3", *TABLE, "--executor", "inline"]
    assert run([*args, "--seed", "1", "-q"], capsys)[0] == 0
    code, _, err = run([*args, "--seed", "2", "-q"], capsys)
    assert code == 2 and "pass --force" in err
    code, _, err = run([*args, "--seed", "2", "-q", "--force"], capsys)
    assert code == 0, err
    assert [p.name for p in out.iterdir()] == ["part-00000.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "t.csv"]


def test_force_on_every_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dat = _dat(tmp_path / "t.dat")
    edges = tmp_path / "e.csv"
    edges.write_text("source,target\n0,1\n1,2\n2,0\n3,4\n4,5\n5,3\n")
    out = tmp_path / "exists.out"
    out.write_text("x")
    cases = {
        "anonymize-kl": [str(_table(tmp_path / "t.csv")), "--k", "2", "--known", "1", *TABLE],
        "anonymize-sets": [str(dat), "--k", "2"],
        "anonymize-km": [str(dat), "--k", "2", "--m", "1"],
        "anonymize-sparse": [str(edges), "--k", "2"],
        "anonymize-graph": [str(edges), "--k", "3"],
        "generate-census": ["--rows", "10"],
    }
    for command, args in cases.items():
        code, _, err = run([command, *args, "-o", str(out)], capsys)
        assert code == 2 and err.count("\n") == 1 and "pass --force" in err, command
        assert out.read_text() == "x"


@pytest.mark.parametrize("command", ["anonymize", "evaluate-sets", "attack", "anonymize-graph"])
def test_negative_seed_is_one_line_exit_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n")
    code, out, err = run([command, str(src), "x", "--seed", "-1"], capsys)
    assert code == 2 and out == ""
    assert err == "anonymatch: error: --seed must be a non-negative integer, got -1\n"


def test_kl_takes_known_not_l(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _table(tmp_path / "t.csv")
    rel = tmp_path / "r.csv"
    base = ["anonymize-kl", str(src), "-o", str(rel), "--k", "2", *TABLE, "--seed", "0", "-q"]
    code, _, err = run([*base, "-l", "1"], capsys)
    assert code == 2 and "-l" in err and err.count("\n") == 1 and not rel.exists()
    code, _, err = run([*base, "--l", "1"], capsys)
    assert code == 2 and not rel.exists()
    code, _, err = run([*base, "--known", "1"], capsys)
    assert code == 0, err
    code, out, err = run(["check-kl", str(rel), "--k", "2", "--known", "1", "--qi", "age,job,sex",
                          "--numeric", "age"], capsys)  # fmt: skip
    assert code == 0, err + out
    code, _, err = run(["check-kl", str(rel), "--k", "2", "-l", "1", "--qi", "age"], capsys)
    assert code == 2


def test_sets_sensitive_file_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dat = _dat(tmp_path / "t.dat")
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join(f"s{i % 4}" for i in range(40)) + "\n")
    rel = tmp_path / "r.jsonl"
    code, _, err = run(
        ["anonymize-sets", str(dat), "-o", str(rel), "--l", "2", "--sensitive-file", str(labels)]
        + ["--seed", "3", "-q"],
        capsys,
    )
    assert code == 0, err
    code, out, err = run(["verify-sets", str(dat), str(rel), "--l", "2", "--json"], capsys)
    assert code == 0 and json.loads(out)["passed"], err
    # --sensitive names the label key of a JSONL input
    jsonl = tmp_path / "t.jsonl"
    sets = [line.split() for line in dat.read_text().splitlines()]
    jsonl.write_text(
        "\n".join(json.dumps({"items": s, "job": f"s{i % 4}"}) for i, s in enumerate(sets)) + "\n"
    )
    rel2 = tmp_path / "r2.jsonl"
    code, _, err = run(
        ["anonymize-sets", str(jsonl), "-o", str(rel2), "--l", "2", "--sensitive", "job"]
        + ["--seed", "3", "-q"],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(["anonymize-sets", str(dat), "-o", str(rel2), "--labels", "x"], capsys)
    assert code == 2 and "--labels" in err


def test_table_format_forces_the_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _table(tmp_path / "t.csv")
    # a tab-separated file with a misleading extension, and a Parquet file without one
    tsv, pq = tmp_path / "t.data", tmp_path / "t.bin"
    frame = pd.read_csv(src)
    frame.to_csv(tsv, sep="\t", index=False)
    frame.to_parquet(pq)
    for path, fmt in ((tsv, "tsv"), (pq, "parquet"), (src, "csv")):
        out = tmp_path / f"r-{fmt}.csv"
        args = ["anonymize", str(path), "-o", str(out), "--k", "3", *TABLE, "-q"]
        code, _, err = run([*args, "--format", fmt], capsys)
        assert code == 0, (fmt, err)
        assert len(pd.read_csv(out)) == len(frame)
    code, _, err = run(["evaluate", str(tsv), str(tmp_path / "r-tsv.csv"), "--qi", "age,job,sex",
                        "--numeric", "age", "--format", "tsv"], capsys)  # fmt: skip
    assert code == 0, err
    # without --format the .data file is read with the tab its lines show, and says so
    # (issue 25); forced to CSV it is one column, so the QIs are missing
    code, _, err = run(["anonymize", str(tsv), "-o", str(tmp_path / "x.csv"), "--k", "3", *TABLE],
                       capsys)  # fmt: skip
    assert code == 0 and "with separator tab" in err
    code, _, err = run(["anonymize", str(tsv), "-o", str(tmp_path / "y.csv"), "--k", "3", *TABLE,
                        "--format", "csv"], capsys)  # fmt: skip
    assert code == 2


def test_sparse_format_and_release_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edges = tmp_path / "e.txt"
    rng = np.random.default_rng(0)
    pairs = sorted({(int(r), int(c)) for r, c in rng.integers(0, 20, (80, 2))})
    edges.write_text("row,col\n" + "\n".join(f"{r},{c}" for r, c in pairs) + "\n")
    rel = tmp_path / "r.csv"
    code, _, err = run(
        ["anonymize-sparse", str(edges), "-o", str(rel), "--k", "2", "--format", "edges"]
        + ["--executor", "inline", "--seed", "1", "-q"],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(
        ["verify-sparse", str(edges), str(rel), "--k", "2", "--format", "edges"]
        + ["--release-format", "edges"],
        capsys,
    )
    assert code == 0, err
    code, out, err = run(["evaluate-sparse", str(edges), str(rel), "--json"], capsys)
    assert code == 0 and isinstance(json.loads(out)["seed"], int), err


def test_evaluate_sets_prints_the_drawn_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dat = _dat(tmp_path / "t.dat")
    rel = tmp_path / "r.jsonl"
    assert run(["anonymize-sets", str(dat), "-o", str(rel), "--k", "2", "-q"], capsys)[0] == 0
    code, out, _ = run(["evaluate-sets", str(dat), str(rel), "--queries", "20", "--json"], capsys)
    seed = json.loads(out)["seed"]
    assert code == 0 and isinstance(seed, int) and seed >= 0
    again = ["evaluate-sets", str(dat), str(rel), "--queries", "20", "--json", "--seed", str(seed)]
    code, out2, _ = run(again, capsys)
    assert code == 0 and json.loads(out2) == json.loads(out)


def test_verbose_logs_progress_and_quiet_silences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dat = _dat(tmp_path / "t.dat")
    rel = tmp_path / "r.jsonl"
    code, out, err = run(["anonymize-km", str(dat), "-o", str(rel), "--k", "2", "--m", "2", "-v"],
                         capsys)  # fmt: skip
    assert code == 0 and "anonymatch: level " in err and "k^m" in out
    code, out, err = run(["anonymize-km", str(dat), "-o", str(rel), "--k", "2", "--m", "2", "-q",
                          "--force"], capsys)  # fmt: skip
    assert code == 0 and out == "" and err == ""
    code, _, err = run(["check-km", str(rel), "--k", "2", "--m", "2", "-v", "-q"], capsys)
    assert code == 2 and err.count("\n") == 1


def test_executor_threads_is_the_in_memory_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _table(tmp_path / "t.csv")
    out = tmp_path / "r.csv"
    args = ["anonymize", str(src), "-o", str(out), "--k", "3", *TABLE, "--seed", "4"]
    code, _, err = run(
        [*args, "--executor", "threads", "--report", str(tmp_path / "m.json")], capsys
    )
    assert code == 0, err
    assert json.loads((tmp_path / "m.json").read_text()).get("layout") != "partitioned"
    code, _, err = run([*args, "--executor", "threads", "--scheduler", "tcp://x:1", "--force"],
                       capsys)  # fmt: skip
    assert code == 2
