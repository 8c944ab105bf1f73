"""The person filter (RunConfig.person_only: the default in English; --any-occurrence turns it off): does an
occurrence of a dictionary word refer to a person? Decided on a spaCy parse of the original sentence: the word is (or holds) a person noun, a personal pronoun or a PERSON entity, or it modifies one
("a black woman", "the Spanish director", "black and white men"), or it is said of one ("she is black"). "She wore
a black coat" and "he speaks Spanish" are not about a person's race.

Person nouns: the built-in dictionary's gender word lists (its job lists included: "director", "nurse"), the
words and replacements of every gender pair, and a short list of general ones. Runs on the driver (mutation), on
the parse English's rules made of the same sentences (languages.english.ParsedSentences: one parse per sentence);
given no such parse it parses with the same pipeline (driver_nlp), loaded on first use.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

from hinter.languages.english import PERSON_NOUNS, full_pipeline
from hinter.languages.english import plural_noun as plural
from hinter.records import Span
from hinter.validity.sentences import sentence_spans

PRONOUNS = frozenset("i me my myself we us our ourselves you your yourself yourselves he him his himself she her hers "
                     "herself they them their themselves someone somebody everyone everybody anyone anybody nobody "
                     "who whom whose".split())
GENERAL_PERSON_NOUNS = frozenset(
    "person people individual individuals folk folks kid kids child children baby babies teen teens teenager "
    "teenagers adult adults human humans citizen citizens resident residents neighbour neighbor neighbours "
    "neighbors friend friends family families parent parents sibling siblings spouse spouses partner partners "
    "couple couples community communities immigrant immigrants refugee refugees guy guys gal gals "
    "character characters hero heroes heroine villain villains protagonist cast actor actors actress actresses "
    "director directors writer writers author authors star stars singer singers player players artist artists "
    "student students teacher teachers doctor doctors nurse nurses worker workers officer officers cop cops "
    "soldier soldiers leader leaders boss bosses owner owners customer customers employee employees lawyer "
    "lawyers judge judges victim victims survivor survivors patient patients member members fan fans audience "
    "crowd viewer viewers director-writer lead leads comedian comedians filmmaker filmmakers narrator "
    "protagonists applicant applicants defendant defendants plaintiff plaintiffs".split())
# What links a modifier to the noun it describes; conj lets "white" in "black and white men" reach "men".
MODIFIER_DEPS = frozenset({"amod", "compound", "nmod", "poss", "appos", "nummod", "npadvmod", "det"})
PREDICATE_DEPS = frozenset({"acomp", "attr", "oprd"})


@lru_cache(maxsize=1)
def person_nouns() -> frozenset[str]:
    """Lower-cased person nouns: the built-in gender lists and pairs, and GENERAL_PERSON_NOUNS."""
    words = set(GENERAL_PERSON_NOUNS)
    root = resources.files("hinter") / "data" / "dictionary" / "gender"
    with resources.as_file(root) as folder:
        for f in Path(folder).glob("*.csv"):
            for line in f.read_text(encoding="utf-8").splitlines():
                words.update(c.strip().lower() for c in line.split(";") if c.strip())
    return frozenset(words)


@lru_cache(maxsize=1)
def _person_words() -> frozenset[str]:
    nouns = {w for ws in PERSON_NOUNS.values() for w in ws}
    return frozenset(PRONOUNS | nouns | {plural(w) for w in nouns})


def is_person_word(word: str) -> bool:
    """Whether a dictionary word names a person by itself, with no parse to read: a personal pronoun (he, her) or a
    singular or plural gendered person noun (languages.english.PERSON_NOUNS: man, women, actress)."""
    return word.lower() in _person_words()


def driver_nlp():
    """The full spaCy pipeline (tagger, parser, lemmatizer, NER) of the driver side, loaded on first use: English
    mutation's (languages.english.full_pipeline), one copy for both."""
    return full_pipeline()


# Entities that name an institution or a work, not a person: "the European Communities" (ORG), "the Race
# Relations Act" (LAW); a person noun inside one ("Communities") names no one.
NOT_PERSON_ENTITIES = frozenset(("ORG", "LAW", "FAC", "WORK_OF_ART", "EVENT", "PRODUCT"))


def _is_person(token, nouns: frozenset[str]) -> bool:
    low = token.lower_
    if token.ent_type_ in NOT_PERSON_ENTITIES:
        return False
    if token.pos_ in ("NOUN", "PROPN") and (low in nouns or token.lemma_.lower() in nouns):
        return True
    # a common noun the entity recogniser put in a PERSON entity is still a thing ("this early German talkie")
    if token.ent_type_ == "PERSON" and token.pos_ != "NOUN" or (token.pos_ == "PRON" and low in PRONOUNS):
        return True
    # "Asians", "African Americans": a nationality or group as a plural noun names people
    return token.ent_type_ == "NORP" and token.tag_ in ("NNS", "NNPS")


def refers_to_person(tokens, nouns: frozenset[str] | None = None) -> bool:
    """Whether the tokens of one occurrence (a spaCy Span) name a person or describe one."""
    nouns = person_nouns() if nouns is None else nouns
    if any(_is_person(t, nouns) for t in tokens):
        return True
    t = tokens.root
    for _ in range(4):  # up a short chain: "African" -> "American" -> "man"; "white" -conj-> "black" -> "men"
        if t.dep_ == "conj" and t.head is not t:
            t = t.head
            continue
        if t.dep_ in MODIFIER_DEPS and t.head is not t:
            if _is_person(t.head, nouns):
                return True
            t = t.head
            continue
        break
    if t.dep_ in PREDICATE_DEPS:  # "she is black": said of the verb's subject
        return any(c.dep_ in ("nsubj", "nsubjpass") and _is_person(c, nouns) for c in t.head.children)
    return False


class PersonFilter:
    """Keeps the occurrences that refer to a person. `parse(sentences) -> docs` defaults to driver_nlp()."""

    def __init__(self, parse: Callable[[Sequence[str]], list] | None = None):
        self._parse = parse

    def parse(self, sentences: Sequence[str]) -> list:
        if self._parse is None:
            nlp = driver_nlp()
            self._parse = lambda ss: list(nlp.pipe(ss))
        return self._parse(sentences)

    def keep(self, text: str, spans_by_word: dict[str, tuple[Span, ...]],
             docs=None) -> dict[str, tuple[tuple[Span, bool], ...]]:
        """For each word, each of its spans with True where it refers to a person. `docs`: the original's sentences
        as the language's rules parsed them (languages.english.ParsedSentences: the same pipeline, each sentence
        parsed once for both); without it, the sentences holding a span (validity's sentence splitter) are parsed
        here, each once."""
        if docs is not None:
            # a pronoun or a gendered person noun is a person whatever its parse says: its sentence is not parsed for
            # it (most of a text's occurrences; the language's rules still parse where they need to)
            docs.prefetch([span for word, spans in spans_by_word.items() if not is_person_word(word) for span in spans])
            return {word: tuple(((s, e), is_person_word(word) or _person_at(docs.tokens(s, e), docs.at(s, e)[0] is None))
                                for s, e in spans) for word, spans in spans_by_word.items()}
        sentences = sentence_spans(text)
        where: dict[Span, int] = {}
        for spans in spans_by_word.values():
            for s, e in spans:
                where[(s, e)] = next((k for k, (a, b) in enumerate(sentences) if a <= s and e <= b), -1)
        needed = sorted({k for k in where.values() if k >= 0})
        parsed = dict(zip(needed, self.parse([text[sentences[k][0]:sentences[k][1]] for k in needed])))
        out = {}
        for word, spans in spans_by_word.items():
            marks = []
            for s, e in spans:
                k = where[(s, e)]
                tokens = None if k < 0 else parsed[k].char_span(s - sentences[k][0], e - sentences[k][0],
                                                                alignment_mode="expand")
                marks.append(((s, e), _person_at(tokens, k < 0)))
            out[word] = tuple(marks)
        return out


def _person_at(tokens, across_sentences: bool) -> bool:
    """Whether an occurrence is kept: a word across a sentence break, or not on token boundaries, is kept (as without
    the filter); else whether its tokens refer to a person."""
    return across_sentences or tokens is None or refers_to_person(tokens)
