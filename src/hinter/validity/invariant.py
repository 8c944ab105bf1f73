"""Algorithm 4 (`tolerant_compare`), Algorithm 3 (`invariant_check`) and the validators that apply them.

`Validator` is the engine: each distinct sentence is parsed once (cached), each (original sentence,
mutated sentence) verdict is computed once (cached), and mutants are decided in rounds: every pending
mutant's first undecided changed sentence is parsed in one batch, and a mutant stops at its first
failing sentence. The verdicts equal Algorithm 3's. `ReferenceValidator` is the reference tool's loop,
kept for comparison: one mutant at a time, every changed sentence parsed alone.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from typing import Callable, Sequence

from hinter.records import apply_replacements
from hinter.validity.parsers import Parse, Parser, known_parses
from hinter.validity.sentences import boundaries_kept, split_sentences

SentencePair = tuple[str, str]

# Why a mutant was discarded (None: it is valid). The first three follow Algorithm 3's comparisons: the sentence
# counts differ, a changed sentence's part-of-speech tags differ, or its dependency labels do; `too_long` only in
# `--validity reference` (a changed sentence over its 500-character limit); `grammar` only with `--grammar` (the
# second check, validity/grammar.py: the changed sentences' grammar score fell too far).
# `agreement` only in a language with grammatical gender (--language fr, docs/languages.md): a word whose gender or
# number no longer agrees with its head (checked first: such a sentence's tags are garbled too, and the reason should
# name the cause); `inflection`, decided at mutation: a word that had to follow the change and could not (French: a
# word it cannot inflect; English: a pronoun whose person the mutant may leave unchanged, languages/english.py);
# `self_comparison`, decided at mutation in every language: the new word is already in the sentence as another word
# of the same attribute, so the sentence compares a group with itself (mutation.mutants.self_comparison).
SENTENCE_COUNT, POS, DEPS, TOO_LONG, GRAMMAR = "sentence_count", "pos", "deps", "too_long", "grammar"
AGREEMENT, INFLECTION, SELF_COMPARISON = "agreement", "inflection", "self_comparison"
DISCARD_REASONS = (SENTENCE_COUNT, POS, DEPS, TOO_LONG, GRAMMAR, AGREEMENT, INFLECTION, SELF_COMPARISON)


def tolerant_compare(s1: Sequence[str], s2: Sequence[str]) -> bool:
    """Paper Algorithm 4 (tolerantTableComp), transcribed line by line."""
    is1, is2 = 0, 0
    st1, st2 = len(s1), len(s2)
    error_limit = abs(st1 - st2)
    error, shift = 0, 0
    while is1 < st1 and is2 < st2:
        if s1[is1] != s2[is2]:
            error += 1
            if shift < error_limit:
                shift += 1
                if st1 > st2:
                    is1 += 1
                elif st1 < st2:
                    is2 += 1
        is1 += 1
        is2 += 1
    error += (st1 - is1) + (st2 - is2)
    return error <= error_limit


def parses_conform(original: Parse, mutant: Parse) -> bool:
    """Algorithm 3, lines 14-21, for one sentence: tags first, then dependency labels."""
    return tolerant_compare(original.tags, mutant.tags) and tolerant_compare(original.deps, mutant.deps)


def discard_reason(original: Parse, mutant: Parse) -> str | None:
    """`parses_conform`, saying which comparison failed: AGREEMENT (a language with the check), POS, DEPS, or None
    when the sentence conforms."""
    if disagreements(original.features, mutant.features):
        return AGREEMENT
    return _compare((original.tags, mutant.tags), (original.deps, mutant.deps), original.features, mutant.features)


def disagreements(original, mutant) -> list[str]:
    """The relations of the original sentence's agreement features that agreed and no longer do in the mutant's
    (the language's features compare themselves: languages.Language.features); [] for a language without them."""
    return original.disagreements(mutant) if original else []


def _compare(tags, deps, fo, fm) -> str | None:
    """POS, DEPS or None; a language with agreement features (French) first has its parser's known flips at the
    changed words made equal (the features' `relaxed`)."""
    if fo:
        tags, deps = fo.relaxed(tags, deps, fm)
    if not tolerant_compare(*tags):
        return POS
    return None if tolerant_compare(*deps) else DEPS


def changed_sentences(original: str | list[str], mutant: str | list[str]) -> list[SentencePair] | None:
    """The (original, mutated) sentence pairs that differ; None when the sentence counts differ."""
    cs = split_sentences(original) if isinstance(original, str) else original
    ms = split_sentences(mutant) if isinstance(mutant, str) else mutant
    if len(cs) != len(ms):
        return None
    return [(c, m) for c, m in zip(cs, ms) if c != m]


def changed_sentence_pairs(original: str, spans: list[tuple[int, int]], sentences: list[str],
                           edits: list[tuple[int, int, str]]) -> list[SentencePair] | None:
    """`changed_sentences(original, mutant)` for the mutant made by `edits` on `original`, computed sentence
    by sentence: only the sentences holding an edit are rebuilt, and the mutant is never split as a whole
    unless an edit could move a sentence boundary. `spans`/`sentences`: the original's, from `sentence_spans`."""
    starts = [a for a, _ in spans]
    per_sentence: dict[int, list[tuple[int, int, str]]] = {}
    local = boundaries_kept(original, edits)
    if local:
        for start, end, new in edits:
            k = bisect_right(starts, start) - 1
            if k < 0 or end > spans[k][1]:  # an edit outside every sentence (in a boundary's text)
                local = False
                break
            per_sentence.setdefault(k, []).append((start - spans[k][0], end - spans[k][0], new))
    if not local:
        return changed_sentences(sentences, apply_replacements(original, edits))
    pairs = []
    for k in sorted(per_sentence):
        mutated = apply_replacements(sentences[k], per_sentence[k])
        if mutated != sentences[k]:
            pairs.append((sentences[k], mutated))
    return pairs


def invariant_check(original: str, mutant: str, parse: Callable[[str], Parse]) -> bool:
    """Paper Algorithm 3 (InvCheck), for one text; `parse` maps one sentence to its Parse."""
    pairs = changed_sentences(original, mutant)
    if pairs is None:
        return False
    return all(parses_conform(parse(c), parse(m)) for c, m in pairs)


class _LRU(OrderedDict):
    """A dict that forgets its least recently used entries beyond `limit` (memory stays bounded)."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def get_recent(self, key):
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.limit:
            self.popitem(last=False)


class Validator:
    """The fast engine. `validate` takes, per mutant, its changed sentence pairs (None: sentence counts differ).

    Each round asks, for every pending mutant, its first changed sentences whose verdict is unknown (one in
    the first round, then twice as many each round); the distinct sentences of a round are tagged in one
    batch, and only those in pairs whose tags passed are then given dependency labels (a second batch).
    """

    def __init__(self, parser: Parser, parse_cache_size: int = 200_000, verdict_cache_size: int = 1_000_000):
        self.parser = parser
        self._tags: _LRU = _LRU(parse_cache_size)    # sentence -> tags
        self._deps: _LRU = _LRU(parse_cache_size)    # sentence -> (dependency labels, agreement features)
        self._verdicts: _LRU = _LRU(verdict_cache_size)
        self.sentences_tagged = 0
        self.sentences_parsed = 0  # given dependency labels

    def _lookup(self, cache: _LRU, sentences: set[str], compute) -> dict[str, tuple[str, ...]]:
        """Values for `sentences`: cached ones, and the others computed in one batch (and cached)."""
        found = {s: v for s in sentences if (v := cache.get_recent(s)) is not None}
        todo = [s for s in sentences if s not in found]
        self._last_computed = len(todo)
        if todo:
            for s, v in zip(todo, compute(todo)):
                found[s] = v
                cache.put(s, v)
        return found

    def _known(self, sentences: list[str], method: str) -> list:
        """The parser's `tag` or `parse` of `sentences`, those parsed already in this process (an original's sentences
        at English mutation: languages.parses.remember_parses) taken from there; counted as tagged or parsed all the same."""
        known = known_parses(getattr(self.parser, "fingerprint", None), sentences)
        missing = [s for s, k in zip(sentences, known) if k is None]
        fresh = iter(getattr(self.parser, method)(missing) if missing else ())
        return [next(fresh) if k is None else (k.tags if method == "tag" else k) for k in known]

    def _judge(self, asked: set[SentencePair]) -> dict[SentencePair, bool | str]:
        """Compute (and cache) the verdict of each asked (original, mutated) sentence pair: True when it
        conforms, else the reason (POS or DEPS), which costs nothing: it is the comparison that failed."""
        result: dict[SentencePair, bool | str] = {}
        tags = self._lookup(self._tags, {s for pair in asked for s in pair}, lambda todo: self._known(todo, "tag"))
        self.sentences_tagged += self._last_computed
        # a language with the agreement check parses every asked pair: agreement is judged first
        agreement = getattr(self.parser, "agreement", False)
        passing = [(c, m) for c, m in asked if agreement or tolerant_compare(tags[c], tags[m])]
        for pair in asked.difference(passing):
            result[pair] = POS
        parsed = self._lookup(self._deps, {s for pair in passing for s in pair},
                              lambda todo: [(p.deps, p.features) for p in self._known(todo, "parse")])
        self.sentences_parsed += self._last_computed
        for c, m in passing:
            (dc, fc), (dm, fm) = parsed[c], parsed[m]
            result[(c, m)] = AGREEMENT if disagreements(fc, fm) else \
                _compare((tags[c], tags[m]), (dc, dm), fc, fm) or True
        for pair, verdict in result.items():
            self._verdicts.put(pair, verdict)
        return result

    def disagree(self, mutants: Sequence[list[SentencePair] | None]) -> list[bool]:
        """Per mutant (its changed sentence pairs), whether a relation that agreed in its original no longer does:
        the agreement check alone, for a rewrite whose structure the POS comparison cannot judge (the audit's
        French descriptor is inserted; its renderings are compared with one another, not with the original)."""
        sentences = {s for pairs in mutants if pairs for pair in pairs for s in pair}
        parsed = self._lookup(self._deps, sentences, lambda todo: [(p.deps, p.features)
                                                                    for p in self.parser.parse(todo)])
        return [bool(pairs) and any(disagreements(parsed[c][1], parsed[m][1]) for c, m in pairs)
                for pairs in mutants]

    def validate(self, mutants: Sequence[list[SentencePair] | None]) -> list[bool]:
        """Per mutant, whether it passes Algorithm 3."""
        return [r is None for r in self.reasons(mutants)]

    def reasons(self, mutants: Sequence[list[SentencePair] | None]) -> list[str | None]:
        """Per mutant, None when it passes Algorithm 3, else why it is discarded (SENTENCE_COUNT, POS, DEPS).
        A mutant stops at the first failing sentence found: with several, the reason is that one's (the
        earliest in the text among those known when it is decided)."""
        reasons: list[str | None] = [SENTENCE_COUNT] * len(mutants)
        # Per pending mutant, the changed sentence pairs not yet known to pass.
        pending = {i: list(pairs) for i, pairs in enumerate(mutants) if pairs is not None}
        decided: dict[SentencePair, bool | str] = {}  # this call's verdicts, safe from cache eviction
        get = self._verdicts.get_recent
        width = 1
        while pending:
            asked: set[SentencePair] = set()
            for i, pairs in list(pending.items()):
                # a verdict is True (conforms) or a reason string (fails); None: not known yet
                known = [decided.get(p) or get(p) for p in pairs]
                failed = next((k for k in known if k is not None and k is not True), None)
                if failed is not None:  # a known failure decides the mutant without any parse
                    reasons[i] = failed
                    del pending[i]
                    continue
                pairs[:] = [p for p, k in zip(pairs, known) if k is None]
                if not pairs:
                    reasons[i] = None
                    del pending[i]
                else:
                    asked.update(pairs[:width])
            if asked:
                decided.update(self._judge(asked))
            # Most mutants that fail, fail on their first sentences; those still pending after a round are
            # mostly valid, so each round asks twice as many of their sentences: few rounds, few extra parses.
            width *= 2
        return reasons


class ReferenceValidator:
    """The reference tool's loop, literally: per mutant, split it, parse each changed sentence alone (batch of
    one), even after one failed; the original's parses are cached per text only."""

    def __init__(self, parser: Parser):
        self.parser = parser
        self.sentences_parsed = 0

    def validate_text(self, original: str, mutants: Sequence[str]) -> list[bool]:
        return [r is None for r in self.reasons_text(original, mutants)]

    def reasons_text(self, original: str, mutants: Sequence[str]) -> list[str | None]:
        """Per mutant, None when valid, else why it is discarded (the first failing sentence's reason)."""
        original_sentences = split_sentences(original)
        original_parses: list[Parse | None] = [None] * len(original_sentences)
        verdicts: list[str | None] = []
        for mutant in mutants:
            mutant_sentences = split_sentences(mutant)
            if len(mutant_sentences) != len(original_sentences):
                verdicts.append(SENTENCE_COUNT)
                continue
            similar: str | None = None
            for i, (c, m) in enumerate(zip(original_sentences, mutant_sentences)):
                if c == m:
                    continue
                (mp,) = self.parser.parse([m])
                self.sentences_parsed += 1
                if original_parses[i] is None:
                    (original_parses[i],) = self.parser.parse([c])
                    self.sentences_parsed += 1
                reason = discard_reason(original_parses[i], mp)
                if reason is not None and similar is None:
                    similar = reason
            verdicts.append(similar)
        return verdicts
