"""The grammar score (Harper, offline) on hand cases, and `--grammar MAX_DROP`, the second validity check, in real
runs: its reason recorded per mutant, counted in the summary, its setting recorded in the run and in a suite."""
import json
import sqlite3
import sys
from pathlib import Path

import pytest

pytest.importorskip("harper")

import hinter  # noqa: E402
from hinter.config import RunConfig  # noqa: E402
from hinter.errors import InputError  # noqa: E402
from hinter.validity import changed_sentences  # noqa: E402
from hinter.validity.grammar import (GRAMMAR, GrammarChecker, count_words, grammar_score,  # noqa: E402
                                     grammar_scores, score_from_counts)

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402


@pytest.fixture(scope="module")
def checker():
    return GrammarChecker()


# (clean, the same sentence with one grammar error)
ERRORS = [
    ("I ate an apple at noon.", "I ate a apple at noon."),                      # article
    ("An Asian man walked in.", "A Asian man walked in."),                      # article, as a replacement leaves it
    ("She goes to school every day.", "She go to school every day."),           # agreement
    ("They were happy with the film.", "They was happy with the film."),        # agreement
    ("This is a test of the linter.", "This is a test of the the linter."),     # repetition
    ("The police had begun the search.", "The police had began the search."),   # participle
]


@pytest.mark.parametrize("clean, wrong", ERRORS)
def test_an_error_lowers_the_score(clean, wrong):
    assert grammar_score(clean) == 100
    assert grammar_score(wrong) < 95  # one error in a sentence of at most 9 words: more than 10 points


def test_what_does_not_count():
    # names and rare words (Harper's spelling lints), a long sentence, a missing Oxford comma: not grammar errors
    assert grammar_score("Mr. Okonkwo visited Tbilisi with Siobhan and Zardkuh.") == 100
    assert grammar_score("We saw Bob, Cassie and the baby at the market on Sunday.") == 100
    assert grammar_score("") == 100


def test_more_errors_score_lower_and_longer_texts_dilute_one():
    one, two = "A apple fell.", "A apple fell and a orange fell."
    assert grammar_score(two) < grammar_score(one.replace("A apple", "An apple")) and grammar_score(one) < 100
    padded = "A apple fell. " + " ".join(["The day was calm and the sky was clear."] * 5)
    assert grammar_score(one) < grammar_score(padded) < 100
    assert score_from_counts(50, 10) == 0 and score_from_counts(0, 0) == 100
    assert count_words("Don't stop, it's 9 o'clock.") == 5


def test_scores_of_many_texts_equal_one_at_a_time_and_are_cached(checker):
    texts = ["I ate a apple.", "She go home. She is tired.", "All is well.", "I ate a apple."]
    assert checker.scores(texts) == [checker.score(t) for t in texts]
    linted = checker.sentences_linted
    checker.scores(texts)
    assert checker.sentences_linted == linted  # every sentence was cached
    assert grammar_scores(texts) == checker.scores(texts)
    # a text given with blank lines in one "sentence" is still scored whole
    assert checker.counts(["A apple.\n\nA orange."])["A apple.\n\nA orange."][0] == 2


def test_drops_compare_the_changed_sentences(checker):
    original = "The white man sat. He ate an apple."
    mutants = ["The black man sat. He ate an apple.",     # no new error
               "The asian man sat. He ate a apple.",      # the second sentence gains an error
               "The white man sat. Then. He ate an apple."]
    pairs = [changed_sentences(original, m) for m in mutants]
    drops = checker.drops(pairs)
    assert drops[0] <= 0 and drops[1] > 10 and drops[2] is None
    assert checker.reasons(pairs, 0.5) == [None, GRAMMAR, None]
    assert checker.reasons(pairs, 99) == [None, None, None]


def test_the_option_is_checked():
    with pytest.raises(InputError) as e:
        RunConfig(grammar=-1)
    assert e.value.where == "--grammar"
    assert RunConfig(grammar=0.5).recorded()["grammar"] == 0.5
    assert "grammar" not in RunConfig().recorded()  # a run without it records what it recorded before


TEXTS = ["The white man walked into the shop. The film was fine.",   # white -> the asian: "The the asian man"
         "The old man liked the white house. It was big.",
         "The black man sang well. I liked it."]


def _dictionary():
    """planted.DIC with white -> "the asian": a replacement that breaks the grammar (English mutation carries a/an,
    so "A asian man" no longer comes out of a run)."""
    from hinter.mutation.dictionary import Dictionary, Pair
    return Dictionary(planted.PAIRS[:3] + (Pair("race", "european", "asian", "white", "the asian"),), "grammar-test")


def test_grammar_discards_in_a_real_run(parser, tmp_path):
    plain = hinter.run(TEXTS, planted.intersectional, dictionary=_dictionary(), parser=parser, out=tmp_path / "plain")
    checked = hinter.run(TEXTS, planted.intersectional, dictionary=_dictionary(), parser=parser, grammar=0.5,
                         out=tmp_path / "grammar")
    before = {(m.text_id, m.replacements): m for m in plain.store.mutants()}
    after = {(m.text_id, m.replacements): m for m in checked.store.mutants()}
    assert before.keys() == after.keys()
    discarded = [k for k, m in after.items() if m.discard_reason == GRAMMAR]
    # every mutant of the first text with "The the asian man" is discarded by the grammar check alone
    asian = [k for k in after if k[0] == 0 and any(r.replacement == "the asian" for r in k[1])]
    assert asian and set(asian) <= set(discarded)
    for k in discarded:
        assert before[k].valid and not after[k].valid
        assert "the the asian" in before[k].text.lower()
    # the others keep the invariant's verdict and reason
    for k, m in after.items():
        if k not in discarded:
            assert (m.valid, m.discard_reason) == (before[k].valid, before[k].discard_reason)
    s = json.loads((tmp_path / "grammar" / "summary.json").read_text())
    assert s["settings"]["grammar"] == 0.5 and "grammar" not in json.loads(
        (tmp_path / "plain" / "summary.json").read_text())["settings"]
    by = s["totals"]["atomic"]["discarded_by"]
    assert by[GRAMMAR] == sum(1 for k in discarded if after[k].order == 1)
    assert sum(by.values()) == s["totals"]["atomic"]["discarded"]
    db = sqlite3.connect(tmp_path / "grammar" / "run.sqlite")
    assert db.execute("SELECT COUNT(*) FROM mutants WHERE discard_reason = 'grammar' AND valid = 0").fetchone() == \
           (len(discarded),)
    # the same folder with another --grammar is another run: refused, naming the option
    with pytest.raises(InputError) as e:
        hinter.run(TEXTS, planted.intersectional, dictionary=_dictionary(), parser=parser, grammar=5,
                   out=tmp_path / "grammar")
    assert "--grammar" in str(e.value)
    # a run continued with another version of the checker is another run too (its verdicts could differ)
    db.execute("UPDATE settings SET value = ? WHERE key = 'grammar_checker'", (json.dumps("harper-py-0.1.0+score1"),))
    db.commit()
    with pytest.raises(InputError) as e:
        hinter.run(TEXTS, planted.intersectional, dictionary=_dictionary(), parser=parser, grammar=0.5,
                   out=tmp_path / "grammar")
    assert "the grammar checker" in str(e.value) and "harper-py-0.1.0" in str(e.value)


def test_a_suite_records_the_check_and_its_verdicts(parser, tmp_path):
    from hinter.pipeline.suite import load_suite
    path = hinter.build_suite(TEXTS, out=tmp_path / "g.suite", dictionary=_dictionary(), parser=parser, grammar=0.5)
    suite = load_suite(path)
    assert suite.config.grammar == 0.5
    assert suite.header["fingerprints"]["grammar"].startswith("harper-py-0.")
    assert any(m.reason == GRAMMAR and not m.valid for ms in suite.mutants.values() for m in ms)
    via = hinter.run(suite=path, model=planted.intersectional, out=tmp_path / "s")
    plain = hinter.run(TEXTS, planted.intersectional, dictionary=_dictionary(), parser=parser, grammar=0.5,
                       out=tmp_path / "p")
    assert [(m.replacements, m.valid, m.discard_reason) for m in via.store.mutants()] == \
           [(m.replacements, m.valid, m.discard_reason) for m in plain.store.mutants()]
    settings = json.loads((tmp_path / "s" / "summary.json").read_text())["settings"]
    assert settings["grammar"] == 0.5
    assert settings["grammar_checker"] == suite.header["fingerprints"]["grammar"] == json.loads(
        (tmp_path / "p" / "summary.json").read_text())["settings"]["grammar_checker"]


def test_the_labelled_sample_is_whole():
    """tests/data/grammar_labels.csv (bench/grammar_validity.py reads it): 200 mutants of two bundled campaigns,
    atomic and intersectional, valid and discarded, each labelled, with a reason for every ungrammatical one."""
    import csv
    from collections import Counter
    rows = list(csv.DictReader(open(Path(__file__).parent / "data" / "grammar_labels.csv", encoding="utf-8",
                                    newline="")))
    assert len(rows) == 200 and len({r["id"] for r in rows}) == 200
    strata = Counter((r["dataset"], r["kind"], r["invariant"]) for r in rows)
    assert {d for d, _, _ in strata} == {"imdb", "bios"} and len(strata) == 8
    assert all(int(r["stratum_size"]) >= n for r in rows for k, n in strata.items()
               if k == (r["dataset"], r["kind"], r["invariant"]))
    for r in rows:
        assert r["label"] in ("grammatical", "ungrammatical")
        assert bool(r["why"]) == (r["label"] == "ungrammatical"), r["id"]
        assert r["original"].count("\n") == r["mutant"].count("\n") and r["original"] != r["mutant"]
        assert (r["reason"] == "") == (r["invariant"] == "valid")
