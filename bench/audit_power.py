"""Power of the audit at the four-fifths line, simulated on its pure functions (hinter.audit.tables): how many
texts it takes to see an intersectional cell whose impact ratio is 0.7 or 0.8 (p <= 0.05 in the paired
permutation test), and how often the cell is flagged under four-fifths.

Two planted models, 13 cells selected at rate 0.5 and one at 0.5 x ratio:
- paired: a text's renderings share its merit u ~ U(0,1); a rendering in cell c is selected when u < rate_c
  (a deterministic model whose decision depends on the text, and on the category only near its threshold);
- noisy: each rendering selected independently with its cell's rate (no pairing to exploit).

Then the same audits on a model that ignores identity: how often something shows somewhere by chance.

    python bench/audit_power.py [REPS]
"""
import sys
import time

import numpy as np

from hinter.audit.tables import permutation_p, rows_from_counts

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
CELL = 3  # the planted cell (female x Black in the default order)


def sample(rng, texts: int, ratio: float, paired: bool) -> np.ndarray:
    rates = np.full(14, 0.5)
    rates[CELL] = 0.5 * ratio
    draw = rng.random((texts, 1)) if paired else rng.random((texts, 14))
    return (draw < rates).astype(float).reshape(texts, 2, 7)


def main() -> None:
    print("| model | impact ratio | texts | found (p <= 0.05) | flagged under 4/5 | interval below 1 |")
    print("|---|---|---|---|---|---|")
    start = time.time()
    for paired in (True, False):
        for ratio in (0.7, 0.8):
            for texts in (25, 50, 100, 200, 400):
                found = flagged = below = 0
                for rep in range(REPS):
                    rng = np.random.default_rng(rep)
                    y = sample(rng, texts, ratio, paired)
                    p = permutation_p(y, "intersectional", seed=rep, permutations=300)
                    row = rows_from_counts([str(k) for k in range(14)], y.reshape(texts, 14), np.ones((texts, 14)),
                                           seed=rep, draws=300)[CELL]
                    found += p[CELL] is not None and p[CELL] <= 0.05
                    flagged += bool(row.four_fifths)
                    below += row.impact_ratio_ci is not None and row.impact_ratio_ci[1] < 1
                print(f"| {'paired' if paired else 'noisy'} | {ratio} | {texts} | {found / REPS:.2f} | "
                      f"{flagged / REPS:.2f} | {below / REPS:.2f} |", flush=True)
    print("\nA model that ignores identity (noisy, every cell at 0.5): how often an audit shows something somewhere")
    print("\n| texts | some p <= 0.05 | some cell under 4/5 | some ratio interval below 1 |")
    print("|---|---|---|---|")
    for texts in (25, 50, 100, 200, 400):
        any_p = any_flag = any_ci = 0
        for rep in range(REPS):
            rng = np.random.default_rng(10_000 + rep)
            y = sample(rng, texts, 1.0, False)
            p = permutation_p(y, "intersectional", seed=rep, permutations=300)
            rows = rows_from_counts([str(k) for k in range(14)], y.reshape(texts, 14), np.ones((texts, 14)),
                                    seed=rep, draws=300)
            any_p += min(p) <= 0.05
            any_flag += any(r.four_fifths for r in rows)
            any_ci += any(r.impact_ratio_ci is not None and r.impact_ratio_ci[1] < 1 for r in rows)
        print(f"| {texts} | {any_p / REPS:.2f} | {any_flag / REPS:.2f} | {any_ci / REPS:.2f} |", flush=True)
    print(f"\n{REPS} audits per row, {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
