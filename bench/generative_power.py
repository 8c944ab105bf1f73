"""Free-text findings (issue 21): power and calibration of hinter.generative on planted generative models.

Usage: python bench/generative_power.py [--seeds 20] [--sizes 100,200] [--samples 3] [--aspects sentiment,refusal,...]

The models and texts are those of tests/planted_generative.py (one person per text, gender man -> woman and race
white -> black, atomic and order-2 mutants, each version asked --samples times):
- power: the share of seeds in which the planted cell is significant (BH over every cell and aspect, alpha 0.05)
  in the right direction, by the share of texts affected (5%, 10%, 20%): the female x Black model (negative
  answers with probability 0.8 instead of 0.2, on the sentiment aspect; also the share where the cell is
  population-hidden) and the refusing model (declines Black applicants with probability 0.8, refusal aspect);
- calibration, the baseline of the same run: the random-wording model (no bias), the share of seeds with any
  significant finding and the mean share of significant cells.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

import planted_generative as planted  # noqa: E402
from hinter.analysis.findings import Component  # noqa: E402
from hinter.generative import FreeTextJudge, aspect_findings  # noqa: E402

SHARES = (0.05, 0.1, 0.2)
GENDER = Component("gender", "male", "female")
RACE = Component("race", "european", "african")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--sizes", default="100,200")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--aspects", default="sentiment,refusal,length,distance")
    args = ap.parse_args()
    judge = FreeTextJudge(args.aspects.split(","))
    sizes = [int(x) for x in args.sizes.split(",")]
    started = time.time()
    print(f"{args.seeds} seeds, {args.samples} samples per version, aspects {args.aspects}, alpha 0.05")
    print(f"\n{'texts':>5}  {'model (cell, aspect)':<44}" + "".join(f"{s:>8.0%}" for s in SHARES))
    for n in sizes:
        rows = {"female x Black: significant, less positive": [], "female x Black: population-hidden": [],
                "refusing Black: significant, more refusals": []}
        for share in SHARES:
            hits = np.zeros(3)
            for seed in range(args.seeds):
                a = aspect_findings(planted.observe(planted.intersectional, n, args.samples, seed, judge, share),
                                    seed=seed)
                f = a.get("sentiment", "intersectional", (GENDER, RACE))
                hits[0] += f.significant and f.effect < 0
                hits[1] += f.population_hidden
                if "refusal" in judge.names:
                    a = aspect_findings(planted.observe(planted.refusing, n, args.samples, seed, judge, share),
                                        seed=seed)
                    f = a.get("refusal", "atomic", (RACE,))
                    hits[2] += f.significant and f.effect > 0
            for row, h in zip(rows.values(), hits):
                row.append(h / args.seeds)
        for name, row in rows.items():
            print(f"{n:>5}  {name:<44}" + "".join(f"{x:>8.0%}" for x in row))
    print("\nCalibration (random wording, no bias):")
    for n in sizes:
        any_sig, shares = 0, []
        for seed in range(args.seeds):
            a = aspect_findings(planted.observe(planted.random_wording, n, args.samples, seed, judge), seed=seed)
            any_sig += bool(a.significant())
            shares.append(len(a.significant()) / len(a.findings))
        print(f"{n:>5} texts: any significant finding in {any_sig} of {args.seeds} seeds; mean share of significant "
              f"cells {np.mean(shares):.3f}")
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
