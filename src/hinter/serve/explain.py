"""Why the dependency invariant discarded a mutant, for people: each changed sentence's part-of-speech tags and
dependency labels beside the original's, aligned the way Algorithm 4 walks them, the mismatches marked.
Computed on demand (the run stores no parse)."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from hinter.validity import changed_sentences, split_sentences, tolerant_compare


def align(s1: Sequence[str], s2: Sequence[str]) -> list[dict]:
    """The steps of `tolerant_compare(s1, s2)` (paper Algorithm 4): each {"a": index in s1 or None, "b": index in
    s2 or None, "status": "same" | "mismatch" | "skipped" (the longer side shifted past it) | "extra" (left over,
    counted as an error)}."""
    rows: list[dict] = []
    is1 = is2 = 0
    st1, st2 = len(s1), len(s2)
    limit, shift = abs(st1 - st2), 0
    while is1 < st1 and is2 < st2:
        if s1[is1] != s2[is2]:
            rows.append({"a": is1, "b": is2, "status": "mismatch"})
            if shift < limit:
                shift += 1
                if st1 > st2:
                    is1 += 1
                    rows.append({"a": is1, "b": None, "status": "skipped"})
                elif st1 < st2:
                    is2 += 1
                    rows.append({"a": None, "b": is2, "status": "skipped"})
        else:
            rows.append({"a": is1, "b": is2, "status": "same"})
        is1 += 1
        is2 += 1
    # an index the shift moved past the end is no element: drop it
    rows = [r for r in rows if (r["a"] is None or r["a"] < st1) and (r["b"] is None or r["b"] < st2)]
    rows += [{"a": i, "b": None, "status": "extra"} for i in range(is1, st1)]
    rows += [{"a": None, "b": i, "status": "extra"} for i in range(is2, st2)]
    return rows


@lru_cache(maxsize=1)
def _tokenizer():
    # the English tokenizer rules of the parser's pipeline, without loading a model: tokens to show beside tags
    from hinter.languages.parses import import_spacy
    spacy = import_spacy()
    return spacy.blank("en").tokenizer


def _tokens(sentence: str, n: int) -> list[str] | None:
    words = [t.text for t in _tokenizer()(sentence)]
    return words if len(words) == n else None


def explain(original: str, mutant: str, parser) -> dict:
    """{"reason": "sentence_count" | "pos" | "deps" | None, "sentences": [...]}: per changed sentence pair, both
    sentences with tokens, tags and labels and the alignment of each sequence, and which comparison failed."""
    pairs = changed_sentences(original, mutant)
    if pairs is None:
        return {"reason": "sentence_count", "sentences": [],
                "counts": [len(split_sentences(original)), len(split_sentences(mutant))]}
    parses = parser.parse([s for pair in pairs for s in pair]) if pairs else []
    out, reason = [], None
    for k, (a, b) in enumerate(pairs):
        pa, pb = parses[2 * k], parses[2 * k + 1]
        tags_ok, deps_ok = tolerant_compare(pa.tags, pb.tags), tolerant_compare(pa.deps, pb.deps)
        failed = None if tags_ok and deps_ok else ("pos" if not tags_ok else "deps")
        reason = reason or failed
        out.append({"original": {"text": a, "tokens": _tokens(a, len(pa.tags)), "tags": list(pa.tags),
                                 "deps": list(pa.deps)},
                    "mutant": {"text": b, "tokens": _tokens(b, len(pb.tags)), "tags": list(pb.tags),
                               "deps": list(pb.deps)},
                    "tags": align(pa.tags, pb.tags), "deps": align(pa.deps, pb.deps), "failed": failed})
    return {"reason": reason, "sentences": out}
