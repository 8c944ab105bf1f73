"""The audit's tables, pure functions over outcomes: per category n, selected, the selection rate with its 95%
interval, the impact ratio against the most selected category with its interval, a test of the ratio against 1
and the four-fifths flag (29 CFR 1607.4(D): a ratio under 0.8).

Counterfactual design (`counterfactual_tables`): every text is read in every (sex, race) category, so the texts
are the unit of uncertainty. Rate intervals: a percentile bootstrap over texts (seeded), which keeps every text's
renderings together. Impact-ratio intervals: the same bootstrap, simultaneous over every pair of categories
(`_simultaneous_spread`), because the reference is the most selected category of the same data: a per-pair
interval against it excluded 1 somewhere in most audits of a model that ignores identity. p-value: a permutation test within texts. Under the null (the model ignores the category)
the renderings of a text are exchangeable across categories; the categories' outcomes are shuffled within each
text (for sex: within each text and race; for race: within each text and sex; for the intersection: across all
cells of a text), and a category's ratio is compared with the smallest ratio of each shuffle. Comparing with the
smallest accounts for the reference being the most selected category of the same data: a model that ignores
identity gets p <= 0.05 in at most 5% of audits, whichever category looks worst.

Observed design (`observed_tables`): each text as it is, one category per text (`unknown` where its words say
none). Rates: Wilson intervals; ratios: the same bootstrap over texts; p-value: Fisher's exact test against the
reference category.

Categories under `min_share` (2%) of the known data are left out of the ratios, with the reason (LL144 allows it).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from ..stats import fisher_exact, wilson

FOUR_FIFTHS = 0.8
MIN_SHARE = 0.02
BOOTSTRAP = 2000
PERMUTATIONS = 2000


@dataclass(frozen=True)
class Row:
    category: str
    n: int
    selected: int
    rate: float | None
    rate_ci: tuple[float, float] | None
    impact_ratio: float | None
    impact_ratio_ci: tuple[float, float] | None
    p_value: float | None
    four_fifths: bool | None  # impact ratio under 0.8
    excluded: str | None = None  # why left out of the ratios
    sex: str | None = None  # the intersection's rows name both
    race: str | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("rate_ci", "impact_ratio_ci"):
            d[k] = list(d[k]) if d[k] is not None else None
        if self.sex is None:
            del d["sex"], d["race"]
        return d


def _r(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


def _ci(values: np.ndarray) -> tuple[float, float] | None:
    v = values[np.isfinite(values)]
    if not len(v):
        return None
    lo, hi = np.percentile(v, [2.5, 97.5])
    return (_r(lo), _r(hi))


def _bootstrap_weights(texts: int, seed: int, draws: int) -> np.ndarray:
    """(draws, texts): how many times each text is drawn in each bootstrap sample."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, texts, size=(draws, texts))
    w = np.zeros((draws, texts), dtype=np.int32)
    np.add.at(w, (np.repeat(np.arange(draws), texts), idx.ravel()), 1)
    return w


def _simultaneous_spread(brate: np.ndarray, rate: np.ndarray, cols: list[int], level: float = 0.95) -> float:
    """The half-width, on the log scale, of impact-ratio intervals that hold for every pair of categories at once
    (Tukey's idea, on a bootstrap): the `level` quantile over bootstrap samples of the largest log-rate deviation
    less the smallest. Every pair at once covers a reference chosen as the most selected on the same data."""
    if len(cols) < 2:
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.log(brate[:, cols]) - np.log(rate[cols])
    d = np.where(np.isnan(d), 0.0, d)  # a category with no renderings in a sample: no deviation to count
    with np.errstate(invalid="ignore"):
        span = d.max(axis=1) - d.min(axis=1)
    # a sample in which a selected category is never selected has no bound: the interval then reaches 0
    return float(np.quantile(np.where(np.isnan(span), np.inf, span), level, method="higher"))


def rows_from_counts(names: Sequence[str], selected: np.ndarray, n: np.ndarray, *, seed: int = 0,
                     draws: int = BOOTSTRAP, p_values: Sequence[float | None] | None = None,
                     rate_intervals: str = "bootstrap", min_share: float = MIN_SHARE,
                     labels: Sequence[tuple[str, str]] | None = None) -> list[Row]:
    """Rows of one table from per-text counts: `selected` and `n` are (texts, categories) arrays (a text's
    favourable outcomes and renderings in each category). `rate_intervals`: "bootstrap" (over texts) or "wilson"
    (independent texts). `p_values`: per category, given by the caller's test."""
    selected, n = np.asarray(selected, dtype=float), np.asarray(n, dtype=float)
    tot_sel, tot_n = selected.sum(0), n.sum(0)
    known = tot_n.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(tot_n > 0, tot_sel / np.maximum(tot_n, 1), np.nan)
    excluded = [None if tot_n[k] > 0 and tot_n[k] >= min_share * known else
                ("no data" if tot_n[k] == 0 else f"under {100 * min_share:g}% of the data ({int(tot_n[k])} of "
                 f"{int(known)})") for k in range(len(names))]
    kept = [k for k in range(len(names)) if excluded[k] is None]
    ref = max(kept, key=lambda k: (rate[k], -k)) if kept else None  # the most selected; the first on a tie
    w = _bootstrap_weights(selected.shape[0], seed, draws) if selected.shape[0] else None
    if w is not None:
        bsel, bn = w @ selected, w @ n
        with np.errstate(invalid="ignore", divide="ignore"):
            brate = np.where(bn > 0, bsel / bn, np.nan)
        spread = _simultaneous_spread(brate, rate, [k for k in kept if rate[k] > 0])
    rows = []
    for k, name in enumerate(names):
        if tot_n[k] == 0:
            rci = None
        elif rate_intervals == "wilson":
            rci = tuple(_r(x) for x in wilson(rate[k], tot_n[k]))
        else:
            rci = _ci(brate[:, k]) if w is not None else None
        ratio = ratio_ci = p = flag = None
        if excluded[k] is None and ref is not None and rate[ref] > 0:
            ratio = rate[k] / rate[ref]
            if w is not None and rate[k] > 0:
                ratio_ci = (_r(ratio * math.exp(-spread)), _r(min(ratio * math.exp(spread), 1 / rate[ref])))
            elif w is not None:  # never selected: the bootstrap has nothing to spread (the interval is [0, 0])
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio_ci = _ci(brate[:, k] / brate[:, ref])
            p = p_values[k] if p_values is not None else None
            flag = bool(ratio < FOUR_FIFTHS)
        sex, race = labels[k] if labels is not None else (None, None)
        rows.append(Row(name, int(tot_n[k]), int(tot_sel[k]), _r(rate[k]), rci, _r(ratio), ratio_ci,
                        _r(p), flag, excluded[k], sex, race))
    return rows


def _ratios(rates: np.ndarray) -> np.ndarray:
    """Each category's rate over the largest, along the last axis (nan where nothing is selected)."""
    top = rates.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(top > 0, rates / np.where(top > 0, top, 1), np.nan)


def permutation_p(y: np.ndarray, axis: str, *, seed: int = 0, permutations: int = PERMUTATIONS,
                  chunk: int = 100) -> list[float | None]:
    """Per category of `axis` ("sex", "race" or "intersectional"), the permutation p-value of its impact ratio
    against 1 on `y` (texts, sexes, races) of 0/1 outcomes (see the module's docstring). None where nothing is
    selected."""
    y = np.asarray(y, dtype=float)
    t, s, r = y.shape

    def rates(a: np.ndarray) -> np.ndarray:  # a: (..., t, s, r) -> (..., categories)
        if axis == "sex":
            return a.mean(axis=(-3, -1))
        if axis == "race":
            return a.mean(axis=(-3, -2))
        return a.reshape(a.shape[:-3] + (t, s * r)).mean(axis=-2)

    observed = _ratios(rates(y))
    if not np.isfinite(observed).any():
        return [None] * len(observed)
    rng = np.random.default_rng(seed)
    smallest = []
    for start in range(0, permutations, chunk):
        m = min(chunk, permutations - start)
        if axis == "sex":
            order = np.argsort(rng.random((m, t, s, r)), axis=2)
            shuffled = np.take_along_axis(np.broadcast_to(y, (m, t, s, r)), order, axis=2)
        elif axis == "race":
            order = np.argsort(rng.random((m, t, s, r)), axis=3)
            shuffled = np.take_along_axis(np.broadcast_to(y, (m, t, s, r)), order, axis=3)
        else:
            flat = y.reshape(t, s * r)
            order = np.argsort(rng.random((m, t, s * r)), axis=2)
            shuffled = np.take_along_axis(np.broadcast_to(flat, (m, t, s * r)), order, axis=2).reshape(m, t, s, r)
        smallest.append(np.nanmin(np.nan_to_num(_ratios(rates(shuffled)), nan=1.0), axis=-1))
    low = np.concatenate(smallest)
    # a shuffle whose smallest ratio is within float noise of the observed one counts as reaching it
    return [None if not np.isfinite(o) else float((1 + np.sum(low <= o + 1e-12)) / (1 + len(low)))
            for o in observed]


def counterfactual_tables(y: np.ndarray, sexes: Sequence[str], races: Sequence[str], *, seed: int = 0,
                          draws: int = BOOTSTRAP, permutations: int = PERMUTATIONS) -> dict[str, list[Row]]:
    """The three tables of the counterfactual design from `y` (texts, sexes, races): 1 where the rendering of a
    text in (sex, race) got the favourable outcome, else 0. Every text is in every category."""
    y = np.asarray(y, dtype=float)
    t, s, r = y.shape
    ones = np.ones_like(y)
    out = {}
    for axis, sel, n, names, labels in (
            ("sex", y.sum(axis=2), ones.sum(axis=2), list(sexes), None),
            ("race", y.sum(axis=1), ones.sum(axis=1), list(races), None),
            ("intersectional", y.reshape(t, s * r), ones.reshape(t, s * r),
             [f"{a} / {b}" for a in sexes for b in races], [(a, b) for a in sexes for b in races])):
        p = permutation_p(y, axis, seed=seed, permutations=permutations)
        out[axis] = rows_from_counts(names, sel, n, seed=seed, draws=draws, p_values=p, labels=labels)
    return out


def observed_tables(sex: Sequence[str | None], race: Sequence[str | None], selected: Sequence[bool],
                    sexes: Sequence[str], races: Sequence[str], *, seed: int = 0, draws: int = BOOTSTRAP
                    ) -> tuple[dict[str, list[Row]], dict[str, int]]:
    """The three tables of the texts as they are: per text its observed sex and race (None: unknown) and whether
    its outcome was favourable. Returns (tables, unknown count per table)."""
    sel = np.asarray(selected, dtype=float)
    out, unknown = {}, {}
    for axis, keys, names, labels in (
            ("sex", list(sex), list(sexes), None),
            ("race", list(race), list(races), None),
            ("intersectional", [None if a is None or b is None else f"{a} / {b}" for a, b in zip(sex, race)],
             [f"{a} / {b}" for a in sexes for b in races], [(a, b) for a in sexes for b in races])):
        col = {name: k for k, name in enumerate(names)}
        rows_known = [i for i, k in enumerate(keys) if k in col]
        unknown[axis] = len(keys) - len(rows_known)
        n = np.zeros((len(rows_known), len(names)))
        for j, i in enumerate(rows_known):
            n[j, col[keys[i]]] = 1
        s = n * sel[rows_known, None] if rows_known else n
        rows = rows_from_counts(names, s, n, seed=seed, draws=draws, rate_intervals="wilson", labels=labels)
        ref = max((row for row in rows if row.impact_ratio is not None), key=lambda row: row.impact_ratio,
                  default=None)
        if ref is not None:  # Fisher's exact test of each category against the reference
            rows = [row if row.impact_ratio is None or row is ref else
                    Row(**{**row.__dict__, "p_value": _r(fisher_exact(row.selected, row.n - row.selected,
                                                                      ref.selected, ref.n - ref.selected))})
                    for row in rows]
            rows = [Row(**{**row.__dict__, "p_value": 1.0}) if row is ref else row for row in rows]
        out[axis] = rows
    return out, unknown
