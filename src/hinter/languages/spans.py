"""Reading a parsed text for the audit, in any language: the tag of each character span (`span_tagger`) and the
spans of the people's names (`people_in`). The audit's English renderer (audit.render) and each language's own
(languages/french/audit.py) use them."""
from __future__ import annotations

from typing import Callable, Sequence


def people_in(doc, person_label: str) -> list[tuple[int, int]]:
    """The spans of the people's names of a parsed text: its person entities (`person_label`), and the proper
    nouns that open a sentence as its subject ("Maria has worked...": the small models' NER reads many first names
    as organisations or places), unless the sentence has an object pronoun ("Google hired her": "her" is the
    person, so "Google" is not) or they are a country, a date or a nationality. An organisation or a place opening
    the text as a subject before the person is mentioned is taken for a name: a limit (docs/audit.md)."""
    out = [(e.start_char, e.end_char) for e in doc.ents if e.label_ == person_label]
    for sent in doc.sents:
        tok = sent[0]
        if tok.pos_ != "PROPN" or not tok.text[:1].isupper() or tok.ent_type_ in NOT_PEOPLE:
            continue
        end = tok.i + 1
        while end < sent.end and doc[end].pos_ == "PROPN" and doc[end].text[:1].isupper():
            end += 1
        run = doc[tok.i:end]
        if run.root.dep_ in ("nsubj", "nsubj:pass", "nsubjpass") and not any(
                t.pos_ == "PRON" and t.dep_ in ("obj", "dobj") for t in sent):
            out.append((run.start_char, run.end_char))
    return sorted(set(out))


# Entity labels that are never a person's name; the small models label first names ORG, LOC or MISC as often as
# PERSON ("Maria" ORG, "Karim" LOC, "Nicolas" MISC), so those do not rule a subject out
NOT_PEOPLE = frozenset({"GPE", "NORP", "DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT",
                        "LANGUAGE"})


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
