"""``anonymatch warmup`` runs the table paths once (compiling and caching their kernels)."""

from __future__ import annotations

import pytest

from anonymatch.cli import main


def test_warmup_runs_every_table_path_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup"]) == 0
    assert "kernels compiled and cached in" in capsys.readouterr().out


def test_warmup_quiet_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["warmup", "-q"]) == 0
    assert capsys.readouterr().out == ""
