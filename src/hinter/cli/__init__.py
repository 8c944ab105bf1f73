"""The command line, one module per command: `run`, `demo`, `resume`, `report`, `check`, `diff`.

`campaign.py` runs a campaign from a RunConfig (shared by run, demo and resume); `gate.py` holds the CI gate
(--fail-on, --junit) that run, report and check share; `options.py` the options several commands take.
"""
from hinter.cli.app import app
from hinter.cli.main import main

__all__ = ["app", "main"]
