"""Coverage of the audit's impact-ratio intervals on planted screeners with known true ratios
(tests/audit_scenarios.py: identity-blind; two cells at 0.7 and 0.5; a cell never selected, true ratio 0; a cell
selected 3% of the time; a deterministic threshold screener), simulated as stored outcomes straight into
hinter.audit.tables.rows_from_counts. Prints, per scenario, table and true ratio, the share of rows whose interval
held the true ratio, and per scenario and table the share of audits whose intervals held every true ratio at
once (the intervals' stated 95%), with the median width.

    python bench/audit_coverage.py [SEEDS] [TEXTS]

Run it against another checkout (PYTHONPATH=OTHER/src) to compare methods.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import audit_scenarios as sc  # noqa: E402


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    texts = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    start = time.time()
    family, per_ratio, per_rate = sc.coverage(seeds, texts)
    print(f"{seeds} seeds, {texts} texts\n")
    print("| screener | table | true ratio | coverage (rows) | median width | all rows at once |")
    print("|---|---|---|---|---|---|")
    for (name, table, ratio), (cov, width, n) in per_ratio.items():
        print(f"| {name} | {table} | {ratio:g} | {cov:.3f} | {width:.3f} | {family[(name, table)]:.3f} |")
    print("\n| screener | table | true rate | rate interval coverage |")
    print("|---|---|---|---|")
    for (name, table, rate), (cov, n) in per_rate.items():
        print(f"| {name} | {table} | {rate:g} | {cov:.3f} |")
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
