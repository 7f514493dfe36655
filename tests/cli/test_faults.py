"""Fault injection (issue 15): signals on both table paths, a killed Dask worker, a scheduler
that never answers or answers garbage, a planted Dask scratch directory.

Each signal test runs the real CLI in a subprocess with its own ``$TMPDIR`` and an empty
output directory, and checks the exit code, the time from the signal to the exit, the one
line on stderr, that no process of the run is left and that nothing is left in ``$TMPDIR`` or
beside the output."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from anonymatch.cli import main
from anonymatch.core import lifecycle
from anonymatch.core.runner import dask_client, iter_partitions
from anonymatch.tables.synth import example_census_frame

psutil = pytest.importorskip("psutil")
# bounds on the seconds from a signal to the exit: alone under xdist (conftest.py)
pytestmark = pytest.mark.serial

SCHEMA = ["--qi", "age,workclass,education-num,marital-status,occupation,race,sex,native-country"]
SCHEMA += ["--numeric", "age,education-num", "--sensitive", "income", "--l", "1"]  # plain k: long
STREAMED = ["--executor", "processes", "--workers", "2", "--chunk-rows", "2000"]
ONE_LINE = "anonymatch: interrupted; nothing written"


@pytest.fixture(scope="module")
def census_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("data") / "census.csv"
    example_census_frame(30_000, seed=4).to_csv(path, index=False)
    return path


class Run:
    """The CLI in a subprocess with a private $TMPDIR and an empty output directory."""

    def __init__(self, tmp_path: Path, args: list[str]) -> None:
        self.tmp, self.out = tmp_path / "tmp", tmp_path / "out"
        self.tmp.mkdir()
        self.out.mkdir()
        args = [a.replace("{out}", str(self.out)) for a in args]
        code = "from anonymatch.cli import entry; entry()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "TMPDIR": str(self.tmp)},
        )
        self.ps = psutil.Process(self.proc.pid)

    def wait_for(self, workers: int, then: float, timeout: float = 90) -> list[psutil.Process]:
        deadline = time.monotonic() + timeout
        while len(self.ps.children(recursive=True)) < workers and time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[1]
            time.sleep(0.05)
        time.sleep(then)
        assert self.proc.poll() is None, "finished before the signal: make the run longer"
        return list(self.ps.children(recursive=True))

    def wait_for_read(self, source: Path, then: float, at_most: float) -> None:
        """Until the run has opened ``source`` and closed it again (imports done, input read:
        the kernels come next), then ``then`` seconds more; ``at_most`` seconds from now if
        the read was too short to be seen between two looks."""
        source, opened = source.resolve(), False
        deadline = time.monotonic() + at_most
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[1]
            try:
                now_open = any(Path(f.path) == source for f in self.ps.open_files())
            except psutil.Error:  # the process is exiting: the poll above says why
                now_open = opened
            if opened and not now_open:
                break
            opened = opened or now_open
            time.sleep(0.01)
        time.sleep(then)
        assert self.proc.poll() is None, "finished before the signal: make the run longer"

    def wait_for_release_temp(self, timeout: float = 90) -> None:
        """Until the release's hidden temporary exists beside the output (chunks written)."""
        deadline = time.monotonic() + timeout
        while not list(self.out.glob(".release.csv.*.tmp")) and time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[1]
            time.sleep(0.05)
        assert self.proc.poll() is None, "finished before the signal: make the run longer"

    def signal(self, sig: int) -> tuple[int, float, str]:
        start = time.monotonic()
        self.proc.send_signal(sig)
        _, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, time.monotonic() - start, err


def _left_alive(children: list[psutil.Process], within: float = 5.0) -> list[int]:
    deadline = time.monotonic() + within
    while True:
        alive = [c.pid for c in children if _running(c)]
        if not alive or time.monotonic() > deadline:
            for pid in alive:  # never leave them behind, even on failure
                os.kill(pid, signal.SIGKILL)
            return alive
        time.sleep(0.05)


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_streamed_signal_stops_workers_and_cleans_up(
    census_csv: Path, tmp_path: Path, sig: int, code: int
) -> None:
    args = ["anonymize", str(census_csv), "-o", "{out}/release.csv", "--k", "10", "-q"]
    run = Run(tmp_path, [*args, *SCHEMA, *STREAMED])
    children = run.wait_for(workers=2, then=0.0)
    run.wait_for_release_temp()
    assert any(run.tmp.iterdir())  # the private spill directory exists
    rc, seconds, err = run.signal(sig)
    assert (rc, err.strip()) == (code, ONE_LINE)
    assert seconds <= 5.0
    assert _left_alive(children) == []
    assert _files(run.tmp) == [] and _files(run.out) == []


def test_streamed_sigkill_leaves_no_worker_and_no_named_spill(
    census_csv: Path, tmp_path: Path
) -> None:
    args = ["anonymize", str(census_csv), "-o", "{out}/release.csv", "--k", "10", "-q"]
    run = Run(tmp_path, [*args, *SCHEMA, *STREAMED])
    children = run.wait_for(workers=2, then=0.0)
    run.wait_for_release_temp()
    rc, _, _ = run.signal(signal.SIGKILL)
    assert rc == -signal.SIGKILL
    assert _left_alive(children) == []
    # the spill file was unlinked when opened: only its empty private directory is left …
    left = [p for p in run.tmp.rglob("*") if p.is_file()]
    assert left == []
    # … and the next run sweeps it, with any hidden temporary beside the output
    stale = {p.name for p in run.tmp.iterdir()}
    assert {p.name for p in lifecycle.sweep_stale(run.tmp, "anonymatch-")} == stale
    assert [p.name for p in lifecycle.sweep_stale(run.out, ".release.csv.", ".tmp")]
    assert _files(run.tmp) == [] and _files(run.out) == []


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_in_memory_signal_exits_within_two_seconds(
    census_csv: Path, tmp_path: Path, sig: int, code: int
) -> None:
    # k = 50: the whole run must outlast the wait below (the input read, then 1 s; at most
    # 5 s); k = 10 (≈ 5 s on an idle machine before issue 17) and, since the cheaper closed
    # walk, k = 25 could end before the signal. Waiting for the read, not a fixed 5 s, saves
    # about 3 s per signal on an idle machine.
    args = ["anonymize", str(census_csv), "-o", "{out}/release.csv", "--k", "50", "-q"]
    run = Run(tmp_path, [*args, *SCHEMA, "--report", "{out}/release.json"])
    run.wait_for_read(census_csv, then=1.0, at_most=5.0)  # input read, numba kernels running
    rc, seconds, err = run.signal(sig)
    assert (rc, err.strip()) == (code, ONE_LINE)  # not "internal error: SystemError"
    assert seconds <= 2.0
    assert _files(run.tmp) == [] and _files(run.out) == []


def _slow_double(x: int) -> int:
    time.sleep(0.3)
    return 2 * x


def test_killed_dask_worker_mid_run() -> None:
    """A Dask worker killed mid-run: the scheduler reruns its tasks (results complete and in
    order), or the run stops with WorkerError (exit 5) — never a hang or a wrong result."""
    seen: list[int] = []

    def kill_one() -> None:  # once the cluster's 2 worker processes are up
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            spawned = [
                proc
                for proc in psutil.Process().children(recursive=True)
                if "spawn_main" in " ".join(proc.cmdline())
            ]
            workers = [p for p in spawned if "resource_tracker" not in " ".join(p.cmdline())]
            if len(workers) >= 2:
                time.sleep(1.0)
                seen.append(workers[0].pid)
                os.kill(workers[0].pid, signal.SIGKILL)
                return
            time.sleep(0.1)

    threading.Thread(target=kill_one, daemon=True).start()
    try:
        results = list(iter_partitions(_slow_double, range(40), executor="dask", workers=2))
    except Exception as exc:  # the documented alternative: WorkerError, one line
        from anonymatch.core.errors import WorkerError

        assert isinstance(exc, WorkerError), exc
        return
    assert results == [2 * x for x in range(40)]
    assert seen, "no Dask worker process found to kill"


@pytest.fixture
def hostile_peer() -> Iterator[tuple[int, int]]:
    """Two local TCP servers on 127.0.0.1: one accepts and never answers, one answers with
    bytes that are not Dask's. They stop by themselves after 30 s at most."""
    servers, conns = [], []
    stop = threading.Event()
    for garbage in (False, True):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(0.2)
        servers.append(server)

        def serve(server: socket.socket = server, garbage: bool = garbage) -> None:
            deadline = time.monotonic() + 30
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                conns.append(conn)
                if garbage:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" + b"\xff" * 256)
            server.close()

        threading.Thread(target=serve, daemon=True).start()
    yield servers[0].getsockname()[1], servers[1].getsockname()[1]
    stop.set()
    for conn in conns:
        conn.close()


def test_scheduler_that_never_answers_or_answers_garbage(
    hostile_peer: tuple[int, int],
    census_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    silent, garbage = hostile_peer
    for port, within in ((silent, 8.0), (garbage, 3.0)):
        out = tmp_path / f"release-{port}.csv"
        args = ["anonymize", str(census_csv), "-o", str(out), "--k", "10", *SCHEMA, "-q"]
        args += ["--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "2"]
        start = time.monotonic()
        code = main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2, err
        assert len(err) == 1 and f"127.0.0.1:{port}" in err[0], err
        assert "MemoryError" not in err[0] or "Dask scheduler" in err[0]
        assert time.monotonic() - start < within
        assert not out.exists()


def test_dask_scratch_is_private_not_the_predictable_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link planted at $TMPDIR/dask-scratch-space is never followed: the local cluster works
    in a private directory of its own, removed at exit."""
    import tempfile

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "global.lock").write_text("precious")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "dask-scratch-space").symlink_to(victim)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with dask_client(workers=1) as client:
        dirs = list(client.run(lambda dask_worker: dask_worker.local_directory).values())
        assert dirs and all(str(d).startswith(str(tmp / "anonymatch-dask-")) for d in dirs)
        private = tmp / Path(dirs[0]).relative_to(tmp).parts[0]
        assert private.stat().st_mode & 0o777 == 0o700
    assert (victim / "global.lock").read_text() == "precious"
    assert sorted(victim.iterdir()) == [victim / "global.lock"]
    assert sorted(p.name for p in tmp.iterdir()) == ["dask-scratch-space"]
