"""Regression diff of two runs (two models, or two versions of one, on the same data and dictionary).

Mutants are matched by their original text and their pairs, so the runs may order or subset texts differently.
Only mutants tested in both runs (valid, with parseable outcomes) are compared: a bias of B is `new` when A
tested the same mutant without bias, `fixed` when A had it and B does not, `both` when both have it. Hidden
biases are counted apart. Biases whose mutant the other run did not test are `unmatched`.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

from hinter.analysis.measures import findings_section
from hinter.store import RunStore, open_run
from hinter.report.change import accuracy, change
from hinter.report.instances import shown_id

__all__ = ["CATEGORIES", "diff", "open_run"]  # open_run: moved to the store, kept here for its importers

CATEGORIES = ("new", "fixed", "both")


def _rows(store: RunStore) -> dict[tuple[str, str], dict]:
    texts = {t.text_id: (hashlib.sha256(t.text.encode()).hexdigest()[:16], t) for t in store.texts()}
    out = {}
    for m in store.tested_mutants():
        h, original = texts[m.text_id]
        out[(h, m.pair_key)] = {"text_id": m.text_id, "source_id": shown_id(original), "order": m.order,
                                "attributes": m.attributes,
                                "replacements": "; ".join(r.describe() for r in m.replacements),
                                "original_text": original.text, "mutant_text": m.text,
                                "original_outcome": original.outcome, "outcome": m.outcome, "bias": bool(m.bias),
                                "hidden": bool(m.hidden)}
    return out


def diff(a: RunStore, b: RunStore, name_a: str = "A", name_b: str = "B", summary_a: dict | None = None,
         summary_b: dict | None = None) -> dict:
    """Biases new, fixed and kept; `change`: what the fix did in words (significant cells per combination before
    and after, accuracy), from the runs' summaries (default: computed from the stores)."""
    sa, sb = a.settings(), b.settings()
    warnings = [f"{k} differs: {sa.get(k)!r} in {name_a}, {sb.get(k)!r} in {name_b}"
                for k in ("texts_fingerprint", "dictionary_fingerprint", "attributes", "order", "parser")
                if sa.get(k) != sb.get(k)]
    ra, rb = _rows(a), _rows(b)
    instances: dict[str, list] = {c: [] for c in CATEGORIES}
    unmatched = {"a": 0, "b": 0}
    by_combo: dict[str, dict[str, int]] = defaultdict(lambda: {c: 0 for c in CATEGORIES})
    for key in sorted(set(ra) | set(rb)):
        x, y = ra.get(key), rb.get(key)
        if x is None or y is None:
            if (x or y)["bias"]:
                unmatched["a" if y is None else "b"] += 1
            continue
        cat = "both" if x["bias"] and y["bias"] else "new" if y["bias"] else "fixed" if x["bias"] else None
        if cat is None:
            continue
        ref = x if cat == "fixed" else y
        # Hidden in the run that shows the bias (both: in either run).
        hidden = (x["hidden"] or y["hidden"]) if cat == "both" else ref["hidden"]
        by_combo[ref["attributes"]][cat] += 1
        instances[cat].append({"text_id_a": x["text_id"], "text_id_b": y["text_id"], "source_id_a": x["source_id"],
                               "source_id_b": y["source_id"], "order": ref["order"],
                               "attributes": ref["attributes"], "replacements": ref["replacements"],
                               "hidden": hidden, "original_outcome_a": x["original_outcome"],
                               "outcome_a": x["outcome"], "original_outcome_b": y["original_outcome"],
                               "outcome_b": y["outcome"], "original_text": ref["original_text"],
                               "mutant_text": ref["mutant_text"]})
    counts = {}
    for c in CATEGORIES:
        counts[c] = len(instances[c])
        counts[f"{c}_hidden"] = sum(i["hidden"] for i in instances[c])
    return {"a": {"name": name_a, "model": sa.get("model")}, "b": {"name": name_b, "model": sb.get("model")},
            "warnings": warnings, "compared_mutants": len(set(ra) & set(rb)), "counts": counts,
            "unmatched_biases": unmatched, "by_combination": dict(sorted(by_combo.items())), "instances": instances,
            "change": change(*((s or findings_section(st))["findings"] for s, st in ((summary_a, a), (summary_b, b))),
                             accuracy(a.texts()), accuracy(b.texts()))}
