"""The invariant's agreement check (validity.invariant.AGREEMENT), over the per-token features of a language's
parse (french.token_features): a word whose gender or number no longer agrees with its head.

The relations are read from the original's parse (the grammatical one): a determiner or adjective and its noun
(det, amod), an adjective or participle and its subject through être (cop, aux:pass, aux:tense). A relation that
agreed in the original (both features known and equal) and disagrees in the mutant (both known, different) is a
disagreement. The gender of adjectives, participles and determiners is read from their form where it shows
(french._form_gender), else from the morphologizer. Sentences whose token counts differ ("du" -> "de la") are
left to the POS and dependency comparison.
"""
from __future__ import annotations

Features = tuple[tuple[str, str, int, str, str, str], ...]
_FORM = ("ADJ", "PART", "DET")


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
    return out


def _gender(token, pos: str) -> str:
    _pos, _dep, _head, morph, form, _number = token
    return (form or morph) if pos in _FORM else morph


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
