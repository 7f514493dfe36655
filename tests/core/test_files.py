"""core.files: atomic writes, the all-or-nothing output set and refused writes (issue 15)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from anonymatch.core.errors import OutputError
from anonymatch.core.files import all_or_nothing, current_path, staging, write_atomically


def _enospc(tmp: Path) -> None:
    tmp.write_text("partial")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_write_atomically_outside_a_block_renames_at_once(tmp_path: Path) -> None:
    target = tmp_path / "a.csv"
    write_atomically(target, lambda tmp: tmp.write_text("x"))
    assert target.read_text() == "x" and os.listdir(tmp_path) == ["a.csv"]


def test_a_refused_write_names_the_file_and_the_reason_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(OutputError, match=r"^cannot write .*out\.csv: No space left on device$"):
        write_atomically(target, _enospc)
    assert os.listdir(tmp_path) == []
    assert OutputError.exit_code == 6


def test_a_block_commits_every_output_together(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    with all_or_nothing() as outputs:
        write_atomically(a, lambda tmp: tmp.write_text("release"))
        write_atomically(b, lambda tmp: tmp.write_text("report"))
        assert staging() is outputs
        assert not a.exists() and not b.exists()  # staged, not yet in place
        assert current_path(a).read_text() == "release"  # digests read the staged file
    assert staging() is None
    assert a.read_text() == "release" and b.read_text() == "report"
    assert sorted(os.listdir(tmp_path)) == ["a.csv", "b.json"]


@pytest.mark.parametrize(
    "failure", [OutputError("cannot write"), KeyboardInterrupt(), SystemExit(4)]
)
def test_a_failed_block_leaves_no_output_and_keeps_old_files(
    tmp_path: Path, failure: BaseException
) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text("old release")  # as with --force: replaced only if the whole run succeeds
    with pytest.raises(type(failure)), all_or_nothing():
        write_atomically(a, lambda tmp: tmp.write_text("new release"))
        write_atomically(b, lambda tmp: tmp.write_text("report"))
        raise failure
    assert a.read_text() == "old release"
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]


def test_when_only_the_report_fails_the_release_does_not_stay(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    with pytest.raises(OutputError, match="b.json: No space left"), all_or_nothing():
        write_atomically(a, lambda tmp: tmp.write_text("release"))
        write_atomically(b, _enospc)
    assert os.listdir(tmp_path) == []


def test_system_exit_0_commits(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    with pytest.raises(SystemExit), all_or_nothing():
        write_atomically(a, lambda tmp: tmp.write_text("x"))
        raise SystemExit(0)
    assert a.read_text() == "x"


def test_a_rename_failing_at_commit_undoes_the_renamed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    real = os.replace
    calls = []

    def flaky(src: str | Path, dst: str | Path) -> None:
        calls.append(dst)
        if Path(dst).name == "b.json":
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OutputError, match="b.json: Input/output error"), all_or_nothing():
        write_atomically(a, lambda tmp: tmp.write_text("release"))
        write_atomically(b, lambda tmp: tmp.write_text("report"))
    assert len(calls) == 2 and os.listdir(tmp_path) == []


def test_a_directory_output_replaces_the_old_directory_at_commit(tmp_path: Path) -> None:
    from anonymatch.core.files import StagedOutputs

    target = tmp_path / "parts"
    target.mkdir()
    (target / "old.parquet").write_text("old")
    new = tmp_path / ".parts.tmp"
    new.mkdir()
    (new / "part-00000.parquet").write_text("new")
    outputs = StagedOutputs()
    outputs.add(target, new)
    outputs.commit()
    assert [p.name for p in target.iterdir()] == ["part-00000.parquet"]
    assert sorted(os.listdir(tmp_path)) == ["parts"]
