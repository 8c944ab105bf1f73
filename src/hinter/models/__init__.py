"""Model backends behind one interface; `load_model` reads a model spec from the CLI or Python."""
from __future__ import annotations

import builtins
from dataclasses import dataclass

from ..errors import InputError
from .base import Model, Outcome, OutcomeCache, normalise

SPEC_HELP = ("gguf:default (the embedded Gemma 3 270M), gguf:PATH (any GGUF file), hf:FOLDER (a Hugging Face "
             "sequence classifier), hf-causal:FOLDER (a Hugging Face causal LM, plain prompt), "
             "openai:MODEL[@BASE_URL] (completions endpoint, plain prompt), "
             "openai-chat:MODEL[@BASE_URL] (chat endpoint), python:package.module:function")


API_KINDS = ("openai", "openai-chat")


def load_model(spec: str, task=None, concurrency: int | None = None, threads: int | None = None) -> Model:
    """A model from its spec; `task` (a preset name, a task file or a Task; default imdb) gives generative
    models their prompt and answer parser, and tells classifiers whether the task is multi-label.
    `concurrency`: API models' requests at once (default 4); `threads`: llama.cpp's CPU threads (default: all)."""
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"cannot read the model spec {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")
    if kind == "gguf":
        from ..tasks import get_task
        from .gguf import GGUFModel, default_gguf_path
        return GGUFModel(default_gguf_path() if rest == "default" else rest, get_task(task or "imdb"), n_threads=threads)
    if kind == "hf":
        from ..tasks import get_task
        from .hf import HFClassifier
        return HFClassifier(rest, get_task(task) if task else None)
    if kind == "hf-causal":
        from ..tasks import get_task
        from .hf_causal import HFCausalLM
        return HFCausalLM(rest, get_task(task or "imdb"))
    if kind in API_KINDS:
        from ..tasks import get_task
        from .openai_api import OpenAIModel, parse_spec
        model, base_url = parse_spec(rest)
        return OpenAIModel(model, get_task(task or "imdb"), base_url=base_url, chat=kind == "openai-chat",
                           **({"concurrency": concurrency} if concurrency else {}))
    if kind == "python":
        from .callable import load_callable
        return load_callable(rest)
    raise InputError(f"unknown model kind {kind!r} in {spec!r}", where="--model", fix=f"Use one of: {SPEC_HELP}.")


@dataclass(frozen=True)
class ModelSpec:
    """A model named by its spec, loaded where it runs (each Ray worker loads its own copy)."""

    spec: str
    task: object = None  # a preset name, a task file or a Task
    concurrency: int | None = None  # API models: requests at once, in all
    threads: int | None = None

    @property
    def is_api(self) -> bool:
        return self.spec.partition(":")[0] in API_KINDS

    def load(self) -> Model:
        return load_model(self.spec, self.task, self.concurrency, self.threads)


def resolve_model(model) -> Model:
    """A Model from a spec string, a ModelSpec, a Model, or a function list[str] -> list[outcome]."""
    if isinstance(model, str):
        return load_model(model)
    if isinstance(model, ModelSpec):
        return model.load()
    if hasattr(model, "predict") and hasattr(model, "fingerprint"):
        return model
    if builtins.callable(model):  # plain `callable` is this package's submodule once imported
        from .callable import CallableModel
        return CallableModel(model)
    raise InputError(f"cannot use {model!r} as a model",
                     fix="Pass a model spec string, an object with predict() and fingerprint, or a function.")


__all__ = ["Model", "ModelSpec", "Outcome", "OutcomeCache", "load_model", "normalise", "resolve_model"]
