"""Issue 14, item 6: a run stores mutants as edits, never as texts: at most 300 bytes a mutant on disk on a bundled
campaign; a run folder made before (texts and JSON replacements in run.sqlite, tests/data/legacy-run, made by the
code of commit 897d0d0) opens, reads back the same mutants and summary, resumes from its outcome cache without
asking the model again, and reports."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import hinter
from campaign import mutant_rows
from hinter.datasets import load_dataset
from hinter.analysis.measures import summary
from hinter.records import apply_replacements, edits, replacements_from_json
from hinter.store import open_run

import planted

HERE = Path(__file__).parent
LEGACY = HERE / "data" / "legacy-run"


def run_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.glob("run.sqlite*"))


def test_bytes_per_mutant_on_a_bundled_campaign(parser, tmp_path):
    texts = [r.text for r in load_dataset("imdb", limit=40)]
    # every occurrence (--any-occurrence): the campaign's size, not mutation's choices, is what this measures
    run = hinter.run(texts, planted.by_hash, attributes=("race", "gender"), order=2, parser=parser, out=tmp_path,
                     person_only=False)
    n = sum(1 for _ in run.store.mutants())
    valid = sum(m.valid for m in run.store.mutants())
    run.store.close()  # checkpoints the write-ahead log into run.sqlite
    size = run_bytes(tmp_path)
    # a campaign with many mutants, a fair share of them asked (English mutation leaves names, verbs and languages
    # alone, makes a pronoun pair only in its right form (his -> her before a noun, not -> hers) and discards a
    # pronoun mutant it cannot follow through: 1,101 mutants here, 1,592 before)
    assert n > 1000 and valid > 300
    assert size / n <= 300, f"{size / n:.0f} bytes per mutant ({size:,} bytes, {n:,} mutants)"


def _legacy_rows(db_path: Path) -> list[tuple]:
    """The mutants as the old schema held them, their texts rebuilt where not stored (what the old store read)."""
    db = sqlite3.connect(db_path)
    originals = dict(db.execute("SELECT text_id, text FROM texts"))
    rows = sorted(db.execute("SELECT text_id, pair_key, ord, attributes, replacements, text, changed_sentences, "
                             "valid, outcome, raw, queried, bias, hidden, strictly_hidden FROM mutants"))
    db.close()
    for r in rows:  # the old form's text: stored exactly for every mutant asked
        if r[5] is not None:
            assert r[5] == apply_replacements(originals[r[0]], edits(replacements_from_json(r[4])))
    return rows


def _comparable_summary(s: dict) -> dict:
    """The summary less timings, in-memory cache counters and settings, restricted to what the legacy run's
    summary holds (measures added since, such as discard reasons, are additions)."""
    def like(x, ref):
        if isinstance(ref, dict) and isinstance(x, dict):
            return {k: like(x[k], ref[k]) for k in ref if k in x}
        if isinstance(ref, list) and isinstance(x, list):
            return [like(a, b) for a, b in zip(x, ref)] + x[len(ref):]
        return x
    s = like(json.loads(json.dumps(s)), LEGACY_SUMMARY)
    for volatile in ("seconds", "sentences_tagged", "sentences_parsed", "model_calls", "settings", "health"):
        s.pop(volatile, None)
    for f in s.get("findings", []):  # a finding's interval is its test's inverted since issue 29: not the legacy one
        f.pop("effect_ci", None)
        f.pop("interaction_ci", None)
    return s


LEGACY_SUMMARY = json.loads((LEGACY / "summary.json").read_text())


def test_a_run_folder_of_the_old_schema_opens_resumes_and_reports(tmp_path):
    out = tmp_path / "run"
    shutil.copytree(LEGACY, out)
    expected = _legacy_rows(out / "run.sqlite")
    legacy_summary = json.loads((LEGACY / "summary.json").read_text())
    old_size = (out / "run.sqlite").stat().st_size

    store = open_run(out)  # converts it once
    try:
        assert _comparable_summary(summary(store)) == _comparable_summary(legacy_summary)
        cached = store.outcome_count()
    finally:
        store.close()
    assert mutant_rows(out) == expected and len(expected) == 27
    assert (out / "run.sqlite").stat().st_size < old_size

    # an interrupted run of the old schema: nothing stored yet but its settings and the model's answers
    for p in out.glob("run.sqlite*"):
        p.unlink()
    shutil.copy(LEGACY / "run.sqlite", out / "run.sqlite")
    db = sqlite3.connect(out / "run.sqlite")
    with db:
        for table in ("mutants", "texts", "stats"):
            db.execute(f"DELETE FROM {table}")
    db.close()
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    resume = [sys.executable, "-m", "hinter.cli", "resume", str(out)]
    # recorded before a python: model's fingerprint held its code's hash: whether it changed cannot be known
    r = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "cannot be known" in r.stderr and "--overwrite" in r.stderr, r.stderr
    # the same folder with the model's fingerprint as this hinter takes it: the old schema's cache answers what it
    # holds. English mutation has changed since that run (issue 40: a pronoun mutant is discarded where a person
    # noun of its gender may be meant, names and verbs are left alone), so the resumed mutants are those this hinter
    # makes: the same folder resumed with no answers stored ("fresh") makes them, asking the model for all.
    sys.path.insert(0, str(HERE))
    from hinter.models import resolve_model
    now = resolve_model("python:planted:by_hash").fingerprint
    fresh = tmp_path / "fresh"
    shutil.copytree(out, fresh)
    for folder, tables in ((out, ()), (fresh, ("outcomes",))):
        db = sqlite3.connect(folder / "run.sqlite")
        with db:
            db.execute("UPDATE settings SET value = ? WHERE key = 'model'", (json.dumps(now),))
            db.execute("UPDATE outcomes SET model = ?", (now,))
            for table in tables:
                db.execute(f"DELETE FROM {table}")
        db.close()
    for folder in (out, fresh):
        r = subprocess.run([sys.executable, "-m", "hinter.cli", "resume", str(folder)], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    assert mutant_rows(out) == mutant_rows(fresh)
    s = json.loads((out / "summary.json").read_text())
    assert _comparable_summary(s) == _comparable_summary(json.loads((fresh / "summary.json").read_text()))
    stores = open_run(out), open_run(fresh)
    try:  # the old schema's answers were reused: the model was asked only what they did not hold
        calls, fresh_calls = (st.stats()["model_calls"] for st in stores)
        assert calls < fresh_calls and stores[0].outcome_count() >= cached == 27
    finally:
        for st in stores:
            st.close()
    r = subprocess.run([sys.executable, "-m", "hinter.cli", "report", str(out)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (out / "report.html").stat().st_size > 10_000
