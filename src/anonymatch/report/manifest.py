"""Reading an audit manifest that may be damaged: one loader for ``report`` and
``verify --manifest``.

:func:`load_manifest` reads the file through the bounded JSON reader
(``anonymatch.tables.io.documents``: a regular file, at most 64 MiB, nested at most 64 levels)
and :func:`check_manifest` then holds it to the shape that the readers of a manifest rely on
(:data:`SHAPE`): every key they read has the type they expect, or is absent or null. A manifest
cut short, with a list where an object belongs, text where a number belongs or nested without
end is refused with one line naming the key (exit 2), never met by an ``AttributeError`` deep in
a section builder. Keys the shape does not name are not checked (a newer manifest may add some).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from anonymatch.core.errors import InputError

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
            },
        },
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
    from anonymatch.tables.io.documents import load_json

    return check_manifest(load_json(path, "manifest"), f"manifest {os.fspath(path)}")
