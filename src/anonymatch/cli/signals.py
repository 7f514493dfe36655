"""Signal handling of the command line: SIGINT and SIGTERM become a cancelled run.

``handling_signals`` turns SIGINT (Ctrl-C) and SIGTERM (what ``timeout``, systemd, docker and
Kubernetes send) into ``Interrupted`` in the main thread. The CLI runs the command itself in a
worker thread (``run_interruptibly``) and the main thread only waits, so the signal is seen at
once — never inside numba-compiled code, where an exception raised by a signal handler comes
out as ``SystemError: CPUDispatcher(...) returned a result with an exception set`` once the
kernel returns (seconds to minutes later). The CLI then prints one line, ``interrupted; nothing
written``, and exits 130 (SIGINT) or 143 (SIGTERM), 128 + the signal number as shells report it.

The cancellation itself (pools killed, temporary paths and committed outputs removed) is the
library's, ``anonymatch.core.lifecycle``; this module only decides when it happens. Exit codes:
docs/cli.md and README ("Exit codes"); the policy is described in docs/guarantees/scale.md
("Interrupts and faults").
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from anonymatch.core.lifecycle import Interrupted, cancel

R = TypeVar("R")

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
INTERRUPTED_MESSAGE = "interrupted; nothing written"


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


_original_handlers: dict[int, Any] = {}
_importing = [False]


def guard_startup() -> Callable[[], None]:
    """Handle SIGINT and SIGTERM that arrive while the CLI imports its commands (a second or
    two of start-up, before ``main`` can handle them; nothing is open or written yet): one line
    and exit 130/143 at once. Call the returned function when the imports are done; from then
    on the handler passes signals to the handlers that were there before (so importing the
    CLI changes nothing for a program that never calls ``main``). A signal the process was
    started ignoring stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    for s in EXIT_CODES:
        _original_handlers.setdefault(s, signal.getsignal(s))

    def early(signum: int, frame: Any) -> None:
        handler = _original_handlers.get(signum, signal.SIG_DFL)
        if _importing[0] and handler != signal.SIG_IGN:
            os.write(2, f"anonymatch: {INTERRUPTED_MESSAGE}\n".encode())
            os._exit(128 + signum)
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for s in EXIT_CODES:
        signal.signal(s, early)
    _importing[0] = True

    def done() -> None:
        _importing[0] = False

    return done


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Interrupted`` in the main thread while the block runs (the
    previous handlers are restored after). A signal the process was started ignoring (SIGINT
    of a background job, ``nohup``) stays ignored. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in EXIT_CODES}
    for s in EXIT_CODES:
        if _original_handlers.get(s, previous[s]) != signal.SIG_IGN:
            signal.signal(s, _raise_interrupted)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def ignore_signals() -> None:
    """Ignore SIGINT and SIGTERM from now on (the CLI, once its command has returned)."""
    if threading.current_thread() is threading.main_thread():
        for s in EXIT_CODES:
            signal.signal(s, signal.SIG_IGN)


def run_interruptibly(fn: Callable[..., R], *args: Any, grace: float = 0.5) -> R:
    """Run ``fn(*args)`` in a worker thread while this (main) thread waits, so that a signal is
    handled here at once rather than inside compiled code. On ``KeyboardInterrupt`` /
    ``Interrupted`` the run is cancelled (``cancel``), the worker is given ``grace`` seconds to
    stop and the interrupt re-raised (as ``Interrupted``); the worker may still be running
    then (a numba kernel cannot be stopped), so a process should exit soon after, e.g. with
    ``exit_now``. Outside the main thread ``fn`` runs directly."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn(*args)
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="anonymatch-run", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.25)  # interruptible: signal handlers run between the waits
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        cancel(signum)
        worker.join(grace)
        raise Interrupted(signum) from None
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def exit_now(code: int) -> None:
    """Flush stdout/stderr and end the process at once (``os._exit``): after a cancellation a
    worker thread may still be inside a compiled kernel, which no exception can stop."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
