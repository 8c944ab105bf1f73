"""Options that several commands take: where the work runs (run, resume), how a run is judged (run, report,
check: the model-failure thresholds, the findings' alpha and label of interest), and the run's settings, generated
from RunConfig's fields (`config_options`: run, suite build, demo)."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from typing import Any, Optional

import typer

from hinter.config import STAGES, Execution, RunConfig, option_fields

MAX_FAILED_SHARE_OPT = typer.Option(0.05, "--max-failed-share", help="The model counts as failed (exit 3, and "
                                    "check/--fail-on refuse the run) when more than this share of its calls got a "
                                    "model error or an unparseable answer.")
MAX_FAILED_ORIGINALS_OPT = typer.Option(0, "--max-failed-originals", help="... or when more than this many "
                                        "originals got no usable answer (their mutants cannot be tested).")
ALPHA_OPT = typer.Option(None, "--alpha", help="False discovery rate of the findings (Benjamini-Hochberg over all "
                         "cells of the run): a finding is significant when its q-value is at most this. Default: "
                         "the run's (0.05).")
LABEL_OPT = typer.Option(None, "--label", help="The label of interest of the findings: an effect is the change of "
                         "its share (or of its score). Default: the task's first label (imdb: Positive).")
ALLOW_ERRORS_OPT = typer.Option(False, "--allow-model-errors", help="Gate a run whose model failed anyway "
                                "(its errors are never counted as bias or as no bias).")


# ---------------------------------------------------------------- the options of a run, from RunConfig's fields

def _cli_type(f: dataclasses.Field, hints: dict) -> Any:
    """The type Typer parses a field's option as: a tuple is given comma-separated (RunConfig splits it), an
    inverted flag is a plain flag."""
    t = hints[f.name]
    if f.metadata["invert"] or t is bool:
        return bool
    optional = type(None) in typing.get_args(t)
    base = next((a for a in typing.get_args(t) if a is not type(None)), t) if optional else t
    if typing.get_origin(base) is tuple:
        return Optional[str]
    return Optional[base] if optional else base


def _cli_default(f: dataclasses.Field, given: Any = dataclasses.MISSING) -> Any:
    value = f.default if given is dataclasses.MISSING else given
    if f.metadata["invert"]:
        return False
    if isinstance(value, tuple):
        return ",".join(value) or None
    return value


def config_options(*stages: str, defaults: dict | None = None, helps: dict | None = None,
                   required: tuple[str, ...] = (), only: tuple[str, ...] | None = None):
    """Decorate a command with the options of RunConfig's fields of `stages` (all when none given), each built
    from its field: flag, short flag, help, default and type. The command receives them as `options`, a dict by
    field name ready for `RunConfig(**options)` (an inverted flag already turned into its field's value).
    `defaults`: this command's defaults (run: --model gguf:default); `helps`: a help replacing the field's, or,
    beginning with "+", added to it; `required`: fields this command needs; `only`: these fields alone."""
    fields = [f for f in option_fields() if (not stages or f.metadata["stage"] in stages)
              and (only is None or f.name in only)]
    # pipeline order; within a stage the options with a short flag (the main ones) first
    fields.sort(key=lambda f: (STAGES.index(f.metadata["stage"]), f.metadata["short"] is None))
    return _field_options(fields, RunConfig, "options", dict, defaults, helps, required)


def execution_options(only: tuple[str, ...] | None = None):
    """Decorate a command with the options of Execution's fields (where the work runs; `only`: these alone). The
    command receives `execution`, an Execution (validated once: --workers at least 1...)."""
    fields = [f for f in dataclasses.fields(Execution) if only is None or f.name in only]
    return _field_options(fields, Execution, "execution", lambda values: Execution(**values))


def dataclass_options(owner: type, receive: str):
    """Decorate a command with the options of every field of the dataclass `owner` (their `option()` metadata); the
    command receives `receive`, an `owner` built from their values (hinter audit's --decisions options)."""
    return _field_options(list(dataclasses.fields(owner)), owner, receive, lambda values: owner(**values))


def _field_options(fields: list[dataclasses.Field], owner: type, receive: str, collect, defaults: dict | None = None,
                   helps: dict | None = None, required: tuple[str, ...] = ()):
    """The decorator behind config_options and execution_options: one Typer option per dataclass field of `owner`
    (its `option()` metadata), the values passed to the command as `receive`=collect({field name: value})."""
    defaults, helps = defaults or {}, helps or {}
    hints = typing.get_type_hints(owner)

    def option_of(f: dataclasses.Field) -> Any:
        text = helps.get(f.name, f.metadata["help"])
        if text.startswith("+"):
            text = f.metadata["help"] + text[1:]
        names = [f.metadata["flag"], *([f.metadata["short"]] if f.metadata["short"] else [])]
        default = ... if f.name in required else _cli_default(f, defaults.get(f.name, dataclasses.MISSING))
        return typer.Option(default, *names, help=text)

    def decorate(command):
        signature = inspect.signature(command)
        if receive not in signature.parameters:
            raise TypeError(f"{command.__name__} must take `{receive}`, the {owner.__name__} fields' values")
        own_hints = typing.get_type_hints(command)
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=own_hints.get(p.name, p.annotation))
               for name, p in signature.parameters.items() if name != receive]
        generated = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=option_of(f),
                                       annotation=_cli_type(f, hints)) for f in fields]
        clash = {p.name for p in own} & {p.name for p in generated}
        if clash:
            raise TypeError(f"{command.__name__} declares {sorted(clash)}, options of {owner.__name__}'s fields")
        arguments = [p for p in own if isinstance(p.default, typer.models.ArgumentInfo)]
        rest = [p for p in own if p not in arguments]

        @functools.wraps(command)
        def wrapper(**kwargs):
            values = {}
            for f in fields:
                value = kwargs.pop(f.name)
                if f.metadata["invert"]:
                    value = not value
                elif value is None and isinstance(f.default, tuple):
                    value = f.default
                values[f.name] = value
            return command(**kwargs, **{receive: collect(values)})

        del wrapper.__wrapped__  # Typer reads the signature below, not the command's
        wrapper.__signature__ = signature.replace(parameters=[*arguments, *generated, *rest])
        wrapper.__annotations__ = {}
        return wrapper

    return decorate
RAW_CSV_OPT = typer.Option(False, "--raw-csv", help="Write CSV cells as they are. By default a cell that begins with "
                           "=, +, -, @, a tab or a carriage return, and is not a number, gets a leading ' so that a "
                           "spreadsheet shows it as text and never runs it as a formula (CSV injection).")


def audit_summary_options():
    """Decorate `hinter audit` with the published summary's options, declared by AuditSummary's fields as
    RunConfig's are (flag, help, stage): the command receives `summary`, an AuditSummary (validated once)."""
    from hinter.audit.summary import AuditSummary
    return _field_options(list(dataclasses.fields(AuditSummary)), AuditSummary, "summary",
                          lambda values: AuditSummary(**values))
