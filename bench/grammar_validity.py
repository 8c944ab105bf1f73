"""How well each validity check finds ungrammatical mutants, on the 200 mutants labelled by reading them
(tests/data/grammar_labels.csv, drawn by scripts/grammar_sample.py; docs/grammar.md says how they were labelled).

A check "detects" a mutant when it discards it. For the class "ungrammatical" it prints, per check: precision (of
the mutants it discards, the share a reader found ungrammatical) and recall (of the ungrammatical ones, the share
it discards), on the sample as drawn and weighted back to the campaigns (the sample is stratified by dataset,
kind and the invariant's verdict, 25 per stratum: each row stands for stratum_size / 25 mutants). The invariant's
verdicts are the run's, recorded in the file; the grammar check's are computed now (Harper, the installed version),
on the sentences each mutant changed, for several MAX_DROP values.

Then the cost of the check in a run: the validity stage of the IMDB campaign's first --timing-texts texts (race
and gender, order 2), the invariant alone (the baseline, spaCy in this process) against the invariant then the
grammar check on the mutants it kept, each from cold caches, in the same process.

    python bench/grammar_validity.py [--labels tests/data/grammar_labels.csv] [--timing-texts 20]
"""
from __future__ import annotations

import argparse
import csv
import time
from collections import Counter
from pathlib import Path

from hinter.validity.grammar import GrammarChecker, checker_fingerprint

ROOT = Path(__file__).resolve().parents[1]
DROPS = (0.0, 0.5, 1.0, 2.0, 5.0)


def precision_recall(flags: list[bool], truth: list[bool], weights: list[float]) -> tuple[float, float, float]:
    """(precision, recall, F1) of `flags` for the class `truth`, each row counted with its weight."""
    tp = sum(w for f, t, w in zip(flags, truth, weights) if f and t)
    fp = sum(w for f, t, w in zip(flags, truth, weights) if f and not t)
    fn = sum(w for f, t, w in zip(flags, truth, weights) if t and not f)
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    return p, r, (2 * p * r / (p + r) if p + r else float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--labels", default=str(ROOT / "tests" / "data" / "grammar_labels.csv"))
    ap.add_argument("--timing-texts", type=int, default=20)
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.labels, encoding="utf-8", newline="")))
    drawn = Counter((r["dataset"], r["kind"], r["invariant"]) for r in rows)
    weights = [int(r["stratum_size"]) / drawn[(r["dataset"], r["kind"], r["invariant"])] for r in rows]
    truth = [r["label"] == "ungrammatical" for r in rows]
    invariant = [r["invariant"] == "discarded" for r in rows]
    t0 = time.perf_counter()
    checker = GrammarChecker()
    drops = checker.drops([list(zip(r["original"].split("\n"), r["mutant"].split("\n"))) for r in rows])
    seconds = time.perf_counter() - t0

    print(f"{len(rows)} labelled mutants ({sum(truth)} ungrammatical), checker {checker_fingerprint()}, "
          f"{checker.sentences_linted} sentences linted in {seconds:.2f} s (Harper's load included)")
    print(f"{'check':<34}{'discards':>9}{'P':>7}{'R':>7}{'F1':>7}{'P (weighted)':>14}{'R (weighted)':>14}")

    def line(name: str, flags: list[bool]) -> None:
        p, r, f = precision_recall(flags, truth, [1.0] * len(rows))
        pw, rw, _ = precision_recall(flags, truth, weights)
        print(f"{name:<34}{sum(flags):>9}{p:>7.2f}{r:>7.2f}{f:>7.2f}{pw:>14.2f}{rw:>14.2f}")

    line("invariant alone (the baseline)", invariant)
    for d in DROPS:
        grammar = [x is not None and x > d for x in drops]
        line(f"grammar alone, --grammar {d:g}", grammar)
        line(f"both (invariant or --grammar {d:g})", [a or b for a, b in zip(invariant, grammar)])
    # per dataset, at the default the docs recommend
    for dataset in sorted({r["dataset"] for r in rows}):
        keep = [r["dataset"] == dataset for r in rows]
        sub_truth = [t for t, k in zip(truth, keep) if k]
        for name, flags in (("invariant", invariant), ("grammar 0.5", [x is not None and x > 0.5 for x in drops])):
            sub = [f for f, k in zip(flags, keep) if k]
            p, r, _ = precision_recall(sub, sub_truth, [1.0] * len(sub))
            print(f"  {dataset:<6} {name:<12} discards {sum(sub):>3} of {len(sub)}, {sum(sub_truth)} ungrammatical: "
                  f"P {p:.2f} R {r:.2f}")
    missed = Counter(r["why"].split(":")[-1].strip() for r, t, x in zip(rows, truth, drops) if t and not (x and x > 0.5))
    print("ungrammatical mutants the grammar check (0.5) misses, by what is wrong:")
    for why, n in missed.most_common():
        print(f"  {n:>3}  {why}")

    if args.timing_texts:
        timing(args.timing_texts)


def timing(n: int) -> None:
    from hinter.config import RunConfig
    from hinter.pipeline.stages import Mutate, campaign_dictionary, campaign_texts
    from hinter.validity import SpacyParser, Validator
    config = RunConfig(dataset="imdb", limit=n)
    records = campaign_texts(config, config.read_dataset().records)
    batch, asked = Mutate(config, campaign_dictionary(config)).batch(0, list(enumerate(records)))
    parser = SpacyParser()
    t0 = time.perf_counter()
    reasons = Validator(parser).reasons(asked)
    invariant_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    checker = GrammarChecker()
    load_s = time.perf_counter() - t0
    kept = [p if r is None else None for p, r in zip(asked, reasons)]
    t0 = time.perf_counter()
    grammar = checker.reasons(kept, 0.5)
    grammar_s = time.perf_counter() - t0
    print(f"\nvalidity stage, IMDB first {n} texts: {len(asked)} mutants, {sum(p is not None for p in kept)} kept by "
          f"the invariant, {sum(g is not None for g in grammar)} of them discarded by --grammar 0.5")
    print(f"{'stage':<40}{'seconds':>9}")
    print(f"{'invariant (baseline)':<40}{invariant_s:>9.2f}")
    print(f"{'--grammar 0.5: a checker made':<40}{load_s:>9.2f}  (Harper's dictionary is built once a process)")
    print(f"{'--grammar 0.5: the check':<40}{grammar_s:>9.2f}  ({checker.sentences_linted} sentences linted)")
    print(f"{'invariant then --grammar 0.5':<40}{invariant_s + load_s + grammar_s:>9.2f}  "
          f"({(invariant_s + load_s + grammar_s) / invariant_s:.2f}x the baseline)")


if __name__ == "__main__":
    main()
