"""Command-line interface: a thin layer over the API, one module per data kind plus shared
options.

Every error the library raises on purpose becomes one line on stderr and a documented exit code;
nothing is written in that case: every output of a run (release, report, seed file) is staged and
committed together when the command succeeds (``core.files.all_or_nothing``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import threading
from collections.abc import Sequence

import click

from anonymatch import __version__
from anonymatch.cli import signals
from anonymatch.core import lifecycle
from anonymatch.core.errors import AnonymatchError
from anonymatch.core.files import all_or_nothing

_imported = signals.guard_startup()  # a signal while the CLI is imported: exit at once

_exit_code: int | None = None
"""The exit code of the finished command, once ``entry`` has it (None: not the console
script, or not finished)."""


def _skip_teardown() -> None:
    """The last exit handler of the console script (registered first, before any library
    registers one, so it runs after all of them): stdout and stderr are flushed, then the
    process ends with ``os._exit``.

    By then the interpreter has joined the non-daemon threads and run every other exit handler
    (thread and process pools, logging, temporary-file finalizers). What it would still do is
    collect and free every object one by one and tear the modules down (numba's LLVM objects,
    pandas, the data): 0.1–0.3 s after an Adult run, which a finished process does not need.
    Every output is already committed (``core.files.all_or_nothing``) and closed. Outside the
    console script (``main`` in tests, ``import anonymatch``) it does nothing. The same
    technique as Instagram's (``atexit.register(os._exit, 0)``, "Dismissing Python Garbage
    Collection at Instagram", 2017)."""
    if _exit_code is None:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(_exit_code)


atexit.register(_skip_teardown)

# Command name → the module defining it. The modules import numpy, pandas, scipy and numba
# (≈ 1–2 s), so they load only when one of their commands runs (or for --help):
# ``anonymatch --version`` stays fast. tests/cli/test_lazy.py checks this table against the
# modules' COMMANDS.
LAZY_COMMANDS = {
    **dict.fromkeys(
        ("anonymize", "verify", "evaluate", "anonymize-kl", "check-kl", "risk"),
        "tables",
    ),
    **dict.fromkeys(
        ("anonymize-sets", "verify-sets", "evaluate-sets", "anonymize-km", "check-km"), "sets"
    ),
    **dict.fromkeys(("anonymize-sparse", "verify-sparse", "evaluate-sparse"), "sparse"),
    **dict.fromkeys(("check-graph", "anonymize-graph"), "graphs"),
    **dict.fromkeys(("anonymize-rt", "verify-rt", "evaluate-rt", "risk-rt"), "relational"),
    "generate-census": "synth",
    "warmup": "warmup",
    "attack": "attack",
    "verify-series": "series",
    "draw": "draw",
    "init": "config",
    **dict.fromkeys(("report", "ui"), "report"),
}
# the data kind of each module whose commands read data: they all take --config job.toml
CONFIG_KINDS = {
    "tables": "table",
    "attack": "table",
    "sets": "transactions",
    "sparse": "sparse",
    "graphs": "graph",
    "relational": "relational",
    "draw": "table",  # draw --config JOB: the job's release (output.path) and manifest
}


class _LazyGroup(click.Group):
    """A group whose commands are imported on first use (see ``LAZY_COMMANDS``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            load_commands(LAZY_COMMANDS[cmd_name])
        return super().get_command(ctx, cmd_name)


def load_commands(module: str) -> None:
    """Import ``anonymatch.cli.<module>`` and register its commands; those reading data get
    ``--config job.toml`` (flags given on the command line win)."""
    import gc
    import importlib

    kind = CONFIG_KINDS.get(module)
    # Importing pandas, scipy and numba allocates hundreds of thousands of long-lived objects;
    # the cyclic collector would walk them again and again (about 0.2 s of CPU per run). They
    # are never garbage: collect nothing during the import, then move them out of its reach.
    enabled = gc.isenabled()
    gc.disable()
    try:
        loaded = importlib.import_module(f"anonymatch.cli.{module}")
    finally:
        if enabled:
            gc.enable()
    gc.freeze()
    for command in loaded.COMMANDS:
        if command.name not in cli.commands:
            if kind is not None:
                from anonymatch.cli.config import add_config_option

                add_config_option(command, kind)
            cli.add_command(command)


def import_quietly(*modules: str) -> None:
    """Import ``modules`` and set up numba's compiler tables with the cyclic garbage collector
    off, then freeze what they allocated (as ``load_commands`` does for the command modules).

    A command calls it once it knows it will run the pipeline (not for ``--help`` or a bad
    option). numba fills its typing and lowering registries on the first call of any kernel
    (about 0.2 s, hundreds of thousands of long-lived objects); inside the run, with the
    collector on, that took a third longer. ``refresh`` is idempotent: the first kernel call
    then finds the tables ready."""
    import gc
    import importlib

    enabled = gc.isenabled()
    gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
        from numba.core.registry import cpu_target

        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()
    finally:
        if enabled:
            gc.enable()
    gc.freeze()


def load_all_commands() -> click.Group:
    """Register every command now (for tools and tests that walk ``cli.commands``)."""
    for module in sorted(set(LAZY_COMMANDS.values())):
        load_commands(module)
    return cli


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonymatch")
def cli() -> None:
    """Publish tables, set-valued data, sparse matrices and graphs under k-anonymity-type
    guarantees, verified on every release."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and turn errors into one line and an exit code.

    The command runs in a worker thread while the main thread waits (``cli.signals``), so
    that SIGINT and SIGTERM are handled at once: the run is cancelled (pools killed, temporary
    files and anything already committed removed), one line is printed and the process exits
    130 (SIGINT) or 143 (SIGTERM)."""
    if _command_name(argv) in OWN_SIGNALS:  # runs in this thread and handles signals itself
        code, message = _run(argv)
        if message is not None:
            click.echo(one_line(message), err=True)
        return code
    lifecycle.reset(active=True)
    with signals.handling_signals():
        try:
            code, message = signals.run_interruptibly(_run, argv)
        except lifecycle.Interrupted as exc:
            click.echo(f"anonymatch: {signals.INTERRUPTED_MESSAGE}", err=True)
            if threading.current_thread() is threading.main_thread():
                signals.exit_now(exc.exit_code)  # a kernel may still run in the worker
            return exc.exit_code  # pragma: no cover - only reached off the main thread
        finally:
            lifecycle.reset()
    if message is not None:
        click.echo(one_line(message), err=True)
    return code


OWN_SIGNALS = {"ui"}
"""Commands that handle SIGINT/SIGTERM themselves and need the main thread for it (the web
server stops cleanly on them, ``anonymatch.ui.serve``)."""


def _command_name(argv: Sequence[str] | None) -> str | None:
    """The command named in ``argv`` (the first argument that is not an option)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return next((a for a in args if not a.startswith("-")), None)


_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@'\"]*:)\S*@")


def one_line(message: str) -> str:
    """The message on one line: line breaks and other control characters (a hostile column
    name, a cell quoted in an error) are shown escaped, never printed; and the password of
    any ``scheme://user:password@`` in it hidden (up to the last ``@`` of the word: the
    messages already show URLs redacted, this is the net under them)."""
    message = _CREDENTIALS.sub(r"\1***@", message)
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in message
    )


def _run(argv: Sequence[str] | None) -> tuple[int, str | None]:
    """Run the command; returns the exit code and the one line to print (None: nothing)."""
    try:
        with all_or_nothing():  # every output of the run is committed together, or none
            cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="anonymatch",
                standalone_mode=False,
            )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code), None
    except click.ClickException as exc:
        return exc.exit_code, f"anonymatch: error: {exc.format_message()}"
    except click.Abort:
        return 130, f"anonymatch: {signals.INTERRUPTED_MESSAGE}"
    except AnonymatchError as exc:
        from anonymatch.cli.options import in_cli_words

        return exc.exit_code, f"anonymatch: error: {in_cli_words(str(exc))}"
    except SystemExit as exc:
        return int(exc.code or 0), None
    except lifecycle.Interrupted as exc:
        return exc.exit_code, f"anonymatch: {signals.INTERRUPTED_MESSAGE}"
    except KeyboardInterrupt:
        return 130, f"anonymatch: {signals.INTERRUPTED_MESSAGE}"
    except Exception as exc:  # a bug: still one line, with a way to get the traceback
        if os.environ.get("ANONYMATCH_DEBUG"):
            raise
        return 1, (
            f"anonymatch: internal error: {type(exc).__name__}: {exc}"
            " (set ANONYMATCH_DEBUG=1 for a traceback)"
        )
    return 0, None


def _cap_malloc_arenas() -> None:
    """At most one glibc malloc arena per core (glibc's default: 8 per core), and every block
    of 4 MiB or more mapped on its own (``M_MMAP_THRESHOLD``), so that it goes back to the
    system when freed. Each pool thread of a run (the build, the compatibility slices, the
    walks) may otherwise take an arena of its own, each keeping the pages its freed arrays
    held: on Adult at k = 100 the process's peak RSS fell from 780 to about 660 MiB with 2
    arenas on 2 cores, and from about 645 to about 600 MB more with the threshold, in no more
    time (the rounds keep one weight matrix per partition, not one per round; issue 38).
    Setting that threshold also freezes glibc's trim threshold at 128 KiB, so the heap was
    given back and faulted in again around every temporary of a round (SortGreedy's batches:
    1.7–2.2 s of system time at k = 50–100 on Adult); it is 32 MiB (``M_TRIM_THRESHOLD``):
    sortgreedy 5.0 → 4.0 s and 8.1 → 6.8 s, hungarian 3–5 % less, peak 0–20 MiB more.
    Allocation only: nothing computed changes. ``MALLOC_ARENA_MAX``,
    ``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` set by the user wins; elsewhere
    than glibc Linux this does nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    if "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(-8, max(2, os.cpu_count() or 1))  # M_ARENA_MAX
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(-3, 4 * 2**20)  # M_MMAP_THRESHOLD
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        mallopt(-1, 32 * 2**20)  # M_TRIM_THRESHOLD


def entry() -> None:
    """Console-script entry point. Once the command has returned, its outcome stands: a signal
    during the interpreter's shutdown (which can take a moment) no longer changes the exit
    code of a run whose release is already written."""
    global _exit_code
    _cap_malloc_arenas()
    code = main()
    signals.ignore_signals()
    _exit_code = code  # the interpreter's teardown is skipped (``_skip_teardown``)
    sys.exit(code)


_imported()  # the command modules themselves load lazily, inside the guarded run
