"""Command line for synthetic census-like tables (issue 7): ``generate-census``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import click

from anonymatch.cli.options import output_options, seed_option
from anonymatch.cli.steps import command, with_step
from anonymatch.core.errors import InputError
from anonymatch.core.files import current_path, human_size

F = TypeVar("F", bound=Callable[..., Any])


def _check_writable(path: str, what: str) -> None:
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} is a directory: {path}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"{what} directory does not exist: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{what} directory is not writable: {parent}")


class Fitting(NamedTuple):
    """Where the census model comes from: fitted on Adult (``--source``, ``--estimator``;
    saved to ``--model-out`` if given) or loaded from ``--model``."""

    source: str | None
    estimator: str | None
    model_out: str | None
    model_path: str | None


def fitting(
    source: str | None, estimator: str | None, model_out: str | None, model_path: str | None
) -> Fitting:
    """``--source``, ``--estimator``, ``--model-out``, ``--model`` as one ``Fitting``
    (parameter ``fitting``), refused when ``--model`` is combined with the others."""
    if model_path is not None and any(x is not None for x in (source, estimator, model_out)):
        raise InputError("--model cannot be combined with --source, --estimator or --model-out")
    return Fitting(source, estimator, model_out, model_path)


@command("generate-census")
@output_options(
    "Output table: .csv (with header) or .parquet/.pq.",
    report=False,
    extensions=(".csv", ".parquet", ".pq"),
)
@click.option("--rows", type=int, required=True, help="Number of rows to generate (≥ 1).")
@seed_option
@click.option(
    "--source",
    default=None,
    help="UCI Adult adult.data to fit on (default: $ANONYMATCH_DATA/adult/adult.data).",
)
@click.option(
    "--estimator",
    type=click.Choice(["miller-madow", "plugin"]),
    default=None,
    help="Mutual information weighting the tree's edges when fitting (default: miller-madow; "
    "plugin = Chow & Liu's empirical MI).",
)
@click.option("--model-out", default=None, help="Also save the fitted model here (JSON).")
@click.option(
    "--model",
    "model_path",
    default=None,
    help="Generate from this saved model (JSON) instead of fitting Adult.",
)
@click.option(
    "--chunk-rows",
    type=int,
    default=None,
    help="Rows per write batch / Parquet row group (the data does not depend on it).",
)
@with_step(fitting, "fitting")
def generate_census_cmd(
    output: str,
    rows: int,
    seed: int | None,
    fitting: Fitting,
    chunk_rows: int | None,
    quiet: bool,
) -> None:
    """Generate a synthetic census-like table.

    Synthetic data is not a privacy mechanism. A Chow–Liu tree Bayesian network over UCI Adult's 8
    QIs, hours-per-week and income, sampled in fixed seeded blocks (docs/synthetic.md); the seed
    used is printed."""
    import numpy as np

    from anonymatch.tables.synth import (
        DEFAULT_CHUNK_ROWS,
        CensusModel,
        fit_adult,
        output_kind,
        write_census,
    )

    started = time.perf_counter()
    if rows < 1:
        raise InputError(f"--rows must be at least 1, got {rows}")
    if chunk_rows is not None and chunk_rows < 1:
        raise InputError(f"--chunk-rows must be at least 1, got {chunk_rows}")
    if seed is not None and seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed}")
    source, estimator, model_out, model_path = fitting
    output_kind(output)
    _check_writable(output, "output")
    if model_out is not None:
        _check_writable(model_out, "--model-out")
        if Path(model_out).resolve() == Path(output).resolve():
            raise InputError("--model-out and --output are the same file")
    if model_path is not None:
        model = CensusModel.load(model_path)
    else:
        model = fit_adult(source, estimator or "miller-madow")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    batch = chunk_rows or DEFAULT_CHUNK_ROWS
    if quiet:
        write_census(model, output, rows, seed, chunk_rows=batch)
    else:
        from tqdm import tqdm

        with tqdm(total=rows, unit="rows", unit_scale=True, desc="generate", leave=False) as bar:
            write_census(model, output, rows, seed, chunk_rows=batch, progress=bar.update)
    if model_out is not None:  # after the table, so an interrupted run writes nothing
        model.save(model_out)
    if not quiet:
        size = current_path(output).stat().st_size  # staged until the run ends
        tree = ", ".join(f"{p}→{c}" for p, c, _ in model.edges)
        click.echo(
            f"{rows} synthetic rows × {len(model.columns)} columns -> {output}"
            f" ({human_size(size, 'B')}); seed {seed}"
        )
        click.echo(
            f"model: Chow–Liu tree ({model.estimator} MI) fitted on {model.rows_fitted} rows"
            f" ({model.source or 'saved model'}): {tree}"
        )
        click.echo(f"time: {time.perf_counter() - started:.1f} s")


COMMANDS = [generate_census_cmd]
