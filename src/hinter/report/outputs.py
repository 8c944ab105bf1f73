"""Stage 7: what a run writes for people and tools: summary.json and biases.csv."""
from __future__ import annotations

import csv
import json

from .measures import summary

BIAS_COLUMNS = ("text_id", "order", "attributes", "replacements", "hidden", "strictly_hidden", "original_outcome",
                "mutant_outcome", "original_text", "mutant_text", "mutant_raw")


def write_outputs(run) -> dict:
    """Write summary.json and biases.csv (every valid mutant that exposes bias) into the run folder."""
    s = summary(run.store)
    (run.out_dir / "summary.json").write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    originals = dict(run.store.db.execute("SELECT text_id, text FROM texts"))
    original_outcomes = dict(run.store.db.execute("SELECT text_id, outcome FROM texts"))
    with open(run.out_dir / "biases.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(BIAS_COLUMNS)
        for m in run.store.mutants("valid = 1 AND bias = 1"):
            reps = "; ".join(f"{r['attribute']}: {r['word']} -> {r['replacement']}" for r in m.replacements)
            w.writerow((m.text_id, m.order, m.attributes, reps, "" if m.hidden is None else int(m.hidden),
                        "" if m.strictly_hidden is None else int(m.strictly_hidden), original_outcomes[m.text_id],
                        m.outcome, originals[m.text_id], m.text, m.raw))
    return s
