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
    cycles among them are not collected until a gc.unfreeze()).
    The collector is left enabled or not as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


@contextmanager
def per_batch() -> Iterator[Callable[[], None]]:
    """For a loop over batches: no collection inside a batch; `next_batch()`, called as each batch starts,
    collects once what the batches before it built (their cycles freed) and freezes the rest; so does leaving.
    Frozen objects stay frozen: giving them back (gc.unfreeze) costs a full collection over everything, torch's
    and transformers' modules included (seconds); cycles among them, which hinter's records do not make, would
    wait for that. The collector is left enabled or not as it was."""
    enabled = gc.isenabled()
    gc.disable()

    def next_batch() -> None:
        gc.collect(0)
        gc.freeze()
    try:
        yield next_batch
    finally:
        next_batch()
        if enabled:
            gc.enable()
