"""Fixtures shared by the test packages: one throwaway PostgreSQL server per test process (the
table and web-app tests share it; each test uses tables of its own names) and one Dask
LocalCluster per test process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import pgserver


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A PostgreSQL server of its own (``tests.pgserver``: initdb in a temporary directory, a
    Unix socket, no TCP), started once per test process; yields its socket directory. Skips
    when the server binaries are absent."""
    reason = pgserver.unavailable()
    if reason is not None:
        pytest.skip(reason)
    pytest.importorskip("sqlalchemy", reason="the sql extra (sqlalchemy) is missing")
    pytest.importorskip("psycopg", reason="the sql extra (psycopg) is missing")
    with pgserver.postgres_server() as sockets:
        yield sockets


@pytest.fixture(scope="session")
def dask_scheduler() -> Iterator[str]:
    """The address of a dask.distributed LocalCluster (2 worker processes, one thread each),
    started once per test process for the tests that only submit work to it (starting one takes
    seconds); a test that kills a worker starts a cluster of its own. Skips without the
    distributed package."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
    ) as cluster:  # any free port: a test's own cluster may take the default one meanwhile
        yield cluster.scheduler_address
