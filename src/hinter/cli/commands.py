"""Imports every command module, each registering its command on the app."""
from hinter.cli import audit, augment, check, compare, demo, dictionary, diff, report, resume, run, serve, study, suite  # noqa: F401
