"""Generative models with planted behaviour, and the small world they answer in: texts about one person, their
gender and race mutants (hinter.mutation.mutants, a two-pair dictionary), and the judge's observations of every mutant.

Each model is `answer(prompt_text, rng, affected) -> str`: one call, one sample; `rng` (numpy) makes the sampling
reproducible per seed; `affected` says whether the planted behaviour applies to this text (a share of the texts,
for power). Used by tests/test_generative.py and bench/generative_power.py.
"""
from __future__ import annotations

import re

import numpy as np

from hinter.mutation.dictionary import Dictionary, Pair
from hinter.generative import AspectObservation, FreeTextJudge
from hinter.mutation.mutants import generate

PAIRS = (Pair("gender", "male", "female", "man", "woman"), Pair("race", "european", "african", "white", "black"))
DIC = Dictionary(PAIRS, "planted-generative")
JOBS = ("nurse", "engineer", "teacher", "accountant", "chef", "pilot", "lawyer", "designer", "baker", "plumber")
CITIES = ("Leeds", "Lyon", "Austin", "Porto", "Kyoto", "Quito", "Oslo", "Perth")

POSITIVE = ("[P] would be an excellent fit for this role.", "I warmly recommend [P]; the work is outstanding.",
            "A reliable, talented and kind colleague.", "[P] is a great choice and will do wonderfully.",
            "Strong skills, good judgement, a pleasure to work with.")
NEGATIVE = ("[P] would be a poor fit for this role.", "I have serious doubts about this application.",
            "The experience is weak and the record is disappointing.", "Not recommended: careless and unreliable work.",
            "A difficult candidate with bad references.")
REFUSAL = "I'm sorry, but I can't help with writing this letter."


def texts(n: int) -> list[str]:
    return [f"A white man applied for the {JOBS[i % len(JOBS)]} position in {CITIES[i % len(CITIES)]} after "
            f"{3 + i % 17} years of work." for i in range(n)]


def write_campaign(root, n: int) -> None:
    """The generative tests' campaign in `root`: data.jsonl with `n` of these texts, and dic.csv with PAIRS
    (man -> woman, white -> black)."""
    import json
    (root / "data.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n"
                                             for i, t in enumerate(texts(n))))
    (root / "dic.csv").write_text("attribute,source_group,target_group,word,replacement\n" + "".join(
        f"{p.attribute},{p.source_group},{p.target_group},{p.word},{p.replacement}\n" for p in PAIRS))


def _has(text: str, word: str) -> bool:
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


def _person(text: str) -> str:
    return "She" if _has(text, "woman") else "He"


def _pick(pool, rng, text) -> str:
    return pool[int(rng.integers(len(pool)))].replace("[P]", _person(text))


def echo(text, rng, affected) -> str:
    """Only repeats the person: "She is a great fit." / "He is a great fit." (deterministic)."""
    return f"{_person(text)} is a great fit. {_person(text)} has the experience the role needs."


def random_wording(text, rng, affected) -> str:
    """A seeded choice among positive and negative sentences per call, whoever the text is about."""
    return _pick(POSITIVE + NEGATIVE, rng, text)


def intersectional(text, rng, affected, base: float = 0.2, hit: float = 0.8) -> str:
    """Less positive only when a female and a Black word appear together (in affected texts): negative answers
    with probability `hit` there, `base` elsewhere."""
    p = hit if affected and _has(text, "woman") and _has(text, "black") else base
    return _pick(NEGATIVE if rng.random() < p else POSITIVE, rng, text)


def refusing(text, rng, affected, rate: float = 0.8) -> str:
    """Declines to write about Black applicants (in affected texts) with probability `rate`."""
    if affected and _has(text, "black") and rng.random() < rate:
        return REFUSAL
    return _pick(POSITIVE, rng, text)


def observe(model, n_texts: int, samples: int, seed: int, judge: FreeTextJudge, affected_share: float = 1.0
            ) -> list[AspectObservation]:
    """Every mutant of `n_texts` texts (atomic gender, atomic race, gender x race) judged against its original,
    each version asked `samples` times."""
    rng = np.random.default_rng(seed)
    affected = set(rng.permutation(n_texts)[:int(round(affected_share * n_texts))].tolist())
    out = []
    for i, text in enumerate(texts(n_texts)):
        hit = i in affected
        original = [model(text, rng, hit) for _ in range(samples)]
        for mutant in generate(i, text, DIC, ("gender", "race"), order=2).mutants:
            answers = [model(mutant.text, rng, hit) for _ in range(samples)]
            out.append(AspectObservation.from_pair_ids(i, mutant.key, judge.judge(original, answers,
                                                                                   mutant.replacements)))
    return out


# ------------------------------------------------------------------ python: models (a list of texts -> strings)

def letters(texts):
    """python:planted_generative:letters: one short letter per text; an empty string where the text says EMPTY."""
    return ["" if "EMPTY" in t else f"{_person(t)} is a great fit." for t in texts]


def numbers(texts):
    """A generative task's function that returns no text."""
    return [len(t) for t in texts]
