"""The Typer application and its consoles, which every command module imports (main.py registers the commands
and runs the app)."""
from __future__ import annotations

import sys

import typer
from rich.console import Console

app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None,
    help="hinter finds intersectional bias in language models.\n\n"
         "It mutates real texts with word pairs of a bias dictionary (one attribute at a time, and several at "
         "once), keeps the mutants whose grammar matches the original (the dependency invariant), and reports "
         "every mutant whose model outcome differs from the original's. An intersectional bias whose atomic "
         "parts do not change the outcome is hidden: atomic testing alone never finds it.\n\n"
         "Start with `hinter demo`, then `hinter run --help`. Add --debug to any command to see a traceback.")
console = Console(stderr=True)
# Wide enough for the summary table when the output is a file or a pipe.
out_console = Console(width=None if sys.stdout.isatty() else 110)


def _print_version(value: bool) -> None:
    if value:
        from hinter.version import __version__
        typer.echo(f"hinter {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="Print hinter's version and exit.")) -> None:
    pass


# The folder of the run under way (set by the campaign): the interrupt message names it.
RUN_FOLDER: list = []


def running_in(folder) -> None:
    """Record the folder of the run under way, for the message of an interrupt."""
    RUN_FOLDER[:] = [folder]


def interrupted_message() -> str:
    """What an interrupt says: with a run under way, how to continue it (its real folder); else only that."""
    if not RUN_FOLDER:
        return "Interrupted."
    return (f"Interrupted. Every finished batch is saved in the run folder: run the same command again, or `hinter "
            f"resume {RUN_FOLDER[0]}`, to continue where it stopped.")
