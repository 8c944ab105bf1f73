"""Any Python callable `list[str] -> list[outcome]` as the model under test."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Callable, Sequence

from ..errors import InputError
from .base import Outcome, normalise
from .registry import Backend, register_backend


class CallableModel:
    def __init__(self, function: Callable[[list[str]], Sequence[object]], name: str | None = None, batch_size: int = 64):
        self.function = function
        self.batch_size = batch_size
        self.fingerprint = "python:" + (name or f"{function.__module__}:{getattr(function, '__qualname__', repr(function))}")

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        return [normalise(o) for o in self.function(list(texts))]


def load_callable(spec: str) -> CallableModel:
    """`package.module:function` -> CallableModel."""
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
    return CallableModel(function, spec)


BACKEND = register_backend(Backend(
    prefix="python", loader=lambda rest, **_: load_callable(rest), usage="python:package.module:function",
    summary="a function from a list of texts to one label per text",
    example="python:mymodels.sentiment:predict"))
