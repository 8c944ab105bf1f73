"""Stage 6: the run store, one SQLite file holding every text, mutant, verdict, outcome and raw answer."""
from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from .models.base import Outcome

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value REAL NOT NULL);
CREATE TABLE IF NOT EXISTS texts (
    text_id INTEGER PRIMARY KEY,      -- index into the dataset as read
    source_id TEXT,                   -- the dataset's own id, when it has one
    text TEXT NOT NULL,
    gold TEXT,                        -- the dataset's label, when it has one
    outcome TEXT,                     -- the model's outcome (NULL: unparseable)
    raw TEXT                          -- the model's raw answer
);
CREATE TABLE IF NOT EXISTS mutants (
    mutant_id INTEGER PRIMARY KEY,
    text_id INTEGER NOT NULL REFERENCES texts(text_id),
    ord INTEGER NOT NULL,             -- 1: atomic, k >= 2: intersectional of order k
    attributes TEXT NOT NULL,         -- attributes changed, sorted, joined by '+'
    pair_key TEXT NOT NULL,           -- pair ids joined by ' & ': the mutant within its text
    replacements TEXT NOT NULL,       -- JSON list of {attribute, source_group, target_group, word, replacement, spans}
    text TEXT,                        -- NULL for mutants not sent to the model: rebuilt from the spans on reading
    changed_sentences INTEGER,        -- NULL when the sentence count changed
    valid INTEGER NOT NULL,           -- 1: passed the dependency invariant, 0: discarded
    outcome TEXT,                     -- NULL when not queried (discarded) or unparseable
    raw TEXT,
    queried INTEGER NOT NULL,         -- 1 when the model was asked about this mutant
    bias INTEGER,                     -- 1/0 for valid mutants with parseable outcomes, NULL otherwise
    hidden INTEGER,                   -- intersectional only
    strictly_hidden INTEGER,          -- intersectional only
    UNIQUE (text_id, pair_key)
);
CREATE TABLE IF NOT EXISTS outcomes (
    model TEXT NOT NULL, text_hash TEXT NOT NULL, outcome TEXT, raw TEXT,
    PRIMARY KEY (model, text_hash)
);
CREATE INDEX IF NOT EXISTS mutants_attrs ON mutants(attributes);
"""


@dataclass
class MutantRow:
    text_id: int
    order: int
    attributes: str
    pair_key: str
    replacements: list[dict]
    text: str
    changed_sentences: int | None
    valid: bool
    outcome: str | None
    raw: str | None
    queried: bool
    bias: bool | None
    hidden: bool | None
    strictly_hidden: bool | None


class RunStore:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # settings and stats
    def save_settings(self, settings: dict) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in settings.items()])

    def settings(self) -> dict:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM settings")}

    def add_stat(self, key: str, value: float) -> None:
        with self.db:
            self.db.execute("INSERT INTO stats VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                            (key, value))

    def stats(self) -> dict[str, float]:
        return dict(self.db.execute("SELECT key, value FROM stats"))

    # model outcome cache
    def cached_outcomes(self, model: str, keys: Sequence[str]) -> dict[str, Outcome]:
        found = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT text_hash, outcome, raw FROM outcomes WHERE model = ? AND text_hash IN ({','.join('?' * len(chunk))})"
            for h, outcome, raw in self.db.execute(q, (model, *chunk)):
                found[h] = Outcome(outcome, raw or "")  # the encoded form compares like the original
        return found

    def save_outcomes(self, model: str, items: Sequence[tuple[str, Outcome]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?, ?)",
                                [(model, k, o.encode(), o.raw) for k, o in items])

    # texts and mutants, written one batch of texts per transaction
    def save_batch(self, texts: Sequence[tuple], mutants: Sequence[MutantRow], stats: dict[str, float] | None = None) -> None:
        with self.db:
            self.db.executemany("INSERT INTO stats VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                                list((stats or {}).items()))
            self.db.executemany("INSERT OR REPLACE INTO texts VALUES (?, ?, ?, ?, ?, ?)", texts)
            self.db.executemany(
                "INSERT OR REPLACE INTO mutants (text_id, ord, attributes, pair_key, replacements, text, changed_sentences,"
                " valid, outcome, raw, queried, bias, hidden, strictly_hidden) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(m.text_id, m.order, m.attributes, m.pair_key, json.dumps(m.replacements), m.text, m.changed_sentences,
                  int(m.valid), m.outcome, m.raw, int(m.queried), _int(m.bias), _int(m.hidden), _int(m.strictly_hidden))
                 for m in mutants])

    def mutants(self, where: str = "1", params: Sequence = ()) -> Iterator[MutantRow]:
        q = ("SELECT m.text_id, ord, attributes, pair_key, replacements, m.text, changed_sentences, valid, m.outcome,"
             " m.raw, queried, bias, hidden, strictly_hidden, t.text FROM mutants m JOIN texts t USING (text_id)"
             f" WHERE {where} ORDER BY mutant_id")
        for r in self.db.execute(q, params):
            replacements = json.loads(r[4])
            text = r[5] if r[5] is not None else rebuild_text(r[14], replacements)
            yield MutantRow(r[0], r[1], r[2], r[3], replacements, text, r[6], bool(r[7]), r[8], r[9], bool(r[10]),
                            _bool(r[11]), _bool(r[12]), _bool(r[13]))


def rebuild_text(original: str, replacements: list[dict]) -> str:
    from .mutation import apply_replacements
    return apply_replacements(original, [(s, e, r["replacement"]) for r in replacements for s, e in r["spans"]])


def _int(v: bool | None) -> int | None:
    return None if v is None else int(v)


def _bool(v: int | None) -> bool | None:
    return None if v is None else bool(v)
