"""Adaptive testing (`--adaptive`, issue 22): ask the model only what an undecided cell still needs.

A run asks in rounds, its batches of texts. Before each batch, `Plan.select` picks the mutants to ask: for every
cell (kind + components, as in `findings`) still undecided, up to `per_text` valid mutants per text
(intersectional ones whose atomic parts are valid first, and those parts with them while the cell's interaction
is undecided); the others stay valid and unasked. After the batch, `Plan.update` adds each text's value to its
cells' sequential tests, and a cell is settled when

- its e-value reaches `cells_bound / alpha` (an effect that holds up against every cell the campaign can have), or
- both one-sided tests of "the effect is at least +min_effect" and "at most -min_effect" reject at alpha / 2
  (no effect larger than min_effect).

The tests (docs/adaptive.md) are betting martingales (Waudby-Smith & Ramdas 2023) on the per-text value of a
cell, v = mean over its asked mutants on the text of (share of the label of interest in the mutant's answers -
the same share in the original's), in [-1, 1]. Under the findings' null (a text's original and its mutants are
exchangeable) E[v | everything before] = 0 whichever texts and mutants were chosen from what came before, so
the product of (1 + lambda v) is a test martingale; a mixture over a fixed grid of lambdas and both signs is one
too, and it ever reaches 1/a with probability at most a (Ville). The findings stay `findings.analyse`'s tests on
what was asked: a null cell stops only when its data look null, or (with probability at most alpha /
cells_bound) at the e-value threshold, so its chance of a false finding is not raised (docs/adaptive.md; measured
over 40 seeds by tests/test_adaptive.py and bench/adaptive.py).

Pure: no store, no model. The engine replays a resumed run's stored answers through `update` (the same batches,
the same order), so a killed adaptive run continues with the state it had; the summary replays them again for
each cell's e-value and state (`plan_of`).
"""
from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Sequence

import numpy as np

from hinter.analysis.findings import Component, component_of

EFFECT, NO_EFFECT = "effect", "no effect"
PER_TEXT = 3               # mutants asked per text and undecided cell (see docs/adaptive.md: power against calls)
LAMBDAS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9])  # the bets of the mixture (|lambda| < 1)
# the bets of the two one-sided tests that settle a cell as without effect: up to 1, since a factor
# 1 + lambda (delta - v) stays >= delta > 0 for every v in [-1, 1]
FUTILITY_LAMBDAS = np.array([0.25, 0.5, 0.75, 1.0])

Cell = tuple[str, tuple[Component, ...]]


def cell_of(pair_ids: Sequence[str], occupational: frozenset[str] = frozenset()) -> Cell:
    """A mutant's cell from its pair ids (components in attribute order, as `findings.Observation` puts them; an
    occupational pair's component apart, as the findings keep it)."""
    comps = tuple(sorted((component_of(p, p in occupational) for p in pair_ids), key=lambda c: c.attribute))
    return ("atomic" if len(comps) == 1 else "intersectional", comps)


def _log_mean_exp(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.mean(np.exp(x - m))))


@dataclass
class Sequential:
    """An anytime-valid test of "the mean of v is 0" for values in [-1, 1], and the two one-sided tests of
    "the mean is at least +delta" / "at most -delta" that settle a cell as having no effect beyond delta."""

    delta: float
    n: int = 0  # values added
    up: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))     # sum log(1 + lambda v)
    down: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))   # sum log(1 - lambda v)
    below: np.ndarray = field(default_factory=lambda: np.zeros(len(FUTILITY_LAMBDAS)))  # log(1 + l (delta - v))
    above: np.ndarray = field(default_factory=lambda: np.zeros(len(FUTILITY_LAMBDAS)))  # log(1 + l (v + delta))

    def add(self, v: float) -> None:
        v = min(1.0, max(-1.0, float(v)))
        self.n += 1
        self.up += np.log1p(LAMBDAS * v)
        self.down += np.log1p(-LAMBDAS * v)
        self.below += np.log1p(FUTILITY_LAMBDAS * (self.delta - v))
        self.above += np.log1p(FUTILITY_LAMBDAS * (v + self.delta))

    def e_value(self) -> float:
        """The mixture's wealth: the mean over the bets of both signs (1 before any value)."""
        return math.exp(_log_mean_exp(np.concatenate([self.up, self.down])))

    def excludes(self, level: float) -> bool:
        """Whether "mean >= delta" and "mean <= -delta" are both rejected at level / 2: no effect beyond delta."""
        bound = math.log(2.0 / level)
        return _log_mean_exp(self.below) >= bound and _log_mean_exp(self.above) >= bound


def cells_bound(pair_ids: Iterable[str], order: int, occupational: frozenset[str] = frozenset()) -> int:
    """How many cells a campaign with these dictionary pairs can have: atomic cells (attribute, source, target)
    and their products over 2..order distinct attributes. An upper bound of the cells a run tests: a cell settled at
    cells_bound / alpha clears every cell's share of alpha, whatever the other cells do."""
    per_attribute: dict[str, set] = defaultdict(set)
    for p in pair_ids:
        c = component_of(p, p in occupational)
        per_attribute[c.attribute].add((c.source_group, c.target_group, c.occupational))
    sizes = [len(s) for s in per_attribute.values()]
    total, poly = 0, [1]  # elementary symmetric sums of the sizes: the cells of each order
    for s in sizes:
        poly = [a + (s * poly[i - 1] if i else 0) for i, a in enumerate(poly + [0])]
    for k in range(1, min(order, len(sizes)) + 1):
        total += poly[k]
    return max(1, total)


@dataclass(frozen=True)
class Tested:
    """One tested mutant as the plan reads it: its text, pair ids, and the share of the label of interest in the
    original's answers and in its own."""

    text_id: Hashable
    pair_ids: tuple[str, ...]
    y_original: float
    y_mutant: float


def share(answers: Sequence[str | None], label: str) -> float | None:
    """The share of parseable answers that are the label of interest (compared case-insensitively: a python:
    model may answer "positive" for the task's "Positive"); None when none parses."""
    parsed = [a for a in answers if a is not None]
    if not parsed:
        return None
    wanted = label.casefold()
    return sum(a.casefold() == wanted for a in parsed) / len(parsed)


def _rank(seed: int, text_id: Hashable, key: Sequence[str]) -> int:
    """A mutant's place in its cell's queue on its text: a seeded hash, the same on every machine."""
    return zlib.crc32(f"{seed}|{text_id}|{' & '.join(key)}".encode())


class Plan:
    """The state of an adaptive run: each cell's sequential tests and whether it is settled."""

    def __init__(self, label: str, *, alpha: float, min_effect: float, bound: int, seed: int = 0,
                 per_text: int = PER_TEXT, occupational: frozenset[str] = frozenset()):
        self.label, self.alpha, self.min_effect, self.bound, self.seed = label, alpha, min_effect, bound, seed
        self.occupational = occupational  # the run's occupational pair ids: their cells apart
        self.per_text = per_text
        self.main: dict[Cell, Sequential] = {}
        self.inter: dict[Cell, Sequential] = {}
        self.main_state: dict[Cell, str] = {}
        self.inter_state: dict[Cell, str] = {}

    # ------------------------------------------------------------------ which cells still ask
    def _needs_interaction(self, cell: Cell) -> bool:
        return self.main_state.get(cell) != NO_EFFECT and cell not in self.inter_state

    def active(self, cell: Cell) -> bool:
        if cell[0] == "atomic":
            return cell not in self.main_state
        return cell not in self.main_state or self._needs_interaction(cell)

    def select(self, mutants: Sequence[tuple[Hashable, tuple[str, ...]]], valid: Sequence[bool]) -> set[int]:
        """The indices of `mutants` ((text_id, pair ids) each, with `valid` their verdicts) to ask this round."""
        by_text: dict[Hashable, dict[Cell, list[int]]] = defaultdict(lambda: defaultdict(list))
        index: dict[tuple[Hashable, tuple[str, ...]], int] = {}
        for i, ((text_id, key), ok) in enumerate(zip(mutants, valid)):
            if ok:
                by_text[text_id][cell_of(key, self.occupational)].append(i)
                index[(text_id, tuple(key))] = i
        chosen: set[int] = set()
        for text_id, cells in by_text.items():
            covered: dict[Cell, int] = defaultdict(int)
            for cell in sorted((c for c in cells if c[0] == "intersectional" and self.active(c)),
                               key=lambda c: c[1]):
                # intersectional mutants whose atomic parts can be asked too (the interaction needs them)
                def parts(i):
                    return [index.get((text_id, (p,))) for p in mutants[i][1]]
                best = sorted(cells[cell], key=lambda i: (sum(j is None for j in parts(i)),
                                                          _rank(self.seed, text_id, mutants[i][1])))
                for i in best[:self.per_text]:
                    chosen.add(i)
                    if self._needs_interaction(cell) and all(j is not None for j in parts(i)):
                        for j in parts(i):
                            if j not in chosen:
                                chosen.add(j)
                                covered[cell_of(mutants[j][1], self.occupational)] += 1
            for cell in sorted((c for c in cells if c[0] == "atomic" and self.active(c)), key=lambda c: c[1]):
                queue = sorted((i for i in cells[cell] if i not in chosen),
                               key=lambda i: _rank(self.seed, text_id, mutants[i][1]))
                chosen.update(queue[:max(0, self.per_text - covered[cell])])
        return chosen

    # ------------------------------------------------------------------ what a round's answers add
    def update(self, tested: Iterable[Tested]) -> None:
        """Add one round's tested mutants (every one asked in the round, in the order stored) to the tests of the
        cells that were active when the round began, then settle the cells their values decide."""
        main_open = {c for c in self.main if c not in self.main_state}
        values: dict[Cell, dict[Hashable, list[float]]] = defaultdict(lambda: defaultdict(list))
        contrasts: dict[Cell, dict[Hashable, list[float]]] = defaultdict(lambda: defaultdict(list))
        tested = list(tested)
        y_of = {(t.text_id, t.pair_ids): t.y_mutant for t in tested}
        for t in tested:
            cell = cell_of(t.pair_ids, self.occupational)
            if cell not in self.main:  # first seen now: undecided
                self.main[cell] = Sequential(self.min_effect)
                main_open.add(cell)
                if cell[0] == "intersectional":
                    self.inter[cell] = Sequential(self.min_effect)
            if cell in main_open:
                values[cell][t.text_id].append(t.y_mutant - t.y_original)
            if cell[0] == "intersectional" and self._needs_interaction(cell):
                parts = [y_of.get((t.text_id, (p,))) for p in t.pair_ids]
                if all(y is not None for y in parts):
                    k = len(parts)
                    c = (t.y_mutant - t.y_original) - sum(y - t.y_original for y in parts)
                    contrasts[cell][t.text_id].append(c / (k + 1))  # in [-1, 1]
        for tests, got in ((self.main, values), (self.inter, contrasts)):
            for cell, per_text in got.items():
                for vs in per_text.values():  # texts in the order stored
                    tests[cell].add(sum(vs) / len(vs))
        threshold = self.bound / self.alpha
        for cell in main_open:
            self._settle(self.main[cell], self.main_state, cell, threshold)
        for cell in contrasts:
            if cell not in self.inter_state:
                self._settle(self.inter[cell], self.inter_state, cell, threshold)

    def _settle(self, test: Sequential, states: dict, cell: Cell, threshold: float) -> None:
        if test.e_value() >= threshold:
            states[cell] = EFFECT
        elif test.excludes(self.alpha):
            states[cell] = NO_EFFECT

    def counts(self) -> dict[str, int]:
        """Cells by state: settled with an effect, settled without one, undecided (still asking when stopped)."""
        out = {"effect": 0, "no_effect": 0, "undecided": 0}
        for cell in self.main:
            state = self.main_state.get(cell)
            out["undecided" if state is None else state.replace(" ", "_")] += 1
        return out


def replay(plan: Plan, tested: Iterable[Tested], batch_of) -> Plan:
    """Feed a stored run's tested mutants to `plan` round by round (`batch_of(text_id)`: the round of a text),
    as the run fed them: the state a resumed run continues from, and the summary's e-values."""
    rounds: dict[int, list[Tested]] = defaultdict(list)
    for t in tested:
        rounds[batch_of(t.text_id)].append(t)
    for r in sorted(rounds):
        plan.update(rounds[r])
    return plan


def tested_of(plan: Plan, rows: Iterable) -> list[Tested]:
    """The tested mutants of rows that carry text_id, pair_ids, original_answers and mutant_answers (the store's
    TestedRow; the pipeline builds the same from a batch): those with a parseable answer on both sides."""
    out = []
    for r in rows:
        y_o, y_m = share(r.original_answers, plan.label), share(r.mutant_answers, plan.label)
        if y_o is not None and y_m is not None:
            out.append(Tested(r.text_id, tuple(r.pair_ids), y_o, y_m))
    return out


def decide(findings: list[dict], plan: Plan) -> dict:
    """An adaptive run's record on each finding `findings.analyse` made of what it asked (dicts, changed in
    place): its cell's e-value when it stopped asking, whether its test settled it (`effect`, `no effect` beyond
    min_effect, or `undecided`), and the texts its test used; intersectional cells also the interaction's e-value.
    The significance stays the analysis's (docs/adaptive.md says why stopping this way keeps it calibrated).
    Returns the run's adaptive record: cells by state, the label and the smallest effect asked for."""
    for f in findings:
        c = (f["kind"], tuple(Component(x["attribute"], x["source_group"], x["target_group"],
                                        x.get("occupational", False)) for x in f["components"]))
        test = plan.main.get(c)
        f.update(e_value=_round(test.e_value() if test else 1.0), settled=plan.main_state.get(c, "undecided"),
                 texts_tested=test.n if test else 0)
        if f["kind"] == "intersectional":
            inter = plan.inter.get(c)
            f["interaction_e_value"] = _round(inter.e_value() if inter else 1.0)
    return {"label": plan.label, "min_effect": plan.min_effect, "cells": plan.counts(), "cells_bound": plan.bound}


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def plan_of(settings: dict, tested_rows: Iterable, occupational: frozenset[str] = frozenset()) -> Plan:
    """The plan an adaptive run's recorded settings (`adaptive_plan`) describe, after the rounds of
    `tested_rows` (the store's TestedRow, in the order stored): a resumed run's state, the summary's e-values.
    `occupational`: the run's occupational pair ids (their cells apart, as the findings keep them)."""
    plan = Plan(settings["label"], alpha=settings["alpha"], min_effect=settings["min_effect"],
                bound=settings["cells_bound"], seed=settings["seed"], occupational=occupational)
    rounds = settings["batch_texts"]
    return replay(plan, tested_of(plan, tested_rows), lambda text_id: text_id // rounds)


def on_answers(observations: Sequence, plan: Plan, batch_texts: int) -> list:
    """What an adaptive run would have asked of a campaign whose every answer is known: `observations`
    (findings.Observation, one per valid mutant, every one answered; text ids in the campaign's order) go through
    `plan` in rounds of `batch_texts` texts, as `hinter run --adaptive` asks them. Returns the observations the
    plan asked (the plan holds the tests). For calibration and the bench on stored outcomes: no parse, no model."""
    by_round: dict[int, list] = defaultdict(list)
    order = {t: i for i, t in enumerate(dict.fromkeys(o.text_id for o in observations))}
    for o in observations:
        by_round[order[o.text_id] // batch_texts].append(o)
    asked = []
    for r in sorted(by_round):
        batch = by_round[r]
        chosen = plan.select([(o.text_id, o.pair_ids) for o in batch], [True] * len(batch))
        picked = [o for i, o in enumerate(batch) if i in chosen]
        asked += picked
        plan.update(tested_of(plan, (Answered(o.text_id, o.pair_ids, o.original, o.mutant) for o in picked)))
    return asked


@dataclass(frozen=True)
class Answered:
    """A tested mutant's answers and its original's, as `tested_of` reads them (what a store row carries)."""

    text_id: Hashable
    pair_ids: tuple[str, ...]
    original_answers: tuple
    mutant_answers: tuple
