"""``anonymatch warmup`` runs each kind's paths once (compiling and caching their kernels)."""

from __future__ import annotations

import importlib

import pytest

from anonymatch.cli import main

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
