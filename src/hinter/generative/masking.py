"""Identity masking: make two answers comparable by hiding who they are about.

A mutant changes who a text is about ("she" -> "he", "white" -> "black"); a model that merely repeats the person
("She is a great fit." / "He is a great fit.") has not treated them differently. Before any aspect is computed,
every answer of the original and of the mutant has these words replaced by one placeholder:

- the words the mutation changed and their counterparts (each replacement's word and replacement, repairs
  included: a/an, number agreement, the pronouns that follow a name), with their plural forms;
- when a changed word is gendered (its attribute is gender-like, or it is itself a pronoun), the gendered
  pronouns and titles that follow it (he/she, him/her, his/hers, himself/herself, Mr/Ms...), since the answer
  refers to the person by them.

A language with masking words (languages.Language.masking, the run's `language` given by the caller: French):
its gendered pronouns and titles (il/elle, ils/elles, lui/eux, monsieur/madame...) are masked too, and a
determiner before a masked word goes with it into the one placeholder ("la voisine" and "le voisin" both read
"[ID]"), since it agrees with the person.

Matching is whole-word and case-insensitive; a multi-word term ("old folks") matches across any run of spaces.
Pure functions, no model: masking("She is kind") == masking("He is kind") under a gender edit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from hinter.languages import get_language
from hinter.records import REPAIR, Replacement

PLACEHOLDER = "[ID]"
# Attributes whose words carry a gender the answer echoes through pronouns: the built-in gender attribute, the
# nonbinary pack, the names pack (a name swap may change the person's gender and so the pronouns).
GENDERED_ATTRIBUTES = frozenset({"gender", "nonbinary", "name"})
GENDERED_PRONOUNS = frozenset(
    "he she him her his hers himself herself mr mrs ms miss mx sir madam ma'am hisself "
    "they them their theirs themself themselves xe xem xyr ze zir hir".split())
IRREGULAR_PLURALS = {"man": "men", "woman": "women", "person": "people", "child": "children", "wife": "wives",
                     "gentleman": "gentlemen", "lady": "ladies", "boy": "boys", "girl": "girls"}


def _forms(term: str) -> set[str]:
    """A term and its plural: "nurse" -> {nurse, nurses}; "woman" -> {woman, women}; "old man" -> {..., old men}."""
    term = " ".join(term.lower().split())
    if not term:
        return set()
    head, _, last = term.rpartition(" ")
    prefix = head + " " if head else ""
    out = {term}
    if last in IRREGULAR_PLURALS:
        out.add(prefix + IRREGULAR_PLURALS[last])
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        out.add(prefix + last + "es")
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        out.add(prefix + last[:-1] + "ies")
    else:
        out.add(prefix + last + "s")
    return out


@dataclass(frozen=True)
class IdentityTerms:
    """The terms masked in every answer of one mutant and of its original (lower case)."""

    terms: frozenset[str]
    # a language's masking words (languages.Language.masking: French's determiners, masked with the word after)
    determiners: tuple[str, ...] = ()

    @classmethod
    def from_replacements(cls, replacements: Iterable[Replacement], language: str = "en") -> IdentityTerms:
        """The terms of a mutant's replacements (`records.Replacement`, repairs included). `language`: the run's
        (its Language.masking words: French's determiners, pronouns and word forms), given, never guessed."""
        words: set[str] = set()
        gendered = False
        replacements = list(replacements)
        masking = get_language(language).masking
        for r in replacements:
            for w in (r.word, r.replacement):
                words |= _forms(w)
                gendered |= w.lower() in GENDERED_PRONOUNS
            cause = r.target_group if r.attribute == REPAIR else r.attribute  # a repair names its cause
            gendered |= cause in GENDERED_ATTRIBUTES or (r.attribute == REPAIR and r.source_group == "pronoun")
        if masking is not None and masking.other_genders is not None:  # every gender and number of a word:
            # "marocain" answers as "marocaine" too
            words |= {f for w in list(words) if " " not in w for g in masking.other_genders(w) for f in _forms(g)}
        if gendered:
            words |= GENDERED_PRONOUNS | (masking.gendered if masking is not None else frozenset())
        return cls(frozenset(words), masking.determiners if masking is not None else ())

    @classmethod
    def from_pair_ids(cls, pair_ids: Iterable[str], language: str = "en") -> IdentityTerms:
        """The terms of pair ids "attribute:source>target:word>replacement" (when the replacements are not at hand)."""
        reps = []
        for pid in pair_ids:
            attribute, groups, words = pid.split(":", 2)
            source, _, target = groups.partition(">")
            word, _, replacement = words.partition(">")
            reps.append(Replacement(attribute, source, target, word, replacement, ()))
        return cls.from_replacements(reps, language)

    @classmethod
    def of(cls, edits, language: str = "en") -> IdentityTerms:
        """What a judge is given as a mutant's edits: IdentityTerms, Replacements, pair ids, or (word, replacement)
        pairs (plain words; no pronouns unless they are among them)."""
        if isinstance(edits, IdentityTerms):
            return edits
        edits = list(edits or ())
        if all(isinstance(e, Replacement) for e in edits):
            return cls.from_replacements(edits, language)
        if all(isinstance(e, str) for e in edits):
            return cls.from_pair_ids(edits, language)
        if all(isinstance(e, (tuple, list)) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in edits):
            return cls(frozenset(f for pair in edits for w in pair for f in _forms(w)))
        raise TypeError("edits must be IdentityTerms, records.Replacement objects, pair ids, or (word, replacement) "
                        f"pairs; got {edits!r}")

    def mask(self, answer: str) -> str:
        return _pattern(self.terms, self.determiners).sub(PLACEHOLDER, answer) if self.terms else answer

    def spans(self, answer: str) -> list[tuple[int, int]]:
        """Where `mask` would put the placeholder in `answer`: (start, end) of each masked term, in order (the
        report marks them in the answer shown rather than replacing them)."""
        return [m.span() for m in _pattern(self.terms, self.determiners).finditer(answer)] if self.terms else []

    def mask_all(self, answers: Sequence[str]) -> list[str]:
        return [self.mask(a) for a in answers]


@lru_cache(maxsize=4096)
def _pattern(terms: frozenset[str], determiners: tuple[str, ...] = ()) -> re.Pattern:
    # longest first, so "old folks" wins over "old"; (?<!\w) / (?!\w) rather than \b: terms may end in "'"
    alternatives = sorted(terms, key=len, reverse=True)
    body = "|".join(r"\s+".join(re.escape(part) for part in t.split()) for t in alternatives)
    if determiners:  # "la voisine" and "l'amie": one placeholder (the determiner agrees with the person)
        dets = "|".join(re.escape(d).replace(r"\ ", r"\s+") + (r"\s*" if d.endswith(("'", "’")) else r"\s+")
                        for d in sorted(determiners, key=len, reverse=True))
        body = rf"(?:(?:{dets}))?(?:{body})"
    return re.compile(rf"(?<![\w'’])(?:{body})(?![\w])", re.IGNORECASE)


def mask_answers(answers: Sequence[str], edits, language: str = "en") -> list[str]:
    """`answers` with the identity terms of `edits` (see `IdentityTerms.of`, in the run's `language`) replaced by
    PLACEHOLDER."""
    return IdentityTerms.of(edits, language).mask_all(answers)
