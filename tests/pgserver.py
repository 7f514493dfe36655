"""A throwaway PostgreSQL server for tests and benchmarks: an ``initdb`` cluster in a temporary
directory, password (SCRAM) authentication, a Unix socket in a private directory and no TCP
(``listen_addresses=''``). Run as the ``postgres`` system user when we are root (initdb refuses
root). Stopped and removed on exit."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

USER = "steward"
PASSWORD = "s3/cr@t:Pa%-55"  # / @ : % unencoded in a URL: issue 37


def server_binaries() -> Path | None:
    """The directory of PostgreSQL's server binaries (initdb, pg_ctl), or None."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    return None


def unavailable() -> str | None:
    """Why no server can be started here, or None."""
    if server_binaries() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as another user"
    return None


def _as_server_user(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def url(sockets: str, db: str = "hospital", password: str | None = PASSWORD) -> str:
    """``postgresql://steward[:password]@/db?host=SOCKETS``."""
    auth = USER + (f":{quote(password, safe='')}" if password else "")
    return f"postgresql://{auth}@/{db}?host={quote(sockets, safe='')}"


@contextmanager
def postgres_server(database: str = "hospital") -> Iterator[str]:
    """Start a server with an empty ``database``; yield its socket directory."""
    import sqlalchemy

    bindir = server_binaries()
    assert bindir is not None, unavailable()
    root = Path(tempfile.mkdtemp(prefix="anonymatch-pg-"))
    data, sockets, pwfile = root / "data", root / "sock", root / "pw"
    sockets.mkdir()
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        for path in (root, sockets, pwfile):
            shutil.chown(path, "postgres")
    os.chmod(root, 0o700)
    os.chmod(sockets, 0o700)
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", USER, "--auth=scram-sha-256"]
    initdb += [f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C"]
    subprocess.run(_as_server_user(initdb), check=True, capture_output=True)
    options = f"-c listen_addresses='' -c unix_socket_directories={sockets} -c fsync=off"
    start = [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w"]
    start += ["-l", str(root / "log"), "start"]
    try:
        subprocess.run(_as_server_user(start), check=True, capture_output=True)
        engine = sqlalchemy.create_engine(
            url(str(sockets), "postgres").replace("postgresql://", "postgresql+psycopg://", 1)
        )
        with engine.connect() as c:
            c = c.execution_options(isolation_level="AUTOCOMMIT")
            c.exec_driver_sql(f"CREATE DATABASE {database}")
        engine.dispose()
        yield str(sockets)
    finally:
        stop = [str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
        subprocess.run(_as_server_user(stop), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
