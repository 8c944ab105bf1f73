"""`hinter suite build --workers N` on every core (issue 43, item 1): wall seconds per worker count, the speed-up
over one worker measured in the same run, and whether each suite is byte-identical to the one worker's.

Usage: python bench/suite_scaling.py --dataset imdb --attributes race,gender,body --workers 1,2,4,8,16
       python bench/suite_scaling.py ... --baseline /tmp/old/src --baseline-workers 16   # another source tree too

Each build is its own `hinter` process (the CLI a user runs, its start-up and spaCy's load included), timed from
start to exit; every suite is written under the same file name in its own folder, so that the files compare
byte for byte. Prints a markdown table; exits 1 if a suite differs from the one-worker build.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(src: Path, campaign: list[str], workers: int, out: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (the build's processes together) and the suite's SHA-256."""
    out.parent.mkdir(parents=True, exist_ok=True)
    cpu = cpu_of_children()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "hinter.cli", "suite", "build", *campaign, "--workers", str(workers),
                        "--out", str(out)], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"the build with {workers} workers failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return seconds, cpu_of_children() - cpu, hashlib.sha256(out.read_bytes()).hexdigest()


def timeline(args) -> None:
    """One build in this process, with the seconds since the start at which the parser was loaded and each batch
    written: where a build with many workers waits (start-up, the longest text, the writer)."""
    t0 = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    import hinter
    from hinter.executor import LocalExecutor
    print(f"{time.perf_counter() - t0:6.2f} s  hinter imported", flush=True)

    def progress(stage: str, done: int, total: int) -> None:
        print(f"{time.perf_counter() - t0:6.2f} s  {stage} {done}/{total}", flush=True)
    options = {"dataset": args.dataset, "attributes": tuple(args.attributes.split(","))}
    if args.limit:
        options["limit"] = args.limit
    hinter.build_suite(out=args.out / "timeline.suite", executor=LocalExecutor(args.timeline), progress=progress,
                       **options)
    print(f"{time.perf_counter() - t0:6.2f} s  written", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="imdb")
    ap.add_argument("--attributes", default="race,gender,body")
    ap.add_argument("--limit", type=int, default=None, help="the dataset's first N texts")
    ap.add_argument("--extra", default="", help="more options of suite build, e.g. '--max-pairs-per-text 6'")
    ap.add_argument("--workers", default="1,2,4,8,16", help="worker counts; 1 is always measured, first")
    ap.add_argument("--baseline", type=Path, default=None, help="another tree's src folder, timed at --baseline-workers")
    ap.add_argument("--baseline-workers", default="16")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "suite-scaling")
    ap.add_argument("--timeline", type=int, default=None, metavar="N",
                    help="instead: one build with N workers in this process, printing when each stage ended")
    args = ap.parse_args()
    if args.timeline:
        return timeline(args)
    campaign = ["--dataset", args.dataset, "--attributes", args.attributes, *args.extra.split()]
    if args.limit:
        campaign += ["--limit", str(args.limit)]
    counts = [1] + [int(w) for w in args.workers.split(",") if int(w) != 1]
    print(f"hinter suite build {' '.join(campaign)}; {os.cpu_count()} cores", flush=True)
    seconds, cpu, digests = {}, {}, {}
    for w in counts:
        seconds[w], cpu[w], digests[w] = build(ROOT / "src", campaign, w, args.out / f"w{w}" / "campaign.suite")
        print(f"  {w} workers: {seconds[w]:.1f} s ({cpu[w]:.1f} s of CPU)", flush=True)
    base = {}
    if args.baseline:
        for w in [int(w) for w in args.baseline_workers.split(",")]:
            base[w], _, _ = build(args.baseline, campaign, w, args.out / f"baseline{w}" / "campaign.suite")
            print(f"  baseline, {w} workers: {base[w]:.1f} s", flush=True)
    sys.path.insert(0, str(ROOT / "src"))
    from hinter.suite import load_suite
    suite = load_suite(args.out / "w1" / "campaign.suite")
    mutants = sum(map(len, suite.mutants.values()))
    print(f"\n{len(suite.records):,} texts, {mutants:,} mutants\n")
    print("| workers | seconds | speed-up | mutants/s | CPU seconds (all processes) | byte-identical to 1 worker |")
    print("|---|---|---|---|---|---|")
    for w in counts:
        print(f"| {w} | {seconds[w]:.1f} | {seconds[1] / seconds[w]:.2f}x | {mutants / seconds[w]:,.0f} | "
              f"{cpu[w]:.1f} | {'yes' if digests[w] == digests[1] else 'NO'} |")
    for w, s in base.items():
        print(f"| {w} (baseline tree) | {s:.1f} | {seconds[1] / s:.2f}x | {mutants / s:,.0f} | | |")
    if any(d != digests[1] for d in digests.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
