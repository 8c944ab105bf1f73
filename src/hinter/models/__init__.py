"""Model backends behind one interface; `load_model` reads a model spec from the CLI or Python."""
from __future__ import annotations

from ..errors import InputError
from .base import Model, Outcome, OutcomeCache, normalise

SPEC_HELP = ("gguf:default (the embedded Gemma 3 270M), gguf:PATH (any GGUF file), hf:FOLDER (a Hugging Face "
             "sequence classifier), hf-causal:FOLDER (a Hugging Face causal LM, plain prompt), "
             "openai:MODEL[@BASE_URL] (completions endpoint, plain prompt), "
             "openai-chat:MODEL[@BASE_URL] (chat endpoint), python:package.module:function")


def load_model(spec: str, task=None) -> Model:
    """A model from its spec; `task` (a preset name, a task file or a Task; default imdb) gives generative
    models their prompt and answer parser, and tells classifiers whether the task is multi-label."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"cannot read the model spec {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")
    if kind == "gguf":
        from ..tasks import get_task
        from .gguf import GGUFModel, default_gguf_path
        return GGUFModel(default_gguf_path() if rest == "default" else rest, get_task(task or "imdb"))
    if kind == "hf":
        from ..tasks import get_task
        from .hf import HFClassifier
        return HFClassifier(rest, get_task(task) if task else None)
    if kind == "hf-causal":
        from ..tasks import get_task
        from .hf_causal import HFCausalLM
        return HFCausalLM(rest, get_task(task or "imdb"))
    if kind in ("openai", "openai-chat"):
        from ..tasks import get_task
        from .openai_api import OpenAIModel, parse_spec
        model, base_url = parse_spec(rest)
        return OpenAIModel(model, get_task(task or "imdb"), base_url=base_url, chat=kind == "openai-chat")
    if kind == "python":
        from .callable import load_callable
        return load_callable(rest)
    raise InputError(f"unknown model kind {kind!r} in {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")


__all__ = ["Model", "Outcome", "OutcomeCache", "load_model", "normalise"]
