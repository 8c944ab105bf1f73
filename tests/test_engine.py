"""The whole pipeline on a model with planted biases, the real parser and a real store."""
import json
import sqlite3
import sys
from pathlib import Path

import pytest

import hinter
from hinter.mutation.dictionary import Dictionary, Pair

sys.path.insert(0, str(Path(__file__).parent))
import planted  # noqa: E402

DIC, TEXTS = planted.DIC, planted.TEXTS


@pytest.fixture(scope="module")
def planted_run(parser, tmp_path_factory):
    return hinter.run(TEXTS, planted.intersectional, attributes=("gender", "race"), order=2, dictionary=DIC,
                      parser=parser, out=tmp_path_factory.mktemp("run"))


def test_every_planted_hidden_bias_is_found_and_no_other(planted_run):
    mutants = list(planted_run.mutants)
    assert {m.order for m in mutants} == {1, 2}
    hidden = {(m.text_id, tuple((r.word, r.replacement) for r in m.replacements)) for m in mutants if m.hidden}
    # Planted: outcome flips only when "woman" and "black" are both present. Texts 0-2 name a white person and
    # a man; text 4 already names a black man, so its gender mutant alone flips (an atomic bias, not hidden).
    expected = {(t, (("man", "woman"), ("white", "black"))) for t in (0, 1, 2)}
    valid_expected = {k for k in expected if any(m.valid and m.text_id == k[0] and
                      tuple((r.word, r.replacement) for r in m.replacements) == k[1] for m in mutants)}
    assert valid_expected, "the parser discarded every planted mutant"
    assert hidden == valid_expected
    for m in mutants:
        if m.valid:
            assert m.bias == (planted.intersectional([m.text]) != planted.intersectional([TEXTS[m.text_id]]))
        else:
            assert m.bias is None and m.outcome is None
    atomic_biases = [m for m in mutants if m.order == 1 and m.bias]
    assert {m.text_id for m in atomic_biases} <= {4}


def test_summary_matches_the_store(planted_run):
    s = json.loads((planted_run.out_dir / "summary.json").read_text())
    assert s == json.loads(json.dumps(planted_run.summary()))
    db = sqlite3.connect(planted_run.out_dir / "run.sqlite")
    for combo, m in {**s["atomic"], **s["intersectional"]}.items():
        n, valid, biased = db.execute("SELECT COUNT(*), SUM(valid), SUM(valid AND bias = 1) FROM mutants "
                                      "WHERE attributes = ?", (combo,)).fetchone()
        assert (m["mutants"], m["valid"], m["biased"]) == (n, valid, biased)
    hidden = db.execute("SELECT COUNT(*) FROM mutants WHERE hidden = 1").fetchone()[0]
    assert s["intersectional"]["gender+race"]["hidden"] == hidden
    assert s["settings"]["attributes"] == ["gender", "race"]
    rows = (planted_run.out_dir / "biases.csv").read_text().splitlines()
    assert len(rows) - 1 == db.execute("SELECT COUNT(*) FROM mutants WHERE valid = 1 AND bias = 1").fetchone()[0]


def test_no_text_is_sent_twice(parser, tmp_path):
    seen = []

    def counting(texts):
        seen.extend(texts)
        return planted.atomic_gender(texts)

    hinter.run(TEXTS + TEXTS[:2], counting, attributes=("gender", "race"), dictionary=DIC, parser=parser, out=tmp_path)
    # the start-up determinism check asks the shortest text 8 times; its answer is then reused, never asked again
    from hinter.pipeline.engine import DETERMINISM_PROBES
    probe, n = min(TEXTS, key=len), DETERMINISM_PROBES
    assert seen[:n] == [probe] * n and probe not in seen[n:]
    assert len(seen[n:]) == len(set(seen[n:]))


@pytest.mark.parametrize("probes", [4, 0])
def test_the_determinism_check_asks_as_many_copies_as_told_and_a_skipped_check_is_said(parser, tmp_path, probes):
    seen = []

    def counting(texts):
        seen.extend(texts)
        return planted.atomic_gender(texts)

    run = hinter.run(TEXTS, counting, attributes=("gender", "race"), dictionary=DIC, parser=parser, out=tmp_path,
                     determinism_probes=probes)
    probe = min(TEXTS, key=len)
    assert seen.count(probe) == max(probes, 1) and len(seen) == len(set(seen)) + max(probes - 1, 0)
    if probes:
        assert seen[:probes] == [probe] * probes
    check = run.summary()["determinism"]
    assert check["probes"] == probes and check["deterministic"] is (True if probes else None)
    from hinter.report import write_report
    write_report(tmp_path)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert ("noise was not checked (--determinism-probes 0)" in page) is (probes == 0)


def test_one_determinism_probe_is_refused():
    from hinter.config import RunConfig
    from hinter.errors import InputError
    with pytest.raises(InputError, match="--determinism-probes must be 0 .no check. or at least 2"):
        RunConfig(determinism_probes=1)


def test_unparseable_outcomes_are_kept_apart(parser, tmp_path):
    run = hinter.run(TEXTS[:3], planted.nonsense, attributes=("gender", "race"), dictionary=DIC, parser=parser,
                     out=tmp_path)
    s = run.summary()
    assert s["unparseable"]["originals"] == 3
    assert s["totals"]["atomic"]["biased"] == 0 and s["totals"]["atomic"]["tested"] == 0
    assert s["totals"]["atomic"]["error_rate"] is None
    assert all(m.bias is None for m in run.mutants)


def test_order_three_strictly_hidden(parser, tmp_path):
    dic = Dictionary(DIC.pairs + (Pair("body", "young", "old", "young", "old"),), "planted3")

    def triple(texts):
        return ["neg" if all(w in t.lower().split() for w in ("woman", "black", "old")) else "pos" for t in texts]

    run = hinter.run(["A young white man came home."], triple, attributes=("body", "gender", "race"), order=3,
                     dictionary=dic, parser=parser, out=tmp_path)
    third = [m for m in run.mutants if m.order == 3]
    assert third
    for m in third:
        if m.valid and m.bias:
            assert m.hidden and m.strictly_hidden


def test_run_folder_is_private(planted_run, tmp_path, parser):
    import stat

    out = tmp_path / "new" / "run"
    hinter.run(TEXTS[:1], planted.intersectional, attributes=("gender", "race"), dictionary=DIC, parser=parser, out=out)
    assert stat.S_IMODE(out.stat().st_mode) & 0o077 == 0


def test_a_change_beyond_what_a_truncating_model_read_is_counted_apart(parser, tmp_path):
    """A model that reads the first 30 characters: a mutant changed only after them is not tested (never "no
    bias"); one changed within them is tested as usual."""
    from hinter.models.base import Outcome

    def reads_30(texts):
        return [Outcome("negative" if "woman" in t[:30] else "positive", t[:30], seen=min(30, len(t)) if len(t) > 30
                        else None) for t in texts]

    texts = ["A man came home late. Nothing else happened at all that night.",  # within: tested, a bias
             "Nothing at all happened that long night, until a man came."]       # beyond: unseen
    run = hinter.run(texts, reads_30, attributes=("gender",), order=1, dictionary=DIC, parser=parser, out=tmp_path)
    by_text = {m.text_id: m for m in run.mutants if m.replacements[0].word == "man"}
    assert by_text[0].bias is True and by_text[0].valid
    assert by_text[1].valid and by_text[1].bias is None
    s = run.summary()
    assert s["atomic"]["gender"]["unseen"] == 1 and s["atomic"]["gender"]["tested"] == 1
    assert s["atomic"]["gender"]["unparseable"] == 0
    from hinter.report import write_report
    write_report(tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert 'data-testid="unseen"' in page and "--window" in page  # the report says so, first


def test_unseen_follows_the_shift_of_earlier_edits():
    from hinter.analysis.oracle import unseen
    assert unseen([(40, 43, "woman")], 30, 30) is True
    assert unseen([(10, 13, "woman"), (40, 43, "woman")], 30, 30) is False   # one change was read
    assert unseen([(28, 31, "x"), (40, 43, "y")], 30, 30) is False            # starts before the cut
    assert unseen([(40, 43, "woman")], None, 30) is False                      # the original was read whole
    assert unseen([(31, 40, "a")], 30, 35) is False        # the mutant's reading reached it
    # a shorter first replacement pulls the second one 8 characters forward, inside what the mutant's reading saw
    assert unseen([(31, 40, "a"), (44, 45, "b")], 30, 31) is True
    assert unseen([(31, 40, "a"), (44, 45, "b")], 30, 37) is False


def test_with_a_window_a_change_beyond_the_cut_is_tested(parser, tmp_path):
    from hinter.models.base import Outcome

    def reads_120(texts):
        return [Outcome("negative" if "woman" in t[:120] else "positive", t[:120],
                        seen=120 if len(t) > 120 else None) for t in texts]

    text = "The film was long and the plot was thin. " * 6 + "Then a man came home, and the end was sad."
    unwindowed = hinter.run([text], reads_120, attributes=("gender",), order=1, dictionary=DIC, parser=parser,
                            out=tmp_path / "a")
    assert unwindowed.summary()["atomic"]["gender"]["unseen"] == 1
    run = hinter.run([text], reads_120, attributes=("gender",), order=1, dictionary=DIC, parser=parser,
                     out=tmp_path / "b", window=100)
    s = run.summary()
    assert s["atomic"]["gender"]["unseen"] == 0 and s["atomic"]["gender"]["biased"] == 1


def test_window_bounds_hold_the_edits_and_share_a_grid():
    from hinter.models.window import window_bounds, windowed
    a = window_bounds(1000, [(500, 503, "woman")], 200)
    b = window_bounds(1000, [(510, 513, "girl")], 200)
    assert a == b and a[0] <= 500 and a[1] >= 503 and a[1] - a[0] == 200  # nearby mutants: one windowed original
    assert window_bounds(150, [(10, 13, "x")], 200) == (0, 150)             # a short text is read whole
    assert window_bounds(1000, [(100, 103, "x"), (700, 703, "y")], 200) == (100, 703)
    original, mutant, local = windowed("0123456789 a man here", [(13, 16, "woman")], (10, 21))
    assert (original, mutant, local) == (" a man here", " a woman here", [(3, 6, "woman")])


def test_top_pairs_name_the_word_that_flips_the_model_not_only_its_group(parser, tmp_path):
    """summary.json's top_pairs (a statistic added as a measure and its declaration alone): a model that reacts to
    "woman" flips the man -> woman pair; boy -> girl, same attribute and groups, never flips and is left out."""
    from hinter.analysis.measures import top_pairs, verdicts
    run = hinter.run(planted.TEXTS, planted.atomic_gender, attributes=("gender", "race"), order=2,
                     dictionary=planted.DIC, parser=parser, out=tmp_path / "run")
    s = run.summary()
    assert [(p["word"], p["replacement"]) for p in s["top_pairs"]] == [("man", "woman")]
    top = s["top_pairs"][0]
    assert (top["attribute"], top["source_group"], top["target_group"]) == ("gender", "male", "female")
    assert top["biased"] == top["tested"] == s["atomic"]["gender"]["biased"] - sum(
        1 for v in verdicts(run.store).values() if v.order == 1 and v.bias and "boy>girl" in v.pair_ids[0])
    assert top["error_rate"] == 1.0 and top["error_rate_ci"][1] == 1.0
    assert top_pairs(verdicts(run.store), n=0) == []


class Grouping:
    """The planted intersectional model as an object that asks for `asks_ahead` texts per call (as hf: does on
    CUDA), logging each call's texts."""

    def __init__(self, asks_ahead):
        self.asks_ahead, self.batch_size, self.fingerprint = asks_ahead, 1000, "test:grouping"
        self.calls = []

    def predict(self, texts):
        from hinter.models.base import normalise
        self.calls.append(list(texts))
        return [normalise(o) for o in planted.intersectional(texts)]


def test_batches_asked_together_give_the_same_rows(parser, tmp_path):
    """A model that asks ahead gets several batches' texts in one call; each batch is judged and stored on its own,
    with the same verdicts, hidden marks and counters as when each batch is asked alone."""
    runs = {}
    for ahead in (0, 40):
        model = Grouping(ahead)
        run = hinter.run(TEXTS * 3, model, attributes=("gender", "race"), order=2, dictionary=DIC, parser=parser,
                         out=tmp_path / str(ahead), batch_texts=2)
        rows = sorted((m.text_id, m.text, m.valid, m.bias, m.hidden, m.strictly_hidden, m.outcome) for m in run.mutants)
        stats = {k: v for k, v in run.store.stats().items() if not k.startswith("seconds")}
        runs[ahead] = (model.calls, rows, stats)
    (alone_calls, alone_rows, alone_stats), (together_calls, together_rows, together_stats) = runs[0], runs[40]
    assert together_rows == alone_rows and any(r[4] for r in together_rows)  # the planted hidden bias, both ways
    assert sum(map(len, together_calls)) == sum(map(len, alone_calls))  # no text asked twice
    assert len(together_calls) < len(alone_calls)  # fewer, larger calls
    originals_per_call = [sum(t in TEXTS for t in c) for c in together_calls[1:]]  # [0]: the determinism probe
    assert max(originals_per_call) > 2  # texts of more than one batch of 2 in one call
    assert together_stats == alone_stats and together_stats["model_calls"] > 0  # the run's counters


class Launching:
    """A model that answers in two steps (submit, then read), as hf: does on CUDA, logging each step. Its faults
    stand for a GPU call failing at launch or at reading, which cannot be produced on this machine."""

    fingerprint, batch_size, launches_ahead = "test:launching", 1, True

    def __init__(self, fail_launch=(), fail_read=()):
        self.events, self.fail_launch, self.fail_read = [], set(fail_launch), set(fail_read)

    def submit(self, texts):
        self.events.append(("launch", texts[0]))
        if texts[0] in self.fail_launch:
            self.fail_launch.discard(texts[0])
            raise RuntimeError("out of memory")

        def read():
            self.events.append(("read", texts[0]))
            if texts[0] in self.fail_read:
                self.fail_read.discard(texts[0])
                raise RuntimeError("device lost")
            return [t.upper() for t in texts]
        return read

    def predict(self, texts):
        self.events.append(("predict", texts[0]))
        return [t.upper() for t in texts]


def test_the_next_call_is_launched_before_this_ones_answers_are_read():
    from hinter.models.base import asked_ahead
    model = Launching()
    answers = list(asked_ahead(model, [["a"], ["b"], ["c"]], 1, 0.0, lambda c: None))
    assert [[o.value for o in a] for a in answers] == [["A"], ["B"], ["C"]]
    assert model.events == [("launch", "a"), ("launch", "b"), ("read", "a"), ("launch", "c"), ("read", "b"),
                            ("read", "c")]
    # a call that fails at launch or at reading is asked again, the others as before
    model = Launching(fail_launch={"b"}, fail_read={"c"})
    answers = list(asked_ahead(model, [["a"], ["b"], ["c"]], 1, 0.0, lambda c: None))
    assert [[o.value for o in a] for a in answers] == [["A"], ["B"], ["C"]]
    assert ("predict", "b") in model.events and ("predict", "c") in model.events


def test_a_run_through_a_launching_model_stores_every_answer(parser, tmp_path):
    from hinter.models.base import normalise

    class Planted(Launching):
        def submit(self, texts):
            read = super().submit(texts)
            return lambda: [normalise(o) for o in planted.intersectional(texts)] if read() else []

        def predict(self, texts):
            super().predict(texts)
            return planted.intersectional(texts)

    model = Planted(fail_launch={TEXTS[1]})
    run = hinter.run(TEXTS, model, attributes=("gender", "race"), order=2, dictionary=DIC, parser=parser,
                     out=tmp_path)
    assert run.store.stats()["model_errors"] == 0 and any(m.hidden for m in run.mutants)
    assert ("predict", TEXTS[1]) in model.events  # its failed launch asked again


def _planted_launching(at_original):
    """A launching model answering as planted.intersectional, calling `at_original(model, i)` when the first call
    of TEXTS[i]'s batch (its original) is launched."""
    from hinter.models.base import normalise

    class Planted(Launching):
        def submit(self, texts):
            if texts[0] in TEXTS:
                at_original(self, TEXTS.index(texts[0]))
            read = super().submit(texts)
            return lambda: [normalise(o) for o in planted.intersectional(texts)] if read() else []

        def predict(self, texts):
            super().predict(texts)
            return planted.intersectional(texts)

    return Planted()


def _same_as_one_call_at_a_time(run, parser, out):
    """The run's mutants answered as by planted.intersectional asked one call at a time; that run."""
    alone = hinter.run(TEXTS, planted.intersectional, attributes=("gender", "race"), order=2, dictionary=DIC,
                       parser=parser, out=out, batch_texts=1)
    assert [(m.text, m.outcome, m.bias, m.hidden) for m in run.mutants] == [
        (m.text, m.outcome, m.bias, m.hidden) for m in alone.mutants]
    return alone


def test_the_next_groups_texts_are_sent_before_this_group_is_stored(parser, tmp_path):
    """A launching model (hf: on CUDA) answers the next batch while the pipeline judges and stores this one: each
    batch's first call is launched while the batch before it is not yet in the store. A fatal error at that
    launch is raised only once the batch before is stored, so nothing answered is lost."""
    from hinter.errors import ModelError
    db = tmp_path / "run" / "run.sqlite"

    stored_at_launch, fatal_at = {}, []

    def at_original(model, i):
        stored_at_launch[i] = sqlite3.connect(db).execute("SELECT count(*) FROM texts").fetchone()[0] \
            if db.exists() else 0
        if i in fatal_at:
            raise ModelError("the model's weights are gone", fatal=True)

    run = hinter.run(TEXTS, _planted_launching(at_original), attributes=("gender", "race"), order=2, dictionary=DIC,
                     parser=parser, out=tmp_path / "run", batch_texts=1)
    assert run.store.stats()["model_errors"] == 0 and any(m.hidden for m in run.mutants)
    # text i's call went out while text i-1 was still being judged: i-1 texts stored, not i (the first text was
    # answered before the run, by the determinism probe)
    assert stored_at_launch == {i: i - 1 for i in range(1, len(TEXTS))}
    _same_as_one_call_at_a_time(run, parser, tmp_path / "alone")

    fatal_at.append(2)
    model = _planted_launching(at_original)
    with pytest.raises(ModelError, match="weights are gone"):
        hinter.run(TEXTS, model, attributes=("gender", "race"), order=2, dictionary=DIC, parser=parser,
                   out=tmp_path / "run", batch_texts=1, overwrite=True)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM texts").fetchone()[0] == 2


def test_the_next_groups_calls_go_out_before_this_groups_answers_are_read(parser, tmp_path):
    """With a launching model (hf: on CUDA) the pipeline sends a group's calls before it reads the group before's
    answers, so that the GPU does not wait between groups for the driver (reading and storing the last call,
    gathering the next texts); the rows are those of a model asked one call at a time."""
    unread_at_launch = {}

    def at_original(model, i):
        events = [e for e, _ in model.events]
        unread_at_launch[i] = events.count("launch") - events.count("read")

    run = hinter.run(TEXTS, _planted_launching(at_original), attributes=("gender", "race"), order=2, dictionary=DIC,
                     parser=parser, out=tmp_path / "run", batch_texts=1)
    # each batch after the first: a call of the batch before still out when its own first call went
    assert all(unread_at_launch[i] >= 1 for i in range(2, len(TEXTS)))
    alone = _same_as_one_call_at_a_time(run, parser, tmp_path / "alone")
    stats = [{k: v for k, v in r.store.stats().items() if not k.startswith(("seconds", "usage"))} for r in (run, alone)]
    assert stats[0] == stats[1] and stats[0]["model_calls"] > 0  # the calls counted once, in their own batch


def test_a_text_out_in_an_earlier_call_is_not_asked_again():
    """Two groups started before either is read (the pipeline's next group): a text the first one sends is not
    sent by the second, which reads its answer once the first has kept it; counted once."""
    from hinter.models.base import OutcomeCache
    from hinter.records import text_key
    model = Launching()
    cache = OutcomeCache(model)
    first = cache.start_repeats(["a", "b"], (0,))
    second = cache.start_repeats(["b", "c"], (0,))
    one, two = first()[0], second()[0]
    assert [o.value for o in one.values()] == ["A", "B"] and [o.value for o in two.values()] == ["B", "C"]
    assert sorted(t for e, t in model.events if e == "launch") == ["a", "b", "c"] and cache.calls == 3
    assert two[text_key("b")] is one[text_key("b")]
