"""--repair (issue 15 item 4): a/an and number agreement fixed after replacement, recorded as extra edits outside the
mutant's key, counted, and judged by the invariant on the repaired text."""
import json
import sys
from pathlib import Path

import pytest

import hinter
from hinter.config import RunConfig
from hinter.mutation.dictionary import Dictionary, Pair
from hinter.mutation.mutants import components, generate
from hinter.records import REPAIR
from hinter.mutation.repair import article_for, grammatical_number

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

DIC = Dictionary((Pair("race", "european", "asian", "white", "Asian"),
                  Pair("race", "asian", "asian", "Indian", "Chinese"),
                  Pair("body", "common", "disorder", "man", "disabled people"),
                  Pair("gender", "male", "female", "man", "woman")), "repair-test")


@pytest.mark.parametrize("word, article", [("Asian", "an"), ("man", "a"), ("Ukrainian", "a"), ("European", "a"),
                                           ("hour", "an"), ("80-year-old", "an"), ("18-year-old", "an"),
                                           ("30-year-old", "a"), ("FBI", "an"), ("UN", "a"), ("old", "an")])
def test_article_for(word, article):
    assert article_for(word) == article


def test_grammatical_number():
    assert [grammatical_number(w) for w in ("man", "men", "disabled people", "people with physical illness",
                                            "woman", "folks", "quickly")] == ["sg", "pl", "pl", "pl", "sg", "pl", None]


def _texts(gen):
    return {m.key: m.text for m in gen.mutants}


def test_a_becomes_an_and_an_becomes_a():
    text = "A white man met an Indian woman."
    fixed = _texts(generate(0, text, DIC, ("race",), 1, repair=True))
    assert fixed[("race:european>asian:white>Asian",)] == "An Asian man met an Indian woman."
    assert fixed[("race:asian>asian:Indian>Chinese",)] == "A white man met a Chinese woman."
    plain = _texts(generate(0, text, DIC, ("race",), 1))
    # English carries a/an without --repair too (issue 40: languages.english.carry)
    assert plain[("race:european>asian:white>Asian",)] == "An Asian man met an Indian woman."
    assert fixed.keys() == plain.keys()  # the same mutants: repairs are not part of a key


def test_an_article_the_original_got_wrong_is_left_alone():
    assert _texts(generate(0, "It was an white man.", DIC, ("race",), 1, repair=True)) == {
        ("race:european>asian:white>Asian",): "It was an Asian man."}
    assert _texts(generate(0, "It was a Indian man.", DIC, ("race",), 1, repair=True)) == {
        ("race:asian>asian:Indian>Chinese",): "It was a Chinese man."}


def test_number_agreement_of_determiner_and_verb():
    gen = generate(0, "This man is tall. A man walks home. The man has left.", DIC, ("body",), 1, repair=True)
    m = gen.mutants[0]
    assert m.text == "These disabled people are tall. Some disabled people walk home. The disabled people have left."
    assert m.key == ("body:common>disorder:man>disabled people",) and m.order == 1
    repairs = {(r.source_group, r.target_group, r.word, r.replacement) for r in m.replacements if r.attribute == REPAIR}
    assert repairs == {("number", "body", "this", "these"), ("number", "body", "is", "are"),
                       ("number", "body", "a", "some"), ("number", "body", "walks", "walk"),
                       ("number", "body", "has", "have")}
    assert gen.repairs == {"number": 5}


def test_intersectional_mutant_repairs_and_components():
    gen = generate(0, "A white man sang.", DIC, ("gender", "race"), 2, repair=True)
    inter = next(m for m in gen.mutants if m.order == 2)
    assert inter.text == "An Asian woman sang."
    body_race = generate(0, "A white man sang.", DIC, ("body", "race"), 2, repair=True).mutants[-1]
    assert body_race.text == "Some Asian disabled people sang."  # number wins over a/an
    assert inter.attributes == ("gender", "race")
    assert components(inter) == [("gender:male>female:man>woman",), ("race:european>asian:white>Asian",)]


def test_a_repair_run_counts_repairs_and_judges_the_repaired_text(parser, tmp_path):
    texts = ["A white man walked in. The film was fine.", "This man is tall. I liked the story."]
    base = dict(attributes=("body", "gender", "race"), order=2)
    fixed = hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "r",
                       config=RunConfig(**base, repair=True))
    plain = hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "p",
                       config=RunConfig(**base))
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["settings"]["repair"] is True and s["repairs"] == {"a/an": 2, "number": 4}
    # English carries a/an without --repair too (issue 40); number agreement needs --repair
    assert json.loads((tmp_path / "p" / "summary.json").read_text())["repairs"] == {"a/an": 3}
    by_key = {(m.text_id, m.replacements[0].pair_id, m.order): m for m in fixed.mutants}
    plain_keys = {(m.text_id, m.replacements[0].pair_id, m.order) for m in plain.mutants}
    assert by_key.keys() == plain_keys
    number = by_key[(1, "body:common>disorder:man>disabled people", 1)]
    assert number.text.startswith("These disabled people are tall.")  # stored with its repairs
    # the invariant judged the repaired text (Algorithm 3 on it, with the same parser, gives the stored verdict)
    from hinter.validity import invariant_check
    for m in fixed.mutants:
        assert m.valid == invariant_check(texts[m.text_id], m.text, lambda s: parser.parse([s])[0])
