"""The population options of ``risk`` (``--population``, ``--sampling-fraction``,
``--weights``): figures of a release against a population table or estimated from the sample
(``anonymatch.tables.risk.population``; docs/guarantees/population.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class PopulationFlags:
    """``--population`` (a table file), ``--sampling-fraction`` and ``--weights`` (a column of
    the original) as given; :attr:`given` when any is."""

    population: str | None = None
    sampling_fraction: float | None = None
    weights: str | None = None

    @property
    def given(self) -> bool:
        return (
            self.population is not None
            or self.sampling_fraction is not None
            or self.weights is not None
        )


def population_options(func: F) -> F:
    """Decorator: the three population flags, passed to the command as one
    :class:`PopulationFlags` named ``population``."""

    @click.option(
        "--population",
        "population_path",
        default=None,
        help="A table of the population the original was sampled from (its QI columns): "
        "k-map, journalist and marketer risk, population uniques, delta-presence.",
    )
    @click.option(
        "--sampling-fraction",
        type=float,
        default=None,
        help="Share of the population in the original, in (0, 1]: population uniqueness "
        "estimated from the sample (Pitman, Zayatz, SNB, Dankar) and individual risk.",
    )
    @click.option(
        "--weights",
        "weights_column",
        default=None,
        help="A column of the original holding survey weights (each > 0), instead of "
        "--sampling-fraction.",
    )
    @functools.wraps(func)
    def wrapper(**params: Any) -> Any:
        params["population"] = PopulationFlags(
            params.pop("population_path"),
            params.pop("sampling_fraction"),
            params.pop("weights_column"),
        )
        return func(**params)

    return wrapper  # type: ignore[return-value]


def population_figures(
    original: Any, release: Any, flags: PopulationFlags, options: Any, csv: Any
) -> Any:
    """The ``population`` section (``PopulationReport``) of a risk report: ``options`` is the
    library's ``PopulationInput``, ``csv`` how to read the population file (as the original).
    Raises InputError (one line, exit 2) on a bad fraction, weight or population."""
    from anonymatch.core.errors import InputError
    from anonymatch.tables.io import read_table
    from anonymatch.tables.risk.estimators import check_fraction
    from anonymatch.tables.risk.population import PopulationSource, assess_population

    if flags.sampling_fraction is not None:
        check_fraction(flags.sampling_fraction, "--sampling-fraction")
    if flags.sampling_fraction is not None and flags.weights is not None:
        raise InputError("give --sampling-fraction or --weights, not both")
    table = None if flags.population is None else read_table(flags.population, csv)
    source = PopulationSource(table, flags.sampling_fraction, flags.weights)
    return assess_population(original, release, options, source)


def print_population(report: Any) -> None:
    """The population figures, one line each (``risk`` without ``--json``)."""
    exact = report.exact
    if exact is not None:
        u = exact.uniques
        click.echo(f"population: {exact.population} records")
        click.echo(f"  k-map (fewest population records per published row)  {exact.kmap}")
        click.echo(
            f"  journalist risk  max {exact.journalist_max:.4f}, mean {exact.journalist_mean:.4f}"
        )
        click.echo(f"  marketer risk    {exact.marketer:.4f}")
        click.echo(
            f"  original QIs: unique in the sample {u.sample_uniques}, in the population "
            f"{u.population_uniques} ({100 * u.population_uniques / u.records:.2f}%)"
        )
        if exact.presence is not None:
            p = exact.presence
            click.echo(
                f"  delta-presence   {p.min:.4f} .. {p.max:.4f}; {p.outside} population records "
                "fit no published row"
            )
        else:
            click.echo(
                f"  delta-presence   not computed: {u.not_in_population} sample records are "
                "not in the population"
            )
    est = report.estimates
    parts = []
    for e in est.estimates:
        value = "n/a" if e.share is None else f"{100 * e.share:.2f}%"
        parts.append(f"{e.name} {value}" + (f" ({e.model})" if e.name == "dankar" else ""))
    click.echo(
        f"population uniques estimated from the sample (f = {est.fraction:.4g}): "
        + ", ".join(parts)
    )
    ind = est.individual
    click.echo(
        f"individual risk (sdcMicro): max {ind.max():.4f}, mean {ind.mean():.4f}, expected "
        f"re-identifications {ind.sum():.1f}"
    )
