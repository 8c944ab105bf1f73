"""What running a `python:` model in a worker process costs (issue 30): a run of the bundled IMDB campaign with
the model in hinter's own process (`?process=inline`, the baseline) against the same run with the model in its
worker process (the default), in the same process, alternating rounds. One table.

Usage: python bench/python_worker.py [--texts 40] [--rounds 2]

Campaign: the bundled IMDB sample's first --texts reviews, race x gender, order 2, with a keyword model defined
here (instant: the cost measured is the worker's, texts pickled through a pipe, not the model's). The parser is
loaded once and shared, so a run's wall time is mutation, validity, the model stage and storing. "model s" is the
model stage's time as the run records it (stats seconds_model), "load s" the model's loading (a worker's start and
import). "identical" compares every mutant's verdict, outcome and raw answer with the baseline's.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).parent))


def keyword_model(texts: list[str]) -> list[str]:
    return ["negative" if " black " in t and " woman " in t else "positive" for t in texts]


def rows(run) -> list[tuple]:
    return [(m.text_id, m.replacements, m.valid, m.outcome, m.raw, m.bias) for m in run.mutants]


def one(spec: str, texts: int, parser) -> tuple[dict, list]:
    import hinter
    from hinter.models import load_model
    t0 = time.perf_counter()
    model = load_model(spec)
    load = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        run = hinter.run(None, model, dataset="imdb", limit=texts, attributes=("race", "gender"), out=out,
                         parser=parser)
        wall = time.perf_counter() - t0
        stats = run.store.stats()
        got = rows(run)
        run.store.close()
    getattr(model, "close", lambda: None)()
    return {"wall": wall, "model": stats.get("seconds_model", 0.0), "load": load,
            "calls": int(stats.get("model_calls", 0))}, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from hinter.validity import SpacyParser
    parser = SpacyParser()
    specs = {"in process (baseline)": "python:python_worker:keyword_model?process=inline",
             "worker process": "python:python_worker:keyword_model"}
    results: dict[str, list[dict]] = {k: [] for k in specs}
    got: dict[str, list] = {}
    one(specs["in process (baseline)"], min(args.texts, 4), parser)  # warm spaCy and the imports
    for r in range(args.rounds):  # alternating which goes first: the machine's load drifts
        for name, spec in (list(specs.items()) if r % 2 == 0 else list(reversed(specs.items()))):
            numbers, got[name] = one(spec, args.texts, parser)
            results[name].append(numbers)
            print(f"round {r + 1} {name}: {numbers} (load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
    same = got["worker process"] == got["in process (baseline)"]
    print(f"\nIMDB sample, {args.texts} reviews, race x gender, order 2; best of {args.rounds} rounds; "
          f"{os.cpu_count()} CPUs\n")
    print("| model runs | wall s | model stage s | load s | model calls | identical |")
    print("|---|---:|---:|---:|---:|---|")
    for name, runs in results.items():
        best = min(runs, key=lambda x: x["wall"])
        print(f"| {name} | {best['wall']:.2f} | {best['model']:.3f} | {best['load']:.2f} | {best['calls']} | "
              f"{'baseline' if name.startswith('in process') else ('yes' if same else 'NO')} |")


if __name__ == "__main__":
    main()
