"""The embedded Gemma 3 270M, in-process through llama.cpp."""
import pytest

from hinter.models.tasks import IMDB

CLEAR = [
    ("This movie was wonderful, I loved every minute of it.", "Positive"),
    ("Terrible acting and a boring plot. Avoid.", "Negative"),
    ("A masterpiece. The cast is brilliant and the story moving.", "Positive"),
    ("I want my two hours back. Awful.", "Negative"),
    ("Dull, predictable and far too long.", "Negative"),
]


def test_classifies_clear_reviews(gemma):
    outcomes = gemma.predict([t for t, _ in CLEAR])
    assert [o.value for o in outcomes] == [label for _, label in CLEAR]
    assert all("logits" in o.raw for o in outcomes)


def test_deterministic_and_independent_of_order(gemma):
    texts = [t for t, _ in CLEAR]
    first = gemma.predict(texts)
    second = gemma.predict(list(reversed(texts)))[::-1]  # a different KV-cache history
    assert [o.raw for o in first] == [o.raw for o in second]


def test_fingerprint_names_model_and_task(gemma):
    assert gemma.fingerprint.startswith("gguf:gemma-3-270m") and ":imdb:" in gemma.fingerprint


def test_answer_parser():
    assert IMDB.parse_answer(" positive.").value == "Positive"
    assert IMDB.parse_answer("Negative").value == "Negative"
    assert IMDB.parse_answer("I cannot tell").value is None
    assert IMDB.parse_answer("positive or negative").value is None


def test_a_mutant_right_after_its_original_equals_the_mutant_alone(gemma):
    original = "The man in this film gives a moving performance, and the story kept me watching. " * 4
    mutant = original.replace("moving performance", "moving show", 1)[:-10] + "watching."
    after = gemma.predict([original, mutant])[1]
    gemma.predict(["Something else entirely, to clear the cache."])
    alone = gemma.predict([mutant])[0]
    assert after.raw == alone.raw


def test_first_token_scores_agree_with_the_label(gemma):
    for o in gemma.predict([t for t, _ in CLEAR[:2]]):
        assert [label for label, _ in o.scores] == list(IMDB.labels) and o.seen is None
        assert max(o.scores, key=lambda s: s[1])[0] == o.value
        assert all(f"{label}={score:.3f}" in o.raw for label, score in o.scores)  # the logits the raw answer shows


def test_options_and_fingerprints():
    from hinter.errors import InputError
    from hinter.models import load_model
    default = load_model("gguf:default", "imdb")
    assert load_model("gguf:default?threads=1", "imdb").fingerprint == default.fingerprint  # not a result
    assert load_model("gguf:default?n_ctx=2000", "imdb").fingerprint == default.fingerprint  # llama.cpp: 2048
    small = load_model("gguf:default?n_ctx=512&threads=2", "imdb")
    assert small.n_ctx == 512 and small.fingerprint == default.fingerprint + ":n_ctx=512"
    with pytest.raises(InputError) as e:  # the EUR-Lex prompt alone takes more than 512 tokens
        load_model("gguf:default?n_ctx=512", "eurlex")
    assert "leaves no room for a text" in e.value.problem and "n_ctx" in e.value.fix
    with pytest.raises(InputError) as e:
        load_model("gguf:default?n_ctx=65536", "imdb")
    assert "exceeds the 32768 tokens" in e.value.problem


@pytest.fixture(scope="module")
def small_context():
    from hinter.models import load_model
    return load_model("gguf:default?n_ctx=512&threads=2", "imdb")


def test_a_text_longer_than_the_context_says_what_was_read(small_context):
    m = small_context
    long = "the film was fine and the cast was good " * 60  # one token per word: reading stops at a word's end
    cut, = m.predict([long])
    assert 0 < cut.seen < len(long) and long[cut.seen] == " "
    assert m._encode(long[:cut.seen]) == m._encode(long)[:m.room]  # exactly the tokens the model read
    after, = m.predict([long[:cut.seen] + " but the ending was an awful mess"])
    assert after.scores == cut.scores and after.seen == cut.seen  # nothing after seen was read
    changed, = m.predict([long[:cut.seen].rsplit(" ", 1)[0] + " awful" + long[cut.seen:]])
    assert changed.scores != cut.scores  # the last word before seen was


def test_a_cut_review_never_claims_more_than_was_read(small_context, imdb_texts):
    m = small_context
    review = max(imdb_texts, key=len)
    read = m._encode(review[:m.predict([review])[0].seen])
    assert 0 < len(read) <= m.room and read == m._encode(review)[:len(read)]
    assert m.room - len(read) < 20  # at most the tokens of a word cut in the middle, and the space before it
