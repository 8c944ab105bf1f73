"""One small campaign that every backend runs unchanged (test_hf.py, test_openai_server.py): only --model differs."""
import json
import os
import random
import signal
import sqlite3
from pathlib import Path

from cli import hinter


# Short reviews with words of the race and gender dictionaries: a campaign of a few dozen model calls.
REVIEWS = [
    {"id": "r1", "text": "The black actor is brilliant and the story is moving. I loved it."},
    {"id": "r2", "text": "A white woman directs this dull film. The plot makes no sense at all."},
    {"id": "r3", "text": "My husband and I laughed all night; the African hero steals every scene."},
]
CAMPAIGN = ("run", "--attributes", "race,gender", "--order", "2", "--max-pairs-per-text", "2", "--task", "imdb")


def run_campaign(tmp_path: Path, model: str, name: str, *options: str):
    data = tmp_path / "reviews.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in REVIEWS))
    return hinter(*CAMPAIGN, "--dataset", str(data), "--model", model, "--out", str(tmp_path / name), *options)


WORDS = ["A white man", "The man and a white boy", "A boy", "The white house and the man", "Nobody"]


def write_kill_campaign(root: Path, texts: int = 48) -> Path:
    """Short texts and a four-pair dictionary: 48 are enough (with planted:counting) for kills to land mid-run."""
    rng = random.Random(7)
    rows = [{"id": f"r{i}", "text": f"{rng.choice(WORDS)} came home on day {i}. The film was {rng.choice(['fine', 'long'])}."
             f" {rng.choice(WORDS)} liked it."} for i in range(texts)]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "dic.csv").write_text("attribute,source_group,target_group,word,replacement\n"
                                  "gender,male,female,man,woman\ngender,male,female,boy,girl\n"
                                  "race,european,african,white,black\nrace,european,asian,white,asian\n")
    return root


# Reading a run back, for comparing runs (the resume and Ray tests) and checking pages against summary.json.

def summary_value(s: dict, path: str):
    """The value a report's `data-measure` path names in summary.json: dotted keys (list indices as numbers),
    several paths joined by " + " summed."""
    total = 0
    for part in path.split(" + "):
        obj = s
        for p in part.split("."):
            obj = obj[int(p)] if isinstance(obj, list) else obj[p]
        total += obj
    return total


def stored_texts(out) -> int:
    """Texts whose batch is committed (0 before the store exists)."""
    try:
        db = sqlite3.connect(out / "run.sqlite")
        try:
            return db.execute("SELECT COUNT(*) FROM texts").fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def answered(out):
    if not (out / "run.sqlite").exists():
        return set()
    db = sqlite3.connect(out / "run.sqlite")
    try:
        # the store keeps a text's SHA-256 as its first 16 bytes: compared as 32 hex digits
        return {h.hex() if isinstance(h, bytes) else h for (h,) in db.execute("SELECT text_hash FROM outcomes")}
    except sqlite3.OperationalError:  # killed before the schema was written
        return set()
    finally:
        db.close()


def mutant_rows(out) -> list[tuple]:
    """Every mutant as the store reads it back (text rebuilt from its edits), in the form run.sqlite held before
    issue 14 (replacements as JSON, a text only for mutants the model was asked about), sorted."""
    from hinter.records import replacements_to_json
    from hinter.store import RunStore
    store = RunStore(out / "run.sqlite")
    try:
        return sorted((m.text_id, m.pair_key, m.order, m.attributes, replacements_to_json(m.replacements),
                       m.text if m.queried else None, m.changed_sentences, int(m.valid), m.outcome, m.raw,
                       int(m.queried), *(None if v is None else int(v) for v in (m.bias, m.hidden, m.strictly_hidden)))
                      for m in store.mutants())
    finally:
        store.close()


def results(out):
    db = sqlite3.connect(out / "run.sqlite")
    texts = sorted(db.execute("SELECT text_id, source_id, text, outcome, raw FROM texts"))
    db.close()
    mutants = mutant_rows(out)
    summary = json.loads((out / "summary.json").read_text())
    for volatile in ("seconds", "sentences_tagged", "sentences_parsed"):  # timing and in-memory cache effects
        summary.pop(volatile, None)
    summary["settings"].pop("cli", None)  # holds the output folder's siblings' names only through paths
    # what the model calls cost, as this executor measured it (tokens from Ray workers are estimated; a killed
    # session's uncommitted batch is not counted): the results themselves are compared above (test_usage.py)
    summary.pop("usage", None)
    return texts, mutants, summary


def kill_and_resume(out: Path, start, kills_wanted: int, wait_before_kill) -> tuple[int, dict[int, set]]:
    """Start session after session (`start(session, last)` -> Popen in a new process session) until one finishes,
    SIGKILLing the whole process group of the first `kills_wanted` after `wait_before_kill(p, answered_before)`.
    `last` is True for the session started once the kills are made: nobody kills it, so it may leave out the delay
    that lets kills land inside batches. Returns the kills made and, per session, the texts answered before it
    started."""
    kills, session = 0, 0
    before: dict[int, set] = {}
    while True:
        before[session] = answered(out)
        p = start(session, kills >= kills_wanted)
        if kills < kills_wanted:
            wait_before_kill(p, before[session])
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                kills += 1
                session += 1
                continue
        assert p.wait(timeout=300) == 0, p.stderr.read().decode()
        return kills, before


def assert_nothing_asked_again(calls: Path, before: dict[int, set]) -> None:
    """No model call whose answer had been saved was made again by a later session (planted:counting's log)."""
    for line in calls.read_text().splitlines():
        s, h = line.split("\t")
        assert h[:32] not in before[int(s)], f"session {s} asked again about a text answered before it started"
