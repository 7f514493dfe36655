"""Fixtures shared by the table tests: one throwaway PostgreSQL server per test process."""

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
