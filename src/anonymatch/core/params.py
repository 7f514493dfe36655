"""Parameter checks, done once at the boundary: the fronts' arguments and the typed jobs' fields.

A run is described by one typed, frozen job value per data kind (``anonymatch.tables.job.
TableJob`` first), built from the Python keywords, the command line, a job file, the web app or a
manifest, and validated once when it is built; the kind fronts (``anonymatch.tables``, ``sets``,
``sparse``, ``graphs``, ``relational``) and the lower-level public functions
(``tables.models.adaptive.anonymize_adaptive``, ``tables.models.kl.anonymize_kl``/``check_kl``,
``sets.km.anonymize_km``, ``Schema.build``, ``tables.pipeline.prepare``) check what the user
passed with the same helpers; the kernels behind them trust their inputs.

The checks are strict in the way Python is: a bool is never a number (``k=True`` is refused, not
read as 1), a string is never a number (``k="10"`` is refused), unknown choices are refused with
the list of known ones. Wrong *types* of the fronts' data arguments (:func:`column_list`,
:func:`require_frame`) raise ``ArgumentTypeError`` naming the parameter — an ``InputError`` (CLI
exit code 2) that is also a ``TypeError``, as Python itself would raise; wrong *values* raise
``InputError``. No argument reaches numpy unchecked, so the user never sees a numpy error from
deep inside.

Messages of the typed jobs' checks name the parameter as the Python caller wrote it, between
backticks (```k``` must be a positive integer, got True); the command line prints the flag
instead (``--k``), through the one table of ``anonymatch.cli.options``
(:func:`anonymatch.cli.options.in_cli_words`). Every helper is O(size of its argument).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from anonymatch.core.errors import ArgumentTypeError, InfeasibleError, InputError

EXECUTORS = ("auto", "inline", "threads", "processes", "dask")
"""Where the work runs: ``auto`` (in memory on threads for small inputs, else the streamed path
on processes, or Dask with workers or a scheduler), or one of the four executors."""

Executor = Literal["auto", "inline", "threads", "processes", "dask"]


def param(name: str) -> str:
    """A parameter's name as messages write it (```name```): the CLI shows its flag instead."""
    return f"`{name}`"


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def integer(value: object, name: str, *, minimum: int = 1) -> int:
    """``value`` as an int ≥ ``minimum`` (numpy integers accepted; bools and strings refused)."""
    if not _is_int(value):
        raise InputError(f"{param(name)} must be an integer of at least {minimum}, got {value!r}")
    number = int(cast(int, value))
    if number < minimum:
        raise InputError(f"{param(name)} must be an integer of at least {minimum}, got {number}")
    return number


def optional_integer(value: object, name: str, *, minimum: int = 1) -> int | None:
    """None, or :func:`integer`."""
    return None if value is None else integer(value, name, minimum=minimum)


def check_seed(value: object, name: str = "seed") -> int | None:
    """``None`` (OS entropy) or an int ≥ 0; a bool, a negative number or anything else raises
    ``InputError`` naming ``name``."""
    if value is None:
        return None
    if not _is_int(value) or int(value) < 0:  # type: ignore[call-overload]
        raise InputError(f"{name} must be None or a non-negative integer, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def number(
    value: object,
    name: str,
    *,
    low: float = 0.0,
    high: float = math.inf,
    low_open: bool = True,
    high_open: bool = False,
) -> float:
    """``value`` as a finite float in the interval (``low``, ``high``] (ends as given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{param(name)} must be a number, got {value!r}")
    x = float(value)
    below = x <= low if low_open else x < low
    above = x >= high if high_open else x > high
    if not math.isfinite(x) or below or above:
        left = "(" if low_open else "["
        right = ")" if high_open or math.isinf(high) else "]"
        top = "∞" if math.isinf(high) else f"{high:g}"
        raise InputError(f"{param(name)} must be in {left}{low:g}, {top}{right}, got {value!r}")
    return x


def flag(value: object, name: str) -> bool:
    """``value`` if it is a bool (0/1 and strings are refused)."""
    if not isinstance(value, bool):
        raise InputError(f"{param(name)} must be True or False, got {value!r}")
    return value


def choice(value: object, name: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{param(name)} must be one of {', '.join(choices)}, got {value!r}")
    return value


def text(value: object, name: str) -> str | None:
    """None, or a non-blank str."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{param(name)} must be a non-empty string, got {value!r}")
    return value


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


def check_level_fits(level: int, n: int, name: str = "k", records: str = "rows") -> None:
    """The one infeasibility check of every kind: a level above the number of records cannot be
    met (``InfeasibleError``, CLI exit code 3, whatever the data kind). O(1)."""
    if level > n:
        raise InfeasibleError(
            f"infeasible: {name} = {level} is larger than the number of {records} ({n})"
        )


@dataclass(frozen=True)
class Execution:
    """Where a run's work goes (every kind): the executor, its workers, a Dask scheduler's
    address, rows per job of a streamed path, and whether to show progress.

    Build it with :meth:`build` (validated); the fields are then trusted.
    """

    executor: Executor = "auto"
    workers: int | None = None
    scheduler: str | None = None
    chunk_rows: int | None = None
    progress: bool = False

    @classmethod
    def build(
        cls,
        executor: object = "auto",
        workers: object = None,
        scheduler: object = None,
        chunk_rows: object = None,
        progress: object = False,
    ) -> Execution:
        """Validated execution settings (``InputError`` naming the parameter otherwise)."""
        name = choice(executor, "executor", EXECUTORS)
        address = text(scheduler, "scheduler")
        if address is not None and name == "threads":  # threads keep the run in memory
            raise InputError(f"{param('scheduler')} needs {param('executor')} dask or auto")
        return cls(
            cast(Executor, name),
            optional_integer(workers, "workers"),
            address,
            optional_integer(chunk_rows, "chunk_rows"),
            flag(progress, "progress"),
        )


STREAM_MIN_ROWS = 200_000
"""Inputs of at least this many rows take the streamed, partitioned path under ``auto``."""


Streamed = Literal["inline", "processes", "dask"]
"""The executors of a streamed path."""


def streamed_executor(
    execution: Execution,
    *,
    memory_only: bool,
    large: Callable[[], bool],
    required: bool = False,
) -> Streamed | None:
    """Where a run goes, whatever its kind: the executor of the streamed path, or None for
    the in-memory path. ``threads`` keeps the run in memory; an executor asked for by name
    (or a scheduler: Dask) is taken as asked — the plan then refuses what that path cannot
    run (exit 2); ``auto`` stays in memory for a job only the in-memory path can run
    (``memory_only``: its method, a criterion, a suppression limit) unless the files need
    the streamed path (``required``: a directory of parts read or written — the plan then
    names what that path cannot run), and otherwise streams on processes (Dask with workers)
    when the input is ``large`` (called only then). O(1) + ``large``."""
    if execution.executor == "threads":
        return None
    if execution.scheduler:
        return "dask"
    if execution.executor != "auto":
        return cast(Streamed, execution.executor)
    if memory_only and not required:
        return None
    if execution.workers is not None:
        return "dask"
    return "processes" if required or large() else None


def accept_keywords(
    front: str, keywords: Mapping[str, Any], known: Sequence[str], required: Sequence[str] = ()
) -> None:
    """Refuse, as Python refuses a bad call, a keyword the function ``front`` does not take or
    a missing required one (TypeError): for fronts that pass their keywords to a typed job,
    whose ``build`` then checks the values. O(number of keywords)."""
    for name in keywords:
        if name not in known:
            raise TypeError(f"{front}() got an unexpected keyword argument {name!r}")
    for name in required:
        if name not in keywords:
            raise TypeError(f"{front}() missing required keyword argument: {name!r}")


def with_defaults(keywords: Mapping[str, Any], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A job's parameters: the defaults ``parameters`` updated by ``keywords`` (a typed job's
    ``build``). An unknown keyword is refused, with the known ones. O(number of parameters)."""
    unknown = sorted(set(keywords) - set(parameters))
    if unknown:
        raise InputError(
            f"unknown parameter {param(unknown[0])}; known: {', '.join(sorted(parameters))}"
        )
    return {**parameters, **keywords}
