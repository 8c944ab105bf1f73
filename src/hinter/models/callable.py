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
answer saying why. The backend takes no options.

For a generative task (`hinter.tasks.GenerativeTask`: a prompt with {text}, no labels) the function gets the texts
the same way and returns one string per text, the answer it wrote (the task's prompt is the function's to apply,
or not); an empty string, None or anything but a string is a model error for that text, never an answer.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Callable, Sequence

from ..errors import InputError
from .base import Outcome, normalise
from .registry import Backend, register_backend


class CallableModel:
    def __init__(self, function: Callable[[list[str]], Sequence[object]], name: str | None = None, batch_size: int = 64,
                 task=None):
        self.function = function
        self.batch_size = batch_size
        self.task = task if getattr(task, "generative", False) else None  # a label task needs nothing of it
        self.fingerprint = "python:" + (name or f"{function.__module__}:{getattr(function, '__qualname__', repr(function))}")

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        if self.task is not None:
            return [self._written(o) for o in self.function(list(texts))]
        return [normalise(o) for o in self.function(list(texts))]

    def _written(self, value: object) -> Outcome:
        if isinstance(value, Outcome):
            return value
        if value is not None and not isinstance(value, str):
            return Outcome(None, f"model error: a generative task's function must return a string per text, got "
                                 f"{type(value).__name__}", error=True)
        return self.task.answer(value)


def load_callable(spec: str, task=None) -> CallableModel:
    """`package.module:function` -> CallableModel (`task`: a task or its name; a generative one makes the function's
    strings answers)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"cannot read the model spec 'python:{spec}'", where="--model",
                         fix="Write python:package.module:function, e.g. python:mymodels.sentiment:predict.")
    # `python -m` puts the current folder on the path but the `hinter` script does not: a user's
    # biased_model.py beside them must import all the same (it is searched last, after installed packages).
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise InputError(f"cannot import module {module_name!r} ({e})", where="--model",
                         fix=f"Run from the folder holding {module_name.replace('.', '/')}.py, set PYTHONPATH to "
                             "it, or install the package.") from None
    function = module
    for part in attr.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise InputError(f"module {module_name!r} has no attribute {attr!r}", where="--model",
                             fix="Name a function that takes a list of texts and returns one outcome per text.")
    if not callable(function):
        raise InputError(f"{spec} is not callable", where="--model")
    if isinstance(task, str):
        from ..tasks import get_task
        task = get_task(task)
    return CallableModel(function, spec, task=task)


BACKEND = register_backend(Backend(
    prefix="python", loader=lambda rest, task=None, **_: load_callable(rest, task), usage="python:package.module:function",
    summary="a function from a list of texts to one label per text",
    example="python:mymodels.sentiment:predict"))
