"""Each bias of a run as a person inspects it: the original, every atomic component and the mutant, with the
replaced spans, outcomes, raw answers and the attribution (the smallest sub-combination that flips the outcome).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..measures import attribution, pair_id, verdicts
from ..mutation import match_case
from ..store import RunStore


@dataclass
class Version:
    """One text shown in an instance: the original, a component, or the biased mutant."""

    label: str                       # "Original", "gender only", "gender + race"
    text: str
    edits: list[tuple[int, int, str]]  # (start, end) in the original, and the new word, applied in this version
    valid: bool | None = None        # None for the original
    outcome: str | None = None
    raw: str | None = None
    bias: bool | None = None         # outcome differs from the original's


@dataclass
class Instance:
    mutant_id: int
    text_id: int
    order: int
    attributes: str
    replacements: list[dict]
    original: Version
    mutant: Version
    components: list[Version] = field(default_factory=list)
    hidden: bool | None = None
    strictly_hidden: bool | None = None
    attribution: dict | None = None  # intersectional only: see measures.attribution

    @property
    def kind(self) -> str:
        return "atomic" if self.order == 1 else "intersectional"

    @property
    def target_groups(self) -> list[str]:
        return [r["target_group"] for r in self.replacements]

    @property
    def all_spans(self) -> list[tuple[int, int]]:
        return sorted((s, e) for r in self.replacements for s, e in r["spans"])

    def flipped_by_text(self) -> str:
        """The attribution in words: which replacements already flip the outcome on their own."""
        if self.attribution is None:
            return ""
        by_id = {pair_id(r): r for r in self.replacements}
        if self.attribution["flipped_by"]:
            return " | ".join(" + ".join(describe(by_id[p]) for p in sub) for sub in self.attribution["flipped_by"])
        return "none"


def describe(r: dict) -> str:
    return f"{r['attribute']}: {r['word']} -> {r['replacement']}"


def _edits(reps: list[dict]) -> list[tuple[int, int, str]]:
    return sorted((s, e, r["replacement"]) for r in reps for s, e in r["spans"])


def rebuild(original: str, edits: list[tuple[int, int, str]]) -> str:
    """The text of a version, from the original and its edits (equal to the stored mutant text)."""
    out, pos = [], 0
    for s, e, new in edits:
        out += [original[pos:s], match_case(original[s:e], new)]
        pos = e
    return "".join(out + [original[pos:]])


def load_instances(store: RunStore, limit: int | None = None) -> list[Instance]:
    """Every valid mutant that exposes bias, ordered by text and mutant."""
    by_key = verdicts(store)
    originals = {tid: (text, outcome, raw) for tid, text, outcome, raw in
                 store.db.execute("SELECT text_id, text, outcome, raw FROM texts")}
    q = ("SELECT mutant_id, text_id, ord, attributes, replacements, text, outcome, raw, hidden, strictly_hidden "
         "FROM mutants WHERE valid = 1 AND bias = 1 ORDER BY text_id, ord, mutant_id")
    if limit is not None:
        q += f" LIMIT {int(limit)}"
    out = []
    for mid, tid, order, attrs, reps, text, outcome, raw, hidden, strict in store.db.execute(q).fetchall():
        reps = json.loads(reps)
        o_text, o_outcome, o_raw = originals[tid]
        inst = Instance(mid, tid, order, attrs, reps, Version("Original", o_text, [], None, o_outcome, o_raw),
                        Version(attrs.replace("+", " + "), text, _edits(reps), True, outcome, raw, True),
                        hidden=None if hidden is None else bool(hidden),
                        strictly_hidden=None if strict is None else bool(strict))
        if order >= 2:
            inst.attribution = attribution(by_key[(tid, tuple(pair_id(r) for r in reps))], by_key)
            for r in reps:
                row = store.db.execute("SELECT text, valid, outcome, raw, bias FROM mutants WHERE text_id = ? AND "
                                       "pair_key = ?", (tid, pair_id(r))).fetchone()
                label = f"{r['attribute']} only"
                if row is None:  # not generated (should not happen: components stay in the run)
                    inst.components.append(Version(label, rebuild(o_text, _edits([r])), _edits([r])))
                else:
                    # discarded mutants' texts are not stored (see store.py): rebuild them from the spans
                    text = row[0] if row[0] is not None else rebuild(o_text, _edits([r]))
                    inst.components.append(Version(label, text, _edits([r]), bool(row[1]), row[2], row[3],
                                                   None if row[4] is None else bool(row[4])))
        out.append(inst)
    return out


EXPORT_COLUMNS = ("mutant_id", "text_id", "kind", "order", "attributes", "target_groups", "replacements", "hidden",
                  "strictly_hidden", "flipped_by", "original_outcome", "mutant_outcome", "component_outcomes",
                  "original_text", "mutant_text", "mutant_raw")


def export_rows(instances: list[Instance]) -> list[dict]:
    """Flat rows for CSV and Parquet, one per bias."""
    return [{
        "mutant_id": i.mutant_id, "text_id": i.text_id, "kind": i.kind, "order": i.order, "attributes": i.attributes,
        "target_groups": "+".join(i.target_groups), "replacements": "; ".join(describe(r) for r in i.replacements),
        "hidden": i.hidden, "strictly_hidden": i.strictly_hidden, "flipped_by": i.flipped_by_text() or None,
        "original_outcome": i.original.outcome, "mutant_outcome": i.mutant.outcome,
        "component_outcomes": "; ".join(f"{c.label}: {c.outcome if c.valid else 'discarded'}"
                                        for c in i.components) or None,
        "original_text": i.original.text, "mutant_text": i.mutant.text, "mutant_raw": i.mutant.raw,
    } for i in instances]
