"""Every writer command under the one output policy (issue 15 items 1, 3 and 10): side outputs
equal to the release or an input, unsupported extensions and refused writes give one line, a
documented exit code and nothing at any output path."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from anonymatch.cli import main
from tests.cli.test_options import TABLE, _dat, _table


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _edges(path: Path) -> Path:
    path.write_text("source,target\n0,1\n1,2\n2,0\n3,4\n4,5\n5,3\n")
    return path


# command -> (arguments after the input, release file name); the input is args[1]
def _commands(d: Path) -> dict[str, tuple[list[str], str]]:
    table, dat, edges = _table(d / "t.csv"), _dat(d / "t.dat"), _edges(d / "e.csv")
    return {
        "anonymize": (["anonymize", str(table), "--k", "3", *TABLE], "rel.csv"),
        "anonymize-streamed": (
            ["anonymize", str(table), "--k", "3", *TABLE, "--executor", "inline"],
            "rel.parquet",
        ),
        "anonymize-adaptive": (
            ["anonymize", str(table), "--k", "3", "--qi", "age,job,sex", "--method", "bmatching"],
            "rel.csv",
        ),
        "anonymize-kl": (
            ["anonymize-kl", str(table), "--k", "2", "--known", "1", *TABLE],
            "rel.csv",
        ),
        "anonymize-sets": (["anonymize-sets", str(dat), "--k", "2"], "rel.jsonl"),
        "anonymize-km": (["anonymize-km", str(dat), "--k", "2", "--m", "1"], "rel.jsonl"),
        "anonymize-sparse": (["anonymize-sparse", str(edges), "--k", "2"], "rel.csv"),
        "anonymize-graph": (["anonymize-graph", str(edges), "--k", "3"], "rel.csv"),
    }


COMMANDS = [
    "anonymize",
    "anonymize-streamed",
    "anonymize-adaptive",
    "anonymize-kl",
    "anonymize-sets",
    "anonymize-km",
    "anonymize-sparse",
    "anonymize-graph",
]


@pytest.fixture(params=COMMANDS)
def command(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[list[str], str]:
    """One command of ``_commands``, over inputs in ``tmp_path``: (arguments, release name)."""
    return _commands(tmp_path)[request.param]


def _listing(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def _refused(
    argv: list[str], d: Path, capsys: pytest.CaptureFixture[str], code: int, message: str
) -> None:
    before = _listing(d)
    got, out, err = run(argv, capsys)
    assert got == code and err.count("\n") == 1 and message in err, (argv, err)
    assert err.startswith("anonymatch: error: ") and out == ""
    assert _listing(d) == before  # nothing written, no temporary file left


def test_report_equal_to_the_release_is_refused(
    command: tuple[list[str], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args, name = command
    monkeypatch.chdir(tmp_path)
    for report in (name, f"./{name}", f"{tmp_path}/{name}"):
        _refused([*args, "-o", name, "--report", report], tmp_path, capsys, 2, "same file")
    (tmp_path / "link.json").symlink_to(tmp_path / name)  # a dangling link to the release
    _refused([*args, "-o", name, "--report", "link.json"], tmp_path, capsys, 2, "same file")


def test_seed_file_equal_to_the_report_or_release_is_refused(
    command: tuple[list[str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, name = command
    rel, rep = str(tmp_path / name), str(tmp_path / "m.json")
    for seed_file in (rep, rel):
        argv = [*args, "-o", rel, "--report", rep, "--seed-file", seed_file]
        _refused(argv, tmp_path, capsys, 2, "same file")


def test_no_output_may_be_the_input(
    command: tuple[list[str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, _ = command
    source = Path(args[1])
    text = source.read_text()
    for flag in ("-o", "--report"):
        others = ["--report", str(tmp_path / "m.json")] if flag == "-o" else ["-o", "x.csv"]
        argv = [*args, flag, str(source), *others, "--force"]
        _refused(argv, tmp_path, capsys, 2, "would overwrite the input")
    assert source.read_text() == text


@pytest.mark.parametrize("name", ["rel.xlsx", "rel.html"])
def test_an_unsupported_release_extension_names_the_formats(
    command: tuple[list[str], str], name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, good = command
    _refused([*args, "-o", str(tmp_path / name)], tmp_path, capsys, 2, "unsupported extension")
    _, _, err = run([*args, "-o", str(tmp_path / name)], capsys)
    assert Path(good).suffix in err  # the supported formats are listed
    rep = str(tmp_path / "m.csv")
    argv = [*args, "-o", str(tmp_path / good), "--report", rep]
    _refused(argv, tmp_path, capsys, 2, "--report")


def test_generate_census_refuses_an_unsupported_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate-census", "-o", str(tmp_path / "x.xlsx"), "--rows", "5"]
    _refused(argv, tmp_path, capsys, 2, "supported: .csv, .parquet")


def _fail_writes_to(monkeypatch: pytest.MonkeyPatch, prefix: str, code: int) -> None:
    """Make every write of a temporary file named ``.{prefix}…`` fail like the OS would."""
    real = Path.write_text

    def write_text(self: Path, *args: object, **kwargs: object) -> int:
        if self.name.startswith(f".{prefix}."):
            raise OSError(code, os.strerror(code))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", write_text)


def test_a_report_that_cannot_be_written_takes_the_release_with_it(
    command: tuple[list[str], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args, name = command
    argv = [*args, "-o", str(tmp_path / name), "--report", str(tmp_path / "m.json"), "-q"]
    _fail_writes_to(monkeypatch, "m.json", errno.ENOSPC)
    _refused(argv, tmp_path, capsys, 6, "m.json: No space left on device")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EIO])
def test_a_refused_seed_file_takes_release_and_report_with_it(
    code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args, name = _commands(tmp_path)["anonymize-sets"]
    rel, rep, seed = (str(tmp_path / x) for x in (name, "m.json", "s.json"))
    _fail_writes_to(monkeypatch, "s.json", code)
    argv = [*args, "-o", rel, "--report", rep, "--seed-file", seed, "-q"]
    _refused(argv, tmp_path, capsys, 6, f"cannot write {seed}: {os.strerror(code)}")


def test_a_release_that_cannot_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    def full(self: pd.DataFrame, path: object, *args: object, **kwargs: object) -> None:
        Path(str(path)).write_bytes(b"age,jo")  # a partial write, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    args, name = _commands(tmp_path)["anonymize"]
    rel = str(tmp_path / name)
    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    # the text-only release writer (core.csvsafe.write_text_csv) fails the same way
    monkeypatch.setattr("anonymatch.tables.io.cells.write_text_csv", full)
    argv = [*args, "-o", rel, "--report", str(tmp_path / "m.json"), "-q"]
    _refused(argv, tmp_path, capsys, 6, f"cannot write {rel}: No space left on device")


def test_a_streamed_release_that_cannot_be_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from anonymatch.tables.io.stream import ReleaseWriter

    def full(self: ReleaseWriter, table: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    args, name = _commands(tmp_path)["anonymize-streamed"]
    rel = str(tmp_path / name)
    monkeypatch.setattr(ReleaseWriter, "_write", full)
    _refused([*args, "-o", rel, "-q"], tmp_path, capsys, 6, "No space left on device")


def test_a_failed_run_with_force_keeps_the_old_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args, name = _commands(tmp_path)["anonymize"]
    rel, rep = tmp_path / name, tmp_path / "m.json"
    rel.write_text("old release\n")
    rep.write_text("{}\n")
    _fail_writes_to(monkeypatch, "m.json", errno.ENOSPC)
    argv = [*args, "-o", str(rel), "--report", str(rep), "--force", "-q"]
    _refused(argv, tmp_path, capsys, 6, "No space left on device")
    assert rel.read_text() == "old release\n" and rep.read_text() == "{}\n"
    monkeypatch.undo()
    assert run(argv, capsys)[0] == 0  # the same run with room to write
    assert rel.read_text().startswith("age,") and '"schema"' in rep.read_text()


def test_a_successful_run_commits_release_report_and_seed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    args, name = _commands(tmp_path)["anonymize"]
    rel, rep, seed = tmp_path / name, tmp_path / "m.json", tmp_path / "s.json"
    argv = [*args, "-o", str(rel), "--report", str(rep), "--seed-file", str(seed), "-q"]
    assert run(argv, capsys)[0] == 0
    manifest = json.loads(rep.read_text())
    from anonymatch.core.files import sha256_file

    assert manifest["output"]["sha256"] == sha256_file(rel)  # the digest of the committed file
    assert json.loads(seed.read_text())["seed"] >= 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
