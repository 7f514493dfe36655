"""The CLI imports a data kind's modules only when one of its commands runs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

from anonymatch import __version__
from anonymatch.cli import LAZY_COMMANDS
from tests.factories import random_frame


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


# Libraries (and our own heavy modules) that a plain table ``anonymize`` or ``verify`` never
# uses: OR-Tools and HiGHS (``scipy.optimize``) are the suppression methods' and the exact MIP's,
# scikit-learn the learning models', SQLAlchemy the database paths', jinja2/starlette the web
# app's, OpenDP the DP companion's, Dask the streamed path's. Each costs tens of MiB of resident
# memory and tenths of a second in every process that imports it (issue 38).
NOT_FOR_A_PLAIN_TABLE = (
    "ortools",
    "scipy.optimize",
    "scipy.stats",
    "sklearn",
    "sqlalchemy",
    "jinja2",
    "starlette",
    "uvicorn",
    "opendp",
    "matplotlib",
    "dask",
    "distributed",
    "networkx",
    "openpyxl",
    "pyreadstat",
    "duckdb",
    "polars",
    "psycopg",
    "anonymatch.tables.methods.bmatching",
    "anonymatch.tables.methods.exact",
    "anonymatch.tables.models.adaptive",
    "anonymatch.tables.streamed",
    "anonymatch.report",
    "anonymatch.ui",
)
# What those runs do use: the probe below must see them, or it is not looking at a real run.
USED_BY_A_PLAIN_TABLE = ("numpy", "pandas", "numba", "scipy.sparse", "anonymatch.tables.verify")

_PROBE = """
import json, sys
from anonymatch.cli import main
code = main(sys.argv[2:])
names = json.loads(sys.argv[1])
print(json.dumps({"code": code, "loaded": [m for m in names if m in sys.modules]}))
"""


def _modules_after(args: list[str]) -> tuple[int, set[str]]:
    """Run the CLI with ``args`` in a fresh interpreter; its exit code and which of the
    watched modules it had imported by the end."""
    names = json.dumps([*NOT_FOR_A_PLAIN_TABLE, *USED_BY_A_PLAIN_TABLE])
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, names, *args], capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return int(found["code"]), set(found["loaded"])


def test_plain_anonymize_and_verify_import_only_what_they_use(tmp_path: Path) -> None:
    table, release = tmp_path / "people.csv", tmp_path / "release.csv"
    random_frame(60, 3).to_csv(table, index=False)
    options = ["--k", "3", "--qi", "n0,n1,c0,c1", "--numeric", "n0,n1", "--sensitive", "s"]
    code, loaded = _modules_after(["anonymize", str(table), "-o", str(release), *options, "-q"])
    assert code == 0 and release.is_file()
    assert loaded == set(USED_BY_A_PLAIN_TABLE), "anonymize imported " + ", ".join(
        sorted(loaded - set(USED_BY_A_PLAIN_TABLE))
    )
    code, loaded = _modules_after(["verify", str(table), str(release), *options])
    assert code == 0
    assert loaded == set(USED_BY_A_PLAIN_TABLE), "verify imported " + ", ".join(
        sorted(loaded - set(USED_BY_A_PLAIN_TABLE))
    )
