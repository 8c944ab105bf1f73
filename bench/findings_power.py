"""Findings (issue 13): power and calibration of hinter.analysis.findings on the bundled IMDB sample's mutant structure.

Usage: python bench/findings_power.py [--seeds 40] [--pairs 4|all] [--sizes 50,100,200]

Prints, for the first N reviews of the bundled IMDB sample (race and gender, atomic and order-2 mutants, at most
--pairs word pairs per review and attribute, every mutant counted as tested):
- power: the share of seeds in which the atomic cell of a planted target group is significant (BH, alpha 0.05)
  and pushes toward "negative", by effect size (the share of reviews, or of mutant texts, that the group turns
  negative) and sample size; the cell's number of reviews is shown;
- calibration: for three models without bias (80/20 classes), the share of runs with any significant cell, the
  mean share of significant cells and the share of runs with a population-hidden cell.
The models are those of tests/test_findings.py (imported from there).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

import test_findings as sim  # noqa: E402
from hinter.analysis.findings import analyse  # noqa: E402

EFFECTS = (0.05, 0.1, 0.2)
GROUPS = ((["female"], sim.cell(("gender", "male", "female"))), (["african"], sim.cell(("race", "european", "african"))))


def first_reviews(s: sim.Structure, n: int) -> sim.Structure:
    keep = np.flatnonzero(s.text_of < n)
    return replace(s, texts=n, text_of=s.text_of[keep], keys=tuple(s.keys[j] for j in keep),
                   components=tuple(s.components[j] for j in keep), targets=tuple(s.targets[j] for j in keep))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--pairs", default="4", help="word pairs per review and attribute: a number, or 'all'")
    ap.add_argument("--sizes", default="50,100,200", help="numbers of reviews (the sample has 200)")
    args = ap.parse_args()
    full = sim.imdb_structure(None if args.pairs == "all" else int(args.pairs))
    sizes = [int(x) for x in args.sizes.split(",")]
    seeds = range(args.seeds)
    started = time.time()
    print(f"IMDB sample, race and gender, order 2, pairs per review and attribute: {args.pairs}; {args.seeds} seeds;"
          f" alpha 0.05")
    print("\nPower: significant and toward 'negative' in the planted group's atomic cell")
    print(f"{'reviews':>7}  {'cell':<24} {'in cell':>7}  {'planted per':<11}" + "".join(f"{e:>8.0%}" for e in EFFECTS))
    for n in sizes:
        s = first_reviews(full, n)
        for groups, main_cell in GROUPS:
            found = analyse(sim.boundary_model(s, 0), label=sim.LABEL).get("atomic", main_cell)
            in_cell = found.texts if found else 0
            name = f"{main_cell[0].attribute} {main_cell[0].source_group}>{main_cell[0].target_group}"
            for per in ("text", "mutant"):
                row = [sim.power(s, e, groups, main_cell, seeds, per) for e in EFFECTS]
                print(f"{n:>7}  {name:<24} {in_cell:>7}  {per:<11}" + "".join(f"{p:>8.2f}" for p in row), flush=True)
    print("\nCalibration (no bias): runs with a significant cell / mean share of significant cells / runs with a"
          " population-hidden cell")
    for n in sizes:
        s = first_reviews(full, n)
        for name, make in (("hash labels (32% flips)", lambda seed: sim.hash_model(s, seed)),
                           ("boundary labels (3% flips)", lambda seed: sim.boundary_model(s, seed)),
                           ("boundary scores", lambda seed: sim.boundary_model(s, seed, with_scores=True)),
                           ("noise 0.1, 5 repeats", lambda seed: sim.noisy_model(s, seed))):
            runs, share, hidden = sim.null_rates(make, seeds)
            print(f"{n:>7}  {name:<28} {runs:>6.3f} {share:>8.4f} {hidden:>6.3f}", flush=True)
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
