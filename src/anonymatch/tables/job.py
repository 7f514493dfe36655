"""The typed table job: one validated value describes a run, whoever asked for it.

The Python front (``anonymatch.tables.anonymize``), the ``anonymize`` command (its flags, or a
job file through ``--config``), the web app (which runs that command) and ``verify
--manifest`` all build a :class:`TableJob`, in the spirit of ARX's ``ARXConfiguration`` and
scikit-learn's split between parameter checks and data checks:

- :meth:`TableJob.build` makes every check that needs only the parameters, once: types are
  strict (a bool or a string is never a number), the columns' roles are consistent
  (``Schema.build``), the sensitive models are well formed (``build_models``), and the method
  can do what is asked of it — read from its capabilities in the registry
  (``anonymatch.tables.methods``), never from a list of names kept elsewhere;
- :func:`plan` makes every check that needs the data (k ≤ n, missing values against the
  method's capabilities), picks the path — in memory, streamed or adaptive — and the partition
  size by the one formula (:meth:`~anonymatch.tables.methods.Method.partition_size_for`), and
  is recorded in the manifest (``plan``).

Messages name the parameter as a Python caller writes it (```partition_size```); the command
line prints its flag (``--partition-size``) instead (``anonymatch.cli.options.in_cli_words``).

References
----------
.. [1] K. Doka, M. Xue, D. Tsoumakos, P. Karras, "k-Anonymization by freeform generalization",
   ASIA CCS 2015 (the methods and their partitions).
.. [2] K. Choromanski, T. Jebara, K. Tang, "Adaptive anonymity via b-matching", NIPS 2013 (the
   adaptive path).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from anonymatch.core.criteria import Criterion, refuse_unsupported
from anonymatch.core.errors import InputError
from anonymatch.core.params import (
    STREAM_MIN_ROWS,
    Execution,
    Streamed,
    check_level_fits,
    check_seed,
    check_weights,
    choice,
    column_list,
    flag,
    number,
    optional_integer,
    param,
    streamed_executor,
    with_defaults,
)
from anonymatch.tables.models import CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS, STRICT

if TYPE_CHECKING:
    import pandas as pd

    from anonymatch.tables.columns.hierarchy import Hierarchy
    from anonymatch.tables.columns.qitypes import QITypes
    from anonymatch.tables.columns.schema import MissingCodes, Schema
    from anonymatch.tables.io import CsvOptions
    from anonymatch.tables.methods import Method
    from anonymatch.tables.models.disclosure import SensitiveModel, SensitiveModels

RunPath = Literal["memory", "streamed", "adaptive"]
"""Where a job runs: in memory, streamed from a file, or on the adaptive path."""

STRUCTURES = ("classes", "rings", "blocks")
"""What a freeform method publishes (``structure``). Under ℓ-diversity / t-closeness:
``classes`` (the default), or ``rings`` — sensitive rings where they cost less GCP, classes
elsewhere (docs/guarantees/sensitive.md §6). A ring's decomposition is public and its draw is
one shift, so a person who knows their own sensitive value and finds it among their rows learns
every ring member's value; classes have no such weakness. Without them: ``classes`` (the
default) runs the rounds, or blocks where the plan estimates minutes (``Plan.blocks``);
``blocks`` publishes blocks at any k (``methods.blocks``)."""

RINGS_WEAKNESS = (
    "rings: a person who knows their own sensitive value and finds it among their rows "
    "learns every ring member's value"
)
"""The insider weakness of a ring release, in plain words (``--help``, the CLI summary, the
report's limits and the manifest's ``guarantee.insider_weakness``)."""

DEFAULT_TIME_LIMIT = 60.0
"""Seconds per exact MIP solve (``mip``) or b-matching integer program when the job sets no
time limit."""


@dataclass(frozen=True)
class AdaptiveOptions:
    """Settings of the suppression methods (the adaptive path; Choromanski et al.).

    ``epsilons``: the ε values swept, largest first; ``neighbours``: candidate neighbours per
    record (None: all pairs on small tables); ``patience``: ε values without fewer stars before
    the sweep stops (0: the full sweep); ``candidates``: each record's cheapest records added to
    its candidate pairs (None: max(20, 4·max δ)); ``cell_weights``: the cost of starring each
    cell (one column per QI, one row per record), or None.
    """

    epsilons: tuple[float, ...]
    neighbours: int | None = None
    patience: int = 2
    candidates: int | None = None
    cell_weights: pd.DataFrame | None = field(default=None, compare=False)

    @property
    def given(self) -> bool:
        """Whether any setting differs from the defaults (they need a suppression method)."""
        from anonymatch.tables.methods import DEFAULT_EPSILONS

        return (
            self.epsilons != DEFAULT_EPSILONS
            or self.neighbours is not None
            or self.patience != 2
            or self.candidates is not None
            or self.cell_weights is not None
        )


@dataclass(frozen=True)
class TableJob:
    """A validated table run: what its release claims (:class:`ReleaseCheck`: columns and
    roles, level, sensitive models, criteria), and how it is made (method, execution, seed).

    Build it with :meth:`build` (from the parameters by name), never field by field: the fields
    are trusted by every path. The value is frozen; :meth:`replace` makes a changed copy,
    validated again.
    The claim's fields (``schema``, ``k``, ``k_column``, ``models``, ``suppression_limit``,
    ``na``, ``drop_missing``, ``partition_size``, ``criteria``, ``population``, ``strict``)
    are read through the job (``job.k`` is ``job.check.k``): they are defined once, on the
    check.

    Attributes
    ----------
    check : ReleaseCheck
        What the release claims, the value ``verify`` checks it against.
    method : Method
        The registered method (with its capabilities).
    time_limit : float
        Seconds per exact solve (``time_limit`` as given, else ``DEFAULT_TIME_LIMIT``).
    limit : float or None
        The run's time limit as given (None: none). The freeform methods' rounds stop there:
        the partitions not done are published as blocks (``methods.build_graph``).
    adaptive : AdaptiveOptions
        Settings of the suppression methods.
    execution : Execution
        Executor, workers, scheduler, rows per streamed job, progress.
    seed : int or None
        Seed of the privacy step (None: OS entropy).
    structure : {"classes", "rings"}
        What a freeform method publishes under sensitive models (:data:`STRUCTURES`).
    """

    check: ReleaseCheck
    method: Method
    time_limit: float
    adaptive: AdaptiveOptions
    execution: Execution
    seed: int | None
    structure: str = "classes"
    keywords: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    limit: float | None = None

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> TableJob:
        """Validate a run's parameters (those of :func:`anonymatch.tables.anonymize`, plus
        ``k_column``, ``epsilons``, ``neighbours``, ``patience``, ``candidates``,
        ``cell_weights``, ``executor``, ``scheduler``, ``chunk_rows``).

        Parameters
        ----------
        values : mapping of str to object
            The run's parameters by name (the keys of :data:`PARAMETERS`; a missing one takes
            its default); unknown names are refused.

        Returns
        -------
        TableJob

        Raises
        ------
        InputError
            The first problem, naming the parameter (```k``` must be an integer of at least 1, got
            True). Types are strict: a bool or a string is never a number.

        Notes
        -----
        O(number of columns + size of the hierarchies read).
        """
        return _build(with_defaults(values, PARAMETERS), dict(values))

    def replace(self, changes: Mapping[str, Any]) -> TableJob:
        """A copy with some parameters changed (``changes``: parameter → value), validated
        again."""
        return TableJob.build({**self.keywords, **changes})

    @property
    def schema(self) -> Schema:
        """The columns' roles and types."""
        return self.check.schema

    @property
    def k(self) -> int | None:
        """The level for everyone (None: per-record levels)."""
        return self.check.k

    @property
    def k_column(self) -> str | None:
        """Adaptive anonymity: the column holding each person's level δᵢ."""
        return self.check.k_column

    @property
    def models(self) -> tuple[SensitiveModel, ...]:
        """ℓ-diversity / t-closeness per sensitive column."""
        return self.check.models

    @property
    def suppression_limit(self) -> float:
        """Share of records, in [0, 1), that may be dropped as outliers."""
        return self.check.suppression_limit

    @property
    def unprotected(self) -> tuple[str, ...]:
        """Sensitive columns published without protection (``l = 1``, no ``t``)."""
        return self.check.unprotected

    @property
    def na(self) -> MissingCodes:
        """What counts as missing, in every column and per column."""
        return self.check.na

    @property
    def drop_missing(self) -> bool:
        """Drop rows with a missing QI instead of publishing ``*``."""
        return self.check.drop_missing

    @property
    def partition_size(self) -> int | None:
        """Records per partition asked for (None: the method's default)."""
        return self.check.partition_size

    @property
    def criteria(self) -> tuple[Criterion, ...]:
        """The criteria counted against a population."""
        return self.check.criteria

    @property
    def population(self) -> str | os.PathLike[str] | pd.DataFrame | None:
        """The population table of the criteria."""
        return self.check.population

    @property
    def strict(self) -> bool:
        """Refuse a release whose kept columns leak (the leakage check's ``strict``)."""
        return self.check.strict


@dataclass(frozen=True)
class ReleaseCheck:
    """What a release claims and how its original is read: the value every command and
    function that reads a release against its original builds (``verify``, ``evaluate``,
    ``risk``, ``attack``, the report), from the same parameters as :class:`TableJob`.

    Build it with :meth:`build`; a job gives its own as :attr:`TableJob.check`. It is frozen and
    its fields already validated: ``dataclasses.replace(check, certificate=...)`` makes a changed
    copy (field by field, checked by mypy).

    Attributes
    ----------
    schema : Schema
        The columns' roles and types.
    k : int or None
        The level claimed for everyone (None: not claimed, or per-record levels).
    k_column : str or None
        Adaptive anonymity: the original's column holding each person's level.
    sensitive_models : SensitiveModels
        The criterion of the sensitive columns (``tables.models.disclosure``): ℓ-diversity /
        t-closeness claimed per sensitive column, and the columns left unprotected.
    suppression_limit : float
        Share of the original's people the release may lack, in [0, 1).
    na : MissingCodes
        What counts as missing in the original.
    drop_missing : bool
        Rows with a missing QI were dropped before publishing.
    partition_size : int or None
        The method's partition size (the suppression rule's; None: the freeform default).
    certificate : mapping or None
        The ring certificate of a release made of sensitive rings (its manifest's
        ``guarantee.certificate``): the models are then checked for every draw
        (``models.certified``, docs/guarantees/sensitive.md §6).
    criteria : tuple of Criterion
        The criteria counted against a population (``tables.models.CRITERIA`` but the
        sensitive models: k-map, the average journalist risk, δ-presence).
    population : path, DataFrame or None
        The population table of those criteria (None without them).
    strict : bool
        The release checks' option (``risk.leakcheck.CHECK_OPTIONS``): a release whose kept
        columns leak is refused (``LeakRefused``, exit 2, nothing written), not only warned
        about. Passed to ``risk.checks.release_checks`` by every path that runs the checks.
    """

    schema: Schema
    k: int | None
    k_column: str | None
    sensitive_models: SensitiveModels
    suppression_limit: float
    na: MissingCodes
    drop_missing: bool
    partition_size: int | None
    certificate: Mapping[str, Any] | None = None
    criteria: tuple[Criterion, ...] = ()
    population: str | os.PathLike[str] | pd.DataFrame | None = field(default=None, compare=False)
    strict: bool = False

    @property
    def models(self) -> tuple[SensitiveModel, ...]:
        """ℓ-diversity / t-closeness per protected sensitive column."""
        return self.sensitive_models.models

    @property
    def level(self) -> Criterion | None:
        """The level the release claims, as its criterion (``tables.models.levels``):
        k-anonymity, per-record levels, or None when neither is claimed."""
        from anonymatch.tables.models.levels import KAnonymity, PerRecordLevels

        if self.k is not None:
            return KAnonymity(self.k)
        return None if self.k_column is None else PerRecordLevels(self.k_column)

    @property
    def unprotected(self) -> tuple[str, ...]:
        """The sensitive columns published without protection (``l = 1`` and no ``t``: a
        named sensitive column otherwise gets distinct ℓ = 2 by default)."""
        return self.sensitive_models.unprotected

    @classmethod
    def build(cls, values: Mapping[str, Any]) -> ReleaseCheck:
        """Validate a check's parameters: those of :meth:`TableJob.build` that describe a
        release (``qi``, ``numeric``, ``sensitive``, ``identifiers``, ``weights``, the QI
        types, ``k`` or ``k_column``, ``l``/``diversity``/``c``/``t``,
        ``suppression_limit``, ``partition_size``, ``na_values``, ``drop_missing``,
        ``strict``), checked the same way, and ``certificate``.

        Parameters
        ----------
        values : mapping of str to object
            The parameters by name (the keys of :data:`CHECK_PARAMETERS` and ``certificate``; a
            missing one takes its default); unknown names are refused.

        Returns
        -------
        ReleaseCheck

        Raises
        ------
        InputError
            The first problem, naming the parameter.

        Notes
        -----
        O(number of columns + size of the hierarchies read).
        """
        import dataclasses

        certificate = _certificate(values.get("certificate"))
        rest = {n: v for n, v in values.items() if n != "certificate"}
        p = with_defaults(rest, {n: PARAMETERS[n] for n in CHECK_PARAMETERS})
        check = cls._validated(p, lambda k_column: _schema(p, k_column))
        return dataclasses.replace(check, certificate=certificate)

    @classmethod
    def of(cls, schema: Schema, values: Mapping[str, Any] | None = None) -> ReleaseCheck:
        """A check on columns already described by ``schema`` (``Schema.build``): ``values``
        are the parameters of :meth:`build` but the columns' roles and types (None: every
        default). O(1)."""
        roles = {"qi", "numeric", "sensitive", "identifiers", "weights", "ordinal", "dates",
                 "hierarchies", "hierarchy_cells", "types"}  # fmt: skip
        known = {n: PARAMETERS[n] for n in CHECK_PARAMETERS if n not in roles}
        return cls._validated(with_defaults(values or {}, known), lambda k_column: schema)

    @classmethod
    def _validated(
        cls, p: Mapping[str, Any], columns: Callable[[str | None], Schema]
    ) -> ReleaseCheck:
        k, k_column = _level(p)
        if k is not None and k_column is not None:
            raise InputError(f"give exactly one of {param('k')} and {param('k_column')}")
        schema = columns(k_column)
        sensitive, criteria = _criteria(p, schema)
        models = sensitive.models
        if models and k_column is not None:
            raise InputError(
                _default_refused(models, f"per-record levels ({param('k_column')})")
                or f"{param('l')}/{param('t')} are checked with {param('k')}, not "
                f"{param('k_column')}"
            )
        return cls(
            schema,
            k,
            k_column,
            sensitive,
            _limit(p),
            missing(p["na_values"]),
            flag(p["drop_missing"], "drop_missing"),
            optional_integer(p["partition_size"], "partition_size", minimum=2),
            criteria=criteria,
            population=p["population"],
            strict=_strict(p),
        )


def _certificate(value: object) -> Mapping[str, Any] | None:
    """A ring certificate as given (checked in depth by ``models.certified``): a mapping or
    None. Raises InputError otherwise."""
    if value is None or isinstance(value, Mapping):
        return value
    raise InputError(
        f"{param('certificate')} must be a mapping (a manifest's guarantee.certificate), "
        f"got {type(value).__name__}"
    )


PARAMETERS: dict[str, Any] = {
    "qi": None,
    "numeric": None,
    "sensitive": None,
    "identifiers": None,
    "weights": None,
    "ordinal": None,
    "dates": None,
    "hierarchies": None,
    "hierarchy_cells": "node",
    "types": None,
    "suppression_limit": 0.0,
    "method": "hungarian",
    "partition_size": None,
    "time_limit": None,
    "epsilons": None,
    "neighbours": None,
    "patience": None,
    "candidates": None,
    "cell_weights": None,
    "na_values": None,
    "drop_missing": False,
    "executor": "auto",
    "workers": None,
    "scheduler": None,
    "chunk_rows": None,
    "progress": False,
    "seed": None,
    "structure": "classes",
    **CRITERIA.defaults(),
    **CHECK_OPTIONS.defaults(),
}
"""Every parameter of a table job and its default (the names ``TableJob.build`` takes)."""

CHECK_PARAMETERS = (
    "qi", "numeric", "sensitive", "identifiers", "weights", "ordinal", "dates", "hierarchies",
    "hierarchy_cells", "types", "suppression_limit", "partition_size",
    "na_values", "drop_missing",
    *CRITERIA.defaults(), *CHECK_OPTIONS.defaults(),
)  # fmt: skip
"""The parameters of a :class:`ReleaseCheck` (a subset of :data:`PARAMETERS`)."""


def _build(p: Mapping[str, Any], keywords: dict[str, Any]) -> TableJob:
    from anonymatch.tables.methods import registry

    methods = registry()
    method = methods[choice(p["method"], "method", tuple(methods))]
    k, k_column = _level(p)
    if method.levels:
        if (k is None) == (k_column is None):
            raise InputError(f"give exactly one of {param('k')} and {param('k_column')}")
    else:
        if k_column is not None:
            raise InputError(
                f"{param('k_column')} needs {param('method')} "
                f"{' or '.join(_names(levels=True))} (per-record levels)"
            )
        if k is None:
            raise InputError(f"missing {param('k')}")
    schema = _schema(p, k_column)
    if schema.types and not method.typed:
        raise InputError(
            f"ordinal, date and hierarchy QIs are not supported by the method {method.name!r}"
        )
    sensitive, criteria = _criteria(p, schema)
    models = sensitive.models
    if models and not method.sensitive:
        raise InputError(
            _default_refused(models, f"method {method.name!r}", _names(sensitive=True))
            or f"method {method.name!r} does not support {param('l')}/{param('t')}; use one "
            f"of: {', '.join(_names(sensitive=True))}"
        )
    structure = _structure(p, method, models)
    limit = _limit(p)
    if limit and method.levels:
        raise InputError(f"{param('suppression_limit')} does not apply to method {method.name!r}")
    partition_size = optional_integer(p["partition_size"], "partition_size", minimum=2)
    if k is not None:  # the levels of k_column are only known with the data (plan)
        method.partition_size_for(k, partition_size)
    elif partition_size is not None and not method.partitioned:
        method.partition_size_for(1, partition_size)
    adaptive = _adaptive(p)
    if adaptive.given and not method.levels:
        raise InputError(
            f"{param('epsilons')}, {param('neighbours')}, {param('patience')}, "
            f"{param('candidates')} and {param('cell_weights')} need {param('method')} "
            f"{', '.join(_names(levels=True))}"
        )
    given = p["time_limit"]
    limit_given = None if given is None else number(given, "time_limit")
    return TableJob(
        check=ReleaseCheck(
            schema,
            k,
            k_column,
            sensitive,
            limit,
            missing(p["na_values"]),
            flag(p["drop_missing"], "drop_missing"),
            partition_size,
            criteria=_population_criteria(criteria, method),
            population=p["population"],
            strict=_strict(p),
        ),
        method=method,
        time_limit=DEFAULT_TIME_LIMIT if limit_given is None else limit_given,
        adaptive=adaptive,
        execution=Execution.build(
            p["executor"], p["workers"], p["scheduler"], p["chunk_rows"], p["progress"]
        ),
        seed=check_seed(p["seed"]),
        structure=structure,
        keywords=keywords,
        limit=limit_given,
    )


def _structure(p: Mapping[str, Any], method: Method, models: tuple[SensitiveModel, ...]) -> str:
    """The job's ``structure`` (:data:`STRUCTURES`): ``rings`` needs sensitive models and a
    method that builds rings (a partitioned method with the ``sensitive`` capability);
    ``blocks`` (k-anonymity only: no sensitive model) a method that runs assignment rounds."""
    structure = str(choice(p["structure"], "structure", STRUCTURES))
    if structure == "blocks":
        if models:
            raise InputError(
                f"{param('structure')} 'blocks' publishes k-anonymity only: the sensitive "
                f"models ({param('l')}/{param('t')}) need 'classes' or 'rings'"
            )
        if not method.rounds:
            from anonymatch.tables.methods import registry

            rounds = " or ".join(m.name for m in registry().values() if m.rounds)
            raise InputError(
                f"{param('structure')} 'blocks' replaces the assignment rounds of "
                f"{param('method')} {rounds} (the method {method.name!r} runs none)"
            )
    if structure == "rings":
        if not models:
            raise InputError(
                f"{param('structure')} 'rings' needs a sensitive model ({param('l')} or "
                f"{param('t')})"
            )
        if not (method.partitioned and method.sensitive):
            raise InputError(
                f"{param('structure')} 'rings' needs {param('method')} "
                f"{' or '.join(_names(sensitive=True, partitioned=True))} (the method "
                f"{method.name!r} builds no rings)"
            )
    return structure


def _criteria(
    p: Mapping[str, Any], schema: Schema
) -> tuple[SensitiveModels, tuple[Criterion, ...]]:
    """The criteria a job asks for (``tables.models.CRITERIA``, every parameter checked by its
    declaration) on the columns of ``schema``: the sensitive models (empty without a sensitive
    column) and the criteria counted against a population. O(columns + parameters)."""
    from anonymatch.tables.models.disclosure import SensitiveModels

    roles = {"sensitive": schema.sensitive, "numeric": schema.ordered_sensitive}
    built = CRITERIA.build({**p, **roles})
    sensitive = next((c for c in built if isinstance(c, SensitiveModels)), SensitiveModels())
    return sensitive, tuple(c for c in built if c.needs_population)


def _level(p: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """``k`` and ``k_column`` as given, each checked by its declaration
    (``tables.models.levels``); which of them a run needs is the caller's rule. O(1)."""
    from anonymatch.tables.models.levels import K_COLUMN, K

    k = None if p["k"] is None else K.check(p["k"])
    k_column = None if p["k_column"] is None else K_COLUMN.check(p["k_column"])
    return k, k_column  # type: ignore[return-value]


def _population_criteria(criteria: tuple[Criterion, ...], method: Method) -> tuple[Criterion, ...]:
    """The population criteria of a job; none applies to a method with per-record levels."""
    if criteria and method.levels:
        first = criteria[0].parameters[0].name
        raise InputError(f"{param(first)} does not apply to method {method.name!r}")
    return criteria


def _schema(p: Mapping[str, Any], k_column: str | None) -> Schema:
    """The columns' roles and types from a job's keywords (the level column is an
    identifier)."""
    from anonymatch.tables.columns.schema import Schema

    types = qi_types(p["ordinal"], p["dates"], p["hierarchies"], p["hierarchy_cells"], p["types"])
    identifiers = column_list(p["identifiers"], "identifiers")
    qi = column_list(p["qi"], "qi")
    if k_column is not None:
        if k_column in qi:
            raise InputError(f"the level column {k_column!r} is also a quasi-identifier")
        identifiers = [*identifiers, k_column]
    return Schema.build(
        qi,
        column_list(p["numeric"], "numeric"),
        column_list(p["sensitive"], "sensitive"),
        identifiers,
        check_weights(p["weights"]),
        types,
    )


def _default_refused(
    models: tuple[SensitiveModel, ...], what: str, instead: Sequence[str] = ()
) -> str | None:
    """The refusal of a path that cannot protect a sensitive column when the protection is
    the default (``build_models``: distinct ℓ = 2), naming the opt-out; None when a model
    was asked for (the caller's own message then)."""
    from anonymatch.tables.models.disclosure import DEFAULT_L, only_default

    if not only_default(models):
        return None
    columns = ", ".join(repr(m.column) for m in models)
    alternative = f"use {param('method')} {', '.join(instead)}, or " if instead else ""
    return (
        f"sensitive column {columns} gets distinct ℓ = {DEFAULT_L} by default, which {what} "
        f"cannot give; {alternative}pass {param('l')} 1 to publish it without protection"
    )


def _strict(p: Mapping[str, Any]) -> bool:
    """``strict`` checked by its declaration (a bool: a string or a number is refused)."""
    return bool(STRICT.check(p[STRICT.name]))


def _limit(p: Mapping[str, Any]) -> float:
    return number(p["suppression_limit"], "suppression_limit", high=1.0, low_open=False,
                  high_open=True)  # fmt: skip


def _names(
    *,
    sensitive: bool | None = None,
    streamable: bool | None = None,
    missing: bool | None = None,
    levels: bool | None = None,
    partitioned: bool | None = None,
) -> tuple[str, ...]:
    """``tables.methods.names`` on the capabilities the job's messages name (imported on
    first use: the registry imports numpy)."""
    from anonymatch.tables.methods import names

    return names(
        sensitive=sensitive,
        streamable=streamable,
        missing=missing,
        levels=levels,
        partitioned=partitioned,
    )


def qi_types(
    ordinal: object = None,
    dates: object = None,
    hierarchies: object = None,
    hierarchy_cells: object = "node",
    types: object = None,
) -> QITypes | None:
    """Typed QIs (``tables.qitypes``) from ``types`` (a ``QITypes``) or the fronts' keywords
    ``ordinal`` (column → order, lowest first), ``dates`` (column → granularity) and
    ``hierarchies`` (column → ARX file or ``Hierarchy``); None if there are none. Hierarchy
    files are read and checked here (O(size of the files))."""
    from anonymatch.tables.columns.qitypes import QITypes, build_types

    typed = ordinal or dates or hierarchies
    if types is not None:
        if not isinstance(types, QITypes):
            raise InputError(f"{param('types')} must be a QITypes, got {type(types).__name__}")
        if typed:
            raise InputError(
                f"give {param('types')} or {param('ordinal')}/{param('dates')}/"
                f"{param('hierarchies')}, not both"
            )
        return types or None
    cells = choice(hierarchy_cells, "hierarchy_cells", ("node", "set"))
    if not typed:
        return None
    for name, value in (("ordinal", ordinal), ("dates", dates), ("hierarchies", hierarchies)):
        if value is not None and not isinstance(value, Mapping):
            raise InputError(f"{param(name)} must map column names to values")
    from anonymatch.tables.columns.hierarchy import Hierarchy

    orders: Mapping[str, str | Sequence[str]] = ordinal or {}  # type: ignore[assignment]
    trees: Mapping[str, str | os.PathLike[str] | Hierarchy] = hierarchies or {}  # type: ignore[assignment]
    return build_types(
        {a: v if isinstance(v, str) else list(v) for a, v in orders.items()},
        dates,  # type: ignore[arg-type]
        {a: h if isinstance(h, Hierarchy) else str(h) for a, h in trees.items()},
        cells,
    )


def missing(value: object) -> MissingCodes:
    """``na_values``: tokens (a list or comma-separated text) for every column, a mapping
    column → codes (added to the default tokens), or a ``MissingCodes``."""
    from anonymatch.tables.columns.schema import MissingCodes, missing_codes

    if value is None or isinstance(value, MissingCodes | Mapping):
        return missing_codes(value)
    if not isinstance(value, str | Iterable):
        raise InputError(f"{param('na_values')} must be a list of tokens, got {value!r}")
    return MissingCodes(tuple(column_list(value, "na_values")))


def _adaptive(p: Mapping[str, Any]) -> AdaptiveOptions:
    from anonymatch.tables.methods import DEFAULT_EPSILONS

    epsilons = p["epsilons"]
    if epsilons is None:
        eps = DEFAULT_EPSILONS
    else:
        if isinstance(epsilons, str | bytes) or not isinstance(epsilons, Iterable):
            raise InputError(f"{param('epsilons')} must be a list of numbers, got {epsilons!r}")
        eps = tuple(sorted((number(e, "epsilons") for e in epsilons), reverse=True))
        if not eps:
            raise InputError(f"{param('epsilons')} must be positive numbers")
    patience = optional_integer(p["patience"], "patience", minimum=0)
    cell_weights = p["cell_weights"]
    if cell_weights is not None:
        import pandas as pd

        if not isinstance(cell_weights, pd.DataFrame):
            raise InputError(
                f"{param('cell_weights')} must be a DataFrame, got {type(cell_weights).__name__}"
            )
    return AdaptiveOptions(
        eps,
        optional_integer(p["neighbours"], "neighbours"),
        2 if patience is None else patience,
        optional_integer(p["candidates"], "candidates", minimum=0),
        cell_weights,
    )


# ------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class Plan:
    """How a validated job runs on its data: the path and the partition size.

    Attributes
    ----------
    path : {"memory", "streamed", "adaptive"}
        In memory (a DataFrame), streamed (a file larger than memory, partition by partition)
        or adaptive (per-record levels and suppression).
    partition_size : int or None
        Records per partition (None: the method sees the whole table).
    rows : int or None
        The number of records planned for (None until the streamed path has scanned them).
    estimate : float
        Expected wall seconds of the build and what follows it, for the methods that run
        rounds (``methods.estimated_seconds``; 0 for the others or while rows are unknown).
    blocks : {"structure", "estimate"} or None
        Why the table is published as blocks (``methods.blocks``: in memory the whole table,
        streamed each partition) instead of the method's rounds: the job asked for
        ``structure`` ``blocks``, or the rounds were estimated to cost more than
        ``BLOCKS_ABOVE`` CPU seconds a record (:func:`plan`); None: the rounds run (or the
        method runs none).
    limit : float or None
        The job's time limit, for a method that runs rounds (None: none, or another method).
    assignment : str or None
        How each round is assigned, for a method that runs them
        (``methods.freeform.round_assignment``: ``exact`` or ``two-stage`` for hungarian,
        the heuristic's name otherwise); None without rounds.
    """

    path: RunPath
    partition_size: int | None
    rows: int | None = None
    estimate: float = 0.0
    blocks: str | None = None
    limit: float | None = None
    assignment: str | None = None

    def warning(self) -> str | None:
        """A line for a run expected to take more than ``LONG_RUN_SECONDS`` (None otherwise):
        the estimate and what makes such a run faster. Printed by the pipeline itself (with
        the progress bar), so it names no flag: the CLI's translation of parameter names does
        not see it."""
        expected = min(self.estimate, math.inf if self.limit is None else self.limit)
        if expected <= LONG_RUN_SECONDS or self.blocks:
            return None
        minutes = expected / 60
        return (
            f"this run is expected to take about {max(minutes, 1):.0f} min (partitions of "
            f"{self.partition_size:,} records; a rough estimate, the progress bar shows the time "
            "left); a smaller partition size or k, a time limit or structure 'blocks' is faster"
        )

    def to_dict(self, blocks: int = 0) -> dict[str, object]:
        """The manifest's ``plan`` block: with ``time_limit`` when the job set one for a
        method that runs rounds, and ``blocks`` (``partitions``: how many were published as
        blocks, of ``blocks``, 1 for the whole table; ``why``: ``structure``, ``estimate``
        or ``time_limit``) when there is a limit or some."""
        block: dict[str, object] = {"path": self.path, "partition_size": self.partition_size}
        if self.assignment is not None:
            block["assignment"] = self.assignment
        if self.limit is not None:
            block["time_limit"] = self.limit
        if self.limit is not None or blocks:
            block["blocks"] = {"partitions": blocks, "why": self.blocks or "time_limit"}
        return block

    def record(self, manifest: dict[str, object], job: TableJob, blocks: int = 0) -> None:
        """Write the plan (``plan``), the suppression limit (``parameters.suppression_limit``)
        and how missing values were read (``parameters.missing``: ``tokens``, per-column
        ``columns`` codes, ``drop``) into ``manifest``: with the roles, level and models already
        there, the manifest is then enough to rebuild the job
        (``anonymatch.app.tablejob.manifest_keywords``). O(columns)."""
        parameters = manifest["parameters"]
        assert isinstance(parameters, dict)
        parameters["suppression_limit"] = job.suppression_limit
        parameters["missing"] = {**job.na.describe(), "drop": job.drop_missing}
        manifest["plan"] = self.to_dict(blocks)


def choose_path(
    job: TableJob, input_path: str, output: str, csv: CsvOptions | None = None
) -> Streamed | None:
    """Where a job runs on these files: the executor of the streamed path, or None for the
    in-memory path (``core.params.streamed_executor``). The job says what it needs — a
    method that does not stream, per-record levels, a suppression limit or a criterion the
    streamed path cannot check (``Criterion.paths``) keep ``auto`` in memory, as do a
    statistical package's file and a workbook —, the files whether they are large: a
    directory of Parquet parts, a directory output, or at least ``STREAM_MIN_ROWS`` rows
    (counted only when it matters). O(1), or O(rows) to count a file's rows."""
    from pathlib import Path

    if job.method.levels:  # the adaptive path reads the whole table
        return None
    from anonymatch.tables.io import is_excel
    from anonymatch.tables.io.sql import is_database_url
    from anonymatch.tables.io.stats import is_stats_file
    from anonymatch.tables.io.stream import count_rows, is_directory_output

    files_in_memory = any(
        (is_excel(input_path), is_stats_file(input_path), is_excel(output), is_stats_file(output))
    )
    memory_only = (
        files_in_memory
        or not job.method.streamable
        or bool(job.suppression_limit)
        or any("streamed" not in c.paths for c in job.criteria)
    )

    source = Path(input_path)
    parts_out = not is_database_url(output) and is_directory_output(output)
    parts_in = source.is_dir() and any(source.glob("*.parquet"))

    def large() -> bool:
        csv_rows = is_database_url(input_path) or source.is_file()  # a server-side cursor
        return csv_rows and count_rows(input_path, csv) >= STREAM_MIN_ROWS

    return streamed_executor(
        job.execution, memory_only=memory_only, large=large, required=parts_out or parts_in
    )


LONG_RUN_SECONDS = 60.0
"""``plan`` warns (``Plan.warning``) when a run is expected to take longer than this."""


def plan(
    job: TableJob,
    *,
    rows: int | None = None,
    missing: int = 0,
    streamed: bool = False,
    level: int | None = None,
) -> Plan:
    """Check a job against its data and choose how it runs.

    Parameters
    ----------
    job : TableJob
        The validated job.
    rows : int, optional
        Records to publish (after dropping rows with missing QIs, if asked); None when not known
        yet (the streamed path plans before its scan and again after it).
    missing : int, default 0
        Records with a missing QI value.
    streamed : bool, default False
        Run partition by partition from a file (the caller decided: the input's size, an
        output directory, or the executor asked for).
    level : int, optional
        The largest per-record level (``k_column``), once the data is read.

    Returns
    -------
    Plan

    Raises
    ------
    InfeasibleError
        k (or a per-record level) larger than the number of records: exit code 3 on every kind.
    InputError
        What the method cannot do with this data (missing values for ``mip`` or with sensitive
        models; the streamed path for a method that does not stream or a suppression limit).

    Notes
    -----
    The cost model of the freeform methods (``Method.rounds``): ``methods.rounds_seconds``
    prices their k − 1 assignment rounds per partition. With a time limit (``job.limit``) the
    rounds run until it and the partitions not done are published as blocks (``Plan.limit``,
    ``methods.blocks``: consecutive classes cut at the least GCP). Without one, the whole
    table is published as blocks (``Plan.blocks``, no partitions) when the job asks for
    ``structure`` ``blocks`` or when the rounds and what follows them are estimated to cost
    more than ``BLOCKS_ABOVE`` CPU seconds a record (about a minute for UCI Adult's 30,162
    records on two cores; from k ≈ 470 with the default partitions, whatever the number of
    records): seconds where the rounds take minutes (Adult, k = 1,000: GCP 43.6 % against the
    public Mondrian's 64.9 %), a class release with no insider weakness (docs/results.md,
    speed at large k). The choice depends on k and the partition size only, never on the
    machine, so a seeded job makes the same release everywhere. The streamed path publishes the
    blocks of each partition instead of the whole table's (its partitions are independent).
    O(1).
    """
    method = job.method
    k = job.k if job.k is not None else level
    if streamed:
        if not method.streamable:
            raise InputError(
                "the streamed, partitioned path runs the methods "
                f"{', '.join(_names(streamable=True))}; {method.name!r} runs in memory "
                f"({param('executor')} threads)"
            )
        if job.suppression_limit:
            raise InputError(
                f"{param('suppression_limit')} runs in memory only ({param('executor')} "
                "threads); the streamed path publishes every record"
            )
        refuse_unsupported(
            job.criteria, "streamed", f"in memory only ({param('executor')} threads)"
        )
    if rows is not None and k is not None:
        check_level_fits(k, rows, "k" if job.k is not None else "the largest level")
    if missing:
        from anonymatch.tables.models.disclosure import only_default

        what: str | None = None
        way_out = ""  # another method helps only when the method is the cause
        if not method.missing:
            what = f"method {method.name!r}"
            way_out = f", or method {', '.join(_names(missing=True, levels=False))}"
        elif only_default(job.models):  # the default ℓ = 2 of a named sensitive column
            columns = ", ".join(repr(m.column) for m in job.models)
            what = f"distinct ℓ = 2 (the default of sensitive column {columns})"
            way_out = f", or {param('l')} 1 to publish it unprotected"
        elif job.models:
            what = f"{param('l')}/{param('t')} (sensitive models)"
        if what is not None:
            raise InputError(
                f"{what} does not handle missing QI values ({missing} records have one); use "
                f"{param('drop_missing')}{way_out}"
            )
    size = method.partition_size_for(k, job.partition_size) if k is not None else None
    path: RunPath = "adaptive" if method.levels else "streamed" if streamed else "memory"
    estimate = 0.0
    blocks = "structure" if job.structure == "blocks" else None
    if job.limit is not None and method.rounds and (streamed or job.models):
        # a limit the run could not honour is refused, never ignored
        where = "the streamed path" if streamed else "a run with sensitive models"
        raise InputError(
            f"{param('time_limit')} bounds the assignment rounds of a run in memory without "
            f"sensitive models; {where} runs every partition to its end (a smaller "
            f"{param('partition_size')} or k is faster)"
        )
    limit = job.limit if method.rounds else None
    if rows is not None and k is not None and not job.models and not blocks:
        from anonymatch.core.runner import default_workers
        from anonymatch.tables.methods import estimated_seconds, too_long_for_rounds

        if limit is None and too_long_for_rounds(method, rows, k, size):
            blocks = "estimate"
        else:
            workers = job.execution.workers or default_workers()
            estimate = estimated_seconds(method, rows, k, size, workers)
    assignment = None
    if blocks and not streamed:
        size = None  # in memory the whole table, no partitions (streamed: each partition)
    elif method.rounds and k is not None and not job.models:
        from anonymatch.tables.methods.freeform import round_assignment

        assignment = round_assignment(method.name, k)
    return Plan(path, size, rows, estimate, blocks, limit, assignment)
