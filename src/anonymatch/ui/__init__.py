"""``anonymatch ui``: a local web app for data stewards who never open a terminal.

Upload or pick a CSV/Parquet table (its size and first rows shown), set each column's role and
type (suggested by the job-file inference), choose the privacy model and the method (each
explained), run it with live progress, then open the HTML report and download the release, the
manifest and the job file that reproduces the run.

Safety: the server binds 127.0.0.1 by default and answers 403 to any request without the random
token printed at start (given once in the address, then kept in a cookie, as Jupyter does).
Uploads, runs and releases live in a private temporary directory (mode 0700, files 0600) that
is removed when the app stops, on Ctrl-C, SIGTERM or SIGHUP too. A run is the CLI itself in a
child process (one at a time per browser session), so the page never blocks and an error is
the CLI's one line, never a traceback. Needs the ``ui`` extra (Starlette, uvicorn,
python-multipart).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from anonymatch.core.errors import InputError

__all__ = ["serve"]


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    data_dir: str | os.PathLike[str] | None = None,
    open_browser: bool = False,
    token: str | None = None,
    echo: Callable[[str, bool], None] = lambda line, err: None,
) -> int:
    """Run the web app until interrupted; returns the exit code (0, or 130 after a signal).

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

    Raises
    ------
    anonymatch.core.errors.InputError
        When the ``ui`` extra is missing, the data directory does not exist or the port is
        taken.
    """
    try:
        import uvicorn

        from anonymatch.ui.app import AppState, create_app
    except ImportError as exc:
        raise InputError(
            f"the web app needs the ui extra ({exc.name} is missing): pip install 'anonymatch[ui]'"
        ) from None
    if data_dir is not None and not Path(data_dir).is_dir():
        raise InputError(f"data directory not found: {data_dir}")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(64)
    private = Path(tempfile.mkdtemp(prefix="anonymatch-ui-"))  # mode 0700
    tempfile.tempdir = str(private)  # uploads spooled by the form parser stay private too
    state = AppState(
        token or secrets.token_urlsafe(24),
        private,
        None if data_dir is None else Path(data_dir).resolve(),
    )
    caught: list[int] = []
    server: Any = None

    def stop(signum: int, frame: Any) -> None:
        caught.append(signum)
        if server is not None:
            server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in _signals()}
    try:
        config = uvicorn.Config(
            create_app(state), log_level="warning", access_log=False, lifespan="off"
        )
        server = uvicorn.Server(config)
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{sock.getsockname()[1]}/?token={state.token}"
        echo(f"anonymatch ui: open {url}", False)
        echo("anonymatch ui: press Ctrl-C to stop (uploads and releases are then removed)", False)
        if host not in ("127.0.0.1", "localhost", "::1"):
            echo(f"anonymatch: warning: listening on {host}: reachable from other machines", True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        caught.append(signal.SIGINT)
    finally:
        state.stop_all()
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 130 if caught else 0


def _signals() -> list[int]:
    return [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
