"""A torch backend's start-up (hf:, hf-causal:): what loads when, and torch's import and CUDA's start begun early.

Importing torch and transformers and starting CUDA took about half of a `run --suite` on an H200 (6 to 7 s of
13 to 16 s before the first forward pass, docs/gpu.md): `begin(spec)` starts them in a background thread as soon
as the CLI knows the model is hf: or hf-causal:, while the main thread reads the suite, and the backend's load
joins it (`join`) before it builds the model. The thread only imports and starts CUDA, it builds nothing: the
model is then loaded as before, by the main thread, so a run's outcomes are the same; an import that failed in
the thread is imported again by the load, which raises the error it always did ("needs torch and transformers").
Opt-in, HINTER_EARLY_START=1: on the H200 (bench/issue43/E.sh, docs/gpu.md) it gained nothing, because
imports hold the interpreter lock and the main thread has under a second of other work to overlap (first call
16.8 s with it, 17.1 s without, 15.9 s for the tree before, two runs each); bench/startup.py compares the two.

What loads when: the load's phases (`timed`) go to the run's stats as `seconds_load_*` (the summary's `seconds`),
and with HINTER_TIMINGS=1 the first model call prints one line to stderr, `hinter startup: {...}` (JSON): the
seconds since the process started at which the model was asked first, and each phase's seconds.

Compiled bytecode kept (`keep_bytecode`): where Python may not write bytecode (PYTHONDONTWRITEBYTECODE, as on the
lent H200 machines) and torch was installed without it (no .pyc beside its sources), every process compiled
torch's and sympy's thousands of modules again: 14.3 s to import torch and transformers and start CUDA there, 8.7 s
with the bytecode kept (docs/gpu.md). The CLI then keeps it in hinter's cache folder, not beside the sources
(Python's own `sys.pycache_prefix`); HINTER_BYTECODE=0 leaves Python as it was.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from contextlib import contextmanager

EARLY_ENV = "HINTER_EARLY_START"
BYTECODE_ENV = "HINTER_BYTECODE"
TIMINGS_ENV = "HINTER_TIMINGS"
BACKENDS = ("hf", "hf-causal")  # the prefixes whose load imports torch and transformers

phases: dict[str, float] = {}  # the load's phases' seconds in this process (load_import, load_weights, ...)
_first_call: list[float] = []  # seconds since the process started when the model was first asked
_early: "EarlyStart | None" = None


def since_process_start() -> float:
    """Seconds since this process started (Linux: its start time in /proc; elsewhere since this module's import)."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: start time after boot, in clock ticks
        return time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return time.perf_counter() - _IMPORTED


_IMPORTED = time.perf_counter()


class EarlyStart:
    """A daemon thread importing torch, transformers and the model class's module, then starting CUDA where the
    model will run on it. It never raises: what failed is found again, and said, by the load."""

    def __init__(self, folder: str | None, cuda: bool, model_class: str):
        self.folder, self.cuda, self.model_class = folder, cuda, model_class
        self.seconds = 0.0
        self.thread = threading.Thread(target=self._run, name="hinter-early-start", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            import torch
            import transformers
            from transformers.utils import logging as hf_logging
            hf_logging.set_verbosity_error()
            # the model class's own module (modeling_bert...) and transformers' loading machinery, which the first
            # from_pretrained imports: resolved from the folder's config.json alone (read again by the load)
            auto = getattr(transformers, self.model_class)
            if self.folder is not None:
                config = transformers.AutoConfig.from_pretrained(self.folder, local_files_only=True)
                auto._model_mapping[type(config)]
            if self.cuda and torch.cuda.is_available():
                torch.cuda.init()
        except BaseException:  # noqa: BLE001 (the load imports it again and says what is wrong)
            pass
        finally:
            self.seconds = time.perf_counter() - t0


def bytecode_folder(environ, dont_write: bool, prefix: str | None, compiled) -> str | None:
    """Where this process should keep compiled bytecode, or None to leave Python as it is: only where Python may
    not write it (`dont_write`), no prefix was chosen, HINTER_BYTECODE is not 0, and the heavy package is installed
    (`compiled` not None) without its bytecode (`compiled` False; a function giving it is asked only then)."""
    if not dont_write or prefix or environ.get(BYTECODE_ENV, "1") == "0":
        return None
    if (compiled() if callable(compiled) else compiled) is not False:
        return None
    return os.path.join(environ.get("HINTER_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "hinter"),
                        "bytecode")


def _compiled(package: str) -> bool | None:
    """Whether `package`'s __init__ has bytecode beside it (None: not installed); found without importing it."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return os.path.exists(importlib.util.cache_from_source(spec.origin))


def keep_bytecode(package: str = "torch") -> str | None:
    """Keep the bytecode of what this process imports from now on in hinter's cache folder (read there by the next
    process) where `bytecode_folder` says so: the folder, or None. Called by the CLI before any command imports
    torch; a library user's process is left alone."""
    # the package is looked for only where the cheap tests pass: most processes may write bytecode
    folder = bytecode_folder(os.environ, sys.dont_write_bytecode, sys.pycache_prefix, lambda: _compiled(package))
    if folder is None:
        return None
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:  # a read-only home: compile each time, as before
        return None
    sys.pycache_prefix, sys.dont_write_bytecode = folder, False
    return folder


def begin(spec: str | None) -> None:
    """Start torch's import (and CUDA's start, unless the spec asks for another device) in the background when
    `spec` names an hf: or hf-causal: model; nothing otherwise, or with HINTER_EARLY_START=0. Only where this
    process forks no worker after it (a suite run: no parser to spread)."""
    global _early
    if _early is not None or not spec or os.environ.get(EARLY_ENV, "0") != "1":
        return
    prefix, _, rest = spec.partition(":")
    if prefix not in BACKENDS:
        return
    from hinter.models.registry import split_query
    folder, query = split_query(rest)
    device = dict(p.partition("=")[::2] for p in query.split("&")).get("device") if query else None
    model_class = "AutoModelForSequenceClassification" if prefix == "hf" else "AutoModelForCausalLM"
    _early = EarlyStart(folder if os.path.isfile(os.path.join(folder, "config.json")) else None,
                        device is None or device.startswith("cuda"), model_class)


def join() -> None:
    """Wait for the background start, if one was begun (the load then finds torch imported, CUDA started)."""
    if _early is not None:
        with timed("load_import"):
            _early.thread.join()


@contextmanager
def timed(phase: str):
    """Add the block's seconds to `phases[phase]`."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - t0


def phases_since(before: dict[str, float]) -> dict[str, float]:
    """The phases' seconds added since `before` (a copy of `phases`): one load's own."""
    return {k: v - before.get(k, 0.0) for k, v in phases.items() if v > before.get(k, 0.0)}


def first_call() -> None:
    """Called by a backend when it is first asked: with HINTER_TIMINGS=1 say, once, what the start-up took."""
    if _first_call:
        return
    _first_call.append(since_process_start())
    if os.environ.get(TIMINGS_ENV, "0") not in ("", "0"):
        line = {"first_call_at": round(_first_call[0], 3), "early_start": _early is not None,
                **({"early_thread": round(_early.seconds, 3)} if _early is not None else {}),
                **{k: round(v, 3) for k, v in phases.items()}}
        print("hinter startup: " + json.dumps(line), file=sys.stderr, flush=True)
