"""Seed safety: ``--seed`` warns, ``--seed-file`` keeps the seed private (issue: seed safety).

For every command that takes ``--seed``: a one-line warning on stderr with ``--seed`` (also with
``-q``) and none without; ``--seed-file`` writes the seed used to a 0600 JSON file only when the
command succeeds, refuses an existing file without ``--force``, and passing that seed back with
``--seed`` reproduces the output byte for byte; the manifest never holds the seed or the file's
path, and a seed drawn from OS entropy is still recorded as ``os-entropy``.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pandas as pd
import pytest

from anonymatch.cli import cli, main
from anonymatch.cli.options import SEED_WARNING
from tests.cli.test_golden import _dat, _edges, _graph

SEED = 918273645  # large enough not to appear in a manifest by chance
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "manifest.schema.json"
QI = ["--qi", "age,job,sex", "--numeric", "age"]
TABLE = [*QI, "--sensitive", "disease,key"]
WARNING = f"anonymatch: {SEED_WARNING}\n"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Tiny inputs of every kind, and a release of each for the commands that read one."""
    from anonymatch.tables.synth import example_census_frame, fit_census_model

    d = tmp_path_factory.mktemp("seed-data")
    rng = np.random.default_rng(1)
    n = 24
    pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "job": [f"j{x}" for x in rng.integers(0, 3, n)],
            "sex": [("F", "M")[x] for x in rng.integers(0, 2, n)],
            "disease": [f"d{x}" for x in rng.integers(0, 3, n)],
            "key": np.arange(n),
        }
    ).to_csv(d / "t.csv", index=False)
    fit_census_model(example_census_frame(500)).save(d / "model.json")
    paths = {
        "table": d / "t.csv",
        "table_release": d / "t-release.csv",
        "dat": _dat(d / "t.dat", n=40),
        "sets_release": d / "t-release.jsonl",
        "edges": _edges(d / "e.csv"),
        "sparse_release": d / "e-release.csv",
        "graph": _graph(d / "g.csv"),
        "model": d / "model.json",
    }
    for args in (
        ["anonymize", str(paths["table"]), "-o", str(paths["table_release"]), "--k", "3", *TABLE],
        ["anonymize-sets", str(paths["dat"]), "-o", str(paths["sets_release"]), "--k", "3"],
        ["anonymize-sparse", str(paths["edges"]), "-o", str(paths["sparse_release"]), "--k", "4"],
    ):
        assert main([*args, "-q"]) == 0, args
    return {name: str(path) for name, path in paths.items()}


Argv = Callable[[dict[str, str], Path], list[str]]

# every command that takes --seed -> its arguments (inputs from ``data``, outputs in a directory)
CASES: dict[str, Argv] = {
    "anonymize": lambda d, o: ["anonymize", d["table"], "-o", f"{o}/r.csv", "--k", "3", *TABLE],
    "anonymize-kl": lambda d, o: (
        ["anonymize-kl", d["table"], "-o", f"{o}/r.csv", "--k", "3"] + ["--known", "2", *TABLE]
    ),
    "attack": lambda d, o: (
        ["attack", d["table"], d["table_release"], "--known", "1", "--key"]
        + ["key", "--k", "3", "--trials", "3", *QI, "--json"]
    ),
    "anonymize-sets": lambda d, o: ["anonymize-sets", d["dat"], "-o", f"{o}/r.jsonl", "--k", "3"],
    "evaluate-sets": lambda d, o: (
        ["evaluate-sets", d["dat"], d["sets_release"], "--queries"] + ["20", "--json"]
    ),
    "anonymize-km": lambda d, o: (
        ["anonymize-km", d["dat"], "-o", f"{o}/r.jsonl", "--k", "3"] + ["--m", "2"]
    ),
    "anonymize-sparse": lambda d, o: (
        ["anonymize-sparse", d["edges"], "-o", f"{o}/r.csv"] + ["--k", "4"]
    ),
    "evaluate-sparse": lambda d, o: ["evaluate-sparse", d["edges"], d["sparse_release"], "--json"],
    "anonymize-graph": lambda d, o: ["anonymize-graph", d["graph"], "-o", f"{o}/r.csv", "--k", "3"],
    "anonymize-rt": lambda d, o: (
        ["anonymize-rt", d["table"], "-o", f"{o}/r.jsonl", "--id", "key", "--item-column"]
        + ["job", "--qi", "age,sex", "--numeric", "age", "--k", "3"]
    ),
    "draw": lambda d, o: ["draw", d["table_release"], "-m", "2", "-o", f"{o}/draws"],
    "generate-census": lambda d, o: (
        ["generate-census", "-o", f"{o}/r.csv", "--rows", "50"] + ["--model", d["model"]]
    ),
}
RELEASES = sorted(c for c in CASES if c.startswith("anonymize"))  # write a --report manifest


def _argv(command: str, data: dict[str, str], out: Path) -> list[str]:
    out.mkdir(exist_ok=True)
    return CASES[command](data, out)


def _without_release_warnings(err: str) -> str:
    """stderr without the warnings about what a release keeps and leaks (issue 25: a test
    table's unique key column is flagged), which are not about the seed."""
    lines = err.splitlines(keepends=True)
    return "".join(
        ln for ln in lines if "--seed" in ln or not ln.startswith("anonymatch: warning:")
    )


def _result(argv: list[str], stdout: str) -> bytes:
    """What the command produced: the bytes of its -o file, else what it printed."""
    if "-o" not in argv:
        return stdout.encode()
    out = Path(argv[argv.index("-o") + 1])
    if out.is_dir():  # draw: the draws, in order
        return b"".join(p.read_bytes() for p in sorted(out.glob("draw_*")))
    return out.read_bytes()


def _values(obj: Any) -> list[Any]:
    """Every scalar anywhere in a JSON value."""
    if isinstance(obj, dict):
        return [v for value in obj.values() for v in _values(value)]
    if isinstance(obj, list):
        return [v for value in obj for v in _values(value)]
    return [obj]


def test_every_seeded_command_is_covered_and_takes_seed_file() -> None:
    seeded = {name for name, c in cli.commands.items() if any(p.name == "seed" for p in c.params)}
    assert seeded == set(CASES)
    for name in seeded:
        assert any(p.name == "seed_file" for p in cli.commands[name].params), name


@pytest.mark.parametrize("command", sorted(CASES))
def test_warning_with_seed_only(
    command: str, data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(command, data, tmp_path / "a")
    code, _, err = run([*argv, "--seed", str(SEED), "-q"], capsys)
    assert code == 0, err
    err = _without_release_warnings(err)
    assert err == WARNING  # one line, not silenced by -q, without the seed itself
    assert "\n" not in SEED_WARNING and str(SEED) not in err
    code, _, err = run([*_argv(command, data, tmp_path / "b"), "-q"], capsys)
    assert code == 0, err
    assert "warning" not in _without_release_warnings(err)


@pytest.mark.parametrize("command", sorted(CASES))
def test_seed_file_is_private_and_reproduces_the_run(
    command: str, data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # without --seed: a seed drawn from OS entropy, used, and kept in the private file
    first = _argv(command, data, tmp_path / "a")
    seed_file = tmp_path / "seed.json"
    code, out1, err = run([*first, "--seed-file", str(seed_file), "-q"], capsys)
    assert code == 0, err
    assert "warning" not in _without_release_warnings(err)
    assert stat.S_IMODE(seed_file.stat().st_mode) == 0o600
    record = json.loads(seed_file.read_text())
    assert record["command"] == command and record["source"] == "os-entropy"
    seed = record["seed"]
    assert isinstance(seed, int) and seed >= 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file
    # the seed passed back with --seed redoes the run: the same bytes
    second = _argv(command, data, tmp_path / "b")
    code, out2, err = run([*second, "--seed", str(seed), "-q"], capsys)
    assert code == 0, err
    assert _result(second, out2) == _result(first, out1)
    # with --seed, the file holds the seed given
    other = tmp_path / "given.json"
    code, _, err = run(
        [*_argv(command, data, tmp_path / "c"), "--seed", str(SEED), "--seed-file", str(other)],
        capsys,
    )
    assert code == 0 and err.count(WARNING) == 1, err
    assert stat.S_IMODE(other.stat().st_mode) == 0o600
    assert json.loads(other.read_text())["seed"] == SEED
    assert json.loads(other.read_text())["source"] == "seed"


@pytest.mark.parametrize("command", RELEASES)
def test_manifest_never_holds_the_seed(
    command: str, data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    seed_file, report = tmp_path / "seed.json", tmp_path / "m.json"
    # a given seed: "seed", and a private seed file was written (neither its value nor path)
    argv = [*_argv(command, data, tmp_path / "a"), "--report", str(report), "-q"]
    code, _, err = run([*argv, "--seed", str(SEED), "--seed-file", str(seed_file)], capsys)
    assert code == 0, err
    text = report.read_text()
    assert str(SEED) not in text and "seed.json" not in text
    manifest = json.loads(text)
    validator.validate(manifest)
    assert manifest["randomness"] == {"source": "seed", "seed_file": True}
    # a drawn seed kept in a seed file: still OS entropy
    seed_file.unlink()
    code, _, err = run([*argv, "--force", "--seed-file", str(seed_file)], capsys)
    assert code == 0, err
    manifest = json.loads(report.read_text())
    validator.validate(manifest)
    assert manifest["randomness"] == {"source": "os-entropy", "seed_file": True}
    drawn = json.loads(seed_file.read_text())["seed"]
    assert drawn not in _values(manifest) and str(drawn) not in _values(manifest)
    assert "seed.json" not in report.read_text()
    # --seed alone: the manifest is as before
    code, _, err = run([*argv, "--force", "--seed", str(SEED)], capsys)
    assert code == 0, err
    assert json.loads(report.read_text())["randomness"] == {"source": "seed"}
    assert str(SEED) not in report.read_text()


def test_schema_takes_only_a_true_seed_file_flag() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    randomness = validator.schema["properties"]["randomness"]
    for good in ({"source": "seed", "seed_file": True}, {"source": "os-entropy"}):
        assert validator.evolve(schema=randomness).is_valid(good)
    for bad in (
        {"source": "os-entropy", "seed_file": "/tmp/seed.json"},
        {"source": "seed", "seed_file": False},
        {"source": "seed", "seed_file": True, "seed": 5},
    ):
        assert not validator.evolve(schema=randomness).is_valid(bad)


def test_graph_with_kept_ids_has_no_randomness_to_keep(
    data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, seed_file = tmp_path / "m.json", tmp_path / "seed.json"
    argv = [*_argv("anonymize-graph", data, tmp_path / "a"), "--keep-ids", "--report", str(report)]
    code, _, err = run([*argv, "--seed-file", str(seed_file), "-q"], capsys)
    assert code == 0, err
    assert json.loads(report.read_text())["randomness"] == {"source": "none"}
    assert seed_file.exists()


# a level no tiny input can meet: the command fails after the seed file was checked
BAD_K = {
    "anonymize": "100",
    "anonymize-kl": "100",
    "anonymize-sets": "100",
    "anonymize-km": "100",
    "anonymize-sparse": "0",
    "anonymize-graph": "100",
}


@pytest.mark.parametrize("command", sorted(BAD_K))
def test_no_seed_file_when_the_command_fails(
    command: str, data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(command, data, tmp_path / "a")
    argv[argv.index("--k") + 1] = BAD_K[command]
    seed_file = tmp_path / "seed.json"
    for seeded in ([], ["--seed", str(SEED)]):
        code, out, err = run([*argv, *seeded, "--seed-file", str(seed_file), "-q"], capsys)
        assert code in (2, 3), err
        assert "error" in err.splitlines()[-1] and out == ""
        assert list(tmp_path.iterdir()) == [tmp_path / "a"]  # no seed file, no temp file
        assert list((tmp_path / "a").iterdir()) == []


def test_no_seed_file_when_interrupted(
    data: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anonymatch.tables.io.cells

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(anonymatch.tables.io.cells, "write_release", interrupt)
    seed_file = tmp_path / "seed.json"
    argv = _argv("anonymize", data, tmp_path / "a")
    code, _, err = run([*argv, "--seed-file", str(seed_file), "-q"], capsys)
    assert code == 130 and "interrupted" in err
    assert not seed_file.exists()


def test_existing_seed_file_is_refused_without_force(
    data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed_file = tmp_path / "seed.json"
    seed_file.write_text("keep")
    seed_file.chmod(0o644)
    argv = [*_argv("anonymize", data, tmp_path / "a"), "--seed-file", str(seed_file), "-q"]
    code, out, err = run([*argv, "--seed", str(SEED)], capsys)
    assert code == 2 and out == ""
    assert err == f"anonymatch: error: {seed_file} exists; pass --force to replace it\n"
    assert seed_file.read_text() == "keep" and not (tmp_path / "a" / "r.csv").exists()
    # --force replaces it, private again
    code, _, err = run([*argv, "--force"], capsys)
    assert code == 0, err
    assert stat.S_IMODE(seed_file.stat().st_mode) == 0o600
    assert json.loads(seed_file.read_text())["source"] == "os-entropy"
    # a command without --force never replaces it
    argv = [*_argv("evaluate-sets", data, tmp_path / "b"), "--seed-file", str(seed_file)]
    before = seed_file.read_text()
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err == f"anonymatch: error: {seed_file} exists; choose another path\n"
    assert seed_file.read_text() == before


def test_seed_file_must_not_be_an_input_or_output(
    data: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv("anonymize", data, tmp_path / "a")
    out = argv[argv.index("-o") + 1]
    cases = {
        out: "is the same file as -o/--output",
        str(tmp_path / "m.json"): "is the same file as --report",
        data["table"]: "would overwrite the input",
        str(tmp_path / "a"): "is a directory",
        str(tmp_path / "nowhere" / "s.json"): "directory does not exist",
    }
    for path, message in cases.items():
        code, _, err = run(
            [*argv, "--report", str(tmp_path / "m.json"), "--seed-file", path, "--force"], capsys
        )
        assert code == 2 and err.count("\n") == 1 and message in err, (path, err)
        assert not Path(out).exists() and not (tmp_path / "m.json").exists()
    assert "key" in Path(data["table"]).read_text()  # the input is intact
    # nor inside a directory release (replaced with --force), where it would be published too
    rel = tmp_path / "rel"
    rel.mkdir()
    argv = ["anonymize", data["table"], "-o", f"{rel}/", "--k", "3", *TABLE, "--executor"]
    code, _, err = run([*argv, "inline", "--seed-file", str(rel / "s.json"), "--force"], capsys)
    assert code == 2 and err.count("\n") == 1 and "inside the output" in err, err
    assert list(rel.iterdir()) == []
