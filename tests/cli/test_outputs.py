"""Every writer command under the one output policy (issue 15 items 1, 3 and 10): side outputs
equal to the release or an input, unsupported extensions and refused writes give one line, a
documented exit code and nothing at any output path."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
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


@pytest.mark.parametrize("name", ["rel.xls", "rel.html"])
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
    # the CSV writer (core.csvsafe.write_csv: text-only or pandas) fails the same way
    monkeypatch.setattr("anonymatch.tables.io.cells.write_csv", full)
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


# -- issue 24 item 2: one file set per run (sidecar, job file, hierarchies, init) ----------------


def _anonymize(d: Path) -> list[str]:
    return ["anonymize", str(_table(d / "t.csv")), "--k", "3", *TABLE, "-q"]


def test_the_sidecar_is_an_output_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CSV release's RELEASE.schema.json is claimed with the other outputs: never an input
    (not even with --force), never another output, never replaced without --force."""
    args, rel = _anonymize(tmp_path), tmp_path / "r.csv"
    sidecar = tmp_path / "r.csv.schema.json"
    sidecar.write_text("precious,data\n1,2\n")  # an input that happens to bear the name
    _refused([args[0], str(sidecar), *args[2:], "-o", str(rel), "--force"],
             tmp_path, capsys, 2, "sidecar")  # fmt: skip
    _refused([*args, "-o", str(rel)], tmp_path, capsys, 2, "pass --force")
    assert sidecar.read_text() == "precious,data\n1,2\n"
    sidecar.unlink()
    for flag in ("--report", "--seed-file", "--report-html"):
        _refused([*args, "-o", str(rel), flag, str(sidecar)], tmp_path, capsys, 2, "sidecar")
    code, _, err = run([*args, "-o", str(tmp_path / "r.parquet"), "--report", str(sidecar)], capsys)
    assert code == 0, err  # a Parquet release has no sidecar


def test_risk_report_may_not_replace_the_sidecar_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, rel = _anonymize(tmp_path), tmp_path / "r.csv"
    assert run([*args, "-o", str(rel)], capsys)[0] == 0
    sidecar = f"{rel}.schema.json"
    argv = ["risk", args[1], str(rel), *TABLE, "--report", sidecar, "--force", "-q"]
    _refused(argv, tmp_path, capsys, 2, "would overwrite the input")


def test_no_output_may_replace_the_job_file_or_a_hierarchy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    table = _table(tmp_path / "t.csv")
    job = tmp_path / "job.json"  # any name: the job file is an input of the run
    job.write_text(
        f'schema = "anonymatch-job/1"\nkind = "table"\n[input]\npath = "{table.name}"\n'
        '[columns.age]\nrole = "qi"\ntype = "numeric"\n[columns.job]\nrole = "qi"\n'
        '[model]\nk = 3\n[output]\npath = "r.csv"\nreport = "job.json"\n'
    )
    text = job.read_text()
    _refused(["anonymize", "--config", str(job), "--force", "-q"], tmp_path, capsys, 2,
             "would overwrite the input")  # fmt: skip
    assert job.read_text() == text
    tree = tmp_path / "h.csv"
    tree.write_text("j0;j;*\nj1;j;*\nj2;j;*\n")
    argv = [*_anonymize(tmp_path), "--hierarchy", f"job={tree}", "-o", str(tree), "--force"]
    _refused(argv, tmp_path, capsys, 2, "would overwrite the input")


def test_init_writes_a_toml_that_is_not_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _table(tmp_path / "t.csv")
    text = table.read_text()
    _refused(["init", str(table), "-o", str(table), "--force"], tmp_path, capsys, 2,
             "would overwrite the input")  # fmt: skip
    assert table.read_text() == text
    _refused(["init", str(table), "-o", str(tmp_path / "job.csv")], tmp_path, capsys, 2, ".toml")
    code, _, err = run(["init", str(table), "-o", str(tmp_path / "job.toml"), "-q"], capsys)
    assert code == 0, err


def test_a_job_file_scheduler_needs_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 7: execution.scheduler alone never sends the table anywhere."""
    monkeypatch.chdir(tmp_path)
    table = _table(tmp_path / "t.csv")
    job = tmp_path / "job.toml"
    job.write_text(
        f'schema = "anonymatch-job/1"\nkind = "table"\n[input]\npath = "{table.name}"\n'
        '[columns.age]\nrole = "qi"\ntype = "numeric"\n[columns.job]\nrole = "qi"\n'
        '[model]\nk = 3\n[execution]\nscheduler = "tcp://127.0.0.1:9"\n'
        '[output]\npath = "r.csv"\n'
    )
    for command in (["anonymize"], ["verify", str(table), "r.csv"]):
        _refused([*command, "--config", str(job), "-q"], tmp_path, capsys, 2,
                 "--scheduler tcp://127.0.0.1:9")  # fmt: skip


# -- issue 24 item 7: device files and FIFOs are refused before anything is read ------------------


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO with a writer serving every open of it (so that the old code, which read it,
    failed these tests instead of hanging)."""
    import threading

    path = tmp_path / "fifo.csv"
    os.mkfifo(path)
    done = threading.Event()

    def feed() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError), open(path, "w") as fh:
                fh.write("age,job,sex\n1,a,F\n")

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    yield path
    done.set()
    with contextlib.suppress(OSError):  # release the writer waiting for a reader
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    writer.join(5)


DEVICE_COMMANDS = [
    ["anonymize", "{x}", "-o", "{d}/r.csv", "--k", "2", "--qi", "age"],
    ["anonymize", "{t}", "-o", "{d}/r.csv", "--k", "2", "--qi", "age,job",
     "--hierarchy", "job={x}"],
    ["anonymize", "{t}", "-o", "{d}/r.csv", "--k", "2", "--qi", "age", "--config", "{x}"],
    ["verify", "{x}", "{t}", "--k", "2", "--qi", "age"],
    ["verify", "{t}", "{t}", "--manifest", "{x}"],
    ["report", "--manifest", "{x}", "-o", "{d}/r.html"],
    ["risk", "{x}", "{t}", "--qi", "age"],
    ["init", "{x}"],
    ["anonymize-sets", "{x}", "-o", "{d}/r.jsonl", "--k", "2"],
    ["verify-sets", "{x}", "{x}", "--k", "2"],
    ["check-km", "{x}", "--k", "2", "--m", "1"],
    ["check-graph", "{x}", "--k", "2"],
    ["anonymize-graph", "{x}", "-o", "{d}/r.csv", "--k", "2"],
]  # fmt: skip


@pytest.mark.parametrize("argv", DEVICE_COMMANDS, ids=lambda a: "-".join(a[:2]))
@pytest.mark.parametrize("kind", ["fifo", "char-device"])
def test_a_device_or_fifo_is_refused_in_one_line(
    argv: list[str], kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    table = _table(tmp_path / "t.csv")
    device = request.getfixturevalue("fifo") if kind == "fifo" else Path("/dev/null")
    args = [a.format(x=device, t=table, d=tmp_path) for a in argv]
    _refused(args, tmp_path, capsys, 2, f"not a regular file: {device}")


def test_an_existing_device_output_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*_anonymize(tmp_path), "-o", "/dev/null", "--force"]
    _refused(argv, tmp_path, capsys, 2, "-o/--output is not a regular file: /dev/null")
