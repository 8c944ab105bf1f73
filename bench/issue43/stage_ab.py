"""Issue 43 item 3 on one GPU machine, in one call: the model stage of `run --suite` of two trees (this round's
and the code before it), alternated, against the reference pass on the same texts, on each suite given.

Each run is a tree's own bench/driver.py (a whole `hinter run --suite` in its own process, timed by phase); the
stage is the driver's "model stage, busy" (the driver asking, or the GPU answering a call), as bench/gpu.py takes
it. The reference pass (`gpu_best_pass.py`, the project's shared tool, not part of hinter) runs once per suite in
its own process on the texts the first run asked, with the same model folder. Runs alternate (new, base, base,
new, ...) while --budget seconds allow another pair (each suite gets its share). Prints markdown tables; writes
stage_ab.json to --out.

    python bench/issue43/stage_ab.py --new .gpu/gs/new --base .gpu/gs/base --model /tmp/shape \
        --suites .gpu/gs/imdb-rg.suite,.gpu/gs/imdb-rgb.suite --reference .gpu/gs/gpu_best_pass.py --out $OUT
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def drive(tree: Path, suite: str, model: str, out: Path) -> dict:
    """One whole run of `tree` on `suite`: its phases and stats (bench/driver.py --json)."""
    report = out.with_suffix(".json")
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, str(tree / "bench" / "driver.py"), "--suite", suite, "--model",
                           f"hf:{model}", "--task", "imdb", "--out", str(out), "--no-compare", "--json", str(report)],
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})  # driver.py puts its tree's src first
    wall = time.perf_counter() - t0
    if done.returncode != 0 or not report.exists():
        return {"error": (done.stdout[-1500:] + done.stderr[-1500:]), "wall": wall}
    got = json.loads(report.read_text())
    times, stats = got["times"], got["stats"]
    start_up = times["import hinter"] + times.get("model load", 0.0)
    return {"wall": wall, "busy": times.get("model stage, busy", stats["seconds_model"]),
            "asking": stats["seconds_model"], "whole": times["import hinter"] + times["whole run (after import)"],
            "start_up": start_up, "texts": int(stats.get("model_calls", 0))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--new", type=Path, required=True, help="the tree measured (its src/ and bench/)")
    ap.add_argument("--base", type=Path, required=True, help="the tree before (its src/ and bench/)")
    ap.add_argument("--model", required=True, help="an hf: sequence classifier's folder")
    ap.add_argument("--suites", required=True, help="comma-separated suite files")
    ap.add_argument("--reference", default=None, help="gpu_best_pass.py (left out: no reference pass)")
    ap.add_argument("--reference-repeat", type=int, default=1)
    ap.add_argument("--budget", type=float, default=200.0, help="seconds for all runs and reference passes")
    ap.add_argument("--out", type=Path, default=Path("/tmp/stage_ab"), help="the tables and JSON")
    ap.add_argument("--work", type=Path, default=Path("/tmp/stage_ab_runs"), help="the runs' folders")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    suites = args.suites.split(",")
    results: dict = {}
    lines = []
    for n, suite in enumerate(suites):
        share = (args.budget - (time.perf_counter() - t_start)) / (len(suites) - n)
        t_suite = time.perf_counter()
        runs: dict[str, list[dict]] = {"new": [], "base": []}
        order = ["new", "base", "base", "new", "new", "base", "base", "new"]
        reference = {}
        longest = 0.0
        for i, name in enumerate(order):
            left = share - (time.perf_counter() - t_suite)
            if i >= 2 and i % 2 == 0 and left < 2.2 * longest:  # both trees once, then pairs while one fits
                break
            tree = args.new if name == "new" else args.base
            got = drive(tree.resolve(), suite, args.model, args.work / f"{Path(suite).stem}-{name}-{i}")
            print(f"{Path(suite).name}, {name}: {json.dumps(got)[:300]}", flush=True)
            if "error" in got:
                raise SystemExit(f"the {name} run on {suite} failed:\n{got['error']}")
            runs[name].append(got)
            longest = max(longest, got["wall"])
            if i == 0 and args.reference:  # the reference pass on the texts the first run asked
                target = args.out / f"reference-{Path(suite).stem}.json"
                done = subprocess.run([sys.executable, args.reference, "--model", args.model, "--run",
                                       str(args.work / f"{Path(suite).stem}-new-0"), "--src",
                                       str(args.new.resolve() / "src"), "--repeat", str(args.reference_repeat),
                                       "--json", str(target)], capture_output=True, text=True)
                print(done.stdout[-1500:], done.stderr[-1500:] if done.returncode else "", flush=True)
                if done.returncode == 0:
                    reference = json.loads(target.read_text())["runs"][0]
        results[suite] = {"runs": runs, "reference": reference}
        texts = reference.get("texts") or runs["new"][0]["texts"]  # the distinct texts the run asked
        best = min(reference["best_seq_s"], reference["overlap_s"]) if reference else None

        def cell(name: str, key: str) -> str:
            values = [r[key] for r in runs[name]]
            if not values:
                return "-"
            mean = statistics.mean(values)
            return f"{mean:.2f}" + (f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else "")

        def stage(name: str) -> str:
            if not runs[name]:
                return "-"
            s = statistics.mean(r["busy"] for r in runs[name])
            return f"{texts / s:,.0f}" + (f" ({best / s:.0%})" if best else "")

        def ratio(name: str) -> str:
            return ("-" if not runs[name] else
                    f"{statistics.mean(r['whole'] / (r['busy'] + r['start_up']) for r in runs[name]):.2f}x")
        lines += ["", f"{suite}: {texts:,} texts asked" + (
            f"; reference pass {best:.2f} s ({texts / best:,.0f} texts/s; sequential {reference['best_seq_s']:.2f} s, "
            f"overlapped {reference['overlap_s']:.2f} s, tokenizing alone {reference['tok_s']:.2f} s, forward "
            f"passes alone {reference['fwd_s']:.2f} s)" if reference else ""), "",
                  "| tree | runs | model stage at work, s | texts/s (of the reference) | the driver asking, s | "
                  "start-up, s | whole process, s | whole / (stage + start-up) |", "|---|---|---|---|---|---|---|---|"]
        for name in ("new", "base"):
            lines.append(f"| {name} | {len(runs[name])} | {cell(name, 'busy')} | {stage(name)} | "
                         f"{cell(name, 'asking')} | {cell(name, 'start_up')} | {cell(name, 'whole')} | {ratio(name)} |")
    lines.append(f"\n({time.perf_counter() - t_start:.0f} s in all)")
    print("\n".join(lines))
    (args.out / "stage_ab.md").write_text("\n".join(lines) + "\n")
    (args.out / "stage_ab.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
