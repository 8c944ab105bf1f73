"""Rendering: one text that describes a person, written once in every audit category through explicit
descriptors ("The man ..." -> "The Black woman ...", "... his ..." -> "... her ..."), and the dependency invariant
over the renderings of one text.

The person is found with hinter's dictionary matcher (`WordMatcher`) over the category file's person nouns; the
identity words right before a person noun ("the black man", "an African American woman") are the text's own
descriptor and are replaced; the first mention gets the category's descriptor. A text holding words of more than
one sex (nouns or pronouns: "the man and his wife") is not rendered: which pronoun belongs to whom is not known.
Inserting a descriptor changes a sentence's structure, so the invariant compares the renderings of a text with
one another (each against the first: all are built the same way), never with the original. A French category file
(`language: fr`) renders with audit.french: the descriptor after the noun, the agreement carried.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..dictionary import WordMatcher
from ..languages.french import SentenceDocs
from ..person import driver_nlp
from ..records import apply_replacements, starts_sentence
from ..validity import changed_sentences
from ..validity.sentences import sentence_spans
from .categories import Categories
from .french import NOT_CARRIED, descriptor_after, french_edits, french_tagger, span_tagger
from .french import NOUN as FRENCH_NOUN

NO_PERSON = "no person noun"
BOTH_SEXES = "words of more than one sex"
NOT_VALID = "renderings differ in structure"
NOT_RENDERED_REASONS = (NO_PERSON, BOTH_SEXES, NOT_VALID, NOT_CARRIED)

# Tags a possessive use of "her"/"his" (PTB): "her book" (PRP$) against "saw her" (PRP) or "the book is his".
POSSESSIVE_TAG = "PRP$"
AMBIGUOUS_PRONOUNS = frozenset({"her", "his"})
NOUN_TAGS = frozenset({"NN", "NNS"})  # a person noun as a common noun ("NNP": a title; "UH": "man, ...")
_ARTICLE = re.compile(r"\b(a|an)(\s+)$", re.IGNORECASE)

Tagger = Callable[[str, Sequence[tuple[int, int]]], list[str]]  # (text, spans) -> the PTB tag of each span


@dataclass(frozen=True)
class Person:
    """What the matcher found in one text: the person's sex, its noun mentions, pronouns and descriptors."""

    sex: str | None  # None: no person noun, or words of several sexes
    reason: str | None  # why the text cannot be rendered (NO_PERSON, BOTH_SEXES), else None
    nouns: tuple[tuple[int, int, int], ...] = ()  # (start, end, index in the sex's noun list)
    descriptors: tuple[tuple[int, int, str], ...] = ()  # (start, end, race) of the identity words before a noun
    pronouns: tuple[tuple[int, int, str], ...] = ()  # (start, end, word lower-cased)
    observed_sex: str | None = None
    observed_race: str | None = None
    possessive: dict = field(default_factory=dict)  # (start, end) of each her/his -> tagged possessive (PRP$)
    names: tuple[tuple[int, int, str], ...] = ()  # (start, end, name) of the person's first names (its sex)
    last_names: tuple[tuple[int, int], ...] = ()  # (start, end) of a last name of the lists right after one
    follows: tuple[tuple[int, int, int], ...] = ()  # French: (noun start, start, end) of the descriptor after it


@dataclass(frozen=True)
class RenderedText:
    """One text of the dataset and, where it could be rendered, its rendering in each category."""

    index: int
    source_id: str | None
    text: str
    observed_sex: str | None
    observed_race: str | None
    renderings: dict = field(default_factory=dict)  # (sex, race) -> text; empty when not rendered
    reason: str | None = None  # why not rendered (NOT_RENDERED_REASONS, with the validity reason for NOT_VALID)
    named: bool = False  # the text names the person (a first name of the category file, of the person's sex)


class Finder:
    """The matchers of one category file, built once and used for every text."""

    def __init__(self, cats: Categories):
        self.cats = cats
        self.french = cats.language == "fr"
        self.noun_tags = frozenset({FRENCH_NOUN}) if self.french else NOUN_TAGS
        self.noun_of = {n: (s.name, i) for s in cats.sexes for i, n in enumerate(s.nouns)}
        self.pronoun_sex = {p: s.name for s in cats.sexes for p in s.pronouns.values()}
        shared = {p for p in self.pronoun_sex if sum(p in s.pronouns.values() for s in cats.sexes) > 1}
        if shared:  # a pronoun of two sexes (e.g. "they" for both) says nothing about the sex
            self.pronoun_sex = {p: s for p, s in self.pronoun_sex.items() if p not in shared}
        self.race_of = {w: r.name for r in cats.races for w in r.words}
        self.name_of = {n: (sex, r.name) for r in cats.races for sex, ns in r.names.items() for n in ns}
        # names of no marked race: they say the sex only (a name of a race's list wins)
        self.first_names = {**{n: (sex, None) for sex, ns in (cats.unmarked_names or {}).items() for n in ns},
                            **self.name_of}
        self.last_names = {n for r in cats.races for n in r.last_names}
        self.nouns = WordMatcher(self.noun_of)
        self.pronouns = WordMatcher(self.pronoun_sex)
        self.races = WordMatcher(self.race_of)
        self.names = WordMatcher(self.first_names)

    def _descriptor_before(self, text: str, start: int, race_spans: list[tuple[int, int, str]]) -> tuple[int, str] | None:
        """The identity word ending right before `start` (past spaces), longest first: (its start, race)."""
        end = len(text[:start].rstrip())
        if end == start:
            return None
        best = None
        for s, e, race in race_spans:
            if e == end and (best is None or s < best[0]):
                best = (s, race)
        return best

    def find(self, text: str, tagger: Tagger | None = None) -> Person:
        """The person of `text`. `tagger` tags the noun mentions (a noun tagged otherwise, "Man, ..." or "boy, it
        delivered", is no person) and the her/his pronouns (possessive or not); None: every mention counts."""
        nouns = sorted((s, e, w) for w, spans in self.nouns.find(text).items() for s, e in spans)
        # capitalised inside a sentence, a noun is part of a title or a name ("The Lady and the Duke")
        nouns = [(s, e, w) for s, e, w in nouns if not text[s].isupper() or text[s:e].isupper() or
                 starts_sentence(text, s)]
        # opening a sentence before a comma or "!", it is an interjection or a call: "Man, what a film", "Boy!"
        nouns = [(s, e, w) for s, e, w in nouns
                 if not (starts_sentence(text, s) and text[e:].lstrip()[:1] in (",", "!"))]
        pronouns = sorted((s, e, w) for w, spans in self.pronouns.find(text).items() for s, e in spans)
        possessive: dict[tuple[int, int], bool] = {}
        if nouns and tagger is not None:
            ambiguous = [(s, e) for s, e, w in pronouns if w in AMBIGUOUS_PRONOUNS]
            tags = tagger(text, [(s, e) for s, e, _ in nouns] + ambiguous)
            nouns = [n for n, t in zip(nouns, tags) if t in self.noun_tags]
            possessive = {sp: t == POSSESSIVE_TAG for sp, t in zip(ambiguous, tags[-len(ambiguous):] if ambiguous
                                                                       else [])}
        race_spans = [(s, e, self.race_of[w]) for w, spans in self.races.find(text).items() for s, e in spans]
        # only as written in the file, capitalised: "Mark", not "mark"
        found = sorted((s, e, text[s:e]) for spans in self.names.find(text).values() for s, e in spans
                       if text[s:e] in self.first_names)
        names = [(s, e, self.name_of[n]) for s, e, n in found if n in self.name_of]
        sexes = {self.noun_of[w][0] for _, _, w in nouns} | {self.pronoun_sex[w] for _, _, w in pronouns}
        descriptors, follows = [], []
        for s, e, _ in nouns:
            if self.french:  # "la voisine marocaine": the descriptor after the noun
                d = descriptor_after(text, e, race_spans)
                if d is not None:
                    descriptors.append(d)
                    follows.append((s, d[0], d[1]))
                continue
            d = self._descriptor_before(text, s, race_spans)
            if d is not None:
                descriptors.append((d[0], s, d[1]))
        races = {r for _, _, r in descriptors} | {v[1] for _, _, v in names}
        name_sexes = {v[0] for _, _, v in names}
        observed_sex = next(iter(sexes | name_sexes)) if len(sexes | name_sexes) == 1 else None
        observed_race = next(iter(races)) if len(races) == 1 else None
        if not nouns:
            return Person(None, NO_PERSON, observed_sex=observed_sex, observed_race=observed_race)
        if len(sexes) > 1:
            return Person(None, BOTH_SEXES, observed_sex=None, observed_race=observed_race)
        sex = sexes.pop()
        own = tuple((s, e, n) for s, e, n in found if self.first_names[n][0] == sex)
        last = []
        for _, e, _ in own:  # "Jamal Washington": a last name of the lists right after the first name
            m = re.match(r"\s+([A-Z][\w'-]*)", text[e:])
            if m and m.group(1) in self.last_names:
                last.append((e + m.start(1), e + m.end(1)))
        return Person(sex, None, tuple((s, e, self.noun_of[w][1]) for s, e, w in nouns),
                      tuple(descriptors), tuple(pronouns), observed_sex, observed_race, possessive, own, tuple(last),
                      tuple(follows))


def edits_for(text: str, person: Person, cats: Categories, sex: str, race: str, names: bool = True
              ) -> list[tuple[int, int, str]]:
    """The edits that render `text` as a person of (`sex`, `race`); `names`: with the person's names rendered."""
    target = next(s for s in cats.sexes if s.name == sex)
    source = next(s for s in cats.sexes if s.name == person.sex)
    r = next(x for x in cats.races if x.name == race)
    described = {noun_start: d_start for d_start, noun_start, _ in person.descriptors}
    edits = []
    for k, (s, e, i) in enumerate(person.nouns):
        noun = target.nouns[i]
        if k == 0 or s in described:
            start = described.get(s, s)
            edits.append((start, e, f"{r.descriptor} {noun}"))
            article = _ARTICLE.search(text[:start])
            if article is not None:
                edits.append((article.start(1), article.end(1), r.article))
        else:
            edits.append((s, e, noun))
    form_of = {}
    for form, word in source.pronouns.items():
        form_of.setdefault(word, []).append(form)
    for s, e, word in person.pronouns:
        forms = form_of.get(word, [])
        if len(forms) > 1:  # "her": object or possessive; "his": possessive or standing alone
            poss = person.possessive.get((s, e), True)
            forms = [f for f in forms if (f == "possessive") == poss] or forms
        if forms:
            edits.append((s, e, target.pronouns[forms[0]]))
    if names:
        edits += name_edits(text, person, cats, sex, r)
    return edits


def name_edits(text: str, person: Person, cats: Categories, sex: str, race) -> list[tuple[int, int, str]]:
    """The person's first names rendered as names of (`sex`, `race`): the category's own list (BBQ's names), else,
    for a category without one, the file's unmarked names of that sex (its descriptor alone then marks the
    race), else kept as written. The same position in the lists for every category of a text (from a hash of the
    text, one position per distinct name), so the renderings differ in the category only. Last names right after
    a first name are rendered only when every race has a list (`Categories.last_names_rendered`)."""
    if not person.names:
        return []
    pool = race.names.get(sex) or (cats.unmarked_names or {}).get(sex)
    base = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")
    distinct = list(dict.fromkeys(n for _, _, n in person.names))
    edits = []
    if pool:
        edits += [(s, e, pool[(base + distinct.index(n)) % len(pool)]) for s, e, n in person.names]
    if cats.last_names_rendered:
        edits += [(s, e, race.last_names[base % len(race.last_names)]) for s, e in person.last_names]
    return edits


def spacy_tagger() -> Tagger:
    """Tags the person nouns and her/his with the driver's spaCy pipeline (hinter.person's, loaded once)."""
    return span_tagger(driver_nlp(), lambda span: span[0].tag_)


def render_texts(records: Sequence, cats: Categories, validate: Callable, tagger: Tagger | None = None,
                 disagree: Callable | None = None) -> list[RenderedText]:
    """Each record (a TextRecord) rendered in every category, or the reason it is not. `validate(pairs)` is a
    Validator's `reasons`: per rendering, its changed sentence pairs against the text's first rendering -> None
    (valid) or why not. `disagree(pairs)` (a Validator's `disagree`, needed by a French file): per rendering less
    its inserted descriptor, its changed sentence pairs against the original -> whether a word stopped agreeing."""
    finder = Finder(cats)
    if finder.french and disagree is None:
        raise TypeError("French renderings need the agreement check (disagree)")
    probes: list[tuple[int, list]] = []  # (index in out, per category the changed pairs of its agreement probe)
    cells = cats.cells
    tagger = tagger or (french_tagger() if finder.french else spacy_tagger())
    out: list[RenderedText] = []
    pending: list[tuple[int, list]] = []  # (index in out, changed sentence pairs of each rendering but the first)
    for i, rec in enumerate(records):
        text = rec.text
        person = finder.find(text, tagger)
        if person.reason is not None:
            out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race,
                                    reason=person.reason))
            continue
        if finder.french:
            made = _french_renderings(text, person, cats)
            if isinstance(made, str):
                out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race,
                                        reason=f"{NOT_CARRIED} ({made})", named=bool(person.names)))
                continue
            renderings, checked, probe = made
            probes.append((len(out), [changed_sentences(text, p) for p in probe]))
        else:
            renderings = {c: apply_replacements(text, edits_for(text, person, cats, *c)) for c in cells}
            # the invariant on the renderings with the person's name as written: a name swap puts one proper noun
            # for another, and the parser's reading of a rare name varies with the name (docs/audit.md)
            checked = {c: apply_replacements(text, edits_for(text, person, cats, *c, names=False))
                       for c in cells} if person.names else renderings
        first = checked[cells[0]]
        pending.append((len(out), [changed_sentences(first, checked[c]) for c in cells[1:]]))
        out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race, renderings,
                                named=bool(person.names)))
    if probes:  # French: a rendering whose words stopped agreeing with the person is no rendering
        flat = [p for _, pairs in probes for p in pairs]
        broken = disagree(flat)
        k = 0
        for index, pairs in probes:
            if any(broken[k:k + len(pairs)]):
                t = out[index]
                out[index] = RenderedText(t.index, t.source_id, t.text, t.observed_sex, t.observed_race,
                                          reason=f"{NOT_CARRIED} (a word no longer agrees with the person)",
                                          named=t.named)
            k += len(pairs)
    # one call for every text: the validator parses each distinct sentence once
    flat = [p for i, pairs in pending if out[i].renderings for p in pairs]
    reasons = validate(flat) if flat else []
    k = 0
    for index, pairs in pending:
        if not out[index].renderings:
            continue
        failed = next((r for r in reasons[k:k + len(pairs)] if r is not None), None)
        k += len(pairs)
        if failed is not None:
            t = out[index]
            out[index] = RenderedText(t.index, t.source_id, t.text, t.observed_sex, t.observed_race,
                                      reason=f"{NOT_VALID} ({failed})", named=t.named)
    return out


def _french_renderings(text: str, person: Person, cats: Categories) -> tuple[dict, dict, list] | str:
    """(renderings, renderings with the names as written, the renderings less their inserted descriptor: the
    agreement probes) of a French text in every category, or why one of them cannot be made grammatical (then the
    text is not rendered at all: the design is paired)."""
    docs = SentenceDocs(text, sentence_spans(text))  # parsed once, for every category
    renderings, checked, probes = {}, {}, []
    for c in cats.cells:
        made, why = french_edits(text, person, cats, *c, docs)
        if why is not None:
            return why
        race = next(r for r in cats.races if r.name == c[1])
        names = name_edits(text, person, cats, c[0], race)
        renderings[c] = apply_replacements(text, made + names)
        checked[c] = apply_replacements(text, made) if names else renderings[c]
        bare, _ = french_edits(text, person, cats, *c, docs, describe=False)
        probes.append(apply_replacements(text, bare))
    return renderings, checked, probes
