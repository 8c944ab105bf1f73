"""A gate for CI: conditions on summary.json (`--fail-on`), and a JUnit file with one test case per combination.

Condition syntax: `PATH OP NUMBER`, OP one of > >= < <= == !=. PATH is a dotted path into summary.json;
`*` matches every key at its level (the condition holds if it holds for any match). A path that does not resolve
as written is read under `totals`, then under `totals.*`, so these mean the same:

    intersectional.error_rate > 0.05   ==  totals.intersectional.error_rate > 0.05
    hidden > 0                         ==  totals.*.hidden > 0   (only intersectional totals have `hidden`)
    intersectional.*.error_rate > 0.1  :   any attribute combination above 10%
    group_bias.atomic.gender.groups.*.error_rate > 0.2

A measure that is null (no mutant tested) never satisfies a condition.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from hinter.errors import InputError
from hinter.files import write_atomic
from hinter.analysis.summary_spec import data_keyed_sections, skeleton

OPS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt}
_COND = re.compile(r"^\s*([A-Za-z0-9_.*+\-]+)\s*(>=|<=|==|!=|>|<)\s*(-?[0-9.]+(?:e-?[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Condition:
    text: str   # as the user wrote it
    path: str   # the path that resolved (after the totals fallbacks)
    op: str
    threshold: float

    def holds(self, value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and OPS[self.op](value, self.threshold)


def _resolve(obj, parts: list[str], prefix: str = "") -> list[tuple[str, object]]:
    """Every (concrete path, value) that `parts` reaches in `obj`."""
    if not parts:
        return [(prefix, obj)]
    if not isinstance(obj, dict):
        return []
    head, rest = parts[0], parts[1:]
    keys = list(obj) if head == "*" else [head] if head in obj else []
    out = []
    for k in keys:
        out += _resolve(obj[k], rest, f"{prefix}.{k}" if prefix else k)
    return out


def _measure_paths(s: dict) -> list[str]:
    """A few valid paths, to suggest in an error."""
    return (["texts", "hidden", "atomic.error_rate", "intersectional.error_rate", "intersectional.hidden_rate",
             "originals_with_bias.rate"] + [f"intersectional.{c}.error_rate" for c in s.get("intersectional", {})][:2])


def check_syntax(text: str) -> re.Match:
    m = _COND.match(text)
    if not m:
        raise InputError(f"cannot read the condition {text!r}", where="--fail-on",
                         fix="Write PATH OP NUMBER, e.g. \"intersectional.error_rate>0.05\" or \"hidden>0\" "
                             "(OP: > >= < <= == !=).")
    return m


def parse_condition(text: str, summary: dict) -> Condition:
    path, op, number = check_syntax(text).groups()
    for candidate in (path, f"totals.{path}", f"totals.*.{path}"):
        found = _resolve(summary, candidate.split("."))
        if found and any(not isinstance(v, dict) for _, v in found):
            return Condition(text.strip(), candidate, op, float(number))
    raise InputError(f"no measure of the summary is called {path!r}", where="--fail-on",
                     fix="Use a dotted path into summary.json (see docs/summary-schema.md), e.g. "
                         + ", ".join(_measure_paths(summary)) + ".")


def check_paths(conditions: list[str], attributes: tuple[str, ...], order: int) -> None:
    """Before a campaign: every condition must name a measure the summary will have (a misspelled
    `intersectional.eror_rate` used to fail only after the whole run), as summary_spec declares them; sections
    keyed by the data (group_bias, truth_table...) are checked by their name only."""
    known = skeleton(attributes, order)
    for text in conditions:
        try:
            parse_condition(text, known)
        except InputError:
            if check_syntax(text).group(1).split(".")[0] not in data_keyed_sections():
                raise


def evaluate(conditions: list[Condition], summary: dict) -> list[tuple[Condition, str, object]]:
    """The (condition, concrete path, value) that hold."""
    return [(c, p, v) for c in conditions for p, v in _resolve(summary, c.path.split(".")) if c.holds(v)]


def _scope(c: Condition) -> tuple[str, str | None, str] | None:
    """(kind, combination or None for all, measure) when a condition is about combinations' own measures."""
    parts = c.path.split(".")
    if len(parts) == 3 and parts[0] == "totals":
        return (parts[1], None, parts[2])
    if len(parts) == 3 and parts[0] in ("atomic", "intersectional"):
        return (parts[0], None if parts[1] == "*" else parts[1], parts[2])
    return None


def _fmt(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def write_junit(path: Path, summary: dict, conditions: list[Condition]) -> None:
    """One test case per attribute (atomic) and combination (intersectional). A case fails when a condition about
    combinations (e.g. intersectional.error_rate>0.05, hidden>0) holds for its own measures, or, with no condition,
    when it has any bias. Conditions on run-wide measures (texts, originals_with_bias...) form one more case, `run`."""
    cases = []
    for kind in ("atomic", "intersectional"):
        for combo, m in summary.get(kind, {}).items():
            failures = []
            for c in conditions or []:
                sc = _scope(c)
                if sc is None or sc[0] not in (kind, "*") or sc[1] not in (None, combo) or sc[2] not in m:
                    continue
                if c.holds(m[sc[2]]):
                    failures.append(f"{c.text}: {kind}.{combo}.{sc[2]} = {_fmt(m[sc[2]])}")
            if not conditions and m["biased"]:
                failures.append(f"{m['biased']} biased mutants of {m['tested']} tested")
            out = (f"mutants={m['mutants']} valid={m['valid']} tested={m['tested']} biased={m['biased']} "
                   f"error_rate={_fmt(m['error_rate'])}" + (f" hidden={m['hidden']}" if "hidden" in m else ""))
            cases.append((f"hinter.{kind}", combo, failures, out))
    global_conditions = [c for c in conditions or [] if _scope(c) is None]
    if global_conditions:
        failures = [f"{c.text}: {p} = {_fmt(v)}" for c, p, v in evaluate(global_conditions, summary)]
        cases.append(("hinter", "run", failures, ""))
    write_junit_cases(path, cases)


def write_junit_cases(path: Path, cases: list[tuple[str, str, list[str], str]]) -> None:
    """A JUnit file of `cases`, each (classname, name, failure messages, system-out or ""), failing where it has
    failure messages: the one writer of a run's and an audit's JUnit files."""
    n_fail = sum(bool(f) for _, _, f, _ in cases)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites tests="{len(cases)}" failures="{n_fail}">',
             f'<testsuite name="hinter" tests="{len(cases)}" failures="{n_fail}" errors="0" skipped="0">']
    for cls, name, failures, out in cases:
        lines.append(f"  <testcase classname={quoteattr(cls)} name={quoteattr(name)}>")
        if failures:
            lines.append(f"    <failure message={quoteattr('; '.join(failures))}>{escape(chr(10).join(failures))}"
                         "</failure>")
        if out:
            lines.append(f"    <system-out>{escape(out)}</system-out>")
        lines.append("  </testcase>")
    lines += ["</testsuite>", "</testsuites>"]
    write_atomic(path, "\n".join(lines) + "\n")


def write_junit_error(path: Path, problem: str) -> None:
    """A JUnit file for a run that gives no verdict (its model failed, it is unfinished, it tested nothing): one
    test case, `hinter.run health`, in error with the reason, so that a CI reading JUnit sees why, not no file."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites tests="1" failures="0" errors="1">',
             '<testsuite name="hinter" tests="1" failures="0" errors="1" skipped="0">',
             '  <testcase classname="hinter.run" name="health">',
             f"    <error message={quoteattr(problem)}>{escape(problem)}</error>", "  </testcase>",
             "</testsuite>", "</testsuites>"]
    write_atomic(path, "\n".join(lines) + "\n")
