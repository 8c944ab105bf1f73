"""Model backends behind one interface; `load_model` reads a model spec from the CLI or Python."""
from __future__ import annotations

from ..errors import InputError
from .base import Model, Outcome, OutcomeCache, normalise

SPEC_HELP = "gguf:default (the embedded Gemma 3 270M), gguf:PATH (any GGUF file), python:package.module:function"


def load_model(spec: str, task: str = "imdb") -> Model:
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"cannot read the model spec {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")
    if kind == "gguf":
        from ..tasks import get_task
        from .gguf import GGUFModel, default_gguf_path
        return GGUFModel(default_gguf_path() if rest == "default" else rest, get_task(task))
    if kind == "python":
        from .callable import load_callable
        return load_callable(rest)
    raise InputError(f"unknown model kind {kind!r} in {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")


__all__ = ["Model", "Outcome", "OutcomeCache", "load_model", "normalise"]
