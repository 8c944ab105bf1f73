"""Adaptive testing (`--adaptive`, issue 22): ask the model only what an undecided cell still needs.

A run asks in rounds, its batches of texts. Before each batch, `Plan.select` picks the mutants to ask: for every
cell (kind + components, as in `findings`) still undecided, one valid mutant per text (an intersectional one
whose atomic parts are valid first, and those parts with it while the cell's interaction is undecided); the
others stay valid and unasked. After the batch, `Plan.update` adds each text's value to its cells' sequential
tests, and a cell is settled when

- its e-value reaches `cells_bound / alpha` (an effect: e-BH over every cell of the run will reject it), or
- both one-sided tests of "the effect is at least +min_effect" and "at most -min_effect" reject at alpha / 2
  (no effect larger than min_effect).

The tests (docs/adaptive.md) are betting martingales (Waudby-Smith & Ramdas 2023) on the per-text value of a
cell, v = mean over its asked mutants on the text of (share of the label of interest in the mutant's answers -
the same share in the original's), in [-1, 1]. Under the findings' null (a text's original and its mutants are
exchangeable) E[v | everything before] = 0 whichever texts and mutants were chosen from what came before, so
the product of (1 + lambda v) is a test martingale; a mixture over a fixed grid of lambdas and both signs is one
too, and its value at any stopping time is an e-value (Ville). The run's findings are then decided by e-BH
(Wang & Ramdas 2022) over the stopped e-values: the false discovery rate stays at most alpha under any
dependence between cells, however early each stopped.

Pure: no store, no model. The engine replays a resumed run's stored answers through `update` (the same batches,
the same order), so a killed adaptive run continues with the state it had; the summary replays them again to
get each cell's e-value (`replay`).
"""
from __future__ import annotations

import math
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Hashable, Iterable, Sequence

import numpy as np

from .findings import Component, component_of

EFFECT, NO_EFFECT = "effect", "no effect"
MIN_EFFECT = 0.1           # --min-effect's default: a shift of 10 points in the share of the label of interest
LAMBDAS = np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9])  # the bets of the mixture (|lambda| < 1)
MU_GRID = np.linspace(-1.0, 1.0, 401)  # where the confidence sequence of an effect is evaluated

Cell = tuple[str, tuple[Component, ...]]


def cell_of(pair_ids: Sequence[str]) -> Cell:
    """A mutant's cell from its pair ids (components in attribute order, as `findings.Observation` puts them)."""
    comps = tuple(sorted((component_of(p) for p in pair_ids), key=lambda c: c.attribute))
    return ("atomic" if len(comps) == 1 else "intersectional", comps)


def _log_mean_exp(x: np.ndarray) -> float:
    m = float(np.max(x))
    return m + math.log(float(np.mean(np.exp(x - m))))


@dataclass
class Sequential:
    """An anytime-valid test of "the mean of v is 0" for values in [-1, 1], and the two one-sided tests of
    "the mean is at least +delta" / "at most -delta" that settle a cell as having no effect beyond delta."""

    delta: float
    values: list[float] = field(default_factory=list)
    up: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))     # sum log(1 + lambda v)
    down: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))   # sum log(1 - lambda v)
    below: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))  # sum log(1 + lambda (delta - v))
    above: np.ndarray = field(default_factory=lambda: np.zeros(len(LAMBDAS)))  # sum log(1 + lambda (v + delta))

    def add(self, v: float) -> None:
        v = min(1.0, max(-1.0, float(v)))
        self.values.append(v)
        self.up += np.log1p(LAMBDAS * v)
        self.down += np.log1p(-LAMBDAS * v)
        self.below += np.log1p(LAMBDAS * (self.delta - v))
        self.above += np.log1p(LAMBDAS * (v + self.delta))

    @property
    def n(self) -> int:
        return len(self.values)

    def e_value(self) -> float:
        """The mixture's wealth: the mean over the bets of both signs (1 before any value)."""
        return math.exp(_log_mean_exp(np.concatenate([self.up, self.down])))

    def excludes(self, level: float) -> bool:
        """Whether "mean >= delta" and "mean <= -delta" are both rejected at level / 2: no effect beyond delta."""
        bound = math.log(2.0 / level)
        return _log_mean_exp(self.below) >= bound and _log_mean_exp(self.above) >= bound


def confidence_sequence(values: Sequence[float], level: float) -> tuple[float, float] | None:
    """The effects mu in [-1, 1] that the same betting mixture (centred on mu) does not reject at `level`: a
    (1 - level) confidence sequence, valid at whatever moment the cell stopped. None without values."""
    if not len(values):
        return None
    v = np.clip(np.asarray(values, dtype=float), -1.0, 1.0)[:, None, None]
    mu = MU_GRID[None, :, None]
    # the bets stay below 1 / (1 + mu) and 1 / (1 - mu): every factor 1 + lambda (v - mu) is positive
    lam_up = LAMBDAS[None, None, :] * np.minimum(1.0, 1.0 / np.maximum(1e-9, 1.0 + MU_GRID))[None, :, None]
    lam_down = LAMBDAS[None, None, :] * np.minimum(1.0, 1.0 / np.maximum(1e-9, 1.0 - MU_GRID))[None, :, None]
    up = np.log1p(np.maximum(lam_up * (v - mu), -1 + 1e-12)).sum(axis=0)      # (mu, lambda)
    down = np.log1p(np.maximum(-lam_down * (v - mu), -1 + 1e-12)).sum(axis=0)
    both = np.concatenate([up, down], axis=1)
    m = both.max(axis=1, keepdims=True)
    log_wealth = m[:, 0] + np.log(np.exp(both - m).mean(axis=1))
    kept = MU_GRID[log_wealth < math.log(1.0 / level)]
    if not len(kept):  # every grid point rejected (cannot happen at the sample mean; guard for rounding)
        centre = float(np.mean(values))
        return (centre, centre)
    return (float(kept.min()), float(kept.max()))


def e_bh(e_values: Sequence[float]) -> list[float]:
    """e-BH adjusted values (Wang & Ramdas 2022): the smallest alpha at which e-BH rejects each hypothesis,
    min over k >= its rank of m / (k e_(k)), at most 1. Rejected at alpha when the value is <= alpha."""
    m = len(e_values)
    if not m:
        return []
    order = sorted(range(m), key=lambda i: -e_values[i])
    out = [1.0] * m
    best = math.inf
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        e = e_values[i]
        best = min(best, m / (rank * e) if e > 0 else math.inf)
        out[i] = min(1.0, best)
    return out


def cells_bound(pair_ids: Iterable[str], order: int) -> int:
    """How many cells a campaign with these dictionary pairs can have: atomic cells (attribute, source, target)
    and their products over 2..order distinct attributes. An upper bound of the number e-BH corrects over, so
    that a cell settled at cells_bound / alpha is rejected whatever the other cells do."""
    per_attribute: dict[str, set] = defaultdict(set)
    for p in pair_ids:
        c = component_of(p)
        per_attribute[c.attribute].add((c.source_group, c.target_group))
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

    def __init__(self, label: str, *, alpha: float, min_effect: float, bound: int, seed: int = 0):
        self.label, self.alpha, self.min_effect, self.bound, self.seed = label, alpha, min_effect, bound, seed
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
                by_text[text_id][cell_of(key)].append(i)
                index[(text_id, tuple(key))] = i
        chosen: set[int] = set()
        for text_id, cells in by_text.items():
            covered: set[Cell] = set()
            for cell in sorted((c for c in cells if c[0] == "intersectional" and self.active(c)),
                               key=lambda c: c[1]):
                # an intersectional mutant whose atomic parts can be asked too (the interaction needs them)
                def parts(i):
                    return [index.get((text_id, (p,))) for p in mutants[i][1]]
                best = min(cells[cell], key=lambda i: (sum(j is None for j in parts(i)),
                                                       _rank(self.seed, text_id, mutants[i][1])))
                chosen.add(best)
                if self._needs_interaction(cell) and all(j is not None for j in parts(best)):
                    for j in parts(best):
                        chosen.add(j)
                        covered.add(cell_of(mutants[j][1]))
            for cell in sorted((c for c in cells if c[0] == "atomic" and self.active(c)), key=lambda c: c[1]):
                if cell not in covered:
                    chosen.add(min(cells[cell], key=lambda i: _rank(self.seed, text_id, mutants[i][1])))
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
            cell = cell_of(t.pair_ids)
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

    def undecided(self) -> list[Cell]:
        return [c for c in self.main if self.active(c)]

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


ADAPTIVE_FAMILY = "e-BH over every cell's e-value (--adaptive: anytime-valid, however early each cell stopped)"


def decide(findings: list[dict], plan: Plan, alpha: float) -> dict:
    """An adaptive run's verdicts on the findings `findings.analyse` described (dicts, changed in place): each
    cell's e-value, its anytime-valid p-value (1 / e) and e-BH q-value, `significant` by e-BH at `alpha`, its
    effect's confidence sequence, whether its test settled it, and the interaction's e-BH and population-hidden
    mark. The effect and the counts stay the analysis's (over every tested mutant). Returns the run's adaptive
    record (cells by state, the label and the smallest effect asked for)."""
    def cell(f):
        comps = tuple(Component(c["attribute"], c["source_group"], c["target_group"]) for c in f["components"])
        return (f["kind"], comps)

    cells = [cell(f) for f in findings]
    e = [plan.main[c].e_value() if c in plan.main else 1.0 for c in cells]
    for f, c, ev, q in zip(findings, cells, e, e_bh(e)):
        test = plan.main.get(c)
        f.update(e_value=_round(ev), p_value=_round(min(1.0, 1.0 / ev)), q_value=_round(q), significant=q <= alpha,
                 settled=plan.main_state.get(c, "undecided"), texts_tested=test.n if test else 0,
                 effect_ci=_interval(confidence_sequence(test.values, alpha) if test else None))
    inter = [i for i, f in enumerate(findings) if f["kind"] == "intersectional"]
    ei = [plan.inter[cells[i]].e_value() if cells[i] in plan.inter else 1.0 for i in inter]
    significant = {c for f, c in zip(findings, cells) if f["significant"]}
    for i, ev, q in zip(inter, ei, e_bh(ei)):
        f, c = findings[i], cells[i]
        parts = any(("atomic", (comp,)) in significant for comp in c[1])
        f.update(interaction_e_value=_round(ev), interaction_q=_round(q),
                 population_hidden=bool(q <= alpha and f["significant"] and not parts
                                        and (f.get("interaction") or 0) * (f.get("effect") or 0) > 0))
    return {"label": plan.label, "min_effect": plan.min_effect, "cells": plan.counts(),
            "cells_bound": plan.bound, "family": ADAPTIVE_FAMILY}


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def _interval(ci):
    return None if ci is None else [_round(ci[0]), _round(ci[1])]


def plan_of(settings: dict, tested_rows: Iterable) -> Plan:
    """The plan an adaptive run's recorded settings (`adaptive_plan`) describe, after the rounds of
    `tested_rows` (the store's TestedRow, in the order stored): a resumed run's state, the summary's e-values."""
    plan = Plan(settings["label"], alpha=settings["alpha"], min_effect=settings["min_effect"],
                bound=settings["cells_bound"], seed=settings["seed"])
    rounds = settings["batch_texts"]
    return replay(plan, tested_of(plan, tested_rows), lambda text_id: text_id // rounds)
