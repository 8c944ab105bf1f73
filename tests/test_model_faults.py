"""Dependable in the field, the model's faults (issue 30): an answer outside the task's labels, a text that fails
its batch, a transient outage, model code that exits, crashes or hangs. Real faults: the planted models of
planted_faults.py raise, exit and sleep for real."""
import collections
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import hinter
from planted import DIC, TEXTS
from planted_faults import bad_text

TASK = """name: review
labels: [accept, reject]
system_prompt: Answer with one of [LABELS].
question: Accept or reject this review?
examples: []
"""
# Texts with gender and race words, some with a woman once mutated: 12 texts, two batches of 6.
MANY = [f"{t} Day {i}." for i, t in enumerate(TEXTS * 3)][:12]


def run(tmp_path, model, texts=MANY, **options):
    return hinter.run(texts, model, dictionary=DIC, out=tmp_path / "out", attributes=("gender", "race"),
                      **options)


def asked(log):
    return collections.Counter(open(log).read().split()) if os.path.exists(log) else collections.Counter()


def test_a_label_outside_the_task_is_unparseable_never_a_finding(tmp_path, parser):
    (tmp_path / "task.yaml").write_text(TASK)
    r = hinter.run(TEXTS, "python:planted_faults:maybe", dictionary=DIC, out=tmp_path / "out", parser=parser,
                   attributes=("gender",), task=str(tmp_path / "task.yaml"))
    s = r.summary()
    assert s["unparseable"]["mutants"] > 0 and s["unparseable"]["answers"] > 0
    assert all(m.outcome in (None, "accept") for m in r.mutants)  # "maybe" is never an outcome
    assert all(m.bias is None for m in r.mutants if m.outcome is None and m.valid)
    assert not any(f["significant"] for f in s["findings"])
    assert any("'maybe'" in e and "accept, reject" in e for e in s["first_errors"])
    assert s["health"]["failed_calls"] == s["unparseable"]["answers"]


def test_a_failing_text_fails_alone(tmp_path, parser, monkeypatch):
    log, bad_log = tmp_path / "asked.log", tmp_path / "bad.log"
    monkeypatch.setenv("HINTER_FAULTS_LOG", str(log))
    monkeypatch.setenv("HINTER_FAULTS_BAD", str(bad_log))
    r = run(tmp_path, "python:planted_faults:one_in_ten", parser=parser)
    s = r.summary()
    rows = r.store.db.execute("SELECT text, raw FROM texts").fetchall()
    bad = [t for t, _ in rows if bad_text(t)]
    # only the texts the model cannot read are errors, each with its own error; every other text is answered
    errors = [raw for t, raw in rows if raw and raw.startswith("model error:")]
    assert len(errors) == len(bad) and all("ValueError: cannot read a text" in e for e in errors)
    assert s["model_errors"] >= len(bad) and s["totals"]["atomic"]["tested"] > 0
    # the texts of a failing call were asked again by halves: more texts sent than the run's distinct ones
    assert sum(asked(log).values()) > s["model_calls"]
    # a text that always fails is asked again by the next runs, up to 3 in all, then kept as a model error
    failing = set(asked(bad_log))
    r.store.close()
    from hinter.store import MAX_TRIES
    for again in range(2, MAX_TRIES + 2):
        log.unlink(missing_ok=True)
        r = run(tmp_path, "python:planted_faults:one_in_ten", parser=parser)
        # only the texts that failed are asked (the others' answers are stored), and none after the last try
        assert set(asked(log)) == (failing if again <= MAX_TRIES else set()), again
        assert (r.summary()["health"]["texts_to_ask_again"] > 0) == (again < MAX_TRIES)
        r.store.close()


def test_an_outage_is_asked_again_and_answers_are_never_asked_twice(tmp_path, parser, monkeypatch):
    log, state = tmp_path / "asked.log", tmp_path / "state"
    monkeypatch.setenv("HINTER_FAULTS_LOG", str(log))
    monkeypatch.setenv("HINTER_FAULTS_STATE", str(state))
    # down for the start-up probe's 2 tries, the first batch's 3, and its halves, quarters and eighths (2 + 4 + 8:
    # every piece failing, the outage is seen): that batch's texts are model errors, the second batch is answered
    monkeypatch.setenv("HINTER_FAULTS_DOWN", str(2 + 3 + 2 + 4 + 8))
    first = run(tmp_path, "python:planted_faults:outage", parser=parser, batch_texts=6)
    s1 = first.summary()
    assert s1["model_errors"] > 0 and s1["health"]["texts_to_ask_again"] > 0
    answered = set(asked(log))
    first.store.close()
    again = run(tmp_path, "python:planted_faults:outage", parser=parser, batch_texts=6)
    s2 = again.summary()
    counts = asked(log)
    assert s2["model_errors"] == 0 and s2["health"]["texts_to_ask_again"] == 0
    assert max(counts.values()) == 1  # no text answered in the first run was asked again
    assert set(counts) > answered
    clean = hinter.run(MANY, "python:planted:intersectional", dictionary=DIC, out=tmp_path / "clean",
                       attributes=("gender", "race"), parser=parser, batch_texts=6).summary()
    assert s2["totals"] == clean["totals"] and s2["texts"] == clean["texts"]


def test_model_code_cannot_end_hinter_nor_fake_its_exit_code(tmp_path):
    """sys.exit(0), sys.exit(3) and a hang under timeout=2 in the model's code, through the CLI with a gate: the
    run goes on, records those texts as model errors, and exits per its health with summary, report and JUnit."""
    (tmp_path / "data.jsonl").write_text('{"text": "A white man came home. The film was fine."}\n'
                                         '{"text": "The boy liked it. It was long."}\n')
    (tmp_path / "dic.csv").write_text("attribute,source_group,target_group,word,replacement\n"
                                      "gender,male,female,man,woman\ngender,male,female,boy,girl\n"
                                      "race,european,african,white,black\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "run", "-d", "data.jsonl", "-m",
                        "python:planted_faults:misbehaves?timeout=2", "-a", "gender,race", "--dictionary", "dic.csv",
                        "-o", "out", "--fail-on", "biased>0", "--junit", "x.xml"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr  # the model failed (hinter's health), not the model's own exit
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (tmp_path / "out" / "report.html").is_file()
    junit = (tmp_path / "x.xml").read_text()
    assert '<error message="the model failed' in junit and 'name="health"' in junit
    assert s["model_errors"] >= 3 and s["totals"]["atomic"]["tested"] > 0  # the other texts were answered
    raws = [raw for (raw,) in sqlite3.connect(tmp_path / "out" / "run.sqlite").execute(
        "SELECT raw FROM mutants WHERE raw LIKE 'model error:%'")]
    assert any("sys.exit(0)" in x for x in raws) and any("sys.exit(3)" in x for x in raws)
    assert any("timeout of 2 s" in x for x in raws)
    assert "the model failed" in r.stderr


def test_a_hang_warns_of_a_stall_and_a_timeout_frees_the_run(caplog):
    """A real hang in the worker: the stall warning comes while waiting, the timeout stops the call, and the next
    call is answered by a new worker."""
    from hinter.models import load_model
    from hinter.models.base import predict_with_retries
    m = load_model("python:planted_faults:hangs?timeout=1.5")
    m.stall_s = 0.5  # the progress's warning, every 60 s in a run
    try:
        error = predict_with_retries(m, ["A woman came home."], retries=2, backoff_s=0.01)
        assert "no answer within the timeout of 1.5 s" in error  # once: a timed-out call is not tried again
        assert any("no answer from the model for 1 s on a call of 1 texts (timeout 1.5 s)" in r.getMessage()
                   for r in caplog.records)
        assert predict_with_retries(m, ["A man came home."])[0].value == "positive"  # a new worker answers
    finally:
        m.close()


def test_the_budget_message_counts_a_model_call_s_inputs():
    from hinter.usage import Budget, BudgetReached, Meter

    class Model:
        fingerprint, batch_size = "x", 64

    with pytest.raises(BudgetReached, match=r"next model call, on 64 inputs \(originals and their mutants\)"):
        Meter(Model(), budget=Budget("calls", 20)).check(["a text"] * 64)
