"""Hostile option values and ids give one line and exit 2, never an internal error or a huge
allocation (issue 15 item 6)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from anonymatch.cli import cli, main
from anonymatch.core.errors import InputError
from anonymatch.core.params import DIMENSION_FLOOR, check_dimensions, dimension_limit
from tests.cli.test_options import TABLE, _table

SEEDED = sorted(
    name for name, command in cli.commands.items() if any(p.name == "seed" for p in command.params)
)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_every_seeded_command_is_covered() -> None:
    assert len(SEEDED) >= 9 and "anonymize" in SEEDED and "generate-census" in SEEDED


@pytest.mark.parametrize("command", SEEDED)
@pytest.mark.parametrize("seed", ["-1", "-9223372036854775809"])
def test_a_negative_seed_is_one_line_exit_2_on_every_command(
    command: str, seed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([command, "--seed", seed, str(tmp_path / "in.csv")], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--seed must be a non-negative integer" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", SEEDED)
def test_a_non_integer_seed_is_one_line_exit_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([command, "--seed", "abc", str(tmp_path / "in.csv")], capsys)
    assert code == 2 and err.count("\n") == 1 and "--seed" in err, err


@pytest.mark.parametrize("quotechar", ["ab", "", "\n", ","])
@pytest.mark.parametrize("command", ["anonymize", "verify", "risk", "evaluate", "check-kl"])
def test_a_bad_quotechar_is_one_line_exit_2(
    command: str, quotechar: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = str(_table(tmp_path / "t.csv"))
    args = {
        "anonymize": ["-o", str(tmp_path / "r.csv"), "--k", "3", *TABLE],
        "verify": [src, "--k", "3", *TABLE[:4]],
        "risk": [src, *TABLE[:4]],
        "evaluate": [src, *TABLE[:4]],
        "check-kl": ["--k", "2", "--known", "1", *TABLE[:4]],
    }[command]
    code, out, err = run([command, src, *args, "--quotechar", quotechar], capsys)
    assert code == 2 and err.count("\n") == 1 and "quotechar must" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_the_python_reader_checks_the_quotechar_too() -> None:
    from anonymatch.tables.io import CsvOptions

    with pytest.raises(InputError, match="single character"):
        CsvOptions(quotechar="ab")
    with pytest.raises(InputError, match="differ from the separator"):
        CsvOptions(sep=";", quotechar=";")


HUGE = 10**12


def _huge(kind: str, d: Path) -> Path:
    if kind == "csv":
        path = d / "e.csv"
        path.write_text(f"row,col\n0,1\n{HUGE},2\n")
    elif kind == "col":
        path = d / "c.csv"
        path.write_text(f"row,col\n0,1\n1,{HUGE}\n")
    elif kind == "dat":
        path = d / "t.dat"
        path.write_text(f"1 2\n3 {HUGE}\n")
    elif kind == "mtx":
        path = d / "m.mtx"
        path.write_text(f"%%MatrixMarket matrix coordinate pattern general\n{HUGE} 5 1\n1 1\n")
    else:
        path = d / "e.parquet"
        pq.write_table(pa.table({"row": [0, HUGE, 3], "col": [1, 2, 3]}), path)
    return path


@pytest.mark.parametrize("kind", ["csv", "col", "dat", "mtx", "parquet"])
@pytest.mark.parametrize("extra", [[], ["--in-memory"]])
def test_a_huge_sparse_id_is_refused_before_any_allocation(
    kind: str, extra: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _huge(kind, tmp_path)
    out = tmp_path / ("r.parquet" if kind == "parquet" else "r.csv")
    code, _, err = run(["anonymize-sparse", str(src), "-o", str(out), "--k", "2", *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and "out of proportion" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]


def test_a_huge_vertex_count_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edges = tmp_path / "e.csv"
    edges.write_text("source,target\n0,1\n1,2\n2,0\n")
    out = tmp_path / "g.csv"
    argv = ["anonymize-graph", str(edges), "-o", str(out), "--k", "3", "--n", str(HUGE)]
    code, _, err = run(argv, capsys)
    assert code == 2 and "out of proportion" in err and not out.exists(), err


def test_the_dimension_limit() -> None:
    assert dimension_limit(0) == DIMENSION_FLOOR == 1 << 24
    assert dimension_limit(10**6) == 64 * 10**6
    check_dimensions(DIMENSION_FLOOR, DIMENSION_FLOOR, 0, "x")  # the floor itself is allowed
    with pytest.raises(InputError, match="column id"):
        check_dimensions(1, 64 * 10**6 + 1, 10**6, "x")
