"""The worker process of a `python:` model (models/worker.py starts it, by path: hinter is not imported here
unless the model's own code imports it). It imports the model's function, then answers one batch of texts per
message. Whatever the model's code does (raise, sys.exit, print) comes back as a message; only a crash or a hang
ends this process, and the driver then records a model error and starts another one.

Messages (multiprocessing.connection, pickled): in, {"path", "module", "attr"} then ("predict", texts) or
("close",); out, ("ready", module name, module file) or ("import_error" | "error", text), then ("ok", answers) or
("error", text) per batch.
"""
import functools
import importlib
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection


def describe(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"SystemExit: the model's code called sys.exit({e.code!r})"
    return f"{type(e).__name__}: {e}"


def watch_parent(parent: int) -> None:
    """End this process when the driver is gone (killed while the model hangs: no one would read its answer)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def resolve(module_name: str, attr: str):
    function = importlib.import_module(module_name)
    for part in attr.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise LookupError(f"module {module_name!r} has no attribute {attr!r}")
    if not callable(function):
        raise LookupError(f"{module_name}:{attr} is not callable")
    return function


def main() -> None:
    # Ctrl-C and a SIGTERM to the process group are the driver's to handle: it stops this process when it ends
    # (and this process ends itself when the driver is gone: watch_parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    inbox, outbox = Connection(os.dup(0)), Connection(os.dup(1))
    # the model's prints go to stderr and its reads of stdin find nothing: the channel stays the driver's
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    init = inbox.recv()
    sys.path[:] = init["path"]
    try:
        function = resolve(init["module"], init["attr"])
    except ImportError as e:
        outbox.send(("import_error", str(e)))
        return
    except BaseException as e:  # the module raised (or exited) while imported
        outbox.send(("error", describe(e)))
        return
    inner = function.func if isinstance(function, functools.partial) else function
    module = sys.modules.get(getattr(inner, "__module__", None) or "")
    outbox.send(("ready", getattr(module, "__name__", None), getattr(module, "__file__", None)))
    while True:
        try:
            message = inbox.recv()
        except EOFError:
            return
        if message[0] != "predict":
            return
        try:
            reply = ("ok", list(function(message[1])))
        except BaseException as e:  # SystemExit and KeyboardInterrupt included: an error of these texts
            reply = ("error", describe(e))
        try:
            outbox.send(reply)
        except Exception as e:  # an answer that cannot be pickled
            outbox.send(("error", f"the model's answers cannot be sent back ({describe(e)})"))


if __name__ == "__main__":
    main()
