"""Model backends behind one interface; `load_model` reads a model spec from the CLI or Python."""
from __future__ import annotations

import builtins
from dataclasses import dataclass

from hinter.errors import HinterError, InputError
from hinter.pipeline.gcpause import keeping
from hinter.models.base import BatchSpreadingModel, Model, Outcome, OutcomeCache, normalise
from hinter.models.registry import (Backend, Option, canonical_spec, find_backend, help_text, load_backend_model, parse_model_spec,
                       register_backend)


def load_model(spec: str, task=None, concurrency: int | None = None, threads: int | None = None) -> Model:
    """A model from its spec `PREFIX:REST[?NAME=VALUE&...]`, through the backend registered for PREFIX
    (`registry.py`; the options after `?` are the backend's, e.g. gguf:default?n_ctx=4096); `task` (a preset name,
    a task file or a Task; default imdb) gives generative models their prompt and answer parser, and tells
    classifiers whether the task is multi-label. `concurrency`: API models' requests at once (default 4);
    `threads`: llama.cpp's CPU threads (default: all). Given here, these two win over the spec's options of the
    same name (the Ray executor gives each worker its share)."""
    with keeping():  # the modules it imports and the model live on: no collection over them while they load
        return load_backend_model(spec, task, concurrency, threads)


def __getattr__(name: str):
    # SPEC_HELP: the --model help, generated from the registry when first read (the built-in backends' modules
    # import hinter.models.tasks, which imports this package: they cannot be imported while it initialises).
    if name == "SPEC_HELP":
        return help_text()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ModelSpec:
    """A model named by its spec, loaded where it runs (each Ray worker loads its own copy)."""

    spec: str
    task: object = None  # a preset name, a task file or a Task
    concurrency: int | None = None  # API models: requests at once, in all (default: the spec's concurrency option)
    threads: int | None = None

    def __post_init__(self) -> None:
        # `openai:M@URL?concurrency=8` bounds the requests in all, as --concurrency does: the Ray executor splits
        # this field among its workers. A spec that cannot be read is left as it is: loading it says why.
        if self.concurrency is None and "?" in self.spec:
            try:
                given = parse_model_spec(self.spec).given
            except HinterError:
                return
            if isinstance(given.get("concurrency"), int):
                object.__setattr__(self, "concurrency", given["concurrency"])

    @property
    def backend(self) -> Backend | None:
        """The registered backend of the spec's prefix (None for an unknown one: loading it says so)."""
        return find_backend(self.spec.partition(":")[0])

    @property
    def is_api(self) -> bool:
        return self.backend is not None and self.backend.is_api

    def load(self) -> Model:
        return load_model(self.spec, self.task, self.concurrency, self.threads)


def identity_limit(fingerprint: str, spec: str | None = None) -> str | None:
    """Why a run cannot tell that this model changed since its answers were stored (a rerun into the same folder
    reuses them), or None where its fingerprint follows the model (a file's hash, a python: model's code)."""
    if fingerprint.startswith("python:"):
        from hinter.models.callable import SOURCE_MARK
        if SOURCE_MARK not in fingerprint:
            return (f"the model {fingerprint} has no source file to hash (a function typed in a console?): its "
                    "fingerprint is its name alone, so a changed function is not noticed")
        return None
    backend = find_backend(spec.partition(":")[0]) if spec else None
    if backend is not None and backend.is_api:
        return (f"{spec} is a remote API known by its name, endpoint and prompt only: if the model behind that name "
                "changed, its stored answers are still reused")
    return None


def resolve_model(model) -> Model:
    """A Model from a spec string, a ModelSpec, a Model, or a function list[str] -> list[outcome]."""
    if isinstance(model, str):
        return load_model(model)
    if isinstance(model, ModelSpec):
        return model.load()
    if hasattr(model, "predict") and hasattr(model, "fingerprint"):
        return model
    if builtins.callable(model):  # plain `callable` is this package's submodule once imported
        from hinter.models.callable import CallableModel
        return CallableModel(model)
    raise InputError(f"cannot use {model!r} as a model",
                     fix="Pass a model spec string, an object with predict() and fingerprint, or a function.")


__all__ = ["Backend", "BatchSpreadingModel", "Model", "ModelSpec", "Option", "Outcome", "OutcomeCache",
           "canonical_spec", "help_text", "identity_limit", "load_model", "normalise", "parse_model_spec", "register_backend",
           "resolve_model"]
