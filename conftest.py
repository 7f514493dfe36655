"""How the suite shares the machine: when pytest-xdist runs it on several workers (``make
pytest``: ``-n 2``), a test marked ``serial`` runs with no other test running. Here, at the
root, so that the docstring examples of ``src/`` take part too."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_LOCKS: dict[str, int] = {}


def _lock_fd(directory: Path, name: str) -> int:
    """This worker's descriptor of the lock file ``name`` shared by the workers of the run."""
    if name not in _LOCKS:
        _LOCKS[name] = os.open(directory / name, os.O_RDWR | os.O_CREAT, 0o600)
    return _LOCKS[name]


@pytest.fixture(autouse=True)
def _serial_tests_run_alone(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Under pytest-xdist, a test marked ``serial`` (a bound on the seconds from a signal to
    the exit, on a child's peak memory, on processes left after a kill) runs while no other
    test runs on another worker, so that a loaded machine cannot make it fail; every other
    test runs beside any test but those.

    Two ``flock`` locks in the run's shared temporary directory: every test holds ``run``
    shared, a serial one exclusive; ``gate`` (exclusive while a serial test waits or runs,
    taken shared for a moment by the others) keeps the workers that keep starting tests from
    starving it. Without xdist this does nothing. O(1) per test."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    shared = tmp_path_factory.getbasetemp().parent  # the workers' basetemps are beside
    gate, run = _lock_fd(shared, "serial-gate.lock"), _lock_fd(shared, "serial-run.lock")
    alone = request.node.get_closest_marker("serial") is not None
    if alone:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(run, fcntl.LOCK_EX)
    else:
        fcntl.flock(gate, fcntl.LOCK_SH)
        fcntl.flock(run, fcntl.LOCK_SH)
        fcntl.flock(gate, fcntl.LOCK_UN)
    try:
        yield
    finally:
        fcntl.flock(run, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
