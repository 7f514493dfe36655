"""The console script ends with ``os._exit`` after the interpreter's exit handlers
(``cli._skip_teardown``): exit codes, buffered output and the handlers of libraries must come
through unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = (
    "import atexit, sys\n"
    "from anonymatch.cli import entry\n"
    # a library's handler, registered after the CLI's: it must still run, and what it writes
    # to the (buffered, unflushed) stdout must still be written
    "atexit.register(lambda: sys.stdout.write('handler ran ' + 'x' * 100000))\n"
    # an object the interpreter's teardown would finalize: the fast exit skips that
    "class Witness:\n"
    "    def __del__(self):\n"
    "        sys.stderr.write('torn down')\n"
    "witness = Witness()\n"
    "sys.argv[0] = 'anonymatch'\n"
    "entry()\n"
)


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (["--version"], 0, ""),
        (["anonymize", "no-such-file.csv", "-o", "out.csv", "--k", "2", "--qi", "a"], 2, "error"),
        (["no-such-command"], 2, ""),
    ],
)
def test_exit_code_output_and_handlers_survive_the_fast_exit(
    tmp_path, args: list[str], code: int, stderr: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.endswith("handler ran " + "x" * 100000)
    if args == ["--version"]:
        assert proc.stdout.startswith("anonymatch, version")
    assert stderr in proc.stderr
    assert "torn down" not in proc.stderr  # the teardown was skipped


def test_the_witness_is_torn_down_without_the_fast_exit(tmp_path) -> None:
    """The control: the same script ending with ``sys.exit`` finalizes the witness."""
    script = SCRIPT.replace("entry()", "sys.exit(0)")
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0 and "torn down" in proc.stderr
