"""core.lifecycle: the one cancellation and cleanup policy (issue 15, item 2); the CLI's
signal handling is tested in tests/cli/test_signals.py."""

from __future__ import annotations

import fcntl
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anonymatch.core import lifecycle
from anonymatch.core.files import write_atomically
from anonymatch.core.runner import iter_partitions

# processes that must be gone within 5 s of a kill: alone under xdist (conftest.py)
pytestmark = pytest.mark.serial


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    lifecycle.reset(active=True)
    yield
    lifecycle.reset()


def test_private_dir_is_0700_locked_and_removed(tmp_path: Path) -> None:
    with lifecycle.private_directory("anonymatch-test-", tmp_path) as d:
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        with pytest.raises(BlockingIOError):  # held by the run
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
        assert lifecycle.sweep_stale(tmp_path, "anonymatch-test-") == []  # a live one stays
        (d / "data").write_text("x")
    assert list(tmp_path.iterdir()) == []


def test_sweep_removes_only_unlocked_own_directories(tmp_path: Path) -> None:
    stale = tmp_path / "anonymatch-spill-dead"
    stale.mkdir()
    (stale / "others.arrow").write_text("secret")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("mine")
    (tmp_path / "anonymatch-spill-link").symlink_to(victim)
    other = tmp_path / "unrelated"
    other.mkdir()
    held = tmp_path / "anonymatch-spill-live"
    held.mkdir()
    holder = subprocess.Popen(  # another live run holds its directory
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)",
            str(held),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        removed = lifecycle.sweep_stale(tmp_path, "anonymatch-spill-")
    finally:
        holder.kill()
        holder.wait()
    assert removed == [stale]
    assert held.is_dir() and other.is_dir() and (victim / "keep").read_text() == "mine"
    assert (tmp_path / "anonymatch-spill-link").is_symlink()


def test_anonymous_file_has_no_name_and_mode_0600(tmp_path: Path) -> None:
    fd, path = lifecycle.anonymous_file(tmp_path, "spill")
    try:
        os.write(fd, b"sensitive")
        if path.startswith("/proc/"):
            assert list(tmp_path.iterdir()) == []
        assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o600
        with open(path, "rb") as fh:
            assert fh.read() == b"sensitive"
    finally:
        os.close(fd)


def test_cancel_removes_temps_and_committed_outputs_and_refuses_commits(tmp_path: Path) -> None:
    kept = tmp_path / "kept.csv"
    kept.write_text("from an earlier run")
    out = tmp_path / "release.csv"
    write_atomically(out, lambda tmp: tmp.write_text("release"))
    assert out.read_text() == "release"
    tmp = lifecycle.hidden_temp(tmp_path, ".report.json.")
    assert stat.S_IMODE(tmp.stat().st_mode) == 0o600
    killed: list[bool] = []
    lifecycle.register_pool(lambda: killed.append(True))
    lifecycle.cancel(signal.SIGTERM)
    assert killed == [True]
    assert not out.exists() and not tmp.exists() and kept.exists()
    with pytest.raises(lifecycle.Interrupted) as info:
        write_atomically(tmp_path / "late.csv", lambda t: t.write_text("late"))
    assert info.value.exit_code == 143
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.csv"]
    with pytest.raises(lifecycle.Interrupted):
        lifecycle.check()
    with pytest.raises(lifecycle.Interrupted):  # a cancelled runner starts no new job
        list(iter_partitions(lambda x: x, range(3), executor="inline"))


def test_stale_output_temp_is_swept_by_the_next_writer(tmp_path: Path) -> None:
    stale = tmp_path / ".release.csv.abc123.tmp"
    stale.write_text("half a release from a killed run")
    write_atomically(tmp_path / "release.csv", lambda tmp: tmp.write_text("new"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.csv"]


WORKER = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from anonymatch.core import lifecycle
pool = ProcessPoolExecutor(2, initializer=lifecycle.worker_init, initargs=(os.getpid(),))
print(*{f.result() for f in [pool.submit(os.getpid) for _ in range(8)]}, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux-only")
def test_pool_workers_die_with_a_killed_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", WORKER], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pids = {int(p) for p in parent.stdout.readline().split()}
    assert pids and parent.pid not in pids
    parent.kill()  # SIGKILL: no handler, no atexit
    parent.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    assert not [p for p in pids if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
