"""Rendering: one text that describes a person, written once in every audit category through explicit
descriptors ("The man ..." -> "The Black woman ...", "... his ..." -> "... her ..."), and the dependency invariant
over the renderings of one text.

The person is found with hinter's dictionary matcher (`WordMatcher`) over the category file's person nouns; the
identity words right before a person noun ("the black man", "an African American woman") are the text's own
descriptor and are replaced; the first mention gets the category's descriptor. A text holding words of more than
one sex (nouns or pronouns: "the man and his wife") is not rendered: which pronoun belongs to whom is not known.
Inserting a descriptor changes a sentence's structure, so the invariant compares the renderings of a text with
one another (each against the first: all are built the same way), never with the original. A language whose
descriptor goes after the noun and agrees with it (its `Language.audit` rules: French) renders with its own hooks:
the descriptor after the noun, the agreement carried (languages/french/audit.py).
"""
from __future__ import annotations

import hashlib
import re
import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Callable, Sequence

from hinter.mutation.dictionary import WordMatcher
from hinter.languages import get_language
from hinter.languages.spans import people_in, span_tagger
from hinter.mutation.person import driver_nlp
from hinter.records import apply_replacements, starts_sentence
from hinter.validity import changed_sentences
from hinter.validity.sentences import sentence_spans, split_sentences
from hinter.audit.categories import Categories

NO_PERSON = "no person noun"  # nor a name or a pronoun that says the person's sex
BOTH_SEXES = "words of more than one sex"
NO_ANCHOR = "no place for the descriptor"  # named by object or possessive pronouns only ("her work", "him")
NOT_VALID = "renderings differ in structure"
NOT_CARRIED = "agreement not carried"  # a language's agreement cannot be carried (a word its rules cannot inflect...)
NOT_RENDERED_REASONS = (NO_PERSON, BOTH_SEXES, NO_ANCHOR, NOT_VALID, NOT_CARRIED)

# Tags a possessive use of "her"/"his" (PTB): "her book" (PRP$) against "saw her" (PRP) or "the book is his".
POSSESSIVE_TAG = "PRP$"
AMBIGUOUS_PRONOUNS = frozenset({"her", "his"})
NOUN_TAGS = frozenset({"NN", "NNS"})  # a person noun as a common noun ("NNP": a title; "UH": "man, ...")
_ARTICLE = re.compile(r"\b(a|an)(\s+)$", re.IGNORECASE)
_SEX_ADJECTIVE = re.compile(r"\b(female|male)\b", re.IGNORECASE)

Tagger = Callable[[str, Sequence[tuple[int, int]]], list[str]]  # (text, spans) -> the PTB tag of each span
People = Callable[[str], list[tuple[int, int]]]  # text -> the spans of the people's names (PERSON entities)

# English titles before a surname, and the one each sex is rendered with ("Mr. Nguyen" -> "Ms. Nguyen")
TITLES = {"mr": "male", "mrs": "female", "ms": "female", "miss": "female"}
TITLE_OF = {"male": "Mr", "female": "Ms"}
_TITLE = re.compile(r"\b(Mr|Mrs|Ms|Miss)\b\.?\s+([A-Z][\w'-]*)")
# Race words whose capital is a writer's convention ("Black"/"black", "White"/"white"): an inserted one follows the
# text's own; the others are proper adjectives (Hispanic, Asian) and keep the category file's spelling
CASE_CONVENTION = frozenset({"black", "white"})


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
    anchor: int | None = None  # no person noun: where the descriptor goes in apposition (after a name or pronoun)
    titles: tuple[tuple[int, int, str], ...] = ()  # (start, end, sex) of each "Mr"/"Ms" before a surname

    how: str = "noun"  # how the text names its person: "noun" (the descriptor before it), "name" or "pronoun"
    predicates: tuple[tuple[int, int, int], ...] = ()  # French: person nouns read as predicates (start, end, index)


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
    how: str | None = None  # how the text names its person (Person.how: noun, name, pronoun); None: not rendered


@lru_cache(maxsize=None)
def origin_words(language: str) -> frozenset[str]:
    """The race and origin words of the language's built-in dictionary (its race/GROUP.csv word lists)."""
    root = resources.files("hinter") / "data" / get_language(language).dictionary / "race"
    words = set()
    for f in root.iterdir():
        if f.name.endswith(".csv") and "_" not in f.name:
            words |= {w.strip().lower() for w in f.read_text(encoding="utf-8").splitlines() if w.strip()}
    rules = get_language(language).audit
    if rules is not None:  # and the language's own (French: the nationalities, "Le candidat sénégalais")
        words |= rules.origin_words()
    return frozenset(words)


class Finder:
    """The matchers of one category file, built once and used for every text."""

    def __init__(self, cats: Categories):
        self.cats = cats
        # the language's rendering rules: the descriptor after the noun, the agreement carried (None: English's)
        self.rules = get_language(cats.language).audit
        self.agreeing = self.rules is not None
        self.noun_tags = frozenset({self.rules.noun_tag}) if self.agreeing else NOUN_TAGS
        self.noun_of = {n: (s.name, i) for s in cats.sexes for i, n in enumerate(s.nouns)}
        if {s.name for s in cats.sexes} == {"female", "male"} and not self.agreeing:  # the sex as an adjective
            self.noun_of = {"female": ("female", -1), "male": ("male", -1), **self.noun_of}
        self.pronoun_sex = {p: s.name for s in cats.sexes for p in s.pronouns.values()}
        shared = {p for p in self.pronoun_sex if sum(p in s.pronouns.values() for s in cats.sexes) > 1}
        if shared:  # a pronoun of two sexes (e.g. "they" for both) says nothing about the sex
            self.pronoun_sex = {p: s for p, s in self.pronoun_sex.items() if p not in shared}
        # the file's race words, and the origin words of the language's dictionary (race/GROUP.csv: "Nigerian",
        # "Irish", "européen"), which mark no category of the file but are the text's own descriptor all the same:
        # replaced, never kept beside the rendering's ("Le directeur noir européen")
        self.race_of = {**{w: None for w in origin_words(cats.language)},
                        **{w: r.name for r in cats.races for w in r.words}}
        self.name_of = {n: (sex, r.name) for r in cats.races for sex, ns in r.names.items() for n in ns}
        # names of no marked race: they say the sex only (a name of a race's list wins)
        self.first_names = {**{n: (sex, None) for sex, ns in (cats.unmarked_names or {}).items() for n in ns},
                            **self.name_of}
        self.last_names = {n for r in cats.races for n in r.last_names}
        self.nouns = WordMatcher([n for x in cats.sexes for n in x.nouns])
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

    def find(self, text: str, tagger: Tagger | None = None, people: People | None = None) -> Person:
        """The person of `text`. `tagger` tags the noun mentions (a noun tagged otherwise, "Man, ..." or "boy, it
        delivered", is no person) and the her/his pronouns (possessive or not); None: every mention counts.
        `people(text)`: the spans of the names of people (the parser's PERSON entities), read when the text names
        its person without a person noun ("Emily is a nurse. She..."); None: only the file's names are read."""
        nouns = sorted((s, e, w) for w, spans in self.nouns.find(text).items() for s, e in spans)
        # capitalised inside a sentence, a noun is part of a title or a name ("The Lady and the Duke")
        nouns = [(s, e, w) for s, e, w in nouns if not text[s].isupper() or text[s:e].isupper() or
                 starts_sentence(text, s)]
        # opening a sentence before a comma or "!", it is an interjection or a call: "Man, what a film", "Boy!"
        nouns = [(s, e, w) for s, e, w in nouns
                 if not (starts_sentence(text, s) and text[e:].lstrip()[:1] in (",", "!"))]
        # part of a compound ("aide-cuisinière", "step-mother"): not the file's noun
        nouns = [(s, e, w) for s, e, w in nouns if text[s - 1:s] != "-" and text[e:e + 1] != "-"]
        pronouns = sorted((s, e, w) for w, spans in self.pronouns.find(text).items() for s, e in spans)
        possessive: dict[tuple[int, int], bool] = {}
        predicates = []
        if (nouns or pronouns) and tagger is not None:
            ambiguous = [(s, e) for s, e, w in pronouns if w in AMBIGUOUS_PRONOUNS]
            tags = tagger(text, [(s, e) for s, e, _ in nouns] + ambiguous)
            # French: a person noun the parser reads as a verb or an adjective after être ("a été vendeuse") is a
            # predicate of the person: no mention, but its gender follows the person's
            # ...unless a determiner opens it ("Le postulant a une formation": the parser reads "postulant" as an
            # adjective of "formation"): a mention
            mention = [t in self.noun_tags or self.agreeing and
                       self.rules.determiner_before.search(text[:s]) is not None for (s, _, _), t in zip(nouns, tags)]
            predicates = [n for n, t, m in zip(nouns, tags, mention) if self.agreeing and not m and
                          t in ("VERB", "ADJ", "AUX")]
            nouns = [n for n, m in zip(nouns, mention) if m]
            possessive = {sp: t == POSSESSIVE_TAG for sp, t in zip(ambiguous, tags[-len(ambiguous):] if ambiguous
                                                                       else [])}
        race_spans = [(s, e, self.race_of.get(w)) for w, spans in self.races.find(text).items() for s, e in spans]
        # only as written in the file, capitalised: "Mark", not "mark"
        found = sorted((s, e, text[s:e]) for spans in self.names.find(text).values() for s, e in spans
                       if text[s:e] in self.first_names)
        names = [(s, e, self.name_of[n]) for s, e, n in found if n in self.name_of]
        titles = [(m.start(1), m.end(1), TITLES[m.group(1).lower()], m.end(2)) for m in _TITLE.finditer(text)]
        if not nouns and not self.agreeing:
            nouns = self._sex_adjective(text, pronouns, race_spans)
        sexes = {self.noun_of[w][0] for _, _, w in nouns} | {self.pronoun_sex[w] for _, _, w in pronouns}
        descriptors, follows = [], []
        for s, e, _ in nouns:
            if self.agreeing:  # "la voisine marocaine": the descriptor after the noun
                d = self.rules.descriptor_after(text, e, race_spans)
                if d is not None:
                    descriptors.append(d)
                    follows.append((s, d[0], d[1]))
                continue
            d = self._descriptor_before(text, s, race_spans)
            if d is not None:
                descriptors.append((d[0], s, d[1]))
        races = {r for _, _, r in descriptors if r is not None} | {v[1] for _, _, v in names if v[1] is not None}
        name_sexes = {v[0] for _, _, v in names}
        observed_sex = next(iter(sexes | name_sexes)) if len(sexes | name_sexes) == 1 else None
        observed_race = next(iter(races)) if len(races) == 1 else None
        if len(sexes) > 1:
            return Person(None, BOTH_SEXES, observed_sex=None, observed_race=observed_race)
        first_mention = min([s for s, _, _ in pronouns] + [s for s, _, _ in nouns] + [len(text)])
        unlisted = self._unlisted_names(text, found, titles, people, first_mention)
        if nouns and self.agreeing and (unlisted or any(s < nouns[0][0] for s, _, _ in found)):
            # a named person ("Fatou est cuisinière"): no French names to render it, the name becomes the
            # described noun and the nouns after it are predicates of the person
            predicates, nouns = predicates + nouns, []
        if not nouns:  # named by a name or a pronoun only: the descriptor goes in apposition
            person = self._named(text, pronouns, found, titles, unlisted, observed_sex, observed_race, possessive)
        else:
            sex = sexes.pop()
            own = tuple(sorted([(s, e, n) for s, e, n in found if self.first_names[n][0] == sex] + unlisted))
            person = Person(sex, None, tuple((s, e, self.noun_of[w][1]) for s, e, w in nouns),
                            tuple(descriptors), tuple(pronouns), observed_sex, observed_race, possessive, own,
                            self._last_names(text, own), tuple(follows))
        kept = tuple((s, e, self.noun_of[w][1]) for s, e, w in predicates if self.noun_of[w][0] == person.sex)
        return dataclasses.replace(person, predicates=kept) if kept and person.reason is None else person

    def _sex_adjective(self, text, pronouns, race_spans) -> list[tuple[int, int, str]]:
        """English: "female"/"male" naming the person before any pronoun, after a race word or opening a sentence
        ("Black female candidate with...", "Female, 34, nurse"): the mention that carries the descriptor, its
        sex word rendered in the category's sex (the sexes must be named female and male)."""
        first = pronouns[0][0] if pronouns else len(text)
        for m in _SEX_ADJECTIVE.finditer(text[:first]):
            word = m.group(1).lower()
            if word in self.noun_of and (starts_sentence(text, m.start(1)) or
                                         self._descriptor_before(text, m.start(1), race_spans) is not None):
                return [(m.start(1), m.end(1), word)]
        return []

    def _last_names(self, text: str, own) -> tuple[tuple[int, int], ...]:
        """"Jamal Washington": a last name of the lists right after each first name."""
        last = []
        for _, e, _ in own:
            m = re.match(r"\s+([A-Z][\w'-]*)", text[e:])
            if m and m.group(1) in self.last_names:
                last.append((e + m.start(1), e + m.end(1)))
        return tuple(last)

    def _unlisted_names(self, text, found, titles, people, first_mention) -> list[tuple[int, int, str]]:
        """The person's first name when no list has it: a name of `people` (a PERSON entity, or a proper noun
        opening a sentence as its subject) that opens a sentence before every other mention of the person ("Emily
        is a nurse. She...", "Karim est cariste. Il..."), outside a title's surname."""
        listed = {s for s, _, _ in found}
        out = []
        for s, e in (people(text) if people is not None else []):
            if s not in listed and s < first_mention and text[s:s + 1].isupper() and starts_sentence(text, s) and \
                    not any(t[0] <= s <= t[3] for t in titles):
                first = re.match(r"[\w'-]+", text[s:e]).group(0)
                out.append((s, s + len(first), first))
        return out[:1]

    def _named(self, text, pronouns, found, titles, unlisted, observed_sex, observed_race, possessive) -> Person:
        """A person named without a person noun: by a first name ("Maria has..."), a title and surname ("Mr. Nguyen
        has..."), or a subject pronoun ("She has run a bakery..."). The sex is the pronouns' (else the name's or
        the title's); the anchor, after which the descriptor goes in apposition ("She, a Black woman, has run"), is
        the earliest of the person's first name (past its last name), title and surname, and subject pronoun."""
        sex = next(iter({self.pronoun_sex[w] for _, _, w in pronouns}), None)
        if sex is None:  # no pronoun: one name or title says the sex
            said = {self.first_names[n][0] for _, _, n in found} | {t[2] for t in titles}
            sex = next(iter(said)) if len(said) == 1 else None
        if sex is None:
            return Person(None, NO_PERSON, observed_sex=observed_sex, observed_race=observed_race)
        own = sorted([(s, e, n) for s, e, n in found if self.first_names[n][0] == sex] + unlisted)
        # the anchor: (position after which the apposition goes, mention start)
        anchors = []
        if own:  # past a capitalised word right after the first name: its last name ("Jamal Washington, a ...")
            s, e, _ = own[0]
            m = re.match(r" [A-Z][\w'-]*", text[e:])
            anchors.append((e + m.end() if m else e, s))
        anchors += [(end, s) for s, _, sx, end in titles if sx == sex]
        subject = {x.pronouns.get("subject") for x in self.cats.sexes if x.name == sex}
        anchors += [(e, s) for s, e, w in pronouns if w in subject]
        anchors = [a for a in anchors if _apposable(text, a[0])]
        if not anchors:
            return Person(None, NO_ANCHOR, observed_sex=observed_sex, observed_race=observed_race)
        anchor, start = min(anchors, key=lambda a: a[1])
        how = "pronoun" if any(s == start for s, _, _ in pronouns) else "name"
        return Person(sex, None, (), (), tuple(pronouns), observed_sex, observed_race, possessive,
                      tuple((s, e, n) for s, e, n in own), self._last_names(text, [x for x in own if x[2] in
                                                                                   self.first_names]),
                      anchor=anchor, titles=tuple((s, e, sx) for s, e, sx, _ in titles), how=how)


def _apposable(text: str, end: int) -> bool:
    """Whether an apposition can follow the word ending at `end`: a space and a word, or a comma, come next
    ("She's", "she." and "he/she" take none)."""
    rest = text[end:]
    return bool(re.match(r"(\s+[\w(\"“'‘-]|,)", rest))


def edits_for(text: str, person: Person, cats: Categories, sex: str, race: str, names: bool = True
              ) -> list[tuple[int, int, str]]:
    """The edits that render `text` as a person of (`sex`, `race`); `names`: with the person's names rendered.
    The first mention gets the descriptor ("the man" -> "the Black woman"), or, without a person noun, an
    apposition after the name or pronoun ("She, a Black woman, has run"); the text's own descriptor is replaced
    word for word in the text's casing convention ("The White man" -> "The Black woman", never "The Black Woman");
    an a/an before a changed word follows its sound (inflect: "an Asian woman", "a European man")."""
    target = next(s for s in cats.sexes if s.name == sex)
    source = next(s for s in cats.sexes if s.name == person.sex)
    r = next(x for x in cats.races if x.name == race)
    descriptor = cased_descriptor(r.descriptor, case_convention(text, person))
    # English descriptors are (start, the noun's start, race): the word ends where the spaces before the noun begin
    described = {noun_start: (d_start, len(text[:noun_start].rstrip())) for d_start, noun_start, _ in
                 person.descriptors}
    edits = []
    for k, (s, e, i) in enumerate(person.nouns):
        noun = target.nouns[i] if i >= 0 else target.name  # -1: "female"/"male"
        if s in described:  # the text's own descriptor, replaced by the category's
            d_s, d_e = described[s]
            edits += literal(text, d_s, d_e, descriptor)
            edits.append((s, e, noun))
        elif k == 0 and not described:  # described once: the text's own descriptor's mention ("The candidate
            # is a Black woman": not "The Asian candidate is an Asian woman")
            edits += literal(text, s, e, f"{descriptor} {noun}" if not text[s:e].isupper() else
                             f"{descriptor} {noun}".upper())
        else:
            edits.append((s, e, noun))
    if person.anchor is not None:  # no person noun: "She, a Black woman, has run..."
        edits.append((person.anchor, person.anchor, f", {an(descriptor)} {target.nouns[0]},"))
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
    if sex != person.sex:  # "Mr. Nguyen" -> "Ms. Nguyen"
        edits += [(s, e, TITLE_OF[sex]) for s, e, _ in person.titles]
    if names:
        edits += name_edits(text, person, cats, sex, r)
    return edits + articles(text, edits)


def literal(text: str, start: int, end: int, new: str) -> list[tuple[int, int, str]]:
    """Edits that put `new` in place of text[start:end] as written (its first letter a capital at a sentence's
    start): an insertion and a deletion, since apply_replacements gives a replacement the case of the word it
    replaces, which would make "the White man" -> "the Black Woman"."""
    if starts_sentence(text, start):
        new = new[:1].upper() + new[1:]
    return [(start, start, new), (start, end, "")]


def case_convention(text: str, person: Person) -> str | None:
    """"upper" or "lower": how the text writes its own Black/White inside a sentence; None: it does not say."""
    for s, e, _ in person.descriptors:
        word = text[s:e].strip()
        if word.lower() in CASE_CONVENTION and not starts_sentence(text, s):
            return "upper" if word[0].isupper() else "lower"
    return None


def cased_descriptor(descriptor: str, convention: str | None) -> str:
    """The category's descriptor in the text's convention (Black/White capitalised or not); other words, and every
    word in a text that does not say, as the category file writes them."""
    if convention is None or descriptor.lower() not in CASE_CONVENTION:
        return descriptor
    return descriptor[:1].upper() + descriptor[1:].lower() if convention == "upper" else descriptor.lower()


@lru_cache(maxsize=1)
def _inflect():
    import inflect
    return inflect.engine()


def an(word: str) -> str:
    """`word` after "a" or "an", as its sound says ("an Asian", "a European", "an hour")."""
    return _inflect().a(word)


def articles(text: str, edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The a/an edits that the other edits need: an article right before a changed word takes the one of the
    word's sound ("an Asian woman" -> "a Black woman", "a man" -> "an Indigenous man")."""
    out = []
    changed = sorted((s, e, new) for s, e, new in edits if new.strip())
    for s, e, new in changed:
        m = _ARTICLE.search(text[:s])
        if m is None or any(a < m.end(1) and m.start(1) < b for a, b, n in edits if n):
            continue
        word = new.split()[0]
        article = an(word).split()[0]
        if article.lower() != m.group(1).lower():
            out.append((m.start(1), m.end(1), article))
    return out


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


def spacy_people() -> People:
    """The names of people in a text, by the driver's spaCy pipeline (people_in)."""
    return lambda text: people_in(driver_nlp()(text), "PERSON")


def spacy_tagger() -> Tagger:
    """Tags the person nouns and her/his with the driver's spaCy pipeline (hinter.mutation.person's, loaded once)."""
    return span_tagger(driver_nlp(), lambda span: span[0].tag_)


def render_texts(records: Sequence, cats: Categories, validate: Callable, tagger: Tagger | None = None,
                 disagree: Callable | None = None, people: People | None = None,
                 parse: Callable | None = None) -> list[RenderedText]:
    """Each record (a TextRecord) rendered in every category, or the reason it is not. `validate(pairs)` is a
    Validator's `reasons`: per rendering, its changed sentence pairs against the text's first rendering -> None
    (valid) or why not. `disagree(pairs)` (a Validator's `disagree`, needed by a French file): per rendering less
    its inserted descriptor, its changed sentence pairs against the original -> whether a word stopped agreeing.
    `people`: the names of people in a text (default: the language's spaCy NER and proper nouns). `parse` (a
    Parser's `parse`): a text whose renderings fail `validate` is judged again with the parser's flips at the
    rendering's own words tolerated (renderings_conform); None: `validate` alone decides."""
    finder = Finder(cats)
    if finder.agreeing and disagree is None:
        raise TypeError(f"{get_language(cats.language).name} renderings need the agreement check (disagree)")
    probes: list[tuple[int, list]] = []  # (index in out, per category the changed pairs of its agreement probe)
    cells = cats.cells
    tagger = tagger or (finder.rules.tagger() if finder.agreeing else spacy_tagger())
    people = people or (finder.rules.people() if finder.agreeing else spacy_people())
    out: list[RenderedText] = []
    pending: list[tuple[int, list, list]] = []  # (index in out, changed sentence pairs of each rendering but the
    # first, the renderings checked)
    for i, rec in enumerate(records):
        text = rec.text
        person = finder.find(text, tagger, people)
        if person.reason is not None:
            out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race,
                                    reason=person.reason))
            continue
        if finder.agreeing:
            made = _agreeing_renderings(text, person, cats, finder.rules)
            if isinstance(made, str):
                out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race,
                                        reason=f"{NOT_CARRIED} ({made})", named=bool(person.names),
                                        how=person.how))
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
        pending.append((len(out), [changed_sentences(first, checked[c]) for c in cells[1:]], list(checked.values())))
        out.append(RenderedText(i, rec.source_id, text, person.observed_sex, person.observed_race, renderings,
                                named=bool(person.names), how=person.how))
    if probes:  # French: a rendering whose words stopped agreeing with the person is no rendering
        flat = [p for _, pairs in probes for p in pairs]
        broken = disagree(flat)
        k = 0
        for index, pairs in probes:
            if any(broken[k:k + len(pairs)]):
                t = out[index]
                out[index] = RenderedText(t.index, t.source_id, t.text, t.observed_sex, t.observed_race,
                                          reason=f"{NOT_CARRIED} (a word no longer agrees with the person)",
                                          named=t.named, how=t.how)
            k += len(pairs)
    # one call for every text: the validator parses each distinct sentence once
    flat = [p for i, pairs, _ in pending if out[i].renderings for p in pairs]
    reasons = validate(flat) if flat else []
    k = 0
    tokenize = (finder.rules.nlp() if finder.agreeing else driver_nlp()).tokenizer if parse is not None else None
    for index, pairs, checked in pending:
        if not out[index].renderings:
            continue
        failed = next((r for r in reasons[k:k + len(pairs)] if r is not None), None)
        k += len(pairs)
        if failed is not None and parse is not None and renderings_conform(
                checked, parse, tokenize, finder.rules.shared_flips if finder.agreeing else SHARED_FLIPS):
            failed = None
        if failed is not None:
            t = out[index]
            out[index] = RenderedText(t.index, t.source_id, t.text, t.observed_sex, t.observed_race,
                                      reason=f"{NOT_VALID} ({failed})", named=t.named, how=t.how)
    return out


# Tags one word of a rendering may take where another rendering's word has another: the small parsers read "White"
# as a proper noun and "Black" as an adjective, "autochtone" as a verb and "noire" as an adjective
_WORD_TAGS = frozenset({"JJ", "NN", "NNS", "NNP", "NNPS", "PRP", "PRP$", "VBN", "VBG",
                        "ADJ", "NOUN", "PROPN", "PRON", "VERB"})
# Words the renderings share whose tag or label may differ in one sentence: the small parsers' noise between two
# sentences that differ in a descriptor or a pronoun only ("ans" nmod or obl:arg, "a" VERB or AUX)
# (a language with agreement rules gives its own, AuditRules.shared_flips: French renderings change several words
# of a sentence with the sex, each a chance for its parser to read a shared neighbour otherwise; docs/audit.md)
SHARED_FLIPS = 1


def renderings_conform(renderings: Sequence[str], parse: Callable, tokenize: Callable,
                       shared_flips: int = SHARED_FLIPS) -> bool:
    """Whether the renderings of one text have one structure once the parser's noise is tolerated: against one of
    them taken as the reference (any one that makes it so: the small parser's noise may be in the first), every
    other has the same sentences and tokens; a word it does not share with the reference (the descriptor, the person
    noun, a pronoun, a/an) may be tagged otherwise within the word classes above and attached with another label;
    of the words it shares, at most `shared_flips` per sentence may have another tag or label. The renderings are
    built alike and differ in their category words only: what this refuses is a sentence read with another
    structure (a descriptor read as a name, "Ma voisine hispanique" read as a phrase of its own). Each distinct
    sentence is parsed once."""
    split = [split_sentences(r) for r in renderings]
    if len({len(x) for x in split}) != 1:
        return False
    distinct = list(dict.fromkeys(x for sents in split for x in sents))
    parsed = dict(zip(distinct, parse(distinct)))
    words = {x: [t.text for t in tokenize(x)] for x in distinct}

    def alike(first: str, other: str) -> bool:
        a, b, pa, pb = words[first], words[other], parsed[first], parsed[other]
        if not (len(a) == len(b) == len(pa.tags) == len(pb.tags)):
            return False
        # a language with agreement features (French) has its parser's known flips at the changed words made equal
        # first, as the mutation invariant has (the features' `relaxed`: être's tense/passive/copula readings, a
        # changed noun read as an adjective)
        (ta, tb), (da, db) = pa.features.relaxed((pa.tags, pb.tags), (pa.deps, pb.deps), pb.features) \
            if pa.features else ((pa.tags, pb.tags), (pa.deps, pb.deps))
        da, db = list(da), list(db)
        for i in range(len(a) - 1):  # a noun and its changed descriptor, the head read on the other word
            if (a[i] != b[i] or a[i + 1] != b[i + 1]) and (da[i], da[i + 1]) == (db[i + 1], db[i]):
                db[i], db[i + 1] = da[i], da[i + 1]
        flips = 0
        for wa, wb, ta, tb, la, lb in zip(a, b, ta, tb, da, db):
            if wa == wb:
                flips += ta != tb or la != lb
            elif ta != tb and not {ta, tb} <= _WORD_TAGS:
                return False
        return flips <= shared_flips

    return any(all(x == y or alike(x, y) for other in split for x, y in zip(ref, other)) for ref in split)


def _agreeing_renderings(text: str, person: Person, cats: Categories, rules) -> tuple[dict, dict, list] | str:
    """(renderings, the renderings the invariant compares, the renderings less their inserted descriptor: the
    agreement probes) of a French text in every category, or why one of them cannot be made grammatical (then the
    text is not rendered at all: the design is paired). The invariant compares the renderings with the first
    race's descriptor in every category, so across the sexes only: fr_core_news_sm reads a sentence with another
    structure for another adjective alone ("Une femme blanche dirige": "dirige" an adjective; "Une femme
    hispanique dirige": a verb), and a French descriptor is one adjective after the noun, checked when the category
    file is read (docs/audit.md)."""
    docs = rules.sentence_docs(text, sentence_spans(text))  # parsed once, for every category
    renderings, checked, probes = {}, {}, []
    same = cats.races[0].name
    for c in cats.cells:
        made, why = rules.edits(text, person, cats, *c, docs)
        if why is not None:
            return why
        race = next(r for r in cats.races if r.name == c[1])
        names = name_edits(text, person, cats, c[0], race)
        renderings[c] = apply_replacements(text, made + names)
        if c[0] not in {x[0] for x in checked}:
            one, _ = rules.edits(text, person, cats, c[0], same, docs)
            checked[c] = apply_replacements(text, one)
        else:
            checked[c] = next(v for k, v in checked.items() if k[0] == c[0])
        bare, _ = rules.edits(text, person, cats, *c, docs, describe=False)
        probes.append(apply_replacements(text, bare))
    return renderings, checked, probes
