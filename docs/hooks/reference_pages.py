"""MkDocs hook: the reference pages generated from the code at build time, so that they cannot drift from it.

- `options.md`: every option that is a field of `hinter.config.RunConfig` (its metadata: flag, short flag, help,
  stage; the field's default), grouped by stage.
- `summary-schema.md`: the summary.json reference from `hinter.analysis.summary_spec.reference_markdown()`.
- `commands.md`: every command of the command line, its help and its options as the CLI declares them (Typer).
- `index.md`: the repository's README.md, its links into docs/ made relative to the site, so that the front page
  on GitHub and the site's home are one text.

The build needs hinter importable (`python -m mkdocs build` from hinter's virtualenv: `make test` does it).
"""
from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

from mkdocs.structure.files import File

try:
    import hinter  # noqa: F401
except ImportError as e:  # a clear message instead of a hook traceback
    raise SystemExit(f"The docs hook needs hinter importable: run `.venv/bin/python -m mkdocs build` ({e})")
import typer.main

from hinter.cli import app
from hinter.cli import commands as _registers_commands  # noqa: F401  (each command registers itself on app)
from hinter.config import option_fields

log = logging.getLogger("mkdocs.hooks.reference_pages")

# What each stage means, in pipeline order; a stage not named here is still listed (by its name), after these.
STAGES = {
    "dataset": ("Dataset", "Where the texts come from (when hinter reads them: the command line; the Python API may "
                           "pass texts instead)."),
    "mutation": ("Mutation", "Which word pairs are used and how the mutants are made."),
    "validity": ("Validity", "How the dependency invariant checks the mutants."),
    "model": ("Model", "The model under test and how it is asked (`hinter run --suite` takes these)."),
    "audit summary": ("Audit summary (hinter audit)", "What a published bias-audit summary carries that only the user "
                      "can say (NYC LL144, 6 RCNY 5-303): fields of `hinter.audit.summary.AuditSummary`, stored in "
                      "audit.json, audit.csv and audit.html ([the audit](audit.md))."),
}
# the dataclass that declares each stage's options, where it is not RunConfig
OWNERS = {"audit summary": "AuditSummary"}


def _default(f: dataclasses.Field) -> str:
    if f.default is dataclasses.MISSING:
        return "required"
    value = f.default
    if f.metadata.get("invert"):  # --no-jobs sets the field to False: the flag is off by default
        return "off" if value else "on"
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        return ",".join(map(str, value)) if value else "none"
    return str(value)


def _recorded(f: dataclasses.Field) -> str:
    if f.metadata["stage"] in OWNERS:
        return ("in the audit's published summary (audit.json, audit.csv, audit.html); not a setting of the model's "
                "answers, which are kept when it changes")
    if not f.compare:
        return "not a setting of the run: it changes no result, and a run continues with any value"
    if f.metadata.get("when_set"):
        return ("a setting of the run, recorded only when not at its default (so a run made before the option records "
                "the same settings); a run folder holding another value is refused (`--overwrite` starts over)")
    return "a setting of the run: a run folder holding another value is refused (`--overwrite` starts over)"


def _same(cli: str, field: str) -> bool:
    """Whether two defaults as shown are the same value (attribute lists in any order)."""
    empty = {"unset", "none"}
    return cli == field or {cli, field} <= empty or sorted(cli.split(",")) == sorted(field.split(","))


def options_markdown(fields: list[dataclasses.Field], cli_defaults: dict[str, str]) -> str:
    """The option reference: one section per stage, one entry per field, in declaration order. `cli_defaults`:
    `hinter run`'s default per flag, shown beside the field's where they differ."""
    stages = list(STAGES) + [s for s in dict.fromkeys(f.metadata["stage"] for f in fields) if s not in STAGES]
    out = ["# Option reference", "",
           "Generated when the site is built from the fields of `hinter.config.RunConfig`: each field declares its "
           "option (flag, help, stage, default), and the command line, the recorded settings and this page derive "
           "from it. These are the options that decide a run's results; the options of one command only (`--out`, "
           "`--fail-on`, `--executor`...) are in the [command reference](commands.md) and `hinter COMMAND "
           "--help`. The last section, the audit's published summary, is declared the same way by "
           "`hinter.audit.summary.AuditSummary`.", ""]
    for stage in stages:
        members = [f for f in fields if f.metadata["stage"] == stage]
        if not members:
            continue
        title, about = STAGES.get(stage, (stage.capitalize(), ""))
        out += [f"## {title}", "", about, ""] if about else [f"## {title}", ""]
        for f in members:
            m = f.metadata
            flags = f"`{m['flag']}`" + (f", `{m['short']}`" if m.get("short") else "")
            default = f"default: `{_default(f)}`"
            cli = cli_defaults.get(m["flag"])
            if cli is not None and _same(cli, _default(f)) is False:  # e.g. --model: unset in RunConfig
                default = f"default: `{cli}` in `hinter run`, `{_default(f)}` in `RunConfig`"
            out += [f"### {m['flag']}", "",
                    f"{flags} &nbsp; {default} &nbsp; ({OWNERS.get(f.metadata['stage'], 'RunConfig')} field "
                    f"`{f.name}`)", "",
                    m["help"], "", f"*Recorded:* {_recorded(f)}.", ""]
    return "\n".join(out)


def _cli_default(param) -> str:
    value = param.default
    if getattr(param, "is_flag", False):
        return "on" if value else "off"
    if value is None or value == [] or value == ():
        return "unset"
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def run_command_defaults() -> dict[str, str]:
    """`hinter run`'s default per flag, as the command line shows it."""
    run = typer.main.get_command(app).commands["run"]
    return {opt: _cli_default(p) for p in run.params for opt in p.opts if opt.startswith("--")}


def _commands(group, prefix: str):
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        if hasattr(command, "commands"):  # a group: `hinter dictionary lint`...
            yield f"{prefix} {name}", command, True
            yield from _commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command, False


def commands_markdown() -> str:
    """Every command with its help and its options, from the Typer application itself."""
    root = typer.main.get_command(app)
    out = ["# Command reference", "",
           "Generated when the site is built from hinter's command line itself: each command's help (`hinter "
           "COMMAND --help`) and its options with their defaults. The options that decide a run's results are "
           "explained by stage in the [option reference](options.md).", "",
           "```text", (root.help or "").strip(), "```", ""]
    for name, command, is_group in _commands(root, "hinter"):
        out += [f"## {name}", ""]
        if command.help:
            out += ["```text", command.help.replace("\b\n", "").strip(), "```", ""]
        if is_group:
            out += ["Commands: " + ", ".join(f"`{name} {sub}`" for sub in sorted(command.commands)), ""]
            continue
        arguments = [p for p in command.params if not any(o.startswith("-") for o in p.opts)]
        options = [p for p in command.params if p not in arguments and not getattr(p, "hidden", False)]
        if arguments:
            out += ["Arguments: " + " ".join(f"`{(p.metavar or p.name).upper()}`" + ("..." if p.nargs == -1 else "")
                                             + ("" if p.required else " (optional)") for p in arguments), ""]
        for p in options:
            flags = ", ".join(f"`{o}`" for o in p.opts + p.secondary_opts)
            more = " (may be given several times)" if getattr(p, "multiple", False) else ""
            out.append(f"- {flags} (default: `{_cli_default(p)}`){more}: {p.help or ''}")
        out.append("")
    return "\n".join(out)


def audit_fields() -> list[dataclasses.Field]:
    """The audit's own options declared like RunConfig's (`option()`): the published summary's fields."""
    from hinter.audit.summary import AuditSummary
    return list(dataclasses.fields(AuditSummary))


def summary_markdown() -> str:
    """The summary reference from its declaration (hinter.analysis.summary_spec)."""
    from hinter.analysis.summary_spec import reference_markdown
    return reference_markdown()


def readme_markdown(readme: str) -> str:
    """README.md as the site's home: `docs/X` links become `X`; the link to the docs folder itself, the site."""
    readme = readme.replace("[`docs/`](docs/)", "`docs/`")
    return re.sub(r"\]\(docs/", "](", readme)


def on_files(files, config):
    readme = Path(config.config_file_path).parent / "README.md"
    files.append(File.generated(config, "index.md", content=readme_markdown(readme.read_text(encoding="utf-8"))))
    files.append(File.generated(config, "options.md",
                                content=options_markdown(option_fields() + audit_fields(), run_command_defaults())))
    files.append(File.generated(config, "commands.md", content=commands_markdown()))
    # the committed docs/summary-schema.md (tests/test_summary_spec.py keeps it equal) is replaced by the generated
    committed = files.get_file_from_path("summary-schema.md")
    if committed is not None:
        files.remove(committed)
    files.append(File.generated(config, "summary-schema.md", content=summary_markdown()))
    return files
