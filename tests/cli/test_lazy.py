"""The CLI imports a data kind's modules only when one of its commands runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

from anonymatch import __version__
from anonymatch.cli import LAZY_COMMANDS


def test_lazy_table_names_every_command_once() -> None:
    found = {}
    for module in sorted(set(LAZY_COMMANDS.values())):
        for command in importlib.import_module(f"anonymatch.cli.{module}").COMMANDS:
            assert command.name not in found, command.name
            found[command.name] = module
    assert found == LAZY_COMMANDS


def test_version_loads_no_command_module_nor_numpy() -> None:
    code = (
        "import sys; from anonymatch.cli import main; rc = main(['--version']); "
        "heavy = [m for m in ('numpy', 'pandas', 'numba', 'scipy', 'anonymatch.cli.tables') "
        "if m in sys.modules]; print(heavy); sys.exit(rc)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert __version__ in out.stdout
    assert out.stdout.strip().endswith("[]")


def test_help_lists_every_command() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "from anonymatch.cli import main; main(['--help'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    for name in LAZY_COMMANDS:
        assert name in out.stdout
