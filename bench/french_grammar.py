"""How well the French invariant finds ungrammatical mutants (issue 33), on the hand-labelled sample
bench/data/french_grammar_sample.csv (drawn by scripts/french_grammar_sample.py: every mutant, gender and race,
order 2, of the sentences in bench/data/french_sentences*.txt; the labels are the developer's reading, one reason
each in the file).

A check "detects" a mutant when it discards it. For the class "ungrammatical" it prints precision (of the mutants
discarded, the share labelled ungrammatical) and recall (of the ungrammatical ones, the share discarded), for:

- the invariant as a French run applies it: a word that could not be inflected (`inflection`, at mutation), then
  the agreement check, then the paper's POS and dependency comparison with the parser's known flips tolerated;
- the paper's comparison alone (no agreement check, no tolerance), on the same carried mutants: the baseline.

The verdicts are computed now (fr_core_news_sm, this checkout), not read from the file; the sample's `set`
column tells the sentences the rules were fixed on ("tuning") from those written afterwards ("heldout").

    python bench/french_grammar.py [--labels bench/data/french_grammar_sample.csv]
"""
from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

from hinter.validity import SpacyParser, Validator
from hinter.validity.invariant import changed_sentences
from hinter.validity.parsers import Parse

ROOT = Path(__file__).resolve().parents[1]


class _PaperOnly:
    """The French parser without its agreement features: the paper's comparison alone."""

    def __init__(self, parser):
        self.parser, self.fingerprint, self.agreement = parser, parser.fingerprint + ":paper", False

    def tag(self, sentences):
        return self.parser.tag(sentences)

    def parse(self, sentences):
        return [Parse(p.tags, p.deps) for p in self.parser.parse(sentences)]


def precision_recall(flags: list[bool], truth: list[bool]) -> tuple[int, float, float]:
    tp = sum(f and t for f, t in zip(flags, truth))
    fp = sum(f and not t for f, t in zip(flags, truth))
    fn = sum(t and not f for f, t in zip(flags, truth))
    return tp + fp, (tp / (tp + fp) if tp + fp else float("nan")), (tp / (tp + fn) if tp + fn else float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=str(ROOT / "bench" / "data" / "french_grammar_sample.csv"))
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.labels, encoding="utf-8", newline="")))
    pairs = [changed_sentences(r["original"], r["mutant"]) for r in rows]
    parser = SpacyParser("fr_core_news_sm")
    french = [("inflection" if r["reason"] == "inflection" else v) for r, v in
              zip(rows, Validator(parser).reasons(pairs))]
    paper = Validator(_PaperOnly(parser)).reasons(pairs)
    truth = [r["label"] == "ungrammatical" for r in rows]
    print(f"{len(rows)} labelled mutants, {sum(truth)} ungrammatical (labels: the developer's reading)")
    print(f"{'check':<44}{'set':<9}{'n':>5}{'ungr.':>6}{'discards':>9}{'P':>7}{'R':>7}")
    for name, verdicts in (("French invariant (agreement, tolerance)", french),
                           ("paper's comparison alone (baseline)", paper)):
        for part in ("all", "tuning", "heldout"):
            keep = [part == "all" or r["set"] == part for r in rows]
            flags = [v is not None for v, k in zip(verdicts, keep) if k]
            sub = [t for t, k in zip(truth, keep) if k]
            n, p, rec = precision_recall(flags, sub)
            print(f"{name:<44}{part:<9}{len(sub):>5}{sum(sub):>6}{n:>9}{p:>7.2f}{rec:>7.2f}")
    print("French invariant's verdicts by label:")
    for (v, t), n in sorted(Counter((v or "valid", "ungrammatical" if t else "grammatical")
                                    for v, t in zip(french, truth)).items()):
        print(f"  {v:<12}{t:<15}{n:>4}")
    print("ungrammatical mutants it keeps:")
    for r, v, t in zip(rows, french, truth):
        if t and v is None:
            print(f"  {r['id']:<6}{r['mutant']}  ({r['why']})")


if __name__ == "__main__":
    main()
