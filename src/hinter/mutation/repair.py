"""Edits that follow from a replacement, as pure functions from the original text and the mutant's edits to extra
`Replacement`s of attribute `records.REPAIR` (never part of the mutant's key, so verdicts and components match):

- `article_repairs` (--repair): "a" / "an" before a replaced word, where the original's article agreed with the
  original word ("a man" -> "a Asian man" becomes "an Asian man"; "an Indian" -> "a Chinese").
- `number_repairs` (--repair): a replacement that changes number ("man" -> "disabled people") makes its
  determiner (this/these, that/those, a/an -> some) and, where it is the subject, its finite verb (is/are, was/were,
  has/have, walks/walk, by lemminflect) agree. Needs a spaCy Doc of the original sentence (morphology, syntax).
- `follow_pronouns` (identity pack `names`): the person's pronouns after a name whose gender changes
  (he/him/his/himself <-> she/her/her/herself).

Each repair is one Replacement per (kind, cause, word, new word): source_group = kind ("a/an", "number",
"pronoun"), target_group = the attribute whose replacement caused it.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Sequence

from hinter.languages.english import article_repairs, indefinite_article, starts_noun_phrase
from hinter.records import REPAIR, Replacement, Span

# ---- a / an -------------------------------------------------------------------------------------------------------

# the rule and the a/an edits live with the language (mutation and the audit's renderings use them)
article_for = indefinite_article
__all__ = ["article_for", "article_repairs", "follow_pronouns", "grammatical_number", "number_repairs", "repairs"]


def _group(found: Iterable[tuple[str, str, str, str, Span]]) -> list[Replacement]:
    """(kind, cause, word, new, span) -> one Replacement per (kind, cause, lower word, new), spans sorted."""
    spans: dict[tuple[str, str, str, str], list[Span]] = defaultdict(list)
    for kind, cause, word, new, span in found:
        spans[(kind, cause, word.lower(), new.lower())].append(span)
    return [Replacement(REPAIR, kind, cause, w, n, tuple(sorted(set(ss)))) for (kind, cause, w, n), ss in sorted(spans.items())]


def _free(span: Span, taken: Sequence[Span]) -> bool:
    return not any(span[0] < e and s < span[1] for s, e in taken)


# ---- number -------------------------------------------------------------------------------------------------------

PLURAL_ONLY = frozenset({"people", "folks", "police", "cattle", "clergy", "staff"})
_PHRASE_END = frozenset({"with", "of", "who", "in", "from", "that", "on", "at", "without"})


def grammatical_number(phrase: str) -> str | None:
    """ "sg", "pl" or None (unknown) for a dictionary word or phrase, by its head noun (the last word before a
    preposition: "people with disabilities" -> "people")."""
    from lemminflect import getAllLemmas

    words = re.findall(r"[A-Za-z]+", phrase.lower())
    for i, w in enumerate(words):
        if i and w in _PHRASE_END:
            words = words[:i]
            break
    if not words:
        return None
    head = words[-1]
    if head in PLURAL_ONLY:
        return "pl"
    lemmas = getAllLemmas(head).get("NOUN")
    if not lemmas:
        return None
    return "sg" if head == lemmas[0] else "pl"


_DETERMINERS = {("this", "pl"): "these", ("these", "sg"): "this", ("that", "pl"): "those", ("those", "sg"): "that"}
_BE = {("is", "pl"): "are", ("are", "sg"): "is", ("was", "pl"): "were", ("were", "sg"): "was",
       ("'s", "pl"): "'re", ("'re", "sg"): "'s"}


def _verb_form(token, number: str) -> str | None:
    from lemminflect import getInflection

    low = token.lower_
    if (low, number) in _BE:
        return _BE[(low, number)]
    if token.tag_ == "VBZ" and number == "pl":
        forms = getInflection(token.lemma_, tag="VBP")
    elif token.tag_ == "VBP" and number == "sg":
        forms = getInflection(token.lemma_, tag="VBZ")
    else:
        return None
    return forms[0] if forms else None


def number_repairs(text: str, replacements: Sequence[Replacement], parse) -> list[Replacement]:
    """The number-agreement repairs of a mutant: for each replacement that changes number, its determiner and (as a
    subject) its finite verb. `parse(start, end) -> (doc, base)` gives a spaCy Doc of the original sentence holding
    text[start:end] and the sentence's offset (None: not parsed, nothing repaired)."""
    taken = [s for r in replacements for s in r.spans]
    found = []
    for r in replacements:
        before, after = grammatical_number(r.word), grammatical_number(r.replacement)
        if before is None or after is None or before == after:
            continue
        for s, e in r.spans:
            parsed = parse(s, e)
            if parsed is None:
                continue
            doc, base = parsed
            tokens = doc.char_span(s - base, e - base, alignment_mode="expand")
            if tokens is None:
                continue
            head = tokens.root
            for child in head.children:
                if child.dep_ != "det" or child.i >= tokens.start:
                    continue
                span = (base + child.idx, base + child.idx + len(child.text))
                if (child.lower_, after) in _DETERMINERS:
                    found.append(("number", r.attribute, child.text, _DETERMINERS[(child.lower_, after)], span))
                elif child.lower_ in ("a", "an") and after == "pl":  # "a man" -> "some disabled people"
                    found.append(("number", r.attribute, child.text, "some", span))
            if head.dep_ in ("nsubj", "nsubjpass"):
                verb = head.head
                finite = [t for t in (*[c for c in verb.children if c.dep_ in ("aux", "auxpass")], verb)
                          if t.tag_ in ("VBZ", "VBP") or t.lower_ in ("was", "were")]
                if finite:
                    t = finite[0]
                    new = _verb_form(t, after)
                    if new and new.lower() != t.lower_:
                        found.append(("number", r.attribute, t.text, new,
                                      (base + t.idx, base + t.idx + len(t.text))))
    return [x for x in _group(found) if all(_free(sp, taken) for sp in x.spans)]


# ---- pronouns that follow a name -----------------------------------------------------------------------------------

_PRONOUN = re.compile(r"(?<![\w'])(he|him|his|himself|she|her|hers|herself)(?![\w'])", re.I)
_MALE = {"he", "him", "his", "himself"}
_FEMALE = {"she", "her", "hers", "herself"}
# the pronouns whose other-gender form needs no context ("his" and "her" need the next word: _is_determiner)
_SWAPPED = {"he": "she", "she": "he", "him": "her", "himself": "herself", "herself": "himself", "hers": "his"}


def follow_pronouns(text: str, cause: str, name_spans: Sequence[Span], from_gender: str, to_gender: str,
                    stop_at: Sequence[int] = ()) -> list[Replacement]:
    """The pronouns of the person named at `name_spans`, changed from `from_gender` to `to_gender` ("male",
    "female"): every pronoun of the old gender from the name's first occurrence up to the first of `stop_at` (where
    another person of that gender is named), else to the end of the text. "her" is read as possessive ("his") when a
    noun-like word follows, else as an object ("him"); "his" alike ("her" / "hers"). A simple rule: a text with two
    people of the same gender before any stop, or a pronoun before the name, is not told apart."""
    if from_gender == to_gender or {from_gender, to_gender} != {"male", "female"} or not name_spans:
        return []
    start = min(s for s, _ in name_spans)
    end = min((p for p in stop_at if p > start), default=len(text))
    old = _MALE if from_gender == "male" else _FEMALE
    found = []
    for m in _PRONOUN.finditer(text, start, end):
        p = m.group(1).lower()
        if p not in old:
            continue
        if p in _SWAPPED:
            new = _SWAPPED[p]
        elif p == "his":
            new = "her" if starts_noun_phrase(text, m.end()) else "hers"
        else:  # her
            new = "his" if starts_noun_phrase(text, m.end()) else "him"
        found.append(("pronoun", cause, m.group(1), new, m.span(1)))
    return _group(found)


def repairs(text: str, replacements: Sequence[Replacement], parse=None) -> list[Replacement]:
    """Every --repair edit of the mutant whose dictionary replacements are `replacements` (number agreement only
    with `parse`, see number_repairs), without overlaps between them."""
    # number first: "a white man" -> "a Asian disabled people" needs "some", not "an"
    out = number_repairs(text, replacements, parse) if parse is not None else []
    taken = [s for r in out for s in r.spans]
    return out + [r for r in article_repairs(text, replacements) if all(_free(s, taken) for s in r.spans)]
