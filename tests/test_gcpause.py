"""hinter.pipeline.gcpause: the collector paused and restored as it was; cycles built inside a batch are freed by the next."""
import gc
import weakref

from hinter.pipeline.gcpause import keeping, paused, per_batch


class Node:
    pass


def test_collector_left_as_it_was():
    assert gc.isenabled()
    with keeping():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with per_batch() as next_batch:
            next_batch()
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with per_batch():
        pass
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_batch_cycle_is_freed_by_the_next_batch():
    with per_batch() as next_batch:
        next_batch()
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        gone = weakref.ref(a)
        del a, b
        assert gone() is not None  # no collection inside a batch
        next_batch()
        assert gone() is None


def test_the_frozen_objects_are_given_back_when_the_loop_ends():
    """A process that goes on after a run (hinter serve, the Python API) collects its cycles again: what a model's
    load and the batches froze is unfrozen when the loop ends; a freeze made by someone else before is kept."""
    assert gc.get_freeze_count() == 0
    with keeping():
        kept = [Node() for _ in range(10)]
    assert gc.get_freeze_count() > 0
    with per_batch() as next_batch:
        next_batch()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    a, b = Node(), Node()
    a.other, b.other = b, a
    gc.freeze()  # another library's freeze
    try:
        with per_batch() as next_batch:
            next_batch()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    del kept
