"""Findings that hold up (issue 13): which cells of a run change the model's outcome beyond chance, toward
what, by how much, and which intersectional cells are hidden at population level.

The cell analysis over typed records: no I/O, no store, no model. The caller turns every tested mutant into an
`Observation` and calls `analyse`; the statistics themselves are in `stats`, their definitions and why the test is
calibrated in docs/findings.md, and the words for people in report/html/prose.py.

    obs = [Observation.from_pair_ids(text_id, pair_ids, original_answers, mutant_answers), ...]
    result = analyse(obs, label=task.labels[0])          # Analysis
    [f.to_dict() for f in result.findings]               # the JSON records of summary.json
    analyse(obs, labels=("Article 6", "Article 14"))     # multi-label: every label's cells in one BH family
"""
from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Collection, Hashable, Iterable, NamedTuple, Sequence

import numpy as np

from hinter.analysis import oracle
from hinter.analysis.oracle import answers_of
from hinter.analysis.aspect_registry import get_aspect
from hinter.analysis.stats import (ALPHA, PERMUTATIONS, Interval, benjamini_hochberg, cohens_h, exchange_interval,
                    exchange_p, minimal_p, nonzero, sign_flip_interval, sign_flip_p, wilson)

SET_SEPARATOR = " | "     # multi-label outcomes are encoded "a | b" (models.base.Outcome.encode)
EMPTY_SET = "(none)"      # ... and the empty label set as "(none)"
MIN_TEXTS = 3             # a cell is tested only when the outcome changed on at least this many texts
# How the cells of a multi-label analysis are corrected, as summary.json and the report state it.
MULTI_LABEL_FAMILY = "every label's cells in one Benjamini-Hochberg family"


# ---------------------------------------------------------------------------------------------- records

@dataclass(frozen=True, order=True)
class Component:
    """One changed attribute of a cell: its source group -> target group (e.g. gender, male, female)."""

    attribute: str
    source_group: str
    target_group: str
    # an occupational pair (the dictionary's *_job.csv: manager -> cashier): what changed is a stereotyped
    # occupation, not the person's gender, so its mutants form cells of their own, never read as plain gender
    occupational: bool = False

    @classmethod
    def from_pair_id(cls, pair_id: str, occupational: bool = False) -> Component:
        """The component of a pair id "attribute:source>target:word>replacement" (mutation.Replacement.pair_id)."""
        try:
            attribute, groups, _ = pair_id.split(":", 2)
            source, target = groups.split(">", 1)
        except ValueError:
            raise ValueError(f"not a pair id (attribute:source>target:word>replacement): {pair_id!r}") from None
        return cls(attribute, source, target, occupational)

    @property
    def name(self) -> str:
        """The attribute as findings name it: "gender", or "gender (occupation)" for an occupational pair."""
        return f"{self.attribute} (occupation)" if self.occupational else self.attribute

    def to_dict(self) -> dict:
        d = {"attribute": self.attribute, "source_group": self.source_group, "target_group": self.target_group}
        if self.occupational:
            d["occupational"] = True
        return d


@functools.lru_cache(maxsize=65536)
def component_of(pair_id: str, occupational: bool = False) -> Component:
    """`Component.from_pair_id`, once per pair id: a run has a few thousand pairs and can have millions of
    observations (a Component is immutable, so one is shared by every observation of its pair, and by every pair
    of the same groups: cells, keyed by their components once per mutant, then compare by identity)."""
    c = Component.from_pair_id(pair_id, occupational)
    return _COMPONENTS.setdefault(c, c)


_COMPONENTS: dict[Component, Component] = {}  # each distinct component once (a run has a few hundred)


def _scores(value, what: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    if type(value) is tuple and len(value) == 1 and type(value[0]) is float and value[0] - value[0] == 0.0:
        return value  # one finite float score (the common case, twice per tested mutant): already as returned
    if isinstance(value, (int, float)):
        return (float(value),)
    out = tuple(map(float, value))  # map, not a generator: two per tested mutant
    if not out or not all(map(math.isfinite, out)):
        raise ValueError(f"{what}: scores must be finite numbers, at least one")
    return out


@dataclass(frozen=True)
class Observation:
    """One tested mutant with its original: the input of `analyse`.

    `pair_ids`: the mutant's word pairs (one: atomic; k >= 2: intersectional, of distinct attributes), aligned
    with `components` (both are put in attribute order). `original` / `mutant`: the encoded outcome of each
    call (one per repeat; a single string is one call; None is an unparseable answer). `original_scores` /
    `mutant_scores`: the score of the label of interest per call (a logit or log-prob), or None. The original's
    answers and scores repeat on every mutant of its text: they must be the same each time.
    """

    text_id: Hashable
    pair_ids: tuple[str, ...]
    components: tuple[Component, ...]
    original: tuple[str | None, ...]
    mutant: tuple[str | None, ...]
    original_scores: tuple[float, ...] | None = None
    mutant_scores: tuple[float, ...] | None = None

    def __post_init__(self):
        pair_ids, components = self.pair_ids, self.components
        if type(pair_ids) is not tuple:
            pair_ids = (pair_ids,) if isinstance(pair_ids, str) else tuple(pair_ids)
        if type(components) is not tuple:
            components = tuple(components)
        k = len(pair_ids)
        if not k or k != len(components):
            raise ValueError(f"text {self.text_id}: {k} pair ids for {len(components)} components")
        if k > 1 and not all(components[i].attribute < components[i + 1].attribute for i in range(k - 1)):
            if len({c.attribute for c in components}) != k:
                raise ValueError(f"text {self.text_id}: an intersectional mutant changes distinct attributes, got "
                                 f"{[c.attribute for c in components]}")
            order = sorted(range(k), key=lambda i: components[i].attribute)
            pair_ids, components = tuple(pair_ids[i] for i in order), tuple(components[i] for i in order)
        if pair_ids is not self.pair_ids:  # set only when changed: one observation is built per tested mutant
            object.__setattr__(self, "pair_ids", pair_ids)
        if components is not self.components:
            object.__setattr__(self, "components", components)
        if type(self.original) is not tuple:
            object.__setattr__(self, "original", answers_of(self.original, "original"))
        if type(self.mutant) is not tuple:
            object.__setattr__(self, "mutant", answers_of(self.mutant, "mutant"))
        if not self.original or not self.mutant:
            raise ValueError(f"text {self.text_id}: no answer")
        if self.original_scores is not None:
            object.__setattr__(self, "original_scores", _scores(self.original_scores, "original_scores"))
        if self.mutant_scores is not None:
            object.__setattr__(self, "mutant_scores", _scores(self.mutant_scores, "mutant_scores"))

    @classmethod
    def from_pair_ids(cls, text_id: Hashable, pair_ids: Sequence[str], original, mutant,
                      original_scores=None, mutant_scores=None, occupational: Collection[str] = ()) -> Observation:
        """An observation whose components are read from its pair ids (`occupational`: the run's occupational
        pair ids, dictionary.occupational_ids)."""
        pair_ids = (pair_ids,) if isinstance(pair_ids, str) else tuple(pair_ids)
        return cls(text_id, pair_ids, tuple([component_of(p, p in occupational) for p in pair_ids]), original, mutant,
                   original_scores, mutant_scores)

    @property
    def kind(self) -> str:
        return "atomic" if len(self.pair_ids) == 1 else "intersectional"

    @property
    def has_scores(self) -> bool:
        return self.original_scores is not None and self.mutant_scores is not None



# How every measure is judged over texts (findings.md): the same test for a label's share or score and an aspect.
MEASURE_TEST = ("paired exchangeability test over texts (a text's mutants averaged first; stats.exchange_p), its "
                "interval the same test inverted, Benjamini-Hochberg q-values over every cell of every measure; "
                "intersectional cells: the interaction's sign-flip test (stats.sign_flip_p)")
DIRECTION_TOLERANCE = 1e-9  # an effect smaller than this has no direction (float noise)


@dataclass(frozen=True)
class Measure:
    """What a finding measures: one record for a label task's share or score of a label and a free-text task's
    aspect of the answers (aspect_registry), so that everything after the judge reads a measure, never the task's
    kind. `name`: the label of interest (None: none answered) or the aspect; `of`: "label share", "score" or
    "aspect"; `more` / `less`: a positive / negative effect in words; `bound`: the values' range (1 for shares
    and binary aspects; None: unbounded); `unit`: an aspect's unit; `test`: how a cell is judged on it."""

    name: str | None
    of: str
    more: str
    less: str
    bound: float | None
    unit: str = ""
    test: str = MEASURE_TEST

    @classmethod
    def label_share(cls, label: str | None) -> Measure:
        return cls(label, "label share", f"more often {label}", f"less often {label}", 1.0)

    @classmethod
    def score(cls, label: str | None) -> Measure:
        return cls(label, "score", f"higher score of {label}", f"lower score of {label}", None)

    @classmethod
    def aspect(cls, name: str) -> Measure:
        a = get_aspect(name)
        return cls(name, "aspect", a.more, a.less, 1.0 if a.binary else None, a.unit)

    @property
    def of_answers(self) -> bool:
        """An aspect of free-text answers (a mutant "differs"), not a label (a mutant "flips")."""
        return self.of == "aspect"

    def direction(self, effect: float) -> str | None:
        """A shift in words ("less positive", "more often Negative"); None when there is none."""
        return None if abs(effect) <= DIRECTION_TOLERANCE else self.more if effect > 0 else self.less

    def to_dict(self) -> dict:
        return {"name": self.name, "of": self.of, "more": self.more, "less": self.less, "bound": self.bound,
                "unit": self.unit, "test": self.test}


@dataclass(frozen=True)
class Finding:
    """The verdict on one cell: a kind and its components (atomic: one; intersectional: one per attribute).

    `tested`: tested mutants of the cell; `texts`: their distinct originals (the sample size of the test);
    `texts_changed`: texts where some mutant's measure (score or label share) differs from the original's;
    `flips`: mutants whose outcome differs from the original's (with repeats: `oracle.flip_with_repeats`);
    `transitions`: "original->mutant" counts of those flips; `toward`: the outcome whose share of answers the
    mutation raises most (None when no share changes: with one answer per call, when nothing flips). `effect`:
    the mean over texts of the per-text mean shift (score, or share of the label of interest), with its 95%
    interval `effect_ci`; `cohens_h`: the effect's size on the arcsine scale of shares (`stats.cohens_h` from the
    originals' mean share to the mutants'; None for an unbounded measure: a score, a numeric aspect); `p_value`
    (`stats.exchange_p`), `q_value` (Benjamini-Hochberg over all cells of the run), `significant` (q <= alpha).
    `label`: in a multi-label analysis, the label whose share this finding measures (None: the analysis's one
    label of interest).
    Intersectional only: `interaction` (mean over texts of the interaction contrast), `interaction_ci`,
    `interaction_p` (`stats.sign_flip_p`), `interaction_q` (BH over intersectional cells), `interaction_texts`
    (texts with a mutant whose atomic components are all tested), `population_hidden`: the interaction is
    significant, the cell is significant in the same direction, and none of its atomic cells is significant.
    A free-text finding measures an `aspect` of the answers (aspect_registry) instead of a label: `flips` are
    then the mutants whose answers differ beyond the original's own spread (`differ`), `transitions` and `toward`
    are empty, `direction` says the effect in words ("less positive"), and `testable` is False where the cell
    cannot be significant (`note` says why: too few texts changed, one answer per version of a relational aspect).
    """

    kind: str
    components: tuple[Component, ...]
    tested: int
    texts: int
    texts_changed: int
    flips: int
    transitions: dict[str, int]
    toward: str | None
    effect: float
    effect_ci: Interval | None
    p_value: float
    q_value: float
    significant: bool
    interaction: float | None = None
    interaction_ci: Interval | None = None
    interaction_p: float | None = None
    interaction_q: float | None = None
    interaction_texts: int = 0
    population_hidden: bool = False

    label: str | None = None
    aspect: str | None = None        # a free-text finding's measure
    testable: bool = True
    direction: str | None = None
    note: str | None = None
    measured: Measure | None = None  # the measure record (None: a finding built by hand, read as its label)
    cohens_h: float | None = None

    @property
    def cell(self) -> tuple[str, tuple[Component, ...]]:
        return (self.kind, self.components)

    @property
    def measure(self) -> str | None:
        """What the finding measures: its aspect, or its label (the analysis's label of interest when it has one
        label)."""
        if self.measured is not None:
            return self.measured.name
        return self.aspect if self.aspect is not None else self.label

    @property
    def record(self) -> Measure:
        """Its measure record (a finding built by hand: its aspect, else the share of its label)."""
        if self.measured is not None:
            return self.measured
        return Measure.aspect(self.aspect) if self.aspect is not None else Measure.label_share(self.label)

    @property
    def differ(self) -> int:
        """A free-text finding's word for its flips: mutants whose answers differ."""
        return self.flips

    @property
    def occupational(self) -> bool:
        """Some component changes an occupation (an occupational pair), not the person's gender."""
        return any(c.occupational for c in self.components)

    def describe(self) -> str:
        """The finding in words, whatever it measures. A label: "race european -> african: 14 of 300 changed to
        Negative; share of Positive -0.04 [-0.07, -0.01], q = 0.003"; an aspect: "gender male -> female: 0.21 less
        positive (sentiment) [-0.3, -0.12], 3 of 14 mutants differ, q = 0.003"."""
        m = self.record
        cell = " × ".join(f"{c.name} {c.source_group} -> {c.target_group}" for c in self.components)
        ci = f" [{self.effect_ci[0]:+.3g}, {self.effect_ci[1]:+.3g}]" if self.effect_ci else ""
        if m.of_answers:
            if self.direction is None:
                what = f"no change in {m.name}"
            elif m.bound is not None:
                what = f"{self.direction}: share {self.effect:+.3g}"
            else:
                what = f"{abs(self.effect):.3g} {self.direction} ({m.name}{', ' + m.unit if m.unit else ''})"
            text = f"{cell}: {what}{ci}, {self.differ} of {self.tested} mutants differ, q = {self.q_value:.2g}"
            if self.note:
                text += f" ({self.note})"
            shift = consistent_shift(self.significant, self.differ)
        else:
            into: Counter = Counter()
            for transition, n in self.transitions.items():
                into[transition.split("->", 1)[1]] += n
            moves = ", ".join(f"{n} to {target}" for target, n in into.most_common())
            moves = f"{moves} of {self.tested} mutants" if moves else f"no label flipped among {self.tested} mutants"
            text = f"{cell}: {moves}; {m.of.split()[-1]} of {m.name} {self.effect:+.3g}{ci}, q = {self.q_value:.2g}"
            shift = ""
        if self.population_hidden:
            text += f"; population-hidden (interaction {self.interaction:+.3g}, q = {self.interaction_q:.2g})"
        if not m.of_answers:
            shift = label_shift(self.flips, self.significant, m)
        return text + (f" ({shift})" if shift else "")

    def to_dict(self) -> dict:
        """The JSON record, one shape whatever the measure: `measure` (the label of interest or the aspect), kind,
        components, tested, texts, texts_changed, flips (a label: mutants whose outcome flips; an aspect: whose
        answers differ), transitions and toward (a label's; empty for an aspect), direction, effect, effect_ci,
        cohens_h, p_value, q_value, significant, testable, note, summary (`describe`); intersectional ones add
        interaction, interaction_ci, interaction_q, population_hidden; a cell of occupational pairs
        `occupational: true` (and its component too). Kept for a release (docs/summary-schema.md): a multi-label
        finding's `label`, an aspect finding's `aspect` and `differ`."""
        d = {"measure": self.measure, "kind": self.kind, "components": [c.to_dict() for c in self.components],
             "tested": self.tested, "texts": self.texts, "texts_changed": self.texts_changed, "flips": self.flips,
             "transitions": dict(self.transitions), "toward": self.toward, "direction": self.direction,
             "effect": _round(self.effect), "effect_ci": _round_interval(self.effect_ci),
             "cohens_h": _round(self.cohens_h), "p_value": _round(self.p_value), "q_value": _round(self.q_value),
             "significant": self.significant, "testable": self.testable, "note": self.note, "summary": self.describe()}
        if self.kind == "intersectional":
            d.update({"interaction": _round(self.interaction), "interaction_ci": _round_interval(self.interaction_ci),
                      "interaction_q": _round(self.interaction_q), "population_hidden": self.population_hidden})
        if self.label is not None:
            d["label"] = self.label  # deprecated: `measure`
        if self.aspect is not None:
            d.update(aspect=self.aspect, differ=self.differ)  # deprecated: `measure`, `flips`
        if self.occupational:
            d["occupational"] = True
        return d


def label_shift(flips: int, significant: bool, measure: Measure) -> str:
    """Why a label finding with no flip holds up: its mutants moved the score (or the share of repeated answers)
    of the label without changing an answer. "" when the finding has flips or does not hold up."""
    if flips or not significant:
        return ""
    if measure.of == "score":
        return (f"no answer flipped: the model's score of {measure.name} moved on these mutants (a score shift), "
                "enough to hold up over the texts but not to change an answer")
    return (f"no mutant's answers differ enough to count as a flip, but the share of {measure.name} among the "
            "repeated answers moved (a shift of the answers' distribution)")


def consistent_shift(significant: bool, differ: int) -> str:
    """Why a cell holds up although none of its mutants differs: each mutant's answers stay within the spread of
    the original's own samples, but over the texts they move the same way, more than chance gives. "" otherwise."""
    if not significant or differ:
        return ""
    return ("a consistent shift over the texts: no single mutant differs beyond the model's own spread, but "
            "together they move the same way, more than chance gives")


@dataclass(frozen=True)
class Analysis:
    """Every finding of a run, atomic cells first, then intersectional ones by order and components (in a
    multi-label analysis, each cell once per label, in the order of `labels`).

    `label`: the label of interest (None in a multi-label analysis); `labels`: a multi-label analysis's labels,
    every one of interest, their cells corrected together (`MULTI_LABEL_FAMILY`); `measure`: "score" (effects are
    score shifts) or "label" (effects are shifts of the share of answers with the label); `tested`: observations
    used; `skipped`: observations without a usable answer (or score) on either side.
    """

    findings: tuple[Finding, ...]
    label: str | None
    measure: str
    alpha: float
    tested: int
    skipped: int = 0
    labels: tuple[str, ...] = ()

    def significant(self) -> list[Finding]:
        return [f for f in self.findings if f.significant]

    def population_hidden(self) -> list[Finding]:
        return [f for f in self.findings if f.population_hidden]

    def labels_moved(self) -> list[str]:
        """The labels with a significant finding, in the order of `labels` (multi-label analyses)."""
        moved = {f.label for f in self.findings if f.significant}
        return [label for label in self.labels if label in moved]

    def get(self, kind: str, components: Sequence[Component], label: str | None = None) -> Finding | None:
        key = (kind, tuple(sorted(components)))
        return next((f for f in self.findings if f.cell == key and f.label == label), None)

    def to_dict(self) -> dict:
        d = {"label": self.label, "measure": self.measure, "alpha": self.alpha, "tested": self.tested,
             "findings": [f.to_dict() for f in self.findings]}
        if self.labels:
            d.update({"labels": list(self.labels), "family": MULTI_LABEL_FAMILY, "labels_moved": self.labels_moved()})
        return d


@dataclass(frozen=True)
class SelfFlip:
    """A model's own flip rate: the probability that two calls on the same text answer differently."""

    rate: float | None
    ci: Interval | None
    texts: int  # texts with at least two parseable answers

    def to_dict(self) -> dict:
        return {"rate": _round(self.rate), "ci": _round_interval(self.ci), "texts": self.texts}


def _round(x: float | None) -> float | None:
    return None if x is None else float(f"{x:.6g}")


def _round_interval(ci: Interval | None) -> list[float] | None:
    return None if ci is None else [_round(ci[0]), _round(ci[1])]


# ---------------------------------------------------------------------------------------------- outcomes

def label_set(outcome: str) -> frozenset[str]:
    """The labels of an encoded outcome: "a | b" -> {a, b}; "(none)" -> {}; a single label -> {label}."""
    if outcome == EMPTY_SET:
        return frozenset()
    return frozenset(outcome.split(SET_SEPARATOR))


def label_share(answers: Sequence[str | None], label: str | None) -> float | None:
    """The share of parseable answers whose outcome is (multi-label: contains) `label`; None if none parse."""
    parsed = [a for a in answers if a is not None]
    if not parsed:
        return None
    if label is None:
        return 0.0
    return sum(label in label_set(a) for a in parsed) / len(parsed)



def is_label_set(outcome: str | None) -> bool:
    """Whether an encoded outcome is a multi-label answer: several labels, or the empty set."""
    return outcome is not None and (outcome == EMPTY_SET or SET_SEPARATOR in outcome)


def choose_label(wanted: Sequence[tuple[str | None, str]], answered: Iterable[str | None],
                 fallback: str | None) -> tuple[str | None, str]:
    """The label of interest and where it comes from: the first of `wanted` ((label, source) pairs: --label,
    then the task's first label) that the answers use, spelled as they spell it (a python: model answering
    "positive" for the task's "Positive"); else `fallback` (the most frequent answer), saying why."""
    labels = {x for a in answered if a is not None for x in label_set(a)}
    if not labels:  # nothing answered: nothing to test, and nothing to match the label against
        return next(((label, source) for label, source in wanted if label is not None), (fallback, "no answer"))
    by_case = {x.casefold(): x for x in sorted(labels)}
    for label, source in wanted:
        if label is None:
            continue
        if label in labels:
            return label, source
        if label.casefold() in by_case:
            return by_case[label.casefold()], f"{source}, spelled as the answers spell it"
    given = [label for label, _ in wanted if label is not None]
    if given:
        return fallback, f"the most frequent answer: no answer uses {given[0]!r}"
    return fallback, "the most frequent answer"


def self_flip_rate(originals_answers: Iterable[Sequence[str | None]]) -> SelfFlip:
    """The model's own flip rate from the repeated answers of its originals, with a 95% interval.

    Per text with n >= 2 parseable answers, d_t = the share of ordered pairs of distinct calls whose answers
    differ = 1 - sum_c n_c (n_c - 1) / (n (n - 1)), an unbiased estimate of that text's probability that two
    calls disagree. The rate is the mean of d_t over texts; the interval is Wilson's with the effective sample
    size n_eff = rate (1 - rate) / SE^2, SE^2 = var(d_t) / texts (Korn & Graubard's design-effect correction
    for clustered Bernoulli data); n_eff = texts when every d_t is 0 (or 1).
    """
    d = []
    for answers in originals_answers:
        parsed = [a for a in answers_of(answers, "answers") if a is not None]
        n = len(parsed)
        if n < 2:
            continue
        same = sum(k * (k - 1) for k in Counter(parsed).values())
        d.append(1.0 - same / (n * (n - 1)))
    texts = len(d)
    if not texts:
        return SelfFlip(None, None, 0)
    arr = np.asarray(d)
    rate = float(arr.mean())
    var = float(arr.var(ddof=1)) if texts > 1 else 0.0
    if var <= 0 or rate <= 0 or rate >= 1:
        n_eff = float(texts)
    else:
        n_eff = rate * (1 - rate) / (var / texts)
    return SelfFlip(rate, wilson(rate, n_eff), texts)




# ---------------------------------------------------------------------------------------------- analysis

Cell = tuple[str, tuple[Component, ...]]


class _Prepared(NamedTuple):
    """One usable observation, read for one label of interest (a named tuple: one is built per tested mutant)."""

    obs: Observation
    y_original: float       # score mean, or share of answers with the label of interest
    y_mutant: float
    flip: bool
    transition: str | None
    shares_original: dict[str, float]
    shares_mutant: dict[str, float]


class MeasuredMutant(NamedTuple):
    """One mutant as `test_cells` reads it: its cell, its text, its pairs, and the measure's value on the original
    and on the mutant (a named tuple: one is built per tested mutant and measure)."""

    kind: str
    components: tuple[Component, ...]
    text_id: Hashable
    pair_ids: tuple[str, ...]
    y_original: float
    y_mutant: float


@dataclass(frozen=True)
class CellTest:
    """One (measure, cell)'s tests, before the correction over the family (q-values) that makes them findings.
    `measure`: what the values are (a label of interest, an aspect; None: the run's one label); `items`: the
    caller's records of the cell's mutants (flips, verdicts), in order; `note`: why the cell cannot be tested."""

    measure: str | None
    cell: Cell
    items: tuple
    texts: int
    changed: int
    effect: float
    ci: Interval | None
    p: float
    testable: bool
    note: str | None = None
    contrasts: tuple[float, ...] = ()
    interaction: float | None = None
    interaction_ci: Interval | None = None
    interaction_p: float | None = None
    interaction_testable: bool = False
    cohens_h: float | None = None


def test_cells(measure: str | None, items: Sequence, value, *, bound: float | None, alpha: float, min_texts: int,
               permutations: int, seed: int, tolerance: float = 1e-12, nonzero_count=None,
               note_of=None) -> list[CellTest]:
    """Every cell's main-effect test and, for intersectional cells, its interaction test (not yet corrected), on
    one measure: the one implementation behind label findings and free-text aspect findings.

    `items`: the mutants, in any order; `value(item)` -> a MeasuredMutant (or the same six values in a tuple):
    its cell, text and pairs, and the measure's value on the original and on the mutant. The test is over texts (a
    text's mutants are averaged first): stats.exchange_p for the effect, the interval of the per-text mean shift
    (`bound`: the values' range, 1 for shares, None for unbounded scores; the test inverted,
    stats.exchange_interval, so that it holds 0 exactly when p > alpha), and for an intersectional cell the
    per-text interaction contrasts, (y_mutant - y_original) minus its atomic parts' shifts, tested by
    stats.sign_flip_p. A cell is testable when its minimal p can reach `alpha` and its value changed (beyond
    `tolerance`, relative) on at least `min_texts` texts; `note_of(cell items)`: a reason it cannot be tested at all
    (p = 1). With `bound` 1 (shares), each cell also gets the effect's size, Cohen's h (`stats.cohens_h`)."""
    count_nonzero = nonzero_count or (lambda c: len(nonzero(c)))
    by_cell: dict[Cell, list[tuple]] = defaultdict(list)  # each cell's (item, MeasuredMutant) pairs
    parts_of: dict[tuple, tuple[float, float]] = {}  # an atomic mutant's values by (text_id, its pair id)
    for item in items:
        m = MeasuredMutant(*value(item))
        by_cell[(m.kind, m.components)].append((item, m))
        if len(m.pair_ids) == 1:
            parts_of[(m.text_id, m.pair_ids[0])] = (m.y_original, m.y_mutant)
    out = []
    for cell in sorted(by_cell, key=lambda c: (len(c[1]), c[1])):
        cell_items, cell_values = zip(*by_cell[cell])
        per_text: dict[Hashable, list[MeasuredMutant]] = defaultdict(list)
        for m in cell_values:
            per_text[m.text_id].append(m)
        # a text's original is one value (every mutant of it shares its original); its mean where they differ
        groups = [(ms[0].y_original if all(m.y_original == ms[0].y_original for m in ms)
                   else float(np.mean([m.y_original for m in ms])), [m.y_mutant for m in ms])
                  for ms in per_text.values()]
        shifts = [sum(m.y_mutant - m.y_original for m in ms) / len(ms) for ms in per_text.values()]
        note = note_of(cell_items) if note_of is not None else None
        if note is None:
            pv, p_min = exchange_p(groups, permutations=permutations, seed=seed)
        else:
            pv, p_min = 1.0, 1.0
        changed = sum(1 for y, ys in groups if any(abs(x - y) > tolerance * max(1.0, abs(y)) for x in ys))
        # the interval is the same test inverted (stats.exchange_interval): it holds 0 exactly when p > alpha
        ci = None if note is not None else exchange_interval(groups, bound=bound, alpha=alpha, p_value=pv,
                                                             permutations=permutations, seed=seed)
        effect = float(np.mean(shifts))
        # shares (bound 1): the size of the shift from the originals' mean share, averaged as the effect is (per
        # text, then over texts), so that baseline + effect is the mutants' mean share and h has the effect's sign
        baseline = float(np.mean([sum(m.y_original for m in ms) / len(ms) for ms in per_text.values()]))
        test = dict(measure=measure, cell=cell, items=cell_items, texts=len(per_text), changed=changed,
                    effect=effect, ci=ci, p=pv, note=note,
                    testable=note is None and p_min <= alpha and changed >= min_texts,
                    cohens_h=cohens_h(baseline, baseline + effect) if bound == 1.0 else None)
        if cell[0] == "intersectional":
            contrasts: dict[Hashable, list[float]] = defaultdict(list)
            for m in cell_values:
                parts = [parts_of.get((m.text_id, pid)) for pid in m.pair_ids]
                if any(part is None for part in parts):
                    continue
                contrasts[m.text_id].append((m.y_mutant - m.y_original) - sum(pm - po for po, pm in parts))
            c = tuple(sum(cs) / len(cs) for cs in contrasts.values())
            if c:
                ip = sign_flip_p(c, permutations=permutations, seed=seed) if note is None else None
                test.update(contrasts=c, interaction=float(np.mean(c)),
                            interaction_ci=sign_flip_interval(c, bound=None if bound is None else bound * len(cell[1]),
                                                              alpha=alpha, p_value=ip, permutations=permutations,
                                                              seed=seed),
                            interaction_p=ip,
                            interaction_testable=note is None and minimal_p(c) <= alpha
                            and count_nonzero(c) >= min_texts)
        out.append(CellTest(**test))
    return out


@dataclass(frozen=True)
class Corrected:
    """A CellTest with its family's correction: its q-value, its interaction's, and the population-hidden mark."""

    test: CellTest
    q: float
    interaction_q: float | None
    population_hidden: bool


def correct(tests: Sequence[CellTest], alpha: float) -> list[Corrected]:
    """One family's correction, the one place of the population-hidden rule: q-values (Benjamini-Hochberg over
    every testable test), interaction q-values over the intersectional ones; population-hidden where the
    interaction holds up, the cell holds up in the same direction, and no atomic part of it holds up on the same
    measure."""
    q = benjamini_hochberg([t.p for t in tests], [t.testable for t in tests])
    inter = [i for i, t in enumerate(tests) if t.cell[0] == "intersectional" and t.interaction_p is not None]
    qi = dict(zip(inter, benjamini_hochberg([tests[i].interaction_p for i in inter],
                                            [tests[i].interaction_testable for i in inter])))
    q_of = {(t.cell, t.measure): qv for t, qv in zip(tests, q)}
    out = []
    for i, (t, qv) in enumerate(zip(tests, q)):
        hidden = False
        if t.cell[0] == "intersectional":
            iq = qi.get(i)
            parts_significant = any(q_of.get((("atomic", (comp,)), t.measure), 1.0) <= alpha for comp in t.cell[1])
            hidden = bool(iq is not None and iq <= alpha and qv <= alpha and not parts_significant
                          and t.interaction * t.effect > 0)
        out.append(Corrected(t, qv, qi.get(i), hidden))
    return out


def distinct_mutants(observations: Iterable) -> list:
    """The observations (label or aspect: anything with `text_id` and `pair_ids`) as a list, each mutant once:
    two observations of one mutant are an error that names the first one seen twice."""
    observations = list(observations)
    keys = [(o.text_id, o.pair_ids) for o in observations]
    if len(set(keys)) < len(keys):
        seen: set = set()
        for key in keys:
            if key in seen:
                raise ValueError(f"two observations of the same mutant: text {key[0]}, pairs {key[1]}")
            seen.add(key)
    return observations


def measured_findings(tests: Sequence[CellTest], alpha: float, measure_of, *, flipped, transition=None,
                      toward=None) -> list[Finding]:
    """The one way from tests to findings, for every measure: one family's correction (`correct`), and per test
    its Finding. `measure_of(test.measure)` -> its Measure record; `flipped(item)`: whether a mutant flips (a
    label) or differs (an aspect); `transition(item)`: its "A->B" (labels); `toward(items)`: the outcome whose
    share rises most (labels)."""
    findings = []
    for c in correct(tests, alpha):
        t = c.test
        m = measure_of(t.measure)
        flips = [i for i in t.items if flipped(i)]
        f = dict(kind=t.cell[0], components=t.cell[1], tested=len(t.items), texts=t.texts, texts_changed=t.changed,
                 flips=len(flips),
                 transitions=dict(sorted(Counter(map(transition, flips)).items())) if transition else {},
                 toward=toward(t.items) if toward else None, effect=t.effect, effect_ci=t.ci, cohens_h=t.cohens_h,
                 p_value=t.p,
                 q_value=c.q, significant=c.q <= alpha, testable=t.testable, direction=m.direction(t.effect),
                 note=t.note, measured=m, **({"aspect": t.measure} if m.of_answers else {"label": t.measure}))
        if t.cell[0] == "intersectional":
            f.update(interaction=t.interaction, interaction_ci=t.interaction_ci, interaction_p=t.interaction_p,
                     interaction_q=c.interaction_q, interaction_texts=len(t.contrasts),
                     population_hidden=c.population_hidden)
        findings.append(Finding(**f))
    return findings


def _default_label(observations: Sequence[Observation]) -> str | None:
    """The most frequent label among the originals' answers (ties: alphabetical). The caller should pass the
    task's first label; this fallback does not depend on which side of a pair an answer came from."""
    counts: Counter = Counter()
    for o in observations:
        for a in o.original:
            if a is not None:
                counts.update(label_set(a))
    if not counts:
        return None
    return min(counts, key=lambda k: (-counts[k], k))


def analyse(observations: Iterable[Observation], *, label: str | None = None, labels: Sequence[str] | None = None,
            alpha: float = ALPHA, use_scores: bool | None = None, repeat_level: float = ALPHA,
            min_texts: int = MIN_TEXTS, permutations: int = PERMUTATIONS, seed: int = 0) -> Analysis:
    """The findings of a run: one per cell (kind + components) that has a tested mutant.

    `label`: the label of interest (pass the task's first label; None: the most frequent label among the
    originals). `labels`: a multi-label analysis instead: every one of these labels is of interest, each cell is
    tested once per label on the share of answers holding it, and all of them form one Benjamini-Hochberg family.
    `use_scores`: test score shifts (True), label shares (False), or scores when every observation has them
    (None; never in a multi-label analysis, whose observations carry one label's score). `alpha`: the FDR level of
    `significant` and `population_hidden`. `repeat_level`: the level of `oracle.flip_with_repeats` for counting
    flips. `min_texts`: a cell (or an interaction) whose outcome changed on fewer texts is not tested (q = 1): a
    finding rests on several texts, never on the many mutants of one. `permutations`, `seed`: the Monte Carlo of
    `exchange_p` and `sign_flip_p`, used only where exact computation is too large (continuous scores on many
    texts).
    """
    observations = distinct_mutants(observations)
    if labels is not None:
        if use_scores:
            raise ValueError("a multi-label analysis tests label shares: use_scores must not be True")
        labels = tuple(labels)
        tests, tested, skipped = [], 0, 0
        for each in labels:
            prepared, skipped = _prepare(observations, each, False, repeat_level)
            tested = len(prepared)
            tests += _cell_tests(prepared, each, False, alpha, min_texts, permutations, seed)
        order = {x: i for i, x in enumerate(labels)}
        tests.sort(key=lambda t: (len(t.cell[1]), t.cell[1], order[t.measure]))
        return Analysis(tuple(_findings(tests, alpha, Measure.label_share)), None, "label", alpha, tested, skipped,
                        labels)
    if label is None:
        label = _default_label(observations)
    if use_scores is None:
        use_scores = bool(observations) and all(o.has_scores for o in observations)
    elif use_scores and not all(o.has_scores for o in observations):
        raise ValueError("use_scores=True, but some observations have no scores")
    prepared, skipped = _prepare(observations, label, use_scores, repeat_level)
    tests = _cell_tests(prepared, None, use_scores, alpha, min_texts, permutations, seed)
    measure = Measure.score(label) if use_scores else Measure.label_share(label)
    return Analysis(tuple(_findings(tests, alpha, lambda _: measure)), label, "score" if use_scores else "label", alpha,
                    len(prepared), skipped)


def _prepare(observations: Sequence[Observation], label: str | None, use_scores: bool,
             repeat_level: float) -> tuple[list[_Prepared], int]:
    """The usable observations read for `label` (its score, or the share of answers holding it), and how many
    were skipped (no parseable answer on a side)."""
    cache: dict[tuple, tuple] = {}

    def read(answers: tuple) -> tuple:
        """(parseable answers, share of the label of interest, share of each outcome, most frequent outcome)."""
        got = cache.get(answers)
        if got is None:
            parsed = tuple(a for a in answers if a is not None)
            if parsed:
                counts = Counter(parsed)
                got = (parsed, label_share(parsed, label), {k: c / len(parsed) for k, c in counts.items()},
                       counts.most_common(1)[0][0])
            else:
                got = (parsed, None, {}, None)
            cache[answers] = got
        return got

    prepared: list[_Prepared] = []
    skipped = 0
    for o in observations:
        parsed_o, share_o, shares_o, top_o = read(o.original)
        parsed_m, share_m, shares_m, top_m = read(o.mutant)
        if not parsed_o or not parsed_m:
            skipped += 1
            continue
        if len(parsed_o) == 1 and len(parsed_m) == 1:
            flip = top_o != top_m
        else:
            flip = oracle.flip_with_repeats(parsed_o, parsed_m, level=repeat_level)
        if use_scores:
            y_o, y_m = sum(o.original_scores) / len(o.original_scores), sum(o.mutant_scores) / len(o.mutant_scores)
        else:
            y_o, y_m = share_o, share_m
        prepared.append(_Prepared(o, y_o, y_m, flip, f"{top_o}->{top_m}" if flip else None, shares_o, shares_m))
    return prepared, skipped


def _cell_tests(prepared: Sequence[_Prepared], label: str | None, use_scores: bool, alpha: float, min_texts: int,
                permutations: int, seed: int) -> list[CellTest]:
    """Each cell's tests for one label (`test_cells` on its share, or its score)."""
    return test_cells(label, prepared, lambda p: MeasuredMutant(p.obs.kind, p.obs.components, p.obs.text_id,
                                                                p.obs.pair_ids, p.y_original, p.y_mutant),
                      bound=None if use_scores else 1.0, alpha=alpha, min_texts=min_texts, permutations=permutations,
                      seed=seed)


def _findings(tests: Sequence[CellTest], alpha: float, measure_of) -> list[Finding]:
    """The findings of label `tests`, one family (`measured_findings`)."""
    return measured_findings(tests, alpha, measure_of, flipped=lambda p: p.flip, transition=lambda p: p.transition,
                             toward=_toward)


def _toward(items: Sequence[_Prepared]) -> str | None:
    """The outcome whose share rises most, averaged like the effect (per text, then over texts)."""
    per_text: dict[Hashable, list[_Prepared]] = defaultdict(list)
    for p in items:
        per_text[p.obs.text_id].append(p)
    shift: dict[str, float] = defaultdict(float)
    for ps in per_text.values():
        w = 1.0 / len(ps)
        for p in ps:
            for k, s in p.shares_mutant.items():
                shift[k] += w * s
            for k, s in p.shares_original.items():
                shift[k] -= w * s
    if not shift:
        return None
    best = min(shift, key=lambda k: (-shift[k], k))
    return best if shift[best] > 1e-12 * len(per_text) else None

