"""The impact-ratio intervals hold their coverage where the percentile bootstrap failed: a category never or
almost never selected, and a model that treats every text alike. Stored outcomes of planted screeners with known
true ratios (tests/audit_scenarios.py), straight into the table functions: no model, no rendering."""
import numpy as np

import audit_scenarios as sc
from hinter.audit.tables import counterfactual_tables, observed_tables, rows_from_counts

SEXES = ["female", "male"]
RACES = ["White", "Black", "Asian", "Hispanic", "Indigenous", "Hawaiian", "Two or more"]


def test_a_nearly_never_selected_cell_no_longer_spreads_every_interval_to_zero():
    """Before: a cell selected once in 40 texts reached 0 in bootstrap samples, the simultaneous spread became
    infinite and every row, biased or not, showed an interval from 0."""
    rng = np.random.default_rng(3)
    y = (rng.random((40, 2, 7)) < 0.75).astype(float)
    y[:, 0, 1] = 0
    y[0, 0, 1] = 1  # selected once
    tables = counterfactual_tables(y, SEXES, RACES, draws=300, permutations=200)
    inter = tables["intersectional"]
    low = inter[1]
    assert low.impact_ratio < 0.05 and low.impact_ratio_ci[1] < 0.3
    assert all(r.impact_ratio_ci[0] > 0.4 for k, r in enumerate(inter) if k != 1)
    assert all(r.impact_ratio_ci[0] > 0.5 for r in tables["race"] if r.category != "Black")
    assert tables["race"][1].impact_ratio_ci[1] < 0.8


def test_a_deterministic_screener_gets_intervals_that_are_not_points():
    """Before: rejecting every Black woman and selecting everyone else gave the female ratio 6/7 with the interval
    0.857 - 0.857, as if 21 texts proved the rate of every other text too."""
    y = np.ones((21, 2, 7))
    y[:, 0, 1] = 0
    tables = counterfactual_tables(y, SEXES, RACES, draws=300, permutations=200)
    female = tables["sex"][0]
    assert female.impact_ratio_ci[0] < female.impact_ratio < female.impact_ratio_ci[1]
    assert female.rate_ci[0] < female.rate < female.rate_ci[1]  # the rate's too: 21 texts, not every text
    cell = tables["intersectional"][1]
    assert cell.impact_ratio == 0 and cell.impact_ratio_ci[0] == 0 and 0 < cell.impact_ratio_ci[1] < 0.4
    assert cell.rate_ci[0] == 0 < cell.rate_ci[1] < 0.2
    race = tables["race"][1]
    assert race.impact_ratio_ci[0] < 0.5 < race.impact_ratio_ci[1] < 0.8


def test_a_flag_on_a_few_texts_is_marked_too_few():
    """Observed tables: a category of 2 texts, or one where one more selected text would lift the ratio over 0.8,
    is flagged only with the mark and its reason; a flag that holds on many texts is not marked."""
    sex = ["female"] * 40 + ["male"] * 40 + ["female"] * 12
    race = ["White"] * 78 + ["Black"] * 2 + ["Asian"] * 12
    selected = [True] * 30 + [False] * 10 + [True] * 30 + [False] * 8 + [False] * 2 + [True] * 2 + [False] * 10
    tables, unknown = observed_tables(sex, race, selected, SEXES, RACES, draws=200)
    by = {r.category: r for r in tables["race"]}
    assert by["Black"].four_fifths and by["Black"].too_few == "too few: 2 texts, under 5"
    assert by["Asian"].four_fifths and by["Asian"].too_few is None  # 2 of 12 against 60 of 78
    rows = rows_from_counts(["a", "b"], np.array([[1, 0]] * 6 + [[0, 0]] * 4 + [[1, 0]] * 2 + [[0, 1]] * 6),
                            np.ones((18, 2)), draws=100)
    assert rows[1].four_fifths and rows[1].too_few.startswith("too few: one more selected text would lift")


def test_the_ratio_intervals_hold_their_coverage_on_planted_screeners():
    """Five planted screeners (identity-blind; two cells at 0.7 and 0.5; a cell never selected, true ratio 0; a
    cell selected 3% of the time, 0.05; a deterministic threshold screener, 0.05 and 0.5), 40 texts, 40 seeds
    each. The intervals are simultaneous at 95%: every true ratio of a table held at once in at least 95% of
    audits, less three standard errors of the 40 seeds (the bound holds whatever the machine). Neither a point
    nor [0, 1]: the never-selected cell's upper bound is informative, the others' lower bounds too."""
    seeds = 40
    family, per_ratio, per_rate = sc.coverage(seeds, 40, draws=300)
    floor = 0.95 - 3 * np.sqrt(0.95 * 0.05 / seeds)
    assert all(v >= floor for v in family.values()), {k: v for k, v in family.items() if v < floor}
    assert all(c >= floor for c, _, _ in per_ratio.values())
    assert per_ratio[("zero-rate cell", "intersectional", 0.0)][0] == 1.0
    assert per_ratio[("zero-rate cell", "intersectional", 0.0)][1] < 0.35
    assert per_ratio[("near-zero cell", "intersectional", 0.05)][1] < 0.45
    assert per_ratio[("deterministic", "intersectional", 0.05)][1] < 0.5
    assert all(w > 0 for _, w, _ in per_ratio.values())
    assert all(w < 0.75 for (_, _, t), (_, w, _) in per_ratio.items() if t == 1.0)
    # the rate intervals (95% each, not simultaneous): at least 95% less three standard errors of their rows
    assert all(c >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / m) for c, m in per_rate.values()), per_rate


def test_the_unpaired_intervals_of_recorded_decisions_hold_their_coverage():
    """One category per applicant (observed tables, `hinter audit --decisions`): categories of 50, 30, 20, 40, 10
    and 6 applicants selected at 0.6, 0.6, 0.3, 0.03, 0 and 0.5 (true ratios 1, 1, 0.5, 0.05, 0, 0.83); every true
    ratio held at once in at least 95% of 60 audits less three standard errors."""
    rates, sizes = np.array([0.6, 0.6, 0.3, 0.03, 0.0, 0.5]), np.array([50, 30, 20, 40, 10, 6])
    true, seeds = rates / rates.max(), 60
    held = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        category = np.repeat(np.arange(6), sizes)
        n = np.zeros((len(category), 6))
        n[np.arange(len(category)), category] = 1
        selected = n * (rng.random(len(category)) < rates[category])[:, None]
        rows = rows_from_counts([str(k) for k in range(6)], selected, n, seed=seed, draws=500,
                                rate_intervals="wilson")
        held.append(all(r.impact_ratio_ci[0] - 1e-9 <= t <= r.impact_ratio_ci[1] + 1e-9 for r, t in zip(rows, true)))
        assert rows[4].impact_ratio_ci[0] == 0.0 and rows[3].impact_ratio_ci[1] < 0.5
    assert np.mean(held) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / seeds)
