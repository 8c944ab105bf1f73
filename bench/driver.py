"""Where a `hinter run --suite` spends its time: start-up, suite reading, model stage, oracle and store writes,
summary and findings, report (issue 25, item 3).

Runs the CLI's `run --suite` in this process, as a user would from a shell, and times its phases by wrapping the
functions that do them (no change to hinter): importing the CLI, `load_suite` (reading and checking the suite
file), the executor's start (loading the model), `execute` (the campaign: the determinism probe, the suite's
verdicts, the model stage, the oracle and the store writes, whose split the run's own stats give), `write_outputs`
(the summary, findings, biases.csv, summary.json), `write_report` (report.html) and the gate. Prints a markdown
table, and with --profile the functions where the time went (cProfile; the profiler slows Python code down, so
its seconds are larger than the table's, which is measured without it).

    python bench/driver.py --suite imdb-rgb.suite --model hf:runs/minilm-imdb --out runs/driver
    PYTHONPATH=tests python bench/driver.py --suite imdb-rgb.suite --model python:planted:female_negative
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")

PHASES = (  # (module, function, phase): each wrapped function's time is its phase's
    ("hinter.suite", "load_suite", "suite reading"),
    ("hinter.executor", "LocalExecutor.start", "model load"),
    ("hinter.engine", "execute", "campaign"),
    ("hinter.report", "write_outputs", "summary, findings, biases.csv"),
    ("hinter.report", "write_report", "report.html"),
    ("hinter.cli.gate", "gate", "gate"),
)


def wrap(times: dict[str, float], module: str, name: str, phase: str) -> None:
    import importlib
    owner = importlib.import_module(module)
    attr = name
    if "." in name:
        cls, attr = name.split(".")
        owner = getattr(owner, cls)
    original = getattr(owner, attr)

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            times[phase] = times.get(phase, 0.0) + time.perf_counter() - t0

    setattr(owner, attr, timed)


def measure(suite: str, model: str, out: Path, task: str | None) -> tuple[dict[str, float], dict]:
    """Each phase's seconds, and the run's stats."""
    t0 = time.perf_counter()
    import hinter.cli
    times = {"import hinter": time.perf_counter() - t0}
    for module, name, phase in PHASES:
        wrap(times, module, name, phase)
    argv = ["run", "--suite", suite, "--model", model, "--out", str(out), "--overwrite"]
    argv += ["--task", task] if task else []
    t0 = time.perf_counter()
    sys.argv = ["hinter", *argv]
    try:
        hinter.cli.main()
    except SystemExit as e:
        if e.code not in (0, None, 1, 3):  # 1, 3: the gate failed, which is the model's business here
            raise
    times["whole run (after import)"] = time.perf_counter() - t0
    from hinter.store import open_run
    store = open_run(out)
    stats = store.stats()
    store.close()
    return times, stats


def table(times: dict[str, float], stats: dict, summary: dict) -> list[str]:
    campaign = times.get("campaign", 0.0)
    model, oracle, verdicts = (stats.get(k, 0.0) for k in ("seconds_model", "seconds_oracle_store", "seconds_validity"))
    rows = [("import hinter", times["import hinter"]),
            ("suite reading (load_suite)", times.get("suite reading", 0.0)),
            ("model load", times.get("model load", 0.0)),
            ("suite verdicts per batch (the run's seconds_validity)", verdicts),
            ("model stage (the run's seconds_model)", model),
            ("oracle and store writes (the run's seconds_oracle_store)", oracle),
            ("rest of the campaign (determinism probe, store set-up, mutation counters)",
             campaign - times.get("model load", 0.0) - verdicts - model - oracle - stats.get("seconds_mutation", 0.0)),
            ("summary, findings, biases.csv (write_outputs)", times.get("summary, findings, biases.csv", 0.0)),
            ("report.html (write_report)", times.get("report.html", 0.0)),
            ("gate", times.get("gate", 0.0))]
    whole = times["import hinter"] + times["whole run (after import)"]
    rows.append(("other (console output, settings)", whole - sum(s for _, s in rows)))
    totals = summary.get("totals", {})
    mutants = sum(t.get("mutants", 0) for t in totals.values())
    valid = sum(t.get("valid", 0) for t in totals.values())
    lines = [f"{summary.get('texts', '?')} texts, {mutants:,} mutants ({valid:,} valid), "
             f"{int(stats.get('model_calls', 0)):,} model calls", "",
             "| phase | seconds | share |", "|---|---|---|"]
    lines += [f"| {name} | {s:.2f} | {s / whole:.0%} |" for name, s in rows]
    lines.append(f"| **whole process** | **{whole:.2f}** | 100% |")
    start_up = times["import hinter"] + times.get("model load", 0.0)
    lines.append(f"\nwhole run / (model stage + start-up {start_up:.2f} s): {whole / (model + start_up):.2f}x")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--task", default=None)
    ap.add_argument("--out", default="runs/driver")
    ap.add_argument("--profile", default=None, help="also write a cProfile of the whole run here, print its top")
    ap.add_argument("--json", default=None, help="write the phases and stats here")
    args = ap.parse_args()
    out = Path(args.out)
    if args.profile:
        import cProfile
        import pstats
        profiler = cProfile.Profile()
        profiler.enable()
        times, stats = measure(args.suite, args.model, out, args.task)
        profiler.disable()
        profiler.dump_stats(args.profile)
        print("\ncProfile, top 25 by own time:")
        pstats.Stats(args.profile).sort_stats("tottime").print_stats(25)
    else:
        times, stats = measure(args.suite, args.model, out, args.task)
    summary = json.loads((out / "summary.json").read_text())
    print("\n".join(table(times, stats, summary)))
    if args.json:
        Path(args.json).write_text(json.dumps({"times": times, "stats": stats}, indent=1))


if __name__ == "__main__":
    main()
