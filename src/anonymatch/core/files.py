"""Files: atomic writes and content digests, shared by every writer of releases and manifests.

``write_atomically`` writes to a temporary sibling and renames it into place, so a reader never
sees a half-written file and a failed run leaves the old file (or none) behind.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from anonymatch.core import lifecycle
from anonymatch.core.errors import InputError


def write_atomically(path: str | os.PathLike[str], writer: Callable[[Path], object]) -> None:
    """Write through ``writer`` to a temporary file beside ``path``, then rename it into place,
    so that an interrupted run never leaves a partial file under the final name."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"output directory does not exist: {directory}")
    tmp = lifecycle.hidden_temp(directory, f".{target.name}.")  # 0600, removed if cancelled
    try:
        writer(tmp)
        lifecycle.commit(tmp, target)
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
