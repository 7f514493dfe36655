"""Command-line interface: a thin layer over the API, one module per data kind plus shared
options.

Every error the library raises on purpose becomes one line on stderr and a documented exit code;
nothing is written in that case: every output of a run (release, report, seed file) is staged and
committed together when the command succeeds (``core.files.all_or_nothing``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from anonymatch import __version__
from anonymatch.core.errors import AnonymatchError
from anonymatch.core.files import all_or_nothing


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonymatch")
def cli() -> None:
    """Publish tables, set-valued data, sparse matrices and graphs under k-anonymity-type
    guarantees, verified on every release."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI and turn errors into one line and an exit code."""
    try:
        with all_or_nothing():  # every output of the run is committed together, or none
            cli.main(
                args=list(argv) if argv is not None else None,
                prog_name="anonymatch",
                standalone_mode=False,
            )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"anonymatch: error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.Abort:
        click.echo("anonymatch: interrupted; nothing written", err=True)
        return 130
    except AnonymatchError as exc:
        click.echo(f"anonymatch: error: {exc}", err=True)
        return exc.exit_code
    except SystemExit as exc:
        return int(exc.code or 0)
    except KeyboardInterrupt:
        click.echo("anonymatch: interrupted; nothing written", err=True)
        return 130
    except Exception as exc:  # a bug: still one line, with a way to get the traceback
        if os.environ.get("ANONYMATCH_DEBUG"):
            raise
        click.echo(
            f"anonymatch: internal error: {type(exc).__name__}: {exc}"
            " (set ANONYMATCH_DEBUG=1 for a traceback)",
            err=True,
        )
        return 1
    return 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


from anonymatch.cli import config, graphs, report, sets, sparse, synth, tables  # noqa: E402

for _module in (tables, sets, sparse, graphs, synth, config, report):
    for _command in _module.COMMANDS:
        cli.add_command(_command)
# every command reading data takes --config job.toml (flags given on the command line win)
for _module, _kind in ((tables, "table"), (sets, "transactions"), (sparse, "sparse"),
                       (graphs, "graph")):  # fmt: skip
    for _command in _module.COMMANDS:
        config.add_config_option(_command, _kind)
