"""Python's cyclic garbage collector kept off the objects a run builds to keep.

A full collection scans every object that can hold references, and a run holds hundreds of thousands that live
on (a suite's mutants, the model's modules, the outcome cache, each batch's rows): on the 169,452-mutant IMDB
campaign the collections took about as long as the model stage. Objects freed by their reference count never
needed a collection; only cycles do, and the pieces paused here build few.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def keeping() -> Iterator[None]:
    """No collection while the block builds objects meant to live on (a suite, a model); then they are frozen out
    of later collections (gc.freeze: moved to the permanent generation, still freed by their reference count;
    cycles among them are not collected until the run's batch loop ends, `per_batch`).
    The collector is left enabled or not as it was."""
    with paused():
        try:
            yield
        finally:
            before = gc.get_freeze_count()
            gc.freeze()
            _ours[0] += gc.get_freeze_count() - before


# How many of the frozen objects this module froze (`keeping`, before a loop): a loop's end gives them back too.
_ours = [0]


@contextmanager
def per_batch() -> Iterator[Callable[[], None]]:
    """For a loop over batches: no collection inside a batch; `next_batch()`, called as each batch starts,
    collects once what the batches before it built (their cycles freed) and freezes the rest. Leaving gives every
    frozen object back to the collector (gc.unfreeze: a move, not a scan), unless something had frozen objects
    before the loop began (another library's freeze is left as it was): a process that goes on after a run
    (`hinter serve`, the Python API, a study) must not keep a heap whose cycles are never collected. The
    collector is left enabled or not as it was."""
    # frozen objects freed since count down: more than ours frozen means someone else froze some
    others_froze = gc.get_freeze_count() > _ours[0]

    def next_batch() -> None:
        gc.collect(0)
        gc.freeze()
    with paused():
        try:
            yield next_batch
        finally:
            next_batch()
            if not others_froze:
                gc.unfreeze()
                _ours[0] = 0


@contextmanager
def paused() -> Iterator[None]:
    """No collection while the block builds objects that its end frees by their reference count (the outputs'
    reads: a row per stored mutant, several times over): each collection would scan them and the whole heap of
    the process, which a finished run leaves large (on the 169,452-mutant campaign the collections took over a
    third of write_outputs' time). As a decorator (`@paused()`), the function's objects are freed before the
    collector is back, so that its next collection scans only what the function returned. The collector is left
    enabled or not as it was (`keeping` and `per_batch` pause it through this)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
