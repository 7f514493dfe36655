"""Typing a table release without the original: the types of its kept columns and the
sidecar ``RELEASE.schema.json`` of a CSV release (``docs/release-format.md``).

A CSV cell ``40`` may be a range of a numeric QI, a label of a categorical QI or a kept number:
the sidecar says which, and :func:`kept_column_dtype` decides when a kept column is published
(Parquet) or read back (:func:`anonymatch.tables.io.release.read_release`) as numbers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anonymatch.core.errors import InputError
from anonymatch.core.files import write_atomically
from anonymatch.tables.columns.schema import EncodedQI

RELEASE_SCHEMA = "anonymatch-release/1"
"""The ``schema`` of a CSV release's sidecar file (``release.csv.schema.json``)."""

PARQUET_TYPING_KEY = b"anonymatch.release"
"""The key of a Parquet release's schema metadata holding the sidecar document (JSON)."""

_INTEGER = r"-?(0|[1-9][0-9]{0,17})"


def kept_column_dtype(column: pd.Series) -> str:
    """The type a kept (sensitive or other) column is published with: ``int64``/``float64``/
    ``bool`` for typed columns, and for text the number type only when every cell is the exact
    text of that number (``17800``, ``2.4``; never ``007``, ``1e3`` or an empty cell), else
    ``string``. Each distinct text is examined once. O(n) hashing + O(distinct) parsing."""
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype) and not column.isna().any():
        return "int64"
    if pd.api.types.is_float_dtype(dtype):
        return "float64"
    if len(column) == 0 or column.isna().any():
        return "string"
    text = pd.Series(column.astype(str).unique(), dtype=object)
    if text.str.fullmatch(_INTEGER).all():
        return "int64"
    numbers = pd.to_numeric(text, errors="coerce")
    if numbers.notna().all() and all(
        repr(float(x)) == t for x, t in zip(numbers.to_numpy(float), text, strict=True)
    ):
        return "float64"
    return "string"


_BOOLS = {"True": True, "False": False, "true": True, "false": False}


def typed_kept_column(column: pd.Series, dtype: str, name: str = "") -> pd.Series:
    """``column`` converted to ``dtype`` (from :func:`kept_column_dtype`), every conversion
    checked: a ``bool`` cell must read True/False, an ``int64`` cell an integer within int64
    (``1.5``, ``1e19`` or an empty cell are refused, not rounded or wrapped), a ``float64``
    cell a number. InputError naming the column ``name`` and the first bad row otherwise.
    Each distinct text is examined once. O(n) hashing + O(distinct) parsing."""
    if dtype == "string":
        return column.astype(str) if column.dtype != object else column
    if dtype not in ("bool", "int64", "float64"):
        raise InputError(f"column {name!r}: unknown dtype {dtype!r} in the release schema")
    if pd.api.types.is_bool_dtype(column.dtype) or (
        dtype != "bool" and pd.api.types.is_integer_dtype(column.dtype)
    ):
        return column.astype(np.dtype(dtype))
    text = column.astype(object).where(column.notna(), None)
    values: dict[Any, Any] = {}
    for cell in pd.unique(text):
        value = _typed(cell, dtype)
        if value is None:
            row = int(np.flatnonzero((text == cell) if cell is not None else text.isna())[0])
            raise InputError(
                f"cell {'' if cell is None else cell!r} in column {name!r} (row {row + 1}) is not "
                + {"bool": "True or False", "int64": "an int64 integer"}.get(dtype, "a number")
                + f" (the release schema says {dtype})"
            )
        values[cell] = value
    return text.map(values).astype(np.dtype(dtype))


def _typed(cell: Any, dtype: str) -> Any:
    """One cell as ``dtype``, exactly, or None."""
    from decimal import Decimal, InvalidOperation

    if cell is None:
        return None
    if dtype == "bool":
        return _BOOLS.get(str(cell).strip())
    if isinstance(cell, float) and dtype == "float64":
        return cell
    try:
        number = Decimal(str(cell).strip())
    except (InvalidOperation, ValueError):
        return None
    if not number.is_finite() and dtype == "int64":
        return None
    if dtype == "float64":
        return float(number) if not number.is_nan() else None
    if number != number.to_integral_value() or not -(2**63) <= int(number) < 2**63:
        return None
    return int(number)


def release_schema(
    frame: pd.DataFrame | None, qi: EncodedQI, names: Sequence[str] | None = None
) -> dict[str, object]:
    """The sidecar of a CSV release: every column's role and how to type it without the
    original (``docs/release-format.md``). The columns are ``frame``'s, typed by
    :func:`kept_column_dtype`, or ``names`` with every kept column text (the streamed path,
    which never holds the whole release)."""
    columns: list[dict[str, object]] = []
    numeric = dict(zip(qi.num_names, qi.num_integral.tolist(), strict=True))
    listed = [str(c) for c in (frame.columns if frame is not None else names or ())]
    for name in listed:
        if name in numeric:
            columns.append(_range_column(name, qi, bool(numeric[name])))
        elif name in qi.cat_names:
            described: dict[str, object] = {"name": name, "role": "qi", "cell": "set"}
            tree = qi.types.node_cells(name)
            if tree is not None:
                described.update(_node_block(tree, frame[name] if frame is not None else None))
            columns.append(described)
        else:
            dtype = kept_column_dtype(frame[name]) if frame is not None else "string"
            columns.append({"name": name, "role": "kept", "dtype": dtype})
    return {"schema": RELEASE_SCHEMA, "columns": columns}


def _range_column(name: str, qi: EncodedQI, integral: bool) -> dict[str, object]:
    """The description of a numeric QI: plain numbers, or ranges of an ordinal order's labels
    (``values`` ``ordinal`` with its ``order``) or of date periods (``values`` ``date`` with
    its ``granularity``)."""
    column: dict[str, object] = {"name": name, "role": "qi", "cell": "range"}
    if name in qi.types.ordinal:
        return {**column, "values": "ordinal", "order": list(qi.types.ordinal[name].order)}
    if name in qi.types.dates:
        return {**column, "values": "date", "granularity": qi.types.dates[name].granularity}
    return {**column, "values": "integer" if integral else "float"}


NODE_MAP_LIMIT = 100_000
"""Most leaves a sidecar lists under the hierarchy nodes a release shows; beyond, it names the
hierarchy (file, SHA-256) only and ``read_release`` yields node objects for those cells."""


def _node_block(tree: Any, cells: pd.Series | None) -> dict[str, object]:
    """The sidecar keys of a QI published as hierarchy nodes: ``hierarchy`` (file, SHA-256,
    leaves, levels) and ``nodes``, the leaves under each node label the release shows (when
    they total at most ``NODE_MAP_LIMIT``). O(distinct cells + leaves listed)."""
    from anonymatch.core.cells import NODE_MARK, split_cell

    described = {k: v for k, v in tree.describe().items() if k != "path"}  # no machine path
    block: dict[str, object] = {"hierarchy": described}
    if cells is None:
        return block
    shown = [str(c) for c in pd.unique(cells.astype(str)) if str(c).startswith(NODE_MARK)]
    nodes: dict[str, list[str]] = {}
    total = 0
    for cell in shown:
        label = split_cell(cell[1:])[0]
        try:
            node = tree.node(label)
        except InputError:
            continue
        leaves = [str(v) for v in tree.leaves[tree.node_leaves[[node]].indices]]
        total += len(leaves)
        if total > NODE_MAP_LIMIT:
            return block
        nodes[label] = leaves
    block["nodes"] = nodes
    return block


def write_schema(path: str | os.PathLike[str], schema: dict[str, object]) -> str:
    """Write the sidecar of the CSV release ``path`` atomically; returns its path."""
    text = json.dumps(schema, indent=2) + "\n"
    sidecar = schema_path(path)
    write_atomically(sidecar, lambda tmp: Path(tmp).write_text(text))
    return sidecar


def schema_path(path: str | os.PathLike[str]) -> str:
    """Where the sidecar of a CSV release lives: ``release.csv`` → ``release.csv.schema.json``."""
    return os.fspath(path) + ".schema.json"
