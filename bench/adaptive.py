"""Adaptive testing (issue 22, `--adaptive`): calls saved, calibration and power against the full campaign.

Usage: python bench/adaptive.py [--seeds 40] [--pairs all|4] [--min-effect 0.1]

On the bundled IMDB sample's campaign (200 reviews, race and gender, atomic and order-2 mutants, every mutant
counted as valid: the structure of tests/test_findings.py), the planted models of issue 13 answer every mutant
once (stored outcomes: no parse, no model). The full campaign asks every mutant; `--adaptive` asks what
`hinter.analysis.adaptive.Plan` selects, in rounds of 32 reviews, exactly as `hinter run --adaptive` does. Both are
analysed by `findings.analyse` (BH, alpha 0.05). Printed per model, over the seeds:
- calls: originals plus asked mutants (one call each), full and adaptive, and their ratio;
- null models (boundary: 3% of mutants flip by noise; hash: every version has its own coin): the share of runs
  with any significant cell (target: at most 2 x alpha = 0.10) and with a population-hidden cell;
- planted models: the share of seeds in which the planted cell is significant toward "negative" (the hidden
  intersectional model: population-hidden too), full and adaptive (target: adaptive >= 90%).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import test_findings as sim  # noqa: E402
from hinter.analysis.adaptive import Plan, cells_bound, decide, on_answers  # noqa: E402
from hinter.analysis.findings import ALPHA, analyse  # noqa: E402

AFRICAN = sim.cell(("race", "european", "african"))
TOGETHER = sim.cell(("gender", "male", "female"), ("race", "european", "african"))
BATCH_TEXTS = 32  # --batch-texts' default: the rounds of an adaptive run


def models(s):
    return [
        ("null: boundary (3% noise flips)", lambda seed: sim.boundary_model(s, seed), None, None),
        ("null: hash (32% flips, blind)", lambda seed: sim.hash_model(s, seed), None, None),
        ("planted: african, 30% of reviews", lambda seed: sim.planted_model(s, seed, 0.3), ("atomic", AFRICAN), False),
        ("planted: african, 20% of reviews", lambda seed: sim.planted_model(s, seed, 0.2), ("atomic", AFRICAN), False),
        ("planted: female x african only (hidden)", lambda seed: sim.together_model(s, seed),
         ("intersectional", TOGETHER), True),
    ]


def found(analysis_findings, cell, hidden: bool) -> bool:
    """The planted cell is significant toward "negative" (and population-hidden, for the hidden model)."""
    for f in analysis_findings:
        if f["kind"] == cell[0] and tuple((c["attribute"], c["source_group"], c["target_group"])
                                          for c in f["components"]) == tuple((c.attribute, c.source_group,
                                                                              c.target_group) for c in cell[1]):
            return f["significant"] and f["toward"] == sim.OTHER and (not hidden or f.get("population_hidden", False))
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--pairs", default="all", help="word pairs per review and attribute: a number, or 'all'")
    ap.add_argument("--min-effect", type=float, default=0.1)
    args = ap.parse_args()
    s = sim.imdb_structure(None if args.pairs == "all" else int(args.pairs))
    bound = cells_bound({p for k in s.keys for p in k}, 2)
    seeds = range(args.seeds)
    started = time.time()
    print(f"IMDB sample: {s.texts} reviews, race and gender, order 2, pairs per review and attribute: {args.pairs}; "
          f"{len(s.keys):,} mutants; {args.seeds} seeds; alpha {ALPHA}; --min-effect {args.min_effect}; rounds of "
          f"{BATCH_TEXTS} reviews\n")
    print("| model | calls full | calls adaptive | fewer | any significant (full / adaptive) | population-hidden "
          "(full / adaptive) | planted found (full / adaptive) | cells settled: effect / none / undecided |")
    print("|---|---|---|---|---|---|---|---|")
    for name, make, cell, hidden in models(s):
        calls_full = calls_adaptive = 0
        any_full = any_adaptive = hid_full = hid_adaptive = found_full = found_adaptive = 0
        settled = [0, 0, 0]
        for seed in seeds:
            obs = make(seed)
            full = analyse(obs, label=sim.LABEL).to_dict()
            plan = Plan(sim.LABEL, alpha=ALPHA, min_effect=args.min_effect, bound=bound)
            asked = on_answers(obs, plan, BATCH_TEXTS)
            adaptive = analyse(asked, label=sim.LABEL, use_scores=False).to_dict()
            record = decide(adaptive["findings"], plan)
            settled = [a + b for a, b in zip(settled, record["cells"].values())]
            calls_full += s.texts + len(obs)
            calls_adaptive += s.texts + len(asked)
            for d, which in ((full, "full"), (adaptive, "adaptive")):
                significant = any(f["significant"] for f in d["findings"])
                pop_hidden = any(f.get("population_hidden") for f in d["findings"])
                hit = cell is not None and found(d["findings"], cell, hidden)
                if which == "full":
                    any_full += significant
                    hid_full += pop_hidden
                    found_full += hit
                else:
                    any_adaptive += significant
                    hid_adaptive += pop_hidden
                    found_adaptive += hit
        n = len(seeds)
        planted = "–" if cell is None else f"{found_full / n:.0%} / {found_adaptive / n:.0%}"
        print(f"| {name} | {calls_full / n:,.0f} | {calls_adaptive / n:,.0f} | {calls_full / calls_adaptive:.1f}x | "
              f"{any_full / n:.0%} / {any_adaptive / n:.0%} | {hid_full / n:.0%} / {hid_adaptive / n:.0%} | {planted} | "
              f"{settled[0] / n:.1f} / {settled[1] / n:.1f} / {settled[2] / n:.1f} |")
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
