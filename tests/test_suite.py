"""Suites (issue 14 item 1): `hinter suite build` once, then `hinter run --suite` runs only the model stage and the
oracle, in a process where spaCy cannot be imported, with the results of a plain `hinter run` (texts, mutants,
verdicts, discard reasons, outcomes, bias, hidden, summary less timings); it resumes; the Python API gives the
same; a damaged, foreign or other-version file is a clear error naming it."""
import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import hinter
from campaign import mutant_rows
from hinter.errors import InputError
from hinter.store import open_run
from hinter.pipeline.suite import load_suite

import planted
import cli

# every occurrence: with only a person's words the first 12 reviews give about 20 mutants, few for the checks below
CAMPAIGN = ["--dataset", "imdb", "--limit", "12", "--attributes", "race,gender", "--order", "2",
            "--max-pairs-per-text", "2", "--seed", "3", "--any-occurrence"]
MODEL = ["--model", "python:planted:by_hash", "--task", "imdb"]
# Runs hinter's CLI with every import of spaCy (and its thinc) failing, as on a machine without it.
NO_SPACY = """
import sys
class NoSpacy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("spacy", "thinc"):
            raise ImportError(f"no module named {name!r} (blocked by the test)")
sys.meta_path.insert(0, NoSpacy())
sys.argv = ["hinter", *sys.argv[1:]]
from hinter.cli import main
try:
    main()
finally:
    assert "spacy" not in sys.modules
"""


def hinter_cli(*args, no_spacy=False, cwd=None):
    if not no_spacy:
        return cli.hinter(*args, cwd=cwd, timeout=300)
    return subprocess.run([sys.executable, "-c", NO_SPACY, *args], env=cli.environment(), capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    r = hinter_cli("suite", "build", *CAMPAIGN, "--out", str(root / "imdb.suite"), "--workers", "1")
    assert r.returncode == 0, r.stderr
    r = hinter_cli("run", *CAMPAIGN, *MODEL, "--out", str(root / "plain"), "--workers", "1")
    assert r.returncode == 0, r.stderr
    return root


def texts_of(out):
    db = sqlite3.connect(out / "run.sqlite")
    try:
        return sorted(db.execute("SELECT text_id, source_id, text, gold, outcome, raw, scores FROM texts"))
    finally:
        db.close()


def reasons_of(out):
    store = open_run(out)
    try:
        return sorted((m.text_id, m.pair_key, m.discard_reason) for m in store.mutants())
    finally:
        store.close()


def summary_of(out):
    s = json.loads((out / "summary.json").read_text())
    s.pop("seconds")
    s.pop("usage")  # what the model calls cost: a run that reuses stored answers spends nothing (test_usage.py)
    for k in ("suite", "suite_fingerprint"):  # which suite a suite run read: recorded for resume
        s["settings"].pop(k, None)
    return s


def assert_same_run(a: Path, b: Path):
    assert texts_of(a) == texts_of(b)
    assert mutant_rows(a) == mutant_rows(b)
    assert reasons_of(a) == reasons_of(b)
    assert summary_of(a) == summary_of(b)


def test_a_suite_run_without_spacy_equals_the_plain_run(built, tmp_path):
    r = hinter_cli("run", "--suite", str(built / "imdb.suite"), *MODEL, "--out", str(tmp_path / "s"), no_spacy=True)
    assert r.returncode == 0, r.stderr
    assert_same_run(built / "plain", tmp_path / "s")
    rows = mutant_rows(tmp_path / "s")
    assert len(rows) > 20 and 0 < sum(r[7] for r in rows) < len(rows)  # valid and discarded mutants alike
    assert any(reason for _, _, reason in reasons_of(tmp_path / "s"))  # discard reasons carried
    settings = json.loads((tmp_path / "s" / "summary.json").read_text())["settings"]
    assert settings["suite"] == str((built / "imdb.suite").resolve())
    # the suite is small: its texts compressed, and about 20 bytes a mutant
    text_bytes = sum(len(t[2].encode()) for t in texts_of(tmp_path / "s"))
    assert (built / "imdb.suite").stat().st_size < 0.6 * text_bytes + 40 * len(rows) + 2000

    # interrupted after its settings: `hinter resume` reads the same suite, still without spaCy
    db = sqlite3.connect(tmp_path / "s" / "run.sqlite")
    with db:
        for table in ("mutants", "texts", "stats"):
            db.execute(f"DELETE FROM {table}")
    db.close()
    r = hinter_cli("resume", str(tmp_path / "s"), no_spacy=True)
    assert r.returncode == 0, r.stderr
    assert_same_run(built / "plain", tmp_path / "s")


def test_the_python_api_builds_and_runs_suites(built, tmp_path, parser):
    from hinter.datasets import load_dataset
    texts = load_dataset("imdb", limit=6)
    path = hinter.build_suite(texts, out=tmp_path / "a.suite", attributes=("race", "gender"), parser=parser,
                              max_pairs_per_text=2)
    plain = hinter.run(texts, planted.intersectional, parser=parser, max_pairs_per_text=2, out=tmp_path / "plain")
    via = hinter.run(suite=path, model=planted.intersectional, out=tmp_path / "suite")
    assert [(m.replacements, m.text, m.valid, m.outcome, m.bias, m.hidden) for m in plain.mutants] == \
           [(m.replacements, m.text, m.valid, m.outcome, m.bias, m.hidden) for m in via.mutants]
    assert len(load_suite(path).records) == 6


def _rewrite(src: Path, dst: Path, edit) -> Path:
    lines = gzip.decompress(src.read_bytes()).splitlines(keepends=True)
    dst.write_bytes(gzip.compress(b"".join(edit(lines))))
    return dst


def test_a_suite_built_by_two_processes_is_byte_identical_to_one_process(built, tmp_path):
    """--workers spreads whole texts over forked processes, each text validated with caches of its own: the file,
    counters included, is the same bytes as one process's, under another name too (no name in its gzip header)."""
    r = hinter_cli("suite", "build", *CAMPAIGN, "--out", str(tmp_path / "two.suite"), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert len(load_suite(tmp_path / "two.suite").records) == 12
    assert (tmp_path / "two.suite").read_bytes() == (built / "imdb.suite").read_bytes()


@pytest.mark.parametrize("split, chunk, keep", [(2, 4, 2_000), (10**9, 16_000, 1)])
def test_texts_cut_into_slices_give_the_same_suite(built, tmp_path, monkeypatch, split, chunk, keep):
    """A text needing many sentences parsed is parsed in slices spread over the workers, then validated on those
    parses; a text with many mutants is validated on the worker that mutated it: the same verdicts, reasons and
    counters as one Validator parsing each text alone."""
    from hinter.pipeline.engine import SpreadVerdicts
    from hinter.executor import LocalExecutor
    monkeypatch.setattr(SpreadVerdicts, "SPLIT", split)  # 2: every text with more than 2 characters to parse is cut
    monkeypatch.setattr(SpreadVerdicts, "CHUNK", chunk)
    monkeypatch.setattr(SpreadVerdicts, "KEEP", keep)
    path = hinter.build_suite(out=tmp_path / "cut.suite", executor=LocalExecutor(2), dataset="imdb", limit=12,
                              attributes=("race", "gender"), order=2, max_pairs_per_text=2, seed=3, person_only=False)
    assert path.read_bytes() == (built / "imdb.suite").read_bytes()


def test_bad_suite_files_are_clear_errors(built, tmp_path):
    good = built / "imdb.suite"
    data = good.read_bytes()

    def error(path) -> InputError:
        with pytest.raises(InputError) as e:
            load_suite(path)
        assert str(path) in e.value.message and e.value.fix
        return e.value

    (tmp_path / "notes.txt").write_text("not a suite\n")
    assert "not a hinter suite" in error(tmp_path / "notes.txt").message
    (tmp_path / "other.gz").write_bytes(gzip.compress(b'{"some": "json"}\n'))
    assert "not a hinter suite" in error(tmp_path / "other.gz").message
    (tmp_path / "cut.suite").write_bytes(data[:len(data) // 2])
    assert "truncated or damaged" in error(tmp_path / "cut.suite").message
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    (tmp_path / "flipped.suite").write_bytes(bytes(flipped))
    assert "truncated or damaged" in error(tmp_path / "flipped.suite").message
    # a whole gzip stream whose content was changed (a mutant's verdict) or lost its last lines
    def first_verdict_flipped(lines):
        at = next(i for i, line in enumerate(lines) if i and b',1,null]' in line)  # a text with a valid mutant
        return [line.replace(b',1,null]', b',0,null]', 1) if i == at else line for i, line in enumerate(lines)]

    changed = _rewrite(good, tmp_path / "changed.suite", first_verdict_flipped)
    assert "truncated or damaged" in error(changed).message
    assert "truncated or damaged" in error(_rewrite(good, tmp_path / "short.suite", lambda ls: ls[:-2])).message

    def header(**changes):
        def edit(lines):
            h = json.loads(lines[0])
            h.update(changes)
            return [json.dumps(h).encode() + b"\n", *lines[1:]]
        return edit
    e = error(_rewrite(good, tmp_path / "v9.suite", header(format_version=9, hinter_version="9.0")))
    assert "format 9" in e.message and "hinter suite build" in e.fix
    e = error(_rewrite(good, tmp_path / "old.suite", header(hinter_version="0.0.1")))
    assert "built by hinter 0.0.1" in e.message

    r = hinter_cli("run", "--suite", str(tmp_path / "cut.suite"), *MODEL, "--out", str(tmp_path / "x"),
                   no_spacy=True)
    assert r.returncode != 0 and "truncated or damaged" in r.stderr and "Traceback" not in r.stderr


def test_build_options_beside_a_suite_are_refused_not_ignored(built, tmp_path):
    r = hinter_cli("run", "--suite", str(built / "imdb.suite"), *MODEL, "--attributes", "race", "--limit", "3",
                   "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "--attributes, --limit cannot change a suite" in r.stderr
    assert not (tmp_path / "x" / "run.sqlite").exists()


def test_a_reference_mode_suite_runs_as_a_plain_reference_run(tmp_path, parser):
    # the validity mode is recorded once: the suite run's settings (parser included) are the plain run's
    from hinter.datasets import load_dataset
    texts = load_dataset("imdb", limit=4)
    path = hinter.build_suite(texts, out=tmp_path / "r.suite", attributes=("race", "gender"), parser=parser,
                              max_pairs_per_text=2, validity="reference")
    plain = hinter.run(texts, planted.intersectional, parser=parser, max_pairs_per_text=2, validity="reference",
                       out=tmp_path / "plain")
    via = hinter.run(suite=path, model=planted.intersectional, out=tmp_path / "suite")
    assert [(m.text, m.valid, m.outcome, m.bias) for m in plain.mutants] == \
           [(m.text, m.valid, m.outcome, m.bias) for m in via.mutants]
    a, b = (json.loads((run.out_dir / "summary.json").read_text())["settings"] for run in (plain, via))
    assert a["parser"] == b["parser"] and a["parser"].count("+validity=reference") == 1
    assert a["validity"] == b["validity"] == "reference"
