"""Planted screeners with known true impact ratios, simulated as stored outcomes (texts, sexes, races) of 0/1:
what the ratio intervals' calibration is measured on (tests/test_audit_intervals.py, bench/audit_coverage.py)."""
from __future__ import annotations

import numpy as np

from hinter.audit.tables import rows_from_counts

SEXES, RACES = 2, 7


def _cells(base: float, special: dict[int, float]) -> np.ndarray:
    p = np.full(SEXES * RACES, base)
    for k, v in special.items():
        p[k] = v
    return p


def blind(rng, texts):
    """Ignores identity; each text strong or weak (0.8 or 0.2): every true ratio 1."""
    p = rng.choice([0.2, 0.8], size=texts)
    return (rng.random((texts, SEXES * RACES)) < p[:, None]).astype(float), _cells(0.5, {})


def two_low(rng, texts):
    """Noisy, one cell at ratio 0.7, another at 0.5 (base 0.6, texts vary by +-0.2)."""
    cells = _cells(0.6, {3: 0.42, 9: 0.3})
    shift = rng.choice([-0.2, 0.2], size=texts)[:, None]
    scale = np.clip(cells[None, :] + shift * cells[None, :] / 0.6, 0, 1)
    return (rng.random((texts, SEXES * RACES)) < scale).astype(float), cells


def zero_cell(rng, texts):
    """Rejects one cell always (true ratio 0), the others at 0.6."""
    cells = _cells(0.6, {1: 0.0})
    return (rng.random((texts, SEXES * RACES)) < cells[None, :]).astype(float), cells


def near_zero(rng, texts):
    """One cell selected 3% of the time, the others 60% (true ratio 0.05)."""
    cells = _cells(0.6, {1: 0.03})
    return (rng.random((texts, SEXES * RACES)) < cells[None, :]).astype(float), cells


def deterministic(rng, texts):
    """A deterministic screener: a text of quality q (uniform) is selected in a cell when q passes the cell's
    threshold (0.4; one cell 0.97: ratio 0.05; one 0.7: ratio 0.5). Every rendering's outcome is fixed by its
    text, so the sample's only randomness is which texts were drawn."""
    cells = _cells(0.6, {1: 0.03, 12: 0.3})
    q = rng.random(texts)
    return (q[:, None] > 1 - cells[None, :]).astype(float), cells


SCENARIOS = {"identity-blind": blind, "two lower cells": two_low, "zero-rate cell": zero_cell,
             "near-zero cell": near_zero, "deterministic": deterministic}


def tables_of(y: np.ndarray, cells: np.ndarray):
    """Per table (sex, race, intersectional): (selected, n, true rates) as rows_from_counts takes them."""
    t = y.shape[0]
    y3, p3 = y.reshape(t, SEXES, RACES), cells.reshape(SEXES, RACES)
    ones = np.ones_like(y3)
    return {"sex": (y3.sum(2), ones.sum(2), p3.mean(1)), "race": (y3.sum(1), ones.sum(1), p3.mean(0)),
            "intersectional": (y, np.ones_like(y), cells)}


def coverage(seeds: int, texts: int, draws: int = 1000):
    """Per scenario and table: the share of seeds whose ratio intervals held every true ratio at once; per
    scenario, table and true ratio: the share of rows whose interval held it and the intervals' median width; per
    scenario, table and true rate: the share of rate intervals that held it."""
    family, per_ratio, per_rate = {}, {}, {}
    for name, make in SCENARIOS.items():
        for seed in range(seeds):
            y, cells = make(np.random.default_rng(seed), texts)
            for table, (sel, n, p) in tables_of(y, cells).items():
                true = p / p.max()
                rows = rows_from_counts([str(k) for k in range(len(p))], sel, n, seed=seed, draws=draws)
                held = [r.impact_ratio_ci[0] - 1e-9 <= t <= r.impact_ratio_ci[1] + 1e-9 for r, t in zip(rows, true)]
                family.setdefault((name, table), []).append(all(held))
                for r, t, h, rate in zip(rows, true, held, p):
                    per_ratio.setdefault((name, table, round(float(t), 3)), []).append(
                        (h, r.impact_ratio_ci[1] - r.impact_ratio_ci[0]))
                    per_rate.setdefault((name, table, round(float(rate), 3)), []).append(
                        r.rate_ci[0] - 1e-9 <= rate <= r.rate_ci[1] + 1e-9)
    return ({k: float(np.mean(v)) for k, v in family.items()},
            {k: (float(np.mean([h for h, _ in v])), float(np.median([w for _, w in v])), len(v))
             for k, v in per_ratio.items()},
            {k: (float(np.mean(v)), len(v)) for k, v in per_rate.items()})
