"""Stage 2: atomic and intersectional mutants (METHOD.md "Terms").

All replacements of a mutant are applied at once on spans of the original text, so no replacement
can rewrite text that another one inserted. Combinations whose spans overlap are skipped and counted.
"""
from __future__ import annotations

import itertools
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

from hinter.mutation.dictionary import Dictionary, Pair
from hinter.languages import get_language
from hinter.mutation.person import driver_nlp
from hinter.records import REPAIR, Replacement, Span, apply_replacements, dictionary_replacements
from hinter.records import edits as edits_of
from hinter.records import match_case
from hinter.mutation.repair import follow_pronouns, repairs
from hinter.validity.sentences import sentence_spans

__all__ = ["SELF_COMPARISON", "Generation", "Mutant", "Replacement", "apply_replacements", "components", "find_pairs",
           "generate", "match_case", "self_comparison"]

SELF_COMPARISON = "self-comparison"  # the prefix of the reason self_comparison gives


@dataclass(frozen=True)
class Mutant:
    text_id: int
    # one per attribute, sorted by attribute; then its repairs (records.REPAIR: pronouns that follow a name, --repair
    # edits), which are part of its text but not of its key
    replacements: tuple[Replacement, ...]
    original: str = field(repr=False, compare=False)

    # Set on construction, as plain attributes: the oracle, the hidden marks and the store read them for each of a
    # campaign's mutants, and a cached_property's first read cost more than computing them (Python 3.11's locks).
    pairs: tuple[Replacement, ...] = field(init=False, repr=False, compare=False)  # without repairs
    order: int = field(init=False, repr=False, compare=False)
    attributes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    key: tuple[str, ...] = field(init=False, repr=False, compare=False)  # its pairs' ids: the mutant in its text

    def __post_init__(self) -> None:
        pairs = replacements = self.replacements
        attributes = tuple([r.attribute for r in replacements])
        if REPAIR in attributes:  # most mutants have no repair: their replacements are their pairs
            pairs = dictionary_replacements(replacements)
            attributes = tuple([r.attribute for r in pairs])
        self.__dict__.update(pairs=pairs, order=len(pairs), attributes=attributes,
                             key=tuple([r.pair_id for r in pairs]))

    @property
    def edits(self) -> list[tuple[int, int, str]]:
        """(start, end, replacement) on the original text, for every span of every replacement."""
        return edits_of(self.replacements)

    @cached_property
    def text(self) -> str:
        """The mutated text, built on first use: validity works sentence by sentence and rarely needs it."""
        return apply_replacements(self.original, self.edits)


@dataclass
class Generation:
    """The mutants of one text, and the combinations skipped because their spans overlap."""

    mutants: list[Mutant] = field(default_factory=list)
    overlaps_skipped: int = 0
    person_skipped: int = 0  # the person filter: occurrences of dictionary words left alone (not about a person)
    person_examples: list[str] = field(default_factory=list)  # a few of them, in context
    repairs: dict[str, int] = field(default_factory=dict)  # repair edits per kind ("a/an", "number", "pronoun")
    # mutants whose agreement could not be carried (a word the language cannot inflect): index -> why; validity
    # discards them (validity.invariant.INFLECTION)
    uninflected: dict[int, str] = field(default_factory=dict)
    # occurrences of dictionary words left alone by the language's rules (languages.Language.skip: a name, a verb,
    # a language), per reason
    not_mutated: dict[str, int] = field(default_factory=dict)

    @property
    def self_compared(self) -> set[int]:
        """The indexes in `uninflected` of the mutants that compare a group with itself (self_comparison's reason):
        validity records them as validity.invariant.SELF_COMPARISON."""
        return {i for i, why in self.uninflected.items() if why.startswith(SELF_COMPARISON)}


def find_pairs(text: str, dictionary: Dictionary) -> list[tuple[Pair, tuple[Span, ...]]]:
    """The dictionary pairs whose word occurs in `text`, with the occurrences' spans (one matcher pass)."""
    found = dictionary.matcher.find(text)
    by_word = dictionary.pairs_by_word
    return [(pair, spans) for word, spans in found.items() for pair in by_word[word]]


def _replacement(pair: Pair, spans: tuple[Span, ...]) -> Replacement:
    return Replacement(pair.attribute, pair.source_group, pair.target_group, pair.word, pair.replacement, spans)


def _overlap(spans_a: tuple[Span, ...], spans_b: tuple[Span, ...]) -> bool:
    return any(a0 < b1 and b0 < a1 for a0, a1 in spans_a for b0, b1 in spans_b)


def _in_context(text: str, span: Span, width: int = 30) -> str:
    s, e = span
    return (("..." if s > width else "") + text[max(0, s - width):s] + "[" + text[s:e] + "]" + text[e:e + width]
            + ("..." if e + width < len(text) else "")).replace("\n", " ")


def _matches(text: str, dictionary: Dictionary, attributes: tuple[str, ...], person, gen: "Generation",
             skip=None, docs=None) -> list[tuple[Pair, tuple[Span, ...]]]:
    """find_pairs for `attributes`, less the occurrences a pack wants capitalised, with `person`
    (person.PersonFilter) those that do not refer to a person, and with `skip` (languages.Language.skip, on the
    sentences `docs` parses) those the language leaves alone (both counted in `gen`)."""
    by_word = dictionary.pairs_by_word
    found = {w: spans for w, spans in dictionary.matcher.find(text).items()
             if any(p.attribute in attributes for p in by_word[w])}
    if person is not None and found:
        kept = {}
        for word, marks in person.keep(text, found, docs).items():
            kept[word] = tuple(span for span, ok in marks if ok)
            for span, ok in marks:
                if not ok:
                    gen.person_skipped += 1
                    if len(gen.person_examples) < 3:
                        gen.person_examples.append(_in_context(text, span))
        found = kept
    out = []
    for word, spans in found.items():
        for pair in by_word[word]:
            if pair.attribute not in attributes:
                continue
            s = tuple(sp for sp in spans if text[sp[0]].isupper()) if pair.attribute in dictionary.capitalised else spans
            if s:
                out.append((pair, s))
    if skip is not None and out:  # a pack's capitalised words are names (names pack): the rules would skip them all
        occurrences = [(span, pair) for pair, spans in out if pair.attribute not in dictionary.capitalised
                       for span in spans]
        why = iter(skip(text, occurrences, docs))
        kept, counted = [], set()
        for pair, spans in out:
            left = []
            for span in spans:
                reason = next(why) if pair.attribute not in dictionary.capitalised else None
                if reason is None:
                    left.append(span)
                elif (span, reason) not in counted:  # an occurrence counts once, whatever its pairs
                    counted.add((span, reason))
                    gen.not_mutated[reason] = gen.not_mutated.get(reason, 0) + 1
            if left:
                kept.append((pair, tuple(left)))
        out = kept
    return out


def _same_lemma(a: str, b: str) -> bool:
    """Two dictionary words are the same word up to case and a plural ending (homme / hommes, Blanc / blancs)."""
    a, b = a.casefold(), b.casefold()
    return a == b or any(a == b + end or b == a + end for end in ("s", "x", "es"))


def _beside(span: Span, words: Sequence[tuple[str, Span]], text: str) -> list[Span]:
    """The spans of `words` written right beside `span` (only spaces between): a word of another attribute that
    describes the same person ("un homme blanc", "a white man")."""
    return [sp for _, sp in words if sp != span and (
        sp[1] <= span[0] and not text[sp[1]:span[0]].strip() or span[1] <= sp[0] and not text[span[1]:sp[0]].strip())]


def _words_by_attribute(text: str, dictionary: Dictionary) -> dict[str, list[tuple[str, Span]]]:
    out: dict[str, set] = defaultdict(set)
    for pair, spans in find_pairs(text, dictionary):
        out[pair.attribute] |= {(text[s:e], (s, e)) for s, e in spans}
    return {a: sorted(ws, key=lambda w: w[1]) for a, ws in out.items()}


def _mutant_words(text: str, replacements: tuple[Replacement, ...]):
    """span -> the text at that span in the mutant made of `replacements` (its edits read on first need: most
    mutants never ask)."""
    new_text: dict[Span, str] = {}

    def now(span: Span) -> str:
        if not new_text:
            new_text.update({(s, e): t for s, e, t in edits_of(replacements)})
        return new_text.get(span, text[span[0]:span[1]])
    return now


def self_comparison(text: str, replacement: Replacement, words: Sequence[tuple[str, Span]],
                    sentences: Sequence[Span], changed: Sequence[Span] = (), *, same_word=None,
                    others=(), now=None) -> str | None:
    """Why `replacement` makes its sentence compare a group with itself, None when it does not: its new word is
    already there as another word of the same attribute, which the mutant leaves ("Les femmes sont moins payées que
    les hommes" -> "Les hommes ... que les hommes"; "Les Noirs et les Arabes ... que les Blancs" -> "Les Blancs et
    les Arabes ... que les Blancs"). `words`: the (word, span) of the text's dictionary words of the replacement's
    attribute; `sentences`: the text's sentence spans; `changed`: the spans the mutant edits (a pronoun it carries
    along is no longer there: "He told her" -> "She told him").

    A word of the same attribute that names another person is no comparison with itself: each of the two has a
    word of another attribute beside it (`others`: the text's dictionary words of the other attributes, or a
    function giving them on first need; read in the mutant through `now(span)`), and those differ ("Une
    femme blanche et un homme noir" -> "Un homme blanc et un homme noir": two men, one white, one black); two
    alike ("Un homme noir et un homme noir"), or none, and the mutant is discarded. `same_word(a, b)`: whether two
    words are one word (the language's, languages.Language.same_word: French "noir" and "noirs", not "noire"); by
    default the same up to case and a plural ending. Language-neutral: the words beside are the dictionary's."""
    same = same_word or _same_lemma
    now = now or (lambda sp: text[sp[0]:sp[1]])

    def described(span):  # the mutant's words of another attribute beside the occurrence
        return [now(sp) for sp in _beside(span, others() if callable(others) else others, text)]

    for s, e in replacement.spans:
        # "Mon père ... a rencontré ma mère" -> "... a rencontré mon père": the writer's (or the reader's, or our)
        # one father twice, anywhere in the text
        mine = _POSSESSED.search(text, max(0, s - 8), s)
        if mine:
            for m in _POSSESSIVE_WORD.finditer(text):
                span = m.span(2)
                if _POSSESSOR[m.group(1).lower()] == _POSSESSOR[mine.group(1).lower()] and span[0] != s and \
                        same(m.group(2), replacement.replacement) and not _overlap((span,), changed):
                    return f"{SELF_COMPARISON}: {replacement.word!r} -> {replacement.replacement!r} beside " \
                           f"{m.group(0)!r} in the same text"
        a, b = next(((a, b) for a, b in sentences if a <= s and e <= b), (0, len(text)))
        for word, span in words:
            # the cheap tests first: most of a long text's words are in another sentence or another word
            if a <= span[0] and span[1] <= b and same(word, replacement.replacement) and \
                    not _overlap((span,), changed):
                mine, theirs = described((s, e)), described(span)
                if mine and theirs and not any(same(x, y) for x in mine for y in theirs):
                    continue  # another person, told apart by its own word ("un homme blanc et un homme noir")
                return f"{SELF_COMPARISON}: {replacement.word!r} -> {replacement.replacement!r} beside " \
                       f"{text[span[0]:span[1]]!r} in the same sentence"
    return None


# possessives of one possessor, not the third person's (his and her name two persons as often as one)
_POSSESSOR = {**dict.fromkeys(("my", "mon", "ma", "mes"), "I"), **dict.fromkeys(("your", "ton", "ta", "tes"), "you"),
              **dict.fromkeys(("our", "notre", "nos"), "we"), **dict.fromkeys(("votre", "vos"), "you (plural)")}
_POSSESSED = re.compile(r"(?<![\w'’])(" + "|".join(_POSSESSOR) + r")[ \t]+\Z", re.I)  # one before a word
_POSSESSIVE_WORD = re.compile(r"(?<![\w'’])(" + "|".join(_POSSESSOR) + r")[ \t]+([\w-]+)", re.I)  # every one


def _pronoun_edits(text: str, rep: Replacement, found: list[tuple[Pair, tuple[Span, ...]]]) -> list[Replacement]:
    """The pronouns that follow a name of a pack whose groups' gender (female-black -> male-white) changes, up to
    where another name of the same gender appears."""

    gender_of = lambda group: group.split("-")[0]  # noqa: E731
    old, new = gender_of(rep.source_group), gender_of(rep.target_group)
    if old == new:
        return []
    others = [s for p, spans in found if p.attribute == rep.attribute and p.word.lower() != rep.word.lower()
              and gender_of(p.source_group) == old for s, _ in spans]
    return follow_pronouns(text, rep.attribute, rep.spans, old, new, others)


def _sentence_docs(text: str):
    """parse(start, end) -> (spaCy Doc of the sentence holding text[start:end], its offset), each sentence parsed
    once, on first need (the number repair: rare)."""

    sentences, docs = sentence_spans(text), {}

    def parse(start: int, end: int):
        k = next((i for i, (a, b) in enumerate(sentences) if a <= start and end <= b), None)
        if k is None:
            return None
        if k not in docs:
            docs[k] = driver_nlp()(text[sentences[k][0]:sentences[k][1]])
        return docs[k], sentences[k][0]
    return parse


def generate(text_id: int, text: str, dictionary: Dictionary, attributes: tuple[str, ...], order: int,
             max_pairs_per_text: int | None = None, seed: int = 0, *, person=None, repair: bool = False,
             parse=None, language: str = "en") -> Generation:
    """Atomic mutants for each attribute, then intersectional ones of order 2..`order` over distinct attributes.

    `max_pairs_per_text`: keep a seeded sample of at most that many of the pairs present in this text, per
    attribute (None: all); every intersectional mutant's components stay in the run. `person`
    (person.PersonFilter; the default in English, --any-occurrence turns it off): replace only occurrences that refer to a person. `repair` (--repair):
    add each mutant's a/an and number-agreement repairs (repair.py; `parse(start, end)` gives the sentence's
    spaCy Doc, default: parsed on first need). A pack's name pair that changes gender carries the pronouns along.
    Repairs and pronouns are extra replacements of the mutant (records.REPAIR), outside its key. `language`: what
    a replacement carries along (languages.Language.carry: French's agreement, English's a/an and a pronoun's other
    forms) and the occurrences it leaves alone (Language.skip: English names, verbs and languages).
    """
    gen = Generation()
    lang = get_language(language)
    # the original's sentences, each parsed on first need (the pipeline too is loaded then)
    docs = None
    if lang.sentence_docs is not None and (lang.carry is not None or lang.skip is not None):
        docs = lang.sentence_docs(text, sentence_spans(text))
    by_attribute: dict[str, list[Replacement]] = defaultdict(list)
    if person is not None and not lang.person_filter:  # its words and parse are English's
        person = None
    found = _matches(text, dictionary, attributes, person, gen, lang.skip, docs)
    for pair, spans in found:
        by_attribute[pair.attribute].append(_replacement(pair, spans))
    for attribute, reps in by_attribute.items():
        reps.sort(key=lambda r: r.pair_id)
        if max_pairs_per_text is not None and len(reps) > max_pairs_per_text:
            rng = random.Random(f"{seed}:{text_id}:{attribute}")
            reps[:] = sorted(rng.sample(reps, max_pairs_per_text), key=lambda r: r.pair_id)
    # what each replacement carries along: the pronouns of a pack's name (part of its spans for overlaps)
    carried = {id(r): _pronoun_edits(text, r, found) for a in dictionary.pronouns_follow & set(by_attribute)
               for r in by_attribute[a]}
    spans_of = lambda r: r.spans + tuple(s for x in carried.get(id(r), ()) for s in x.spans)  # noqa: E731
    if repair and parse is None:
        parse = _sentence_docs(text)
    present = sorted(by_attribute)
    carry = lang.carry
    sentences = sentence_spans(text)
    words_of = defaultdict(list)  # attribute -> (word, span) of its dictionary words in the text
    for pair, spans in found:
        words_of[pair.attribute] += [(text[s:e], (s, e)) for s, e in spans]
    every: list[dict[str, list]] = []
    same_word, like = lang.same_word or _same_lemma, {}

    def words_like(r: Replacement) -> list:
        """The text's words of `r`'s attribute that are its new word (self_comparison's only candidates), found
        once per (attribute, word): a long text's mutants would otherwise compare every word again."""
        key = (r.attribute, r.replacement)
        if key not in like:
            like[key] = [w for w in words_of[r.attribute] if same_word(w[0], r.replacement)]
        return like[key]

    def all_words() -> dict[str, list]:
        """attribute -> (word, span) of every dictionary word of the text, whatever the run's attributes (the words
        that tell two persons apart: self_comparison), found on first need."""
        if not every:
            every.append(_words_by_attribute(text, dictionary))
        return every[0]
    for k in range(1, min(order, len(present)) + 1):
        for attrs in itertools.combinations(present, k):
            for combo in itertools.product(*(by_attribute[a] for a in attrs)):
                if k > 1 and any(_overlap(spans_of(a), spans_of(b)) for a, b in itertools.combinations(combo, 2)):
                    gen.overlaps_skipped += 1
                    continue
                extra = [x for r in combo for x in carried.get(id(r), ())]
                if repair:
                    extra += [x for x in repairs(text, combo, parse) if not any(_overlap(x.spans, y.spans) for y in extra)]
                if carry is not None:  # the agreement overrides a replaced word's span (records.edits)
                    agreement, why = carry(text, combo, docs)
                    if why is not None:
                        gen.uninflected[len(gen.mutants)] = why
                    extra += [x for x in agreement if not any(_overlap(x.spans, y.spans) for y in extra)]
                if len(gen.mutants) not in gen.uninflected:
                    changed = [sp for x in (*combo, *extra) for sp in x.spans]
                    now = _mutant_words(text, combo + tuple(extra))
                    same = next((w for r in combo if (w := self_comparison(
                        text, r, words_like(r), sentences, changed, same_word=lang.same_word, now=now,
                        others=lambda a=r.attribute: [x for b, ws in all_words().items() if b != a for x in ws]))),
                                None)
                    if same is not None:
                        gen.uninflected[len(gen.mutants)] = same
                for x in extra:
                    gen.repairs[x.source_group] = gen.repairs.get(x.source_group, 0) + len(x.spans)
                gen.mutants.append(Mutant(text_id, combo + tuple(extra), text))
    return gen


def components(mutant: Mutant) -> list[tuple[str, ...]]:
    """Keys of every proper, non-empty sub-combination of an intersectional mutant (atomic ones first)."""
    ids = mutant.key
    return [sub for k in range(1, len(ids)) for sub in itertools.combinations(ids, k)]
