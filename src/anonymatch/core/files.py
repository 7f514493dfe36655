"""Files: atomic writes, all-or-nothing output sets and content digests, shared by every writer
of releases, manifests and seed files.

``write_atomically`` writes to a temporary sibling and renames it into place, so a reader never
sees a half-written file and a failed run leaves the old file (or none) behind.

``all_or_nothing`` extends that to every output of one run (release, ``--report`` manifest,
``--seed-file``, …): inside the block, ``write_atomically`` (and the streamed
``ReleaseWriter``) *stage* their finished temporary files instead of renaming them; the block
renames them all into place when it ends normally and removes them all when it ends with an
exception. So when the report cannot be written, the release does not stay behind either. The
CLI runs every command inside one such block (``anonymatch.cli.main``).

A write the operating system refuses (permission denied, read-only file system, disk full, I/O
error) raises :class:`~anonymatch.core.errors.OutputError` (exit code 6) naming the file, e.g.
``cannot write out.csv: No space left on device``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from anonymatch.core import lifecycle
from anonymatch.core.errors import AnonymatchError, InputError, OutputError


def _reason(exc: OSError) -> str:
    """The operating system's words for ``exc`` (``No space left on device``)."""
    if exc.strerror:
        return exc.strerror
    if exc.errno is not None:
        return os.strerror(exc.errno)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def output_error(path: str | os.PathLike[str], exc: OSError) -> OutputError:
    """The one-line error for a write of ``path`` that the OS refused with ``exc``."""
    return OutputError(f"cannot write {os.fspath(path)}: {_reason(exc)}")


class StagedOutputs:
    """The finished temporary files of one run, waiting to be renamed into place together.

    Each entry maps a target path to a temporary file or directory beside it (same file
    system, so the final rename is atomic). :meth:`commit` renames them in the order staged;
    :meth:`abort` removes them. Memory O(number of outputs).
    """

    def __init__(self) -> None:
        self._staged: dict[str, tuple[Path, Path]] = {}

    @staticmethod
    def _key(path: str | os.PathLike[str]) -> str:
        return os.path.abspath(os.fspath(path).rstrip("/" + os.sep) or os.fspath(path))

    def add(self, target: str | os.PathLike[str], tmp: Path) -> None:
        """Stage ``tmp`` to become ``target`` at :meth:`commit` (a second staging of the same
        target replaces the first, whose temporary file is removed)."""
        key = self._key(target)
        previous = self._staged.pop(key, None)
        if previous is not None:
            lifecycle.remove_temp(previous[1])
        self._staged[key] = (Path(key), tmp)

    def lookup(self, path: str | os.PathLike[str]) -> Path | None:
        """The staged temporary file that will become ``path``, or None."""
        entry = self._staged.get(self._key(path))
        return None if entry is None else entry[1]

    def commit(self) -> None:
        """Rename every staged file into place. Should a rename fail (it cannot on one file
        system short of a fault), the outputs already renamed are removed again and the rest
        deleted, and :class:`OutputError` is raised: no partial output set remains."""
        done: list[Path] = []
        try:
            while self._staged:
                key = next(iter(self._staged))
                target, tmp = self._staged[key]
                _rename_into_place(tmp, target)
                del self._staged[key]
                done.append(target)
        except OSError as exc:
            for renamed in done:
                _remove(renamed)
            self.abort()
            raise output_error(target, exc) from exc

    def abort(self) -> None:
        """Remove every staged temporary file."""
        for _, tmp in self._staged.values():
            lifecycle.remove_temp(tmp)
        self._staged.clear()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _rename_into_place(tmp: Path, target: Path) -> None:
    """``os.replace`` through ``lifecycle.commit`` (refused once the run is cancelled; a
    committed output is removed if the run is cancelled later); a directory replaces an
    existing directory by swapping it out."""
    if tmp.is_dir() and target.is_dir() and not target.is_symlink():
        lifecycle.check()
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=tmp.parent))
        os.replace(target, old / "release")
        try:
            lifecycle.commit(tmp, target)
        except BaseException:
            os.replace(old / "release", target)  # put the old release back
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
        return
    lifecycle.commit(tmp, target)


_STAGING: ContextVar[StagedOutputs | None] = ContextVar("anonymatch_staging", default=None)


def staging() -> StagedOutputs | None:
    """The output set of the enclosing :func:`all_or_nothing` block, or None outside one."""
    return _STAGING.get()


@contextmanager
def all_or_nothing() -> Iterator[StagedOutputs]:
    """Commit every output written inside the block together, or none of them.

    Ends normally (or with ``SystemExit(0)``): the staged outputs are renamed into place.
    Ends with any other exception, including ``KeyboardInterrupt``: they are removed and the
    exception propagates; outputs that existed before the run are left untouched.

    Yields
    ------
    StagedOutputs
        The set being filled (mostly useful to tests).
    """
    outputs = StagedOutputs()
    token = _STAGING.set(outputs)
    try:
        yield outputs
    except SystemExit as exc:
        _STAGING.reset(token)
        if exc.code not in (None, 0):
            outputs.abort()
            raise
        outputs.commit()
        raise
    except BaseException:
        _STAGING.reset(token)
        outputs.abort()
        raise
    _STAGING.reset(token)
    outputs.commit()


def current_path(path: str | os.PathLike[str]) -> Path:
    """Where the content of output ``path`` is right now: its staged temporary file inside an
    :func:`all_or_nothing` block, else ``path`` itself (for digests and sizes of outputs
    written but not yet committed)."""
    outputs = staging()
    staged = outputs.lookup(path) if outputs is not None else None
    return staged if staged is not None else Path(path)


def write_atomically(path: str | os.PathLike[str], writer: Callable[[Path], object]) -> None:
    """Write through ``writer`` to a temporary file beside ``path``, then rename it into place,
    so that an interrupted run never leaves a partial file under the final name.

    Inside :func:`all_or_nothing` the finished temporary file is staged instead and renamed
    together with the run's other outputs.

    Raises
    ------
    InputError
        If the directory of ``path`` does not exist.
    OutputError
        If the operating system refuses the write (permission, read-only file system, disk
        full, ...); the temporary file is removed.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"output directory does not exist: {directory}")
    try:  # 0600, locked, removed if the run is cancelled, swept after a SIGKILL
        tmp = lifecycle.hidden_temp(directory, f".{target.name}.")
    except OSError as exc:
        raise output_error(path, exc) from exc
    try:
        try:
            writer(tmp)
            outputs = staging()
            if outputs is not None:
                outputs.add(target, tmp)
                return
            lifecycle.commit(tmp, target)
        except AnonymatchError:
            raise
        except OSError as exc:
            raise output_error(path, exc) from exc
    except BaseException:
        lifecycle.remove_temp(tmp)
        raise


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def human_size(size: int, byte_unit: str = "bytes") -> str:
    """A byte count as ``812 bytes``, ``1.2 MiB`` … (binary units up to GiB); ``byte_unit``
    names the smallest unit (``"B"`` for ``812 B``). O(1)."""
    value = float(size)
    for unit in (byte_unit, "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == byte_unit else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError  # pragma: no cover
