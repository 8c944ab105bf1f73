"""Registries: model backends (and, through the same `Registry`, executors and tasks) by name.

Each registry keeps its entries in a `catalogue` namespace ("hinter", KIND), and reads the Python entry-point
group `hinter_KIND` (`hinter_backends`, `hinter_executors`, `hinter_tasks`), so that another installed package
adds an entry without touching this one, as spaCy's registries do:

    # pyproject.toml of a package `hinter-mybackend`
    [project.entry-points.hinter_backends]
    mine = "hinter_mybackend:BACKEND"      # a hinter.models.registry.Backend whose prefix is "mine"

A name is registered once: a second registration (a plugin reusing a built-in name, two plugins clashing) is
refused with an error naming both. Looking up a name nobody registered gives an InputError listing the names
that are registered.

A backend is one `Backend` record: its spec prefix, its loader, whether it is an API, the environment variables
it reads, the extra that installs it, its options and its help line. `load_model` dispatches through it, the Ray
executor reads which variables to forward to its workers from it, and `help_text()` is the `--model` help.

Model options follow the spec after a `?`, as NAME=VALUE pairs joined by `&`: `gguf:default?n_ctx=8192`,
`hf:runs/minilm?max_length=256&device=cuda`, `openai:gemma@http://127.0.0.1:8765/v1?timeout=30&concurrency=8`.
The query is the part after the spec's last `?` (a path or URL holding a `?` of its own ends with a lone `?`);
a backend that declares no options (python:, most plugins) gets its spec as written, `?` included.
They are read once, here (`parse_model_spec`): a name the backend does not declare, a value of the wrong kind or
an option given twice is an InputError listing the backend's options and their defaults. The loader receives
every declared option as a keyword argument, the default where the spec gives none. Options that change results
(`Option.affects_results`: gguf's n_ctx, hf's max_length) are part of the model's fingerprint, which each
backend builds; the others (threads, device, batch_size, timeout, concurrency) are not, and `canonical_spec`
drops them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from hinter.errors import InputError
from hinter.registry import Registry

# ---------------------------------------------------------------------- model options

@dataclass(frozen=True)
class Option:
    """One option of a backend, written `?NAME=VALUE` after its spec. `kind` is int, float or str; numbers must be
    at least `minimum`, strings match `pattern` (a regular expression, whole value). `default` None means the
    backend decides (`auto` says how, e.g. "all cores"). `affects_results`: the outcomes may change with it, so
    the backend puts it in the model's fingerprint."""

    name: str
    default: object
    help: str
    kind: type = int
    minimum: float | None = None
    pattern: str | None = None
    affects_results: bool = False
    auto: str = "automatic"

    @property
    def shown_default(self) -> str:
        if self.default is None:
            return self.auto
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)

    @property
    def describe(self) -> str:
        """E.g. "n_ctx [2048] context tokens, changes results": name, [default], help."""
        return f"{self.name} [{self.shown_default}] {self.help}"

    def read(self, text: str) -> object:
        """The value written `text`; ValueError saying what is expected otherwise."""
        import re
        if self.kind is str:
            if not text or (self.pattern and not re.fullmatch(self.pattern, text)):
                raise ValueError(f"expected {self.expected}")
            return text
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"expected {self.expected}") from None
        if value != value or abs(value) == float("inf") or (self.minimum is not None and value < self.minimum):
            raise ValueError(f"expected {self.expected}")
        return value

    @property
    def expected(self) -> str:
        if self.kind is str:
            return self.help if self.pattern else "a non-empty value"
        noun = "an integer" if self.kind is int else "a number"
        return noun + (f" >= {self.minimum:g}" if self.minimum is not None else "")


def split_query(rest: str) -> tuple[str, str | None]:
    """`PATH?a=1&b=2` -> ("PATH", "a=1&b=2"); no `?`: (rest, None)."""
    head, sep, query = rest.rpartition("?")
    return (head, query) if sep else (rest, None)


# ---------------------------------------------------------------------- model backends

@dataclass(frozen=True)
class Backend:
    """Everything hinter knows about one model backend.

    `loader(rest, task=..., concurrency=..., threads=..., **options)` returns the Model for the spec
    `PREFIX:rest?options` (`rest` without the options; a loader should accept **kwargs: arguments may be added).
    `options`: the options it declares, each passed to the loader by name (its default when the spec gives none).
    `is_api`: the model is a remote API (I/O-bound: the Ray executor splits its concurrency bound among workers
    that parse while they wait). `prompted`: each call sends the task's prompt around the text (a generative or
    API model; a classifier reads the text alone), so estimates count the prompt's tokens; None: as `is_api`. `env`: the environment variables it reads its settings from (API keys), forwarded
    to Ray workers. `extra`: the pip extra of `package` that installs its dependencies (`pip install
    'hinter[gguf]'`); an ImportError while loading names it. `usage`, `summary`, `example` and `options` make its
    line of the `--model` help."""

    prefix: str
    loader: Callable[..., object]
    usage: str          # the spec's form, e.g. "hf:FOLDER"
    summary: str        # what it is, e.g. "a Hugging Face sequence classifier"
    example: str = ""   # a spec that works, e.g. "hf:runs/minilm-imdb"
    is_api: bool = False
    prompted: bool | None = None
    env: tuple[str, ...] = ()
    extra: str | None = None
    package: str = "hinter"
    options: tuple[Option, ...] = ()

    @property
    def sends_prompt(self) -> bool:
        """Whether each call wraps the text in the task's prompt (`prompted`, else an API model does)."""
        return self.is_api if self.prompted is None else self.prompted

    @property
    def help_line(self) -> str:
        """E.g. "hf:FOLDER (a Hugging Face sequence classifier, e.g. hf:runs/minilm-imdb; options after ?...)"."""
        env = f", reads {' or '.join(self.env)}" if self.env else ""
        example = f", e.g. {self.example}" if self.example else ""
        options = f"; options after ?, NAME=VALUE joined by &: {self.options_text}" if self.options else ""
        return f"{self.usage} ({self.summary}{env}{example}{options})"

    @property
    def options_text(self) -> str:
        """E.g. "n_ctx [2048] context tokens...; threads [all cores] CPU threads", or "none"."""
        return "; ".join(o.describe for o in self.options) if self.options else "none"

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    @property
    def install(self) -> str | None:
        """The pip command installing what it needs, e.g. pip install 'hinter[gguf]'."""
        return f"pip install '{self.package}[{self.extra}]'" if self.extra else None


# The modules of the built-in backends: each declares its Backend records (`register_backend(...)`) at import.
# They import nothing heavy at import time (llama.cpp, torch, openai are imported by the loaders).
BUILTIN_BACKEND_MODULES = ("gguf", "hf", "hf_causal", "openai_api", "anthropic_api", "http_api",
                           "worker")  # worker: python:


def _import_builtin_backends() -> None:
    for module in BUILTIN_BACKEND_MODULES:
        importlib.import_module(f"{__package__}.{module}")


def _check_backend(name: str, entry: object) -> Backend:
    if not isinstance(entry, Backend) or entry.prefix != name:
        raise InputError(f"the hinter_backends entry point {name!r} is not a Backend record with prefix {name!r} "
                         f"(got {entry!r})", where="the backend registry",
                         fix="Point the entry point at a hinter.models.registry.Backend whose prefix is its name.")
    return entry


BACKENDS: Registry[Backend] = Registry("backends", "model backend", "--model", builtins=_import_builtin_backends,
                                       check=_check_backend)


def register_backend(backend: Backend) -> Backend:
    """Register a backend under its prefix; a prefix already registered is refused."""
    if not isinstance(backend, Backend):
        raise TypeError(f"register_backend takes a Backend record, got {backend!r}")
    return BACKENDS.register(backend.prefix, backend, origin=f"from {getattr(backend.loader, '__module__', '?')}")


def find_backend(prefix: str) -> Backend | None:
    """The backend registered for a spec prefix ("gguf"), or None."""
    return BACKENDS.find(prefix)


def backends() -> list[Backend]:
    """Every registered backend, by prefix."""
    return [backend for _, backend in BACKENDS.items()]


def help_lines() -> list[str]:
    """One line per backend: its spec form, what it is, an example."""
    return [backend.help_line for backend in backends()]


def help_text(separator: str = "; ") -> str:
    """The `--model` help: every registered backend's line."""
    return separator.join(help_lines())


@dataclass(frozen=True)
class ParsedSpec:
    """A model spec read once: its backend, the part after the prefix without the options (`rest`), the options
    it writes (`given`, parsed) and every declared option's value (`options`: given, else the default)."""

    spec: str
    backend: Backend
    rest: str
    given: dict
    options: dict


def _options_fix(backend: Backend) -> str:
    first = backend.options[0]
    example = (f"{backend.example if backend.example.startswith(backend.prefix + ':') else backend.prefix + ':...'}"
               f"?{first.name}={first.shown_default if first.default is not None else 'VALUE'}")
    return (f"The {backend.prefix} backend's options [default]: {backend.options_text}; write them after the spec, "
            f"e.g. {example}.")


def parse_model_spec(spec: str) -> ParsedSpec:
    """Read `PREFIX:REST[?NAME=VALUE&...]`: the registered backend and its options, validated."""
    prefix, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError(f"cannot read the model spec {spec!r}", where="--model", fix=f"Use one of: {help_text()}.")
    backend = find_backend(prefix)
    if backend is None:
        raise InputError(f"unknown model kind {prefix!r} in {spec!r}", where="--model",
                         fix=f"Registered backends: {', '.join(BACKENDS.names())}; use one of: {help_text()}.")
    # A backend that declares no options gets the rest as written (a plugin's spec may hold a '?' of its own).
    rest, query = split_query(rest) if backend.options else (rest, None)
    given: dict = {}
    for part in (query.split("&") if query else ()):
        name, eq, text = part.partition("=")
        name, text = name.strip(), text.strip()
        if not eq or not name:
            raise InputError(f"cannot read the option {part!r} of the model spec {spec!r} (write NAME=VALUE)",
                             where=f"--model {spec}", fix=_options_fix(backend))
        option = backend.option(name)
        if option is None:
            raise InputError(f"unknown option {name!r} for the {prefix} backend", where=f"--model {spec}",
                             fix=_options_fix(backend))
        if name in given:
            raise InputError(f"the option {name} is given twice", where=f"--model {spec}", fix=_options_fix(backend))
        try:
            given[name] = option.read(text)
        except ValueError as e:
            raise InputError(f"bad value {text!r} for the option {name} of the {prefix} backend ({e})",
                             where=f"--model {spec}", fix=_options_fix(backend)) from None
    if not rest:
        raise InputError(f"cannot read the model spec {spec!r} (nothing before the options)", where="--model",
                         fix=f"Use one of: {backend.help_line}.")
    options = {o.name: given.get(o.name, o.default) for o in backend.options}
    return ParsedSpec(spec, backend, rest, given, options)


def canonical_spec(spec: str) -> str:
    """The spec with only the options that change results, and only where they differ from their default, in the
    backend's order: two specs with the same canonical spec give the same outcomes (`gguf:default?threads=2` and
    `gguf:default` are both `gguf:default`; `gguf:default?n_ctx=4096` stays)."""
    parsed = parse_model_spec(spec)
    if not parsed.backend.options:
        return spec
    kept = [f"{o.name}={parsed.given[o.name]}" for o in parsed.backend.options
            if o.affects_results and o.name in parsed.given and parsed.given[o.name] != o.default]
    base = f"{parsed.backend.prefix}:{parsed.rest}"
    return base + ("?" + "&".join(kept) if kept else ("?" if "?" in parsed.rest else ""))


# Arguments load_model passes to every loader; when the caller gives one (the Ray executor's share of the
# concurrency, a worker's threads), it wins over the same option in the spec.
CALL_ARGUMENTS = ("concurrency", "threads")


def load_backend_model(spec: str, task=None, concurrency: int | None = None, threads: int | None = None):
    """The model of a spec `PREFIX:REST[?OPTIONS]` through its registered backend (see `hinter.models.load_model`)."""
    parsed = parse_model_spec(spec)
    backend = parsed.backend
    kwargs: dict = dict(parsed.options)
    for name, value in zip(CALL_ARGUMENTS, (concurrency, threads)):
        if value is not None or name not in kwargs:
            kwargs[name] = value
    try:
        return backend.loader(parsed.rest, task=task, **kwargs)
    except ImportError as e:  # a missing optional dependency: name the extra that installs it
        raise InputError(f"the {backend.prefix} backend needs a package that is not installed ({e})",
                         where=f"--model {spec}",
                         fix=f"{backend.install}." if backend.install else "Install the package it names.") from None


__all__ = ["BACKENDS", "Backend", "Option", "ParsedSpec", "backends", "canonical_spec", "find_backend",
           "help_lines", "help_text", "load_backend_model", "parse_model_spec", "register_backend", "split_query"]
