"""One suite, three models, against three plain runs (issue 14, item 8), in the same session.

Usage: python bench/suites.py [--limit 8] [--max-pairs-per-text 2] [--attributes race,gender] [--out runs/bench-suites]
       python bench/suites.py --limit 200 --max-pairs-per-text 0 --models python:planted:female_negative,\
           python:planted:by_hash,python:planted:intersectional    # fast models: where parsing is the cost

On the bundled IMDB sample: `hinter suite build` once (mutation and the spaCy validity check), then
`hinter run --suite` for each model (model stage and oracle only), against a plain `hinter run` per model (the
whole pipeline each time). Models: the embedded Gemma (gguf:default), a planted `python:` model
(tests/planted.py's female_negative) and the MiniLM sentiment classifier on the CPU (hf:, trained once by
scripts/train_minilm.py into runs/minilm-imdb when absent; training is not timed). Every step is its own
`hinter` process, timed from start to exit, as a user runs it. The plain and the suite run of a model are
timed back to back, so that the shared machine's load moves both alike. Prints a markdown table and the ratio
(build + suite runs) / (plain runs); then checks that each suite run equals its plain run: the same texts and
mutants, the same validity verdicts, outcomes and bias verdicts.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def hinter(*args: str) -> tuple[float, str]:
    """Run `hinter ARGS` in its own process; its wall time in seconds, and its output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT / "src")])}
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "hinter.cli", *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"hinter {' '.join(args)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return seconds, p.stdout + p.stderr


def minilm(folder: Path) -> Path:
    if not (folder / "config.json").exists():
        import train_minilm
        print(f"training the MiniLM classifier into {folder} (once; not timed)", flush=True)
        train_minilm.train("imdb", folder)
    return folder


def contents(folder: Path) -> tuple[list, list]:
    """What must be equal between a suite run and a plain run: texts with outcomes, mutants with every verdict."""
    from hinter.store import open_run
    store = open_run(folder)
    try:
        texts = [(t.text_id, t.source_id, t.text, t.outcome) for t in store.texts()]
        mutants = sorted((m.text_id, m.pair_key, m.order, m.text, m.valid, m.outcome, m.bias, m.hidden,
                          m.strictly_hidden) for m in store.mutants())
        return texts, mutants
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=8, help="IMDB reviews (the bundled sample's first N)")
    ap.add_argument("--max-pairs-per-text", type=int, default=2, help="0: every pair present")
    ap.add_argument("--models", default=None, help="comma-separated model specs instead of the three default ones")
    ap.add_argument("--attributes", default="race,gender")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-suites")
    ap.add_argument("--minilm", type=Path, default=ROOT / "runs" / "minilm-imdb",
                    help="the trained MiniLM folder (trained here when absent)")
    args = ap.parse_args()
    models = ({spec: spec for spec in args.models.split(",")} if args.models else
              {"gguf:default": "gguf:default", "python (planted)": "python:planted:female_negative",
               "MiniLM (hf, CPU)": f"hf:{minilm(args.minilm)}?device=cpu"})
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    campaign = ("--dataset", "imdb", "--limit", str(args.limit), "--attributes", args.attributes,
                *(("--max-pairs-per-text", str(args.max_pairs_per_text)) if args.max_pairs_per_text else ()))
    suite = args.out / "imdb.suite"
    rows = []
    build_s, _ = hinter("suite", "build", *campaign, "--out", str(suite))
    rows.append(("suite build", "–", build_s, None))
    for i, (name, spec) in enumerate(models.items()):
        plain_s, _ = hinter("run", *campaign, "--model", spec, "--task", "imdb", "--out", str(args.out / f"plain-{i}"))
        suite_s, _ = hinter("run", "--suite", str(suite), "--model", spec, "--task", "imdb",
                            "--out", str(args.out / f"suite-{i}"))
        rows.append(("run --suite", name, suite_s, plain_s))
    suite_total = build_s + sum(r[2] for r in rows[1:])
    plain_total = sum(r[3] for r in rows[1:])
    compare_s, _ = hinter("compare", *(str(args.out / f"suite-{i}") for i in range(len(models))),
                          "--out", str(args.out / "compared"))

    import json
    s = json.loads((args.out / "plain-0" / "summary.json").read_text())
    mutants = s["totals"]["atomic"]["mutants"] + s["totals"]["intersectional"]["mutants"]
    valid = s["totals"]["atomic"]["valid"] + s["totals"]["intersectional"]["valid"]
    print(f"\nIMDB, first {args.limit} reviews, {args.attributes}, --max-pairs-per-text {args.max_pairs_per_text or 'all'}: "
          f"{mutants} mutants, {valid} valid; wall seconds of each `hinter` process\n")
    print("| step | model | suite path s | plain `run` s |")
    print("|---|---|---|---|")
    for step, name, a, b in rows:
        print(f"| {step} | {name} | {a:.1f} | {'–' if b is None else f'{b:.1f}'} |")
    print(f"| **total** | {len(models)} models | **{suite_total:.1f}** (build + {len(models)} runs) | **{plain_total:.1f}** ({len(models)} runs) |")
    print(f"\nratio suite / plain: {suite_total / plain_total:.2f} "
          f"(suite runs alone: {(suite_total - build_s) / plain_total:.2f} of the plain runs); "
          f"`hinter compare` of the three suite runs: {compare_s:.1f} s")

    same = True
    for i, name in enumerate(models):
        a, b = contents(args.out / f"plain-{i}"), contents(args.out / f"suite-{i}")
        ok = a == b
        same &= ok
        print(f"{name}: suite run {'equals' if ok else 'DIFFERS FROM'} the plain run "
              f"({len(a[0])} texts, {len(a[1])} mutants: verdicts and outcomes)")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
