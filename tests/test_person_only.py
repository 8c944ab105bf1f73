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


def test_a_person_only_run_reports_the_skipped_matches(parser, tmp_path):
    texts = ["She wore a black coat and a black man smiled.", "The man read. The black cat slept."]
    config = RunConfig(attributes=("gender", "race"), order=2, person_only=True)
    hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "po", config=config)
    s = json.loads((tmp_path / "po" / "summary.json").read_text())
    assert s["person_only_skipped"] == 2 and s["settings"]["person_only"] is True
    assert s["intersectional"]["gender+race"]["mutants"] == 1  # "black man" only: the coat and the cat stay
    hinter.run(texts, planted.intersectional, dictionary=DIC, parser=parser, out=tmp_path / "all",
               config=RunConfig(attributes=("gender", "race"), order=2))
    plain = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert "person_only_skipped" not in plain and "person_only" not in plain["settings"]
    assert plain["intersectional"]["gender+race"]["mutants"] == 2
