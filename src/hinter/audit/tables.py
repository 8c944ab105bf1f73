"""The audit's tables, pure functions over outcomes: per category n, selected, the selection rate with its 95%
interval, the impact ratio against the most selected category with its interval, a test of the ratio against 1
and the four-fifths flag (29 CFR 1607.4(D): a ratio under 0.8).

Counterfactual design (`counterfactual_tables`): every text is read in every (sex, race) category, so the texts
are the unit of uncertainty. Rate intervals: Wilson's on the texts' effective sample size (`texts_wilson`), which
keeps every text's renderings together. Impact-ratio intervals (`ratio_intervals`): paired over texts, on the log
scale with pseudo-texts added (so that a category never or always selected, and a model that treats every text
alike, keep their coverage), simultaneous over every pair of categories because the reference is the most
selected category of the same data: a per-pair interval against it excluded 1 somewhere in most audits of a model
that ignores identity. p-value: a permutation test within texts. Under the null (the model ignores the category)
the renderings of a text are exchangeable across categories; the categories' outcomes are shuffled within each
text (for sex: within each text and race; for race: within each text and sex; for the intersection: across all
cells of a text), and a category's ratio is compared with the smallest ratio of each shuffle. Comparing with the
smallest accounts for the reference being the most selected category of the same data: a model that ignores
identity gets p <= 0.05 in at most 5% of audits, whichever category looks worst.

Observed design (`observed_tables`): each text as it is, one category per text (`unknown` where its words say
none). Rates: Wilson intervals; ratios: `ratio_intervals` on unpaired data; p-value: Fisher's exact test against the
reference category.

Categories under `min_share` (2%) of the known data are left out of the ratios, with the reason (LL144 allows it).
A four-fifths flag on a category of fewer than MIN_TEXTS texts, or that one more selected text would lift, is
marked `too_few` with the reason.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from hinter.analysis.stats import fisher_exact, wilson

FOUR_FIFTHS = 0.8
MIN_SHARE = 0.02
MIN_TEXTS = 5  # a four-fifths flag on fewer texts of a category is marked "too few"
BOOTSTRAP = 2000  # draws of the ratio intervals' simultaneous critical value (the API's name: bootstrap=)
PERMUTATIONS = 2000
Z_PAIR = 1.959964  # the normal 97.5% quantile: the least critical value of a family of ratio intervals


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
    too_few: str | None = None  # why a four-fifths flag here means little (few texts, or one text flips it)

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("rate_ci", "impact_ratio_ci"):
            d[k] = list(d[k]) if d[k] is not None else None
        if self.sex is None:
            del d["sex"], d["race"]
        return d


def _r(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


def texts_wilson(selected: np.ndarray, n: np.ndarray) -> tuple[float, float] | None:
    """A rate's 95% interval with the texts as the unit: Wilson's score interval on the effective number of
    renderings, N over the design effect (the variance of the rate over texts, a sandwich, against the variance of
    N independent renderings; at least 1: renderings of one text count at most as independent ones). Wilson's,
    unlike a percentile bootstrap, neither collapses to a point where every text was treated alike or where no
    rendering was selected, nor undercovers a rate near 0 (docs/audit.md)."""
    selected, n = np.asarray(selected, dtype=float), np.asarray(n, dtype=float)
    reads = n > 0
    texts, total = int(reads.sum()), float(n.sum())
    if not total:
        return None
    rate = selected.sum() / total
    deff = 1.0
    if texts > 1 and 0 < rate < 1:
        between = np.sum((selected[reads] - rate * n[reads]) ** 2) / total ** 2 * texts / (texts - 1)
        deff = max(1.0, between / (rate * (1 - rate) / total))
    return tuple(_r(x) for x in wilson(rate, total / deff))


def _pseudo_texts(n: np.ndarray, paired: bool) -> tuple[np.ndarray, np.ndarray]:
    """(selected, n) of the pseudo-texts that the ratio intervals add to the data (the pseudo-observations of
    adjusted intervals such as Agresti & Caffo's, or Bonett & Price's for paired proportions): in a paired table
    one pseudo-text per category, read in every category as often as a real text is and selected in its own
    category only; in an unpaired one (each text in one category), two per category, one selected and one not.
    Every category then has at least one selection and one rejection, so no ratio is 0 or infinite on the log
    scale and no variance is 0: a sample in which every text was treated alike (a deterministic model) still says
    how far its population could differ."""
    k = n.shape[1]
    per_text = n.sum(0) / np.maximum((n > 0).sum(0), 1)  # renderings of a category per text that reads it
    if paired:
        return np.diag(per_text), np.tile(per_text, (k, 1))
    return np.vstack([np.diag(per_text), np.zeros((k, k))]), np.vstack([np.diag(per_text), np.diag(per_text)])


def ratio_intervals(selected: np.ndarray, n: np.ndarray, kept: Sequence[int], *, seed: int = 0,
                    level: float = 0.95, draws: int = BOOTSTRAP) -> dict[int, tuple[float, float]]:
    """Per kept category k, an interval for its true impact ratio p_k / max_j p_j (p: the categories' selection
    rates in the population of texts), from `selected` and `n` (texts, categories) as in rows_from_counts. The
    intervals hold for every category at once with probability `level`.

    How: the texts are the unit (a text's renderings in the categories are paired). With the pseudo-texts of
    `_pseudo_texts` added, each log rate ratio log(r_k / r_j) gets its variance from the texts (the linearised
    ratio estimator, a sandwich over texts: u_tk = (s_tk - r_k n_tk) / S_k, Var = sum_t (u_tk - u_tj)^2, close to
    the delta method's (n12 + n21) / (n1+ n+1) for one pair of binary outcomes); each bound is
    where the deviation equals the critical value times the standard error at that bound (`_score_bounds`). The
    critical value is the `level` quantile of the largest studentised deviation over every pair of kept
    categories, drawn from the law of the log rates estimated on the real texts (a multivariate t of texts - 1
    degrees of freedom: Tukey's idea with the estimated covariance; pairs that no text tells apart add nothing),
    at least the normal 97.5% quantile, so that all pairwise intervals [L_kj, U_kj] hold together. Since
    p_k / p_max = min_j p_k / p_j, they give p_k / p_max in [min_j L_kj, min(1, min_j U_kj)] whichever category is
    truly the most selected, which is what the table's reference, the most selected category of the same data,
    estimates. A category never selected gets 0 as its lower bound (no data can bound its rate away from 0), and
    every interval holds the table's own estimate.
    Why not the percentile bootstrap: a category never selected in a bootstrap sample has an infinite log ratio
    (the interval exploded to [0, 1 / max rate]), and a model that treats every text alike gives identical
    samples (a zero-width interval); both missed the true ratio (docs/audit.md gives the measured coverage)."""
    kept = list(kept)
    if not kept:
        return {}
    selected, n = np.asarray(selected, dtype=float), np.asarray(n, dtype=float)
    texts = selected.shape[0]
    paired = bool(texts) and bool((n[:, kept] > 0).all())
    ps, pn = _pseudo_texts(n, paired)
    s_all, n_all = np.vstack([selected, ps]), np.vstack([n, pn])
    s_tot, n_tot = s_all.sum(0), n_all.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):  # a category of no data: never kept
        rate = s_tot / n_tot
    u = (s_all - rate * n_all)[:, kept] / s_tot[kept]
    cov = u.T @ u * (texts / (texts - 1) if texts > 1 else 1.0)  # the usual small-sample factor over clusters
    m = len(kept)
    log_rate = np.log(rate[kept])
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov  # Var(log r_k - log r_j)
    se = np.sqrt(np.maximum(var, 0.0))
    if m < 2:
        crit = Z_PAIR
    else:
        # the critical value from the texts as they are (no pseudo-texts), studentised by their own standard
        # errors: pairs of categories that no text tells apart (a deterministic model's) add nothing to the
        # maximum, so the family is the pairs that vary; the pseudo-texts still give each pair its standard
        # error below. At least one pair's own quantile.
        s_real = selected.sum(0)[kept]
        with np.errstate(invalid="ignore", divide="ignore"):
            u_real = (selected[:, kept] - s_real / n.sum(0)[kept] * n[:, kept]) / np.where(s_real > 0, s_real, 1)
        cov_real = u_real.T @ u_real * (texts / (texts - 1) if texts > 1 else 1.0)
        iu = np.triu_indices(m, 1)
        se_real = np.sqrt(np.maximum(np.diag(cov_real)[iu[0]] + np.diag(cov_real)[iu[1]] - 2 * cov_real[iu], 0.0))
        rng = np.random.default_rng(seed)
        z = rng.multivariate_normal(np.zeros(m), cov_real, size=draws, method="eigh")
        if texts > 2:  # the standard errors are estimated from the texts: a multivariate t of texts - 1 degrees
            z *= np.sqrt((texts - 1) / rng.chisquare(texts - 1, size=(draws, 1)))
        dev = np.abs(z[:, iu[0]] - z[:, iu[1]]) / np.where(se_real > 1e-12, se_real, np.inf)
        crit = max(float(np.quantile(dev.max(axis=1), level)), Z_PAIR)
    bounds = _score_bounds(log_rate, s_tot[kept], n_tot[kept], cov, crit)
    out = {}
    for a, k in enumerate(kept):
        others = [b for b in range(m) if b != a]
        if not others:
            out[k] = (1.0, 1.0)
            continue
        low = float(min(1.0, np.exp(bounds[0][a, others]).min()))
        high = float(min(1.0, np.exp(bounds[1][a, others]).min()))
        out[k] = (0.0 if selected[:, k].sum() == 0 else low, high)
    return out


def _score_bounds(log_rate: np.ndarray, count: np.ndarray, exposure: np.ndarray, cov: np.ndarray, crit: float,
                  reach: float = 12.0, step: float = 0.005) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) bounds of log(r_a / r_b) for every pair (a, b): where |x - d| = crit * se(x), with se(x)
    the standard error at the bound, not at the estimate (Wilson's idea): at a ratio e^x the two categories'
    counts would be mu_a, mu_b (the Poisson fit that keeps their sum), and the variance of a log count scales as
    1 / mu: Var(x) = c_aa f_a + c_bb f_b - 2 c_ab sqrt(f_a f_b), f = count / mu. A few selections then give an
    upper bound the data support (not e^(crit * 1) times the estimate). The first crossing on each side is taken
    (the variance grows again where a count nears 0); none within `reach`: unbounded."""
    d = log_rate[:, None] - log_rate[None, :]
    var_a, var_b = np.diag(cov)[:, None], np.diag(cov)[None, :]
    total = count[:, None] + count[None, :]

    def short(offset: np.ndarray, sign: float) -> np.ndarray:  # whether |x - d| >= crit * se(x) at d +- offset
        rho = np.exp(d[None] + sign * offset)
        mu_a = total * rho * exposure[:, None] / (rho * exposure[:, None] + exposure[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            f_a, f_b = count[:, None] / mu_a, count[None, :] / (total - mu_a)
            var = var_a * f_a + var_b * f_b - 2 * cov * np.sqrt(f_a * f_b)
        return offset ** 2 >= crit ** 2 * np.where(np.isfinite(var), np.maximum(var, 0.0), np.inf)

    out = []
    for sign in (-1.0, 1.0):
        coarse = np.arange(0.0, reach + 0.1, 0.1)[:, None, None]  # the first crossing on a coarse grid...
        hit = short(coarse, sign)
        first = np.where(hit.any(axis=0), hit.argmax(axis=0), -1)
        start = np.maximum(first - 1, 0) * 0.1  # ...then on a fine one within the coarse step before it
        fine = start[None] + np.arange(0.0, 0.1 + step, step)[:, None, None]
        hit = short(fine, sign)
        offset = np.take_along_axis(fine, hit.argmax(axis=0)[None], 0)[0]
        out.append(np.where(first >= 0, d + sign * offset, sign * np.inf))
    return out[0], out[1]


def _too_few(sel: float, n: float, texts: int, ref_rate: float, per_text: float, unit: str = "text") -> str | None:
    """Why a four-fifths flag on this category means little: fewer than MIN_TEXTS texts, or one more of its texts
    selected would lift its ratio to 0.8 (the "flip-flop" check of practical significance: 29 CFR 1607.4(D) lets
    differences "based on small numbers" not count as adverse impact)."""
    if texts < MIN_TEXTS:
        return f"too few: {texts} {unit}{'s' if texts != 1 else ''}, under {MIN_TEXTS}"
    lifted = min(sel + per_text, n) / n / ref_rate
    if lifted >= FOUR_FIFTHS:
        return f"too few: one more selected {unit} would lift the ratio to {lifted:.3f}"
    return None


def rows_from_counts(names: Sequence[str], selected: np.ndarray, n: np.ndarray, *, seed: int = 0,
                     draws: int = BOOTSTRAP, p_values: Sequence[float | None] | None = None,
                     rate_intervals: str = "texts", min_share: float = MIN_SHARE,
                     labels: Sequence[tuple[str, str]] | None = None, share_of: int | None = None,
                     unit: str = "text") -> list[Row]:
    """Rows of one table from per-text counts: `selected` and `n` are (texts, categories) arrays (a text's
    favourable outcomes and renderings in each category). `rate_intervals`: "texts" (`texts_wilson`: a text's
    renderings together) or "wilson" (independent texts). `draws`: of the ratio intervals' critical value.
    `p_values`: per category, given by the caller's test. `share_of`: the count that `min_share` is a share of
    (default: the data of known category). `unit`: what a row of `selected` is, as the "too few" mark names it."""
    selected, n = np.asarray(selected, dtype=float), np.asarray(n, dtype=float)
    tot_sel, tot_n = selected.sum(0), n.sum(0)
    known = tot_n.sum() if share_of is None else share_of
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(tot_n > 0, tot_sel / np.maximum(tot_n, 1), np.nan)
    excluded = [None if tot_n[k] > 0 and tot_n[k] >= min_share * known else
                ("no data" if tot_n[k] == 0 else f"under {100 * min_share:g}% of the data ({int(tot_n[k])} of "
                 f"{int(known)})") for k in range(len(names))]
    kept = [k for k in range(len(names)) if excluded[k] is None]
    ref = max(kept, key=lambda k: (rate[k], -k)) if kept else None  # the most selected; the first on a tie
    has_ratios = selected.shape[0] > 0 and ref is not None and rate[ref] > 0
    ratio_ci_of = ratio_intervals(selected, n, kept, seed=seed, draws=max(draws, 1000)) if has_ratios else {}
    texts_of = (n > 0).sum(0)
    rows = []
    for k, name in enumerate(names):
        if tot_n[k] == 0:
            rci = None
        elif rate_intervals == "wilson":
            rci = tuple(_r(x) for x in wilson(rate[k], tot_n[k]))
        else:
            rci = texts_wilson(selected[:, k], n[:, k])
        ratio = ratio_ci = p = flag = few = None
        if excluded[k] is None and ref is not None and rate[ref] > 0:
            ratio = rate[k] / rate[ref]
            if k in ratio_ci_of:  # the interval always holds the estimate (the pseudo-texts pull towards 1)
                low, high = ratio_ci_of[k]
                ratio_ci = (_r(min(low, ratio)), _r(max(high, ratio)))
            p = p_values[k] if p_values is not None else None
            flag = bool(ratio < FOUR_FIFTHS)
            if flag:
                few = _too_few(tot_sel[k], tot_n[k], int(texts_of[k]), rate[ref], tot_n[k] / texts_of[k], unit)
        sex, race = labels[k] if labels is not None else (None, None)
        rows.append(Row(name, int(tot_n[k]), int(tot_sel[k]), _r(rate[k]), rci, _r(ratio), ratio_ci,
                        _r(p), flag, excluded[k], sex, race, few))
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
                    sexes: Sequence[str], races: Sequence[str], *, seed: int = 0, draws: int = BOOTSTRAP,
                    share_of: int | None = None, unit: str = "text") -> tuple[dict[str, list[Row]], dict[str, int]]:
    """The three tables of the texts as they are: per text its observed sex and race (None: unknown) and whether
    its outcome was favourable. Returns (tables, unknown count per table). `share_of`: as rows_from_counts'
    (recorded decisions: every row, unknown ones included)."""
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
        rows = rows_from_counts(names, s, n, seed=seed, draws=draws, rate_intervals="wilson", labels=labels,
                                share_of=share_of, unit=unit)
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
