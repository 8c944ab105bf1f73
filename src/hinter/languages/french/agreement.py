"""The invariant's agreement check (validity.invariant.AGREEMENT), over the per-token features of a language's
parse (grammar.token_features): a word whose gender or number no longer agrees with its head. The features are a
`FrenchFeatures` tuple, which compares itself with another (`disagreements`, `relaxed`): the invariant
(validity.invariant) and the audit's structure check (audit.render) call those methods on whatever features a
language's parse gives, and never learn which language it is.

The relations are read from the original's parse (the grammatical one): a determiner or adjective and its noun
(det, amod), an adjective or participle and its subject through être (cop, aux:pass, aux:tense). A relation that
agreed in the original (both features known and equal) and disagrees in the mutant (both known, different) is a
disagreement. The gender of adjectives, participles and determiners is read from their form where it shows
(grammar._form_gender), else from the morphologizer. Sentences whose token counts differ ("du" -> "de la") are
left to the POS and dependency comparison.
"""
from __future__ import annotations

Features = tuple[tuple[str, str, int, str, str, str, str], ...]


class FrenchFeatures(tuple):
    """Per token (pos, dep, head index, morphologizer gender, form gender, number, lower-case text) of one parsed
    French sentence (grammar.token_features), with the comparisons the invariant makes."""

    __slots__ = ()

    def disagreements(self, mutant) -> list[str]:
        return disagreements(self, mutant)

    def relaxed(self, tags, deps, mutant):
        return relaxed(tags, deps, self, mutant)

_FORM = ("ADJ", "PART", "DET")
FEM = "Fem"
# The small French parser's known flips on the words a mutation changes (measured on the planted French run,
# docs/languages.md): a person noun, an origin word or an inflected adjective read as NOUN, PROPN, ADJ, VERB or
# ADV ("voisin" ADJ, "voisine" NOUN; "vietnamienne" VERB; "mécontent" ADV, "mécontente" ADJ), attached as amod,
# nmod or appos. At a changed word these count as one tag and one label; everywhere else the paper's comparison is
# unchanged.
_CONTENT_TAGS = frozenset(("NOUN", "PROPN", "ADJ", "VERB", "ADV"))
_MODIFIER_DEPS = frozenset(("amod", "nmod", "appos", "acl"))
# Everywhere: être as auxiliary reads as tense or passive at random ("est arrivé": aux:tense, "est arrivée":
# aux:pass), or as a copula; both are grammatical, the same structure.
# aux:tense; the predicate then reads as an adjective with a copula or a participle with an auxiliary ("est
# satisfait": cop, "est satisfaite": aux:pass), and its obliques as arguments or modifiers
_SAME_DEPS = {"aux:pass": "aux:tense", "cop": "aux:tense", "nsubj:pass": "nsubj", "obl:agent": "obl",
              "obl:arg": "obl", "obl:mod": "obl"}


def _relations(f: Features) -> list[tuple[int, int]]:
    """(dependent, head) pairs that must agree."""
    out = []
    subjects: dict[int, int] = {}
    for i, (pos, dep, head, *_rest) in enumerate(f):
        if dep in ("nsubj", "nsubj:pass", "expl:subj"):
            subjects[head] = i
    for i, (pos, dep, head, *_rest) in enumerate(f):
        if dep in ("det", "amod") and head != i:
            out.append((i, head))
    for i, (pos, dep, head, *_rest) in enumerate(f):
        if pos == "ETRE" and head != i and head in subjects and f[head][0] in ("ADJ", "PART"):
            out.append((head, subjects[head]))
        elif pos == "ETRE" and head in subjects:
            # the word after être (past its adverbs) that the parser attached elsewhere: "est content" read as an
            # adverb, "est partie" as a modifier, "sont partis" as a noun
            j = i + 1
            while j < len(f) and f[j][0] in ("ADV", "PART", "ADP") and f[j][6] in _SKIP:
                j += 1
            predicate = j < len(f) and (f[j][0] in ("ADJ", "PART", "ADV") or
                                        f[j][0] == "NOUN" and f[j][6].endswith(_PARTICIPLE))
            if predicate and j != subjects[head] and (j, subjects[head]) not in out:
                out.append((j, subjects[head]))
    return out


_PARTICIPLE = ("é", "és", "ée", "ées", "i", "is", "ie", "ies", "u", "us", "ue", "ues")  # not médecin, avocat
# adverbs between être and its predicate ("est très content", "n'est pas partie")
_SKIP = frozenset("très toujours bien si trop plus moins assez vraiment déjà encore pas jamais tellement aussi "
                  "souvent peu ne n' n’ point".split())


def _gender(token, pos: str) -> str:
    """A determiner's, adjective's or participle's gender as its form shows it (french._form_gender; unknown when
    the form does not show it: the morphologizer's guess on "parle" read as an adjective is noise); a noun's from
    the morphologizer, unless its form is a distinct feminine (-trice, -ière, -enne...)."""
    _pos, _dep, _head, morph, form, _number, _text = token
    if pos in _FORM or pos in ("ADV", "NOUN") and form and not morph:
        return form
    return FEM if form == FEM else morph  # the morphologizer reads "actrice" and "infirmières" as masculine


def disagreements(original: Features, mutant: Features) -> list[str]:
    """The relations of `original` that agreed and no longer do in `mutant` ("amod:Gender"...); [] when the
    token counts differ or there are no features (a language without the check)."""
    if not original or len(original) != len(mutant):
        return []
    out = []
    for d, h in _relations(original):
        dep = original[d][1] if original[d][1] in ("det", "amod") else "predicate"
        pd, ph = original[d][0], original[h][0]
        pairs = (("Gender", (_gender(original[d], pd), _gender(original[h], ph)),
                  (_gender(mutant[d], pd), _gender(mutant[h], ph))),
                 ("Number", (original[d][5], original[h][5]), (mutant[d][5], mutant[h][5])))
        for feature, (a, b), (x, y) in pairs:
            if a and b and a == b and x and y and x != y and "," not in x + y:
                out.append(f"{dep}:{feature}")
    return out


def relaxed(tags: tuple[tuple[str, ...], tuple[str, ...]], deps: tuple[tuple[str, ...], tuple[str, ...]],
            original: Features, mutant: Features):
    """The (original, mutant) tags and dependency labels with the parser's known flips made equal: at a word the
    mutation changed (same token count, different text), a content tag and a modifier label of the mutant take the
    original's when both are in the same class; everywhere, être's tense/passive readings are one. Unchanged when
    the token counts differ (the paper's tolerant comparison handles those) or there are no features (English)."""
    (to, tm), (do, dm) = tags, deps
    do, dm = tuple(_SAME_DEPS.get(d, d) for d in do), tuple(_SAME_DEPS.get(d, d) for d in dm)
    if not original or len(original) != len(mutant) or len(to) != len(tm) or len(do) != len(dm) \
            or len(to) != len(original):
        return (to, tm), (do, dm)
    tm, dm = list(tm), list(dm)
    changed = [a[6] != b[6] for a, b in zip(original, mutant)]
    for i in range(len(changed) - 1):  # a changed noun and its changed adjective, the head read on the other word
        if changed[i] and changed[i + 1] and (dm[i], dm[i + 1]) == (do[i + 1], do[i]) and \
                _MODIFIER_DEPS & {do[i], do[i + 1]}:
            dm[i], dm[i + 1] = do[i], do[i + 1]
    for i, (a, b) in enumerate(zip(original, mutant)):
        if not changed[i]:
            continue
        if to[i] in _CONTENT_TAGS and tm[i] in _CONTENT_TAGS:
            tm[i] = to[i]
        if do[i] in _MODIFIER_DEPS and dm[i] in _MODIFIER_DEPS:
            dm[i] = do[i]
    return (to, tuple(tm)), (do, tuple(dm))
