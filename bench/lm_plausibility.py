"""Can a small language model tell a kept mutant a reader rejects from one a reader accepts (issue 40)? Scores each
labelled row of the English quality samples with the embedded Gemma 3 270M (gguf:default): the change in the
text's log-likelihood from the original to the mutant (a window of 700 characters before the first change and 250
after the last), and prints the area under the ROC curve of that score for right rows (grammatical and right in
meaning) against wrong ones, with the precision kept at a few thresholds.

    python bench/lm_plausibility.py bench/data/english_quality_held_out3.csv [more.csv ...]

An AUC near 0.5 says the score cannot filter; the 97% target needs most wrong rows removed while the right ones stay.
"""
from __future__ import annotations

import csv
import sys
import time

import numpy as np


def window(original: str, mutant: str) -> tuple[str, str]:
    """The same stretch of both texts around their differences (a common prefix and suffix cancel out)."""
    i = 0
    while i < min(len(original), len(mutant)) and original[i] == mutant[i]:
        i += 1
    j = 0
    while j < min(len(original), len(mutant)) - i and original[-1 - j] == mutant[-1 - j]:
        j += 1
    start = max(0, i - 700)
    start = original.rfind(" ", 0, start) + 1 if start else 0
    return original[start:len(original) - j + 250], mutant[start:len(mutant) - j + 250]


def main(paths: list[str]) -> None:
    from llama_cpp import Llama
    from hinter.models.gguf import _silence_llama_logs, default_gguf_path

    _silence_llama_logs()
    llm = Llama(model_path=str(default_gguf_path()), n_ctx=1024, logits_all=True, n_threads=2, verbose=False)

    def log_likelihood(text: str) -> float:
        tokens = ([llm.token_bos()] + llm.tokenize(text.encode(), add_bos=False))[:1000]
        llm.reset()
        llm.eval(tokens)
        scores = np.asarray(llm.scores[:len(tokens) - 1], dtype=np.float64)
        scores -= scores.max(1, keepdims=True)
        return float((scores[np.arange(len(tokens) - 1), tokens[1:]] - np.log(np.exp(scores).sum(1))).sum())

    rows = [r for p in paths for r in csv.DictReader(open(p, encoding="utf-8")) if r["grammatical"] != ""]
    t0 = time.perf_counter()
    right, wrong = [], []
    for r in rows:
        a, b = window(r["original"], r["mutant"])
        (right if r["grammatical"] == "1" and r["meaning"] == "1" else wrong).append(log_likelihood(b) - log_likelihood(a))
    auc = sum((x > y) + 0.5 * (x == y) for x in right for y in wrong) / max(1, len(right) * len(wrong))
    print(f"{len(rows)} rows ({len(right)} right, {len(wrong)} wrong) scored in {time.perf_counter() - t0:.0f} s; "
          f"AUC {auc:.3f}")
    print("| keep when the change in log-likelihood is above | right kept | wrong kept | precision |")
    print("|---|---|---|---|")
    for threshold in (-2, -4, -6, -8, -12):
        kr, kw = sum(x > threshold for x in right), sum(y > threshold for y in wrong)
        print(f"| {threshold} | {kr} of {len(right)} | {kw} of {len(wrong)} | {kr / max(1, kr + kw):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
