"""cli.signals: SIGINT and SIGTERM become a cancelled run (issue 15, item 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from anonymatch.cli import signals
from anonymatch.core import lifecycle

# a signal seen within 3 s, a child killed by one: alone under xdist (conftest.py)
pytestmark = pytest.mark.serial


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    lifecycle.reset(active=True)
    yield
    lifecycle.reset()


def test_run_interruptibly_returns_and_raises() -> None:
    assert signals.run_interruptibly(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ValueError, match="boom"):
        signals.run_interruptibly(_boom)


def _boom() -> None:
    raise ValueError("boom")


def test_run_interruptibly_sees_a_signal_while_the_worker_is_busy() -> None:
    release = threading.Event()
    killer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
    started = time.monotonic()
    with signals.handling_signals(), pytest.raises(lifecycle.Interrupted) as info:
        killer.start()
        signals.run_interruptibly(release.wait, 30)
    release.set()
    assert info.value.signum == signal.SIGTERM and info.value.exit_code == 143
    assert time.monotonic() - started < 3
    assert lifecycle.cancelled() == signal.SIGTERM


def test_a_signal_started_ignored_stays_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGINT of a background job (``cmd &`` in a script) or under nohup stays ignored."""
    monkeypatch.setattr(signals, "_original_handlers", {})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with signals.handling_signals():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is signals._raise_interrupted
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_signal_during_start_up_exits_at_once() -> None:
    """SIGTERM while the CLI imports its commands: one line, 143, no traceback."""
    code = (
        "import os, signal, threading, time; from anonymatch.cli import signals; "
        "done = signals.guard_startup(); "
        "threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start(); "
        "time.sleep(5); print('not reached')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr.strip()) == (
        143,
        "",
        f"anonymatch: {signals.INTERRUPTED_MESSAGE}",
    )
