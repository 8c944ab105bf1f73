"""Mutant generation: hinter's one-pass matcher against one regex per pair per text, in one run.

Usage: python bench/mutation.py [--shared ../shared] [--naive-texts 20]

Campaign: atomic mutants for race, gender and body and every order-2 combination (race x gender, body x
gender, body x race), the full built-in dictionary, over every record of the five samples in
../shared/data (imdb, ecthr, scotus, ledgar, eurlex). Each mutant's text is built, then dropped.

The naive generator does what the reference tool does: for each text, search every pair's word with its
own compiled regex, build each atomic mutant with re.sub, and each intersectional one with two re.sub calls
in a row. It is run on the first --naive-texts records of each sample; mutants/s are compared on those
same records (the speed-up is the ratio of the two times there). Counts differ slightly: the naive way
re-matches inserted text and does not skip overlapping combinations.
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hinter.mutation.dictionary import load_dictionary  # noqa: E402
from hinter.mutation.mutants import generate  # noqa: E402

DATASETS = ("imdb", "ecthr", "scotus", "ledgar", "eurlex")
ATTRIBUTES = ("body", "gender", "race")


def naive_generate(text, compiled):
    present = defaultdict(list)
    for attribute, word, replacement, rx in compiled:
        if rx.search(text):
            present[attribute].append((rx, replacement))
    n = 0
    for attribute, pairs in present.items():
        for rx, rep in pairs:
            rx.sub(rep, text)
            n += 1
    for a, b in itertools.combinations(sorted(present), 2):
        for (rx1, r1), (rx2, r2) in itertools.product(present[a], present[b]):
            rx2.sub(r2, rx1.sub(r1, text))
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--naive-texts", type=int, default=20)
    args = ap.parse_args()
    d = load_dictionary().restrict(ATTRIBUTES)
    t0 = time.perf_counter()
    compiled = [(p.attribute, p.word, p.replacement, re.compile(rf"\b{re.escape(p.word)}\b", re.IGNORECASE))
                for p in d.pairs]
    compile_s = time.perf_counter() - t0
    rows = []
    for name in DATASETS:
        texts = [json.loads(line)["text"] for line in
                 (args.shared / "data" / name / "sample.jsonl").read_text().splitlines() if line.strip()]
        t0 = time.perf_counter()
        total = 0
        for i, t in enumerate(texts):
            total += sum(1 for m in generate(i, t, d, ATTRIBUTES, 2).mutants if m.text)  # texts built, as naive
        fast_s = time.perf_counter() - t0
        head = texts[: args.naive_texts]
        t0 = time.perf_counter()
        fast_head = sum(1 for i, t in enumerate(head) for m in generate(i, t, d, ATTRIBUTES, 2).mutants if m.text)
        fast_head_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        naive_head = sum(naive_generate(t, compiled) for t in head)
        naive_head_s = time.perf_counter() - t0
        rows.append((name, len(texts), total, fast_s, len(head), fast_head, fast_head_s, naive_head, naive_head_s))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("| sample | texts | mutants | hinter s | hinter mutants/s | head texts | head mutants (hinter / naive) | "
          "hinter s (head) | naive s (head) | speed-up (head) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, total, fs, nh, fh, fhs, nhm, nhs in rows:
        print(f"| {name} | {n} | {total} | {fs:.1f} | {total / fs:.0f} | {nh} | {fh} / {nhm} | {fhs:.2f} | "
              f"{nhs:.2f} | {nhs / fhs:.0f}x |")
    all_m, all_s = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"\nall samples: {all_m} mutants in {all_s:.1f} s ({all_m / all_s:.0f} mutants/s); naive regexes "
          f"compiled in {compile_s:.2f} s ({len(compiled)} pairs)")


if __name__ == "__main__":
    main()
