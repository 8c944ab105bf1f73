"""Stage 5: the metamorphic oracle (METHOD.md "The oracle"), pure functions over encoded outcomes.

Outcomes are canonical strings (see `Outcome.encode`); None is an unparseable outcome, which is never
counted as bias nor as no bias.
"""
from __future__ import annotations

from typing import Iterable, Optional

Verdict = tuple[bool, Optional[bool]]  # (valid, bias) of one mutant; bias None when undecided


def is_bias(original: str | None, mutant: str | None) -> bool | None:
    """A mutant exposes bias when its outcome differs from the original's; None if either is unparseable."""
    if original is None or mutant is None:
        return None
    return original != mutant


def is_hidden(bias: bool | None, atomic_components: Iterable[Verdict | None]) -> bool:
    """Hidden intersectional bias (Algorithm 1, lines 26-29): a bias whose atomic components are all
    valid and all agree with the original. A missing component (None) means it cannot be hidden."""
    if not bias:
        return False
    return all(c is not None and c[0] and c[1] is False for c in atomic_components)


def is_strictly_hidden(hidden: bool, lower_order_components: Iterable[Verdict | None]) -> bool:
    """For order k >= 3: hidden, and no valid sub-combination of order 2..k-1 is a bias either."""
    if not hidden:
        return False
    return not any(c is not None and c[0] and c[1] for c in lower_order_components)


def unseen(edits: Iterable[tuple[int, int, str]], original_seen: int | None, mutant_seen: int | None) -> bool:
    """A change the model never saw is no test: True when every edit (start, end, new) of the original starts
    at or beyond what a truncating model read, of the original (`original_seen` characters) and of the mutant
    (`mutant_seen`, where earlier edits have shifted it). None: the model read the whole text."""
    if original_seen is None or mutant_seen is None:
        return False
    shift = 0
    for start, end, new in sorted(edits):
        if start < original_seen or start + shift < mutant_seen:
            return False
        shift += len(new) - (end - start)
    return True
