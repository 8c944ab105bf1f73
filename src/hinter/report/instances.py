"""Each bias of a run as a person inspects it: the original, every atomic component and the mutant, with the
replaced spans, outcomes, raw answers and the attribution (the smallest sub-combination that flips the outcome).
A generative run's versions carry their answers (every sample) and each aspect's record instead (docs/generative.md).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hinter.analysis.measures import Verdict, attribution, evaluative_pairs
from hinter.records import Edit, Replacement, apply_replacements, dictionary_replacements, edits, pair_key
from hinter.store.rows import AspectRecord, MutantRow, TextRow
from hinter.store import RunStore


def shown_id(text: TextRow) -> str:
    """How outputs name a text for its user: the dataset's own id, or, when the dataset has none, the text's
    position among the texts read (its text_id, from 0)."""
    return text.source_id if text.source_id is not None else str(text.text_id)


@dataclass
class Version:
    """One text shown in an instance: the original, a component, or the biased mutant."""

    label: str                       # "Original", "gender only", "gender + race"
    text: str
    edits: list[Edit]                # (start, end) in the original, and the new word, applied in this version
    valid: bool | None = None        # None for the original
    outcome: str | None = None
    raw: str | None = None
    bias: bool | None = None         # outcome differs from the original's
    answers: tuple[str | None, ...] | None = None   # a generative run's: every sample (None: a label run)
    aspects: dict[str, AspectRecord] | None = None  # ... and, for a judged mutant, each aspect against the original

    def differs_on(self) -> list[str]:
        """The aspects on which this version's answers differ from the original's."""
        return [k for k, r in (self.aspects or {}).items() if r.differs]

    def aspect_mean(self, name: str) -> float | None:
        """This version's mean value of the aspect `name` over its samples (None: not judged)."""
        r = (self.aspects or {}).get(name)
        return None if r is None or not r.mutant else sum(r.mutant) / len(r.mutant)


@dataclass
class Instance:
    mutant_id: int
    text_id: int
    order: int
    attributes: str
    replacements: tuple[Replacement, ...]
    original: Version
    mutant: Version
    components: list[Version] = field(default_factory=list)
    hidden: bool | None = None
    strictly_hidden: bool | None = None
    attribution: dict | None = None  # intersectional only: see measures.attribution
    source_id: str = ""              # the dataset's id of the text, or its text_id when it has none (shown_id)
    evaluative: tuple[str, ...] = () # its pairs that add or remove a word with sentiment (lint.evaluative_check)

    @property
    def free_text(self) -> bool:
        """A generative run's instance: answers are texts, judged per aspect."""
        return self.mutant.aspects is not None

    @property
    def aspect_names(self) -> list[str]:
        return list(self.mutant.aspects or {})

    @property
    def differs_on(self) -> list[str]:
        """The aspects on which the mutant's answers differ from the original's."""
        return [k for k, r in (self.mutant.aspects or {}).items() if r.differs]

    @property
    def hidden_on(self) -> list[str]:
        """The aspects on which it is hidden: it differs and none of its atomic components does."""
        return [k for k, r in (self.mutant.aspects or {}).items() if r.hidden]

    def original_mean(self, name: str) -> float | None:
        """The original's mean value of the aspect `name`, as compared with this mutant (masked with its terms)."""
        r = (self.mutant.aspects or {}).get(name)
        return None if r is None or not r.original else sum(r.original) / len(r.original)

    def aspect_attribution(self) -> list[tuple[str, list[str], list[str]]]:
        """Why an intersectional generative mutant is (not) hidden, the aspects it differs on grouped by reason:
        [("hidden" | "explained" | "undecided", aspects, the parts that differ on them alone)]."""
        groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for name in self.differs_on:
            parts = self.parts_differing(name)
            kind = "hidden" if name in self.hidden_on else "explained" if parts else "undecided"
            groups.setdefault((kind, tuple(parts or ())), []).append(name)
        return [(kind, names, list(parts)) for (kind, parts), names in groups.items()]

    def parts_differing(self, name: str) -> list[str] | None:
        """The components whose answers differ on the aspect `name` alone ([] none; None: some component was
        discarded or not judged, so none differing cannot be told)."""
        out = []
        for c in self.components:
            r = (c.aspects or {}).get(name)
            if not c.valid or r is None:
                return None
            if r.differs:
                out.append(c.label)
        return out

    @property
    def kind(self) -> str:
        return "atomic" if self.order == 1 else "intersectional"

    @property
    def target_groups(self) -> list[str]:
        return [r.target_group for r in dictionary_replacements(self.replacements)]

    @property
    def all_spans(self) -> list[tuple[int, int]]:
        return sorted((s, e) for r in self.replacements for s, e in r.spans)

    def flipped_by_text(self) -> str:
        """The attribution in words: which replacements already flip the outcome on their own."""
        if self.attribution is None:
            return ""
        by_id = {r.pair_id: r for r in self.replacements}
        if self.attribution["flipped_by"]:
            return " | ".join(" + ".join(by_id[p].describe() for p in sub) for sub in self.attribution["flipped_by"])
        return "none"


def _edits(reps: tuple[Replacement, ...] | list[Replacement]) -> list[Edit]:
    return sorted(edits(reps))


def _verdict(m: MutantRow) -> Verdict:
    """A stored mutant's verdicts as the measures read them."""
    pairs = dictionary_replacements(m.replacements)  # repairs (records.REPAIR) are edits, not pairs
    return Verdict(m.text_id, m.order, m.attributes, tuple(r.pair_id for r in pairs),
                   tuple(r.target_group for r in pairs), m.valid, m.bias, m.hidden, m.strictly_hidden)


def load_instances(store: RunStore, limit: int | None = None) -> list[Instance]:
    """Every valid mutant that exposes bias, ordered by text and mutant."""
    originals = {t.text_id: t for t in store.texts()}
    evaluative = evaluative_pairs(store.settings()) or set()
    out = []
    free = bool(store.settings().get("generative"))
    detail: dict = {}  # a generative run's answers and aspect records, read once per text

    def answers(text_id: int, key: str | None = None) -> tuple:
        """(answers, aspects) of the original (key None) or of a mutant, in a generative run; (None, None) else."""
        if not free:
            return None, None
        if text_id not in detail:
            detail.clear()  # instances come by text: one text's at a time
            detail[text_id] = store.answers_of_text(text_id)
        original, mutants = detail[text_id]
        return (original, None) if key is None else mutants.get(key, ((), None))

    biased = list(store.biased_mutants(by_text=True, limit=limit))
    # What the intersectional biases' attribution and cards read: their proper sub-combinations (the atomic
    # components among them), in a few queries rather than one each, and no other mutant of the run.
    wanted = set()
    for m in biased:
        ids = [r.pair_id for r in dictionary_replacements(m.replacements)]
        wanted.update((m.text_id, pair_key(sub)) for k in range(1, m.order) for sub in itertools.combinations(ids, k))
    components = store.components_of(sorted(wanted))
    by_key = {(v.text_id, v.pair_ids): v for v in map(_verdict, components.values())}
    for m in biased:
        o = originals[m.text_id]
        reps = m.replacements
        inst = Instance(m.mutant_id, m.text_id, m.order, m.attributes, reps,
                        Version("Original", o.text, [], None, o.outcome, o.raw, None, *answers(m.text_id)),
                        Version(m.attributes.replace("+", " + "), m.text, _edits(reps), True, m.outcome, m.raw, True,
                                *answers(m.text_id, m.pair_key)),
                        hidden=m.hidden, strictly_hidden=m.strictly_hidden, source_id=shown_id(o),
                        evaluative=tuple(r.pair_id for r in reps if r.pair_id in evaluative))
        if m.order >= 2:
            pairs = dictionary_replacements(reps)  # repairs (records.REPAIR) are edits, not components
            inst.attribution = attribution(_verdict(m), by_key)
            for r in pairs:
                c = components.get((m.text_id, pair_key([r.pair_id])))
                label, r_edits = f"{r.attribute} only", _edits([r])
                if c is None:  # not generated (should not happen: components stay in the run)
                    inst.components.append(Version(label, apply_replacements(o.text, r_edits), r_edits))
                else:
                    # the store rebuilds discarded mutants' texts (not stored) from their spans
                    inst.components.append(Version(label, c.text, r_edits, c.valid, c.outcome, c.raw, c.bias,
                                                   *answers(m.text_id, c.pair_key)))
        out.append(inst)
    return out


EXPORT_COLUMNS = ("mutant_id", "text_id", "source_id", "kind", "order", "attributes", "target_groups", "replacements",
                  "hidden", "strictly_hidden", "flipped_by", "original_outcome", "mutant_outcome", "component_outcomes",
                  "original_text", "mutant_text", "mutant_raw")


FREE_EXPORT_COLUMNS = ("mutant_id", "text_id", "source_id", "kind", "order", "attributes", "target_groups",
                       "replacements", "hidden", "strictly_hidden", "differs_on", "hidden_on")
FREE_TEXT_COLUMNS = ("original_answers", "mutant_answers", "component_answers", "original_text", "mutant_text")
ASPECT_COLUMNS = ("original", "mutant", "p", "differs", "hidden")  # per aspect: "{aspect}_{column}"


def export_columns(aspects: list[str] | None) -> tuple[str, ...]:
    """instances.csv's columns: a label run's, or a generative run's (`aspects`: its aspects' names), where the
    answers are texts (JSON lists of every sample) and each aspect has its means, p-value and marks."""
    if aspects is None:
        return EXPORT_COLUMNS
    return FREE_EXPORT_COLUMNS + tuple(f"{a}_{c}" for a in aspects for c in ASPECT_COLUMNS) + FREE_TEXT_COLUMNS


def answers_json(answers) -> str | None:
    """Every sample of a version, as a JSON list (a model error: null)."""
    import json
    return None if answers is None else json.dumps(list(answers), ensure_ascii=False)


def _free_row(i: Instance, aspects: list[str]) -> dict:
    row = {"mutant_id": i.mutant_id, "text_id": i.text_id, "source_id": i.source_id, "kind": i.kind,
           "order": i.order, "attributes": i.attributes, "target_groups": "+".join(i.target_groups),
           "replacements": "; ".join(r.describe() for r in i.replacements), "hidden": i.hidden,
           "strictly_hidden": i.strictly_hidden, "differs_on": "+".join(i.differs_on) or None,
           "hidden_on": "+".join(i.hidden_on) or None}
    for a in aspects:
        r = (i.mutant.aspects or {}).get(a)
        row.update({f"{a}_original": i.original_mean(a), f"{a}_mutant": i.mutant.aspect_mean(a),
                    f"{a}_p": None if r is None else r.p_value, f"{a}_differs": None if r is None else r.differs,
                    f"{a}_hidden": None if r is None else r.hidden})
    import json
    row.update({"original_answers": answers_json(i.original.answers), "mutant_answers": answers_json(i.mutant.answers),
                "component_answers": json.dumps({c.label: list(c.answers) if c.valid and c.answers else None
                                                 for c in i.components}, ensure_ascii=False) if i.components else None,
                "original_text": i.original.text, "mutant_text": i.mutant.text})
    return row


def export_rows(instances: list[Instance], aspects: list[str] | None = None) -> list[dict]:
    """Flat rows for CSV and Parquet, one per bias (`aspects`: a generative run's, see export_columns)."""
    if aspects is not None:
        return [_free_row(i, aspects) for i in instances]
    return [{
        "mutant_id": i.mutant_id, "text_id": i.text_id, "source_id": i.source_id, "kind": i.kind, "order": i.order,
        "attributes": i.attributes,
        "target_groups": "+".join(i.target_groups), "replacements": "; ".join(r.describe() for r in i.replacements),
        "hidden": i.hidden, "strictly_hidden": i.strictly_hidden, "flipped_by": i.flipped_by_text() or None,
        "original_outcome": i.original.outcome, "mutant_outcome": i.mutant.outcome,
        "component_outcomes": "; ".join(f"{c.label}: {c.outcome if c.valid else 'discarded'}"
                                        for c in i.components) or None,
        "original_text": i.original.text, "mutant_text": i.mutant.text, "mutant_raw": i.mutant.raw,
    } for i in instances]
