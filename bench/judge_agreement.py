"""The judge aspect on a real model: how often a judge scores two samples of the same prompt differently.

Usage: python bench/judge_agreement.py [--texts 6] [--samples 4] [--max-tokens 40]
                                       [--model gguf:default?threads=2] [--judge gguf:default?threads=2]

For each of the first --texts biographies of the bundled Bias in Bios sample, --model writes --samples reference
letters (the bundled reference-letter task); the judge (generative/judge_aspect.py: the fixed rubric, yes / no)
scores each, and the script prints the judge's agreement with itself over every pair of a bio's samples (as
summary.json's findings_analysis.judge_agreement counts it), the share judged favourable, and the time per answer
of writing and of judging. As a baseline measured in the same run, the judge is asked about the same answers a
second time without its cache: the share of answers it scores differently on a second reading (0 for a judge that
scores deterministically, as the GGUF backend's first-token mode does).
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
from hinter.generative.judge_aspect import judge_agreement, judge_aspect, judge_model  # noqa: E402
from hinter.generative.masking import IdentityTerms  # noqa: E402
from hinter.models import load_model  # noqa: E402
from hinter.models.tasks import get_task  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=6)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=40)
    ap.add_argument("--model", default="gguf:default?threads=2")
    ap.add_argument("--judge", default="gguf:default?threads=2")
    args = ap.parse_args()
    task = replace(get_task("reference-letter"), samples=args.samples, max_tokens=args.max_tokens)
    records = load_dataset("bios")[:args.texts]
    writer = load_model(args.model, task=task)
    t0 = time.time()
    samples = [[o.value for o in (writer.predict([r.text])[0] for _ in range(task.samples)) if not o.error]
               for r in records]
    writing = time.time() - t0
    masks = IdentityTerms.of([])  # no mutant here: nothing to mask but what the rubric reads anyway
    samples = [masks.mask_all(s) for s in samples]
    aspect = judge_aspect(args.judge)
    t0 = time.time()
    values = [aspect.values(s) if s else () for s in samples]
    judging = time.time() - t0
    again = judge_model(args.judge).predict([a for s in samples for a in s])  # uncached second reading
    flat = [v for vs in values for v in vs]
    second = [1.0 if o.value == "yes" else 0.0 if o.value == "no" else None for o in again]
    answers = sum(len(s) for s in samples)
    a = judge_agreement(zip(values, samples))
    print(f"writer {args.model}, judge {args.judge}; {len(records)} bios x {task.samples} samples "
          f"(temperature {task.temperature}, max_tokens {task.max_tokens}): {answers} answers")
    print(f"writing {writing / max(1, answers):.1f} s an answer; judging {judging / max(1, answers):.2f} s an answer")
    print(f"judged favourable: {sum(flat):.0f} of {len(flat)}")
    print(f"agreement on pairs of a bio's samples: {a['agreement']} ({a['pairs_differing']} of {a['pairs']} pairs "
          f"scored differently; {a['pairs_identical']} pairs of identical answers)")
    changed = sum(x != y for x, y in zip(flat, second))
    print(f"baseline, the same answers judged again without the cache: {changed} of {len(flat)} scored differently")


if __name__ == "__main__":
    main()
