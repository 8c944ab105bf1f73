"""Where the demo's time goes: the model stage of `hinter demo` (the embedded Gemma on 40 IMDB reviews, race, gender,
body, order 2, at most 4 pairs per text), this checkout against another one (`--baseline-src`), one table.

Usage: python bench/demo_model.py --baseline-src /tmp/old/src [--texts 40] [--timed 40] [--rounds 2]

For each checkout, in its own process:
- the demo's campaign through that checkout's engine with the embedded Gemma's tokenizer and KV-cache logic, its
  evaluation replaced by a counter: the model calls and the tokens the model stage evaluates (prompt-head reuse
  and chunk sharing between an original and its mutants included). These do not depend on the machine's load;
- the real model on the first --timed texts the engine asks, in its order: wall and CPU seconds, tokens per
  second. These follow the load (the load average is printed with each round), so the checkouts alternate.

The demo's whole time is about the tokens evaluated divided by the rate, plus the model's loading and spaCy's parse.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(texts: int, timed: int) -> dict:
    import numpy as np

    import hinter
    from hinter.datasets import load_dataset
    from hinter.models import load_model

    model = load_model("gguf:default", "imdb")
    llm = model.llm
    count = {"tokens": 0, "calls": 0}
    asked: list[str] = []
    real_eval, real_reset, real_predict = llm.eval, llm.reset, model.predict

    def counted_eval(tokens):  # what llama.cpp's eval keeps of a call: the tokens now in the context
        count["tokens"] += len(tokens)
        llm.input_ids[llm.n_tokens:llm.n_tokens + len(tokens)] = tokens
        llm.n_tokens += len(tokens)

    def counted_predict(batch):
        count["calls"] += len(batch)
        asked.extend(batch)
        return real_predict(batch)

    llm.eval, llm.reset = counted_eval, lambda: setattr(llm, "n_tokens", 0)
    model._last_logits = lambda: np.zeros(llm.n_vocab(), dtype=np.float32)
    model.predict = counted_predict
    records = [r.text for r in load_dataset("imdb", limit=texts)]
    hinter.run(records, model, attributes=("race", "gender", "body"), order=2, max_pairs_per_text=4,
               out=tempfile.mkdtemp(prefix="hinter-bench-"))
    # the real model on the first texts the engine asked, in its order (a fresh model: an empty KV cache)
    fresh = load_model("gguf:default", "imdb")
    evaluated = [0]
    fresh_eval = fresh.llm.eval

    def timed_eval(tokens):
        evaluated[0] += len(tokens)
        return fresh_eval(tokens)

    fresh.llm.eval = timed_eval
    cpu, wall = time.process_time(), time.perf_counter()
    fresh.predict(asked[:timed])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"calls": count["calls"], "tokens": count["tokens"], "timed_texts": min(timed, len(asked)),
            "timed_tokens": evaluated[0], "wall_s": wall, "cpu_s": cpu, "hinter": hinter.__file__}


def run_checkout(src: str, texts: int, timed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, __file__, "--worker", "--texts", str(texts), "--timed", str(timed)],
                       env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise SystemExit(f"the run with {src} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline-src", required=False, help="another checkout's src folder (e.g. `git archive "
                    "COMMIT src | tar -x -C /tmp/old`, then /tmp/old/src)")
    ap.add_argument("--texts", type=int, default=40)
    ap.add_argument("--timed", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.texts, a.timed)))
        return
    checkouts = [("this checkout", str(ROOT / "src"))] + ([("baseline", a.baseline_src)] if a.baseline_src else [])
    rows = []
    for r in range(a.rounds):
        for name, src in (checkouts if r % 2 == 0 else checkouts[::-1]):
            load = os.getloadavg()[0]
            m = run_checkout(src, a.texts, a.timed)
            rows.append((name, r + 1, load, m))
    print(f"| checkout | round | load avg | model calls | tokens evaluated | tokens/call | timed texts | wall s | "
          f"CPU s | tokens/s (wall) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r, load, m in rows:
        print(f"| {name} | {r} | {load:.1f} | {m['calls']} | {m['tokens']:,} | {m['tokens'] / m['calls']:.1f} | "
              f"{m['timed_texts']} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} | {m['timed_tokens'] / m['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
