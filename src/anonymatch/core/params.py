"""Parameters every data kind's job shares: levels, seeds, choices and where the work runs.

A run is described by one typed, frozen job value per data kind (``anonymatch.tables.job.
TableJob`` first), built from the Python keywords, the command line, a job file, the web app or a
manifest, and validated once when it is built. The checks here are strict in the way Python is:
a bool is never a number (``k=True`` is refused, not read as 1), a string is never a number
(``k="10"`` is refused), unknown choices are refused with the list of known ones.

Messages name the parameter as the Python caller wrote it, between backticks (```k``` must be
a positive integer, got True); the command line prints the flag instead (``--k``), through the
one table of ``anonymatch.cli.options`` (:func:`anonymatch.cli.options.in_cli_words`). Every
helper is O(size of its argument).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from anonymatch.core.errors import InfeasibleError, InputError

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
