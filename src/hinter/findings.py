"""Findings that hold up (issue 13): which cells of a run change the model's outcome beyond chance, toward
what, by how much, and which intersectional cells are hidden at population level.

Pure statistics: no I/O, no store, no model. The caller turns every tested mutant into an `Observation` and
calls `analyse`; the definitions, the formulas and why the test is calibrated are in docs/findings.md.

    obs = [Observation.from_pair_ids(text_id, pair_ids, original_answers, mutant_answers), ...]
    result = analyse(obs, label=task.labels[0])          # Analysis
    [f.to_dict() for f in result.findings]               # the JSON records of summary.json

Only the standard library and numpy (a dependency of spaCy, so always installed with hinter).
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Hashable, Iterable, Sequence

import numpy as np

ALPHA = 0.05
Z975 = 1.959963984540054  # the normal 97.5% quantile
SET_SEPARATOR = " | "     # multi-label outcomes are encoded "a | b" (models.base.Outcome.encode)
EMPTY_SET = "(none)"      # ... and the empty label set as "(none)"

# p-value machinery (see exchange_p and sign_flip_p)
EXACT_ENUMERATION_MAX = 16      # up to 2^16 sign patterns / arrangements: enumerated exactly
LATTICE_MAX_DENOMINATOR = 5040  # values k/L with L up to this: exact distribution by convolution
LATTICE_MAX_WORK = 50_000_000   # ... while (number of texts) x (support size) stays below this
PERMUTATIONS = 10_000           # Monte Carlo draws at most
MIN_TEXTS = 3                   # a cell is tested only when the outcome changed on at least this many texts
SEQUENTIAL_HITS = 20            # Besag-Clifford: stop once this many draws reach the observed statistic
# Bentkus & Dzindzalieta (2015): P(sum a_i e_i >= x) <= C * P(N(0,1) >= x) when sum a_i^2 <= 1, C = 1/(4 Q(sqrt 2))
RADEMACHER_GAUSS_C = 1.0 / (4.0 * 0.5 * math.erfc(1.0))


# ---------------------------------------------------------------------------------------------- records

@dataclass(frozen=True, order=True)
class Component:
    """One changed attribute of a cell: its source group -> target group (e.g. gender, male, female)."""

    attribute: str
    source_group: str
    target_group: str

    @classmethod
    def from_pair_id(cls, pair_id: str) -> Component:
        """The component of a pair id "attribute:source>target:word>replacement" (mutation.Replacement.pair_id)."""
        try:
            attribute, groups, _ = pair_id.split(":", 2)
            source, target = groups.split(">", 1)
        except ValueError:
            raise ValueError(f"not a pair id (attribute:source>target:word>replacement): {pair_id!r}") from None
        return cls(attribute, source, target)

    def to_dict(self) -> dict:
        return {"attribute": self.attribute, "source_group": self.source_group, "target_group": self.target_group}


def _answers(value, what: str) -> tuple:
    if value is None or isinstance(value, str):
        return (value,)
    out = tuple(value)
    if not out:
        raise ValueError(f"{what}: no answer")
    return out


def _scores(value, what: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return (float(value),)
    out = tuple(float(v) for v in value)
    if not out or not all(math.isfinite(v) for v in out):
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
        object.__setattr__(self, "pair_ids", pair_ids)
        object.__setattr__(self, "components", components)
        if type(self.original) is not tuple:
            object.__setattr__(self, "original", _answers(self.original, "original"))
        if type(self.mutant) is not tuple:
            object.__setattr__(self, "mutant", _answers(self.mutant, "mutant"))
        if not self.original or not self.mutant:
            raise ValueError(f"text {self.text_id}: no answer")
        if self.original_scores is not None:
            object.__setattr__(self, "original_scores", _scores(self.original_scores, "original_scores"))
        if self.mutant_scores is not None:
            object.__setattr__(self, "mutant_scores", _scores(self.mutant_scores, "mutant_scores"))

    @classmethod
    def from_pair_ids(cls, text_id: Hashable, pair_ids: Sequence[str], original, mutant,
                      original_scores=None, mutant_scores=None) -> Observation:
        """An observation whose components are read from its pair ids."""
        pair_ids = (pair_ids,) if isinstance(pair_ids, str) else tuple(pair_ids)
        return cls(text_id, pair_ids, tuple(Component.from_pair_id(p) for p in pair_ids), original, mutant,
                   original_scores, mutant_scores)

    @property
    def kind(self) -> str:
        return "atomic" if len(self.pair_ids) == 1 else "intersectional"

    @property
    def has_scores(self) -> bool:
        return self.original_scores is not None and self.mutant_scores is not None


Interval = tuple[float, float]


@dataclass(frozen=True)
class Finding:
    """The verdict on one cell: a kind and its components (atomic: one; intersectional: one per attribute).

    `tested`: tested mutants of the cell; `texts`: their distinct originals (the sample size of the test);
    `texts_changed`: texts where some mutant's measure (score or label share) differs from the original's;
    `flips`: mutants whose outcome differs from the original's (with repeats: `flip_with_repeats`);
    `transitions`: "original->mutant" counts of those flips; `toward`: the outcome whose share of answers the
    mutation raises most (None when no share changes: with one answer per call, when nothing flips). `effect`: the mean over texts of the per-text mean shift (score, or
    share of the label of interest), with its 95% interval `effect_ci`; `p_value` (`exchange_p`), `q_value`
    (Benjamini-Hochberg over all cells of the run), `significant` (q <= alpha).
    Intersectional only: `interaction` (mean over texts of the interaction contrast), `interaction_ci`,
    `interaction_p` (`sign_flip_p`), `interaction_q` (BH over intersectional cells), `interaction_texts` (texts
    with a mutant whose atomic components are all tested), `population_hidden`: the interaction is
    significant, the cell is significant in the same direction, and none of its atomic cells is significant.
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

    @property
    def cell(self) -> tuple[str, tuple[Component, ...]]:
        return (self.kind, self.components)

    def to_dict(self) -> dict:
        """The JSON record: kind, components, tested, flips, transitions, toward, effect, effect_ci, p_value,
        q_value, significant; intersectional ones add interaction, interaction_ci, interaction_q,
        population_hidden."""
        d = {"kind": self.kind, "components": [c.to_dict() for c in self.components], "tested": self.tested,
             "texts": self.texts, "texts_changed": self.texts_changed, "flips": self.flips, "transitions": dict(self.transitions), "toward": self.toward,
             "effect": _round(self.effect), "effect_ci": _round_interval(self.effect_ci),
             "p_value": _round(self.p_value), "q_value": _round(self.q_value), "significant": self.significant}
        if self.kind == "intersectional":
            d.update({"interaction": _round(self.interaction), "interaction_ci": _round_interval(self.interaction_ci),
                      "interaction_q": _round(self.interaction_q), "population_hidden": self.population_hidden})
        return d


@dataclass(frozen=True)
class Analysis:
    """Every finding of a run, atomic cells first, then intersectional ones by order and components.

    `label`: the label of interest; `measure`: "score" (effects are score shifts) or "label" (effects are
    shifts of the share of answers with the label of interest); `tested`: observations used; `skipped`:
    observations without a usable answer (or score) on either side.
    """

    findings: tuple[Finding, ...]
    label: str | None
    measure: str
    alpha: float
    tested: int
    skipped: int = 0

    def significant(self) -> list[Finding]:
        return [f for f in self.findings if f.significant]

    def population_hidden(self) -> list[Finding]:
        return [f for f in self.findings if f.population_hidden]

    def get(self, kind: str, components: Sequence[Component]) -> Finding | None:
        key = (kind, tuple(sorted(components)))
        return next((f for f in self.findings if f.cell == key), None)

    def to_dict(self) -> dict:
        return {"label": self.label, "measure": self.measure, "alpha": self.alpha, "tested": self.tested,
                "findings": [f.to_dict() for f in self.findings]}


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


def _mode(answers: Sequence[str]) -> str:
    """The most frequent answer; ties go to the one given first."""
    return Counter(answers).most_common(1)[0][0]


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


def flip_with_repeats(original_answers: Sequence[str | None] | str | None,
                      mutant_answers: Sequence[str | None] | str | None, *, level: float = ALPHA) -> bool | None:
    """Whether a mutant's answers differ from its original's (None when either has no parseable answer).

    One answer each (a deterministic model): the outcomes differ. Several: the most frequent answers differ
    AND Fisher's exact test on (original's most frequent answer, any other) x (original, mutant) rejects equal
    answer distributions at `level` (two-sided). With 5 answers each, 5-0 against 0-5 or 1-4 is a flip, 4-1
    against 1-4 is not (p = 0.21): disagreements that the model's own noise explains are not counted.
    """
    o = [a for a in _answers(original_answers, "original") if a is not None]
    m = [a for a in _answers(mutant_answers, "mutant") if a is not None]
    if not o or not m:
        return None
    if len(o) == 1 and len(m) == 1:
        return o[0] != m[0]
    top = _mode(o)
    if _mode(m) == top:
        return False
    a, c = o.count(top), m.count(top)
    return fisher_exact(a, len(o) - a, c, len(m) - c) <= level


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
        parsed = [a for a in _answers(answers, "answers") if a is not None]
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
    return SelfFlip(rate, _wilson(rate, n_eff), texts)


def _wilson(p: float, n: float, z: float = Z975) -> Interval:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


# ---------------------------------------------------------------------------------------------- the test

def _nonzero(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if not len(v):
        return v
    tol = 1e-12 * max(1.0, float(np.max(np.abs(v))))
    return v[np.abs(v) > tol]


def minimal_p(values: Sequence[float]) -> float:
    """The smallest p-value `sign_flip_p` can give for texts with these values, whatever their signs:
    2 / 2^n for n non-zero values (1 when n <= 1). A cell whose minimal p exceeds alpha can never be
    significant; `benjamini_hochberg` leaves it out of its count (Tarone's refinement for discrete tests)."""
    n = len(_nonzero(values))
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
    v = _nonzero(values)
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
    and when nothing flips (tests/test_findings.py measures at least 93% from n = 8).
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


# ---------------------------------------------------------------------------------------------- analysis

Cell = tuple[str, tuple[Component, ...]]


@dataclass
class _Prepared:
    obs: Observation
    y_original: float       # score mean, or share of answers with the label of interest
    y_mutant: float
    flip: bool
    transition: str | None
    shares_original: dict[str, float]
    shares_mutant: dict[str, float]


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


def analyse(observations: Iterable[Observation], *, label: str | None = None, alpha: float = ALPHA,
            use_scores: bool | None = None, repeat_level: float = ALPHA, min_texts: int = MIN_TEXTS,
            permutations: int = PERMUTATIONS, seed: int = 0) -> Analysis:
    """The findings of a run: one per cell (kind + components) that has a tested mutant.

    `label`: the label of interest (pass the task's first label; None: the most frequent label among the
    originals). `use_scores`: test score shifts (True), label shares (False), or scores when every observation
    has them (None). `alpha`: the FDR level of `significant` and `population_hidden`. `repeat_level`: the level
    of `flip_with_repeats` for counting flips. `min_texts`: a cell (or an interaction) whose outcome changed on
    fewer texts is not tested (q = 1): a finding rests on several texts, never on the many mutants of one.
    `permutations`, `seed`: the Monte Carlo of `exchange_p` and `sign_flip_p`, used only where exact
    computation is too large (continuous scores on many texts).
    """
    observations = list(observations)
    if label is None:
        label = _default_label(observations)
    if use_scores is None:
        use_scores = bool(observations) and all(o.has_scores for o in observations)
    elif use_scores and not all(o.has_scores for o in observations):
        raise ValueError("use_scores=True, but some observations have no scores")

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
    seen: set = set()
    for o in observations:
        key = (o.text_id, o.pair_ids)
        if key in seen:
            raise ValueError(f"two observations of the same mutant: text {o.text_id}, pairs {o.pair_ids}")
        seen.add(key)
        parsed_o, share_o, shares_o, top_o = read(o.original)
        parsed_m, share_m, shares_m, top_m = read(o.mutant)
        if not parsed_o or not parsed_m:
            skipped += 1
            continue
        if len(parsed_o) == 1 and len(parsed_m) == 1:
            flip = top_o != top_m
        else:
            flip = flip_with_repeats(parsed_o, parsed_m, level=repeat_level)
        if use_scores:
            y_o, y_m = sum(o.original_scores) / len(o.original_scores), sum(o.mutant_scores) / len(o.mutant_scores)
        else:
            y_o, y_m = share_o, share_m
        prepared.append(_Prepared(o, y_o, y_m, flip, f"{top_o}->{top_m}" if flip else None, shares_o, shares_m))

    by_cell: dict[Cell, list[_Prepared]] = defaultdict(list)
    y_by_mutant: dict[tuple, float] = {}
    for p in prepared:
        by_cell[(p.obs.kind, p.obs.components)].append(p)
        y_by_mutant[(p.obs.text_id, p.obs.pair_ids)] = p.y_mutant

    bound = None if use_scores else 1.0
    cells = sorted(by_cell, key=lambda c: (len(c[1]), c[1]))
    stats = {}
    for cell in cells:
        items = by_cell[cell]
        per_text: dict[Hashable, list[_Prepared]] = defaultdict(list)
        for p in items:
            per_text[p.obs.text_id].append(p)
        v = [sum(p.y_mutant - p.y_original for p in ps) / len(ps) for ps in per_text.values()]
        groups = [(ps[0].y_original, [p.y_mutant for p in ps]) for ps in per_text.values()]
        pv, p_min = exchange_p(groups, permutations=permutations, seed=seed)
        changed = sum(1 for y, ys in groups if any(abs(x - y) > 1e-12 * max(1.0, abs(y)) for x in ys))
        s = {"items": items, "texts": len(per_text), "changed": changed, "v": v, "effect": float(np.mean(v)),
             "ci": mean_interval(v, bound=bound), "p": pv, "testable": p_min <= alpha and changed >= min_texts,
             "toward": _toward(per_text)}
        if cell[0] == "intersectional":
            k = len(cell[1])
            contrasts: dict[Hashable, list[float]] = defaultdict(list)
            for p in items:
                parts = [y_by_mutant.get((p.obs.text_id, (pid,))) for pid in p.obs.pair_ids]
                if any(y is None for y in parts):
                    continue
                contrasts[p.obs.text_id].append((p.y_mutant - p.y_original) - sum(y - p.y_original for y in parts))
            c = [sum(cs) / len(cs) for cs in contrasts.values()]
            s.update({"c": c, "interaction": float(np.mean(c)) if c else None,
                      "interaction_ci": mean_interval(c, bound=None if use_scores else float(k)) if c else None,
                      "interaction_p": sign_flip_p(c, permutations=permutations, seed=seed) if c else None,
                      "interaction_testable": bool(c) and minimal_p(c) <= alpha and len(_nonzero(c)) >= min_texts})
        stats[cell] = s

    q = benjamini_hochberg([stats[c]["p"] for c in cells], [stats[c]["testable"] for c in cells])
    for cell, qv in zip(cells, q):
        stats[cell]["q"] = qv
    inter = [c for c in cells if c[0] == "intersectional" and stats[c]["interaction_p"] is not None]
    qi = benjamini_hochberg([stats[c]["interaction_p"] for c in inter],
                            [stats[c]["interaction_testable"] for c in inter])
    for cell, qv in zip(inter, qi):
        stats[cell]["interaction_q"] = qv

    findings = []
    for cell in cells:
        s = stats[cell]
        items = s["items"]
        flips = sum(p.flip for p in items)
        transitions = dict(sorted(Counter(p.transition for p in items if p.flip).items()))
        significant = s["q"] <= alpha
        f = dict(kind=cell[0], components=cell[1], tested=len(items), texts=s["texts"],
                 texts_changed=s["changed"], flips=flips,
                 transitions=transitions, toward=s["toward"], effect=s["effect"],
                 effect_ci=s["ci"], p_value=s["p"], q_value=s["q"], significant=significant)
        if cell[0] == "intersectional":
            iq = s.get("interaction_q")
            parts_significant = any(stats.get(("atomic", (comp,)), {}).get("q", 1.0) <= alpha for comp in cell[1])
            hidden = (iq is not None and iq <= alpha and significant and not parts_significant
                      and s["interaction"] * s["effect"] > 0)
            f.update(interaction=s["interaction"], interaction_ci=s["interaction_ci"], interaction_p=s["interaction_p"],
                     interaction_q=iq, interaction_texts=len(s["c"]), population_hidden=hidden)
        findings.append(Finding(**f))
    return Analysis(tuple(findings), label, "score" if use_scores else "label", alpha, len(prepared), skipped)


def _toward(per_text: dict[Hashable, list[_Prepared]]) -> str | None:
    """The outcome whose share rises most, averaged like the effect (per text, then over texts)."""
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


def describe(finding: dict, label: str | None, measure: str = "label") -> str:
    """One finding (its JSON form) in words, for the console and the report:
    "race european -> african: 14 of 300 changed to Negative, 2 to Positive; share of Positive -0.04
    [-0.07, -0.01], q = 0.003"."""
    cell = " × ".join(f"{c['attribute']} {c['source_group']} -> {c['target_group']}" for c in finding["components"])
    into: Counter = Counter()
    for transition, n in finding["transitions"].items():
        into[transition.split("->", 1)[1]] += n
    moves = ", ".join(f"{n} to {target}" for target, n in into.most_common())
    moves = f"{moves} of {finding['tested']} mutants" if moves else f"no label flipped among {finding['tested']} mutants"
    what = f"score of {label}" if measure == "score" else f"share of {label}"
    ci = finding.get("effect_ci")
    interval = f" [{ci[0]:+.3g}, {ci[1]:+.3g}]" if ci else ""
    text = f"{cell}: {moves}; {what} {finding['effect']:+.3g}{interval}, q = {finding['q_value']:.2g}"
    if finding.get("population_hidden"):
        text += f"; population-hidden (interaction {finding['interaction']:+.3g}, q = {finding['interaction_q']:.2g})"
    return text
