"""Pure statistics of hinter's findings: exact and randomisation p-values, Fisher's exact test, Benjamini-Hochberg,
the intervals (Student, Bonett-Price, Wilson) and an effect size (Cohen's h). Numbers in, numbers out: no records,
no I/O.

The definitions and the calibration of each test are in docs/findings.md; `findings.analyse` applies them to the
cells of a run, `oracle.flip_with_repeats` uses Fisher's test, and `measures` uses the one Wilson interval here.
Only the standard library and numpy (a dependency of spaCy, so always installed with hinter).
"""
from __future__ import annotations

import math
import statistics
from collections import Counter
from fractions import Fraction
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

ALPHA = 0.05
Z975 = 1.959963984540054  # the normal 97.5% quantile

# p-value machinery (see exchange_p and sign_flip_p)
EXACT_ENUMERATION_MAX = 16      # up to 2^16 sign patterns / arrangements: enumerated exactly
LATTICE_MAX_DENOMINATOR = 5040  # values k/L with L up to this: exact distribution by convolution
LATTICE_MAX_WORK = 50_000_000   # ... while (number of texts) x (support size) stays below this
PERMUTATIONS = 10_000           # Monte Carlo draws at most
SEQUENTIAL_HITS = 20            # Besag-Clifford: stop once this many draws reach the observed statistic
# Bentkus & Dzindzalieta (2015): P(sum a_i e_i >= x) <= C * P(N(0,1) >= x) when sum a_i^2 <= 1, C = 1/(4 Q(sqrt 2))
RADEMACHER_GAUSS_C = 1.0 / (4.0 * 0.5 * math.erfc(1.0))

Interval = tuple[float, float]


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test on the 2x2 table [[a, b], [c, d]] (sum of the probabilities of
    the tables with the same margins that are no more likely than the observed one)."""
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    lo, hi = max(0, col1 - (n - row1)), min(row1, col1)
    total = math.comb(n, col1)
    probs = {x: math.comb(row1, x) * math.comb(n - row1, col1 - x) / total for x in range(lo, hi + 1)}
    observed = probs[a]
    return min(1.0, sum(p for p in probs.values() if p <= observed * (1 + 1e-7)))


def wilson(p: float, n: float, z: float = Z975) -> Interval:
    """The Wilson score interval of a proportion `p` observed on `n` trials (95% with the default z). `n` may be
    an effective sample size (not an integer: `findings.self_flip_rate`); sound at small n and at p = 0 or 1,
    unlike p +- z sqrt(p (1 - p) / n). The one Wilson interval of hinter (measures.wilson rounds it for JSON)."""
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def cohens_h(p_original: float, p_mutant: float) -> float:
    """Cohen's h of a change of proportion from `p_original` to `p_mutant`: 2 asin sqrt(p_mutant) - 2 asin
    sqrt(p_original), in [-pi, pi] (Cohen 1988, section 6.2; about 0.2 small, 0.5 medium, 0.8 large). The
    arcsine-root scale steadies a binomial share's variance, so equal h are equally detectable whatever the base
    rate: 0.50 -> 0.40 is h = -0.20, but 0.10 -> 0.01 is h = -0.44 for a smaller difference. Its sign is that of
    p_mutant - p_original. Shares a float step outside [0, 1] (a mean of shares) are read as 0 or 1."""
    def angle(p: float, name: str) -> float:
        if not -1e-9 <= p <= 1 + 1e-9:  # also refuses NaN
            raise ValueError(f"cohens_h: {name} must be a proportion in [0, 1], got {p!r}")
        return 2.0 * math.asin(math.sqrt(min(1.0, max(0.0, p))))
    return angle(p_mutant, "p_mutant") - angle(p_original, "p_original")


# ---------------------------------------------------------------------------------------------- the tests

def nonzero(values) -> np.ndarray:
    """The values that are not zero (within 1e-12 of the largest magnitude), as an array."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return v
    tol = 1e-12 * max(1.0, float(np.max(np.abs(v))))
    return v[np.abs(v) > tol]


def minimal_p(values: Sequence[float]) -> float:
    """The smallest p-value `sign_flip_p` can give for texts with these values, whatever their signs:
    2 / 2^n for n non-zero values (1 when n <= 1). A cell whose minimal p exceeds alpha can never be
    significant; `benjamini_hochberg` leaves it out of its count (Tarone's refinement for discrete tests)."""
    n = len(nonzero(values))
    return 1.0 if n <= 1 else min(1.0, 2.0 ** (1 - n))


def sign_flip_p(values: Sequence[float], *, permutations: int = PERMUTATIONS, seed: int = 0) -> float:
    """Two-sided p-value of the sign-flip (randomisation) test of "the per-text values are symmetric about 0":
    the interaction test of an intersectional cell, on its per-text interaction contrasts.

    Under that null, flipping the sign of any text's value leaves the distribution unchanged, so
    T = |sum_t v_t| is compared with |sum_t e_t v_t| over the 2^n sign patterns e (zeros do not count):
    - the values are multiples of 1/L (labels, shares of repeated answers; L <= 5040): the exact distribution,
      by convolving the two-point laws of the texts on that lattice;
    - else at most 16 non-zero values (continuous scores): all 2^n patterns, exactly;
    - else Monte Carlo with a fixed seed and sequential stopping (Besag & Clifford 1991): p = h / l when the
      h-th (h = 20) pattern reaching T is the l-th drawn, else (hits + 1) / (permutations + 1); when no pattern
      reaches T, the smaller of that and an upper bound of the exact p-value (Hoeffding's, and Bentkus &
      Dzindzalieta's 3.18 x the normal tail), so that strong effects get p-values below 1 / permutations.
    Every branch satisfies P(p <= a) <= a under the null, for every a; for values in {-1, 0, 1} it is the
    exact two-sided sign test.
    """
    v = nonzero(values)
    if len(v) == 0:
        return 1.0
    lattice = _lattice(v)
    if lattice is not None:
        return _lattice_p(*lattice)
    if len(v) <= EXACT_ENUMERATION_MAX:
        return _enumerated_p(v)
    return _monte_carlo_p(v, permutations, seed)


def _lattice(v: np.ndarray):
    """(integer magnitudes, observed integer sum) when every |v| is k / L for one L, within the work limit."""
    den = _denominator(v)
    if den is None:
        return None
    a = np.abs(v)
    ints = np.rint(a * den).astype(np.int64)
    if np.any(ints == 0) or (2 * int(ints.sum()) + 1) * (len(ints) + 1) > LATTICE_MAX_WORK:
        return None
    observed = int(np.sum(np.sign(v).astype(np.int64) * ints))
    return ints, observed


def _lattice_p(ints: np.ndarray, observed: int) -> float:
    total = int(ints.sum())
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0
    reach = 0  # the distribution is zero outside total +- reach
    for a, count in sorted(Counter(ints.tolist()).items()):
        new = np.zeros_like(dist)
        src = dist[total - reach: total + reach + 1]
        for j in range(count + 1):
            w = math.exp(math.lgamma(count + 1) - math.lgamma(j + 1) - math.lgamma(count - j + 1) - count * math.log(2))
            if w == 0.0:
                continue
            off = a * (2 * j - count)
            new[total - reach + off: total + reach + off + 1] += w * src
        dist = new
        reach += a * count
    sums = np.abs(np.arange(-total, total + 1))
    return float(min(1.0, dist[sums >= abs(observed)].sum()))


@lru_cache(maxsize=None)
def _sign_patterns(n: int) -> np.ndarray:
    """All 2^(n-1) sign patterns with the first sign +1 (|T| is the same for a pattern and its negation)."""
    idx = np.arange(2 ** (n - 1))[:, None]
    bits = (idx >> np.arange(n - 1)) & 1
    return np.hstack([np.ones((len(idx), 1)), 1.0 - 2.0 * bits])


def _enumerated_p(v: np.ndarray) -> float:
    t = abs(float(v.sum()))
    tol = 1e-9 * float(np.abs(v).sum())
    sums = np.abs(_sign_patterns(len(v)) @ v)
    return float(np.mean(sums >= t - tol))


def _gauss_bound(v: np.ndarray, t: float) -> float:
    """An upper bound of the exact two-sided sign-flip p-value P(|sum e_i v_i| >= t)."""
    x = t / math.sqrt(float(np.sum(v * v)))
    hoeffding = 2.0 * math.exp(-x * x / 2.0)
    bentkus = 2.0 * RADEMACHER_GAUSS_C * 0.5 * math.erfc(x / math.sqrt(2.0))
    return min(1.0, hoeffding, bentkus)


def _monte_carlo_p(v: np.ndarray, permutations: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    t = abs(float(v.sum()))
    tol = 1e-9 * float(np.abs(v).sum())
    hits = drawn = 0
    chunk = 1000
    while drawn < permutations:
        m = min(chunk, permutations - drawn)
        signs = rng.integers(0, 2, size=(m, len(v)), dtype=np.int8).astype(float) * 2.0 - 1.0
        reached = np.abs(signs @ v) >= t - tol
        running = hits + np.cumsum(reached)
        if running[-1] >= SEQUENTIAL_HITS:
            at = int(np.argmax(running >= SEQUENTIAL_HITS))
            return SEQUENTIAL_HITS / (drawn + at + 1)
        hits = int(running[-1])
        drawn += m
    p = (hits + 1) / (permutations + 1)
    if hits == 0:
        p = min(p, _gauss_bound(v, t))
    return p


def _denominator(values: np.ndarray) -> int | None:
    """The smallest L <= LATTICE_MAX_DENOMINATOR such that every value is an integer multiple of 1/L, or None."""
    den = 1
    distinct = np.unique(np.abs(values))
    if len(distinct) > 1000:
        return None
    for x in distinct:
        f = Fraction(float(x)).limit_denominator(LATTICE_MAX_DENOMINATOR)
        if abs(float(f) - x) > 1e-9 * max(1.0, x):
            return None
        den = den * f.denominator // math.gcd(den, f.denominator)
        if den > LATTICE_MAX_DENOMINATOR:
            return None
    return den


def exchange_p(texts: Sequence[tuple[float, Sequence[float]]], *, permutations: int = PERMUTATIONS,
               seed: int = 0) -> tuple[float, float]:
    """The main-effect test of a cell: (two-sided p-value, smallest p-value attainable with these texts).

    `texts`: per text, (y of the original, [y of each of the cell's mutants of that text]). Null hypothesis:
    the original and its mutants are exchangeable (the model's outcome depends on the text, not on who is in
    it), so which of the k + 1 versions is the original is uniformly random, independently across texts.
    Statistic: U = sum_t y_original(t), against its randomisation distribution U* = sum_t y_{J_t}(t) with J_t
    uniform on the text's k + 1 versions; p = P(|U* - E U*| >= |U - E U*|), E U* = sum_t mean_t (all versions).
    U - E U* = -sum_t k/(k + 1) (mean of mutants - original): a one-mutant text is a sign flip of its shift, and
    with one mutant per text and labels only the test is the exact two-sided sign (McNemar) test.
    Computed exactly when the values are multiples of 1/L (labels; shares of repeated answers) by convolving
    the texts' laws, or by enumerating when there are at most 2^16 arrangements; else by Monte Carlo with a fixed
    seed and Besag-Clifford sequential stopping, floored by Hoeffding's bound when no draw reaches U.
    Exact under the null whatever k, the class balance or the number of texts: P(p <= a) <= a for all a.
    The minimal p (for Tarone's refinement in `benjamini_hochberg`) is exact on the first two paths; on the
    Monte Carlo path it is the lower bound min(P(U* = max), P(U* = min)).
    """
    groups = []
    for original, mutants in texts:
        x = np.asarray([original, *mutants], dtype=float)
        if len(x) > 1 and np.ptp(x) > 1e-12 * max(1.0, float(np.max(np.abs(x)))):
            groups.append(x)
    if not groups:
        return 1.0, 1.0
    observed = sum(float(x[0]) for x in groups)
    expected = sum(float(x.mean()) for x in groups)
    scale = sum(float(np.ptp(x)) for x in groups)
    tol = 1e-9 * (1.0 + scale)
    d_obs = abs(observed - expected)
    d_max = max(sum(float(x.max()) for x in groups) - expected, expected - sum(float(x.min()) for x in groups))

    den = _denominator(np.concatenate(groups))
    if den is not None:
        ints = [np.rint(x * den).astype(np.int64) for x in groups]
        pmfs = [np.bincount(i - i.min()) / len(i) for i in ints]
        support = sum(len(f) - 1 for f in pmfs) + 1
        if support * sum(len(f) for f in pmfs) <= LATTICE_MAX_WORK:
            dist = np.ones(1)
            for f in pmfs:
                dist = np.convolve(dist, f)
            sums = (np.arange(len(dist)) + sum(int(i.min()) for i in ints)) / den
            dev = np.abs(sums - expected)
            return (float(min(1.0, dist[dev >= d_obs - tol].sum())),
                    float(min(1.0, dist[dev >= d_max - tol].sum())))
    if math.prod(len(x) for x in groups) <= 2 ** EXACT_ENUMERATION_MAX:
        sums = np.zeros(1)
        for x in groups:
            sums = (sums[:, None] + x[None, :]).ravel()
        dev = np.abs(sums - expected)
        return float(np.mean(dev >= d_obs - tol)), float(np.mean(dev >= d_max - tol))

    p_top = math.prod(float(np.sum(x >= x.max() - tol)) / len(x) for x in groups)
    p_bottom = math.prod(float(np.sum(x <= x.min() + tol)) / len(x) for x in groups)
    p_min = min(p_top, p_bottom)
    sizes = np.array([len(x) for x in groups])
    table = np.zeros((len(groups), int(sizes.max())))
    for i, x in enumerate(groups):
        table[i, :len(x)] = x
    rows = np.arange(len(groups))
    rng = np.random.default_rng(seed)
    hits = drawn = 0
    chunk = 1000
    while drawn < permutations:
        m = min(chunk, permutations - drawn)
        pick = (rng.random((m, len(groups))) * sizes).astype(np.int64)
        reached = np.abs(table[rows, pick].sum(axis=1) - expected) >= d_obs - tol
        running = hits + np.cumsum(reached)
        if running[-1] >= SEQUENTIAL_HITS:
            return SEQUENTIAL_HITS / (drawn + int(np.argmax(running >= SEQUENTIAL_HITS)) + 1), p_min
        hits = int(running[-1])
        drawn += m
    p = (hits + 1) / (permutations + 1)
    if hits == 0:  # Hoeffding: P(|U* - E U*| >= d) <= 2 exp(-2 d^2 / sum_t range_t^2)
        p = min(p, 2.0 * math.exp(-2.0 * d_obs ** 2 / sum(float(np.ptp(x)) ** 2 for x in groups)))
    return p, p_min


# ---------------------------------------------------------------------------------------------- intervals

@lru_cache(maxsize=None)
def _t975(df: int) -> float:
    """The Student t 97.5% quantile (a table to 30 degrees of freedom, then the Cornish-Fisher expansion)."""
    table = (12.7062, 4.30265, 3.18245, 2.77645, 2.57058, 2.44691, 2.36462, 2.306, 2.26216, 2.22814, 2.20099,
             2.17881, 2.16037, 2.14479, 2.13145, 2.11991, 2.10982, 2.10092, 2.09302, 2.08596, 2.07961, 2.07387,
             2.06866, 2.0639, 2.05954, 2.05553, 2.05183, 2.04841, 2.04523, 2.04227)
    if df <= len(table):
        return table[df - 1]
    z = Z975
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def mean_interval(values: Sequence[float], *, bound: float | None = None) -> Interval | None:
    """95% interval of the mean of per-text values.

    `bound` None (scores): Student's t interval, mean +- t(n-1) s / sqrt(n) (None for a single text).
    `bound` B (labels: values in [-B, B] whose unit step is one flip): Bonett & Price's (2012) adjusted Wald
    interval for a difference of paired proportions, generalised to per-text shares: add one pseudo-text +1 and
    one -1, then centre +- 1.96 sqrt(var / (n + 2)) with centre = sum v / (n + 2) and var the augmented sample's
    variance, clipped to [-B, B]. With one mutant per text it is exactly theirs; it keeps its coverage at small n
    and when nothing flips. It floors the findings' label intervals (`_with_small_n_floor`).
    """
    v = np.asarray(values, dtype=float)
    n = len(v)
    if n == 0:
        return None
    if bound is None:
        if n < 2:
            return None
        mean = float(v.mean())
        half = _t975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
        return (mean - half, mean + half)
    total = n + 2.0
    centre = float(v.sum()) / total
    ss = float(np.sum((v - centre) ** 2)) + (1 - centre) ** 2 + (1 + centre) ** 2
    half = Z975 * math.sqrt(ss / total / total)
    return (max(-bound, centre - half), min(bound, centre + half))


def _with_small_n_floor(ci: Interval, shifts: Sequence[float], bound: float) -> Interval:
    """A label measure's test-inverted interval widened to hold `mean_interval`'s (Bonett & Price) over the per-text
    shifts. A location shift of 0/1 values is an odd model: where no text (or every text) changed, every shift but
    0 makes all differences equal and non-zero, which the permutation test rejects from 5 texts on, so the inverted
    interval collapses to [0, 0] ("no effect, for certain" from 8 texts). The union keeps the test's acceptance
    region; `_agree_at_zero` then makes it hold 0 exactly when p > alpha (tests/test_findings.py: coverage)."""
    floor = mean_interval(shifts, bound=bound)
    return ci if floor is None else (min(ci[0], floor[0]), max(ci[1], floor[1]))


def _accepted(a: float, b: float, c: float, lo: float, hi: float) -> Interval:
    """The shifts d in [lo, hi] with a d^2 + b d + c <= 0 (the acceptance region of a test's normal form), as an
    interval; [lo, hi] when it is unbounded (too few texts to bound it)."""
    disc = b * b - 4 * a * c
    if a <= 1e-12 * (abs(b) + abs(c) + 1.0) or disc < 0:
        return (lo, hi)
    r = math.sqrt(disc)
    x1, x2 = (-b - r) / (2 * a), (-b + r) / (2 * a)
    return (max(lo, min(hi, x1)), min(hi, max(lo, x2)))


def _agree_at_zero(ci: Interval, p0: float, p_of: Callable[[float], float], alpha: float, steps: int = 6) -> Interval:
    """`ci` made to agree with the exact test at 0: it holds 0 if and only if the p-value p0 > alpha. Where the
    normal form and the exact (discrete, or Monte Carlo) p-value disagree, the end beyond 0 is moved: to 0 when the
    exact test accepts 0, else inside, to the last shift the exact test accepts on the way from 0 (bisection)."""
    low, high = ci
    if p0 > alpha:
        return (min(low, 0.0), max(high, 0.0))
    if not low <= 0.0 <= high:
        return ci
    # the effect's side: the longer part of the interval (0 itself is rejected, and the estimate lies that way)
    inside, outside = (low, 0.0) if abs(low) >= abs(high) else (high, 0.0)
    for _ in range(steps):
        mid = (inside + outside) / 2
        if p_of(mid) > alpha:
            inside = mid
        else:
            outside = mid
    return (low, inside) if inside < 0 else (inside, high)


def exchange_interval(texts: Sequence[tuple[float, Sequence[float]]], *, bound: float | None = None,
                      alpha: float = ALPHA, p_value: float | None = None, permutations: int = PERMUTATIONS,
                      seed: int = 0) -> Interval | None:
    """The (1 - alpha) interval of a cell's shift from the same test as its p-value: `exchange_p` inverted.

    The shifts d such that, with d taken off each mutant's value (the model's outcome moved by d on every mutant),
    the test does not reject: its statistic U - E U* = D0 + d W (W = sum_t k_t/(k_t + 1)) within z sqrt(Var U*(d))
    of 0, Var U*(d) the randomisation variance (sum over texts of the variance of its k_t + 1 versions), a quadratic
    in d solved exactly (the test's normal form, as Wilson's interval is the binomial test's). Then made to agree
    with the exact p-value (`p_value`, else computed) at 0: the interval holds 0 exactly when p > alpha, so a cell's
    interval and q-value never disagree about 0. `bound` B: values in [0, B] (labels: 1) shift within [-B, B];
    None (scores): within twice the values' range. None without texts."""
    rows = [(float(o), np.asarray(ms, dtype=float)) for o, ms in texts if len(ms)]
    if not rows:
        return None
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    d0 = w_sum = a_sum = b_sum = c_sum = 0.0
    for o, ms in rows:
        k = len(ms)
        big = k + 1.0
        sh = ms - o
        s1, s2 = float(sh.sum()), float(np.sum(sh * sh))
        d0 -= s1 / big  # y_O - mean of the versions
        w_sum += k / big
        a_sum += k / big - k * k / big ** 2
        b_sum += -2 * s1 / big + 2 * s1 * k / big ** 2
        c_sum += s2 / big - s1 * s1 / big ** 2
    if bound is not None:
        lo, hi = -float(bound), float(bound)
    else:
        values = np.concatenate([ms for _, ms in rows] + [np.array([o for o, _ in rows])])
        reach = 2.0 * max(float(np.ptp(values)), 1e-9)
        centre = -d0 / w_sum
        lo, hi = centre - reach, centre + reach
    z2 = z * z
    ci = _accepted(w_sum * w_sum - z2 * a_sum, 2 * d0 * w_sum - z2 * b_sum, d0 * d0 - z2 * c_sum, lo, hi)
    if bound is not None:
        ci = _with_small_n_floor(ci, [float(np.mean(ms)) - o for o, ms in rows], bound)

    def p_of(d: float) -> float:
        return exchange_p([(o, ms - d) for o, ms in rows], permutations=permutations, seed=seed)[0]

    p0 = p_value if p_value is not None else exchange_p(texts, permutations=permutations, seed=seed)[0]
    return _agree_at_zero(ci, p0, p_of, alpha)


def sign_flip_interval(values: Sequence[float], *, bound: float | None = None, alpha: float = ALPHA,
                       p_value: float | None = None, permutations: int = PERMUTATIONS,
                       seed: int = 0) -> Interval | None:
    """The (1 - alpha) interval of the mean of per-text values from `sign_flip_p` inverted (the interaction test):
    the shifts d with |sum (v - d)| within z sqrt(sum (v - d)^2) (the test's normal form), then made to agree with
    the exact p-value at 0 as `exchange_interval` does. `bound`: the values' bound (an interaction of k labels: k);
    None: within twice their range. None without values."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return None
    z2 = statistics.NormalDist().inv_cdf(1 - alpha / 2) ** 2
    n, total, squares = float(len(v)), float(v.sum()), float(np.sum(v * v))
    centre = total / n
    reach = 2.0 * max(float(np.ptp(v)), float(np.max(np.abs(v))), 1e-9)
    lo, hi = (-float(bound), float(bound)) if bound is not None else (centre - reach, centre + reach)
    ci = _accepted(n * n - z2 * n, -2 * total * n + 2 * z2 * total, total * total - z2 * squares, lo, hi)
    if bound is not None:
        ci = _with_small_n_floor(ci, v, bound)

    def p_of(d: float) -> float:
        return sign_flip_p(v - d, permutations=permutations, seed=seed)

    p0 = p_value if p_value is not None else sign_flip_p(v, permutations=permutations, seed=seed)
    return _agree_at_zero(ci, p0, p_of, alpha)


# ---------------------------------------------------------------------------------------------- BH

def benjamini_hochberg(p_values: Sequence[float], testable: Sequence[bool] | None = None) -> list[float]:
    """Benjamini-Hochberg q-values: q_(i) = min_{j >= i} min(1, m p_(j) / j) over the m testable p-values in
    increasing order. Untestable ones (see `minimal_p`) are not counted in m and get q = 1."""
    n = len(p_values)
    keep = [i for i in range(n) if testable is None or testable[i]]
    m = len(keep)
    q = [1.0] * n
    running = 1.0
    for rank, i in reversed(list(enumerate(sorted(keep, key=lambda i: p_values[i]), start=1))):
        running = min(running, p_values[i] * m / rank)
        q[i] = min(1.0, running)
    return q
