"""A `python:` model run in a worker process, so that the model cannot end hinter.

The model's code runs in a child process (worker_main.py) that the driver talks to through a pipe: an exception,
`sys.exit(0)` or `sys.exit(3)` in it is a model error for the texts of that call, never hinter's exit code; a crash
(`os._exit`, a segfault) or a call that outlives the spec's `timeout` is a model error too, and the worker is
stopped and started again for the next call (a call that takes long is said in the progress by base.stall_watch,
for every backend).
The model object the executor gets is a CallableModel like an in-process one: same fingerprint, same outcomes.
This module registers the `python:` backend (its spec, options and loader); callable.py is the in-process model.
"""
from __future__ import annotations

import importlib
import logging
import os
import re
import subprocess
import sys
import time
import weakref
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

from hinter.errors import InputError, ModelError
from hinter.models.tasks import split_task
from hinter.models.base import CallTimeout
from hinter.models.callable import SOURCE_MARK, CallableModel, code_hash, source_files
from hinter.models.registry import Backend, Option, register_backend

MAIN = Path(__file__).with_name("worker_main.py")
INTERRUPT_GRACE_S = 3.0  # after Ctrl-C, how long the call in flight may take to bring its answers


class Worker:
    """One worker process of a model's function: started, asked, stopped."""

    def __init__(self, module: str, attr: str):
        self.module, self.attr = module, attr
        # -P: the worker's own folder is not put first on its path (its file names would shadow modules)
        self.proc = subprocess.Popen([sys.executable, "-P", str(MAIN)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, close_fds=True)
        self.outbox, self.inbox = Connection(os.dup(self.proc.stdin.fileno())), Connection(
            os.dup(self.proc.stdout.fileno()))
        self.proc.stdin.close()
        self.proc.stdout.close()
        self._finalizer = weakref.finalize(self, _stop, self.proc, self.outbox, self.inbox)
        self.outbox.send({"path": list(sys.path), "module": module, "attr": attr})

    def receive(self, timeout: float | None, what: str):
        """The worker's next message; ModelError when it ends first or `timeout` passes (it is then stopped)."""
        start = time.monotonic()
        while True:
            waited = time.monotonic() - start
            step = 0.5 if timeout is None else max(0.0, min(0.5, timeout - waited))
            try:
                if self.inbox.poll(step):
                    return self.inbox.recv()
            except (EOFError, OSError):  # the worker is gone: wait for its exit code
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            code = self.proc.poll()
            if code is not None:
                self.stop()
                raise ModelError(f"the model's worker process ended (exit code {code}) while {what}: it is started "
                                 "again for the next call")
            waited = time.monotonic() - start
            if timeout is not None and waited >= timeout:
                self.proc.kill()  # hung: it would not read a polite close
                self.stop()
                raise CallTimeout(f"no answer within the timeout of {timeout:g} s while {what}: the model's worker "
                                 "was stopped and is started again for the next call")

    def last_reply(self, grace: float, texts: int):
        """After Ctrl-C: the call's reply if it comes within `grace` seconds (a call that was completing is not
        lost), else None. A second Ctrl-C stops at once (cli.main)."""
        try:
            if self.inbox.poll(0):
                return self.inbox.recv()
            logging.getLogger("hinter").warning("stopping: waiting up to %g s for the model's call on %d texts to "
                                                "keep its answers (Ctrl-C again stops at once)", grace, texts)
            if self.inbox.poll(grace):
                return self.inbox.recv()
        except (EOFError, OSError):
            pass
        return None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self._finalizer()


def _stop(proc: subprocess.Popen, outbox: Connection, inbox: Connection) -> None:
    try:
        if proc.poll() is None:
            try:
                outbox.send(("close",))
                proc.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    finally:
        outbox.close()
        inbox.close()


class WorkerModel(CallableModel):
    """A `python:module:function` model whose function runs in a worker process (see the module's docstring)."""

    def __init__(self, spec: str, module: str, attr: str, task=None, timeout: float | None = None,
                 batch_size: int = 64):
        self.spec, self.timeout = spec, timeout
        self.batch_size = batch_size
        self.task, self.label_task = split_task(task)
        self.worker = self._start(module, attr)
        self.function = None  # in the worker
        digest = code_hash(self.source_files)
        self.fingerprint = "python:" + spec + (SOURCE_MARK + digest if digest else "")

    def _start(self, module: str, attr: str) -> Worker:
        worker = Worker(module, attr)
        try:
            reply = worker.receive(None, f"importing {module}")
        except ModelError as e:
            raise InputError(f"cannot load the model python:{self.spec} ({e.message})", where="--model",
                             fix="Import the module in Python to see why it fails, and fix it.") from None
        if reply[0] == "import_error":
            worker.stop()
            raise InputError(f"cannot import module {module!r} ({reply[1]})", where="--model",
                             fix=f"Run from the folder holding {module.replace('.', '/')}.py, set PYTHONPATH to "
                                 "it, or install the package.")
        if reply[0] != "ready":
            worker.stop()
            problem = (reply[1].removeprefix("LookupError: ") if reply[1].startswith("LookupError")
                       else f"module {module!r} failed while imported: {reply[1]}")
            raise InputError(problem, where="--model",
                             fix="Name a function that takes a list of texts and returns one outcome per text.")
        _, name, file = reply
        self.source_files = source_files(SimpleNamespace(__name__=name, __file__=file)) if name and file else []
        return worker

    def _call(self, texts: list[str]) -> Sequence[object]:
        if not self.worker.alive:  # stopped after a crash or a timeout: a new one for this call
            self.worker = self._start(self.worker.module, self.worker.attr)
        try:
            self.worker.outbox.send(("predict", texts))
        except OSError:
            self.worker.stop()
            raise ModelError("the model's worker process ended before it was asked: it is started again") from None
        try:
            reply = self.worker.receive(self.timeout, f"answering {len(texts)} texts")
        except ModelError:
            raise
        except BaseException as e:  # Ctrl-C or SIGTERM: the call's answers, if they come at once, are kept
            reply = self.worker.last_reply(INTERRUPT_GRACE_S, len(texts))
            if reply is not None and reply[0] == "ok":
                e.answers = reply[1]
            self.worker.proc.kill()  # whatever it was doing: the run is stopping (no polite close to wait for)
            self.worker.stop()
            raise
        if reply[0] == "error":
            raise ModelError(reply[1])
        return reply[1]

    def close(self) -> None:
        self.worker.stop()


# ---------------------------------------------------------------- the python: backend

def load_callable(spec: str, task=None, timeout: float | None = None, process: str = "worker", **_) -> CallableModel:
    """`package.module:function` -> CallableModel (`task`: a task or its name; a generative one makes the function's
    strings answers), run in a worker process (models/worker.py: the model cannot end hinter; `timeout`: seconds a
    call may take) unless `process` is "inline". A recorded fingerprint (`...@source=HASH`) reads as its spec."""
    spec = re.sub(re.escape(SOURCE_MARK) + r"[0-9a-f]+$", "", spec)
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise InputError(f"cannot read the model spec 'python:{spec}'", where="--model",
                         fix="Write python:package.module:function, e.g. python:mymodels.sentiment:predict.")
    # `python -m` puts the current folder on the path but the `hinter` script does not: a user's
    # biased_model.py beside them must import all the same (it is searched last, after installed packages).
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    if isinstance(task, str):
        from hinter.models.tasks import get_task
        task = get_task(task)
    if process == "worker":
        return WorkerModel(spec, module_name, attr, task=task, timeout=timeout)
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
    return CallableModel(function, spec, task=task)


OPTIONS = (
    Option("timeout", None, "seconds one call may take before it is a model error (the worker is restarted)",
           kind=float, minimum=0.001, auto="none"),
    Option("process", "worker", "worker (the function runs in a worker process: its exit, crash or hang cannot "
           "end hinter) or inline (in hinter's own process, no timeout)", kind=str, pattern="worker|inline"),
)
BACKEND = register_backend(Backend(
    prefix="python", loader=lambda rest, task=None, **options: load_callable(rest, task, **options),
    usage="python:package.module:function", summary="a function from a list of texts to one label per text",
    example="python:mymodels.sentiment:predict", options=OPTIONS))
