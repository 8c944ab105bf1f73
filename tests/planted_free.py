"""Generative python: models for whole runs (one string per text): the free-text counterparts of planted.py.

Each writes a short reference letter about the person its text describes. `letters` is deterministic (the same
text, the same letter), so killed and resumed runs can be compared with an uninterrupted one; `sampled` draws each
answer afresh, as a model sampling at temperature > 0 does.
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import time

POSITIVE = ("[P] would be an excellent fit for this role.", "I warmly recommend [P]; the work is outstanding.",
            "A reliable, talented and kind colleague.", "[P] is a great choice and will do wonderfully.")
NEGATIVE = ("[P] would be a poor fit for this role.", "I have serious doubts about this application.",
            "The experience is weak and the record is disappointing.", "Not recommended: careless and unreliable work.")


def _has(text: str, *words: str) -> bool:
    return any(re.search(rf"\b{w}\b", text, re.IGNORECASE) for w in words)


def _person(text: str) -> str:
    return "She" if _has(text, "woman", "women", "girl", "she") else "He"


def _targeted(text: str) -> bool:
    """The planted combination: a female and a Black word together."""
    return _has(text, "woman", "girl") and _has(text, "black")


def echo(texts):
    """Only repeats the person: no difference once the person is masked."""
    return [f"{_person(t)} is a great fit. {_person(t)} has the experience the role needs." for t in texts]


def letters(texts):
    """Deterministic: a positive letter, a negative one for the planted combination; logs every text it is asked
    about (HINTER_TEST_CALLS, as planted.counting) and is slow enough for kills to land inside batches (but with
    HINTER_TEST_FAST, for a run nobody kills)."""
    log = os.environ.get("HINTER_TEST_CALLS")
    if log:
        with open(log, "a") as f:
            for t in texts:
                f.write(f"{os.environ.get('HINTER_TEST_SESSION', '0')}\t{hashlib.sha256(t.encode()).hexdigest()}\n")
        if not os.environ.get("HINTER_TEST_FAST"):
            time.sleep(0.02 * len(texts))
    out = []
    for t in texts:
        pool = NEGATIVE if _targeted(t) else POSITIVE
        out.append(pool[int(hashlib.sha256(t.encode()).hexdigest(), 16) % len(pool)].replace("[P]", _person(t)))
    return out


# Seeded per process (HINTER_TEST_SEED, as planted.py): each answer is still drawn afresh, but a test run draws the
# same answers on every machine, so a statistical assertion cannot fail by the luck of one CI run.
_rng = random.Random(f"free:{os.environ.get('HINTER_TEST_SEED', '0')}")


def sampled(texts):
    """Each answer drawn afresh: negative with probability 0.8 for the planted combination, 0.2 otherwise."""
    return [(_rng.choice(NEGATIVE) if _rng.random() < (0.8 if _targeted(t) else 0.2) else _rng.choice(POSITIVE))
            .replace("[P]", _person(t)) for t in texts]


def refusing(texts):
    """Declines to write about Black applicants, writes a positive letter otherwise."""
    return ["I'm sorry, but I can't help with writing this letter." if _has(t, "black")
            else f"{_person(t)} would be an excellent fit for this role." for t in texts]


def paraphrased(texts):
    """Equivalent samples: each answer's wording drawn afresh, its verdict fixed by the text (negative for the
    planted combination, positive otherwise)."""
    return [_rng.choice(NEGATIVE if _targeted(t) else POSITIVE).replace("[P]", _person(t)) for t in texts]


AGENTIC_LETTERS = ("[P] is an ambitious, confident leader who excels at every task.",
                   "An outstanding, driven analyst: [P] achieves what others only plan.")
COMMUNAL_LETTERS = ("[P] is a kind, warm and helpful colleague whom everyone likes.",  # as many words
                    "Everyone finds [P] pleasant, caring and supportive in every team.")


def communal_for_women(texts):
    """Deterministic: the same praise in agentic words for a man, in communal words for a woman (the pattern
    studies of letters of recommendation report); equally positive letters either way."""
    out = []
    for t in texts:
        pool = COMMUNAL_LETTERS if _person(t) == "She" else AGENTIC_LETTERS
        out.append(pool[int(hashlib.sha256(t.encode()).hexdigest(), 16) % len(pool)].replace("[P]", _person(t)))
    return out


UNRESERVED_LETTERS = ("[P] is an excellent analyst and will be a great asset to the team.",
                      "I recommend [P] with enthusiasm: strong work, delivered on time, every time.")
DOUBTFUL_LETTERS = ("[P] is an adequate analyst and might perhaps be an asset to the team.",  # as many words
                    "I recommend [P], although the work, while satisfactory, seemed slow at times.")


def doubtful_for_women(texts):
    """Deterministic: an unreserved letter for a man, one with hedges and faint praise (doubt raisers) for a
    woman, as many words either way."""
    out = []
    for t in texts:
        pool = DOUBTFUL_LETTERS if _person(t) == "She" else UNRESERVED_LETTERS
        out.append(pool[int(hashlib.sha256(t.encode()).hexdigest(), 16) % len(pool)].replace("[P]", _person(t)))
    return out
