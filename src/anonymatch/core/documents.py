"""Reading the small structured files of a run: JSON (manifests, release sidecars) and TOML
(job files), and the one check that an input path names something that can be read.

Every such file is read through :func:`read_document`, which refuses what is not a regular
file (``/dev/zero``, a FIFO, a socket: reading them would never end or block) and a file larger
than :data:`MAX_DOCUMENT_BYTES`; :func:`parse_json` and :func:`parse_toml` then refuse a
document nested deeper than :data:`MAX_DEPTH` (Python's parsers recurse, and so does any code
that walks the result: ``[[[[…]]]]`` would otherwise end in a ``RecursionError``). Each refusal
is an :class:`~anonymatch.core.errors.InputError` of one line (exit 2).

:func:`check_readable_path` is the input-path check shared by every reader: a path that exists
must be a regular file or a directory.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from anonymatch.core.errors import InputError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest manifest, sidecar or job file read (64 MiB; real ones are a few KiB)."""

MAX_DEPTH = 64
"""Deepest nesting of arrays/objects (tables) accepted in a JSON or TOML document."""


def check_readable_path(path: str | os.PathLike[str], what: str = "input") -> bool:
    """Whether ``path`` exists; InputError if it exists but is neither a regular file nor a
    directory (a character or block device, a FIFO, a socket). Symlinks are followed. O(1).

    Raises
    ------
    InputError
        ``{what} is not a regular file: PATH``.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a dangling link, a NUL in the name: the caller's
        return False
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise InputError(f"{what} is not a regular file: {os.fspath(path)}")
    return True


def read_document(path: str | os.PathLike[str], what: str, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """The UTF-8 text of a small structured file, read at most ``limit`` bytes.

    Raises
    ------
    InputError
        ``{what} not found: PATH``; not a regular file; larger than ``limit``; unreadable or not
        UTF-8 (``cannot read the {what} PATH: reason``).
    """
    p = Path(path)
    if not check_readable_path(p, what):
        raise InputError(f"{what} not found: {os.fspath(path)}")
    if p.is_dir():
        raise InputError(f"{what} is a directory, not a file: {os.fspath(path)}")
    try:
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {os.fspath(path)}: {exc.strerror}") from None
    if len(data) > limit:
        size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit} bytes"
        raise InputError(f"the {what} {os.fspath(path)} is larger than {size}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 ({exc.reason})"
        raise InputError(f"cannot read the {what} {os.fspath(path)}: {reason}") from None


def depth(value: Any) -> int:
    """The nesting depth of lists/dicts in ``value`` (a scalar: 0), without recursion. O(size)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def _too_deep(what: str) -> InputError:
    return InputError(f"{what}: nested more than {MAX_DEPTH} levels deep")


def parse_json(text: str, what: str) -> Any:
    """Parse a JSON document of at most :data:`MAX_DEPTH` levels.

    Raises
    ------
    InputError
        ``cannot read the {what}: not JSON (reason)``; too deep.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise _too_deep(what) from None
    except ValueError as exc:
        raise InputError(f"cannot read the {what}: not JSON ({exc})") from None
    if depth(value) > MAX_DEPTH:
        raise _too_deep(what)
    return value


def load_json(path: str | os.PathLike[str], what: str) -> Any:
    """:func:`read_document` then :func:`parse_json` (``what`` names the file in messages)."""
    return parse_json(read_document(path, what), f"{what} {os.fspath(path)}")


def parse_toml(text: str, what: str) -> dict[str, Any]:
    """Parse a TOML document of at most :data:`MAX_DEPTH` levels.

    Raises
    ------
    InputError
        ``{what}: not valid TOML: reason``; too deep.
    """
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise _too_deep(what) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{what}: not valid TOML: {exc}") from None
    if depth(value) > MAX_DEPTH:
        raise _too_deep(what)
    return value
