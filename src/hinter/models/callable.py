"""Any Python callable `list[str] -> list[outcome]` as the model under test (`python:package.module:function`).

The function gets a list of texts and returns one outcome per text, in order. An outcome is

- a label: a str (stripped; empty means unparseable), a bool or int (written as "0"/"1" or the number);
- a set of labels for a multi-label task: a list, tuple, set or frozenset (empty: no label);
- None: the model gave no usable answer (unparseable);
- a `hinter.models.Outcome`, used as it is;
- a dict with scores: {"label": one of the above, "scores": {label: float, ...}, "seen": int, "raw": str}, every
  key but "label" optional. "scores" are what the model scored each label (logits, probabilities...: the
  label's score is stored beside the outcome and `Outcome.score(label)` reads it); "seen" is how many characters
  of the text the model read when it cut the text (leave it out when it read all of it; never give more than it
  read: a mutant whose changes all lie beyond it is not counted as tested); "raw" replaces the stored raw answer.

    def predict(texts):
        probs = my_model(texts)                     # e.g. [[0.9, 0.1], ...]
        return [{"label": "Positive" if p[0] >= p[1] else "Negative",
                 "scores": {"Positive": p[0], "Negative": p[1]}} for p in probs]

Anything else (or a dict with other keys, or scores that are not numbers) is recorded as unparseable, its raw
answer saying why.

A spec's function runs in a worker process (models/worker.py): an exception, `sys.exit`, a crash or a hang in it is
a model error for the texts of that call, never the end of hinter or its exit code. Options: `timeout` (seconds a
call may take; none by default), `process=inline` (run it in hinter's own process, as a function passed to
`hinter.run(model=...)` always is: it may be a closure, which no other process can import).

The model's fingerprint (under which a run stores its answers, and which a rerun into the same folder must match)
is the spec and a hash of the code: the function's module file and the Python files it imports from its folder
(its top-level package, for a module of a package), followed through their own imports. Editing any of them makes
the next run into the same folder refuse to reuse the old answers. What the code reads (weights, a data file) is
not hashed; nor can a function without a source file be (typed in a console): its fingerprint is its name alone,
and `identity_limit` says so.

For a generative task (`hinter.models.tasks.GenerativeTask`: a prompt with {text}, no labels) the function gets the texts
the same way and returns one string per text, the answer it wrote (the task's prompt is the function's to apply,
or not); an empty string, None or anything but a string is a model error for that text, never an answer.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence

from hinter.models.tasks import split_task

from hinter.models.base import Outcome, normalise


SOURCE_MARK = "@source="  # fingerprint = "python:" + name + SOURCE_MARK + hash of the code (when it has a file)


def _top_scope(module: ModuleType, file: Path) -> tuple[Path, Path]:
    """(folder whose files count as the model's own, folder absolute imports start from): the module's folder for
    a top-level module, its top-level package's folder for a module of a package."""
    depth = module.__name__.count(".") + (file.name == "__init__.py")
    if depth == 0:
        return file.parent, file.parent
    package = file.parents[depth - 1]
    return package, package.parent


def _imported_files(file: Path, package_dir: Path, base: Path, scope: Path) -> set[Path]:
    """The .py files under `scope` that `file` imports (absolute from `base`, relative from `package_dir`)."""
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return set()
    names: list[tuple[Path, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(base, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            start = base if node.level == 0 else package_dir.parents[node.level - 2] if node.level > 1 else package_dir
            stem = node.module or ""
            names.append((start, stem))
            names += [(start, f"{stem}.{alias.name}" if stem else alias.name) for alias in node.names]
    out = set()
    for start, dotted in names:
        if not dotted:
            continue
        path = start.joinpath(*dotted.split("."))
        for candidate in (path.with_suffix(".py"), path / "__init__.py"):
            try:
                candidate = candidate.resolve()
            except OSError:
                continue
            if candidate.is_file() and candidate.is_relative_to(scope):
                out.add(candidate)
    return out


def source_files(module: ModuleType) -> list[Path]:
    """The module's file and the Python files of its folder (package) it imports, directly or through each other;
    [] when the module has no file."""
    name = getattr(module, "__file__", None)
    if not name or not Path(name).is_file():
        return []
    first = Path(name).resolve()
    if first.suffix != ".py":
        return [first]  # a compiled module: its file is its code
    scope, base = _top_scope(module, first)
    found, todo = {first}, [first]
    while todo:
        file = todo.pop()
        for f in _imported_files(file, file.parent, base, scope) - found:
            found.add(f)
            todo.append(f)
    return sorted(found)


def code_hash(files: Sequence[Path]) -> str | None:
    """A hash of the files' names (relative to the first one's folder) and contents; None without files."""
    if not files:
        return None
    root = files[0].parent
    h = hashlib.sha256()
    for f in sorted(files):
        rel = os.path.relpath(f, root)
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


class CallableModel:
    def __init__(self, function: Callable[[list[str]], Sequence[object]], name: str | None = None, batch_size: int = 64,
                 task=None):
        self.function = function
        self.batch_size = batch_size
        # a generative task makes strings answers; a label task: what OutcomeCache reads
        self.task, self.label_task = split_task(task)
        inner = function.func if isinstance(function, functools.partial) else function  # the user's code
        module = sys.modules.get(getattr(inner, "__module__", None) or "")
        self.source_files = source_files(module) if module is not None else []
        digest = code_hash(self.source_files)
        self.fingerprint = ("python:" + (name or f"{function.__module__}:{getattr(function, '__qualname__', repr(function))}")
                            + (SOURCE_MARK + digest if digest else ""))
        if digest is None:  # said where a Python API user sees it (the CLI's specs always name a module file)
            logging.getLogger("hinter").warning(
                "the model %s has no source file to hash (a function typed in a console?): its fingerprint is its "
                "name alone, so a run folder it answered into would reuse its answers after a change; pass "
                "overwrite=True after changing it", self.fingerprint)

    def _call(self, texts: list[str]) -> Sequence[object]:
        return self.function(texts)

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        try:
            answers = self._call(list(texts))
        except BaseException as e:  # Ctrl-C: a worker's answers that came with it go up (OutcomeCache keeps them)
            if getattr(e, "answers", None) is not None:
                e.outcomes = self._outcomes(e.answers)
            raise
        return self._outcomes(answers)

    def _outcomes(self, answers: Sequence[object]) -> list[Outcome]:
        if self.task is not None:
            return [self._written(o) for o in answers]
        return [normalise(o) for o in answers]

    def _written(self, value: object) -> Outcome:
        if isinstance(value, Outcome):
            return value
        if value is not None and not isinstance(value, str):
            return Outcome(None, f"model error: a generative task's function must return a string per text, got "
                                 f"{type(value).__name__}", error=True)
        return self.task.answer(value)
