"""Command-line interface: a thin layer over the API, one module per data kind plus shared
options.

Every error the library raises on purpose becomes one line on stderr and a documented exit code;
nothing is written in that case: every output of a run (release, report, seed file) is staged and
committed together when the command succeeds (``core.files.all_or_nothing``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence

import click

from anonymatch import __version__
from anonymatch.core import lifecycle
from anonymatch.core.errors import AnonymatchError
from anonymatch.core.files import all_or_nothing

_imported = lifecycle.guard_startup()  # a signal while the commands are imported: exit at once


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonymatch")
def cli() -> None:
    """Publish tables, set-valued data, sparse matrices and graphs under k-anonymity-type
    guarantees, verified on every release."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and turn errors into one line and an exit code.

    The command runs in a worker thread while the main thread waits (``core.lifecycle``), so
    that SIGINT and SIGTERM are handled at once: the run is cancelled (pools killed, temporary
    files and anything already committed removed), one line is printed and the process exits
    130 (SIGINT) or 143 (SIGTERM)."""
    if _command_name(argv) in OWN_SIGNALS:  # runs in this thread and handles signals itself
        code, message = _run(argv)
        if message is not None:
            click.echo(one_line(message), err=True)
        return code
    lifecycle.reset(active=True)
    with lifecycle.handling_signals():
        try:
            code, message = lifecycle.run_interruptibly(_run, argv)
        except lifecycle.Interrupted as exc:
            click.echo(f"anonymatch: {lifecycle.INTERRUPTED_MESSAGE}", err=True)
            if threading.current_thread() is threading.main_thread():
                lifecycle.exit_now(exc.exit_code)  # a kernel may still run in the worker
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


def one_line(message: str) -> str:
    """The message on one line: line breaks and other control characters (a hostile column
    name, a cell quoted in an error) are shown escaped, never printed."""
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
        return 130, f"anonymatch: {lifecycle.INTERRUPTED_MESSAGE}"
    except AnonymatchError as exc:
        return exc.exit_code, f"anonymatch: error: {exc}"
    except SystemExit as exc:
        return int(exc.code or 0), None
    except lifecycle.Interrupted as exc:
        return exc.exit_code, f"anonymatch: {lifecycle.INTERRUPTED_MESSAGE}"
    except KeyboardInterrupt:
        return 130, f"anonymatch: {lifecycle.INTERRUPTED_MESSAGE}"
    except Exception as exc:  # a bug: still one line, with a way to get the traceback
        if os.environ.get("ANONYMATCH_DEBUG"):
            raise
        return 1, (
            f"anonymatch: internal error: {type(exc).__name__}: {exc}"
            " (set ANONYMATCH_DEBUG=1 for a traceback)"
        )
    return 0, None


def entry() -> None:
    """Console-script entry point. Once the command has returned, its outcome stands: a signal
    during the interpreter's shutdown (which can take a moment) no longer changes the exit
    code of a run whose release is already written."""
    code = main()
    lifecycle.ignore_signals()
    sys.exit(code)


from anonymatch.cli import config, graphs, report, sets, sparse, synth, tables  # noqa: E402

for _module in (tables, sets, sparse, graphs, synth, config, report):
    for _command in _module.COMMANDS:
        cli.add_command(_command)
# every command reading data takes --config job.toml (flags given on the command line win)
for _module, _kind in ((tables, "table"), (sets, "transactions"), (sparse, "sparse"),
                       (graphs, "graph")):  # fmt: skip
    for _command in _module.COMMANDS:
        config.add_config_option(_command, _kind)
_imported()
