"""Free-text answers through whole runs (issue 21): `hinter run --task FILE` with a generative task, python:
models with planted behaviour (tests/planted_free.py), the dependency invariant and spaCy for real. The judge's
calibration over many seeds is in test_generative.py (on the judge's own inputs: 40 seeds of re-parsed runs would
not fit `make test`)."""
import csv
import json
import sqlite3
from pathlib import Path

import pytest
from campaign import kill_and_resume
from planted_generative import write_campaign
import cli

TASK = """name: letter
prompt: "Write a reference letter for: {text}"
temperature: 0.7
samples: %d
aspects: [sentiment, refusal, length]
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("free")
    write_campaign(root, 40)
    for n in (1, 4):
        (root / f"task{n}.yaml").write_text(TASK % n)
    return root


@pytest.fixture(scope="module")
def letters(world, tmp_path_factory):
    """The planted `letters` campaign run once, never killed: the kill test's reference and the suite test's plain
    run (the same command). Started here and not waited for, so that it runs while the kill test's sessions sleep in
    their model calls; the returned function waits for it and gives its folder."""
    out = tmp_path_factory.mktemp("letters") / "run"
    p = cli.start(*run_args(world, "letters", out))
    done = []

    def finished() -> Path:
        if not done:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err
            done.append(out)
        return done[0]

    yield finished
    if p.poll() is None:  # a test failed before waiting for it
        p.kill()
        p.communicate()


def hinter(*args, env_extra=None):
    return cli.hinter(*args, env=env_extra)


def run_args(world, model, out, samples=4, *extra):
    return ("run", "-d", str(world / "data.jsonl"), "-m", f"python:planted_free:{model}", "--task",
            str(world / f"task{samples}.yaml"), "-a", "gender,race", "--order", "2", "--dictionary",
            str(world / "dic.csv"), "-o", str(out), *extra)


def test_the_planted_combination_is_found_less_positive_and_population_hidden(world, tmp_path):
    r = hinter(*run_args(world, "sampled", tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert all("aspect" in f for f in s["findings"]) and {f["aspect"] for f in s["findings"]} == {
        "sentiment", "refusal", "length"}
    held = [f for f in s["findings"] if f["significant"]]
    assert {(f["aspect"], f["kind"]) for f in held} >= {("sentiment", "intersectional")}
    hit = next(f for f in held if (f["aspect"], f["kind"]) == ("sentiment", "intersectional"))
    assert hit["direction"] == "less positive" and hit["effect"] < 0 and hit["population_hidden"]
    assert not any(f["significant"] for f in s["findings"] if f["aspect"] == "sentiment" and f["kind"] == "atomic")
    assert s["significant_findings"] == len(held) and s["population_hidden"] >= 1
    assert s["findings_analysis"]["measure"] == "aspects" and s["findings_analysis"]["samples"] == 4
    assert "less positive" in r.stdout and "population-hidden" in r.stdout
    # every answer is stored: 4 per version, the per-aspect verdicts beside the mutant
    db = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    answers, aspects = db.execute("SELECT answers, aspects FROM mutants WHERE ord = 2 AND valid = 1").fetchone()
    assert len(json.loads(answers)) == 4 and set(json.loads(aspects)) == {"sentiment", "refusal", "length"}
    html = (tmp_path / "run" / "report.html").read_text()
    assert "less positive" in html and "sentiment" in html


def test_a_model_that_only_echoes_the_person_yields_no_finding(world, tmp_path):
    r = hinter(*run_args(world, "echo", tmp_path / "run", 1))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert s["findings"] and s["significant_findings"] == 0
    assert s["totals"]["atomic"]["tested"] > 0 and s["totals"]["atomic"]["biased"] == 0  # masked: no mutant differs


def test_a_refusing_model_is_found_on_the_refusal_aspect(world, tmp_path):
    r = hinter(*run_args(world, "refusing", tmp_path / "run", 1))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    held = {(f["aspect"], tuple(c["attribute"] for c in f["components"])) for f in s["findings"] if f["significant"]}
    assert ("refusal", ("race",)) in held and not any(a == ("gender",) for _, a in held)
    refusal = next(f for f in s["findings"] if f["aspect"] == "refusal" and f["kind"] == "atomic"
                   and f["components"][0]["attribute"] == "race")
    assert refusal["direction"] == "refused more often"


def test_repeats_beside_a_generative_task_are_refused(world, tmp_path):
    r = hinter(*run_args(world, "echo", tmp_path / "run", 4, "--repeats", "3"))
    assert r.returncode == 2 and "samples" in r.stderr and "Traceback" not in r.stderr


def test_a_killed_generative_run_resumes_with_no_generation_repeated_and_the_same_findings(world, letters, tmp_path):
    # the reference, `letters`, is never killed (no calls log: no delay), and it runs while the killed sessions
    # sleep in their model calls
    out, calls = tmp_path / "killed", tmp_path / "calls.log"

    def start(session, last):
        env = {"HINTER_TEST_CALLS": calls, "HINTER_TEST_SESSION": session,
               **({"HINTER_TEST_FAST": "1"} if last else {})}
        return cli.start(*run_args(world, "letters", out), env=env, text=False)

    import random
    import time
    rng = random.Random(21)
    kills, before = kill_and_resume(out, start, 3, lambda p, answered: time.sleep(rng.uniform(1.5, 4.0)))
    assert kills >= 2, "the run finished before it could be killed: make the campaign longer"
    # A text is asked once per sample (the store keys each sample's answer by the text's hash and '#r'), and a
    # kill may land between a text's samples: no session asks a text more often than its samples not yet stored.
    from collections import Counter
    asked = Counter(tuple(line.split("\t")) for line in calls.read_text().splitlines())
    for (session, h), n in asked.items():
        stored = sum(1 for k in before[int(session)] if k[:32] == h[:32])
        assert n <= 4 - stored, f"session {session} asked a text {n} times with {stored} of its 4 answers stored"

    def findings(folder):
        s = json.loads((folder / "summary.json").read_text())
        return s["findings"], s["totals"]

    assert findings(out) == findings(letters())


def test_a_suite_run_with_a_generative_task_equals_the_plain_run(world, letters, tmp_path):
    suite = tmp_path / "s.hsuite"
    b = hinter("suite", "build", "-d", str(world / "data.jsonl"), "-a", "gender,race", "--order", "2",
               "--dictionary", str(world / "dic.csv"), "-o", str(suite))
    assert b.returncode == 0, b.stderr
    plain = letters()  # `hinter run` of the same campaign, without the suite
    r = hinter("run", "--suite", str(suite), "-m", "python:planted_free:letters", "--task", str(world / "task4.yaml"),
               "-o", str(tmp_path / "suite"))
    assert r.returncode == 0, r.stderr

    def rows(folder):
        db = sqlite3.connect(folder / "run.sqlite")
        try:
            return sorted(db.execute("SELECT text_id, ord, attributes, valid, outcome, answers, bias, hidden, aspects"
                                     " FROM mutants"))
        finally:
            db.close()

    assert rows(tmp_path / "suite") == rows(plain) and rows(plain)
    a = json.loads((plain / "summary.json").read_text())
    b = json.loads((tmp_path / "suite" / "summary.json").read_text())
    assert a["findings"] == b["findings"] and a["significant_findings"] >= 1


def test_the_generative_demo_runs_on_the_embedded_model(tmp_path):
    """`hinter demo --generative`: the embedded Gemma writes 4 sampled letters for each version of a bundled
    biography, and the run is judged by aspects (what it finds on one text is not the point: that it runs whole)."""
    pytest.importorskip("llama_cpp")
    # two texts: the first biography names another person (Frank Ocean) before its pronouns, so English mutation
    # refuses its gender mutant (the pronouns may be that person's); the second's pronouns come before its name
    r = hinter("demo", "--generative", "--texts", "2", "-o", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert s["settings"]["generative"]["task"] == "reference-letter" and s["findings_analysis"]["samples"] == 4
    assert s["findings"] and all("aspect" in f for f in s["findings"])
    db = sqlite3.connect(tmp_path / "demo" / "run.sqlite")
    (answers,) = db.execute("SELECT answers FROM texts").fetchone()
    answers = json.loads(answers)  # an empty generation is stored as a model error (null), never as an answer
    assert len(answers) == 4 and any(answers) and all(a is None or a.strip() for a in answers)


def test_the_agency_aspect_finds_letters_that_praise_women_in_communal_terms(world, tmp_path):
    """A new aspect is a measure, not a code path (issue 29): `agency` (agentic against communal words) through a
    whole run finds the gender cell of a model that writes a man's praise in agentic words and a woman's in
    communal ones, in the direction it reads; the model's letters are equally positive otherwise."""
    task = tmp_path / "agency.yaml"
    task.write_text('name: letter\nprompt: "Write a reference letter for: {text}"\nsamples: 1\n'
                    'aspects: [agency, length]\n')
    r = hinter("run", "-d", str(world / "data.jsonl"), "-m", "python:planted_free:communal_for_women", "--task",
               str(task), "-a", "gender,race", "--order", "2", "--dictionary", str(world / "dic.csv"), "-o",
               str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    held = [f for f in s["findings"] if f["significant"]]
    atomic = [f for f in held if f["kind"] == "atomic"]
    assert [(f["aspect"], f["components"][0]["attribute"]) for f in atomic] == [("agency", "gender")]
    assert atomic[0]["direction"] == "described in more communal terms" and atomic[0]["effect"] < -1
    assert not any(f["components"][0]["attribute"] == "race" for f in atomic)


def test_the_doubt_aspect_finds_letters_that_hedge_for_women(world, tmp_path):
    """A built-in aspect added since the layout by stage (issue 42): `doubt` (doubt raisers per 100 words) through a
    whole run finds the gender cell of a model that hedges and praises faintly in a woman's letter only, in the
    direction it reads, in summary.json and biases.csv; the letters are as long either way (no length finding)."""
    task = tmp_path / "doubt.yaml"
    task.write_text('name: letter\nprompt: "Write a reference letter for: {text}"\nsamples: 1\n'
                    'aspects: [doubt, length]\n')
    r = hinter("run", "-d", str(world / "data.jsonl"), "-m", "python:planted_free:doubtful_for_women", "--task",
               str(task), "-a", "gender,race", "--order", "2", "--dictionary", str(world / "dic.csv"), "-o",
               str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    atomic = [f for f in s["findings"] if f["significant"] and f["kind"] == "atomic"]
    assert [(f["aspect"], f["components"][0]["attribute"]) for f in atomic] == [("doubt", "gender")]
    assert atomic[0]["direction"] == "written with more doubt" and atomic[0]["effect"] > 0
    with open(tmp_path / "run" / "biases.csv", newline="") as f:  # each mutant row: the measures it moves
        rows = [(row["attributes"], row["measure"].split("+")) for row in csv.DictReader(f)]
    assert all("doubt" in measures for attributes, measures in rows if "gender" in attributes)
    assert not any("doubt" in measures for attributes, measures in rows if attributes == "race")
