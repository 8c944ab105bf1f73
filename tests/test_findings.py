"""Findings that hold up (issue 13): the statistics of hinter.analysis.stats and hinter.analysis.findings against planted models.

The planted models are the ground truth. They run on the real mutant structure of the bundled IMDB sample
(200 reviews, race and gender, atomic and order-2 mutants, as `hinter.mutation.mutants.generate` makes them), every
generated mutant counted as valid and tested (validity only removes mutants). A model is a function of each
version of a text: its randomness is keyed by the version (the original, or the mutant: text id + pair ids,
which determine the mutant's text) and the seed. Run with -s to see the measured rates;
bench/findings_power.py prints the full power table.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pytest

from hinter.analysis.findings import ALPHA, Analysis, Component, Finding, Observation, analyse, label_share, self_flip_rate
from hinter.analysis.oracle import flip_with_repeats
from hinter.analysis.stats import (benjamini_hochberg, cohens_h, exchange_interval, exchange_p, fisher_exact,
                                   mean_interval, minimal_p, sign_flip_interval, sign_flip_p)

# ------------------------------------------------------------------------------------------- simulation

ATTRIBUTES = ("race", "gender")
LABEL, OTHER = "positive", "negative"  # the label of interest is the task's first label
NEGATIVE_SHARE = 0.2                   # 80/20 class balance of the originals
SIGMA = 0.2                            # version noise of the boundary model: about 3% of mutants flip
THETA = -0.8416212335729143 * math.sqrt(1 + SIGMA ** 2)  # the 20% quantile of baseline + noise


@dataclass(frozen=True)
class Structure:
    """The mutants of a campaign: for mutant j, its text, pair ids, components and the target groups it brings."""

    texts: int
    text_of: np.ndarray
    keys: tuple
    components: tuple
    targets: tuple

    def introduces(self, groups) -> np.ndarray:
        groups = frozenset(groups)
        return np.array([groups <= t for t in self.targets])


@lru_cache(maxsize=None)
def imdb_structure(max_pairs: int | None = 4) -> Structure:
    """The bundled IMDB sample's mutants for race and gender, order <= 2; `max_pairs` per text and attribute
    (the CLI's --max-pairs-per-text, seed 0), None for all pairs."""
    from hinter.datasets import load_dataset
    from hinter.mutation.dictionary import load_dictionary
    from hinter.mutation.mutants import generate
    from hinter.records import dictionary_replacements

    records, dictionary = load_dataset("imdb"), load_dictionary()
    text_of, keys, components, targets = [], [], [], []
    for i, record in enumerate(records):
        for m in generate(i, record.text, dictionary, ATTRIBUTES, 2, max_pairs_per_text=max_pairs, seed=0).mutants:
            text_of.append(i)
            keys.append(m.key)
            pairs = dictionary_replacements(m.replacements)  # the mutant's identity, without a/an and pronoun repairs
            components.append(tuple(Component(r.attribute, r.source_group, r.target_group) for r in pairs))
            targets.append(frozenset(r.target_group for r in pairs))
    return Structure(len(records), np.array(text_of), tuple(keys), tuple(components), tuple(targets))


def observations(s: Structure, original, mutant, original_scores=None, mutant_scores=None) -> list[Observation]:
    """Observations from per-text and per-mutant answers (shape (n,) or (n, repeats)) and scores."""
    def answers(a, i):
        return (str(a[i]),) if a.ndim == 1 else tuple(str(x) for x in a[i])

    out = []
    for j, key in enumerate(s.keys):
        t = int(s.text_of[j])
        out.append(Observation(t, key, s.components[j], answers(original, t), answers(mutant, j),
                               None if original_scores is None else (float(original_scores[t]),),
                               None if mutant_scores is None else (float(mutant_scores[j]),)))
    return out


def labels(scores: np.ndarray) -> np.ndarray:
    return np.where(scores >= 0, LABEL, OTHER)


def boundary_scores(s: Structure, rng) -> tuple[np.ndarray, np.ndarray]:
    """Score of the label of interest: a baseline keyed by the review plus noise keyed by each version of it."""
    base = rng.standard_normal(s.texts)
    original = base + SIGMA * rng.standard_normal(s.texts) - THETA
    mutant = base[s.text_of] + SIGMA * rng.standard_normal(len(s.keys)) - THETA
    return original, mutant


def hash_model(s: Structure, seed: int) -> list[Observation]:
    """Null: every version of every text gets its own seeded coin, negative with probability 0.2 (32% flips)."""
    rng = np.random.default_rng([seed, 1])
    return observations(s, np.where(rng.random(s.texts) < NEGATIVE_SHARE, OTHER, LABEL),
                        np.where(rng.random(len(s.keys)) < NEGATIVE_SHARE, OTHER, LABEL))


def boundary_model(s: Structure, seed: int, with_scores: bool = False) -> list[Observation]:
    """Null: the outcome depends on the text only; near-boundary versions flip (about 3% of mutants)."""
    original, mutant = boundary_scores(s, np.random.default_rng([seed, 2]))
    if with_scores:
        return observations(s, labels(original), labels(mutant), original, mutant)
    return observations(s, labels(original), labels(mutant))


def planted_model(s: Structure, seed: int, effect: float, groups=("african",), per: str = "text") -> list[Observation]:
    """The boundary model, but a version that brings the target `groups` turns negative: for a share `effect`
    of the reviews (per="text": keyed by the review with its group words masked, so all its mutants that bring
    the group react alike), or of the mutant texts (per="mutant": keyed by each mutant text)."""
    rng = np.random.default_rng([seed, 3])
    original, mutant = boundary_scores(s, rng)
    if per == "text":
        chosen = (rng.random(s.texts) < effect)[s.text_of]
    else:
        chosen = rng.random(len(s.keys)) < effect
    return observations(s, labels(original), np.where(s.introduces(groups) & chosen, OTHER, labels(mutant)))


def together_model(s: Structure, seed: int, groups=("female", "african")) -> list[Observation]:
    """The boundary model, but a version that brings all of `groups` at once is negative (neither alone acts)."""
    original, mutant = boundary_scores(s, np.random.default_rng([seed, 4]))
    return observations(s, labels(original), np.where(s.introduces(groups), OTHER, labels(mutant)))


def additive_model(s: Structure, seed: int, shift: float = -0.3, with_scores: bool = True) -> list[Observation]:
    """The boundary model's score, shifted by `shift` for each of female and african that a version brings."""
    original, mutant = boundary_scores(s, np.random.default_rng([seed, 5]))
    mutant = mutant + shift * s.introduces(["female"]) + shift * s.introduces(["african"])
    if with_scores:
        return observations(s, labels(original), labels(mutant), original, mutant)
    return observations(s, labels(original), labels(mutant))


NOISE = 0.1
# each call: the text's label with probability 1 - NOISE/2, the other with NOISE/2 (a random label with prob NOISE)
NOISY_SELF_FLIP = 1 - (1 - NOISE / 2) ** 2 - (NOISE / 2) ** 2  # P(two calls differ) = 0.095


def noisy_model(s: Structure, seed: int, repeats: int = 5) -> list[Observation]:
    """A model without bias (the label is the review's, 80/20) that answers a random label with probability 0.1
    on each call (seeded per call), asked `repeats` times about every version."""
    rng = np.random.default_rng([seed, 6])
    truth = np.where(rng.random(s.texts) < NEGATIVE_SHARE, OTHER, LABEL)

    def calls(t):
        random_label = np.where(rng.random((len(t), repeats)) < 0.5, LABEL, OTHER)
        return np.where(rng.random((len(t), repeats)) < NOISE, random_label, t[:, None])
    return observations(s, calls(truth), calls(truth[s.text_of]))


def cell(*components) -> tuple[Component, ...]:
    return tuple(Component(*c) for c in components)


def power(s: Structure, effect: float, groups, main: tuple[Component, ...], seeds, per: str = "text") -> float:
    """Share of seeds whose atomic cell `main` is significant and pushes toward "negative"."""
    hits = 0
    for seed in seeds:
        f = analyse(planted_model(s, seed, effect, groups, per), label=LABEL).get("atomic", main)
        hits += bool(f and f.significant and f.toward == OTHER)
    return hits / len(seeds)


def null_rates(make, seeds) -> tuple[float, float, float]:
    """(share of runs with a significant cell, mean share of significant cells, share of runs with a
    population-hidden cell) over the seeds of a null model."""
    runs = hidden = 0
    shares = []
    for seed in seeds:
        a = analyse(make(seed), label=LABEL)
        significant = len(a.significant())
        runs += significant > 0
        hidden += bool(a.population_hidden())
        shares.append(significant / len(a.findings))
    return runs / len(seeds), float(np.mean(shares)), hidden / len(seeds)


# ------------------------------------------------------------------------------------------- unit tests

def test_benjamini_hochberg_hand_computed():
    # m = 8; m p_(i) / i = .008 .032 .104 .082 .0672 .08 .08457 .205; then the running minimum from the right
    p = [0.041, 0.001, 0.205, 0.039, 0.008, 0.06, 0.042, 0.074]
    expected = [0.0672, 0.008, 0.205, 0.0672, 0.032, 0.08, 0.0672, 0.074 * 8 / 7]
    q = benjamini_hochberg(p)
    assert q == pytest.approx(expected)
    # cells that cannot reach alpha are left out of m (Tarone) and get q = 1
    assert benjamini_hochberg([0.01, 0.5, 0.02], [True, False, True]) == pytest.approx([0.02, 1.0, 0.02])
    assert benjamini_hochberg([]) == []


def test_one_mutant_per_text_with_labels_is_the_exact_sign_test():
    for up, down in [(8, 2), (6, 0), (3, 3), (10, 1)]:
        n = up + down
        exact = min(1.0, 2 * sum(math.comb(n, k) for k in range(max(up, down), n + 1)) / 2 ** n)
        texts = [(0.0, [1.0])] * up + [(1.0, [0.0])] * down + [(1.0, [1.0])] * 5  # ties do not count
        assert exchange_p(texts)[0] == pytest.approx(exact)
        assert sign_flip_p([1] * up + [-1] * down + [0] * 5) == pytest.approx(exact)
    assert exchange_p([(1.0, [0.0])] * 6)[1] == pytest.approx(2 / 2 ** 6)
    assert minimal_p([1, -1, 0.5, 0, 0, 2]) == pytest.approx(2 / 2 ** 4)


def _exchange_null(groups):
    """Every arrangement of which version is the original, each equally likely under exchangeability."""
    for choice in itertools.product(*(range(len(g)) for g in groups)):
        yield [(g[j], g[:j] + g[j + 1:]) for g, j in zip(groups, choice)]


def _assert_valid(p_values, weights=None):
    """P(p <= a) <= a for every attained a (exactly, over an enumerated null distribution)."""
    p = np.asarray(p_values)
    w = np.full(len(p), 1 / len(p)) if weights is None else np.asarray(weights)
    for a in np.unique(p):
        assert w[p <= a + 1e-12].sum() <= a + 1e-9, (a, w[p <= a + 1e-12].sum())


@pytest.mark.parametrize("groups", [
    [[1, 0], [1, 0], [1, 0], [1, 0], [1, 0], [0, 1]],                  # labels, one mutant per text
    [[1, 0, 0], [1, 1, 0, 0, 0], [1, 0], [0, 0, 1, 1], [1, 0, 1]],     # labels, several mutants per text
    [[0.2, 1.0, 0.6], [0.0, 0.4], [1.0, 0.8, 0.8, 0.2], [0.6, 0.0]],   # shares of 5 repeated answers
    [[0.31, -1.2, 2.5], [0.07, 0.9], [-0.4, 1.1, 0.3, 0.2], [1.7, -0.2]],  # scores (enumerated)
])
def test_exchange_p_is_valid_at_small_n(groups):
    _assert_valid([exchange_p(texts)[0] for texts in _exchange_null(groups)])


@pytest.mark.parametrize("values", [[1, 1, 1, 1, 1, -1, 1], [0.5, 1, 0.25, 1, 0.75, 0.5],
                                    [0.31, 1.2, 2.5, 0.07, 0.9, 0.4, 1.1]])
def test_sign_flip_p_is_valid_at_small_n(values):
    _assert_valid([sign_flip_p(np.array(values) * signs)
                   for signs in itertools.product((1, -1), repeat=len(values))])


def test_monte_carlo_p_values_are_valid():
    """Continuous scores on many texts (the Monte Carlo paths): P(p <= a) <= a up to simulation error, and a
    strong effect gets p below 1 / (permutations + 1) through the Hoeffding / Gaussian bounds."""
    rng = np.random.default_rng(0)
    reps, n = 300, 30
    p_ex, p_sf = [], []
    for _ in range(reps):
        x = rng.standard_normal((n, 3)) * rng.uniform(0.2, 2.0, (n, 1))
        p_ex.append(exchange_p([(r[0], r[1:]) for r in x])[0])
        p_sf.append(sign_flip_p(rng.standard_normal(n) * rng.uniform(0.2, 2.0, n)))
    for p in (np.array(p_ex), np.array(p_sf)):
        for a in (0.01, 0.05, 0.2):
            assert np.mean(p <= a) <= a + 3 * math.sqrt(a * (1 - a) / reps)
    strong = rng.standard_normal(60) + 2.0
    assert sign_flip_p(strong, permutations=999) < 1e-4
    assert exchange_p([(x, [x - 3.0 + 0.1 * rng.standard_normal()]) for x in strong], permutations=999)[0] < 1e-4


def test_effect_interval_coverage_at_small_n():
    """Paired labels, one mutant per text: a finding's interval (the exchange test inverted, stats.exchange_interval)
    covers the true effect in >= 90% of 250 samples from n = 8 to 80, including effects near 0, and holds 0 exactly
    when the test's p > 0.05. Before its small-n floor it collapsed to [0, 0] where nothing flipped: an effect of
    0.01 was covered in 10% of samples at n = 8."""
    rng = np.random.default_rng(1)
    for n, (up, down) in itertools.product((8, 15, 40, 80), [(0.15, 0.03), (0.05, 0.0), (0.3, 0.1), (0.02, 0.02),
                                                             (0.4, 0.0), (0.01, 0.0)]):
        covered = 0
        for _ in range(250):
            u = rng.random(n)
            shift = np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))
            original = np.where(shift == 1, 0.0, np.where(shift == -1, 1.0, (rng.random(n) < 0.5) * 1.0))
            cells = [(a, [a + s]) for a, s in zip(original, shift)]
            p = exchange_p(cells)[0]
            lo, hi = exchange_interval(cells, bound=1.0, p_value=p)
            assert (lo <= 0.0 <= hi) == (p > 0.05)
            covered += lo <= up - down <= hi
        assert covered / 250 >= 0.90, (n, up, down, covered)
    nothing = [(0.0, [0.0])] * 30  # nothing flipped: still an interval, not [0, 0]
    assert exchange_interval(nothing, bound=1.0)[1] > 0 and sign_flip_interval([0.0] * 30, bound=2.0)[1] > 0
    assert mean_interval([0.0] * 30, bound=1.0)[1] > 0
    assert mean_interval([1.5]) is None                  # scores: one text gives no interval
    lo, hi = mean_interval([1.0, 2.0, 3.0])
    assert (lo + hi) / 2 == pytest.approx(2.0) and hi - 2.0 == pytest.approx(4.30265 / math.sqrt(3))


def test_fisher_and_flip_with_repeats():
    assert fisher_exact(5, 0, 0, 5) == pytest.approx(2 / 252)
    assert fisher_exact(5, 0, 1, 4) == pytest.approx(12 / 252)
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(0.48571428571428565)
    # N = 1: "the labels differ"
    assert flip_with_repeats("positive", "negative") is True
    assert flip_with_repeats(("positive",), ("positive",)) is False
    assert flip_with_repeats("positive", None) is None
    # repeats: the distributions must differ beyond noise
    assert flip_with_repeats(["a"] * 5, ["b"] * 5)
    assert flip_with_repeats(["a"] * 5, ["b"] * 4 + ["a"])
    assert not flip_with_repeats(["a"] * 4 + ["b"], ["b"] * 4 + ["a"])
    assert not flip_with_repeats(["a"] * 3 + ["b"] * 2, ["a"] * 3 + ["b"] * 2)
    assert flip_with_repeats(["a", None, "a", "a", "a", "a"], ["b"] * 5)  # unparseable answers do not count


def test_self_flip_rate():
    assert self_flip_rate([["a", "a"], ["b", "b", "b"]]).rate == 0
    assert self_flip_rate([["a", "a"], ["b", "b", "b"]]).ci[1] > 0
    assert self_flip_rate([["a"], [None, "a"]]).rate is None  # no text with two parseable answers
    sf = self_flip_rate([["a", "b", "a", "a"]] * 10)          # 6 of the 12 ordered pairs differ
    assert sf.rate == pytest.approx(0.5) and sf.texts == 10
    assert set(sf.to_dict()) == {"rate", "ci", "texts"}


def test_label_share_multi_label_and_records():
    assert label_share(["a | b", "b", "(none)", None], "a") == pytest.approx(1 / 3)
    o = Observation.from_pair_ids(3, ["race:european>african:white>black", "gender:male>female:man>woman"],
                                  "positive", "negative")
    assert o.kind == "intersectional" and o.components[0] == Component("gender", "male", "female")
    assert o.pair_ids[0].startswith("gender:")  # pair ids stay aligned with their components
    with pytest.raises(ValueError):
        Observation.from_pair_ids(3, ["race:a>b:x>y", "race:a>c:x>z"], "p", "n")
    with pytest.raises(ValueError):
        analyse([o, o])


def test_findings_records_and_json_keys():
    """A hand-made run: a text whose atomic gender mutants flip together with its intersectional ones."""
    g, r = "gender:male>female:man>woman", "race:european>african:white>black"
    obs = []
    for t in range(12):
        flips = t < 8
        obs.append(Observation.from_pair_ids(t, [g], "positive", "negative" if flips else "positive"))
        obs.append(Observation.from_pair_ids(t, [r], "positive", "positive"))
        obs.append(Observation.from_pair_ids(t, [g, r], "positive", "negative" if flips else "positive"))
    a = analyse(obs, label="positive")
    assert isinstance(a, Analysis) and a.measure == "label" and a.tested == 36
    atomic = a.get("atomic", cell(("gender", "male", "female")))
    assert isinstance(atomic, Finding)
    assert (atomic.tested, atomic.flips, atomic.transitions, atomic.toward) == (12, 8, {"positive->negative": 8}, "negative")
    assert atomic.effect == pytest.approx(-8 / 12) and atomic.p_value == pytest.approx(2 / 2 ** 8)
    assert atomic.significant and atomic.effect_ci[0] < -8 / 12 < atomic.effect_ci[1]
    inter = a.get("intersectional", cell(("gender", "male", "female"), ("race", "european", "african")))
    assert inter.interaction == pytest.approx(0) and not inter.population_hidden  # the gender part explains it
    race = a.get("atomic", cell(("race", "european", "african")))
    assert (race.flips, race.toward, race.p_value, race.q_value, race.significant) == (0, None, 1.0, 1.0, False)
    # one shape for every measure (a free-text aspect's finding has these keys too: test_generative)
    assert list(atomic.to_dict()) == ["measure", "kind", "components", "tested", "texts", "texts_changed", "flips",
                                      "transitions", "toward", "direction", "effect", "effect_ci", "cohens_h",
                                      "p_value", "q_value", "significant", "testable", "note", "summary"]
    assert atomic.to_dict()["measure"] == "positive" and atomic.direction == "less often positive"
    assert list(inter.to_dict()) == list(atomic.to_dict()) + ["interaction", "interaction_ci", "interaction_q",
                                                              "population_hidden"]
    # a label finding in words (it raised InputError before: describe() knew only aspects)
    assert atomic.describe().startswith("gender male -> female: 8 to negative of 12 mutants; share of positive -0.667")
    assert atomic.to_dict()["summary"] == atomic.describe()
    assert inter.to_dict()["components"] == [{"attribute": "gender", "source_group": "male", "target_group": "female"},
                                             {"attribute": "race", "source_group": "european",
                                              "target_group": "african"}]
    import json
    json.dumps(a.to_dict())


def test_cohens_h_hand_computed():
    """Cohen's h = 2 asin sqrt(p_mutant) - 2 asin sqrt(p_original), at shares where it is exact."""
    assert cohens_h(0.5, 0.5) == 0 and cohens_h(0.0, 0.0) == 0 and cohens_h(1.0, 1.0) == 0
    assert cohens_h(0.0, 1.0) == pytest.approx(math.pi) and cohens_h(1.0, 0.0) == pytest.approx(-math.pi)
    assert cohens_h(0.0, 0.5) == pytest.approx(math.pi / 2) and cohens_h(1.0, 0.5) == pytest.approx(-math.pi / 2)
    assert cohens_h(0.25, 0.75) == pytest.approx(math.pi / 3) and cohens_h(1.0, 0.25) == pytest.approx(-2 * math.pi / 3)
    for p, q in ((0.1, 0.3), (0.02, 0.9), (0.6, 0.55)):  # antisymmetric, and the same for the other label's shares
        assert cohens_h(q, p) == pytest.approx(-cohens_h(p, q)) == pytest.approx(cohens_h(1 - p, 1 - q))
    # the scale of shares: a smaller difference near 0 is a larger effect than a larger one near 0.5
    assert abs(cohens_h(0.1, 0.01)) > 2 * abs(cohens_h(0.5, 0.4))
    # a mean of shares a float step outside [0, 1] is read as 0 or 1; anything else is refused
    assert cohens_h(1 + 1e-12, 1.0) == 0 and cohens_h(-1e-12, 0.0) == 0
    for bad in ((1.5, 0.5), (0.5, -0.1), (float("nan"), 0.5)):
        with pytest.raises(ValueError, match="proportion"):
            cohens_h(*bad)


def test_each_finding_has_its_cohens_h_from_the_mean_shares_per_text():
    """A finding's cohens_h is the mean shares' h, averaged per text then over texts (as the effect is), null for
    a score; a cell with no text is no finding."""
    women = [f"gender:male>female:{w}" for w in ("man>woman", "boy>girl", "he>she")]
    # text 0: one mutant, kept positive; text 1: three, all negative -> per text 1 and 0, mutants' mean share 1/2
    # (pooled over mutants it would be 1/4)
    obs = [Observation.from_pair_ids(0, [women[0]], "positive", "positive")]
    obs += [Observation.from_pair_ids(1, [w], "positive", "negative") for w in women]
    f = analyse(obs, label="positive").findings[0]
    assert f.effect == pytest.approx(-0.5) and f.cohens_h == pytest.approx(-math.pi / 2)
    assert f.to_dict()["cohens_h"] == pytest.approx(-math.pi / 2, abs=1e-5)  # rounded to 6 digits
    # the other label's share moves the other way, by as much
    assert analyse(obs, label="negative").findings[0].cohens_h == pytest.approx(math.pi / 2)
    # nothing moves: h = 0; 12 texts, 9 flipped: 1 -> 1/4
    same = [Observation.from_pair_ids(t, [women[0]], "positive", "positive") for t in range(5)]
    assert analyse(same, label="positive").findings[0].cohens_h == 0
    nine = [Observation.from_pair_ids(t, [women[0]], "positive", "negative" if t < 9 else "positive")
            for t in range(12)]
    assert analyse(nine, label="positive").findings[0].cohens_h == pytest.approx(-2 * math.pi / 3)
    # a score has no share: no h (the key stays, null)
    scored = [Observation.from_pair_ids(t, [women[0]], "positive", "positive", 2.0, 1.5) for t in range(5)]
    g = analyse(scored, label="positive").findings[0]
    assert g.effect == pytest.approx(-0.5) and g.cohens_h is None and g.to_dict()["cohens_h"] is None
    assert analyse([], label="positive").findings == ()


def test_cohens_h_has_the_effects_sign_over_simulated_cells():
    """Over many seeds of random cells (uneven mutants per text, repeated answers), h is 0 exactly when the
    effect is and has its sign, and equals h of the mean shares per text then over texts."""
    rng = np.random.default_rng(42)
    pairs = [f"race:european>african:w{i}>b{i}" for i in range(4)]
    for case in range(200):
        obs, o_shares, m_shares = [], [], []
        for t in range(int(rng.integers(1, 8))):
            original = tuple(rng.choice(["yes", "no"], size=3))
            k = int(rng.integers(1, 4))
            mutants = [tuple(rng.choice(["yes", "no"], size=3)) for _ in range(k)]
            obs += [Observation.from_pair_ids(t, [pairs[j]], original, m) for j, m in enumerate(mutants)]
            o_shares.append(label_share(original, "yes"))
            m_shares.append(float(np.mean([label_share(m, "yes") for m in mutants])))
        f = analyse(obs, label="yes").findings[0]
        assert f.cohens_h == pytest.approx(cohens_h(np.mean(o_shares), np.mean(m_shares)), abs=1e-12), case
        assert np.sign(f.cohens_h) == np.sign(f.effect) or abs(f.effect) < 1e-12, case


def test_clustering_by_text():
    """Twenty mutants of one text that all flip are one text's evidence, not twenty independent pairs (a sign
    test on them would give 2^-19): p = 1/21, the chance that the odd one out of 21 versions is the original,
    and a cell whose outcome changed on fewer than 3 texts is not tested."""
    obs = [Observation.from_pair_ids(0, [f"gender:male>female:w{i}>x{i}"], "positive", "negative") for i in range(20)]
    obs += [Observation.from_pair_ids(t, ["gender:male>female:w0>x0"], "positive", "positive") for t in range(1, 10)]
    f = analyse(obs, label="positive").findings[0]
    assert (f.tested, f.texts, f.flips) == (29, 10, 20)
    assert f.p_value == pytest.approx(1 / 21) and f.q_value == 1.0 and not f.significant


# ------------------------------------------------------------------------------------------- simulations

CALIBRATION_SEEDS = range(100)


@pytest.mark.parametrize("name", ["hash labels", "boundary labels", "boundary scores"])
def test_calibration(name):
    """A model whose outcome depends on the text but not on who is in it (80/20 balance): runs with any
    significant cell <= 2 alpha, mean share of significant cells <= alpha, and population-hidden cells rare."""
    s = imdb_structure(4)
    make = {"hash labels": lambda seed: hash_model(s, seed),
            "boundary labels": lambda seed: boundary_model(s, seed),
            "boundary scores": lambda seed: boundary_model(s, seed, with_scores=True)}[name]
    runs, share, hidden = null_rates(make, CALIBRATION_SEEDS)
    print(f"\ncalibration, {name}, max 4 pairs, {len(CALIBRATION_SEEDS)} seeds: runs with a significant cell "
          f"{runs:.3f}, mean share of significant cells {share:.4f}, runs with a population-hidden cell {hidden:.3f}")
    assert runs <= 2 * ALPHA and share <= ALPHA and hidden <= 2 * ALPHA


def test_calibration_all_pairs():
    """The same with every pair (up to 80 mutants of one text in one cell), where clustering by text matters
    most (20 seeds: bench/findings_power.py --pairs all runs 40 and every model)."""
    s = imdb_structure(None)
    runs, share, hidden = null_rates(lambda seed: hash_model(s, seed), range(20))
    print(f"\ncalibration, hash labels, all pairs, 20 seeds: runs with a significant cell {runs:.3f}, "
          f"mean share {share:.4f}, runs with a population-hidden cell {hidden:.3f}")
    assert runs <= 2 * ALPHA and share <= ALPHA and hidden <= 2 * ALPHA


def test_power():
    """A model that makes 20% of the reviews negative when the mutation brings one target group is found in
    that cell, toward "negative", in >= 90% of 40 seeds (gender target female: 149 reviews in the cell at
    4 pairs per text). Printed: the power curve at 5%, 10%, 20% for it and for race target african (23 reviews);
    bench/findings_power.py adds sample sizes, all pairs and a bias carried by each mutant text on its own."""
    s = imdb_structure(4)
    seeds = range(40)
    female, african = cell(("gender", "male", "female")), cell(("race", "european", "african"))
    for groups, main in ((["female"], female), (["african"], african)):
        texts = analyse(boundary_model(s, 0), label=LABEL).get("atomic", main).texts
        for per in ("text",):
            curve = [power(s, e, groups, main, seeds, per) for e in (0.05, 0.1, 0.2)]
            print(f"\npower, {main[0].attribute} -> {groups[0]} ({texts} reviews), per {per}: "
                  f"5% {curve[0]:.2f}  10% {curve[1]:.2f}  20% {curve[2]:.2f}")
            if main == female:
                assert curve[2] >= 0.9


def test_interaction_population_hidden_only_where_planted():
    """A model that turns negative only when female and african come together: population-hidden in that
    combination (male -> female x european -> african) and nowhere else."""
    s = imdb_structure(None)
    target = cell(("gender", "male", "female"), ("race", "european", "african"))
    found = elsewhere = 0
    seeds = range(10)
    for seed in seeds:
        a = analyse(together_model(s, seed), label=LABEL)
        hidden = a.population_hidden()
        found += any(f.components == target for f in hidden)
        elsewhere += any({c.target_group for c in f.components} != {"female", "african"} for f in hidden)
        assert not any(f.kind == "atomic" and f.significant and "african" in {c.target_group for c in f.components}
                       for f in a.findings)
    print(f"\ninteraction planted, all pairs, {len(seeds)} seeds: population-hidden in its cell {found / len(seeds):.2f},"
          f" elsewhere {elsewhere / len(seeds):.2f}")
    assert found == len(seeds) and elsewhere == 0


def test_additive_scored_model_is_not_population_hidden():
    """Each part shifts the score a little (-0.3, the noise's sd is 0.2): its atomic cells are significant,
    and no cell is population-hidden: the parts predict the combination."""
    s = imdb_structure(None)
    seeds = range(8)
    hidden = detected = 0
    for seed in seeds:
        a = analyse(additive_model(s, seed), label=LABEL)
        assert a.measure == "score"
        hidden += bool(a.population_hidden())
        detected += a.get("atomic", cell(("race", "european", "african"))).significant
    labels_only = sum(bool(analyse(additive_model(s, seed, with_scores=False), label=LABEL).population_hidden())
                      for seed in seeds[:4])
    print(f"\nadditive model, all pairs, {len(seeds)} seeds: runs with a population-hidden cell {hidden / len(seeds):.2f}"
          f" with scores ({labels_only / 4:.2f} of 4 with labels only); african atomic cell found "
          f"{detected / len(seeds):.2f}")
    assert hidden == 0 and detected >= 0.8 * len(seeds)


def test_noise_with_repeats():
    """A model answering a random label with probability 0.1 per call, asked 5 times: the self-flip interval
    covers the true rate (0.095) in >= 90% of seeds, and no cell is significant in >= 95% of seeds."""
    s = imdb_structure(4)
    seeds = range(40)
    covered = quiet = 0
    for seed in seeds:
        obs = noisy_model(s, seed)
        originals = {o.text_id: o.original for o in obs}
        sf = self_flip_rate(originals.values())
        assert sf.texts == len(originals)
        covered += sf.ci[0] <= NOISY_SELF_FLIP <= sf.ci[1]
        quiet += not analyse(obs, label=LABEL).significant()
    print(f"\nnoise 0.1, 5 repeats, {len(seeds)} seeds: self-flip interval covers {NOISY_SELF_FLIP:.3f} in "
          f"{covered / len(seeds):.2f}; no significant cell in {quiet / len(seeds):.2f}")
    assert covered >= 0.9 * len(seeds) and quiet >= 0.95 * len(seeds)


def test_deterministic_model_counts_label_flips():
    """N = 1 is the deterministic case: flips are exactly the differing labels."""
    s = imdb_structure(4)
    obs = boundary_model(s, 0)
    a = analyse(obs, label=LABEL)
    assert sum(f.flips for f in a.findings) == sum(o.original != o.mutant for o in obs)
    assert sum(f.tested for f in a.findings) == len(obs) == a.tested


def test_multi_label_every_label_in_one_family():
    """Article 14 is added on 10 of 12 texts when the gender changes; Article 6 never moves. One label of interest
    (the first) sees nothing; the multi-label analysis tests each cell once per label, in one BH family, and finds
    the move on Article 14 only."""
    g, r = "gender:male>female:man>woman", "race:european>african:white>black"
    obs = []
    for t in range(12):
        moved = "Article 14 | Article 6" if t < 10 else "Article 6"
        obs.append(Observation.from_pair_ids(t, [g], "Article 6", moved))
        obs.append(Observation.from_pair_ids(t, [r], "Article 6", "Article 6"))
    assert not analyse(obs, label="Article 6").significant()
    a = analyse(obs, labels=("Article 6", "Article 14"))
    assert a.label is None and a.labels == ("Article 6", "Article 14") and a.measure == "label"
    assert len(a.findings) == 2 * 2  # two cells, each once per label
    assert [(f.components[0].attribute, f.label) for f in a.significant()] == [("gender", "Article 14")]
    assert a.labels_moved() == ["Article 14"]
    f = a.get("atomic", cell(("gender", "male", "female")), label="Article 14")
    assert f.to_dict()["label"] == "Article 14" and f.p_value == pytest.approx(2 / 2 ** 10)
    # one family: the q-value counts the testable tests of both labels (here the one gender test on Article 14)
    d = a.to_dict()
    assert d["labels"] == ["Article 6", "Article 14"] and d["labels_moved"] == ["Article 14"] and "family" in d
    with pytest.raises(ValueError):
        analyse(obs, labels=("Article 6",), use_scores=True)


def test_the_label_of_interest_is_the_one_asked_for_as_the_answers_spell_it():
    from hinter.analysis.findings import choose_label
    answered = ["negative", "positive", "negative", None]
    assert choose_label([(None, "--label"), ("Positive", "task")], answered, "negative") == (
        "positive", "task, spelled as the answers spell it")
    assert choose_label([("negative", "--label"), ("Positive", "task")], answered, "x") == ("negative", "--label")
    label, source = choose_label([(None, "--label"), ("Toxic", "task")], answered, "negative")
    assert label == "negative" and "no answer uses 'Toxic'" in source
    assert choose_label([(None, "--label"), (None, "task")], answered, "negative") == (
        "negative", "the most frequent answer")
