"""`hinter dictionary ...`: commands about word-pair dictionaries (a Typer sub-app; each subcommand registers on
`dictionary_app`)."""
from __future__ import annotations

import typer

from .app import app

dictionary_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                             help="Check, build and inspect word-pair dictionaries.")
app.add_typer(dictionary_app, name="dictionary")
