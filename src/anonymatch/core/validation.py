"""Validation of the public fronts' arguments, done once at the boundary.

The kind fronts (``anonymatch.tables``, ``sets``, ``sparse``, ``graphs``) call these helpers on what
the user passed, and so do the lower-level public functions
(``tables.models.adaptive.anonymize_adaptive``, ``tables.models.kl.anonymize_kl``/``check_kl``,
``sets.km.anonymize_km``) and the table pipelines' common entry (``Schema.build``,
``tables.pipeline.prepare``); the kernels behind them trust their inputs. Wrong *types* raise
``ArgumentTypeError`` naming the parameter — an ``InputError`` (CLI exit code 2) that is also a
``TypeError``, as Python itself would raise; wrong *values* raise ``InputError``. No argument
reaches numpy unchecked, so the user never sees a numpy error from deep inside. Every helper is
O(size of the argument).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

from anonymatch.core.errors import ArgumentTypeError, InputError

__all__ = [
    "check_dimensions",
    "check_k",
    "check_optional_level",
    "check_positive_number",
    "check_seed",
    "check_weights",
    "column_list",
    "require_frame",
    "type_name",
]


def type_name(value: object) -> str:
    """The short type name used in messages: ``list``, ``ndarray``, ``NoneType`` …"""
    return type(value).__name__


def column_list(value: object, name: str) -> list[str]:
    """Normalise a column-list parameter (``qi``, ``numeric``, ``sensitive``, ``identifiers``).

    A ``str`` is read as a comma-separated list (``"age,sex"`` → ``["age", "sex"]``; blanks
    around names are dropped, empty names are skipped, so ``""`` is the empty list); ``None`` is
    the empty list; any other iterable of strings is listed in order. Anything else — a number,
    a mapping, an iterable holding non-strings — raises ``TypeError`` naming ``name``.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, bytes | Mapping) or not isinstance(value, Iterable):
        raise ArgumentTypeError(
            f"{name} must be a list of column names or a comma-separated string, "
            f"got {type_name(value)}"
        )
    out = list(value)
    for item in out:
        if not isinstance(item, str):
            raise ArgumentTypeError(f"{name} must hold column names (str), got {type_name(item)}")
    return out


def require_frame(value: object, name: str = "data") -> Any:
    """``value`` as a pandas DataFrame — the one place where the fronts accept other frames:
    a Polars ``DataFrame`` (a ``LazyFrame`` is collected), an Arrow ``Table`` or
    ``RecordBatch`` (through ``to_pandas``: Arrow's types, integers with NULLs as floats, as
    pandas reads a Parquet file), or a Dask DataFrame (computed: its rows are collected here,
    in memory). Anything else raises ``TypeError`` naming ``name``. O(cells) for a
    conversion, O(1) for a pandas DataFrame. The libraries are never imported for a
    pandas frame: the type is told by its module's name."""
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return value
    library = type(value).__module__.split(".", 1)[0]
    kind = type(value).__name__
    source: Any = value  # a frame of another library, told by its type's module
    converted: object = None
    if library == "polars" and kind in ("DataFrame", "LazyFrame"):
        frame = source.collect() if kind == "LazyFrame" else source
        converted = frame.to_arrow().to_pandas()
    elif library == "pyarrow" and kind in ("Table", "RecordBatch"):
        converted = source.to_pandas()
    elif library in ("dask", "dask_expr") and kind == "DataFrame":
        converted = source.compute()
    if not isinstance(converted, pd.DataFrame):
        raise ArgumentTypeError(f"{name} must be a pandas DataFrame, got {kind}")
    converted.columns = pd.Index([str(c) for c in converted.columns])
    return converted.reset_index(drop=True)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_k(value: object, name: str = "k") -> int:
    """``value`` as a positive int (numpy integers accepted); ``InputError`` otherwise."""
    if not _is_int(value):
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    k = int(value)  # type: ignore[call-overload]
    if k < 1:
        raise InputError(f"{name} must be a positive integer, got {k}")
    return k


def check_optional_level(value: object, name: str) -> int | None:
    """``None``, or a positive int as in ``check_k``."""
    return None if value is None else check_k(value, name)


def check_positive_number(value: object, name: str) -> float:
    """``value`` as a finite float > 0 (a bool is not a number); ``InputError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a positive number, got {value!r}")
    number = float(value)
    if not (math.isfinite(number) and number > 0):
        raise InputError(f"{name} must be a positive number, got {value!r}")
    return number


def check_seed(value: object, name: str = "seed") -> int | None:
    """``None`` (OS entropy) or an int ≥ 0; a bool, a negative number or anything else raises
    ``InputError`` naming ``name``."""
    if value is None:
        return None
    if not _is_int(value) or int(value) < 0:  # type: ignore[call-overload]
        raise InputError(f"{name} must be None or a non-negative integer, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def check_weights(value: object, name: str = "weights") -> dict[str, float] | None:
    """``None``, or a mapping from column names (str) to finite non-negative numbers, returned
    as a new dict of floats; ``InputError`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError(f"{name} must map column names to numbers, got {type_name(value)}")
    out: dict[str, float] = {}
    for key, weight in value.items():
        if not isinstance(key, str):
            raise InputError(f"{name} must be keyed by column names, got key {key!r}")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise InputError(f"{name}[{key!r}] must be a number, got {weight!r}")
        w = float(weight)
        if not (math.isfinite(w) and w >= 0):
            raise InputError(f"{name}[{key!r}] must be finite and non-negative, got {weight!r}")
        out[key] = w
    return out


DIMENSION_FLOOR = 1 << 24
"""Rows/columns always allowed (an ``indptr`` of 128 MiB), whatever the number of edges."""

IDS_PER_EDGE = 64
"""Beyond the floor, at most this many rows (or columns) per edge read."""


def dimension_limit(edges: int) -> int:
    """The largest number of rows or columns accepted for ``edges`` edges (ones)."""
    return max(DIMENSION_FLOOR, IDS_PER_EDGE * int(edges))


def check_dimensions(n_rows: int, n_cols: int, edges: int, where: str) -> None:
    """Refuse a shape out of proportion to the input before anything of that size is allocated.

    Parameters
    ----------
    n_rows, n_cols : int
        The matrix's shape (largest id + 1, or a declared shape).
    edges : int
        The number of edges (ones) read.
    where : str
        The input, for the message.

    Raises
    ------
    InputError
        If a dimension exceeds :func:`dimension_limit` of ``edges``. O(1).
    """
    limit = dimension_limit(edges)
    for what, size in (("row", n_rows), ("column", n_cols)):
        if size > limit:
            raise InputError(
                f"{where}: {what} id {size - 1} is out of proportion to the {edges} edges read "
                f"(ids must stay below max(2^24, {IDS_PER_EDGE} x edges) = {limit}); relabel "
                "the ids to 0 … n-1"
            )
