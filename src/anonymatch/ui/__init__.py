"""``anonymatch ui``: a local web app for data stewards who never open a terminal.

Upload or pick a CSV/Parquet table (its size and first rows shown), set each column's role and
type (suggested by the job-file inference), choose the privacy model and the method (each
explained), run it with live progress, then open the HTML report and download the release, the
manifest and the job file that reproduces the run.

Safety (docs/webapp.md): the server binds 127.0.0.1 by default and answers 403 to any request
without the random token printed at start (given once in the address, then kept in a cookie
named after this instance, as Jupyter does), to a Host header that is not its own (DNS
rebinding), and to any form posted from another origin (another local port included) or without
the session's CSRF token. Uploads, runs and releases live in a private temporary directory
(mode 0700, files 0600, held with a lock while the app lives) that is removed when the app
stops, on Ctrl-C (pressed once or many times), SIGTERM or SIGHUP too; after a SIGKILL, the next
start sweeps it. A run is the CLI itself in a child process (one at a time per browser session),
so the page never blocks and an error is the CLI's one line, never a traceback. Needs the ``ui``
extra (Starlette, uvicorn, python-multipart).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonymatch.core import lifecycle
from anonymatch.core.errors import InputError

if TYPE_CHECKING:
    from anonymatch.ui.data import Limits

__all__ = ["serve", "instance_dir", "origins_of"]

PREFIX = "anonymatch-ui-"
"""The name of every instance's private directory starts so (swept after a SIGKILL)."""


def instance_dir(base: str | os.PathLike[str] | None = None) -> Path:
    """A new private directory for one instance of the app (``$TMPDIR/anonymatch-ui-…``, mode
    0700, locked with ``flock`` while this process lives); the directories that instances
    killed without cleaning up (SIGKILL, a crash) left there are swept first
    (:func:`anonymatch.core.lifecycle.private_dir`). Remove it with
    ``lifecycle.remove_temp``."""
    return lifecycle.private_dir(PREFIX, base)


def origins_of(host: str, port: int) -> tuple[str, ...]:
    """The origins (``http://host:port``) the app answers on when bound to ``host``: the
    address itself, ``localhost`` beside a loopback address, and this machine's names and
    addresses beside a wildcard one (0.0.0.0, ::). Any other Host header is refused."""
    names = {host}
    if host in ("127.0.0.1", "::1", "localhost"):
        names |= {"localhost", "127.0.0.1" if ":" not in host else "::1"}
    if host in ("0.0.0.0", "::", ""):
        names |= {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
        with contextlib.suppress(OSError):
            names |= {str(a[4][0]) for a in socket.getaddrinfo(socket.gethostname(), None)}
        names -= {"0.0.0.0", "::", ""}
    shown = sorted(f"[{n}]" if ":" in n else n for n in names)
    return tuple(f"http://{n}:{port}" for n in shown)


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    open_browser: bool = False,
    token: str | None = None,
    echo: Callable[[str, bool], None] = lambda line, err: None,
    limits: Limits | None = None,
) -> int:
    """Run the web app until interrupted; returns the exit code: 0, or 128 + the signal that
    stopped it (130 on SIGINT / Ctrl-C, 143 on SIGTERM, 129 on SIGHUP).

    Parameters
    ----------
    host : str, default "127.0.0.1"
        Address to bind (loopback only by default).
    port : int, default 0
        Port to bind; 0 picks a free one.
    data_dir : path-like, optional
        A directory whose tables can be picked instead of uploaded.
    open_browser : bool, default False
        Open the address in the default browser.
    token : str, optional
        The access token (default: 32 random URL-safe characters).
    echo : callable, optional
        ``echo(line, to_stderr)`` shows the address to open and warnings (the CLI passes
        ``click.echo``; the library prints nothing).
    limits : anonymatch.ui.data.Limits, optional
        The upload, cell and decompressed-size bounds (default: ``Limits()``: 200 MiB, 50
        million cells, 1 GiB).

    Raises
    ------
    anonymatch.core.errors.InputError
        When the ``ui`` extra is missing, the data directory does not exist or the port is
        taken.
    """
    try:
        import uvicorn

        from anonymatch.ui.app import AppState, create_app
        from anonymatch.ui.data import Limits
    except ImportError as exc:
        raise InputError(
            f"the web app needs the ui extra ({exc.name} is missing): pip install 'anonymatch[ui]'"
        ) from None
    if data_dir is not None and not Path(data_dir).is_dir():
        raise InputError(f"data directory not found: {data_dir}")
    caught: list[int] = []
    server: Any = None

    def stop(signum: int, frame: Any) -> None:
        # only records: a second Ctrl-C (or a SIGTERM) during the cleanup below cannot
        # interrupt it and leave an upload behind
        caught.append(signum)
        if server is not None:
            server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in _signals()}
    spool = tempfile.tempdir
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    private: Path | None = None
    state: Any = None
    try:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        sock.listen(64)
        bound = sock.getsockname()[1]
        private = instance_dir()
        tempfile.tempdir = str(private)  # uploads spooled by the form parser stay private too
        state = AppState(
            token or secrets.token_urlsafe(24),
            private,
            None if data_dir is None else Path(data_dir).resolve(),
            origins=origins_of(host, bound),
            limits=limits or Limits(),
        )
        config = uvicorn.Config(
            create_app(state), log_level="warning", access_log=False, lifespan="off"
        )
        server = uvicorn.Server(config)
        server.should_exit = bool(caught)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}/?token={state.token}"
        echo(f"anonymatch ui: open {url}", False)
        echo("anonymatch ui: press Ctrl-C to stop (uploads and releases are then removed)", False)
        if host not in ("127.0.0.1", "localhost", "::1"):
            echo(f"anonymatch: warning: listening on {host}: reachable from other machines", True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        server.run(sockets=[sock])  # uvicorn re-raises the signals it caught to `stop`
    finally:
        if state is not None:
            state.stop_all()
        if private is not None:
            lifecycle.remove_temp(private)
        tempfile.tempdir = spool
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 + caught[0] if caught else 0


def _signals() -> list[int]:
    return [
        s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
    ]
