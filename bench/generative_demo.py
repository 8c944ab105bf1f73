"""The free-text judge end to end on a real model: the bundled reference-letter task on the first bios.

Usage: python bench/generative_demo.py [--texts 6] [--samples 4] [--max-tokens 40] [--pairs 2]
                                       [--model gguf:default?threads=2]

For each of the first --texts biographies of the bundled Bias in Bios sample: its gender and race mutants (the
built-in dictionary, atomic and order 2, at most --pairs word pairs per text and attribute; the dependency
invariant is not applied here), each version asked --samples times with the task's prompt and temperature;
then every mutant judged (masking, four aspects, the per-text test) and the findings over texts. Prints the time
of generation and judging, tokens per second, answers that failed, bytes per stored answer (UTF-8 text: the store
keeps a generative answer once, as its outcome) and the findings in words.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hinter.datasets import load_dataset  # noqa: E402
from hinter.mutation.dictionary import load_dictionary  # noqa: E402
from hinter.generative import AspectObservation, aspect_findings, judge_of  # noqa: E402
from hinter.models import load_model  # noqa: E402
from hinter.mutation.mutants import generate  # noqa: E402
from hinter.models.tasks import get_task  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=6)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=40)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--model", default="gguf:default?threads=2")
    args = ap.parse_args()
    task = replace(get_task("reference-letter"), samples=args.samples, max_tokens=args.max_tokens)
    records = load_dataset("bios")[:args.texts]
    dictionary = load_dictionary().restrict(("gender", "race"), include_occupational=False)
    started = time.time()
    model = load_model(args.model, task=task)
    loaded = time.time() - started
    versions = []  # (text id, pair ids or None, text, replacements)
    for i, r in enumerate(records):
        versions.append((i, None, r.text, ()))
        for m in generate(i, r.text, dictionary, ("gender", "race"), order=2, max_pairs_per_text=args.pairs).mutants:
            versions.append((i, m.key, m.text, m.replacements))
    answers, failed, words = {}, 0, 0
    t0 = time.time()
    for i, key, text, _ in versions:
        outs = [model.predict([text])[0] for _ in range(task.samples)]
        failed += sum(o.error for o in outs)
        answers[(i, key)] = [o.value for o in outs if not o.error]
        words += sum(len(o.value.split()) for o in outs if not o.error)
    generation = time.time() - t0
    judge = judge_of(task)
    t0 = time.time()
    observations = []
    for i, key, text, reps in versions:
        if key is None or not answers[(i, key)] or not answers[(i, None)]:
            continue
        observations.append(AspectObservation.from_pair_ids(i, key, judge.judge(answers[(i, None)],
                                                                                answers[(i, key)], reps)))
    analysis = aspect_findings(observations)
    judging = time.time() - t0
    stored = [a for v in answers.values() for a in v]
    calls = len(versions) * task.samples
    print(f"model {args.model}, task reference-letter (temperature {task.temperature}, max_tokens {task.max_tokens}, "
          f"samples {task.samples}); {len(records)} bios, {len(versions) - len(records)} mutants")
    print(f"load {loaded:.1f} s; generation {generation:.1f} s for {calls} answers ({calls / generation:.2f} "
          f"answers/s, {words / generation:.1f} words/s); {failed} failed (empty); judging {judging:.1f} s")
    print(f"bytes per stored answer: {sum(len(a.encode()) for a in stored) / max(1, len(stored)):.0f} "
          f"(UTF-8, mean of {len(stored)})")
    print(f"findings: {len(analysis.findings)} cells x aspects, {len(analysis.significant())} significant, "
          f"{len(analysis.population_hidden())} population-hidden")
    for f in analysis.findings:
        print(("* " if f.significant else "  ") + f"[{f.aspect}] {f.describe()}")
    first = next(iter(answers.values()))
    print("\nexample answers of the first bio:", *[repr(a[:120]) for a in first[:2]], sep="\n  ")


if __name__ == "__main__":
    main()
