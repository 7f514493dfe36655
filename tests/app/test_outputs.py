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


@pytest.mark.parametrize("name", ["r.ods", "r.json", "r", "r.csv.gz", "R.XLS"])
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


# -- issue 24 item 2: the sidecar is one of the outputs; inputs and outputs are regular files ----


def _table_release(path: str | Path) -> Output:
    return Output("-o/--output", str(path), TABLE_RELEASE_EXTENSIONS, True, sidecar=True)


def test_a_csv_release_claims_its_sidecar(tmp_path: Path) -> None:
    rel, side = tmp_path / "r.csv", tmp_path / "r.csv.schema.json"
    assert [o.path for o in _table_release(rel).written()] == [str(rel), str(side)]
    assert _table_release(tmp_path / "r.parquet").written() == [
        _table_release(tmp_path / "r.parquet")
    ]
    assert len(_table_release(tmp_path / "parts").written()) == 1  # a directory of parts
    with pytest.raises(InputError, match="same file as the release's sidecar"):
        check_outputs([_table_release(rel), _report(side)])
    with pytest.raises(InputError, match="would overwrite the input"):
        check_outputs([_table_release(rel)], [str(side)] if side.write_text("x") else [], True)
    with pytest.raises(InputError, match="pass --force"):
        check_outputs([_table_release(rel)], [], False)
    check_outputs([_table_release(rel)], [], True)


def test_devices_and_fifos_are_neither_inputs_nor_outputs(tmp_path: Path) -> None:
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=f"input is not a regular file: {fifo}"):
        check_outputs([_report(tmp_path / "m.json")], [str(fifo)])
    with pytest.raises(InputError, match="--report is not a regular file"):
        check_outputs([_report(fifo)], [], True)
    with pytest.raises(InputError, match="not a regular file: /dev/null"):
        check_outputs([], ["/dev/null"])
    check_outputs([], [str(tmp_path), "missing.csv"])  # a directory, a path that is not there
