"""Stage 5: the metamorphic oracle (METHOD.md "The oracle"), pure functions over encoded outcomes.

Outcomes are canonical strings (see `Outcome.encode`); None is an unparseable outcome, which is never
counted as bias nor as no bias. With repeated calls (`--repeats`), `flip_with_repeats` is the oracle: a flip
needs the answers' distributions to differ beyond the model's own noise.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional, Sequence

from hinter.analysis.stats import ALPHA, fisher_exact

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


def answers_of(value, what: str) -> tuple:
    """One call's answer (a str, or None: unparseable) or several calls' answers, as a non-empty tuple."""
    if value is None or isinstance(value, str):
        return (value,)
    out = tuple(value)
    if not out:
        raise ValueError(f"{what}: no answer")
    return out


def _mode(answers: Sequence[str]) -> str:
    """The most frequent answer; ties go to the one given first."""
    return Counter(answers).most_common(1)[0][0]


def flip_with_repeats(original_answers: Sequence[str | None] | str | None,
                      mutant_answers: Sequence[str | None] | str | None, *, level: float = ALPHA) -> bool | None:
    """Whether a mutant's answers differ from its original's (None when either has no parseable answer).

    One answer each (a deterministic model): the outcomes differ. Several: the most frequent answers differ
    AND Fisher's exact test on (original's most frequent answer, any other) x (original, mutant) rejects equal
    answer distributions at `level` (two-sided). With 5 answers each, 5-0 against 0-5 or 1-4 is a flip, 4-1
    against 1-4 is not (p = 0.21): disagreements that the model's own noise explains are not counted.
    """
    o = [a for a in answers_of(original_answers, "original") if a is not None]
    m = [a for a in answers_of(mutant_answers, "mutant") if a is not None]
    if not o or not m:
        return None
    if len(o) == 1 and len(m) == 1:
        return o[0] != m[0]
    top = _mode(o)
    if _mode(m) == top:
        return False
    a, c = o.count(top), m.count(top)
    return fisher_exact(a, len(o) - a, c, len(m) - c) <= level
