"""The embedded Gemma 3 270M, in-process through llama.cpp."""
from hinter.tasks import IMDB

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
