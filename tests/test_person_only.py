"""--person-only (issue 15 item 3): a word is replaced only where it refers to a person, from the real spaCy parse of
the original sentence; the matches skipped are counted in summary.json."""
import json
import sys
from pathlib import Path

import pytest

import hinter
from hinter.config import RunConfig
from hinter.mutation.dictionary import Dictionary, Pair
from hinter.mutation.mutants import generate
from hinter.mutation.person import PersonFilter

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

DIC = Dictionary((Pair("race", "african", "european", "black", "white"),
                  Pair("race", "european", "african", "Spanish", "Nigerian"),
                  Pair("gender", "male", "female", "man", "woman")), "person-test")


@pytest.fixture(scope="module")
def person():
    return PersonFilter()


@pytest.mark.parametrize("text, word, kept", [
    ("She wore a black coat.", "black", False),
    ("I met a black woman yesterday.", "black", True),
    ("He speaks Spanish at home.", "spanish", False),
    ("The Spanish director made it.", "spanish", True),
    ("The black and white men sang.", "white", True),   # conj of a modifier of a person noun
    ("The actor is black.", "black", True),              # said of a person
    ("Mark drank black coffee.", "black", False),
    # an institution's name (an ORG entity): "Communities" in it names no one
    ("Decision of the Commission of the European Communities on imports.", "european", False),
])
def test_occurrences_about_a_person_are_kept(person, text, word, kept):
    start = text.lower().index(word)
    marks = person.keep(text, {word: ((start, start + len(word)),)})
    assert marks == {word: (((start, start + len(word)), kept),)}


def test_generation_skips_and_counts_the_other_matches(person):
    text = "She wore a black coat. A black woman spoke Spanish to the Spanish director."
    gen = generate(0, text, DIC, ("race",), 1, person=person)
    texts = {m.text for m in gen.mutants}
    assert texts == {"She wore a black coat. A white woman spoke Spanish to the Spanish director.",
                     "She wore a black coat. A black woman spoke Spanish to the Nigerian director."}
    assert gen.person_skipped == 2 and any("[black] coat" in e for e in gen.person_examples)
    # without the option every occurrence changes, as before
    plain = generate(0, text, DIC, ("race",), 1)
    assert {m.text for m in plain.mutants} == {
        "She wore a white coat. A white woman spoke Spanish to the Spanish director.",
        "She wore a black coat. A black woman spoke Spanish to the Nigerian director."}  # a language stays (issue 40)
    assert plain.person_skipped == 0


def test_without_the_option_no_pipeline_is_loaded(monkeypatch):
    import hinter.mutation.person as p

    def boom():
        raise AssertionError("spaCy loaded on the driver without --person-only")
    monkeypatch.setattr(p, "driver_nlp", boom)
    assert generate(0, "A black man.", DIC, ("gender", "race"), 2).mutants


def test_a_run_replaces_only_person_occurrences_by_default_and_reports_the_skipped_matches(parser, tmp_path):
    texts = ["She wore a black coat and a black man smiled.", "The man read. The black cat slept."]
    config = RunConfig(attributes=("gender", "race"), order=2)  # the default: a person's occurrences only
    assert config.person_only is True
    hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "po", config=config)
    s = json.loads((tmp_path / "po" / "summary.json").read_text())
    assert s["person_only_skipped"] == 2 and s["settings"]["person_only"] is True
    assert s["intersectional"]["gender+race"]["mutants"] == 1  # "black man" only: the coat and the cat stay
    # --any-occurrence: the paper's behaviour, every occurrence replaced; recorded as before the default changed
    hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "all",
               config=config.replace(person_only=False))
    plain = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert "person_only_skipped" not in plain and "person_only" not in plain["settings"]
    assert plain["intersectional"]["gender+race"]["mutants"] == 2


def test_any_occurrence_is_the_flag_and_a_config_recorded_without_the_field_reads_as_every_occurrence():
    """The default changed from every occurrence to a person's: a run recorded before (no person_only in its
    config) was made replacing every occurrence, and reopens so; --any-occurrence records nothing, as those did."""
    from hinter.config import RECORDED_ONLY_WHEN_SET, describe_differences, option_fields

    field = next(f for f in option_fields() if f.name == "person_only")
    assert field.metadata["flag"] == "--any-occurrence" and field.metadata["invert"]
    assert "paper" in field.metadata["help"] and "precision" in field.metadata["help"]
    assert "person_only" in RECORDED_ONLY_WHEN_SET
    assert RunConfig.from_recorded({"attributes": ["gender"]}).person_only is False
    assert RunConfig().recorded()["person_only"] is True and "person_only" not in \
        RunConfig(person_only=False).recorded()
    assert RunConfig.from_recorded(RunConfig().recorded()) == RunConfig()
    assert RunConfig.from_legacy_cli({"attributes": "gender"}).person_only is False
    # shown as the flag: an old run replaced every occurrence (--any-occurrence in effect), this one does not
    assert describe_differences({}, {"config.person_only": True}) == ["--any-occurrence: True before, False now"]


def test_the_filter_reads_the_parse_english_made_and_french_replaces_every_occurrence():
    """One parse per sentence: the filter reads the sentences English's rules parsed (the full pipeline), it does
    not parse them again; French texts are not read by it (its words and parse are English's)."""
    def never(sentences):
        raise AssertionError(f"parsed again: {sentences}")
    gen = generate(0, "She wore a black coat. A black man smiled.", DIC, ("race",), 1, person=PersonFilter(never))
    assert [m.text for m in gen.mutants] == ["She wore a black coat. A white man smiled."]
    assert gen.person_skipped == 1
    fr = Dictionary((Pair("race", "african", "european", "noir", "blanc"),), "person-fr")
    gen = generate(0, "Il porte un manteau noir.", fr, ("race",), 1, person=PersonFilter(never), language="fr")
    assert [m.text for m in gen.mutants] == ["Il porte un manteau blanc."] and gen.person_skipped == 0
