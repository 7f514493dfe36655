"""``--config job.toml`` for every command, ``verify --manifest``, and ``anonymatch init``.

A job file (``anonymatch.app.jobfile``) reaches a command typed: the eager ``--config``
option's callback loads it once; each command's job step builds its kind's typed job from the
command line, else the job file's values (one mapper per kind, ``app.tablejob.JOB_KEYWORDS``),
else the defaults (:func:`with_job_file`), and a bad value is reported at the file's key
(:func:`located`). Click itself takes from the job (its ``default_map``, :func:`job_parameters`)
only the paths, the reading options and stand-ins for the options it requires — and, until the
criteria land, the table model's keys of the commands but ``anonymize``. ``verify --manifest
m.json`` fills the same map from the manifest of the release (:func:`manifest_parameters`),
below the job and the flags. Job keys a command cannot take are refused in one place,
:func:`feature_parameters`, with ``… is not supported yet``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from anonymatch.app.outputs import Output, check_outputs
from anonymatch.cli.options import (
    CONFIG_PATH,
    JOB_SCHEDULER,
    comma_list,
    echo_stderr,
    parse_separator,
    parse_weights,
    verbosity_options,
)
from anonymatch.cli.steps import LOCATE, command, with_step
from anonymatch.core.errors import InputError
from anonymatch.tables.models import ALL_CRITERIA, CRITERIA, POPULATION_CRITERIA, SAMPLE_CRITERIA
from anonymatch.tables.risk.leakcheck import CHECK_OPTIONS

if TYPE_CHECKING:
    from anonymatch.app.jobfile import Job
    from anonymatch.core.params import Execution
    from anonymatch.tables.columns.qitypes import QITypes
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.io import CsvOptions
    from anonymatch.tables.io.sql import SqlSource
    from anonymatch.tables.job import ReleaseCheck, TableJob

INPUT_PARAMS = ("input_path", "original", "table", "transactions", "edges", "people_path")
"""Positional parameters naming the data the job describes (``input.path``)."""
RELEASE_PARAMS = ("published", "release")
"""Positional parameters naming the release (``output.path``) of checking commands."""

CONFIG_HELP = (
    "TOML job file (see docs/jobs.md) giving the input, its format, the columns' roles and "
    "types, the model, method, execution and output; options given on the command line win."
)

F = TypeVar("F", bound=Callable[..., Any])

_META_CONFIG = "anonymatch.config"
_META_MANIFEST = "anonymatch.manifest"
_META_JOB = "anonymatch.job"

TABLE_JOB_FLAGS: dict[str, tuple[str, ...]] = {
    "qi": ("qi",),
    "numeric": ("numeric",),
    "sensitive": ("sensitive",),
    "identifiers": ("identifiers",),
    "weights": ("weights",),
    "ordinal": ("ordinal",),
    "dates": ("date",),
    "hierarchies": ("hierarchy",),
    "hierarchy_cells": ("hierarchy_cells",),
    "na_values": ("na_values", "na"),
    "drop_missing": ("drop_missing",),
    "suppression_limit": ("suppression_limit",),
    "method": ("method",),
    "partition_size": ("partition_size",),
    "time_limit": ("time_limit",),
    "epsilons": ("epsilons",),
    "neighbours": ("neighbours",),
    "executor": ("executor",),
    "workers": ("workers",),
    "scheduler": ("scheduler",),
    "chunk_rows": ("chunk_rows",),
    "structure": ("structure",),
    **{p.name: (p.name,) for p in (*CRITERIA.parameters(), *CHECK_OPTIONS.parameters())},
}
"""``TableJob`` keyword → the ``anonymize`` parameters (click names) that set it. With
``--config``, these come from the job file typed (``app.tablejob.job_file_keywords``), not
through click's text; a parameter given on the command line wins."""

_SOURCES: dict[str, tuple[str, ...]] = {**TABLE_JOB_FLAGS, "refine": ("lsh",)}
"""Typed-job keyword → the click parameters that set it (else the keyword itself)."""

TYPED_JOB_COMMANDS = ("anonymize",)
"""Commands that build a typed job from a job file directly."""


_COMMAND_KINDS: dict[str, str] = {}
"""The kind of data each command with ``--config`` reads (``table``, ``transactions``, …)."""


def add_config_option(command: click.Command, kind: str) -> None:
    """Give ``command`` (which reads data of ``kind``) the ``--config`` option (not passed to
    the command's function)."""
    _COMMAND_KINDS[command.name or ""] = kind
    if any(p.name == "config" for p in command.params):
        return
    command.params.append(
        click.Option(
            ["--config"],
            metavar="JOB.toml",
            default=None,
            is_eager=True,
            expose_value=False,
            callback=_config_callback,
            help=CONFIG_HELP,
        )
    )


def _config_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is None or ctx.resilient_parsing:
        return
    from anonymatch.app.jobfile import load_job

    job = load_job(value)
    source = Path(value).name
    wanted = _COMMAND_KINDS.get(ctx.command.name or "")
    if wanted is not None and job.kind != wanted:
        raise InputError(
            f'{source}: kind: a job for kind = "{job.kind}"; anonymatch {ctx.command.name} '
            f'reads kind = "{wanted}"'
        )
    values = job_parameters(job, ctx.command, source, ctx)
    check_job_columns(job, source)
    ctx.meta[CONFIG_PATH] = value  # an input of the run: no output may replace it
    if job.execution.scheduler is not None:  # confirmed on the command line, or refused
        ctx.meta[JOB_SCHEDULER] = (job.execution.scheduler, source)
    ctx.meta[_META_JOB] = job  # typed values: the commands' job steps (with_job_file)
    ctx.meta[LOCATE] = functools.partial(located, ctx, job, source)
    if ctx.command.name in TYPED_JOB_COMMANDS:
        typed = {p for params in TABLE_JOB_FLAGS.values() for p in params} - {"qi"}
        values = {p: v for p, v in values.items() if p not in typed}  # qi: a required option
    _merge(ctx, _META_CONFIG, values)


_PARAMETER = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\['([^`\]]*)'\])?`")
"""A parameter a library message names (```partition_size```, ```l['disease']```)."""


@contextlib.contextmanager
def located(ctx: click.Context, job: Job, source: str) -> Iterator[None]:
    """Run a command whose ``--config`` job file is ``job``: an ``InputError`` about a
    parameter (its message starts with it) whose value the job file gave, not the command line,
    is said at the file's key — ``job.toml: method.partition_size: must be at least 2k = 6, got
    4`` — with the other parameters it names by their keys too (``app.jobfile.job_key``): the
    typed job's ``build`` gives the semantic error, the file's key says where. O(message)."""
    try:
        yield
    except InputError as exc:
        from anonymatch.app.jobfile import job_key
        from anonymatch.app.tablejob import JOB_KEYWORDS

        message = str(exc)
        first = _PARAMETER.match(message)
        if first is None or JOB_KEYWORDS[job.kind](job).get(first.group(1)) is None:
            raise
        if _on_command_line(ctx, _SOURCES.get(first.group(1), (first.group(1),))):
            raise

        def key(match: re.Match[str]) -> str:
            column = match.group(2)
            return job_key(match.group(1)) + ("" if column is None else "." + column)

        rest = _PARAMETER.sub(key, message[first.end() :].lstrip())
        raise InputError(f"{source}: {key(first)}: {rest}") from None


def _on_command_line(ctx: click.Context, names: Sequence[str]) -> bool:
    """Whether the command line itself gave one of the parameters ``names``."""
    from click.core import ParameterSource

    return any(ctx.get_parameter_source(n) == ParameterSource.COMMANDLINE for n in names)


def with_job_file(
    ctx: click.Context,
    flags: Mapping[str, Any],
    keywords: Callable[[Job], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A typed job's keywords from the run's flags and its ``--config`` job file: each keyword
    of ``flags`` (keyword → the value its flags give) is the flags' value if the command line
    gave a parameter that sets it (``_SOURCES``, else the keyword itself), else the job file's
    typed value if the file gives one (``keywords``, default the kind's function of
    ``app.tablejob.JOB_KEYWORDS``), else the flags' value (their default, or what ``verify
    --manifest`` recorded). Without a job file, ``flags``. O(keys)."""
    job: Job | None = ctx.meta.get(_META_JOB)  # the --config job file, loaded by its callback
    if job is None:
        return dict(flags)
    if keywords is None:
        from anonymatch.app.tablejob import JOB_KEYWORDS

        keywords = JOB_KEYWORDS[job.kind]
    typed = keywords(job)
    return {
        key: typed[key]
        if typed.get(key) is not None and not _on_command_line(ctx, _SOURCES.get(key, (key,)))
        else value
        for key, value in flags.items()
    }  # fmt: skip


def type_pieces(types: QITypes | None) -> dict[str, Any]:
    """The typed QIs of ``--ordinal``/``--date``/``--hierarchy``/``--hierarchy-cells`` as the
    jobs' keywords ``ordinal``, ``dates``, ``hierarchies``, ``hierarchy_cells`` (each set by
    its own flag, or by the job file). O(typed QIs)."""
    from anonymatch.tables.columns.qitypes import QITypes

    types = types or QITypes()
    return {
        "ordinal": {a: list(s.order) for a, s in types.ordinal.items()} or None,
        "dates": {a: s.granularity for a, s in types.dates.items()} or None,
        "hierarchies": dict(types.hierarchies) or None,
        "hierarchy_cells": types.hierarchy_cells,
    }


def role_filtered(
    ctx: click.Context, flags: Mapping[str, Any], kind: str
) -> Callable[[Job], Mapping[str, Any]]:
    """The kind's job-file keywords (table or relational) with the per-column values restricted
    to the run's QIs and sensitive columns: the command line's (``flags``) where given there."""
    from anonymatch.app.tablejob import JOB_KEYWORDS

    roles = {r: flags.get(r) if _on_command_line(ctx, (r,)) else None for r in ("qi", "sensitive")}
    return lambda job: JOB_KEYWORDS[kind](job, roles["qi"], roles["sensitive"])


def execution_group(func: F) -> F:
    """Decorator (below :func:`executor_options` and ``--chunk-rows``) that passes
    ``--executor``, ``--workers``, ``--scheduler`` and ``--chunk-rows`` (those the command has)
    to the command as one validated ``Execution`` (parameter ``execution``, :func:`execution`)."""
    return with_step(execution, "execution")(func)


def execution(
    ctx: click.Context,
    executor: str,
    workers: int | None = None,
    scheduler: str | None = None,
    chunk_rows: int | None = None,
) -> Execution:
    """The execution options over the job file's (``cli.config.with_job_file``) as one
    validated ``Execution``. O(1)."""
    from anonymatch.core.params import Execution

    run: dict[str, Any] = dict(
        executor=executor, workers=workers, scheduler=scheduler, chunk_rows=chunk_rows
    )
    run = with_job_file(ctx, {key: value for key, value in run.items() if key in ctx.params})
    return Execution.build(**run)


def typed_table_job(func: F) -> F:
    """Decorator (below a command's options) that turns the flags of a table run into one
    validated ``TableJob``, passed to the command as ``job`` (:func:`table_job`)."""
    return with_step(table_job, "job")(func)


def table_job(
    ctx: click.Context,
    qi_types: QITypes,
    qi: str | None,
    numeric: str | None,
    sensitive: str | None,
    identifiers: str | None,
    weights: str | None,
    suppression_limit: float | None,
    epsilons: str | None,
    method: str,
    partition_size: int | None,
    time_limit: float | None,
    neighbours: int | None,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    chunk_rows: int | None,
    criteria: Mapping[str, Any],
    na_values: MissingCodes,
    drop_missing: bool,
    patience: int | None,
    candidates: int | None,
    cell_weights: str | None,
    quiet: bool,
    seed: int | None,
    structure: str = "classes",
    strict: bool = False,
) -> TableJob:
    """The flags of a table run (``anonymize``) as one validated ``TableJob``.

    Each ``TableJob`` keyword comes from the command line if a flag that sets it was given
    there, else from the job file (``--config``; its typed values, straight from the file:
    ``app.tablejob.job_file_keywords``, per-column values restricted to the run's roles), else
    from the flag's default. O(columns + hierarchy files + the cell weights' table)."""
    from anonymatch.tables.io import read_table
    from anonymatch.tables.job import TableJob

    flags: dict[str, Any] = {
        "qi": comma_list(qi),
        "numeric": comma_list(numeric),
        "sensitive": comma_list(sensitive),
        "identifiers": comma_list(identifiers),
        "weights": parse_weights(weights),
        **type_pieces(qi_types),
        "suppression_limit": suppression_limit or 0.0,
        "epsilons": _epsilons(epsilons),
        "method": method,
        "partition_size": partition_size,
        "time_limit": time_limit,
        "neighbours": neighbours,
        "executor": executor,
        "workers": workers,
        "scheduler": scheduler,
        "chunk_rows": chunk_rows,
        "structure": structure,
        **criteria,  # the criteria's parameters (``criteria_options``, typed), by name
        "na_values": na_values,
        "drop_missing": drop_missing,
        "strict": strict,  # the release checks' option (``criteria_options(CHECK_OPTIONS)``)
    }
    assert set(flags) == set(TABLE_JOB_FLAGS)
    flags = with_job_file(ctx, flags, role_filtered(ctx, flags, "table"))
    return TableJob.build(
        dict(
            **flags,
            patience=patience,
            candidates=candidates,
            cell_weights=read_table(cell_weights) if cell_weights else None,
            progress=not quiet,
            seed=seed,
        ),
    )


def release_check(func: F) -> F:
    """Decorator (below a checking command's options) that turns the flags describing a
    release into one validated ``ReleaseCheck`` (``tables.job``), passed to the command as
    ``check`` (:func:`check_of_flags`)."""
    return with_step(check_of_flags, "check")(func)


def check_of_flags(
    ctx: click.Context,
    qi: str | None = None,
    numeric: str | None = None,
    sensitive: str | None = None,
    identifiers: str | None = None,
    weights: str | None = None,
    l: int | Mapping[str, int] | None = None,  # noqa: E741 - the flag's name
    t: float | Mapping[str, float] | None = None,
    qi_types: QITypes | None = None,
    k: int | None = None,
    k_column: str | None = None,
    diversity: str | None = None,
    c: float | None = None,
    suppression_limit: float | None = None,
    na_values: MissingCodes | None = None,
    drop_missing: bool | None = None,
    strict: bool | None = None,
) -> ReleaseCheck:
    """The flags describing a release — columns and roles, QI types, k or ``--k-column``,
    sensitive models, suppression limit, missing values — as one validated ``ReleaseCheck``:
    the same value, and the same checks, as the Python fronts ``verify``/``evaluate``/``risk``
    build. The roles, QI types, missing codes and suppression limit of a ``--config`` job file
    come typed (:func:`with_job_file`) for the flags the command has; the per-column missing
    codes from the job, its tokens from ``--na-values``. A flag the command lacks, or left
    unset (None), takes the check's default. O(columns + hierarchy files)."""
    from anonymatch.tables.columns.schema import MissingCodes
    from anonymatch.tables.job import ReleaseCheck

    keywords: dict[str, Any] = {
        "qi": None if qi is None else comma_list(qi),
        "numeric": None if numeric is None else comma_list(numeric),
        "sensitive": None if sensitive is None else comma_list(sensitive),
        "identifiers": None if identifiers is None else comma_list(identifiers),
        "weights": None if weights is None else parse_weights(weights),
        **(type_pieces(qi_types) if "hierarchy_cells" in ctx.params else {}),
        "l": l,  # typed by their options (``criteria_options``)
        "t": t,
        "k": k,
        "k_column": k_column,
        "diversity": diversity,
        "c": c,
        "suppression_limit": suppression_limit,
        "na_values": na_values,
        "drop_missing": drop_missing,
        "strict": strict,
    }
    has = {key for key in keywords if any(n in ctx.params for n in TABLE_JOB_FLAGS[key])}
    keywords = with_job_file(
        ctx, {key: keywords[key] for key in has}, role_filtered(ctx, keywords, "table")
    )
    codes = keywords.get("na_values")
    if na_values is not None and codes is not None:  # --na-values' tokens, the job's codes
        keywords["na_values"] = MissingCodes(na_values.tokens, codes.columns)
    return ReleaseCheck.build({n: v for n, v in keywords.items() if v is not None})


def _epsilons(value: str | None) -> tuple[float, ...] | None:
    """``--epsilons`` text as numbers (the job checks them); None when not given."""
    if not value:
        return None
    try:
        return tuple(float(v) for v in comma_list(value))
    except ValueError:
        raise InputError(f"--epsilons expects comma-separated numbers, got {value!r}") from None


def manifest_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Callback of ``verify --manifest``: the release's manifest supplies what it recorded,
    but what a ``--config`` job file gives (typed, above the manifest)."""
    if value is None or ctx.resilient_parsing:
        return value
    values = manifest_parameters(value, ctx.command)
    job: Job | None = ctx.meta.get(_META_JOB)
    if job is not None:
        from anonymatch.app.tablejob import JOB_KEYWORDS

        given = [_SOURCES.get(k, (k,)) for k, v in JOB_KEYWORDS[job.kind](job).items() if v]
        values = {p: v for p, v in values.items() if not any(p in names for names in given)}
    _merge(ctx, _META_MANIFEST, values)
    return value


def _merge(ctx: click.Context, key: str, values: Mapping[str, Any]) -> None:
    """Command line > job file > manifest: rebuild ``default_map`` from both sources."""
    ctx.meta[key] = dict(values)
    ctx.default_map = {
        **(ctx.default_map or {}),
        **ctx.meta.get(_META_MANIFEST, {}),
        **ctx.meta.get(_META_CONFIG, {}),
    }


def _params(command: click.Command) -> dict[str, click.Parameter]:
    return {p.name: p for p in command.params if p.name}


def _csv(values: Any) -> str:
    return ",".join(str(v) for v in values)


class RoleFiltered:
    """A job value that depends on the columns' roles, computed when click asks for it.

    Flags override single options, so ``--qi a,b`` on the command line must not leave the
    job's ``--numeric`` naming a column that is no longer a QI: the job's per-column values
    (numeric columns, weights, ``l``/``t`` per sensitive column) are restricted to the columns
    that have the role in this run — the command line's ``--qi``/``--sensitive`` if given
    (click processes those first), else the job's.
    """

    def __init__(
        self,
        values: Mapping[str, Any],
        roles: Mapping[str, list[str]],
        text: Any,
        ctx: click.Context | None = None,
    ) -> None:
        self.values = dict(values)
        self.roles = roles
        self.text = text
        self.ctx = ctx  # the run whose parameters say the roles (None: the job's roles)

    def __call__(self) -> Any:
        params = self.ctx.params if self.ctx is not None else {}
        keep: set[str] = set()
        for role, names in self.roles.items():
            given = params.get(role)
            keep.update(comma_list(given) if isinstance(given, str) else names)
        kept = {name: value for name, value in self.values.items() if name in keep}
        return self.text(kept) if kept else None

    def __repr__(self) -> str:  # shown by --help as the default
        return repr(self.text(self.values))


def _per_column(value: Any) -> str:
    """``--l``/``--t`` text: one number, or ``column=value,…``."""
    if isinstance(value, Mapping):
        return ",".join(f"{name}={v}" for name, v in value.items())
    return str(value)


def job_parameters(
    job: Job, command: click.Command, source: str = "job", ctx: click.Context | None = None
) -> dict[str, Any]:
    """The parameters of ``command`` that click itself takes from ``job``, by parameter name.

    Only what click must see: the data's and the release's paths (positional arguments and
    ``--output``), how the input is read (format, separator, header names, missing tokens, the
    id/item/label columns, ``--dedupe``, a database or sheet source) and where the outputs go;
    and, for an option click requires (``--qi``, ``-k``, ``-m``), the job's value
    so that click does not ask for it (a number as it is; ``--qi`` a stand-in that the job step
    replaces by the typed list). Every other key of the model, the roles and the method reaches
    the command's job step typed (:func:`with_job_file`). The table commands but
    ``anonymize`` still take the model's keys here (``k``, ``l``, ``t``, …), as command-line
    text (issue 35: their typed route lands with the criteria).

    Parameters
    ----------
    job : Job
        A resolved job (:func:`anonymatch.app.jobfile.load_job`).
    command : click.Command
        The command being run; keys it has no parameter for are left out (e.g. ``k`` for
        ``evaluate``).
    source : str, default "job"
        The job file's name, for error messages.
    ctx : click.Context, optional
        The run: its command line's ``--qi``/``--sensitive`` restrict the job's per-column
        values (:class:`RoleFiltered`); without it, the job's roles do.

    Returns
    -------
    dict
        Parameter name → value as click would accept it from the command line.

    Raises
    ------
    anonymatch.core.errors.InputError
        If the job asks for something this command cannot do yet (:func:`feature_parameters`).
    """
    params = _params(command)
    name = command.name or ""
    given: dict[str, Any] = {}
    inp, out = job.input, job.output
    for p in INPUT_PARAMS:
        given[p] = inp.path
    if out.path is not None:
        given["output"] = out.path
        for p in RELEASE_PARAMS:
            given[p] = out.path
        if name.startswith("check-"):  # check-kl/-km/-graph TABLE: the job's release
            for p in INPUT_PARAMS:
                given[p] = out.path
    for key in ("dp_queries", "epsilon", "delta"):  # the DP companion (anonymize, cli.analysis)
        if getattr(out, key) is not None:
            given[key] = getattr(out, key)
    for key, flag in (("draws", "m"), ("draws_dir", "out_dir")):  # draw: -m and -o
        if getattr(out, key) is not None and name == "draw":
            given[flag] = getattr(out, key)
    if out.report is not None:
        if name.startswith("anonymize"):
            given["report_path"] = out.report
        if os.path.isfile(out.report):
            given["manifest"] = out.report
    given["fmt"] = inp.format
    if inp.sep is not None:
        given["sep"] = inp.sep
    names = inp.names if inp.names is not None else list(job.columns)
    if not inp.header and names:
        given["names"] = _csv(names)
    given["quotechar"] = inp.quotechar
    if inp.na is not None:
        given["na_values"] = _csv(inp.na)
    given["drop_missing"] = inp.drop_missing
    for key in ("item_sep", "id_column", "item_column", "sensitive_file", "adjacency"):
        if getattr(inp, key) is not None:
            given[key] = getattr(inp, key)
    if inp.items is not None:
        given["items_path"] = inp.items  # the relational commands' --items
    if inp.vertices is not None:
        given["n_vertices"] = inp.vertices
    for key, flag in (("table", "sql_table"), ("query", "sql_query"), ("sheet", "sheet")):
        if getattr(inp, key) is not None:
            given[flag] = getattr(inp, key)
    if out.table is not None and name.startswith("anonymize"):
        given["output_table"] = out.table
    if job.kind == "transactions" and job.sensitive:
        given["sensitive"] = job.sensitive[0]  # how labels are read: the long CSV's column
    if job.kind == "table":
        given.update(_table_criteria(job, ctx))
    given.update(feature_parameters(job, command, source))  # refuses what a command cannot do
    stand_ins = {"qi": _csv(job.qi), "k": job.model.k, "m": job.model.m}
    for p, param in params.items():
        if p not in given and getattr(param, "required", False) and stand_ins.get(p):
            given[p] = stand_ins[p]
    values = {p: v for p, v in given.items() if p in params}
    for p, param in params.items():  # nargs=-1 arguments take a list
        if p in values and isinstance(param, click.Argument) and param.nargs == -1:
            values[p] = [values[p]]
    return values


def _table_criteria(job: Job, ctx: click.Context | None) -> dict[str, Any]:
    """The table criteria's keys a job gives (the level, the sensitive models, the population
    criteria, (k,ℓ)'s ``known``: ``tables.models.ALL_CRITERIA``), as the values of the options
    declared from them — per-column ones restricted to the run's sensitive columns — for the
    commands that take them as options rather than through :func:`with_job_file` (``attack``,
    ``check-kl``, ``anonymize-kl``, a required ``-k``). O(parameters)."""
    given: dict[str, Any] = {}
    for criterion in ALL_CRITERIA.parameters():
        value = getattr(job.model, criterion.name)
        if criterion.per_column and isinstance(value, dict):  # per sensitive column
            given[criterion.name] = RoleFiltered(
                value, {"sensitive": job.sensitive}, _per_column, ctx
            )
        elif value is not None:
            given[criterion.name] = value
    return given


def feature_parameters(job: Job, command: click.Command, source: str = "job") -> dict[str, Any]:
    """The job keys of the newer features that ``command`` cannot take — refused — and
    ``--dedupe``.

    The one place that knows which job keys need which option: ordinal QIs (``--ordinal``),
    dates (``--date``), hierarchies (``--hierarchy``), per-column missing codes (``--na``),
    the suppression limit (``--suppression-limit``) and ``--dedupe``. A command that reads what
    such a key describes but has no such option refuses the job (``… is not supported yet``)
    rather than treat the column as something it is not; a command that has it takes the key
    typed (:func:`with_job_file`), never as text.

    Parameters
    ----------
    job : Job
        A resolved job.
    command : click.Command
        The command being run.
    source : str, default "job"
        The job file's name, for error messages.

    Returns
    -------
    dict
        ``{"dedupe": True}`` when the job dedupes and the command reads long transactions.

    Raises
    ------
    anonymatch.core.errors.InputError
        For a key this command needs but does not support yet.
    """
    from anonymatch.app.jobfile import _loc_text

    params = _params(command)
    reads_table = job.kind in ("table", "relational") and "qi" in params
    wanted: dict[str, tuple[str, str, bool]] = {}  # option → (key, what, whether it applies)
    for name, col in job.columns.items():
        where = f"columns.{_loc_text([name])}"
        if col.type == "ordinal" and col.role in ("qi", "sensitive") and col.order:
            wanted.setdefault("ordinal", (f"{where}.type", "ordinal columns", reads_table))
        if col.type in ("date", "datetime") and col.role == "qi":
            wanted.setdefault("date", (f"{where}.type", f"{col.type} columns", reads_table))
        if col.hierarchy is not None and col.role == "qi":
            wanted.setdefault("hierarchy", (f"{where}.hierarchy", "hierarchies", reads_table))
        if col.na is not None:
            wanted.setdefault("na", (f"{where}.na", "per-column missing codes", reads_table))
    if job.model.suppression_limit is not None:
        publishes = reads_table and "output" in params
        wanted["suppression_limit"] = ("model.suppression_limit", "a suppression limit", publishes)
    if job.input.dedupe:
        wanted["dedupe"] = ("input.dedupe", "dedupe", "id_column" in params)
    if job.model.known is not None and "known" not in params and "output" in params:
        raise InputError(  # never published as another model (attack's --known is another)
            f"{source}: model.known: (k,ℓ)-anonymity is published by anonymatch anonymize-kl, "
            f"not {command.name}"
        )
    for param_name, (loc, what, applies) in wanted.items():
        if param_name not in params and applies:
            verb = "are" if what.endswith("s") else "is"
            raise InputError(
                f"{source}: {loc}: {what} {verb} not supported yet by anonymatch {command.name}"
            )
    return {"dedupe": True} if "dedupe" in wanted and "dedupe" in params else {}


def check_job_columns(job: Job, source: str = "job") -> None:
    """Every column the job names exists in its input (table and relational jobs whose input
    is readable; a relational job's columns in the people table or the items table).

    Raises InputError ``job.toml: columns.NAME: unknown column; the input has: …``, or, for a
    file without header, when the job lists a different number of columns than the file has.
    """
    if job.kind not in ("table", "relational") or not job.columns:
        return
    if not os.path.isfile(job.input.path):
        return
    header = _input_columns(job)
    if header is None:
        return
    items = job.input.items
    if job.kind == "relational" and items is not None and os.path.isfile(items):
        on_items = _input_columns(
            job.model_copy(update={"input": job.input.model_copy(update={"path": items})})
        )
        header = header + [c for c in on_items or () if c not in header]
    from anonymatch.app.jobfile import _loc_text

    if not job.input.header and job.input.names is None:
        if len(header) != len(job.columns):
            raise InputError(
                f"{source}: columns: {len(job.columns)} columns are listed but "
                f"{Path(job.input.path).name} has {len(header)} fields a line; without a header "
                "list every column in order (or give input.names)"
            )
        return
    for name in job.columns:
        if name not in header:
            raise InputError(
                f"{source}: columns.{_loc_text([name])}: unknown column; the input has: "
                f"{', '.join(header)}"
            )
    model = job.model
    if model.k_column is not None and model.k_column not in header:
        raise InputError(
            f"{source}: model.k_column: unknown column {model.k_column!r}; the input has: "
            f"{', '.join(header)}"
        )


def _input_columns(job: Job) -> list[str] | None:
    """The column names of the job's input (its header, ``names``, or the field count)."""
    from anonymatch.tables.io import CsvOptions, csv_separator, is_parquet

    path = Path(job.input.path)
    if job.input.format == "parquet" or (job.input.format == "auto" and is_parquet(path)):
        try:
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(path).names]
        except Exception:  # the command's own reader reports a bad file
            return None
    if job.input.names is not None:
        return list(job.input.names)
    import csv

    sep = csv_separator(path, CsvOptions(sep=job.input.sep, fmt=job.input.format))
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            line = fh.readline()
    except (OSError, UnicodeDecodeError):
        return None
    if len(sep) != 1:
        return None
    fields = next(csv.reader([line], delimiter=sep, quotechar=job.input.quotechar,
                             skipinitialspace=True), [])  # fmt: skip
    if not job.input.header:
        return [str(i) for i in range(len(fields))]
    return [f.strip() for f in fields]


# --------------------------------------------------------------------------- manifests


def input_options_block(csv: CsvOptions, na_values: Any, drop_missing: bool) -> dict[str, Any]:
    """``parameters.input_options`` of a table manifest: how the original was read (``csv``),
    so that ``verify --manifest`` needs no reading options. ``na_values`` is the
    ``--na-values`` text, or an object with ``tokens`` and per-column ``columns`` codes
    (``--na``). The separator is written as ``--sep`` reads it (a backslash doubled)."""
    block: dict[str, Any] = {
        "format": csv.fmt,
        "sep": None if csv.sep is None else csv.sep.replace("\\", "\\\\"),
        "names": list(csv.names) if csv.names else None,
        "quotechar": csv.quotechar,
        "na_values": None,
        "drop_missing": drop_missing,
    }
    if isinstance(na_values, str):
        block["na_values"] = [v.strip() for v in na_values.split(",")]
    elif na_values is not None:
        block["na_values"] = [str(v) for v in getattr(na_values, "tokens", ())]
        columns = dict(getattr(na_values, "columns", {}) or {})
        if columns:
            block["na"] = {str(c): [str(v) for v in codes] for c, codes in columns.items()}
    return block


def manifest_parameters(path: str, command: click.Command) -> dict[str, Any]:
    """The parameters of ``verify`` that a release's manifest records.

    Parameters
    ----------
    path : str
        The manifest (``anonymize --report``).
    command : click.Command
        The command being run (its parameter names filter the result).

    Returns
    -------
    dict
        ``k`` or ``k_column``, ``qi``, ``numeric``, ``sensitive``, the sensitive models
        (``l``, ``t``, ``diversity``, ``c``) and, for manifests that record them, the reading
        options of the original (``fmt``, ``sep``, ``names``, ``quotechar``, ``na_values``,
        ``drop_missing``).

    Raises
    ------
    anonymatch.core.errors.InputError
        If the manifest cannot be read or is not a table manifest this command can check.
    """
    from anonymatch.core.manifest import load_manifest

    manifest = load_manifest(path)  # bounded, and every key read below has its type
    try:
        parameters = manifest["parameters"]
        guarantee = manifest["guarantee"]
        if not isinstance(parameters, dict) or not isinstance(guarantee, dict):
            raise TypeError("parameters/guarantee are not objects")
    except (KeyError, TypeError) as exc:
        raise InputError(f"cannot read the manifest {path}: {exc}") from None
    if manifest.get("data_kind") not in (None, "table"):
        raise InputError(f"{path} is the manifest of a {manifest['data_kind']} release")
    model = guarantee.get("model")
    if model not in ("k-anonymity", "adaptive-anonymity", "(k,l)-anonymity"):
        raise InputError(f"{path}: a {model} release is checked by another command than verify")
    from anonymatch.app.tablejob import manifest_job

    try:
        job = manifest_job(manifest)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    values: dict[str, Any] = {}
    roles = job.schema.roles()
    for key in ("qi", "numeric", "sensitive", "identifiers"):
        if roles[key]:
            values[key] = _csv(roles[key])
    # the level and the sensitive models (typed: their options take them as they are)
    values.update(SAMPLE_CRITERIA.claims(guarantee, roles))
    if job.criteria:  # counted against a population named by path: checked again
        values.update(POPULATION_CRITERIA.claims(guarantee), population=job.population)
    read = parameters.get("input_options")
    if isinstance(read, dict):
        for key, param in (("format", "fmt"), ("sep", "sep"), ("quotechar", "quotechar")):
            if read.get(key) is not None:
                values[param] = read[key]
        if read.get("names"):
            values["names"] = _csv(read["names"])
        if read.get("na_values") is not None:
            values["na_values"] = _csv(read["na_values"])
        values["drop_missing"] = bool(read.get("drop_missing"))
        if isinstance(read.get("na"), dict) and read["na"]:
            codes = [f"{c}={'|'.join(v)}" for c, v in read["na"].items()]
            na_param = _params(command).get("na")
            values["na"] = codes if getattr(na_param, "multiple", False) else ",".join(codes)
    source = manifest.get("input")
    if isinstance(source, dict):  # a database original: the table or query read (no password)
        for key, param in (("table", "sql_table"), ("query", "sql_query")):
            if isinstance(source.get(key), str):
                values[param] = source[key]
    params = _params(command)
    return {key: value for key, value in values.items() if key in params and value is not None}


# --------------------------------------------------------------------------- init


def init_data(data: str, sql_table: str | None, sql_query: str | None) -> str | SqlSource:
    """DATA of ``init``: with ``--table``/``--query`` and a database URL, one
    :class:`~anonymatch.tables.io.sql.SqlSource` (exactly one of them, or refused); either of
    them with a file, or a URL with neither, is refused with one line. O(1)."""
    from anonymatch.tables.io.sql import SqlSource, is_database_url

    if is_database_url(data):
        return SqlSource(data, sql_table, sql_query)
    if sql_table is not None or sql_query is not None:
        raise InputError("--table and --query read a database URL given as DATA")
    return data


@command("init")
@click.argument("data")
@click.option(
    "-o", "--output", default=None, help="Write the draft job file here (default: stdout)."
)
@click.option("--force", is_flag=True, help="Replace an existing output.")
@click.option(
    "--sep", default=None, help="CSV field separator (default: guessed from the first lines)."
)
@click.option(
    "--names", default=None, help="Comma-separated column names for a CSV file without header."
)
@click.option(
    "--header/--no-header",
    default=None,
    help="Whether the first line names the columns (default: guessed).",
)
@click.option("--quotechar", default='"', show_default=True, help="CSV quote character.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "csv", "tsv", "parquet"]),
    default="auto",
    show_default=True,
    help="Input format; auto decides by the extension.",
)
@click.option(
    "--sample-rows",
    type=int,
    default=20_000,
    show_default=True,
    help="Rows read to infer the types (the whole file when smaller).",
)
@click.option("-k", "--k", "k", type=int, default=10, show_default=True, help="k of the draft.")
@click.option(
    "--table",
    "sql_table",
    default=None,
    help="DATA a database URL (postgresql://…, sqlite:///…, duckdb:///…): the table sampled "
    "(the draft names the URL without its password).",
)
@click.option("--query", "sql_query", default=None, help="DATA a database URL: the SELECT sampled.")
@click.option(
    "--items",
    "items_path",
    default=None,
    metavar="ITEMS",
    help="Draft a relational job (anonymize-rt): DATA is the people table, ITEMS the long "
    "items table (one row per person id and item).",
)
@click.option("--id", "id_column", default=None, help="With --items: the person id column.")
@click.option("--item-column", default=None, help="With --items: the item column.")
@click.option(
    "--hierarchies",
    "hierarchies",
    default=None,
    metavar="DIR",
    help="Directory of ARX hierarchy files (value;level1;…;*): each QI gets the file named "
    "after it (cup_hierarchy_ZIP.csv), else the one whose leaves hold its values.",
)
@verbosity_options
@with_step(init_data, "data")
def init_cmd(
    data: str | SqlSource,
    output: str | None,
    force: bool,
    sep: str | None,
    names: str | None,
    header: bool | None,
    quotechar: str,
    fmt: str,
    sample_rows: int,
    k: int,
    items_path: str | None,
    id_column: str | None,
    item_column: str | None,
    hierarchies: str | None,
    quiet: bool,
) -> None:
    """Draft a job file from a table.

    Reads a sample of DATA and writes a TOML job file: each column's type and cardinality,
    likely identifiers, suggested quasi-identifiers, sensitive candidates, missing-value tokens;
    with comments to review before the first release (see docs/jobs.md). With --items ITEMS,
    a relational job (anonymize-rt): DATA the people, ITEMS their long items table."""
    from anonymatch.app.infer import infer_job
    from anonymatch.app.jobfile import render_toml
    from anonymatch.core.files import write_atomically
    from anonymatch.tables.io.sql import SqlSource

    if sample_rows < 1:
        raise InputError(f"--sample-rows must be at least 1, got {sample_rows}")
    # the shared output policy: a .toml job file, not the table it describes, not replaced
    # without --force; DATA a regular file (or a directory of Parquet parts)
    outputs = [] if output is None else [Output("-o/--output", output, (".toml",))]
    check_outputs(outputs, [] if isinstance(data, SqlSource) else [data], force)
    if sep is not None:
        sep = parse_separator(sep, "--sep")
        if len(sep) != 1:  # the draft samples lines with the csv module: one character
            raise InputError(f"--sep of anonymatch init is one character, got {sep!r}")
    job = infer_job(
        data,
        hierarchies=hierarchies,
        sep=sep,
        names=comma_list(names) or None,
        header=header,
        quotechar=quotechar,
        fmt=fmt,
        sample_rows=sample_rows,
        k=k,
        job_dir=Path(output).resolve().parent if output else Path.cwd(),
    )
    if items_path is not None:
        from anonymatch.app.infer import relational_job

        if isinstance(data, SqlSource):
            raise InputError("--items drafts from a people file, not a database")
        job = relational_job(
            job,
            data,
            items_path,
            id_column=id_column,
            item_column=item_column,
            sample_rows=sample_rows,
            job_dir=Path(output).resolve().parent if output else Path.cwd(),
        )
    elif id_column is not None or item_column is not None:
        raise InputError("--id and --item-column go with --items")
    text = render_toml(job)
    if output is None:
        click.echo(text, nl=False)
        return
    write_atomically(output, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    if not quiet:
        echo_stderr(
            f"wrote {output}: {len(job.columns)} columns, QIs {', '.join(job.qi)}"
            + (f", identifiers {', '.join(job.identifiers)}" if job.identifiers else "")
            + "; review it before the first release"
        )


COMMANDS = [init_cmd]


# ------------------------------------------------------------ a release as published


def read_release(path: str, table: str | None = None) -> Any:
    """A table release as published (CSV formula guard undone; ``cells.read_release_text``),
    or the cells of the release ``table`` when ``path`` is a database URL."""
    from anonymatch.tables.io.cells import read_release_text as read
    from anonymatch.tables.io.sql import is_database_url, read_sql_source, redact_url

    if is_database_url(path):
        if table is None:
            raise InputError(f"the release {redact_url(path)} needs `release_table`")
        return read_sql_source(path, table=table)
    if table is not None:
        raise InputError("`release_table` reads a release from a database URL (postgresql://…)")
    return read(path)


release_table_option = click.option(
    "--release-table",
    default=None,
    help="The release a database URL (anonymize -o URL --output-table): the release table read.",
)
