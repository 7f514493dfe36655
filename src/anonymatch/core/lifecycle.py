"""One cancellation and cleanup policy for every path: interrupts, worker processes, temporary
files.

Every command, in memory or streamed, on threads, processes or Dask, follows the same rules
(the CLI turns SIGINT and SIGTERM into a cancellation: ``anonymatch.cli.signals``):

- **Cancellation.** ``cancel`` (called by the main thread on a signal) marks the run cancelled,
  kills the registered worker pools, removes every registered temporary path and every output
  this run had already committed, under the same lock as ``commit``: an output is either
  committed before the cancellation (and then removed by it) or never. Library code calls
  ``check`` between units of work (the runner does, between jobs) so that a cancelled run stops
  at the next one.
- **Worker processes.** Pool processes start with ``worker_init``: they ignore SIGINT (the
  parent decides), and on Linux ask the kernel to SIGKILL them when their parent dies
  (``prctl(PR_SET_PDEATHSIG)``), so that even a SIGKILL of the main process leaves no worker
  behind; elsewhere a watchdog thread polls ``os.getppid``. Dask's worker processes exit when
  their nanny's pipe to the parent closes (``distributed.process``).
- **Temporary files.** Files holding personal data (the spill of the non-QI columns, including
  the sensitive ones) live in a private directory from ``private_dir`` (``mkdtemp``: mode 0700,
  unpredictable name) and are created 0600 and unlinked right after opening where the platform
  allows (``anonymous_file``: nothing to clean even after SIGKILL). Each private directory is
  held with an exclusive ``flock`` for the life of the run and removed on every exit path;
  after a SIGKILL it stays (empty, or with the files workers read by name) until the next run
  creating a directory of the same kind in the same place sweeps it — a directory whose lock
  can be taken belongs to no live process.

Exit codes: docs/cli.md and README ("Exit codes"); the policy is described in
docs/guarantees/scale.md ("Interrupts and faults").
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no locks, so nothing is ever swept
    fcntl = None  # type: ignore[assignment]

O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lock(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting; False if another process holds
    it (True where there is no ``flock``)."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _open_lock(path: Path, directory: bool) -> int:
    """A descriptor of ``path`` holding its lock for the life of the process (-1 where
    directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | (O_DIRECTORY if directory else 0))
    except OSError:  # pragma: no cover - Windows cannot open a directory
        return -1
    _lock(fd)
    return fd


PR_SET_PDEATHSIG = 1


class Interrupted(KeyboardInterrupt):
    """The run was interrupted by ``signum`` (SIGINT or SIGTERM); ``exit_code`` is 128 + it."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _State:
    """What the process must undo if the run is cancelled (one per process)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.cancelled: int | None = None
        self.temps: dict[Path, None] = {}
        self.committed: list[Path] = []
        self.pools: dict[int, Callable[[], None]] = {}
        self.locks: dict[Path, int] = {}
        self.active = False


_state = _State()


def reset(active: bool = False) -> None:
    """Forget a previous cancellation and the outputs committed so far. ``active``: a run
    starts, whose committed outputs are recorded (to be removed if it is cancelled); the CLI
    calls ``reset(True)`` before a command and ``reset()`` after it, so that nothing is
    recorded for library callers."""
    with _state.lock:
        _state.cancelled = None
        _state.committed.clear()
        _state.active = active


def cancelled() -> int | None:
    """The signal that cancelled the run, or None."""
    return _state.cancelled


def check() -> None:
    """Raise ``Interrupted`` if the run was cancelled (call between units of work)."""
    if _state.cancelled is not None:
        raise Interrupted(_state.cancelled)


# -- temporary paths and commits -------------------------------------------------------------


def register_temp(path: str | os.PathLike[str]) -> Path:
    """Remove ``path`` (file or directory) if the run is cancelled; raises ``Interrupted``
    (after removing it) if it already was."""
    p = Path(path)
    with _state.lock:
        if _state.cancelled is not None:
            _remove(p)
            raise Interrupted(_state.cancelled)
        _state.temps[p] = None
    return p


def remove_temp(path: str | os.PathLike[str]) -> None:
    """Remove a registered temporary path now and forget it."""
    p = Path(path)
    with _state.lock:
        _state.temps.pop(p, None)
        _remove(p)
        fd = _state.locks.pop(p, None)
    if fd is not None and fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)


def commit(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Rename the finished temporary ``tmp`` to ``target`` unless the run was cancelled (then
    ``Interrupted``); a committed target is removed if the run is cancelled later."""
    with _state.lock:
        check()
        os.replace(tmp, target)
        _state.temps.pop(Path(tmp), None)
        if _state.active:
            _state.committed.append(Path(target))
        fd = _state.locks.pop(Path(tmp), None)
    if fd is not None and fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


# -- private directories and anonymous files --------------------------------------------------


def _hold(path: Path, fd: int) -> Path:
    """Keep ``fd`` (the ``flock`` on the new temporary ``path``) while this process lives and
    register ``path`` for removal; a cancellation arriving meanwhile removes it and re-raises."""
    with _state.lock:
        _state.locks[path] = fd
    try:
        register_temp(path)
    except Interrupted:
        remove_temp(path)
        raise
    return path


def private_dir(prefix: str, base: str | os.PathLike[str] | None = None) -> Path:
    """A new private directory ``base/prefix<random>`` (``tempfile.mkdtemp``: mode 0700, an
    unpredictable name; ``base`` defaults to ``$TMPDIR``), locked with ``flock`` while this
    process lives and registered for removal. Directories ``prefix*`` in ``base`` left by a run
    that was killed (their lock is free) are swept first. Remove it with ``remove_temp``."""
    where = Path(base) if base is not None else Path(tempfile.gettempdir())
    sweep_stale(where, prefix)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    fd = _open_lock(path, directory=True)
    return _hold(path, fd)


@contextlib.contextmanager
def private_directory(prefix: str, base: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """``private_dir`` as a context manager: removed on every exit path."""
    path = private_dir(prefix, base)
    try:
        yield path
    finally:
        remove_temp(path)


def hidden_temp(parent: str | os.PathLike[str], prefix: str, directory: bool = False) -> Path:
    """A new temporary file (mode 0600) or directory (0700) ``parent/prefix<random>.tmp``
    beside an output, locked with ``flock`` while this process lives and registered for removal
    on cancellation; temporaries ``prefix*.tmp`` that a killed run left in ``parent`` are swept
    first. ``commit`` renames it into place; ``remove_temp`` discards it."""
    where = Path(parent)
    sweep_stale(where, prefix, suffix=".tmp")
    if directory:
        path = Path(tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=where))
        fd = _open_lock(path, directory=True)
    else:
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=where)
        path = Path(name)
        _lock(fd)
    return _hold(path, fd)


def sweep_stale(base: Path, prefix: str, suffix: str = "") -> list[Path]:
    """Remove the directories and regular files ``base/prefix*suffix`` owned by this user
    whose ``flock`` is free (their run died without cleaning up, e.g. on SIGKILL). Symbolic
    links and other users' entries are left alone. Returns the paths removed."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(suffix)):
            continue
        path = Path(entry.path)
        with _state.lock:
            if path in _state.locks:
                continue  # ours
        try:
            info = entry.stat(follow_symlinks=False)
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.is_symlink() or not (is_dir or entry.is_file(follow_symlinks=False)):
                continue
            if info.st_uid != os.getuid():
                continue
            flags = os.O_RDONLY | O_NOFOLLOW | (O_DIRECTORY if is_dir else 0)
            fd = os.open(entry.path, flags)
        except OSError:
            continue
        if fcntl is None or not _lock(fd):
            os.close(fd)
            continue  # a live run holds it (or, without flock, it cannot be told)
        try:
            _remove(path)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


def anonymous_file(directory: str | os.PathLike[str], name: str) -> tuple[int, str]:
    """Create ``directory/name`` with mode 0600 and unlink it at once (POSIX keeps an open,
    unlinked file), so no name is left behind whatever ends the process. Returns the descriptor
    and a path that reopens it (``/proc/self/fd/N`` on Linux; elsewhere the file keeps its
    name, inside the private directory, and is removed with it)."""
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_NOFOLLOW, 0o600)
    proc = f"/proc/self/fd/{fd}"
    if sys.platform.startswith("linux") and os.path.exists(proc):
        os.unlink(path)
        return fd, proc
    return fd, path


# -- worker pools ------------------------------------------------------------------------------


def register_pool(kill: Callable[[], None]) -> int:
    """Call ``kill`` if the run is cancelled (it must stop the pool's processes at once).
    Returns a token for ``forget_pool``; raises ``Interrupted`` (after killing) if the run was
    already cancelled."""
    token = id(kill)
    with _state.lock:
        if _state.cancelled is not None:
            kill()
            raise Interrupted(_state.cancelled)
        _state.pools[token] = kill
    return token


def forget_pool(token: int) -> None:
    with _state.lock:
        _state.pools.pop(token, None)


def worker_init(parent: int | None = None) -> None:
    """Initializer of every worker process: ignore SIGINT (Ctrl-C reaches the whole process
    group; the parent decides and stops the pool), default SIGTERM, and die with the parent —
    ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux (the parent's death, SIGKILL included,
    kills the worker), else a daemon thread polling ``os.getppid`` every second."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = os.getppid() if parent is None else parent
    armed = False
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:  # pragma: no cover - non-Linux fallback
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


# -- cancellation ------------------------------------------------------------------------------


def cancel(signum: int) -> None:
    """Cancel the run: kill the registered pools, remove the registered temporary paths and
    the outputs committed so far. Idempotent; safe from any thread."""
    with _state.lock:
        if _state.cancelled is None:
            _state.cancelled = int(signum)
        pools = list(_state.pools.values())
        _state.pools.clear()
        for kill in pools:
            with contextlib.suppress(Exception):
                kill()
        for path in [*_state.temps, *_state.committed]:
            _remove(path)
        _state.temps.clear()
        _state.committed.clear()
