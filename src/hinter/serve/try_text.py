"""One text through the campaign's stages, as `hinter serve` answers POST /api/try: the engine's own pieces
(mutation.generate, the validity Validator on changed sentence pairs, the model with retries, the oracle), on a
single text, nothing stored."""
from __future__ import annotations

import time
from typing import Sequence

from .. import oracle
from ..dictionary import Dictionary
from ..errors import ModelError
from ..models.base import predict_with_retries
from ..mutation import components, generate
from ..records import Edit, edits as edits_of
from ..validity import changed_sentence_pairs, sentence_spans


def marks(edits: Sequence[Edit]) -> list[list[int]]:
    """Where each edit's new word lies in the mutated text (edits in the original's coordinates; a replacement
    takes the case of the word it replaces, never its length)."""
    out, shift = [], 0
    for start, end, new in sorted(edits):
        out.append([start + shift, start + shift + len(new)])
        shift += len(new) - (end - start)
    return out


def _reasons(validator, pairs) -> list[str | None]:
    # the validity stage says why a mutant was discarded where it can (Validator.reasons)
    if hasattr(validator, "reasons"):
        return list(validator.reasons(pairs))
    return [None if v else "discarded" for v in validator.validate(pairs)]


def try_text(text: str, attributes: Sequence[str], order: int, dictionary: Dictionary, model, validator, *,
             max_pairs_per_text: int | None = None, seed: int = 0, query_discarded: bool = False) -> dict:
    """The original's outcome and every atomic and intersectional mutant of `text` up to `order` over
    `attributes`: its replacements, text (with `marks`, the changed words), validity verdict and reason, outcome,
    flip (`bias`) and, for intersectional ones, `hidden` and `strictly_hidden` as the engine decides them.
    `dictionary` is already restricted to the run's pairs; `model` is a loaded Model; `validator` a
    validity Validator. ModelError when the model gives no answer about the original."""
    t0 = time.perf_counter()
    gen = generate(0, text, dictionary, tuple(sorted(attributes)), order, max_pairs_per_text, seed)
    spans = sentence_spans(text)
    sentences = [text[a:b] for a, b in spans]
    pairs = [changed_sentence_pairs(text, spans, sentences, m.edits) for m in gen.mutants]
    reasons = _reasons(validator, pairs)
    t1 = time.perf_counter()
    asked = [m.text for m, r in zip(gen.mutants, reasons) if r is None or query_discarded]
    texts = list(dict.fromkeys([text, *asked]))
    answers = predict_with_retries(model, texts, retries=1, backoff_s=0.2)
    if isinstance(answers, str):
        raise ModelError(f"the model failed: {answers[:300]}", fix="Check the model, then try again.")
    by_text = dict(zip(texts, answers))
    original = by_text[text]
    if original.error:
        raise ModelError(f"the model gave no answer about the text ({original.raw[:300]})")
    rows, verdicts = [], {}
    for m, reason in zip(gen.mutants, reasons):
        o = by_text.get(m.text) if reason is None or query_discarded else None
        bias = oracle.is_bias(original.encode(), o.encode()) if o is not None and not o.error else None
        verdicts[m.key] = (reason is None, bias)
        rows.append((m, reason, o, bias))
    out = []
    for m, reason, o, bias in rows:
        valid = reason is None
        hidden = strictly = None
        if m.order >= 2 and valid and bias is not None:
            subs = [verdicts.get(k) for k in components(m)]
            hidden = oracle.is_hidden(bias, subs[:m.order])
            strictly = oracle.is_strictly_hidden(hidden, subs[m.order:])
        out.append({
            "order": m.order, "attributes": "+".join(m.attributes),
            "replacements": [{**r.to_json(), "describe": r.describe()} for r in m.replacements],
            "text": m.text, "marks": marks(edits_of(m.replacements)), "valid": valid, "discard_reason": reason,
            "outcome": None if o is None else o.encode(), "raw": None if o is None else o.raw,
            "bias": bias if valid else None, "hidden": hidden, "strictly_hidden": strictly})
    return {"original": {"text": text, "outcome": original.encode(), "raw": original.raw,
                         "marks": [list(x) for x in sorted({(s, e) for m in gen.mutants for s, e, _ in m.edits})]},
            "mutants": out, "overlaps_skipped": gen.overlaps_skipped,
            "seconds": {"validity": round(t1 - t0, 3), "model": round(time.perf_counter() - t1, 3)}}
