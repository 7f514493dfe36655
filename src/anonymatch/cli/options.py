"""Options and helpers shared by every command: input formats, roles, seed, executor,
manifest writing, progress."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click
import numpy as np

from anonymatch.app.outputs import (
    JSON_EXTENSIONS,
    SIDECAR_SUFFIX,
    TABLE_RELEASE_EXTENSIONS,
    Output,
    check_inputs,
    check_outputs,
)
from anonymatch.cli.steps import with_step
from anonymatch.core.criteria import Parameter, Registry
from anonymatch.core.errors import InputError, VerificationError
from anonymatch.core.files import write_atomically
from anonymatch.core.manifest import private_seed_file, utc_now
from anonymatch.tables.columns.schema import DEFAULT_NA_VALUES, MissingCodes
from anonymatch.tables.io import CsvOptions, check_quotechar

if TYPE_CHECKING:
    from anonymatch.tables.columns.qitypes import QITypes

F = TypeVar("F", bound=Callable[..., Any])

FLAGS: dict[str, str] = {
    "na_values": "--na-values (or --na COLUMN=CODES)",
    "dates": "--date",
    "hierarchies": "--hierarchy",
    "types": "--ordinal/--date/--hierarchy",
    "progress": "--quiet",
    "job": "--config",
    "ell": "--l",
    "labels": "--sensitive-file or --sensitive",
    "n_vertices": "--n",
    "labels_path": "--sensitive-file",
    "label_column": "--sensitive",
    "refine": "--lsh",
    "id_column": "--id",
    "fmt": "--format",
    "certificate": "--manifest",
}
"""The one table from a library parameter to the flag that sets it, where the flag is not
``--`` and the parameter's name with dashes (``partition_size`` → ``--partition-size``)."""

_PARAMETER = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(\[[^`\]]*\])?`")


def flag_of(name: str) -> str:
    """The flag of a library parameter (``FLAGS``, else ``--name-with-dashes``)."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def in_cli_words(message: str) -> str:
    """A library message in the command line's words: each parameter the library names between
    backticks (```partition_size```, ```l['disease']```) becomes its flag (``--partition-size``,
    ``--l for 'disease'``). O(len(message))."""

    def flag(match: re.Match[str]) -> str:
        name, key = match.group(1), match.group(2)
        return flag_of(name) + (f" for {key[1:-1]}" if key else "")

    return _PARAMETER.sub(flag, message)


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


def _apply(func: Any, options: Sequence[Callable[[Any], Any]]) -> Any:
    for option in reversed(options):
        func = option(func)
    return func


def format_option(choices: tuple[str, ...], help: str) -> Callable[[F], F]:
    """``--format`` of an input (parameter ``fmt``): ``auto`` (the default) decides by the
    file's extension."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default="auto",
        show_default=True,
        help=f"Input format; auto decides by the extension ({help}).",
    )


TABLE_FORMATS = ("auto", "csv", "tsv", "parquet")


def table_input_options(func: F) -> F:
    """Options describing how to read the original table (shared by all table commands).
    ``--format``, ``--sep``, ``--names``, ``--quotechar`` and the database or sheet source reach
    the command as one ``CsvOptions`` (parameter ``csv``, :func:`reading_options`);
    ``--na-values`` and ``--na`` as one ``MissingCodes`` (parameter ``na_values``,
    :func:`missing_codes_option`)."""
    func = with_step(missing_codes_option, "na_values")(func)
    func = with_step(reading_options, "csv")(func)
    return cast(
        F,
        _apply(
            func,
            [
                format_option(
                    TABLE_FORMATS,
                    ".parquet/.pq Parquet, .tsv/.tab tab-separated, else CSV; csv = "
                    "comma-separated unless --sep",
                ),
                click.option(
                    "--sep",
                    default=None,
                    help="CSV field separator (default: tab for .tsv or --format tsv, else ',').",
                ),
                click.option(
                    "--names",
                    default=None,
                    help="Comma-separated column names for a CSV file without header.",
                ),
                click.option(
                    "--quotechar", default='"', show_default=True, help="CSV quote character."
                ),
                click.option(
                    "--na-values",
                    default=None,
                    help="Comma-separated tokens meaning 'missing' "
                    f"(default: {','.join(repr(v) for v in DEFAULT_NA_VALUES)}).",
                ),
                click.option(
                    "--na",
                    multiple=True,
                    metavar="COL=V1|V2",
                    help="Codes meaning 'missing' in one column, besides --na-values, e.g. "
                    "EDUCYEAR=-1|-7|-8|-9 (repeatable; or comma-separated COL=…,COL=…). A missing "
                    "QI value is published as '*'.",
                ),
                click.option(
                    "--drop-missing", is_flag=True, help="Drop rows with a missing QI value."
                ),
                click.option(
                    "--table",
                    "sql_table",
                    default=None,
                    help="Database input (INPUT a URL such as postgresql://user@host/db or "
                    "sqlite:///file.db): the table read. The password comes from the URL, "
                    "PGPASSWORD or ~/.pgpass and is never recorded.",
                ),
                click.option(
                    "--query",
                    "sql_query",
                    default=None,
                    help="Database input: the SELECT whose rows are read (instead of --table).",
                ),
                click.option(
                    "--sheet",
                    default=None,
                    help="Excel input (.xlsx): the worksheet read (default: the first).",
                ),
            ],
        ),
    )


def reading_options(
    ctx: click.Context,
    fmt: str,
    sep: str | None,
    names: str | None,
    quotechar: str,
    sql_table: str | None = None,
    sql_query: str | None = None,
    sheet: str | None = None,
) -> CsvOptions:
    """How to read the original table (:func:`table_input_options`) as one ``CsvOptions``:
    ``--table`` and ``--query`` both set are settled by :func:`_one_sql_source`. O(1)."""
    if sql_table is not None and sql_query is not None:
        sql_table, sql_query = _one_sql_source(ctx, sql_table, sql_query)
    return csv_options(sep, names, quotechar, fmt, sql_table, sql_query, sheet)


def _one_sql_source(ctx: click.Context, table: str, query: str) -> tuple[str | None, str | None]:
    """``--table`` and ``--query`` both set: the one given on the command line wins over the
    other taken from ``--config`` or ``--manifest``; both on the command line are refused."""
    from click.core import ParameterSource

    given = [
        ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
        for name in ("sql_table", "sql_query")
    ]
    if given == [True, False]:
        return table, None
    if given == [False, True]:
        return None, query
    raise InputError("give either --table or --query, not both")


def missing_codes_option(
    na_values: str | MissingCodes | None, na: Sequence[str] = ()
) -> MissingCodes:
    """``--na-values`` (global tokens) and ``--na COL=V1|V2`` (per-column codes) as one
    ``MissingCodes``. InputError on a malformed ``--na``."""
    base = na_values if isinstance(na_values, MissingCodes) else MissingCodes(na_tokens(na_values))
    columns = {name: list(codes) for name, codes in base.columns.items()}
    for value in na:
        for item in comma_list(value):
            name, sep, codes = item.partition("=")
            tokens = [c.strip() for c in codes.split("|")]
            if not sep or not name.strip() or not codes.strip() or "" in tokens:
                raise InputError(f"--na expects COLUMN=CODE|CODE|…, got {item!r}")
            columns.setdefault(name.strip(), []).extend(tokens)
    return MissingCodes(base.tokens, {c: tuple(v) for c, v in columns.items()})


SET_FORMATS = ("auto", "dat", "basket", "long", "jsonl")


@dataclass(frozen=True)
class SetSource:
    """How to read original transactions: ``--format``, ``--item-sep`` (as typed),
    ``--id-column``/``--item-column`` of the long format, ``--dedupe``, and where the sensitive
    labels come from (``--sensitive`` column or key, ``--sensitive-file``)."""

    fmt: str = "auto"
    item_sep: str = ","
    id_column: str | None = None
    item_column: str | None = None
    dedupe: bool = False
    label_column: str | None = None
    labels_path: str | None = None


def set_input_options(func: F) -> F:
    """Options describing how to read original transactions (shared by the set commands),
    passed to the command as one :class:`SetSource` (parameter ``source``), with
    ``--sensitive``/``--sensitive-file`` when the command has them."""
    return source_options(SET_FORMATS, ".dat FIMI, .jsonl JSON Lines, else basket CSV")(func)


def source_options(formats: tuple[str, ...], help: str) -> Callable[[F], F]:
    """:func:`set_input_options` with the ``--format`` choices ``formats`` (``help`` says what
    ``auto`` does): the k^m commands read their own formats the same way."""
    return functools.partial(_source_options, formats=formats, help=help)


def set_source(
    fmt: str,
    item_sep: str,
    id_column: str | None,
    item_column: str | None,
    dedupe: bool,
    sensitive: str | None = None,
    sensitive_file: str | None = None,
) -> SetSource:
    """How to read original transactions as one :class:`SetSource` (``--sensitive`` and
    ``--sensitive-file`` where the command has them). O(1)."""
    return SetSource(fmt, item_sep, id_column, item_column, dedupe, sensitive, sensitive_file)


def _source_options(func: F, formats: tuple[str, ...], help: str) -> F:
    return _apply(
        with_step(set_source, "source")(func),
        [
            format_option(formats, help),
            click.option(
                "--item-sep", default=",", show_default=True, help="Basket item separator."
            ),
            click.option("--id-column", default=None, help="Long format: record id column."),
            click.option("--item-column", default=None, help="Long format: item column."),
            click.option(
                "--dedupe",
                is_flag=True,
                help="Long format: drop repeated (record, item) rows (counted in the summary "
                "and the manifest) instead of refusing the input.",
            ),
        ],
    )


def set_sensitive_options(func: F) -> F:
    """Where the sensitive label of each transaction comes from (ℓ-diversity)."""
    return _apply(
        func,
        [
            click.option(
                "--sensitive",
                default=None,
                metavar="COLUMN",
                help="Sensitive column: the label column of a long CSV, or the key of a JSONL "
                "record.",
            ),
            click.option(
                "--sensitive-file",
                default=None,
                metavar="FILE",
                help="Sensitive values in a file of their own: one label per line, per record.",
            ),
        ],
    )


EXECUTOR_CHOICES = ("auto", "inline", "threads", "processes", "dask")


def executor_options(meaning: str) -> Callable[[F], F]:
    """``--executor``, ``--workers``, ``--scheduler``: one set of choices for every command
    that can run in parallel; ``meaning`` says what each choice does for the command."""

    def decorate(func: F) -> F:
        return _apply(
            with_step(bounded_handshake, around=True)(func),
            [
                click.option(
                    "--executor",
                    type=click.Choice(list(EXECUTOR_CHOICES)),
                    default="auto",
                    show_default=True,
                    help=f"Where the work runs: {meaning}",
                ),
                click.option(
                    "--workers",
                    type=int,
                    default=None,
                    help="Number of parallel workers (default: all cores); with --executor "
                    "auto, start a local Dask cluster of this many workers.",
                ),
                click.option(
                    "--scheduler",
                    default=None,
                    metavar="ADDRESS",
                    help="Address of an existing dask.distributed scheduler, e.g. "
                    "tcp://host:8786 (implies --executor dask).",
                ),
                click.option(
                    "--connect-timeout",
                    type=float,
                    default=None,
                    metavar="SECONDS",
                    help="Give up on a --scheduler that does not complete Dask's handshake "
                    "within this time (exit 2) [default: 10].",
                ),
            ],
        )

    return decorate


def bounded_handshake(connect_timeout: float | None) -> contextlib.AbstractContextManager[None]:
    """``--connect-timeout``: the bound on a Dask scheduler's handshake while the command
    runs (``core.runner.connect_timeout``). O(1)."""
    from anonymatch.core.runner import connect_timeout as bounded

    return bounded(connect_timeout)


def _check_seed(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value < 0:
        raise InputError(f"--seed must be a non-negative integer, got {value}")
    return value


SEED_WARNING = (
    "warning: --seed makes this run reproducible by anyone who knows the seed; keep the seed secret"
)
"""Printed (after ``anonymatch: ``) on stderr by every command given ``--seed``. It does not
repeat the seed: stderr often ends up in logs."""


def seed_option(func: F) -> F:
    """``--seed`` and ``--seed-file`` (every command with randomness; parameter ``seed``).

    ``--seed`` prints :data:`SEED_WARNING` on stderr. ``--seed-file PATH`` runs the command with a
    definite seed (the ``--seed`` given, else one drawn from OS entropy) and writes that seed to
    PATH as a private JSON file (mode 0600, atomically) once the command has returned normally,
    so a failed or interrupted run leaves no seed file. PATH must not exist unless ``--force``
    is given (commands without ``--force`` always refuse it). The manifest never holds the seed
    or PATH; it says ``randomness.seed_file: true`` and keeps ``source: "os-entropy"`` for a
    drawn seed (:func:`anonymatch.core.manifest.private_seed_file`)."""

    return cast(
        F,
        _apply(
            with_step(seed_step, "seed", around=True)(func),
            [
                click.option(
                    "--seed",
                    type=int,
                    default=None,
                    callback=_check_seed,
                    help="Seed of all randomness (≥ 0; default: OS entropy). It makes the run "
                    "reproducible by anyone who knows the seed: tests/experiments only (a "
                    "warning is printed, even with -q).",
                ),
                click.option(
                    "--seed-file",
                    default=None,
                    metavar="PATH",
                    help="After a successful run, write the seed used (--seed, else one drawn "
                    "from OS entropy) to PATH, a private file (mode 0600), to redo the run "
                    "privately with --seed. Never recorded in the manifest; keep it secret.",
                ),
            ],
        ),
    )


@contextlib.contextmanager
def seed_step(
    ctx: click.Context, seed: int | None, seed_file: str | None, force: bool = False
) -> Iterator[int | None]:
    """The seed of the run (:func:`seed_option`), around it: the warning of ``--seed``; with
    ``--seed-file``, a definite seed (drawn from OS entropy unless given) and the seed file
    written once the command has returned normally (refused up front by the shared output
    policy, :func:`claim_outputs`, when it cannot or must not be written). O(1)."""
    if seed_file is not None:
        claim_outputs(ctx)
    if seed is not None:
        # Not silenced by -q: -q silences progress and chatter, while this is about the
        # privacy of what is published. Scripts run with -q are where a test seed left in by
        # mistake would go unnoticed; the line goes to stderr and leaves stdout clean.
        echo_stderr(SEED_WARNING)
    if seed_file is None:
        yield seed
        return
    drawn = draw_seed(seed)
    with private_seed_file(seed_given=seed is not None):
        try:
            yield drawn
        except SystemExit as exc:  # sys.exit(0) is a success too
            if exc.code not in (None, 0):
                raise
            _write_seed_file(seed_file, drawn, seed is not None, ctx, force)
            raise
    _write_seed_file(seed_file, drawn, seed is not None, ctx, force)


OUTPUT_FLAGS = {
    "output": "-o/--output",
    "report_path": "--report",
    "report_html": "--report-html",
    "seed_file": "--seed-file",
    "model_out": "--model-out",
}
"""The parameters naming a command's outputs, and how messages name them."""

HTML_EXTENSIONS = (".html", ".htm")
"""The HTML report (``--report-html``, ``anonymatch report``)."""


def claim_outputs(
    ctx: click.Context,
    extensions: tuple[str, ...] | None = None,
    directory: bool = False,
) -> None:
    """Check the current command's files up front, as one set (the shared output policy,
    :func:`anonymatch.app.outputs.check_outputs`): supported extension (``extensions`` for
    the release, ``.json`` for the side outputs), existing directory, no existing file without
    ``--force``, no two outputs naming one file, no output naming an input, no input or output
    that is a device or FIFO. The outputs are every parameter of :data:`OUTPUT_FLAGS` and, for
    a table release (``extensions`` are :data:`TABLE_RELEASE_EXTENSIONS`) in CSV text, its
    sidecar; the inputs are :func:`run_inputs`. Done once per command, by the outermost of
    :func:`output_options` and :func:`seed_option`, or by a command itself."""
    if ctx.meta.get("anonymatch.outputs_claimed"):
        return
    ctx.meta["anonymatch.outputs_claimed"] = True
    outputs = []
    for name, flag in OUTPUT_FLAGS.items():
        value = ctx.params.get(name)
        if value is None:
            continue
        if name == "output":
            sidecar = extensions == TABLE_RELEASE_EXTENSIONS  # CSV table releases have one
            outputs.append(Output(flag, str(value), extensions, directory, sidecar))
        elif name == "report_html":
            outputs.append(Output(flag, str(value), HTML_EXTENSIONS))
        else:
            outputs.append(Output(flag, str(value), JSON_EXTENSIONS))
    force = bool(ctx.params["force"]) if "force" in ctx.params else None
    check_outputs(outputs, run_inputs(ctx), force)


CONFIG_PATH = "anonymatch.config_path"
"""``ctx.meta`` key of the ``--config`` job file's path (set by its callback, ``cli.config``):
the job file is an input of the run."""


JOB_SCHEDULER = "anonymatch.job_scheduler"
"""``ctx.meta`` key of a ``--config`` job's ``execution.scheduler``: (address, job file name)."""


def check_job_scheduler(ctx: click.Context) -> None:
    """A job file's ``execution.scheduler`` sends the table to another machine: it is used only
    when the command line confirms it (``--scheduler ADDRESS``, which then wins over the job);
    otherwise InputError before anything is read or sent. O(1)."""
    from click.core import ParameterSource

    found = ctx.meta.get(JOB_SCHEDULER)
    if found is None or "scheduler" not in ctx.params:  # this command never uses one
        return
    if ctx.get_parameter_source("scheduler") == ParameterSource.COMMANDLINE:
        return
    address, source = found
    raise InputError(
        f"{source}: execution.scheduler: the job would send the data to the Dask scheduler "
        f"{address}; confirm it on the command line with --scheduler {address}"
    )


def run_inputs(ctx: click.Context) -> list[str]:
    """Every path the current command may read: each text parameter that is not an output
    (positional inputs, ``--manifest``, ``--cell-weights``, ``--sensitive-file``, ``--model``,
    …) and the FILE of ``COLUMN=FILE`` items (``--hierarchy``), the ``--config`` job file, and
    the sidecar of each such path (a CSV release is read with it). Paths that do not exist are
    kept: :func:`~anonymatch.app.outputs.check_outputs` compares only existing ones."""
    inputs: list[str] = []
    for name, value in ctx.params.items():
        if name in OUTPUT_FLAGS or value is None or isinstance(value, bool):
            continue
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, str) and item:
                inputs.append(item)
                _, sep, target = item.partition("=")
                if sep and target.strip():
                    inputs.append(target.strip())
    config = ctx.meta.get(CONFIG_PATH)
    if config:
        inputs.append(str(config))
    sidecars = [p + SIDECAR_SUFFIX for p in inputs if os.path.isfile(p)]
    return inputs + [p for p in sidecars if os.path.isfile(p)]


def _write_seed_file(path: str, seed: int, given: bool, ctx: click.Context, force: bool) -> None:
    """The private seed file: a small JSON object, mode 0600, written atomically."""
    from anonymatch import __version__

    if not force and os.path.lexists(path):  # appeared while the command ran
        raise InputError(f"{path} exists; the seed was not written")
    record = {
        "seed": int(seed),
        "source": "seed" if given else "os-entropy",
        "command": ctx.command.name,
        "created": utc_now(),
        "tool": {"name": "anonymatch", "version": __version__},
    }
    text = json.dumps(record, indent=2) + "\n"

    def write(tmp: Path) -> None:
        os.chmod(tmp, 0o600)  # mkstemp's mode already; said, not assumed
        tmp.write_text(text)

    write_atomically(path, write)


def draw_seed(seed: int | None) -> int:
    """``seed``, or a fresh one from OS entropy (printed by the caller so a run can be redone)."""
    if seed is not None:
        return seed
    return int(np.random.SeedSequence().generate_state(1)[0])


def echo_stderr(message: str) -> None:
    """One ``anonymatch: message`` line on the current stderr (log records, warnings)."""
    click.echo(f"anonymatch: {message}", err=True)


class _EchoHandler(logging.Handler):
    """Log records as ``anonymatch: message`` lines on the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            echo_stderr(self.format(record))
        except Exception:  # pragma: no cover - logging must never break a run
            self.handleError(record)


def setup_logging(verbose: bool, quiet: bool) -> None:
    """The ``anonymatch`` logger: INFO with -v, ERROR with -q, else WARNING; to stderr."""
    logger = logging.getLogger("anonymatch")
    if not any(isinstance(h, _EchoHandler) for h in logger.handlers):
        logger.addHandler(_EchoHandler())
        logger.propagate = False
    logger.setLevel(logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING)


def risk_options(who: str) -> Callable[[F], F]:
    """The figure options ``risk`` and ``risk-rt`` share: ``--sensitive``, ``-k/--k``,
    ``--threshold``, ``--json``, ``--report`` and ``--force``; ``who`` names what a candidate
    count is of in the threshold's help ("record", "person")."""

    def decorate(func: F) -> F:
        return _apply(
            func,
            [
                click.option(
                    "--sensitive",
                    default=None,
                    help="Sensitive columns: homogeneity, posterior, distance to the table, l.",
                ),
                click.option(
                    "-k",
                    "--k",
                    "k",
                    type=int,
                    default=None,
                    help="The anonymity the release claims: checked, and the mechanism-aware "
                    "posterior bound.",
                ),
                click.option(
                    "--threshold",
                    type=float,
                    default=0.2,
                    show_default=True,
                    help=f"Prosecutor risk above which a {who} is at risk, in (0, 1] "
                    "(0.2: < 5 candidates).",
                ),
                click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON."),
                click.option(
                    "--report", "report_path", default=None, help="Write the figures as JSON here."
                ),
                click.option("--force", is_flag=True, help="Replace an existing report."),
            ],
        )

    return decorate


def echo_sensitive_risk(report: Any, who: str) -> None:
    """Print a risk report's figures per sensitive column (``risk``, ``risk-rt``): homogeneous
    ``who``, the largest posterior, the distance to the table, the fewest distinct values and,
    on candidate figures with a claimed k, the mechanism-aware bound."""
    n = report.people
    for s in report.sensitive:
        click.echo(
            f"sensitive {s.column} ({s.values} values, {s.ground_distance} distance, "
            f"most common {100 * s.prior_max:.2f}% of the table):"
        )
        click.echo(f"  {'homogeneous ' + who:<28}{share_text(s.homogeneous, n)}")
        click.echo(
            f"  largest posterior           max {s.posterior_max:.4f}, mean "
            f"{s.posterior_mean:.4f}, >= 0.5 {100 * s.posterior_half_share:.2f}%, = 1 "
            f"{100 * s.posterior_one_share:.2f}%"
        )
        click.echo(
            f"  distance to the table       max {s.distance_max:.4f}, mean {s.distance_mean:.4f}"
        )
        click.echo(
            f"  fewest distinct values      {s.min_distinct} (effective l {s.min_effective_l:.2f})"
        )
        if s.mechanism_bound_max is not None and report.basis == "candidates":
            click.echo(
                f"  bound min(1, c/k), k = {report.k}  max {s.mechanism_bound_max:.4f}, "
                f"{share_text(s.mechanism_disclosed, n)} at 1"
            )


def echo_explanation(report: Any) -> None:
    """Print a risk report's explanation, after a blank line, wrapped at 100 columns."""
    import textwrap

    click.echo("")
    for line in report.explanation:
        click.echo(textwrap.fill(line, width=100, subsequent_indent="  "))


def verbosity_options(func: F) -> F:
    """``-v/--verbose`` and ``-q/--quiet`` (every command). Sets up logging; the command gets
    ``quiet`` only if it has such a parameter (:func:`verbosity`). Refuses, before any work, a
    path parameter that names a device, FIFO or socket
    (:func:`~anonymatch.app.outputs.check_inputs`): a reader would never finish it or block on
    it."""
    decorated = _apply(
        with_step(verbosity)(func),
        [
            click.option("-v", "--verbose", is_flag=True, help="Log what is being done (stderr)."),
            click.option(
                "-q",
                "--quiet",
                is_flag=True,
                help="No progress bar, no log messages and no summary of a written release.",
            ),
        ],
    )
    params = decorated.__click_params__
    params[:] = params[-2:] + params[:-2]  # listed last in --help
    return cast(F, decorated)


def verbosity(ctx: click.Context, verbose: bool, quiet: bool) -> None:
    """``-v``/``-q`` (:func:`verbosity_options`): logging set up, and before any work no path
    naming a device or FIFO, and no job file's scheduler the command line does not confirm.
    O(parameters)."""
    if verbose and quiet:
        raise InputError("-v/--verbose and -q/--quiet exclude each other")
    setup_logging(verbose, quiet)
    check_inputs(run_inputs(ctx))  # no device or FIFO is read
    check_job_scheduler(ctx)  # the table leaves the machine only if the command line says so


def csv_safe_option(func: F) -> F:
    """``--csv-safe/--no-csv-safe`` (parameter ``csv_safe``): neutralize formula-like text cells
    of a CSV/TSV release (OWASP CSV injection; ``core.csvsafe``), on by default."""
    return click.option(
        "--csv-safe/--no-csv-safe",
        "csv_safe",
        default=True,
        show_default=True,
        help="CSV/TSV release: prefix text cells starting with = + - @ TAB CR (not numbers or "
        "ranges) with ' so spreadsheets do not run them as formulas; read back exactly by "
        "verify/risk/evaluate. Recorded in the manifest.",
    )(func)


def output_options(
    output_help: str,
    report: bool = True,
    extensions: tuple[str, ...] | None = None,
    directory: bool = False,
) -> Callable[[F], F]:
    """``-o/--output`` (required), ``--force``, ``--report`` and ``--report-html`` (unless
    ``report`` is False), ``-v``, ``-q``: every command that writes a release. Every output
    path is checked up front by the shared policy (:func:`claim_outputs`; ``extensions`` are
    the release's supported extensions, ``directory`` allows a directory of Parquet parts):
    without --force
    an existing output or report is never replaced, and no two outputs or an output and an
    input may be one file."""

    @contextlib.contextmanager
    def outputs(ctx: click.Context, force: bool, report_html: str | None = None) -> Iterator[None]:
        # every output claimed at once (--force read with them); the HTML report around
        claim_outputs(ctx, extensions, directory)
        if report_html is None:
            yield
            return
        with html_report(ctx, report_html):
            yield

    def decorate(func: F) -> F:
        return verbosity_options(
            _apply(
                with_step(outputs, around=True)(func),
                [
                    click.option("-o", "--output", required=True, help=output_help),
                    click.option(
                        "--force", is_flag=True, help="Replace an existing output or report."
                    ),
                ]
                + (
                    [
                        click.option(
                            "--report",
                            "report_path",
                            default=None,
                            help="Write the JSON audit manifest here.",
                        ),
                        click.option(
                            "--report-html",
                            "report_html",
                            default=None,
                            metavar="PATH",
                            help="Write the privacy officer's HTML report here (one "
                            "self-contained file; see anonymatch report).",
                        ),
                    ]
                    if report
                    else []
                ),
            )
        )

    return decorate


@contextlib.contextmanager
def html_report(ctx: click.Context, path: str) -> Iterator[None]:
    """Around a release command: then render the HTML report of the release it wrote (from the
    manifest it completed, the input and the output, read as the command's parameters say)
    and write it to ``path`` (checked up front with the other outputs by
    :func:`claim_outputs`; committed with them by the CLI's ``all_or_nothing``: a failed
    report leaves no release either)."""
    import time

    from anonymatch.core.manifest import capture_manifests
    from anonymatch.tables.io.reuse import reuse_parsed_release

    params = ctx.params
    source = params.get("input_path") or params.get("edges") or params.get("people_path")
    # the report measures risk on the cells just verified: the cells and their compatibility
    # graph are computed once for both
    with reuse_parsed_release():
        with capture_manifests() as found:
            yield
        if not found:  # pragma: no cover - every release command completes a manifest
            raise InputError("the command made no manifest to report on")
        from anonymatch.report import build_report, write_report

        started = time.perf_counter()
        with _written(params["output"]) as release:
            html = build_report(
                found[-1],
                source,
                release,
                options=report_reading_options(params, ctx),
                check_digests=False,  # the files were just written and digested
            )
    write_report(path, html)
    if not params.get("quiet"):
        click.echo(f"report: {path} ({time.perf_counter() - started:.1f} s)")


@contextlib.contextmanager
def _written(output: str) -> Iterator[Any]:
    """The release a command wrote, before its outputs are committed: a database URL, or the
    staged file (under its own name through a private link when the staged name hides it)."""
    from anonymatch.core import lifecycle
    from anonymatch.core.files import current_path
    from anonymatch.tables.io.sql import is_database_url

    if is_database_url(output):
        yield output
        return
    staged, final = current_path(output), Path(output)
    if staged == final or staged.is_dir() or staged.suffix == final.suffix:
        yield staged
        return
    with lifecycle.private_directory("anonymatch-report-") as tmp:
        link = Path(tmp) / final.name
        link.symlink_to(staged.resolve())
        yield link


def report_reading_options(
    params: dict[str, Any], ctx: click.Context | None = None
) -> dict[str, Any]:
    """How the report reads the original, from a command's parameters (any data kind); with
    ``ctx``, a table as the command read it (:func:`reading_options`)."""
    source = params.get("source")
    if isinstance(source, SetSource):  # a set command: its reading options as one object
        params = {
            **params,
            "fmt": source.fmt,
            "item_sep": source.item_sep,
            "id_column": source.id_column,
            "item_column": source.item_column,
            "dedupe": source.dedupe or None,
        }
    keys = ("fmt", "id_column", "item_column", "items", "adjacency", "n_vertices", "drop_missing")
    options = {key: params[key] for key in keys + ("dedupe",) if params.get(key) is not None}
    if params.get("item_sep"):
        options["item_sep"] = parse_separator(params["item_sep"], "--item-sep")
    if "quotechar" in params and ctx is not None:  # a table command, as it read its input
        options["csv"] = reading_options(
            ctx, params.get("fmt", "auto"), params.get("sep"), params.get("names"),
            params["quotechar"], params.get("sql_table"), params.get("sql_query"),
            params.get("sheet"),
        )  # fmt: skip
    elif "quotechar" in params:  # a table command
        options["csv"] = csv_options(
            params.get("sep"), params.get("names"), params["quotechar"], params.get("fmt", "auto")
        )
        na = params.get("na_values")  # a MissingCodes (tokens and --na codes) once parsed
        options["na_values"] = na if isinstance(na, MissingCodes) else na_tokens(na)
    return options


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def parse_separator(text: str, flag: str = "--sep") -> str:
    """A separator given on the command line, its backslash escapes decoded (``\\t`` → tab,
    ``\\x1f``, ``\\u00a6``, ``\\\\``); any other character stands for itself (``é``, ``|``).

    Raises
    ------
    InputError
        An empty separator, a trailing ``\\``, an unknown or truncated escape (``\\q``,
        ``\\x4``).
    """
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in _HEX_ESCAPES:
            digits = text[i + 2 : i + 2 + _HEX_ESCAPES[code]]
            if len(digits) != _HEX_ESCAPES[code] or not all(
                c in "0123456789abcdefABCDEF" for c in digits
            ):
                raise InputError(f"{flag} {text!r}: \\{code} needs {_HEX_ESCAPES[code]} hex digits")
            value = int(digits, 16)
            if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise InputError(f"{flag} {text!r}: \\{code}{digits} is not a character")
            out.append(chr(value))
            i += 2 + len(digits)
        else:
            shown = "a trailing \\" if not code else f"unknown escape \\{code}"
            raise InputError(f"{flag} {text!r}: {shown} (write \\\\ for a backslash)")
    if not out:
        raise InputError(f"{flag} must not be empty")
    return "".join(out)


def csv_options(
    sep: str | None,
    names: str | None,
    quotechar: str,
    fmt: str = "auto",
    table: str | None = None,
    query: str | None = None,
    sheet: str | None = None,
) -> CsvOptions:
    """The reading options of a table from their flags' text (``--sep`` escapes decoded,
    ``--names`` split); InputError on a bad separator or quote character. O(1)."""
    if sep is not None:
        sep = parse_separator(sep, "--sep")  # allow --sep '\t'
        if fmt == "tsv" and sep != "\t":
            raise InputError("--format tsv reads tab-separated values; use --format csv --sep")
    check_quotechar(quotechar, sep, "--quotechar")
    return CsvOptions(
        sep=sep,
        names=comma_list(names) or None,
        quotechar=quotechar,
        fmt=fmt,
        table=table,
        query=query,
        sheet=sheet,
    )


def stage_bar(stages: int, quiet: bool, desc: str) -> Any:
    """A coarse tqdm bar over a command's stages (stderr; none with -q)."""
    from tqdm import tqdm

    return tqdm(total=stages, desc=desc, unit="stage", disable=quiet, delay=1.0, leave=False)


def na_tokens(value: str | MissingCodes | None) -> tuple[str, ...]:
    """The global missing tokens of ``--na-values`` (a ``MissingCodes`` passes through
    ``missing_codes_option``, which commands receive already)."""
    if isinstance(value, MissingCodes):
        return value.tokens
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


def exit_verdict(passed: bool) -> None:
    """End a check command (``verify*``, ``check-*``): exit 0 when the release passed, else
    :attr:`VerificationError.exit_code` (4) — the code the README documents for a release that
    fails its guarantee. Exit 1 stays reserved for internal errors (a crash)."""
    sys.exit(0 if passed else VerificationError.exit_code)


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


def _pairs(flag: str, items: Sequence[str]) -> dict[str, str]:
    """``col=value`` items of a repeatable option (each item exactly one pair)."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise InputError(f"{flag} expects column=value, got {item!r}")
        if name in out:
            raise InputError(f"{flag} names column {name!r} twice")
        out[name] = value
    return out


def qi_type_options(func: F) -> F:
    """``--ordinal col=a|b|c``, ``--date col=month``, ``--hierarchy col=FILE`` (each
    repeatable) and ``--hierarchy-cells node|set``: typed quasi-identifiers
    (``tables.columns.qitypes``). The command gets them as one ``qi_types`` parameter."""

    return cast(
        F,
        _apply(
            with_step(qi_types, "qi_types")(func),
            [
                click.option(
                    "--ordinal",
                    multiple=True,
                    metavar="COL=A|B|C",
                    help="An ordinal QI and its values, lowest first (repeatable); published "
                    "as ranges over the order (10+..1,000+).",
                ),
                click.option(
                    "--date",
                    multiple=True,
                    metavar="COL=GRANULARITY",
                    help="A date/datetime QI and its granularity (year, quarter, month, week, "
                    "day, hour, minute, second; repeatable); published as date ranges.",
                ),
                click.option(
                    "--hierarchy",
                    multiple=True,
                    metavar="COL=FILE",
                    help="A generalization hierarchy of a categorical QI in ARX's format "
                    "(value;level1;…;*, one line per value; repeatable).",
                ),
                click.option(
                    "--hierarchy-cells",
                    type=click.Choice(["node", "set"]),
                    default="node",
                    show_default=True,
                    help="Publish the lowest hierarchy node covering a cell (~label), or the "
                    "value set.",
                ),
            ],
        ),
    )


def qi_types(
    ordinal: Sequence[str], date: Sequence[str], hierarchy: Sequence[str], hierarchy_cells: str
) -> QITypes:
    """The typed QIs of :func:`qi_type_options` as one ``QITypes``; InputError on an item
    that is not ``column=value`` or a column named twice. O(items + hierarchy files)."""
    from anonymatch.tables.columns.qitypes import build_types

    dates: dict[str, str] = {}
    for item in date:
        dates.update(_pairs("--date", comma_list(item)))
    return build_types(
        _pairs("--ordinal", ordinal), dates, _pairs("--hierarchy", hierarchy), hierarchy_cells
    )


@dataclasses.dataclass(frozen=True)
class TestTable:
    """``--test FILE`` of ``evaluate`` and ``report`` and how to read it: its own
    ``--test-sep``/``--test-names``/``--test-header``/``--test-format``, each defaulting to
    ORIGINAL's; never ORIGINAL's database source (``--table``/``--query``/``--sheet``)."""

    __test__ = False  # not a pytest class

    path: str
    sep: str | None = None
    names: str | None = None
    header: bool = False
    fmt: str | None = None
    skip_rows: int = 0

    def csv(self, original: CsvOptions) -> CsvOptions:
        """TEST's reading options: its own where given, else ORIGINAL's. O(1)."""
        sep = parse_separator(self.sep, "--test-sep") if self.sep is not None else original.sep
        fmt = self.fmt if self.fmt is not None else original.fmt
        if self.fmt is not None and self.sep is None and original.fmt != self.fmt:
            sep = None  # a format of its own: its own separator too
        if fmt == "tsv" and sep not in (None, "\t"):
            raise InputError("--test-format tsv reads tab-separated values; use --test-sep")
        names: Sequence[str] | None = original.names
        if self.header:
            names = None
        elif self.names is not None:
            names = comma_list(self.names) or None
        return CsvOptions(sep, names, original.quotechar, fmt=fmt, skip_rows=self.skip_rows)

    def read(self, original: CsvOptions) -> Any:
        """The test table (a DataFrame), read with :meth:`csv`. O(n·d)."""
        from anonymatch.tables.io import read_table

        return read_table(self.path, self.csv(original))


def test_table_options(func: F) -> F:
    """``--test FILE`` with ``--test-sep``, ``--test-names``, ``--test-header`` and
    ``--test-format``: original rows to test models on, read with their own CSV options (each
    defaulting to ORIGINAL's). The command gets them as one ``test`` parameter, a
    :class:`TestTable` or None."""

    test = "Original rows to test models on (read like ORIGINAL unless --test-* say otherwise)."
    return cast(
        F,
        _apply(
            with_step(test_table, "test")(func),
            [
                click.option("--test", "test_path", default=None, metavar="FILE", help=test),
                click.option(
                    "--test-sep", help="CSV field separator of TEST (default ORIGINAL's)."
                ),
                click.option(
                    "--test-names",
                    help="Column names of TEST, a CSV without header (default ORIGINAL's).",
                ),
                click.option(
                    "--test-header",
                    is_flag=True,
                    help="TEST's first line names its columns (whatever ORIGINAL's --names).",
                ),
                click.option(
                    "--test-format",
                    type=click.Choice(list(TABLE_FORMATS)),
                    help="Format of TEST (default ORIGINAL's).",
                ),
                click.option(
                    "--test-skip-rows",
                    type=click.IntRange(min=0),
                    default=0,
                    help="Lines at the top of TEST that are not part of the table (adult.test: 1).",
                ),
            ],
        ),
    )


def test_table(
    test_path: str | None,
    test_sep: str | None,
    test_names: str | None,
    test_header: bool,
    test_format: str | None,
    test_skip_rows: int = 0,
) -> TestTable | None:
    """``--test`` and its reading options (:func:`test_table_options`) as one
    :class:`TestTable`, None without ``--test``; InputError when they do not fit. O(1)."""
    given = test_sep is not None or test_names is not None or test_header or test_format
    if test_path is None and (given or test_skip_rows):
        raise InputError("the --test-* options need --test")
    if test_header and test_names is not None:
        raise InputError("give one of --test-header and --test-names")
    if test_path is None:
        return None
    return TestTable(test_path, test_sep, test_names, test_header, test_format, test_skip_rows)


# ------------------------------------------------------------ population (risk, issue 28)


@dataclass(frozen=True)
class PopulationFlags:
    """What ``risk`` measures against: its ``--threshold`` (as given), ``--population`` (a
    table file), ``--sampling-fraction`` and ``--weights`` (a column of the original);
    :attr:`given` when any population flag is."""

    threshold: float = 0.2
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
    """Decorator: ``--threshold`` (the command's own option) and the three population flags,
    passed to the command as one :class:`PopulationFlags` named ``population``."""

    options = (
        click.option(
            "--population",
            "population_path",
            default=None,
            help="A table of the population the original was sampled from (its QI columns): "
            "k-map, journalist and marketer risk, population uniques, delta-presence.",
        ),
        click.option(
            "--sampling-fraction",
            type=float,
            default=None,
            help="Share of the population in the original, in (0, 1]: population uniqueness "
            "estimated from the sample (Pitman, Zayatz, SNB, Dankar) and individual risk.",
        ),
        click.option(
            "--weights",
            "weights_column",
            default=None,
            help="A column of the original holding survey weights (each > 0), instead of "
            "--sampling-fraction.",
        ),
    )
    func = with_step(population_flags, "population")(func)
    for option in reversed(options):
        func = option(func)
    return func


def population_flags(
    threshold: float,
    population_path: str | None,
    sampling_fraction: float | None,
    weights_column: str | None,
) -> PopulationFlags:
    """The value of :func:`population_options`: the command's ``--threshold`` and the three
    population flags, as given (checked where they are read)."""
    return PopulationFlags(threshold, population_path, sampling_fraction, weights_column)


class _Parsed(click.ParamType):
    """The click type of a criterion's parameter read by its own :meth:`Parameter.parse`
    (``--l 3`` or ``--l occupation=4,disease=2``); a value already typed (a job file's or a
    manifest's default) passes as it is."""

    def __init__(self, parameter: Parameter) -> None:
        self.parameter = parameter
        self.name = parameter.kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return self.parameter.parse(value) if isinstance(value, str) else value


def _click_type(p: Parameter) -> Any:
    """The click type of a criterion's parameter, from its declaration."""
    if p.per_column:
        return _Parsed(p)
    if p.kind == "choice":
        return click.Choice(p.choices)
    return {"integer": int, "column": str, "table": str}.get(p.kind, float)


def criteria_options(registry: Registry) -> Callable[[F], F]:
    """Decorator: one option per parameter of a kind's criteria (``core.criteria``), derived
    from the registry — flag, value type, choices, default, placeholder and help — and passed
    to the command under the parameter's own name (``--delta-max`` → ``delta_max``; as one
    mapping with :func:`criteria_group` below). The values are checked where the criteria
    are built (``Registry.build``), not here."""

    def decorate(func: F) -> F:
        for p in reversed(registry.parameters()):
            typed = (
                {"is_flag": True}
                if p.kind == "flag"
                else {
                    "type": _click_type(p),
                    "metavar": p.metavar,
                    "show_default": p.default is not None,
                }
            )  # a flag (``--strict``) takes no value
            func = click.option(*([p.short] if p.short else []), p.flag, p.name,
                                default=p.default, help=p.help, **typed)(func)  # fmt: skip
        return func

    return decorate


def criteria_group(registry: Registry) -> Callable[[F], F]:
    """Decorator (below :func:`criteria_options`) that passes the criteria's options to the
    command as one mapping by parameter name (parameter ``criteria``), as
    :func:`execution_group` does the executor options."""
    return with_step(dict, "criteria", takes=[p.name for p in registry.parameters()])


def input_block(path: str, csv: CsvOptions) -> dict[str, Any]:
    """How a manifest names an input: a file's path and SHA-256, or a database URL without its
    password and the table or query read (no digest: the data lives on the server)."""
    from anonymatch.core.manifest import file_digest
    from anonymatch.tables.io.sql import is_database_url, redact_url

    if not is_database_url(path):
        return {"path": path, "sha256": file_digest(path)}
    source = {"table": csv.table} if csv.table is not None else {"query": csv.query}
    return {"path": redact_url(path), "sha256": None, **source}


def share_text(count: int, total: int) -> str:
    """``count (percent of total)``, as the risk commands print a share."""
    return f"{count} ({100 * count / total:.2f}%)"


def histogram_text(histogram: dict[int, int], head: int = 5) -> str:
    """``value: records`` pairs: the ``head`` smallest values one by one, the rest in bins
    cut at 1-2-5 steps (…, 20-49, 50-99, 100-199, …)."""
    items = sorted(histogram.items())
    parts = [f"{v}: {c}" for v, c in items[:head]]
    rest = items[head:]
    if rest:
        top = rest[-1][0]
        edges, scale = [rest[0][0]], 1
        while edges[-1] <= top:
            edges += [x for x in (scale, 2 * scale, 5 * scale) if x > edges[-1]]
            scale *= 10
        for lo, hi in zip(edges, edges[1:], strict=False):
            count = sum(c for v, c in rest if lo <= v < hi)
            if count:
                parts.append(f"{lo if hi - lo == 1 else f'{lo}-{hi - 1}'}: {count}")
    return ", ".join(parts)


def warn_honestly(report: dict[str, Any]) -> None:
    """Warn on stderr about kept columns that leak QIs and about a release that keeps little
    (``app.honest``; even with --quiet: they are about what was published), for every kind
    (``anonymize``, ``anonymize-kl``, ``anonymize-rt``)."""
    from anonymatch.app.honest import warnings_of

    for line in warnings_of(report):
        click.echo(f"anonymatch: warning: {line}", err=True)
