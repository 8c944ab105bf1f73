"""The free-text oracle, calibrated on the model's own variation, and its findings over many texts.

Per mutant (`FreeTextJudge.judge`): both sides' answers are masked (masking.py), each aspect gives one number per
answer (aspects.py), and the mutant differs on an aspect when its answers differ from the original's more than the
original's answers differ among themselves: an exact two-sample permutation test of the difference of means (the
null: the n + m answers are exchangeable, as they are when the model's answer does not depend on who the text is
about). One sample each (deterministic decoding) leaves no spread to compare with: the verdict is the plain
difference.

A relational aspect (distance) is measured against a reference: the original's first answer. It is held out, so
that the original's other answers and the mutant's answers are measured against the same independent reference
(under the null they are exchangeable); the mutant's first answer is left out too when both sides have as many
answers, so that both means rest on as many answers. With one sample the original's value is 0 by construction
and the mutant's is never below: a per-text plain difference, but no population test (see `aspect_findings`).

Over many texts (`aspect_findings`): per aspect and cell (an attribute's source -> target group, or a tuple of
them), the project's paired exchangeability test (findings.exchange_p) on the per-text means of the aspect, its
95% interval from the same test inverted (stats.exchange_interval), Benjamini-Hochberg q-values over every cell of every aspect, and, for an
intersectional cell, the interaction contrast with its sign-flip test (findings.sign_flip_p) and the
population-hidden mark, as findings.analyse does for labels. With as many answers per version, the per-version
means are exchangeable under the null, so the test is exact whatever the model's own spread: a model that varies
its wording at random is found significant at no more than the nominal rate.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Collection, Hashable, Iterable, Mapping, Sequence

import numpy as np

from hinter.analysis.findings import (MIN_TEXTS, Component, Finding, Measure, component_of, distinct_mutants, measured_findings,
                        test_cells)
from hinter.analysis.oracle import is_hidden
from hinter.analysis.stats import ALPHA, PERMUTATIONS
from hinter.generative.aspects import DEFAULT_ASPECTS, Aspect, get_aspect
from hinter.generative.masking import IdentityTerms

TOLERANCE = 1e-9          # a plain difference smaller than this is float noise
EXACT_SPLITS_MAX = 20_000  # two-sample test: every split of the pooled answers up to this many, else Monte Carlo


@dataclass(frozen=True)
class AspectVerdict:
    """One aspect of one mutant against its original.

    `original` / `mutant`: the aspect's values of the (masked) answers that enter the test; `difference`: mean of
    the mutant's minus mean of the original's; `p_value`: the two-sample permutation test (None with one answer
    each: deterministic decoding); `differs`: p <= level, or with one answer each a difference beyond TOLERANCE.
    """

    aspect: str
    original: tuple[float, ...]
    mutant: tuple[float, ...]
    difference: float
    p_value: float | None
    differs: bool

    @property
    def deterministic(self) -> bool:
        return self.p_value is None

    def to_dict(self) -> dict:
        return {"aspect": self.aspect, "original": list(self.original), "mutant": list(self.mutant),
                "difference": self.difference, "p_value": self.p_value, "differs": self.differs}


def two_sample_p(x: Sequence[float], y: Sequence[float], *, permutations: int = PERMUTATIONS, seed: int = 0) -> float:
    """Two-sided permutation p-value of |mean(y) - mean(x)| over the splits of the pooled values into groups of
    the same sizes: exact up to EXACT_SPLITS_MAX splits, else Monte Carlo with a fixed seed ((hits + 1) / (draws
    + 1)). P(p <= a) <= a when the pooled values are exchangeable."""
    pooled = np.asarray([*x, *y], dtype=float)
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        raise ValueError("two_sample_p needs values on both sides")
    total = pooled.sum()
    scale = 1.0 + float(np.abs(pooled).max())
    observed = abs(float(np.mean(y)) - float(np.mean(x)))
    if observed <= TOLERANCE * scale:
        return 1.0

    def gap(y_sum):
        return np.abs(y_sum / m - (total - y_sum) / n)

    if math.comb(n + m, m) <= EXACT_SPLITS_MAX:
        sums = np.array([pooled[list(c)].sum() for c in itertools.combinations(range(n + m), m)])
        return float(np.mean(gap(sums) >= observed - 1e-12 * scale))
    rng = np.random.default_rng(seed)
    draws = np.array([pooled[rng.permutation(n + m)[:m]].sum() for _ in range(permutations)])
    hits = int(np.sum(gap(draws) >= observed - 1e-12 * scale))
    return (hits + 1) / (permutations + 1)


class FreeTextJudge:
    """Judges a mutant's free-text answers against its original's on each aspect.

    `aspects`: names (registered in aspects.ASPECTS) or Aspect records; default sentiment, refusal, length,
    distance. `level`: the per-text test's level for `differs`.
    """

    def __init__(self, aspects: Sequence[str | Aspect] | None = None, level: float = ALPHA, mask: bool = True,
                 language: str = "en"):
        self.aspects: tuple[Aspect, ...] = tuple(get_aspect(a) for a in (aspects or DEFAULT_ASPECTS))
        self.level, self.mask = level, mask
        self.language = language  # the run's: its masking words (masking.IdentityTerms)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.aspects)

    def values(self, original_answers: Sequence[str], mutant_answers: Sequence[str], edits
               ) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
        """Per aspect, (the original's values, the mutant's values) of the masked answers (see the module doc for
        relational aspects)."""
        original, mutant = _answers(original_answers, "original"), _answers(mutant_answers, "mutant")
        if self.mask:
            terms = IdentityTerms.of(edits, self.language)
            original, mutant = terms.mask_all(original), terms.mask_all(mutant)
        out = {}
        for aspect in self.aspects:
            if not aspect.relational:  # one call for both sides: a judge model is asked about them in one batch
                values = aspect.values([*original, *mutant])
                out[aspect.name] = (values[:len(original)], values[len(original):])
                continue
            reference = original[0]
            if len(original) == 1:
                out[aspect.name] = ((0.0,), aspect.values(mutant, reference))
            else:
                rest = mutant[1:] if len(mutant) == len(original) else mutant
                out[aspect.name] = (aspect.values(original[1:], reference), aspect.values(rest, reference))
        return out

    def judge(self, original_answers: Sequence[str], mutant_answers: Sequence[str], edits) -> dict[str, AspectVerdict]:
        """Each aspect's verdict on one mutant. `edits`: the mutant's replacements (records.Replacement, repairs
        included), its pair ids, (word, replacement) pairs, or masking.IdentityTerms: what is masked."""
        verdicts = {}
        for name, (x, y) in self.values(original_answers, mutant_answers, edits).items():
            difference = float(np.mean(y) - np.mean(x))
            if len(x) == 1 and len(y) == 1:
                p, differs = None, abs(difference) > TOLERANCE * (1.0 + abs(x[0]))
            else:
                p = two_sample_p(x, y)
                differs = p <= self.level
            verdicts[name] = AspectVerdict(name, x, y, difference, p, differs)
        return verdicts


def judge_of(task, level: float = ALPHA, judge_cache=None, language: str = "en") -> FreeTextJudge:
    """The free-text judge a generative task chooses: FreeTextJudge over the task's aspects (the judge aspect bound
    to the task's judge model; `judge_cache(model)`: the run's cache for it, metered)."""
    aspects = list(task.aspects)
    if "judge" in aspects:
        from hinter.generative.judge_aspect import judge_aspect
        aspects[aspects.index("judge")] = judge_aspect(task.judge, judge_cache)
    return FreeTextJudge(aspects, level=level, language=language)


def _answers(answers, what: str) -> list[str]:
    if isinstance(answers, str):
        answers = [answers]
    out = [a for a in answers if a is not None]
    if not out:
        raise ValueError(f"{what}: no answer (a failed or empty generation is a model error, not an answer)")
    return out


def instance_hidden(intersectional: AspectVerdict, components: Iterable[AspectVerdict | None]) -> bool:
    """The per-instance hidden mark on one aspect: the intersectional mutant differs, its atomic components (all
    judged) do not (oracle.is_hidden, with `differs` as the bias)."""
    return is_hidden(intersectional.differs, [None if c is None else (True, c.differs) for c in components])


# ---------------------------------------------------------------------------------------------- over many texts

@dataclass(frozen=True)
class AspectObservation:
    """One judged mutant: its text, its pair ids (one: atomic; k >= 2: intersectional) and components (both in
    attribute order), and the judge's verdicts."""

    text_id: Hashable
    pair_ids: tuple[str, ...]
    components: tuple[Component, ...]
    verdicts: Mapping[str, AspectVerdict]

    @classmethod
    def from_pair_ids(cls, text_id: Hashable, pair_ids: Sequence[str] | str,
                      verdicts: Mapping[str, AspectVerdict], occupational: Collection[str] = ()) -> AspectObservation:
        """`occupational`: the run's occupational pair ids (findings.Component.occupational)."""
        pair_ids = (pair_ids,) if isinstance(pair_ids, str) else tuple(pair_ids)
        order = sorted(range(len(pair_ids)), key=lambda i: pair_ids[i].split(":", 1)[0])
        pair_ids = tuple(pair_ids[i] for i in order)
        if len({p.split(":", 1)[0] for p in pair_ids}) != len(pair_ids):
            raise ValueError(f"text {text_id}: an intersectional mutant changes distinct attributes, got {pair_ids}")
        return cls(text_id, pair_ids, tuple(component_of(p, p in occupational) for p in pair_ids),
                   dict(verdicts))

    @property
    def kind(self) -> str:
        return "atomic" if len(self.pair_ids) == 1 else "intersectional"


@dataclass(frozen=True)
class AspectAnalysis:
    findings: tuple[Finding, ...]
    alpha: float
    tested: int

    def significant(self) -> list[Finding]:
        return [f for f in self.findings if f.significant]

    def population_hidden(self) -> list[Finding]:
        return [f for f in self.findings if f.population_hidden]

    def get(self, aspect: str, kind: str, components: Sequence[Component]) -> Finding | None:
        key = (aspect, kind, tuple(sorted(components)))
        return next((f for f in self.findings if (f.aspect, f.kind, f.components) == key), None)

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "tested": self.tested, "significant_findings": len(self.significant()),
                "population_hidden": len(self.population_hidden()), "findings": [f.to_dict() for f in self.findings]}


def aspect_findings(observations: Iterable[AspectObservation], *, alpha: float = ALPHA, min_texts: int = MIN_TEXTS,
                    permutations: int = PERMUTATIONS, seed: int = 0) -> AspectAnalysis:
    """Per aspect and cell: effect, interval, p- and q-values (Benjamini-Hochberg over every cell of every aspect),
    and for intersectional cells the interaction and the population-hidden mark. A cell is tested only when its
    aspect changed on at least `min_texts` texts; a relational aspect with one answer per version is not tested
    (no null to compare with)."""
    observations = distinct_mutants(observations)
    names = list(dict.fromkeys(name for o in observations for name in o.verdicts))
    tests = []
    for name in names:
        aspect = get_aspect(name)
        items = [(o, o.verdicts[name]) for o in observations if o.verdicts.get(name) is not None]

        def one_sample(cell_items, aspect=aspect):
            if aspect.relational and all(len(v.original) == 1 and len(v.mutant) == 1 for _, v in cell_items):
                return "one answer per version: no spread of the model's own to test against (ask for samples >= 2)"
            return None

        tests += test_cells(name, items, lambda i: (i[0].kind, i[0].components, i[0].text_id, i[0].pair_ids,
                                                    float(np.mean(i[1].original)), float(np.mean(i[1].mutant))),
                            bound=1.0 if aspect.binary else None, alpha=alpha, min_texts=min_texts,
                            permutations=permutations, seed=seed, tolerance=TOLERANCE, note_of=one_sample,
                            nonzero_count=lambda c: sum(abs(x) > TOLERANCE for x in c))
    findings = measured_findings(tests, alpha, Measure.aspect, flipped=lambda item: item[1].differs)
    return AspectAnalysis(tuple(findings), alpha, len(observations))
