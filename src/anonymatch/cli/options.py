"""Options and helpers shared by every command: input formats, roles, seed, executor,
manifest writing, progress."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import numpy as np

from anonymatch.core.errors import InputError
from anonymatch.tables.io import CsvOptions
from anonymatch.tables.schema import DEFAULT_NA_VALUES

F = TypeVar("F", bound=Callable[..., Any])


def comma_list(value: str | None) -> list[str]:
    if not value:
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def parse_weights(value: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in comma_list(value):
        name, sep, number = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(number)
        except ValueError:
            raise InputError(f"--weights expects name=number pairs, got {item!r}") from None
    return out


def table_input_options(func: F) -> F:
    """Options describing how to read the original table (shared by all commands)."""
    options = [
        click.option(
            "--sep", default=None, help="Field separator (default: tab for .tsv, else ',')."
        ),
        click.option(
            "--names", default=None, help="Comma-separated column names for a file without header."
        ),
        click.option("--quotechar", default='"', show_default=True, help="CSV quote character."),
        click.option(
            "--na-values",
            default=None,
            help="Comma-separated tokens meaning 'missing' "
            f"(default: {','.join(repr(v) for v in DEFAULT_NA_VALUES)}).",
        ),
        click.option("--drop-missing", is_flag=True, help="Drop rows with a missing QI value."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


# Inputs of at least this many rows take the streamed, partitioned path by default.
STREAM_MIN_ROWS = 200_000


def scale_options(func: F) -> F:
    """Options of the streamed, partitioned path (shared by anonymize and verify)."""
    options = [
        click.option(
            "--executor",
            type=click.Choice(["auto", "inline", "processes", "dask"]),
            default="auto",
            show_default=True,
            help="Where partitions run: auto = in memory for inputs under "
            f"{STREAM_MIN_ROWS:,} rows, else streamed on local processes (a Dask cluster "
            "with --workers or --scheduler).",
        ),
        click.option(
            "--scheduler",
            default=None,
            help="Address of an existing dask.distributed scheduler, e.g. tcp://host:8786.",
        ),
        click.option(
            "--workers",
            type=int,
            default=None,
            help="Start a local Dask cluster of this many worker processes (with --executor "
            "processes: the pool size). Default: all cores.",
        ),
        click.option(
            "--chunk-rows",
            type=int,
            default=50_000,
            show_default=True,
            help="Rows per job of the streamed path (whole partitions).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def csv_options(sep: str | None, names: str | None, quotechar: str) -> CsvOptions:
    if sep is not None:
        sep = sep.encode().decode("unicode_escape")  # allow --sep '\t'
        if not sep:
            raise InputError("--sep must not be empty")
    return CsvOptions(sep=sep, names=comma_list(names) or None, quotechar=quotechar)


def na_tokens(value: str | None) -> tuple[str, ...]:
    return DEFAULT_NA_VALUES if value is None else tuple(v.strip() for v in value.split(","))


def check_output_path(path: str | None, input_path: str) -> None:
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(f"output path is a directory: {path}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"output directory does not exist: {parent}")
    if os.path.exists(input_path) and p.exists() and p.resolve() == Path(input_path).resolve():
        raise InputError("the output would overwrite the input")


def json_default(obj: object) -> object:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(type(obj).__name__)


def progress_printer(quiet: bool) -> Any:
    if quiet:
        return None
    return lambda msg: click.echo(msg, err=True)


def echo_check_summary(report: Any, what: str, show: int) -> None:
    status = "PASS" if report.passed else "FAIL"
    click.echo(
        f"{status}: {what}; k = {report.k}, {report.n_records} records; largest level "
        f"satisfied {report.max_level}; minimal violations {report.n_violations}"
    )
    for st in report.levels:
        click.echo(
            f"  level {st['level']}: {st['violations']} minimal violations, "
            f"{st['records_at_risk']} records at risk"
        )
    for v in report.violations[:show]:
        if v.attributes:
            combo = ", ".join(f"{a}={x}" for a, x in zip(v.attributes, v.values, strict=True))
        else:
            combo = "{" + ", ".join(v.values) + "}"
        click.echo(f"  {v.count}x  {combo}")
    if report.n_violations > show:
        click.echo(f"  … {report.n_violations - show} more (see --json)")
