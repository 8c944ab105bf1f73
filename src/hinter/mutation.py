"""Stage 2: atomic and intersectional mutants (METHOD.md "Terms").

All replacements of a mutant are applied at once on spans of the original text, so no replacement
can rewrite text that another one inserted. Combinations whose spans overlap are skipped and counted.
"""
from __future__ import annotations

import itertools
import random
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from .dictionary import Dictionary, Pair
from .records import Replacement, Span, apply_replacements, match_case
from .records import edits as edits_of

__all__ = ["Generation", "Mutant", "Replacement", "apply_replacements", "components", "find_pairs", "generate",
           "match_case"]


@dataclass(frozen=True)
class Mutant:
    text_id: int
    replacements: tuple[Replacement, ...]  # one per attribute, sorted by attribute
    original: str = field(repr=False, compare=False)

    @property
    def edits(self) -> list[tuple[int, int, str]]:
        """(start, end, replacement) on the original text, for every span of every replacement."""
        return edits_of(self.replacements)

    @cached_property
    def text(self) -> str:
        """The mutated text, built on first use: validity works sentence by sentence and rarely needs it."""
        return apply_replacements(self.original, self.edits)

    @property
    def order(self) -> int:
        return len(self.replacements)

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(r.attribute for r in self.replacements)

    @property
    def key(self) -> tuple[str, ...]:
        """Identifies the mutant within its text: the ids of its pairs."""
        return tuple(r.pair_id for r in self.replacements)


@dataclass
class Generation:
    """The mutants of one text, and the combinations skipped because their spans overlap."""

    mutants: list[Mutant] = field(default_factory=list)
    overlaps_skipped: int = 0


def find_pairs(text: str, dictionary: Dictionary) -> list[tuple[Pair, tuple[Span, ...]]]:
    """The dictionary pairs whose word occurs in `text`, with the occurrences' spans (one matcher pass)."""
    found = dictionary.matcher.find(text)
    by_word = dictionary.pairs_by_word
    return [(pair, spans) for word, spans in found.items() for pair in by_word[word]]


def _replacement(pair: Pair, spans: tuple[Span, ...]) -> Replacement:
    return Replacement(pair.attribute, pair.source_group, pair.target_group, pair.word, pair.replacement, spans)


def _overlap(spans_a: tuple[Span, ...], spans_b: tuple[Span, ...]) -> bool:
    return any(a0 < b1 and b0 < a1 for a0, a1 in spans_a for b0, b1 in spans_b)


def generate(text_id: int, text: str, dictionary: Dictionary, attributes: tuple[str, ...], order: int,
             max_pairs_per_text: int | None = None, seed: int = 0) -> Generation:
    """Atomic mutants for each attribute, then intersectional ones of order 2..`order` over distinct attributes.

    `max_pairs_per_text`: keep a seeded sample of at most that many of the pairs present in this text, per
    attribute (None: all); every intersectional mutant's components stay in the run.
    """
    by_attribute: dict[str, list[Replacement]] = defaultdict(list)
    for pair, spans in find_pairs(text, dictionary):
        if pair.attribute in attributes:
            by_attribute[pair.attribute].append(_replacement(pair, spans))
    for attribute, reps in by_attribute.items():
        reps.sort(key=lambda r: r.pair_id)
        if max_pairs_per_text is not None and len(reps) > max_pairs_per_text:
            rng = random.Random(f"{seed}:{text_id}:{attribute}")
            reps[:] = sorted(rng.sample(reps, max_pairs_per_text), key=lambda r: r.pair_id)
    gen = Generation()
    present = sorted(by_attribute)
    for k in range(1, min(order, len(present)) + 1):
        for attrs in itertools.combinations(present, k):
            for combo in itertools.product(*(by_attribute[a] for a in attrs)):
                if k > 1 and any(_overlap(a.spans, b.spans) for a, b in itertools.combinations(combo, 2)):
                    gen.overlaps_skipped += 1
                    continue
                gen.mutants.append(Mutant(text_id, combo, text))
    return gen


def components(mutant: Mutant) -> list[tuple[str, ...]]:
    """Keys of every proper, non-empty sub-combination of an intersectional mutant (atomic ones first)."""
    reps = mutant.replacements
    return [tuple(r.pair_id for r in sub) for k in range(1, len(reps)) for sub in itertools.combinations(reps, k)]
