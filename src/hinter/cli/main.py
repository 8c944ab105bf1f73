"""`hinter`'s entry point: registers every command on the app, then runs it, with errors as one paragraph and an
exit code (never a traceback), hinter's warnings as console lines, and Ctrl-C or SIGTERM as a clean stop."""
from __future__ import annotations

import logging
import os
import signal
import sqlite3
import sys

import typer

from hinter.errors import HinterError
from hinter.files import storage_error
from hinter.models import startup
from hinter.cli import commands  # noqa: F401  (each command module registers its command on `app`)
from hinter.cli.app import RUN_FOLDER, app, console, interrupted_message


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM. Not KeyboardInterrupt: Typer turns that into a silent exit 130 before we could say
    how to continue; a BaseException, so no `except Exception` on the way swallows it."""


def _interrupt(signum, frame) -> None:
    # a SIGTERM after it must not break the clean stop (it takes a second or two: what was answered is stored); a
    # second Ctrl-C is the user's "now": it ends the process at once (the run's database is transactional: the
    # batches committed stay, the one being written is not)
    signal.signal(signal.SIGINT, _stop_now)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Interrupted(signal.Signals(signum).name)


def _stop_now(signum, frame) -> None:
    try:
        sys.stderr.write("\nStopped at once (a second Ctrl-C). " + interrupted_message() + "\n")
        sys.stderr.flush()
    finally:
        os._exit(130)


class _ConsoleWarnings(logging.Handler):
    """hinter's own warnings (a model found not deterministic...) as one yellow line each."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("hinter.models"):  # backend retries: the progress line shows the latest
            return
        console.print(f"[yellow]warning:[/] {record.getMessage()}", highlight=False, soft_wrap=True)


ERROR = "[red]error:[/]"  # how every error begins, ours and the option parser's alike


def print_usage_error(e) -> None:
    """A bad option or value as click shows it (usage, where to find help), beginning like hinter's own errors."""
    ctx = getattr(e, "ctx", None)
    if ctx is not None and hasattr(e, "cmd"):  # a usage error (click's UsageError and Typer's copy of it)
        console.print(ctx.get_usage(), highlight=False, markup=False, soft_wrap=True)
        if ctx.command.get_help_option(ctx) is not None:
            console.print(f"Try '{ctx.command_path} {ctx.help_option_names[0]}' for help.\n", highlight=False,
                          markup=False, soft_wrap=True)
    console.print(f"{ERROR} ", end="")
    console.print(e.format_message(), highlight=False, markup=False, soft_wrap=True)


def main() -> None:
    engine_log = logging.getLogger("hinter")
    if not any(isinstance(h, _ConsoleWarnings) for h in engine_log.handlers):
        engine_log.addHandler(_ConsoleWarnings(logging.WARNING))
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    debug = "--debug" in sys.argv
    startup.keep_bytecode()  # before any command imports torch
    if debug:
        sys.argv.remove("--debug")
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:  # typer.Exit(n) is returned, not raised, outside standalone mode
            sys.exit(code)
    except HinterError as e:
        if debug:
            raise
        console.print(f"{ERROR} ", end="")
        console.print(e.message, highlight=False, markup=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt, Interrupted):
        console.print(interrupted_message(), highlight=False, markup=False, soft_wrap=True)
        sys.exit(130)
    except (sqlite3.Error, OSError) as e:
        # the disk or a database refused where no command named its folder: one paragraph all the same
        error = storage_error(e, RUN_FOLDER[0] if RUN_FOLDER else None)
        if debug or error is None:
            raise
        console.print(f"{ERROR} ", end="")
        console.print(error.message, highlight=False, markup=False, soft_wrap=True)
        sys.exit(error.exit_code)
    except Exception as e:
        # Usage errors (a bad option value, an unknown option). Typer vendors its own copy of click, so
        # match both its classes and click's.
        import click
        from typer._click import exceptions as typer_click
        if isinstance(e, (click.exceptions.ClickException, typer_click.ClickException)):
            print_usage_error(e)
            sys.exit(e.exit_code)
        raise
