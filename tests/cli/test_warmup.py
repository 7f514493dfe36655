"""``anonymatch warmup`` runs each kind's paths once (compiling and caching their kernels)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

import anonymatch
from anonymatch.cli import main
from anonymatch.cli.warmup import write_bytecode

# one compiled kernel of each kind's path: warmup must have compiled it in this process
KERNELS = [
    ("anonymatch.tables.verify", "_compatible_pairs"),
    ("anonymatch.sets.order", "_gray_argsort"),
    ("anonymatch.sets.methods.nonreciprocal", "_bit_vote"),
    ("anonymatch.sparse.methods.smooth", "_meyerson"),
    ("anonymatch.relational.verify", "_joint_pairs"),
]


def test_warmup_quiet_compiles_every_kind_and_says_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["warmup", "-q"]) == 0
    assert capsys.readouterr().out == ""
    for module, name in KERNELS:
        kernel = getattr(importlib.import_module(module), name)
        assert kernel.signatures, f"{module}.{name} was not compiled by warmup"


def test_warmup_says_how_long(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup"]) == 0
    assert "kernels compiled and cached in" in capsys.readouterr().out


def test_write_bytecode_writes_current_bytecode_of_every_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path))  # not beside the sources
    assert write_bytecode()
    package = Path(anonymatch.__file__).parent
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 100
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_relative_to(tmp_path), cached
        header = cached.read_bytes()[:16]  # what the interpreter checks before using it
        assert header[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(header[4:8], "little") == 0  # validated by mtime and size
        stat = source.stat()
        assert int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
        assert int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFFFFFF
