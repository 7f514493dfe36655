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

import numpy as np
import pandas as pd

from anonymatch.core.files import write_atomically
from anonymatch.tables.columns.schema import EncodedQI

RELEASE_SCHEMA = "anonymatch-release/1"
"""The ``schema`` of a CSV release's sidecar file (``release.csv.schema.json``)."""

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


def typed_kept_column(column: pd.Series, dtype: str) -> pd.Series:
    """``column`` converted to ``dtype`` (from :func:`kept_column_dtype`)."""
    if dtype == "string":
        return column.astype(str) if column.dtype != object else column
    if dtype == "bool":
        return column.astype(bool)
    numbers = column if pd.api.types.is_numeric_dtype(column.dtype) else column.astype(str)
    return pd.to_numeric(numbers).astype(np.dtype(dtype))


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
            values = "integer" if numeric[name] else "float"
            columns.append({"name": name, "role": "qi", "cell": "range", "values": values})
        elif name in qi.cat_names:
            columns.append({"name": name, "role": "qi", "cell": "set"})
        else:
            dtype = kept_column_dtype(frame[name]) if frame is not None else "string"
            columns.append({"name": name, "role": "kept", "dtype": dtype})
    return {"schema": RELEASE_SCHEMA, "columns": columns}


def write_schema(path: str | os.PathLike[str], schema: dict[str, object]) -> str:
    """Write the sidecar of the CSV release ``path`` atomically; returns its path."""
    text = json.dumps(schema, indent=2) + "\n"
    sidecar = schema_path(path)
    write_atomically(sidecar, lambda tmp: Path(tmp).write_text(text))
    return sidecar


def schema_path(path: str | os.PathLike[str]) -> str:
    """Where the sidecar of a CSV release lives: ``release.csv`` → ``release.csv.schema.json``."""
    return os.fspath(path) + ".schema.json"
