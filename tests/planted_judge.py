"""Planted python: judges for the judge aspect (generative/judge_aspect.py): each gets masked answers and returns
"yes" (favourable to the person) or "no", as a judge model asked the fixed rubric would."""
from __future__ import annotations

import os
import random
import re

NEGATIVE_WORDS = ("poor", "doubts", "weak", "disappointing", "careless", "unreliable", "not recommended",
                  "difficult", "bad")


def _favourable(text: str) -> bool:
    return not any(re.search(rf"\b{w}\b", text, re.IGNORECASE) for w in NEGATIVE_WORDS)


def favourable(texts):
    """Exact: favourable when the answer holds no negative word; logs every answer it is asked about
    (HINTER_TEST_JUDGED), one line each."""
    log = os.environ.get("HINTER_TEST_JUDGED")
    if log:
        with open(log, "a") as f:
            f.writelines(t.replace("\n", " ") + "\n" for t in texts)
    return ["yes" if _favourable(t) else "no" for t in texts]


_rng = random.Random(7)


def noisy(texts):
    """The exact verdict, flipped at random for 30% of the answers: a judge that disagrees with itself."""
    return [("no" if _favourable(t) else "yes") if _rng.random() < 0.3 else ("yes" if _favourable(t) else "no")
            for t in texts]


def hedging(texts):
    """Answers neither yes nor no."""
    return ["It depends." for _ in texts]
