"""The output-path policy shared by every command that writes files.

A run's files are one set, declared up front and checked together by :func:`check_outputs`
before any work is done: every file it writes — the release (``-o``) and, for a CSV table
release, its sidecar ``RELEASE.schema.json`` (:attr:`Output.sidecar`), the audit manifest
(``--report``), the HTML report (``--report-html``), the private seed file (``--seed-file``),
a saved model (``--model-out``) — and every file it reads — the input, the ``--config`` job
file, hierarchy files, cell weights, a manifest, and the sidecar of a CSV release it reads:

- each has a supported extension for what is written there (a ``.xls`` or ``.ods`` release is
  refused rather than filled with CSV text);
- its directory exists (else exit 2) and is writable (else exit 6, as a refused write);
- an existing file is replaced only with ``--force``; a directory is never a file output;
- no two outputs are the same file (``r.csv`` and ``./r.csv``, a symlink to it, a hard link),
  and no output is one of the run's inputs, nor inside a directory output;
- an input that exists is a regular file or a directory (not ``/dev/zero``, a FIFO or a
  socket, which a reader would never finish or would block on), and so is an output that exists.

Writing them is all-or-nothing: see :func:`anonymatch.core.files.all_or_nothing`. Together the
two give: one clear line and nothing written when the paths are wrong, nothing left behind when
a write fails.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from anonymatch.core.errors import InputError, OutputError

STATS_RELEASE_EXTENSIONS = (".sav", ".zsav", ".dta")
"""Table releases in a statistical package's format (SPSS, Stata; ``tables.io.stats``)."""

TABLE_RELEASE_EXTENSIONS: tuple[str, ...] = (".csv", ".tsv", ".tab", ".txt", ".parquet", ".pq")
TABLE_RELEASE_EXTENSIONS += STATS_RELEASE_EXTENSIONS + (".xlsx",)
"""Table releases: CSV text (tab-separated for .tsv/.tab), typed Parquet, SPSS or Stata, an
Excel workbook (``tables.io.excel``; with its sidecar, as CSV)."""

SET_RELEASE_EXTENSIONS = (".jsonl", ".ndjson", ".json")
"""Set-valued releases: JSON Lines."""

SPARSE_RELEASE_EXTENSIONS = (".csv", ".txt", ".edges", ".parquet", ".mtx", ".mm", ".dat")
"""Sparse releases: CSV edge list, Parquet edge list, Matrix Market, FIMI transactions."""

GRAPH_RELEASE_EXTENSIONS = (".csv", ".txt", ".edges")
"""Graph releases: CSV edge list ``source,target``."""

JSON_EXTENSIONS = (".json",)
"""Manifests, seed files and saved models."""


@dataclass(frozen=True)
class Output:
    """One output of a run.

    Attributes
    ----------
    flag : str
        How the user named it (``-o/--output``, ``--report``, ...), for messages.
    path : str
        The path as given.
    extensions : tuple of str or None
        Supported extensions (lower case, with the dot); None accepts any.
    directory : bool
        Whether a path without extension (or ending in a separator) names a directory output
        (a directory of Parquet parts).
    sidecar : bool
        Whether a CSV text file written there comes with its sidecar ``PATH.schema.json`` (a
        table release, ``docs/release-format.md``): the sidecar is then an output of the run
        too (:meth:`written`).
    """

    flag: str
    path: str
    extensions: tuple[str, ...] | None = None
    directory: bool = False
    sidecar: bool = False

    @property
    def names_directory(self) -> bool:
        return self.directory and (self.path.endswith(("/", os.sep)) or not Path(self.path).suffix)

    def written(self) -> list[Output]:
        """This output and the files written with it: the sidecar of a CSV table release
        (none for Parquet or a directory of parts)."""
        if not self.sidecar or not self.path or self.names_directory:
            return [self]
        if Path(self.path).suffix.lower() in PARQUET_EXTENSIONS + STATS_RELEASE_EXTENSIONS:
            return [self]
        sidecar = Output("the release's sidecar", self.path + SIDECAR_SUFFIX)
        return [self, sidecar]


PARQUET_EXTENSIONS = (".parquet", ".pq")
SIDECAR_SUFFIX = ".schema.json"
"""A CSV table release ``r.csv`` has its sidecar ``r.csv.schema.json``
(``anonymatch.tables.io.sidecar.schema_path``)."""


def _identity(path: str) -> Path:
    """The file a path names: absolute, symlinks followed as far as they exist."""
    return Path(os.path.abspath(path.rstrip("/" + os.sep) or path)).resolve()


def _same_file(a: str, b: str) -> bool:
    if _identity(a) == _identity(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _inside(path: str, directory: str) -> bool:
    return _identity(path).is_relative_to(_identity(directory))


def check_outputs(
    outputs: Sequence[Output], inputs: Iterable[str] = (), force: bool | None = False
) -> None:
    """Check every output path of a run before the run starts. O(outputs · (outputs + inputs)).

    Parameters
    ----------
    outputs : sequence of Output
        The run's outputs (None paths left out by the caller).
    inputs : iterable of str
        Paths the run reads; only those that exist are compared.
    force : bool or None
        Whether ``--force`` was given; None when the command has no ``--force`` (an existing
        output is then always refused).

    Raises
    ------
    InputError
        Empty path, unsupported extension, missing directory, an existing output without
        ``--force``, a directory where a file is written, two outputs naming one file (a
        release's sidecar included), an output naming an input, an input or existing output
        that is neither a regular file nor a directory.
    OutputError
        The output's directory is not writable.
    """
    for out in outputs:
        if not out.path:
            raise InputError(f"{out.flag} needs a path")
    # a database release (-o postgresql://…) is claimed by its command against the server
    # (anonymatch.tables.io.sql.check_output_table): no file, nothing to compare here
    outputs = [out for out in outputs if not _is_database_url(out.path)]
    outputs = [written for out in outputs for written in out.written()]
    inputs = list(inputs)
    check_inputs(inputs)
    for i, a in enumerate(outputs):
        for b in outputs[i + 1 :]:
            if _same_file(a.path, b.path):
                raise InputError(
                    f"{b.flag} {b.path} is the same file as {a.flag} {a.path}; choose another path"
                )
            for inner, outer in ((a, b), (b, a)):
                if outer.names_directory and _inside(inner.path, outer.path):
                    raise InputError(
                        f"{inner.flag} {inner.path} is inside the output directory "
                        f"{outer.path}; choose another path"
                    )
    existing = [p for p in inputs if p and os.path.exists(p)]
    for out in outputs:
        for source in existing:
            if _same_file(out.path, source):
                raise InputError(
                    f"{out.flag} {out.path} would overwrite the input {source}; choose another path"
                )
            if out.names_directory and _inside(source, out.path):
                raise InputError(
                    f"{out.flag} {out.path} would replace a directory holding the input "
                    f"{source}; choose another path"
                )
    for out in outputs:
        _check_one(out, force)


def check_inputs(inputs: Iterable[str]) -> None:
    """InputError for an input path that exists but is neither a regular file nor a directory
    (``/dev/zero``, a FIFO, a socket). O(inputs)."""
    from anonymatch.core.documents import check_readable_path

    for path in inputs:
        if path:
            check_readable_path(path)


def _check_one(out: Output, force: bool | None) -> None:
    path = out.path
    from anonymatch.core.documents import check_readable_path

    check_readable_path(path, out.flag)
    if not force and os.path.lexists(path):
        fix = "pass --force to replace it" if force is not None else "choose another path"
        raise InputError(f"{path} exists; {fix}")
    if Path(path).is_dir() and not out.names_directory:
        raise InputError(f"{out.flag} is a directory: {path}")
    if out.extensions is not None and not out.names_directory:
        suffix = Path(path).suffix.lower()
        if suffix not in out.extensions:
            also = "; or a path without extension for a directory of Parquet parts"
            raise InputError(
                f"{out.flag} {path}: unsupported extension {suffix or '(none)'!s}; supported: "
                + ", ".join(out.extensions)
                + (also if out.directory else "")
            )
    target = Path(path.rstrip("/" + os.sep) or path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{out.flag} directory does not exist: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: directory {parent} is not writable")


def _is_database_url(path: str) -> bool:
    if "://" not in path:  # a file path: no need to import the SQL module
        return False
    from anonymatch.tables.io.sql import is_database_url

    return is_database_url(path)
