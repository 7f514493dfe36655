"""The audit manifest: one JSON schema (``anonymatch-manifest/1``) for every command.

Every ``--report R.json`` of every ``anonymize*`` command and the ``report`` attribute of every
pipeline's release are built here, so that they share one set of top-level keys (see
``docs/manifest.md`` and ``docs/manifest.schema.json``)::

    schema, tool, created, command, data_kind, method, parameters, randomness,
    input, output, guarantee, verification, loss, seconds

A pipeline builds the manifest with :func:`new_manifest` (``command = "python-api"``, input and
output paths unknown); the CLI completes it with :func:`finish_manifest` (command name, paths,
SHA-256 digests, wall time) and writes it with :func:`write_manifest`. The seed of a seeded run
is never written: anyone who knew it could redo the random choice of the true assignment. A run
that keeps its seed in a private file (``--seed-file``) says so, without the seed or the file's
path, through :func:`private_seed_file`.

Every reader of a manifest file (``report``, ``verify --manifest``, ``read_release``, the web
app) goes through :func:`load_manifest`: the bounded JSON reader
(:func:`anonymatch.core.documents.load_json`: a regular file, at most 64 MiB, nested at most
64 levels), then :func:`check_manifest`, which holds it to the shape that the readers rely on
(:data:`SHAPE`): every key they read has the type they expect, or is absent or null. A manifest
cut short, with a list where an object belongs, text where a number belongs or nested without
end is refused with one line naming the key (exit 2), never met by an ``AttributeError`` deep
in a reader. Keys the shape does not name are not checked (a newer manifest may add some).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import numpy as np

from anonymatch.core.documents import load_json
from anonymatch.core.errors import InputError
from anonymatch.core.files import current_path, sha256_file, write_atomically
from anonymatch.core.version import __version__

SCHEMA = "anonymatch-manifest/1"
"""The value of the manifest's ``schema`` key; bumped on any incompatible change."""

API_COMMAND = "python-api"
"""The ``command`` of a manifest built through the Python API rather than the CLI."""

DATA_KINDS = ("table", "transactions", "sparse", "graph", "relational")
"""The values of ``data_kind``."""

TOP_LEVEL_KEYS = (
    "schema",
    "tool",
    "created",
    "command",
    "data_kind",
    "method",
    "parameters",
    "randomness",
    "input",
    "output",
    "guarantee",
    "verification",
    "loss",
    "seconds",
)
"""The top-level keys of every manifest, in the order they are written."""


def utc_now() -> str:
    """The current time as an ISO-8601 UTC timestamp with second precision.

    Returns
    -------
    str
        E.g. ``"2026-11-23T11:37:54Z"``.
    """
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def randomness_block(seeded: bool | None) -> dict[str, str]:
    """The ``randomness`` block: where the privacy randomness came from, never the seed.

    Parameters
    ----------
    seeded : bool or None
        True when a fixed seed was given, False when the randomness came from OS entropy,
        None when the release involves no randomness at all.

    Returns
    -------
    dict
        ``{"source": "seed"}``, ``{"source": "os-entropy"}`` or ``{"source": "none"}``.
    """
    if seeded is None:
        return {"source": "none"}
    return {"source": "seed" if seeded else "os-entropy"}


_SEED_FILE: ContextVar[bool | None] = ContextVar("anonymatch_seed_file", default=None)
"""Inside :func:`private_seed_file`: whether the seed kept in the private file was given (True)
or drawn from OS entropy (False); None outside."""


@contextmanager
def private_seed_file(seed_given: bool) -> Iterator[None]:
    """Within this block, :func:`finish_manifest` records that a private seed file is written.

    The CLI's ``--seed-file`` runs the command with a definite seed and writes it to a private
    file once the command succeeded. The pipeline cannot tell a drawn seed from a given one, so
    the manifest is corrected here: a seed drawn from OS entropy keeps ``source: "os-entropy"``,
    and ``seed_file: true`` tells the auditor that the holder of that file can redo the release.
    Neither the seed nor the file's path is recorded.

    Parameters
    ----------
    seed_given : bool
        True when the seed came from ``--seed``, False when it was drawn from OS entropy.

    Yields
    ------
    None
    """
    token = _SEED_FILE.set(seed_given)
    try:
        yield
    finally:
        _SEED_FILE.reset(token)


_CAPTURED: ContextVar[list[dict[str, Any]] | None] = ContextVar(
    "anonymatch_captured_manifests", default=None
)
"""Inside :func:`capture_manifests`: the manifests completed by :func:`finish_manifest`."""


@contextmanager
def capture_manifests() -> Iterator[list[dict[str, Any]]]:
    """Collect every manifest that :func:`finish_manifest` completes within the block.

    The CLI's ``--report-html`` uses it to render the report of the release a command just
    wrote, whether or not the command writes its manifest (``--report``).

    Yields
    ------
    list of dict
        The completed manifests, in order (the same objects, not copies).
    """
    found: list[dict[str, Any]] = []
    token = _CAPTURED.set(found)
    try:
        yield found
    finally:
        _CAPTURED.reset(token)


def _note_seed_file(randomness: Mapping[str, Any]) -> dict[str, Any]:
    """The ``randomness`` block as corrected by an enclosing :func:`private_seed_file`."""
    block = dict(randomness)
    given = _SEED_FILE.get()
    if given is None or block.get("source") == "none":  # no seed file, or nothing random
        return block
    if not given and block.get("source") == "seed":
        block["source"] = "os-entropy"
    block["seed_file"] = True
    return block


def new_manifest(
    *,
    data_kind: str,
    method: str,
    parameters: Mapping[str, Any],
    guarantee: Mapping[str, Any],
    verification: Mapping[str, Any],
    loss: Mapping[str, Any],
    seconds: Mapping[str, float],
    randomness_seeded: bool | None,
    input_records: int | None,
    output_records: int | None,
    input_extra: Mapping[str, Any] | None = None,
    output_extra: Mapping[str, Any] | None = None,
    command: str = API_COMMAND,
) -> dict[str, Any]:
    """Build a manifest with every top-level key of the schema.

    Parameters
    ----------
    data_kind : {"table", "transactions", "sparse", "graph"}
        The kind of data released.
    method : str
        The algorithm (e.g. ``"hungarian"``, ``"gray-tsp"``, ``"smooth"``).
    parameters : mapping
        Command-specific settings (attribute roles, partition sizes, executors, ...). Must not
        hold the seed.
    guarantee : mapping
        The privacy model (key ``model``) and its levels (``k``, ``l``, ``m``, ``epsilon``, ...).
    verification : mapping
        The verifier's figures; must hold ``passed``.
    loss : mapping
        The information-loss / utility figures of the release.
    seconds : mapping
        Stage timings; ``wall`` (the pipeline's total when not given) is set by
        :func:`finish_manifest` for the CLI.
    randomness_seeded : bool or None
        Whether a seed fixed the randomness (see :func:`randomness_block`). The seed itself is
        never recorded.
    input_records, output_records : int or None
        Number of records (rows, transactions, vertices) read and published.
    input_extra, output_extra : mapping, optional
        Further keys of the ``input`` / ``output`` blocks (e.g. ``dropped_missing``,
        ``layout``).
    command : str, default "python-api"
        The CLI command name; :func:`finish_manifest` sets it for CLI runs.

    Returns
    -------
    dict
        The manifest (JSON-serializable once passed through :func:`to_json`).

    Raises
    ------
    ValueError
        If ``data_kind`` is unknown, ``verification`` has no ``passed`` key, ``guarantee`` no
        ``model`` key, or a block holds a ``seed`` key.
    """
    if data_kind not in DATA_KINDS:
        raise ValueError(f"unknown data kind {data_kind!r}")
    if "passed" not in verification:
        raise ValueError("the verification block needs 'passed'")
    if "model" not in guarantee:
        raise ValueError("the guarantee block needs 'model'")
    if "seed" in parameters:
        raise ValueError("the seed must not be written to a manifest")
    return {
        "schema": SCHEMA,
        "tool": {"name": "anonymatch", "version": __version__},
        "created": utc_now(),
        "command": command,
        "data_kind": data_kind,
        "method": method,
        "parameters": dict(parameters),
        "randomness": randomness_block(randomness_seeded),
        "input": {"path": None, "sha256": None, "records": input_records, **(input_extra or {})},
        "output": {
            "path": None,
            "sha256": None,
            "records": output_records,
            **(output_extra or {}),
        },
        "guarantee": dict(guarantee),
        "verification": dict(verification),
        "loss": dict(loss),
        "seconds": dict(seconds),
    }


def file_digest(path: str | os.PathLike[str]) -> str | dict[str, str]:
    """SHA-256 of a file, or ``{part name: digest}`` of a directory of (Parquet) parts.

    Parameters
    ----------
    path : path-like
        A file or a directory of part files.

    Returns
    -------
    str or dict
        The hex digest, or a mapping from each part's name to its hex digest (sorted by name).
    """
    p = current_path(path)  # an output written but not yet committed: its staged file
    if p.is_dir():
        return {part.name: sha256_file(part) for part in sorted(p.iterdir()) if part.is_file()}
    return sha256_file(p)


def finish_manifest(
    manifest: dict[str, Any],
    input_path: str | os.PathLike[str] | None,
    output_path: str | os.PathLike[str] | None,
    started: float | None,
    command: str | None = None,
) -> dict[str, Any]:
    """Complete a pipeline's manifest after the release was written (in place).

    Parameters
    ----------
    manifest : dict
        A manifest from :func:`new_manifest`.
    input_path, output_path : path-like or None
        The input read and the release written; their paths and SHA-256 digests are recorded
        (a directory of Parquet parts gets a ``{part: digest}`` mapping).
    started : float or None
        ``time.perf_counter()`` at the start of the run; ``seconds.wall`` becomes the time
        since. None keeps the pipeline's ``wall``.
    command : str, optional
        The CLI command name (e.g. ``"anonymize-sets"``).

    Returns
    -------
    dict
        The same manifest, for chaining. Inside :func:`private_seed_file` its ``randomness``
        block says that a private seed file was written (and, for a drawn seed, that the
        randomness came from OS entropy).
    """
    if command is not None:
        manifest["command"] = command
    for key, path in (("input", input_path), ("output", output_path)):
        block = dict(manifest.get(key) or {})
        if path is not None:
            block["path"] = str(path)
            block["sha256"] = file_digest(path)
        manifest[key] = block
    if "randomness" in manifest:
        manifest["randomness"] = _note_seed_file(manifest["randomness"])
    manifest["created"] = utc_now()
    if started is not None:
        manifest["seconds"] = {**manifest["seconds"], "wall": time.perf_counter() - started}
    captured = _CAPTURED.get()
    if captured is not None:
        captured.append(manifest)
    return manifest


def to_json(obj: Any) -> Any:
    """A copy of ``obj`` with numpy scalars/arrays, tuples and paths made JSON-ready.

    Parameters
    ----------
    obj : object
        Nested dicts, lists, tuples, numpy values, paths and JSON scalars.

    Returns
    -------
    object
        The same structure of plain Python values (mapping keys become strings).
    """
    if isinstance(obj, Mapping):
        return {str(key): to_json(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_json(value) for value in obj]
    if isinstance(obj, np.ndarray):
        return to_json(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    return obj


def write_manifest(path: str | os.PathLike[str] | None, manifest: Mapping[str, Any]) -> None:
    """Write ``manifest`` as indented JSON to ``path`` atomically (nothing when path is None).

    Parameters
    ----------
    path : path-like or None
        The ``--report`` file.
    manifest : mapping
        The manifest; numpy scalars are converted.

    Raises
    ------
    anonymatch.core.errors.InputError
        If the directory of ``path`` does not exist.
    """
    if not path:
        return
    text = json.dumps(to_json(manifest), indent=2) + "\n"
    write_atomically(path, lambda tmp: tmp.write_text(text))


def rename_keys(block: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``block`` with keys renamed to the schema's one spelling (order kept).

    Parameters
    ----------
    block : mapping
        E.g. a verifier's ``to_dict()``.
    names : mapping
        Old key → new key.

    Returns
    -------
    dict
        The renamed copy.
    """
    return {names.get(key, key): value for key, value in block.items()}


# Reading: the one reader of a manifest file

OBJECT, LIST, TEXT, NUMBER, INTEGER, BOOL = "object", "list", "text", "number", "integer", "bool"

_NAMES = {"": LIST, "*": TEXT}  # a list of column names
_CODES = {"": OBJECT, "*": {"": LIST, "*": TEXT}}  # column → list of codes

SHAPE: dict[str, Any] = {
    "": OBJECT,
    "schema": TEXT,
    "created": TEXT,
    "command": TEXT,
    "data_kind": TEXT,
    "method": TEXT,
    "tool": {"": OBJECT, "name": TEXT, "version": TEXT},
    "parameters": {
        "": OBJECT,
        "qi": _NAMES,
        "numeric": _NAMES,
        "sensitive": _NAMES,
        "identifiers": _NAMES,
        "weights": {"": OBJECT, "*": NUMBER},
        "partition_size": INTEGER,
        "partitions": INTEGER,
        "suppression_limit": NUMBER,
        "k_column": TEXT,
        "hierarchy_cells": TEXT,
        "ordinal": {"": OBJECT, "*": {"": LIST, "*": TEXT}},
        "dates": {"": OBJECT, "*": TEXT},
        "hierarchies": {"": OBJECT, "*": {"": OBJECT, "path": TEXT, "file": TEXT}},
        "na_codes": _CODES,
        "input_options": {
            "": OBJECT,
            "format": TEXT,
            "sep": TEXT,
            "quotechar": TEXT,
            "names": _NAMES,
            "na_values": _NAMES,
            "drop_missing": BOOL,
            "na": _CODES,
            "item_sep": TEXT,
            "id_column": TEXT,
            "item_column": TEXT,
            "dedupe": BOOL,
        },
    },
    "randomness": {"": OBJECT},
    "input": {
        "": OBJECT,
        "path": TEXT,
        "records": INTEGER,
        "dropped_missing": INTEGER,
        "suppressed": INTEGER,
    },
    "output": {"": OBJECT, "path": TEXT, "records": INTEGER, "layout": TEXT},
    "guarantee": {
        "": OBJECT,
        "model": TEXT,
        "k": INTEGER,
        "m": INTEGER,
        "l": NUMBER,
        "epsilon": NUMBER,
        "levels": {"": OBJECT, "column": TEXT},
        "sensitive": {
            "": LIST,
            "*": {
                "": OBJECT,
                "column": TEXT,
                "l": NUMBER,
                "t": NUMBER,
                "c": NUMBER,
                "diversity": TEXT,
                "default": BOOL,
            },
        },
        "unprotected": _NAMES,
    },
    "verification": {"": OBJECT, "passed": BOOL, "reason": TEXT},
    "loss": {
        "": OBJECT,
        "ncp": {"": OBJECT, "*": NUMBER},
        **dict.fromkeys(
            (
                "gcp",
                "gcp_with_suppressed",
                "stars",
                "suppressed_cells",
                "error_rate",
                "mean_max_errors",
                "item_ncp",
                "jaccard",
                "suppressed",
                "created",
            ),
            NUMBER,
        ),
    },
    "seconds": {"": OBJECT, "*": NUMBER},
    "plan": {"": OBJECT},
}
"""What the readers of a manifest rely on: for each key its type (``""`` is the value itself,
``"*"`` each item of a list or each value of an object). A named key may be null (not given);
an item or a value under ``"*"`` may not."""


def _is(value: Any, kind: str) -> bool:
    if kind == OBJECT:
        return isinstance(value, Mapping)
    if kind == LIST:
        return isinstance(value, list)
    if kind == TEXT:
        return isinstance(value, str)
    if kind == BOOL:
        return isinstance(value, bool)
    if isinstance(value, bool):  # True is no number of rows
        return False
    if kind == INTEGER:
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, int | float)


def _where(path: list[str]) -> str:
    return ".".join(path) or "(the document)"


def _check(value: Any, shape: Any, path: list[str], item: bool = False) -> None:
    if value is None:
        if item:  # a key may be null (not given); an item of a list or a column's value not
            raise InputError(f"{_where(path)} is null")
        return
    kind = shape if isinstance(shape, str) else shape[""]
    if not _is(value, kind):
        an = "an" if kind[0] in "aeiou" else "a"
        raise InputError(
            f"{_where(path)} is {type(value).__name__ if value is not None else 'null'}, "
            f"expected {an} {kind}"
        )
    if isinstance(shape, str):
        return
    if isinstance(value, list):
        if "*" in shape:
            for i, item in enumerate(value):
                where = [*path[:-1], f"{path[-1] if path else ''}[{i}]"]
                _check(item, shape["*"], where, item=True)
        return
    for key, item in value.items():
        if key in shape and key not in ("", "*"):
            _check(item, shape[key], [*path, str(key)])
        elif "*" in shape:
            _check(item, shape["*"], [*path, str(key)], item=True)


def check_manifest(manifest: Any, source: str = "the manifest") -> dict[str, Any]:
    """``manifest`` if it has the shape of :data:`SHAPE` (InputError naming the first key that
    has not, prefixed by ``source``). O(size of the manifest)."""
    try:
        _check(manifest, SHAPE, [])
    except InputError as exc:
        raise InputError(f"{source}: not an anonymatch manifest: {exc}") from None
    return dict(manifest)


def load_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check the manifest at ``path`` (:func:`check_manifest`).

    Raises
    ------
    InputError
        Missing, not a regular file, too large, not UTF-8, not JSON, too deep, or not of the
        shape of a manifest: one line.
    """
    return check_manifest(load_json(path, "manifest"), f"manifest {os.fspath(path)}")
