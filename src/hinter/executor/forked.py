"""Tasks spread over forked worker processes of this machine (`hinter suite build --workers N`).

The workers are forked once the driver holds everything a task needs (the campaign's settings, dictionary and
loaded parser): nothing is loaded again in a worker, and a task travels as its payload alone. Each worker has its
own pipe, as the spaCy workers do (validity/parsers.py): no lock or queue is shared, so a worker killed at any
moment is an error naming it, never a hang. A thread of the driver sends the tasks, one at a time to each idle
worker, in the order it is given (the costliest first, say), and reads the answers while the driver's own
thread writes what came before.
"""
from __future__ import annotations

import gc
import heapq
import multiprocessing
import queue
import signal
import threading
import weakref
from multiprocessing.connection import wait
from typing import Any, Callable, Iterator, Sequence

from hinter.errors import ModelError
from hinter.validity.parsers import stop_workers

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _serve(conn, functions: dict[str, Callable], inherited: list) -> None:
    """A worker: answers (task, kind, payload) with (task, "ok", functions[kind](payload)) or (task, "error", the
    exception) until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the driver alone handles it and stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    for c in inherited:  # the driver's ends of the pipes: its exit must read as end of file here
        c.close()
    # As the driver's batches (gcpause.per_batch): no collection inside a task, one young collection after it,
    # and what lives on frozen out of later ones (the inherited heap was frozen across the fork, ForkedPool).
    gc.disable()
    while True:
        try:
            task, kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = (task, "ok", functions[kind](payload))
        except Exception as e:
            reply = (task, "error", e)
        try:
            conn.send(reply)
        except OSError:  # the driver is gone
            return
        except Exception as e:  # an answer or an exception that does not pickle
            conn.send((task, "error", RuntimeError(f"{type(e).__name__}: {e} (in a worker: {reply[2]!r:.300})")))
        reply = None
        gc.collect(0)
        gc.freeze()


class ForkedPool:
    """`n` forked workers; `functions` (inherited by the fork, never pickled) are what a task may call."""

    def __init__(self, n: int, functions: dict[str, Callable[[Any], Any]]):
        ctx = multiprocessing.get_context("fork")
        self.procs: list = []
        self.conns: list = []
        self.stop = weakref.finalize(self, stop_workers, self.procs, self.conns)
        # Blocked across the forks: a worker never runs the driver's handlers before _serve sets its own.
        blocking = hasattr(signal, "pthread_sigmask")
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS) if blocking else None
        # The driver's heap (the parser's model, the dictionary) frozen across the forks: a worker's collections
        # never scan it, nor touch its pages (which would copy them into every worker). The driver's own is
        # given back to its collector at once (gc.unfreeze moves, it does not scan).
        frozen = gc.get_freeze_count()
        gc.freeze()
        try:
            for _ in range(n):
                parent, child = ctx.Pipe()
                self.conns.append(parent)
                p = ctx.Process(target=_serve, args=(child, functions, list(self.conns)), name="hinter-build",
                                daemon=True)
                p.start()
                self.procs.append(p)
                child.close()
        finally:
            if not frozen:  # nothing was frozen before (by gcpause or a library): none is left frozen here
                gc.unfreeze()
            if blocking:
                signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def run(self, tasks: Sequence[tuple], then: Callable[[int, Any, int], list] | None = None
            ) -> Iterator[tuple[int, Any]]:
        """(index, result) for each task (kind, payload), as the workers finish them; sent in the order given.
        `then(index, result, worker)`, called in this pool's thread, may answer a result with more tasks, numbered
        after those before: (kind, payload, worker, cost), sent after the tasks given, the costliest first, or,
        with a worker, to that worker (which kept what the task needs) before anything else. A worker's exception
        is raised here."""
        every = list(tasks)
        answers: queue.Queue = queue.Queue()
        stopping = threading.Event()

        def dispatch() -> None:
            busy: dict[int, int] = {}  # a worker -> the task it holds
            waiting = _Waiting(len(every), len(self.conns))

            def give(w: int) -> None:
                task = None if w in busy else waiting.next(w)
                if task is not None:
                    self.conns[w].send((task, *every[task][:2]))
                    busy[w] = task
            try:
                for w in range(len(self.conns)):
                    give(w)
                while busy and not stopping.is_set():
                    for conn in wait([self.conns[w] for w in busy]):
                        w = self.conns.index(conn)
                        try:
                            task, status, value = conn.recv()
                        except (EOFError, OSError):
                            raise self._died(w) from None
                        del busy[w]
                        if status == "ok" and then is not None:
                            for follow in then(task, value, w):
                                every.append(follow)
                                waiting.add(len(every) - 1, *follow[2:])
                        for idle in [w] + [v for v in range(len(self.conns)) if v != w]:
                            give(idle)  # the next task first: the worker works while this answer is passed on
                        answers.put((task, status, value))
            except BaseException as e:  # noqa: BLE001 - passed to the driver's thread, which raises it
                answers.put((None, "error", e))
            answers.put((None, "done", None))

        thread = threading.Thread(target=dispatch, name="hinter-build-dispatch", daemon=True)
        thread.start()
        try:
            while True:
                task, status, value = answers.get()
                if status == "error":
                    raise value
                if status == "done":
                    return
                yield task, value
        finally:  # stopped early (an error): the thread sends nothing more; closing the pool ends it
            stopping.set()

    def _died(self, w: int) -> ModelError:
        p = self.procs[w]
        p.join(timeout=1)
        return ModelError(f"a worker process of the suite build stopped (exit code {p.exitcode})",
                          fix="It may have run out of memory: try fewer processes (--workers), then build again.")

    def close(self) -> None:
        self.stop()


class _Waiting:
    """The tasks not yet sent: a worker's own first, then those given, in order, then follow-ups, the costliest
    first."""

    def __init__(self, given: int, workers: int):
        self.given, self.next_given = given, 0
        self.costly: list[tuple[float, int]] = []  # a heap of (-cost, task)
        self.pinned: list[list[int]] = [[] for _ in range(workers)]

    def add(self, task: int, worker: int | None = None, cost: float = 0) -> None:
        if worker is not None:
            self.pinned[worker].append(task)
        else:
            heapq.heappush(self.costly, (-cost, task))

    def next(self, worker: int) -> int | None:
        if self.pinned[worker]:
            return self.pinned[worker].pop(0)
        if self.next_given < self.given:
            self.next_given += 1
            return self.next_given - 1
        return heapq.heappop(self.costly)[1] if self.costly else None


def run_here(function: Callable[[str, Any], Any], tasks: Sequence[tuple],
             then: Callable[[int, Any, int], list] | None = None) -> Iterator[tuple[int, Any]]:
    """ForkedPool.run in this process (worker 0), one task at a time, in the same order: `function(kind, payload)`."""
    every = list(tasks)
    waiting = _Waiting(len(every), 1)
    while (task := waiting.next(0)) is not None:
        value = function(*every[task][:2])
        if then is not None:
            for follow in then(task, value, 0):
                every.append(follow)
                waiting.add(len(every) - 1, *follow[2:])
        yield task, value
