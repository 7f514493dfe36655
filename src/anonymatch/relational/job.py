"""The typed relational-transaction job: one validated value describes an ``anonymize-rt`` run.

The Python front (``anonymatch.relational.anonymize``) and the ``anonymize-rt`` command build a
:class:`RelationalJob`, as the tables build a ``TableJob`` and the sets a ``SetJob``:
:meth:`RelationalJob.build` makes every check that needs only the parameters, once (strict
types through ``anonymatch.core.params``, the roles of the columns through the tables'
``Schema.build``, the method from the registry ``anonymatch.relational.methods``);
:func:`check_data` makes the checks that need the people (the level against their number —
``InfeasibleError``, exit 3 —, the id column is not a QI).

Messages name the parameter as a Python caller writes it (```item_weight```); the command line
prints its flag. Every function is O(1) but :func:`check_data` (O(columns)).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from anonymatch.core.criteria import Criterion
from anonymatch.core.errors import InputError
from anonymatch.core.params import (
    STREAM_MIN_ROWS,
    Execution,
    check_level_fits,
    check_seed,
    integer,
    number,
    optional_integer,
    param,
    streamed_executor,
    with_defaults,
)
from anonymatch.core.registry import lookup
from anonymatch.relational.methods import RelationalMethod, registry
from anonymatch.tables.models import RELATIONAL_CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS, STRICT

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.relational.io import People
    from anonymatch.tables.columns.schema import MissingCodes, Schema
    from anonymatch.tables.models.disclosure import SensitiveModel, SensitiveModels

DEFAULT_ITEM_WEIGHT = 0.005
"""λ, the price of one uncertain item in GCP units (a record's GCP is in [0, 1]): chosen on
INFORMS (benchmarks/relational_informs.py, docs/results.md) so that at k = 10 the relational GCP
stays within 1.5× of the table-only release while the uncertain items drop (0.005: 1.25×
and 11 % fewer uncertain items than λ = 0; 0.01: 1.46× and 19 % fewer)."""

PARAMETERS: dict[str, Any] = {
    "qi": (),
    "numeric": (),
    "identifiers": (),
    "weights": None,
    "types": None,
    "na_values": None,
    "sensitive": (),
    "method": "hungarian",
    "item_weight": DEFAULT_ITEM_WEIGHT,
    "partition_size": None,
    "seed": None,
    "workers": None,
    **RELATIONAL_CRITERIA.defaults(),  # k, the sensitive models, the population criteria
    **CHECK_OPTIONS.defaults(),  # the release checks' options: strict
}
"""Every parameter of a relational-transaction job and its default (``RelationalJob.build``)."""


@dataclass(frozen=True)
class RelationalJob:
    """A validated ``anonymize-rt`` run.

    Build it with :meth:`build` (from the parameters by name), never field by field: the fields
    are trusted by the pipeline (``anonymatch.relational.pipeline.run_job``).

    Attributes
    ----------
    k : int
        Level of k-anonymity over the joint compatibility graph.
    schema : Schema
        The QIs (``qi``), which of them are numeric (``numeric``), their weights, their types
        (``types``: a ``tables.columns.qitypes.QITypes`` of ordinal, date and hierarchy QIs, as
        for tables), the sensitive columns (``sensitive``) and the identifiers
        (``identifiers``: columns of the people table never published, as the tables'
        ``--identifiers``; the id column never is, listed or not).
    sensitive_models : SensitiveModels
        ℓ-diversity and/or t-closeness on sensitive columns (``l``, ``diversity``, ``c``,
        ``t``: the criterion ``anonymatch.tables.models.disclosure.SensitiveModels``); the
        release is then made of classes that satisfy them.
    method : RelationalMethod
        The registered method.
    item_weight : float
        λ ≥ 0, the price of one uncertain item in GCP units (freeform methods).
    na : MissingCodes
        Missing-value tokens and per-column codes of the QIs (``na_values``, as for tables;
        a missing QI value is published as ``*``).
    partition_size : int or None
        People per partition of the joint order (None: the tables' freeform default, 20·k
        within [300, 1000]).
    seed : int or None
        Seed of the privacy step (None: OS entropy).
    workers : int or None
        Threads building partitions (None: one per core).
    criteria : tuple of Criterion
        The criteria counted against a population of people's QIs (``tables.models.
        CRITERIA``: k-map, the average journalist risk, δ-presence), enforced on the release's
        QI cells after the method and verified (in memory only).
    population : path, DataFrame or None
        Their population table (the people's QI columns).
    strict : bool
        The release checks' option (``tables.risk.leakcheck.CHECK_OPTIONS``): a release whose
        kept columns leak is refused (``LeakRefused``, exit 2, nothing written), in memory and
        streamed, not only warned about.
    """

    k: int
    schema: Schema
    sensitive_models: SensitiveModels
    method: RelationalMethod
    item_weight: float
    na: MissingCodes
    partition_size: int | None
    seed: int | None
    workers: int | None
    keywords: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    criteria: tuple[Criterion, ...] = ()
    population: str | os.PathLike[str] | pd.DataFrame | None = field(default=None, compare=False)
    strict: bool = False

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> RelationalJob:
        """Validate a run's parameters (those of :func:`anonymatch.relational.anonymize` but
        the data).

        Raises
        ------
        InputError
            The first problem, naming the parameter; an unknown parameter; a partition size
            below 2k or given to a method that does not partition.
        """
        from anonymatch.tables.columns.schema import Schema
        from anonymatch.tables.models.disclosure import SensitiveModels

        p = with_defaults(values, PARAMETERS)
        if p["k"] is None:
            raise InputError(f"missing {param('k')}")
        k = integer(p["k"], "k")
        method = lookup(registry(), p["method"])
        from anonymatch.tables.job import missing, qi_types

        schema = Schema.build(
            p["qi"],
            p["numeric"],
            sensitive=p["sensitive"],
            identifiers=p["identifiers"],
            weights=p["weights"],
            types=qi_types(types=p["types"]),
        )
        roles = {"sensitive": schema.sensitive, "numeric": schema.ordered_sensitive}
        built = RELATIONAL_CRITERIA.build({**p, **roles})  # k, the sensitive models, ...
        models = next((c for c in built if isinstance(c, SensitiveModels)), SensitiveModels())
        weight = number(p["item_weight"], "item_weight", low_open=False)
        size = optional_integer(p["partition_size"], "partition_size")
        if size is not None and not method.partitioned:
            raise InputError(f"method {method.name!r} does not use {param('partition_size')}")
        if size is not None and size < 2 * k:
            raise InputError(f"{param('partition_size')} must be at least 2k = {2 * k}, got {size}")
        return cls(
            k,
            schema,
            models,
            method,
            weight,
            missing(p["na_values"]),
            size,
            check_seed(p["seed"]),
            optional_integer(p["workers"], "workers"),
            dict(values),
            tuple(c for c in built if c.needs_population),
            p["population"],
            bool(STRICT.check(p[STRICT.name])),  # a bool: a string or number is refused
        )

    @property
    def models(self) -> tuple[SensitiveModel, ...]:
        """ℓ-diversity / t-closeness per protected sensitive column."""
        return self.sensitive_models.models

    def size_for(self, n: int) -> int:
        """The partition size of a run on n people: the tables' one formula for the freeform
        step the method runs (``tables.methods.Method.partition_size_for``: the one given,
        else 20·k within [300, 1000], at least 2k), at most n."""
        from anonymatch.tables.methods import registry as table_methods

        step = table_methods()[self.method.step or "hungarian"]
        size = step.partition_size_for(self.k, self.partition_size)
        assert size is not None  # the freeform steps are partitioned
        return min(size, n)

    def replace(self, changes: Mapping[str, Any]) -> RelationalJob:
        """A copy with some parameters changed (``changes``: parameter → value), validated
        again."""
        return RelationalJob.build({**self.keywords, **changes})


def streams(
    job: RelationalJob, execution: Execution, stream: bool, rows: Callable[[], int]
) -> bool:
    """Whether an ``anonymize-rt`` run takes the streamed path (``core.params.
    streamed_executor``, the tables' rule): ``stream`` (``--stream``) asks for it, an executor
    other than ``threads`` and ``auto`` or a scheduler too; ``auto`` stays in memory for a job
    with a criterion the streamed path cannot check (``Criterion.paths``) and otherwise
    streams on at least ``STREAM_MIN_ROWS`` people and item ``rows`` (counted only then;
    sensitive models stream: each partition is built and checked for them).

    Raises
    ------
    InputError
        ``stream`` with ``executor`` threads. O(1) + ``rows``.
    """
    if execution.executor == "threads":
        if stream:
            raise InputError(
                f"{param('stream')} runs on {param('executor')} inline, processes or dask, "
                "not threads"
            )
        return False
    if stream:
        return True
    memory_only = any("streamed" not in c.paths for c in job.criteria)
    path = streamed_executor(
        execution, memory_only=memory_only, large=lambda: rows() >= STREAM_MIN_ROWS
    )
    return path is not None


def check_data(job: RelationalJob, people: People) -> None:
    """Check a job against its people.

    Raises
    ------
    InfeasibleError
        ``k`` is larger than the number of people (exit code 3).
    InputError
        The id column is listed as a QI (it identifies, it is never published), or an
        identifier is not a column of the people table.
    """
    check_columns(job, people.id_column, [str(c) for c in people.table.columns])
    check_level_fits(job.k, people.n, "k", "people")


def check_columns(job: RelationalJob, id_column: str, columns: Sequence[str]) -> None:
    """Check the job's roles against the people table's ``columns`` (the in-memory and the
    streamed path's one rule): the id column is not a QI, every identifier is a column.

    Raises
    ------
    InputError
        The id column listed as a QI, or an identifier the people table lacks. O(columns).
    """
    if id_column in job.schema.qi:
        raise InputError(
            f"the id column {id_column!r} cannot be a quasi-identifier ({param('qi')}): "
            "it is never published"
        )
    present = set(columns)
    for name in job.schema.identifiers:
        if name not in present:
            raise InputError(
                f"unknown identifier column {name!r} ({param('identifiers')}); the people "
                f"table has: {', '.join(columns)}"
            )
