"""Draws the mutants of tests/data/grammar_labels.csv (docs/grammar.md): bundled campaigns mutated and checked by
the invariant as `hinter run` does (the paper's settings: race and gender, order 2), then a seeded sample
stratified by dataset, kind (atomic / intersectional) and the invariant's verdict (valid / discarded). Each row
holds the sentences the mutant changed, in the original and in the mutant, and its stratum's size (the labelling
and the precision/recall are bench/grammar_validity.py's). Labels are added by a person reading each row.

    python scripts/grammar_sample.py --out /tmp/grammar_sample.csv [--per-stratum 25]
"""
from __future__ import annotations

import argparse
import csv
import random
from collections import defaultdict

from hinter.config import RunConfig
from hinter.pipeline.stages import Mutate, campaign_dictionary, campaign_texts
from hinter.records import apply_replacements
from hinter.validity import SpacyParser, Validator, sentence_spans

CAMPAIGNS = {"imdb": dict(limit=100), "bios": dict(limit=80)}
COLUMNS = ["id", "dataset", "text_id", "kind", "pairs", "invariant", "reason", "stratum_size", "original",
           "mutant", "label", "why"]


def edited_sentences(text: str, edits: list[tuple[int, int, str]]) -> tuple[list[str], list[str]]:
    """The original's sentences holding an edit, and the same stretches of the mutant (defined even when the
    mutant's sentence count differs: the stretch is the original sentence's, edits applied)."""
    spans = sentence_spans(text)
    hit = sorted({k for start, _, _ in edits for k, (a, b) in enumerate(spans) if a <= start < b})
    originals, mutants = [], []
    for k in hit:
        a, b = spans[k]
        local = [(s - a, e - a, r) for s, e, r in edits if a <= s < b]
        originals.append(text[a:b])
        mutants.append(apply_replacements(text[a:b], local))
    return originals, mutants


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-stratum", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    parser = SpacyParser()
    validator = Validator(parser)
    strata: dict[tuple, list[dict]] = defaultdict(list)
    for name, options in CAMPAIGNS.items():
        config = RunConfig(dataset=name, **options)
        records = campaign_texts(config, config.read_dataset().records)
        mutate = Mutate(config, campaign_dictionary(config))
        batch, asked = mutate.batch(0, list(enumerate(records)))
        reasons = validator.reasons(asked)
        for m, reason in zip(batch.mutants, reasons):
            originals, mutants = edited_sentences(m.original, m.edits)
            kind = "atomic" if m.order == 1 else "intersectional"
            verdict = "valid" if reason is None else "discarded"
            strata[(name, kind, verdict)].append({
                "dataset": name, "text_id": m.text_id, "kind": kind,
                "pairs": "; ".join(f"{r.word}->{r.replacement}" for r in m.replacements), "invariant": verdict,
                "reason": reason or "", "original": "\n".join(originals), "mutant": "\n".join(mutants)})
    rng = random.Random(args.seed)
    rows = []
    for key in sorted(strata):
        pool = strata[key]
        for row in rng.sample(pool, min(args.per_stratum, len(pool))):
            rows.append({**row, "stratum_size": len(pool), "label": "", "why": ""})
        print(key, len(pool))
    for i, row in enumerate(rows):
        row["id"] = i
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows -> {args.out}")


if __name__ == "__main__":
    main()
