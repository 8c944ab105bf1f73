"""The run store's interface on a real SQLite file: what is saved is read back by every typed method, discarded
mutants' texts are rebuilt from their edits (stored compactly, never as texts), the JSON form of replacements
round-trips, and a folder without a readable run.sqlite is an InputError."""
import json
import sqlite3
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from hinter.mutation.dictionary import Pair
from hinter.errors import HinterError, InputError
from hinter.models.base import Outcome
from hinter.mutation.mutants import generate
from hinter.records import (REPAIR, Replacement, apply_replacements, dictionary_replacements, edits, pair_key,
                            replacements_from_json, replacements_to_json)
from hinter.store.rows import CombinationCounts, MutantRow, OriginalsCounts, TextRow
from hinter.store import RunStore, open_run

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

T0 = "A white man walked into the shop. The film was fine."
T1 = "The old man liked the WHITE house."
TEXTS = [TextRow(0, "r0", T0, "pos", "positive", "Positive."),
         TextRow(1, "r1", T1, None, "positive", "positive"),
         TextRow(2, None, "Nothing to see here.", "neg", None, "gibberish"),       # unparseable
         TextRow(3, None, "The end.", None, None, "model error: timeout")]        # no answer


def _mutants(text_id, text):
    return {tuple(r.replacement for r in m.pairs): m  # keyed by its pairs, not its a/an edits
            for m in generate(text_id, text, planted.DIC, ("gender", "race"), 2).mutants}


def _row(m, valid, outcome=None, bias=None, hidden=None, strictly_hidden=None, queried=None):
    queried = outcome is not None if queried is None else queried
    return MutantRow(m.text_id, m.order, "+".join(m.attributes), pair_key(m.key), m.replacements,
                     m.text if queried else None, 1, valid, outcome, None if outcome is None else f"raw {outcome}",
                     queried, bias, hidden, strictly_hidden)


@pytest.fixture
def saved(tmp_path):
    """Two batches saved as the engine saves them (text 1 first, so stored order and text order differ)."""
    g0, g1 = _mutants(0, T0), _mutants(1, T1)
    batch_a = [_row(g1[("woman",)], True, None, None, queried=True),      # valid, unparseable answer
               _row(g1[("black",)], False),                               # discarded, not asked: text not stored
               _row(g1[("asian",)], True, "negative", True)]              # atomic bias
    batch_b = [_row(g0[("woman",)], True, "positive", False),
               _row(g0[("black",)], True, "positive", False),
               _row(g0[("asian",)], False),                               # discarded, not asked
               _row(g0[("woman", "black")], True, "negative", True, True, True),  # hidden intersectional bias
               _row(g0[("woman", "asian")], False, "negative", True)]    # discarded yet asked (query_discarded)
    store = RunStore(tmp_path / "run" / "run.sqlite")
    store.save_settings({"attributes": ["gender", "race"], "order": 2, "cli": {"dataset": "d.jsonl"}})
    store.save_batch([TEXTS[1], TEXTS[2]], batch_a, {"model_calls": 3, "overlaps_skipped": 1})
    store.save_batch([TEXTS[0], TEXTS[3]], batch_b, {"model_calls": 5})
    store.add_stat("model_calls", 1)
    store.save_outcomes("m", [("h1", Outcome("positive", "Positive.")), ("h2", Outcome(None, "?"))])
    yield store, batch_a + batch_b, {0: g0, 1: g1}
    store.close()


def test_settings_stats_texts_and_outcomes_read_back(saved, tmp_path):
    store, _, _ = saved
    assert store.settings() == {"attributes": ["gender", "race"], "order": 2, "cli": {"dataset": "d.jsonl"}}
    assert store.stats() == {"model_calls": 9.0, "overlaps_skipped": 1.0}
    assert list(store.texts()) == TEXTS
    assert store.done_text_ids() == {0, 1, 2, 3}
    assert store.outcome_count() == 2
    assert store.cached_outcomes("m", ["h1", "h2", "h3"]) == {"h1": Outcome("positive", "Positive."),
                                                             "h2": Outcome(None, "?")}
    assert RunStore.read_settings(tmp_path / "run") == store.settings()


def test_mutants_read_back_with_discarded_texts_rebuilt(saved):
    store, rows, generated = saved
    read = list(store.mutants())
    assert [m.mutant_id for m in read] == list(range(1, len(rows) + 1))
    originals = {t.text_id: t.text for t in TEXTS}
    for m, saved_row in zip(read, rows):
        assert all(isinstance(r, Replacement) for r in m.replacements) and isinstance(m.replacements, tuple)
        # the stored text, or for discarded mutants not asked the text rebuilt from the original and the spans
        assert m.text == apply_replacements(originals[m.text_id], edits(m.replacements))
        assert m == replace(saved_row, text=m.text, mutant_id=m.mutant_id)
    discarded = [m for m in read if m.text is not None and not m.queried]
    assert len(discarded) == 2
    for m in discarded:
        assert m.text == generated[m.text_id][tuple(r.replacement for r in dictionary_replacements(m.replacements))].text
    assert "The old man liked the BLACK house." in {m.text for m in discarded}  # match_case kept


def test_selections_of_mutants(saved):
    store, rows, _ = saved
    assert [(m.text_id, m.attributes) for m in store.biased_mutants()] == [(1, "race"), (0, "gender+race")]
    assert [(m.text_id, m.attributes) for m in store.biased_mutants(by_text=True)] == [(0, "gender+race"),
                                                                                       (1, "race")]
    assert [m.mutant_id for m in store.biased_mutants(by_text=True, limit=1)] == [7]
    assert [m.mutant_id for m in store.tested_mutants()] == [3, 4, 5, 7]
    man = rows[3]
    assert store.component(0, man.pair_key) == replace(man, mutant_id=4)
    assert store.component(0, "gender:male>female:nobody>noone") is None
    discarded = store.component(1, rows[1].pair_key)
    assert discarded.text == "The old man liked the BLACK house." and not discarded.valid


def test_aggregates(saved):
    store, rows, _ = saved
    assert store.combination_counts() == [
        CombinationCounts("gender", 1, mutants=2, valid=2, tested=1, biased=0, unparseable=1, hidden=0,
                          strictly_hidden=0, discarded_tested=0, discarded_biased=0),
        CombinationCounts("race", 1, mutants=4, valid=2, tested=2, biased=1, unparseable=0, hidden=0,
                          strictly_hidden=0, discarded_tested=0, discarded_biased=0),
        CombinationCounts("gender+race", 2, mutants=2, valid=1, tested=1, biased=1, unparseable=0, hidden=1,
                          strictly_hidden=1, discarded_tested=1, discarded_biased=1)]
    assert store.originals_counts() == OriginalsCounts(texts=4, unparseable=1, model_errors=1, with_valid_mutants=2,
                                                       with_bias=2)
    assert store.venn() == {"atomic_only": 1, "intersectional_only": 1, "both": 0}


def test_keyed_reads_give_what_the_unpacked_ones_give(saved):
    """The measures' reads without edit unpacking (pairs from the pair key) agree with the readers that unpack
    every mutant's edits: verdicts, tested rows, components; a repair (records.REPAIR) is an edit, not a pair."""
    store, rows, generated = saved
    a_an = Replacement(REPAIR, "a/an", "race", "A", "An", ((0, 1),))
    with_repair = replace(_row(generated[0][("asian",)], True, "negative", True), text_id=1,
                          replacements=generated[0][("asian",)].replacements + (a_an,),
                          scores=(("negative", 1.5), ("positive", -1.5)), answers=("negative", "positive"))
    # text 1 again, with scores and answers (repeats) that its mutants are compared with
    store.save_batch([replace(TEXTS[1], scores=(("negative", -2.0), ("positive", 2.0)),
                              answers=("positive", "positive"))], [with_repair])
    keyed, unpacked = list(store.keyed_verdicts()), list(store.mutants())  # mutants(): every edit unpacked
    assert [(v.text_id, v.order, v.attributes, v.valid, v.bias, v.hidden, v.strictly_hidden) for v in keyed] == [
        (r.text_id, r.order, r.attributes, r.valid, r.bias, r.hidden, r.strictly_hidden) for r in unpacked]
    for v, r in zip(keyed, unpacked):
        pairs = dictionary_replacements(r.replacements)
        assert v.pair_ids == tuple(x.pair_id for x in pairs) and v.target_groups == tuple(x.target_group for x in pairs)
    assert keyed[-1].pair_ids == ("race:european>asian:white>asian",) and keyed[-1].text_id == 1
    originals = {t.text_id: t.outcome for t in store.texts()}
    tested, found = list(store.tested_rows()), [r for r in unpacked if r.valid and r.bias is not None]
    assert len(tested) == len(found) == 4  # the repaired mutant replaced text 1's asian one
    for t, f in zip(tested, found):
        assert t.pair_ids == tuple(x.pair_id for x in dictionary_replacements(f.replacements))
        assert (t.mutant_id, t.text_id, t.original, t.mutant, t.mutant_scores) == (
            f.mutant_id, f.text_id, originals[f.text_id], f.outcome, f.scores)
    assert tested[-1].original_scores == (("negative", -2.0), ("positive", 2.0)) and tested[-1].mutant_answers == (
        "negative", "positive") and tested[-1].original_answers == ("positive", "positive")
    assert a_an in found[-1].replacements
    assert set(store.pairs()) == {r.pair_id for m in [*rows, with_repair] for r in m.replacements}
    keys = [(0, rows[3].pair_key), (1, rows[1].pair_key), (0, "gender:male>female:nobody>noone"),
            (0, pair_key([rows[3].pair_key, rows[4].pair_key]))]
    # text 1 saved again (asked again after a model error, issue 30): its mutants are the new batch's alone
    assert store.component(1, rows[1].pair_key) is None
    assert store.components_of(keys) == {k: store.component(*k) for k in (keys[0], keys[3])}
    # a discarded mutant that was not asked is stored without its text: it is rebuilt from its edits
    discarded = (0, rows[5].pair_key)
    assert store.components_of([discarded])[discarded].text == "An asian man walked into the shop. The film was fine."


def test_an_empty_store_counts_zeros(tmp_path):
    store = RunStore(tmp_path / "run.sqlite")
    try:
        assert store.combination_counts() == [] and list(store.mutants()) == [] and store.done_text_ids() == set()
        assert store.originals_counts() == OriginalsCounts(0, 0, 0, 0, 0)
        assert store.venn() == {"atomic_only": 0, "intersectional_only": 0, "both": 0}
        assert store.outcome_count() == 0
    finally:
        store.close()


def test_mutants_are_stored_as_edits_not_texts(saved):
    """Issue 14: no mutant text and no replacement JSON on disk; each pair once, each mutant a few bytes of edits."""
    store, rows, _ = saved
    db = sqlite3.connect(store.path)
    columns = {r[1] for r in db.execute("PRAGMA table_info(mutants)")}
    assert "text" not in columns and "replacements" not in columns
    edits_bytes = [len(e) for (e,) in db.execute("SELECT edits FROM mutants")]
    # a mutant of one or two pairs: 8 bytes; one with an a/an edit (English carries it, issue 40): 4 more
    assert len(edits_bytes) == len(rows) and max(edits_bytes) <= 12
    pairs = {r.pair_id for m in rows for r in m.replacements}
    assert db.execute("SELECT COUNT(*) FROM pairs").fetchone()[0] == len(pairs) == 4  # the a/an edit once
    db.close()
    # the JSON form of replacements (exports) still round-trips
    for m in rows:
        assert replacements_from_json(replacements_to_json(m.replacements)) == m.replacements
        assert json.loads(replacements_to_json(m.replacements)) == [{**asdict(r), "spans": [list(s) for s in r.spans]}
                                                                    for r in m.replacements]


def test_open_run(saved, tmp_path):
    store, _, _ = saved
    again = open_run(tmp_path / "run", "RUN_DIR")
    try:
        assert again.settings() == store.settings() and len(list(again.mutants())) == 8
    finally:
        again.close()
    with pytest.raises(InputError) as e:
        open_run(tmp_path / "nowhere", "RUN_DIR")
    # the folder itself, never the placeholder of the command's usage line (issue 30)
    assert "no run.sqlite" in e.value.problem and e.value.where == str(tmp_path / "nowhere")
    with pytest.raises(InputError) as e:
        open_run(tmp_path / "nowhere", "--baseline")
    assert e.value.where == f"--baseline {tmp_path / 'nowhere'}"
    with pytest.raises(InputError):
        RunStore.read_settings(tmp_path / "nowhere")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.sqlite").write_text("this is not a database, only some text long enough to be read as a header" * 3)
    with pytest.raises(HinterError) as e:
        open_run(bad, "RUN_DIR")
    assert "is damaged" in e.value.problem and e.value.where == str(bad / "run.sqlite")
    assert "Restore run.sqlite" in e.value.fix
    with pytest.raises(HinterError) as e:
        RunStore.read_settings(bad)
    assert "is damaged" in e.value.problem


_words = st.text(min_size=1, max_size=12)
_replacements = st.builds(Replacement, _words, _words, _words, _words, _words,
                          st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=4).map(tuple))


@given(st.lists(_replacements, max_size=3))
def test_json_form_round_trips(reps):
    for r in reps:
        assert Replacement.from_json(json.loads(json.dumps(r.to_json()))) == r
        assert list(r.to_json()) == ["attribute", "source_group", "target_group", "word", "replacement", "spans"]
        assert r.pair_id == Pair(r.attribute, r.source_group, r.target_group, r.word, r.replacement).id
    assert replacements_from_json(replacements_to_json(reps)) == tuple(reps)


def test_scores_written_as_json_writes_them(tmp_path):
    """scores_to_json writes its own JSON for finite floats (speed): the bytes json.dumps gives, also for labels
    json escapes, and json's own output for anything else (NaN, infinities, ints, bools)."""
    import json
    import math
    import random

    from hinter.store.rows import scores_to_json
    rng = random.Random(0)
    labels = ["Negative", "Positive", 'é "q"', "a\\b", "日本", "x\n"]
    values = [lambda: rng.uniform(-50, 50), lambda: rng.random() * 1e-7, lambda: 1e300, lambda: -0.0,
              lambda: math.inf, lambda: math.nan, lambda: 3, lambda: True, lambda: float(rng.randint(-3, 3))]
    for _ in range(3000):
        scores = tuple((rng.choice(labels), rng.choice(values)()) for _ in range(rng.randint(0, 4)))
        assert scores_to_json(scores) == json.dumps([list(x) for x in scores], separators=(",", ":"))
    assert scores_to_json(None) is None


def test_stats_added_together(tmp_path):
    store = RunStore(tmp_path / "run.sqlite")
    store.add_stats({"usage.calls": 2, "usage.tokens_in": 10})
    store.add_stats({"usage.calls": 3})
    store.add_stats({})
    assert store.stats() == {"usage.calls": 5.0, "usage.tokens_in": 10.0}
    store.close()
