"""`--validity reference`: each step of the reference tool's preprocessing on hand cases, and a run in that mode."""
import json
import sys
from pathlib import Path

import pytest

import hinter
from hinter.config import RunConfig
from hinter.errors import InputError
from hinter.validity import Validator
from hinter.validity.invariant import SENTENCE_COUNT, TOO_LONG
from hinter.validity.reference import LIMIT, changed_pairs, format_text, prepare, split_sentences

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402


def test_formatting_semicolons_newlines_and_line_breaks():
    assert format_text("He came; she left\nThey met<br />again<br>and<br/>again  twice") == \
        "He came. she left.They met again and again twice"


def test_splitter_breaks_at_every_stop_and_drops_the_tail():
    assert split_sentences("He came home. Did she? Yes! And then") == ["He came home.", "Did she?", "Yes!"]
    assert split_sentences("Mr. Smith paid 3.5 dollars. It was fine.") == ["Mr. Smith paid 3.5 dollars.", "It was fine."]
    assert split_sentences("No stop at all") == []
    # a change in the unterminated tail is never checked: no changed pair, the mutant passes without a parse
    assert changed_pairs(split_sentences("He is a man. The man left"), "He is a man. The woman left") == ([], None)
    # hinter's own splitter breaks at a line break; the reference's does not (it reads it as a space)
    assert split_sentences("The man came\nhome. Bye.") == ["The man came home.", "Bye."]


def test_each_sentence_is_capitalized_and_white_space_runs_collapsed():
    assert prepare("the Black man  saw\tHer.") == "The black man saw her."
    pairs, reason = changed_pairs(["He met a Black man.", "Fine."], "He met a White man. Fine.")
    assert reason is None and pairs == [("He met a black man.", "He met a white man.")]


def test_sentence_count_and_500_characters():
    original = split_sentences("He met the man. Then he left.")
    assert changed_pairs(original, "He met the man. Then. He left.") == (None, SENTENCE_COUNT)
    head = "The man said that " + "the weather was very fine and " * 16
    long_sentence = head[:LIMIT - len("man.")] + "man."
    assert len(long_sentence) == LIMIT
    # exactly 500 characters: checked; one more in the mutant: too long, whatever the parse
    pairs, reason = changed_pairs([long_sentence], long_sentence.replace("The man", "The men", 1))
    assert reason is None and len(pairs) == 1
    pairs, reason = changed_pairs([long_sentence], long_sentence.replace("The man", "The woman", 1))
    assert reason == TOO_LONG and len(pairs) == 1


def test_whitespace_tokens_are_dropped(parser):
    # spaCy makes a whitespace token of a double space; the reference's tokenizer dropped it
    original, mutant = "The man  walked home.", "The woman walked home."
    assert "_SP" in parser.tag([original])[0]
    pairs, _ = changed_pairs(split_sentences(original), mutant)
    assert pairs == [("The man walked home.", "The woman walked home.")]
    assert all("_SP" not in tags for tags in parser.tag([c for pair in pairs for c in pair]))
    assert Validator(parser).reasons([pairs]) == [None]


def test_a_run_in_reference_mode(parser, tmp_path):
    long_text = "The man said that " + "the weather was very fine and " * 20 + "it rained. The white man left."
    texts = ["A white man came home; he was tired.", long_text, "The man walked home. He was white"]
    run = hinter.run(texts, planted.intersectional, attributes=("gender", "race"), order=2, dictionary=planted.DIC,
                     parser=parser, out=tmp_path / "ref", validity="reference")
    s = run.summary()
    by = s["totals"]["atomic"]["discarded_by"]
    assert by.get(TOO_LONG, 0) >= 1 and sum(by.values()) == s["totals"]["atomic"]["discarded"]
    stored = {t.text_id: t.text for t in run.store.texts()}
    assert stored[0] == "A white man came home. he was tired."  # formatted before mutation: the model reads it so
    rows = list(run.store.mutants())
    # text 2's "white" lies in the unterminated tail: never checked, so its race mutant passes
    tail = [m.valid for m in rows if m.text_id == 2 and m.attributes == "race"]
    assert tail and all(tail)
    assert all(m.discard_reason == TOO_LONG for m in rows if m.text_id == 1 and m.attributes == "gender")
    assert run.store.settings()["validity"] == "reference"
    assert run.store.settings()["parser"].endswith("+validity=reference")
    # a resume in the other mode is refused, naming the option
    with pytest.raises(InputError, match="--validity: reference before, paper now"):
        hinter.run(texts, planted.intersectional, attributes=("gender", "race"), order=2, dictionary=planted.DIC,
                   parser=parser, out=tmp_path / "ref")


def test_the_default_records_nothing_new():
    assert "validity" not in RunConfig().recorded()
    assert RunConfig(validity="reference").recorded()["validity"] == "reference"
    assert RunConfig.from_recorded(RunConfig().recorded()).validity == "paper"
    with pytest.raises(InputError, match="--validity"):
        RunConfig(validity="allennlp")
