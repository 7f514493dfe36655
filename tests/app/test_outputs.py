"""app.outputs: the one output-path policy of every writer (issue 15 items 1 and 10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anonymatch.app.outputs import (
    JSON_EXTENSIONS,
    TABLE_RELEASE_EXTENSIONS,
    Output,
    check_outputs,
)
from anonymatch.core.errors import InputError, OutputError


def _release(path: str | Path, directory: bool = False) -> Output:
    return Output("-o/--output", str(path), TABLE_RELEASE_EXTENSIONS, directory)


def _report(path: str | Path) -> Output:
    return Output("--report", str(path), JSON_EXTENSIONS)


def test_distinct_outputs_in_an_existing_directory_pass(tmp_path: Path) -> None:
    check_outputs([_release(tmp_path / "r.csv"), _report(tmp_path / "r.json")])


@pytest.mark.parametrize("spelling", ["same", "dot", "parent", "symlink", "hardlink"])
def test_two_outputs_naming_one_file_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    target = "r.json"
    other = {
        "same": "r.json",
        "dot": "./r.json",
        "parent": "sub/../r.json",
        "symlink": "link.json",
        "hardlink": "hard.json",
    }[spelling]
    if spelling in ("symlink", "hardlink"):
        Path(target).write_text("{}")
        (os.symlink if spelling == "symlink" else os.link)(target, other)
    seed = Output("--seed-file", other, JSON_EXTENSIONS)
    with pytest.raises(InputError, match="is the same file as --report"):
        check_outputs([_report(target), seed], force=True)


def test_an_output_naming_an_input_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "t.csv"
    source.write_text("a\n1\n")
    link = tmp_path / "l.csv"
    link.symlink_to(source)
    for path in (source, link, tmp_path / "." / "t.csv"):
        with pytest.raises(InputError, match="would overwrite the input"):
            check_outputs([_release(path)], [str(source)], force=True)
    # strings that are not paths (column lists, numbers) never match
    check_outputs([_release(tmp_path / "r.csv")], ["age,sex", "3", str(source)])


def test_a_side_output_inside_a_directory_release_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="inside the output directory"):
        check_outputs([_release(f"{tmp_path}/rel/", True), _report(tmp_path / "rel" / "m.json")])
    with pytest.raises(InputError, match="holding the input"):
        (tmp_path / "rel").mkdir()
        (tmp_path / "rel" / "t.csv").write_text("a\n1\n")
        check_outputs([_release(f"{tmp_path}/rel", True)], [str(tmp_path / "rel" / "t.csv")], True)


@pytest.mark.parametrize("name", ["r.xlsx", "r.json", "r", "r.csv.gz", "R.XLS"])
def test_an_unsupported_extension_names_the_supported_ones(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError) as info:
        check_outputs([_release(tmp_path / name)])
    assert "unsupported extension" in str(info.value)
    assert ".csv, .tsv, .tab, .txt, .parquet, .pq" in str(info.value)


@pytest.mark.parametrize("name", ["r.CSV", "r.tsv", "r.parquet", "r.pq", "r.txt"])
def test_supported_extensions_any_case(tmp_path: Path, name: str) -> None:
    check_outputs([_release(tmp_path / name)])


def test_a_directory_release_needs_no_extension(tmp_path: Path) -> None:
    check_outputs([_release(tmp_path / "parts", True), _release(f"{tmp_path}/p2/", True)])


def test_existing_outputs_need_force(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    out.write_text("old")
    with pytest.raises(InputError, match="exists; pass --force"):
        check_outputs([_release(out)], force=False)
    with pytest.raises(InputError, match="exists; choose another path"):
        check_outputs([_release(out)], force=None)  # a command without --force
    check_outputs([_release(out)], force=True)
    assert out.read_text() == "old"  # checking never writes


def test_paths_that_cannot_be_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        check_outputs([_release(tmp_path / "d.csv")], force=True)
    with pytest.raises(InputError, match="directory does not exist"):
        check_outputs([_release(tmp_path / "nowhere" / "r.csv")])
    with pytest.raises(InputError, match="needs a path"):
        check_outputs([_release("")])
    monkeypatch.setattr("anonymatch.app.outputs.os.access", lambda *a, **k: False)
    with pytest.raises(OutputError, match="is not writable"):
        check_outputs([_release(tmp_path / "r.csv")])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a 0555 directory anyway")
def test_a_read_only_directory_is_refused_up_front(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        with pytest.raises(OutputError, match="not writable"):
            check_outputs([_release(locked / "r.csv")])
    finally:
        locked.chmod(0o755)
