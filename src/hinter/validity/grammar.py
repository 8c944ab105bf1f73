"""A grammar score per text from an offline checker (Harper, `pip install 'hinter[grammar]'`), and the optional
second validity check built on it (`--grammar MAX_DROP`). Defined in docs/grammar.md.

The score of a text: 100 minus its grammar errors per 100 words, floored at 0 (100: no error found). Errors are
Harper's lints of the kinds in COUNTED_KINDS: grammar, agreement, articles, word choice, capitalisation. Spelling
is not counted (Harper flags names and rare words: "Okonkwo", "Zagros"), nor formatting, style or readability.

Each distinct sentence is linted once (cached, like the invariant's parses), in batches: sentences are joined by
blank lines and linted as one document (1.6 times faster than one call per sentence: 5.0 s against 8.3 s for the
457 sentences of bench/grammar_validity.py), each lint then given back to the sentence it starts in. A text's
errors and words are its sentences' sums.
"""
from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from typing import Iterable, Sequence

from hinter.errors import InputError
from hinter.validity.invariant import GRAMMAR
from hinter.validity.sentences import split_sentences

SCORE_VERSION = 1    # bump when the definition below changes (the fingerprint then changes)

# Harper's lint kinds (harper-core LintKind) that count as grammar errors.
COUNTED_KINDS = frozenset({
    "Agreement",       # "she go", "these kind of"
    "BoundaryError",   # "each and everyone"
    "Capitalization",  # a sentence or "i" in lower case
    "Eggcorn", "Malapropism",
    "Grammar",         # "had began"
    "Miscellaneous",   # "a apple", "more boring then"
    "Nonstandard",
    "Repetition",      # "the the"
    "Usage",           # "suppose to"
    "WordChoice",      # "not to be to critical"
})
# Not counted: Spelling and Typo (names and rare words: "Okonkwo", "selfpity"), Formatting (spaces, ellipses),
# Punctuation (a comma after "Instead"), Readability (sentence length), Style (the Oxford comma), Enhancement,
# Redundancy, Regionalism (British words).

_BLANK_LINE = re.compile(r"\n\s*\n")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def count_words(text: str) -> int:
    """Words: runs of letters and digits, an inner apostrophe kept ("don't" is one word)."""
    return sum(1 for _ in _WORD.finditer(text))


def score_from_counts(errors: int, words: int) -> float:
    """100 minus the errors per 100 words, floored at 0; a text without words scores 100."""
    if words <= 0:
        return 100.0
    return max(0.0, 100.0 - 100.0 * errors / words)


def checker_fingerprint() -> str:
    """The checker as a run records it: Harper's package version and this score's definition."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        v = version("harper-py")
    except PackageNotFoundError:
        v = "not-installed"
    return f"harper-py-{v}+score{SCORE_VERSION}"


class GrammarChecker:
    """Harper's linter with a cache of (errors, words) per sentence. Thread-safe: Harper's linter is not, so its
    calls and the cache are under one lock (one checker serves a process: `default_checker`)."""

    def __init__(self, cache_size: int = 200_000):
        try:
            from harper import Linter
        except ImportError:
            raise InputError("the grammar check needs the package harper-py", where="--grammar",
                             fix="pip install 'hinter[grammar]' (or pip install harper-py).") from None
        self._linter = Linter()
        self._cache: OrderedDict[str, tuple[int, int]] = OrderedDict()
        self._cache_size = cache_size
        self.fingerprint = checker_fingerprint()
        self.sentences_linted = 0
        self._lock = threading.Lock()

    def _lint(self, sentences: list[str]) -> list[tuple[int, int]]:
        """(errors, words) of each sentence, linted as one document of paragraphs."""
        starts, offset = [], 0
        for s in sentences:
            starts.append(offset)
            offset += len(s) + 2
        errors = [0] * len(sentences)
        for lint in self._linter.lint("\n\n".join(sentences), language="plaintext"):
            if lint.lint_kind in COUNTED_KINDS:
                errors[bisect_right(starts, lint.span.start) - 1] += 1
        self.sentences_linted += len(sentences)
        return [(e, count_words(s)) for e, s in zip(errors, sentences)]

    def counts(self, sentences: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(errors, words) of each distinct sentence: cached ones, the others linted in one batch."""
        sentences = list(sentences)
        with self._lock:
            return self._counts(sentences)

    def _counts(self, sentences: list[str]) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        todo: list[str] = []
        for s in dict.fromkeys(sentences):
            hit = self._cache.get(s)
            if hit is None:
                todo.append(s)
            else:
                self._cache.move_to_end(s)
                found[s] = hit
        # a sentence holding a blank line (one given directly, not from the splitter) would split the batch's
        # paragraphs: linted alone
        alone = [s for s in todo if _BLANK_LINE.search(s)]
        batch = [s for s in todo if s not in alone]
        results = list(zip(batch, self._lint(batch))) if batch else []
        results += [(s, self._lint([s])[0]) for s in alone]
        for s, value in results:
            found[s] = value
            self._cache[s] = value
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return found

    def score_sentences(self, sentences: Sequence[str]) -> float:
        """The score of these sentences read as one text."""
        counts = self.counts(sentences)
        return score_from_counts(sum(counts[s][0] for s in sentences), sum(counts[s][1] for s in sentences))

    def scores(self, texts: Sequence[str]) -> list[float]:
        """Each text's score; every distinct sentence of all of them is linted once, in one batch."""
        split = [split_sentences(t) for t in texts]
        self.counts(s for sentences in split for s in sentences)
        return [self.score_sentences(sentences) for sentences in split]

    def score(self, text: str) -> float:
        return self.scores([text])[0]

    def drops(self, mutants: Sequence[Sequence[tuple[str, str]] | None]) -> list[float | None]:
        """Per mutant, given its changed (original, mutated) sentence pairs: how far the mutated sentences' score
        falls below the original sentences' (negative: it rises); None when the pairs are not known."""
        self.counts(s for pairs in mutants if pairs for pair in pairs for s in pair)
        return [None if pairs is None else
                self.score_sentences([c for c, _ in pairs]) - self.score_sentences([m for _, m in pairs])
                for pairs in mutants]

    def reasons(self, mutants: Sequence[Sequence[tuple[str, str]] | None], max_drop: float) -> list[str | None]:
        """GRAMMAR for each mutant whose changed sentences score more than `max_drop` below the original's."""
        return [GRAMMAR if d is not None and d > max_drop else None for d in self.drops(mutants)]


_default: GrammarChecker | None = None
_default_lock = threading.Lock()


def default_checker() -> GrammarChecker:
    """One checker per process, made on first use (Harper builds its dictionary in about a second), then shared
    by every run, try and study of the process."""
    global _default
    with _default_lock:
        if _default is None:
            _default = GrammarChecker()
        return _default


def grammar_scores(texts: Sequence[str]) -> list[float]:
    """Each text's grammar score, 0-100 (docs/grammar.md)."""
    return default_checker().scores(list(texts))


def grammar_score(text: str) -> float:
    """A text's grammar score, 0-100: 100 minus its grammar errors per 100 words (docs/grammar.md)."""
    return default_checker().score(text)
