"""The Ray executor against the local one, on the same campaigns: throughput with 1 and 2 workers, Ray's
overhead, and whether the results are identical. One table.

Usage: python bench/executors.py [--parse-texts 100] [--model-texts 24] [--address HOST:PORT] [--skip parse,model]

Campaigns (both on bundled samples):
- parse: the ECtHR sample (63 long legal texts), race x gender, every pair, with an instant keyword model: the work is the
  dependency invariant's parsing, the stage Ray spreads in batches of texts;
- model: short IMDB reviews, race x gender, at most 2 pairs per text and attribute, with the embedded Gemma 3
  270M (gguf:default): the work is the model calls, one model copy per worker.

Runs per campaign: the local executor (the baseline; spaCy in N worker processes, the model in this process
with all cores' threads) and the Ray executor with N actors of one CPU each (one model copy each, one thread),
for N = 1 and 2. Ray runs on a cluster started here with ray.init (or the one --address names); each run's wall
time includes starting its workers (loading spaCy and the model), as a user's run does ("of which start s"). "identical" compares
every mutant's validity verdict, outcome, raw answer and bias flag with the local run of the same campaign.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def keyword_model(texts: list[str]) -> list[str]:
    """Instant: keeps the parse campaign about parsing. (Defined here, so Ray ships it to the workers by value.)"""
    return ["negative" if " black " in t and " woman " in t else "positive" for t in texts]


def rows(run) -> list[tuple]:
    return [(m.text_id, m.replacements, m.valid, m.outcome, m.raw, m.bias) for m in run.mutants]


def measure(campaign: str, executor_name: str, workers: int, records, model, kwargs, executor) -> dict:
    from hinter.api import run
    out = Path(tempfile.mkdtemp(prefix="hinter-bench-ray-"))
    start = time.perf_counter()
    loaded = []
    result = run(records, model, out=out, executor=executor, **kwargs,
                 progress=lambda stage, done, total: loaded.append(time.perf_counter()) if stage == "load" and done else None)
    seconds = time.perf_counter() - start
    summary = result.summary()
    mutants = summary["totals"]["atomic"]["mutants"] + summary["totals"]["intersectional"]["mutants"]
    return {"campaign": campaign, "executor": executor_name, "workers": workers, "seconds": seconds, "start": loaded[0] - start,
            "texts": len(records), "mutants": mutants, "model_calls": summary["model_calls"], "rows": rows(result)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parse-texts", type=int, default=100)
    ap.add_argument("--model-texts", type=int, default=24)
    ap.add_argument("--address", default=None, help="an existing Ray cluster (default: start one here)")
    ap.add_argument("--skip", default="", help="campaigns to leave out: parse, model")
    args = ap.parse_args()

    import ray

    from hinter.datasets import read_dataset
    from hinter.executor import LocalExecutor
    from hinter.executor.ray_cluster import RayExecutor
    from hinter.models.callable import CallableModel

    skip = set(filter(None, args.skip.split(",")))
    campaigns = []
    if "parse" not in skip:
        campaigns.append(("parse: ecthr race x gender", read_dataset("ecthr", limit=args.parse_texts).records,
                          CallableModel(keyword_model, "bench:keyword"),
                          dict(attributes=("gender", "race"), order=2)))
    if "model" not in skip:
        short = [r for r in read_dataset("imdb").records if len(r.text) < 1200][:args.model_texts]
        campaigns.append(("model: imdb gguf:default", short, "gguf:default",
                          dict(attributes=("gender", "race"), order=2, max_pairs_per_text=2)))

    t0 = time.perf_counter()
    ray.init(address=args.address, log_to_driver=False, logging_level=logging.WARNING,
             **({} if args.address else {"include_dashboard": False, "num_cpus": os.cpu_count()}))
    cluster_start = time.perf_counter() - t0
    results = []
    for name, records, model, kwargs in campaigns:
        for workers in (1, 2):
            print(f"{name}: local, {workers} worker(s)...", file=sys.stderr, flush=True)
            results.append(measure(name, "local", workers, records, model, kwargs, LocalExecutor(workers)))
            print(f"{name}: ray, {workers} worker(s)...", file=sys.stderr, flush=True)
            results.append(measure(name, "ray", workers, records, model, kwargs, RayExecutor(workers=workers)))

    print(f"\nRay cluster start (ray.init, not counted below): {cluster_start:.1f} s; machine: {os.cpu_count()} cores\n")
    print("| campaign | executor | workers | texts | mutants | model calls | wall s | of which start s | mutants/s | ray / local (same workers) | vs local 2 | identical |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        same = next(x for x in results if x["campaign"] == r["campaign"] and x["executor"] == "local"
                    and x["workers"] == r["workers"])
        local2 = next(x for x in results if x["campaign"] == r["campaign"] and x["executor"] == "local"
                      and x["workers"] == 2)
        ratio = f"{r['seconds'] / same['seconds']:.2f}x" if r["executor"] == "ray" else "-"
        print(f"| {r['campaign']} | {r['executor']} | {r['workers']} | {r['texts']} | {r['mutants']} | "
              f"{r['model_calls']} | {r['seconds']:.1f} | {r['start']:.1f} | {r['mutants'] / r['seconds']:.0f} | {ratio} | "
              f"{local2['seconds'] / r['seconds']:.2f}x | {'yes' if r['rows'] == local2['rows'] else 'NO'} |")
    for name, *_ in campaigns:
        by = {(r["executor"], r["workers"]): r["seconds"] for r in results if r["campaign"] == name}
        print(f"{name}: ray 2 workers vs 1: {by[('ray', 1)] / by[('ray', 2)]:.2f}x faster; "
              f"ray overhead at 2 workers: {100 * (by[('ray', 2)] / by[('local', 2)] - 1):+.0f}% wall time")
    ray.shutdown()


if __name__ == "__main__":
    main()
