"""Stage 6: the run store, one SQLite file holding every text, mutant, verdict, outcome and raw answer."""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Iterator, Sequence

from .errors import InputError
from .files import storage_error, write_atomic
from .models.base import Outcome
from .records import REPAIR, Replacement, apply_replacements, edits, pack_edits
from .records import pair_key as join_pair_ids
from .records import replacements_from_json, unpack_edits
from .rows import (AspectRecord, CombinationCounts, ComparedMutant, FindingRow, KeyedVerdict, MutantRow,
                   OriginalsCounts, TestedRow, TextRow, VerdictRow, list_json, scores_from_json, scores_to_json)

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stats (key TEXT PRIMARY KEY, value REAL NOT NULL);
CREATE TABLE IF NOT EXISTS texts (
    text_id INTEGER PRIMARY KEY,      -- index into the dataset as read
    source_id TEXT,                   -- the dataset's own id, when it has one
    text TEXT NOT NULL,
    gold TEXT,                        -- the dataset's label, when it has one
    outcome TEXT,                     -- the model's outcome (NULL: unparseable)
    raw TEXT,                         -- the model's raw answer
    scores TEXT,                      -- JSON [[label, score], ...] where the backend gives scores
    seen INTEGER,                     -- characters the model read when it truncated the text (NULL: all)
    answers TEXT,                     -- with --repeats: JSON list of every answer (outcome is the most frequent)
    errors INTEGER,                   -- answers about the text and its mutants that were model errors (NULL: 0)
    tries INTEGER                     -- runs that asked about it (NULL: 1); with errors, asked again up to MAX_TRIES
);
CREATE TABLE IF NOT EXISTS mutants (
    mutant_id INTEGER PRIMARY KEY,
    text_id INTEGER NOT NULL REFERENCES texts(text_id),
    ord INTEGER NOT NULL,             -- 1: atomic, k >= 2: intersectional of order k
    attributes TEXT NOT NULL,         -- attributes changed, sorted, joined by '+'
    pair_key TEXT NOT NULL,           -- the mutant within its text: its pairs' numbers (pairs.pair_no) joined by ','
    edits BLOB NOT NULL,              -- records.pack_edits: per replacement its pair number and spans. A mutant's
                                      -- text is never stored: rebuilt from the original and these on reading
    changed_sentences INTEGER,        -- NULL when the sentence count changed
    valid INTEGER NOT NULL,           -- 1: passed the dependency invariant, 0: discarded
    outcome TEXT,                     -- NULL when not queried (discarded) or unparseable
    raw TEXT,                         -- NULL where it equals outcome (or not asked)
    queried INTEGER NOT NULL,         -- 1 when the model was asked about this mutant
    bias INTEGER,                     -- 1/0 for valid mutants with parseable outcomes, NULL otherwise
    hidden INTEGER,                   -- intersectional only
    strictly_hidden INTEGER,          -- intersectional only
    scores TEXT,                      -- as texts.scores
    seen INTEGER,                     -- as texts.seen
    unseen INTEGER,                   -- 1: every change lies beyond what the model read (not tested)
    base_outcome TEXT,                -- with --window: the outcome of the original's window it is compared with
    base_scores TEXT,                 -- ... and its scores (NULL: compared with the whole original, in texts)
    answers TEXT,                     -- as texts.answers
    discard_reason TEXT,              -- why a discarded mutant was: sentence_count, pos, deps, too_long or grammar
    aspects TEXT,                     -- a generative task's: JSON {aspect: [original's values, mutant's values,
                                      -- p (null: one answer each), differs, hidden]} (generative.judge)
    UNIQUE (text_id, pair_key)
);
CREATE TABLE IF NOT EXISTS pairs (    -- each dictionary pair the run's mutants apply, once
    pair_no INTEGER PRIMARY KEY, attribute TEXT NOT NULL, source_group TEXT NOT NULL, target_group TEXT NOT NULL,
    word TEXT NOT NULL, replacement TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS models (model_no INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS outcomes (
    model INTEGER NOT NULL,           -- models.model_no
    text_hash BLOB NOT NULL,          -- the first 16 bytes of the text's SHA-256, then '#r' for repeat r
    outcome TEXT, raw TEXT,           -- raw NULL where it equals outcome
    scores TEXT, seen INTEGER,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mutants_attrs ON mutants(attributes);
"""
MAX_TRIES = 3  # runs that ask a text whose answers were model errors; then its errors are kept as they are

# Columns added after the first release: a run folder made before them gains them, empty, when opened.
ADDED_COLUMNS = {"texts": ("scores TEXT", "seen INTEGER", "answers TEXT", "errors INTEGER", "tries INTEGER"), "outcomes": ("scores TEXT", "seen INTEGER"),
                 "mutants": ("scores TEXT", "seen INTEGER", "unseen INTEGER", "base_outcome TEXT", "base_scores TEXT",
                             "answers TEXT", "discard_reason TEXT", "aspects TEXT")}


_MUTANT_COLUMNS = ("m.mutant_id, m.text_id, ord, attributes, pair_key, edits, NULL, changed_sentences, valid,"
                   " m.outcome, m.raw, queried, bias, hidden, strictly_hidden, t.text, m.scores, m.seen, m.unseen,"
                   " m.discard_reason")


class RunStore:
    """The one place that speaks SQL: the engine saves each batch through it, and measures, reports, diff, check
    and resume read through its typed methods (records above), never through SQL of their own."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.db = sqlite3.connect(self.path)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            # One transaction: a run killed while creating its file leaves every table or none, never a part.
            self.db.executescript("BEGIN;\n" + SCHEMA + "COMMIT;")
            for table, columns in ADDED_COLUMNS.items():
                have = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
                for column in columns:
                    if column.split()[0] not in have:
                        self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
            self._migrate()
            self._load_numbers()
        except sqlite3.Error:
            self.db.close()
            raise

    # Issue 14: mutants are stored as edits (pair numbers and spans), outcomes under a model number and a short
    # hash (2,212 -> under 300 bytes a mutant). A run folder made before is converted once, on opening.
    def _migrate(self) -> None:
        mutant_cols = [r[1] for r in self.db.execute("PRAGMA table_info(mutants)")]
        outcome_types = {r[1]: r[2] for r in self.db.execute("PRAGMA table_info(outcomes)")}
        legacy_mutants, legacy_outcomes = "replacements" in mutant_cols, outcome_types.get("model") == "TEXT"
        if not (legacy_mutants or legacy_outcomes):
            return
        import re
        self.db.execute("BEGIN")
        try:
            self._load_numbers()
            if legacy_mutants:
                create = re.search(r"CREATE TABLE IF NOT EXISTS mutants \(.*?\n\);", SCHEMA, re.S).group(0)
                self.db.execute(create.replace(" mutants (", " mutants_v2 (", 1))
                new_cols = [r[1] for r in self.db.execute("PRAGMA table_info(mutants_v2)")]
                kept = [c for c in mutant_cols if c in new_cols and c not in ("pair_key", "raw")]
                rows = self.db.execute(f"SELECT replacements, pair_key, raw, {', '.join(kept)} FROM mutants"
                                       " ORDER BY mutant_id").fetchall()
                converted = []
                for reps, key, raw, *rest in rows:
                    reps = replacements_from_json(reps)
                    outcome = rest[kept.index("outcome")]
                    converted.append((self._compact_key(key, reps), self._pack(reps),
                                      None if raw is not None and raw == outcome else raw, *rest))
                self.db.executemany(f"INSERT INTO mutants_v2 (pair_key, edits, raw, {', '.join(kept)}) VALUES "
                                    f"({', '.join('?' * (len(kept) + 3))})", converted)
                self.db.execute("DROP TABLE mutants")  # its index goes with it
                self.db.execute("ALTER TABLE mutants_v2 RENAME TO mutants")
                self.db.execute("CREATE INDEX IF NOT EXISTS mutants_attrs ON mutants(attributes)")
            if legacy_outcomes:
                rows = self.db.execute("SELECT model, text_hash, outcome, raw, scores, seen FROM outcomes").fetchall()
                self.db.execute("DROP TABLE outcomes")
                create = re.search(r"CREATE TABLE IF NOT EXISTS outcomes \(.*?\n\) WITHOUT ROWID;", SCHEMA, re.S)
                self.db.execute(create.group(0))
                self.db.executemany(
                    "INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?, ?, ?, ?)",
                    [(self._model_no(model), _hash_key(h), outcome, None if raw == outcome else raw, scores, seen)
                     for model, h, outcome, raw, scores, seen in rows])
            self.db.commit()
        except BaseException:
            self.db.rollback()
            raise
        self.db.execute("VACUUM")  # give the old form's space back

    def _load_numbers(self) -> None:
        self._pairs = {no: Replacement(*rest, ()) for no, *rest in self.db.execute(
            "SELECT pair_no, attribute, source_group, target_group, word, replacement FROM pairs")}
        self._pair_no = {(r.attribute, r.source_group, r.target_group, r.word, r.replacement): no
                         for no, r in self._pairs.items()}
        self._pair_no_by_id = {r.pair_id: no for no, r in self._pairs.items()}
        self._models = dict(self.db.execute("SELECT fingerprint, model_no FROM models"))
        # each pair's id and target group by its number as the pair_key column spells it ("17"): _key_pairs
        self._id_of = {str(no): r.pair_id for no, r in self._pairs.items()}
        self._group_of = {str(no): r.target_group for no, r in self._pairs.items()}

    def _number(self, r: Replacement) -> int:
        """The pair's number in this run (added to the pairs table, in the caller's transaction, when new)."""
        fields = (r.attribute, r.source_group, r.target_group, r.word, r.replacement)
        no = self._pair_no.get(fields)
        if no is None:
            no = self.db.execute("INSERT INTO pairs (attribute, source_group, target_group, word, replacement)"
                                 " VALUES (?, ?, ?, ?, ?)", fields).lastrowid
            self._pair_no[fields], self._pairs[no] = no, Replacement(*fields, ())
            self._pair_no_by_id[r.pair_id] = no
        return no

    def _pack(self, replacements: Sequence[Replacement]) -> bytes:
        return pack_edits([(self._number(r), r.spans) for r in replacements])

    def _compact_key(self, key: str, replacements: Sequence[Replacement]) -> str:
        for r in replacements:
            self._number(r)
        return ",".join(str(self._pair_no_by_id[p]) for p in key.split(" & "))

    def _pair(self, no: int) -> Replacement:
        if no not in self._pairs:  # added by another connection (a run still writing) since this one loaded
            self._load_numbers()
        return self._pairs[no]

    def _replacements(self, blob: bytes) -> tuple[Replacement, ...]:
        out = []
        for no, spans in unpack_edits(blob):
            p = self._pair(no)
            out.append(Replacement(p.attribute, p.source_group, p.target_group, p.word, p.replacement, spans))
        return tuple(out)

    def _key_pairs(self, key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The pair ids and target groups of a compact pair key ("3,17"), from the pairs table read once: the
        measures read no edits to know a mutant's pairs."""
        numbers = key.split(",")
        try:
            return tuple(map(self._id_of.__getitem__, numbers)), tuple(map(self._group_of.__getitem__, numbers))
        except KeyError:  # a pair added since the table was read (by this connection or another one)
            self._load_numbers()
            return tuple(map(self._id_of.__getitem__, numbers)), tuple(map(self._group_of.__getitem__, numbers))

    def _full_key(self, key: str) -> str:
        """The pair key as people and MutantRow read it (pair ids joined by ' & ') from its compact form."""
        return join_pair_ids(self._pair(int(n)).pair_id for n in key.split(","))

    def _model_no(self, fingerprint: str) -> int:
        no = self._models.get(fingerprint)
        if no is None:
            no = self._models[fingerprint] = self.db.execute("INSERT INTO models (fingerprint) VALUES (?)",
                                                             (fingerprint,)).lastrowid
        return no

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def read_settings(folder: str | os.PathLike, where: str | None = None) -> dict:
        """The settings recorded in the run in `folder`, read without creating or changing anything (resume reads
        them to start the run again): {} for a run stopped as it began. InputError when run.sqlite is missing,
        or holds no run while outputs lie beside it (lost_run); a StorageError when it is unreadable."""
        path = _run_file(folder, where)
        try:
            if lost_run(path.parent):
                raise empty_run_error(path, where)
            if not holds_run(path):
                return {}  # a run killed as it created its file, before any table: nothing recorded yet
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                rows = db.execute("SELECT key, value FROM settings").fetchall()
            finally:
                db.close()
            return {k: json.loads(v) for k, v in rows}
        except (sqlite3.Error, ValueError) as e:  # ValueError: a damaged settings value (JSON)
            if not isinstance(e, sqlite3.Error):
                e = sqlite3.DatabaseError(f"malformed settings: {e}")
            raise storage_error(e, path.parent, _where(path, where)) from None

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

    def add_stats(self, values: dict[str, float]) -> None:
        """add_stat for each, in one transaction (a commit each was most of the usage meter's time)."""
        if not values:
            return
        with self.db:
            self.db.executemany("INSERT INTO stats VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + "
                                "excluded.value", list(values.items()))

    def stats(self) -> dict[str, float]:
        return dict(self.db.execute("SELECT key, value FROM stats"))

    # model outcome cache
    def cached_outcomes(self, model: str, keys: Sequence[str]) -> dict[str, Outcome]:
        found = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            if model not in self._models:
                break
            stored = {_hash_key(k): k for k in chunk}
            q = ("SELECT text_hash, outcome, raw, scores, seen FROM outcomes WHERE model = ? AND text_hash IN "
                 f"({','.join('?' * len(chunk))})")
            for h, outcome, raw, scores, seen in self.db.execute(q, (self._models[model], *stored)):
                # the encoded form compares like the original
                found[stored[h]] = Outcome(outcome, (outcome if raw is None else raw) or "",
                                           scores=scores_from_json(scores), seen=seen)
        return found

    def save_outcomes(self, model: str, items: Sequence[tuple[str, Outcome]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO outcomes (model, text_hash, outcome, raw, scores, seen) "
                                "VALUES (?, ?, ?, ?, ?, ?)",
                                [(self._model_no(model), _hash_key(k), o.encode(), _raw(o.raw, o.encode()),
                                  scores_to_json(o.scores), o.seen) for k, o in items])

    def outcome_count(self) -> int:
        """How many texts the model answered, from the outcome cache (the same after a crash and resume)."""
        return self.db.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0]

    # texts and mutants, written one batch of texts per transaction
    def save_batch(self, texts: Sequence[TextRow], mutants: Sequence[MutantRow],
                   stats: dict[str, float] | None = None) -> None:
        try:
            self._save_batch(texts, mutants, stats)
        except BaseException:
            self._load_numbers()  # pairs numbered in the transaction rolled back are gone
            raise

    def _key_and_edits(self, m: MutantRow, packed: dict) -> tuple[str, bytes]:
        """A mutant's compact pair key and packed edits. A replacement's bytes do not depend on the others of its
        mutant, and the mutants of a text share replacements (an intersectional one reuses its atomic parts'):
        each is packed once per batch, in `packed` (by identity: every one stays alive while the batch is saved)."""
        parts = []
        for r in m.replacements:
            b = packed.get(id(r))
            if b is None:
                b = packed[id(r)] = pack_edits([(self._number(r), r.spans)])
            parts.append(b)
        return ",".join(str(self._pair_no_by_id[p]) for p in m.pair_key.split(" & ")), b"".join(parts)

    def _save_batch(self, texts: Sequence[TextRow], mutants: Sequence[MutantRow],
                    stats: dict[str, float] | None) -> None:
        packed: dict[int, bytes] = {}
        with self.db:
            # texts stored before with model errors, asked again: their old rows are replaced, their old errors no
            # longer count (the stat model_errors is the errors standing), and their try is counted
            ids = [t.text_id for t in texts]
            before = {tid: (errors or 0, tries or 1) for i in range(0, len(ids), 500) for tid, errors, tries in
                      self.db.execute(f"SELECT text_id, errors, tries FROM texts WHERE text_id IN "
                                      f"({','.join('?' * len(ids[i:i + 500]))})", ids[i:i + 500])}
            stats = dict(stats or {})
            if before:
                stats["model_errors"] = stats.get("model_errors", 0) - sum(e for e, _ in before.values())
                self.db.executemany("DELETE FROM mutants WHERE text_id = ?", [(tid,) for tid in before])
            self.db.executemany("INSERT INTO stats VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
                                list(stats.items()))
            self.db.executemany("INSERT OR REPLACE INTO texts (text_id, source_id, text, gold, outcome, raw, scores, seen,"
                                " answers, errors, tries) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [(*t.as_tuple(), before[t.text_id][1] + 1 if t.text_id in before else None)
                                 for t in texts])
            self.db.executemany(
                "INSERT OR REPLACE INTO mutants (text_id, ord, attributes, pair_key, edits, changed_sentences,"
                " valid, outcome, raw, queried, bias, hidden, strictly_hidden, scores, seen, unseen, base_outcome,"
                " base_scores, answers, discard_reason, aspects) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(m.text_id, m.order, m.attributes, *self._key_and_edits(m, packed),
                  m.changed_sentences, int(m.valid), m.outcome, _raw(m.raw, m.outcome), int(m.queried), _int(m.bias),
                  _int(m.hidden),
                  _int(m.strictly_hidden), scores_to_json(m.scores), m.seen, _int(m.unseen),
                  *((None, None) if m.base is None else (m.base[0], scores_to_json(m.base[1]))), list_json(m.answers),
                  None if m.valid else m.discard_reason,
                  None if m.aspects is None else json.dumps({k: v.as_list() for k, v in m.aspects.items()},
                                                            separators=(",", ":")))
                 for m in mutants])

    def texts(self) -> Iterator[TextRow]:
        """Every stored original, by text_id."""
        for r in self.db.execute("SELECT text_id, source_id, text, gold, outcome, raw, scores, seen, answers FROM texts "
                                 "ORDER BY text_id"):
            yield TextRow(*r[:6], scores_from_json(r[6]), r[7], _unjson(r[8]))

    def done_text_ids(self) -> set[int]:
        """The texts already stored (with their mutants: a batch is committed whole) and answered: what a resumed
        run skips. A text with a model error among its answers is asked again (`again_text_ids`), up to MAX_TRIES
        runs; then it is kept as it is."""
        return {tid for (tid,) in self.db.execute(
            "SELECT text_id FROM texts WHERE COALESCE(errors, 0) = 0 OR COALESCE(tries, 1) >= ?", (MAX_TRIES,))}

    def again_text_ids(self) -> dict[int, int]:
        """The stored texts a rerun asks again (a model error among their answers), with the try it will be."""
        return {tid: tries + 1 for tid, tries in self.db.execute(
            "SELECT text_id, COALESCE(tries, 1) FROM texts WHERE errors > 0 AND COALESCE(tries, 1) < ?",
            (MAX_TRIES,))}

    def mutants(self) -> Iterator[MutantRow]:
        """Every stored mutant, in the order stored."""
        return self._mutants("1", "mutant_id")

    def biased_mutants(self, *, by_text: bool = False, limit: int | None = None) -> Iterator[MutantRow]:
        """The valid mutants that expose bias, in the order stored, or by text, order and mutant (`by_text`)."""
        return self._mutants("valid = 1 AND bias = 1", "m.text_id, ord, mutant_id" if by_text else "mutant_id",
                             limit=limit)

    def tested_mutants(self) -> Iterator[MutantRow]:
        """The valid mutants with a parseable outcome (biased or not), in the order stored."""
        return self._mutants("valid = 1 AND bias IS NOT NULL", "mutant_id")

    def component(self, text_id: int, pair_key: str) -> MutantRow | None:
        """The mutant of `text_id` with this pair key (a component of an intersectional mutant), or None."""
        numbers = [self._pair_no_by_id.get(p) for p in pair_key.split(" & ")]
        if None in numbers:
            return None
        for m in self._mutants("m.text_id = ? AND pair_key = ?", "mutant_id",
                               (text_id, ",".join(map(str, numbers)))):
            return m
        return None

    def _mutants(self, where: str, order_by: str, params: Sequence = (), limit: int | None = None
                 ) -> Iterator[MutantRow]:
        q = (f"SELECT {_MUTANT_COLUMNS} FROM mutants m JOIN texts t USING (text_id) WHERE {where} ORDER BY {order_by}"
             + ("" if limit is None else f" LIMIT {int(limit)}"))
        for r in self.db.execute(q, params):
            replacements = self._replacements(r[5])
            # mutants' texts are not stored: rebuilt from the original and the replacements' spans
            text = apply_replacements(r[15], edits(replacements))
            raw = r[10] if r[10] is not None or not r[11] else r[9]
            yield MutantRow(r[1], r[2], r[3], self._full_key(r[4]), replacements, text, r[7], bool(r[8]), r[9], raw,
                            bool(r[11]),
                            _bool(r[12]), _bool(r[13]), _bool(r[14]), mutant_id=r[0], scores=scores_from_json(r[16]),
                            seen=r[17], unseen=_bool(r[18]), discard_reason=r[19])

    # what the measures aggregate
    def verdict_rows(self) -> Iterator[VerdictRow]:
        """Every mutant's verdicts, without its text, in the order stored."""
        for text_id, order, attrs, reps, valid, bias, hidden, strict in self.db.execute(
                "SELECT text_id, ord, attributes, edits, valid, bias, hidden, strictly_hidden FROM mutants"
                " ORDER BY mutant_id"):
            yield VerdictRow(text_id, order, attrs, self._replacements(reps), bool(valid), _bool(bias),
                             _bool(hidden), _bool(strict))

    def keyed_verdicts(self) -> Iterator[KeyedVerdict]:
        """Every mutant's verdicts and pairs (from its pair key), without its text or edits, in the order stored."""
        key_pairs, seen = self._key_pairs, {}  # local names: this loop runs once per mutant
        for text_id, order, attrs, key, valid, bias, hidden, strict in self.db.execute(
                "SELECT text_id, ord, attributes, pair_key, valid, bias, hidden, strictly_hidden FROM mutants"
                " ORDER BY mutant_id"):
            pairs = seen.get(key)
            if pairs is None:  # a key recurs in other texts: its tuples are built once (and shared)
                if len(seen) >= 100_000:  # bounded: a paper-scale run has millions of distinct keys
                    seen.clear()
                pairs = seen[key] = key_pairs(key)
            yield KeyedVerdict(text_id, order, attrs, pairs[0], pairs[1], bool(valid),
                               None if bias is None else bool(bias), None if hidden is None else bool(hidden),
                               None if strict is None else bool(strict))

    def tested_rows(self) -> Iterator[TestedRow]:
        """The rows of `finding_rows` (every tested mutant with what it is compared with, in the order stored),
        with their pair ids from the pair key instead of their unpacked replacements."""
        key_pairs, seen = self._key_pairs, {}
        last_base = (None, None)  # the last original's scores, as stored and parsed
        for mid, tid, key, base, outcome, base_scores, scores, base_answers, answers in self.db.execute(
                """SELECT m.mutant_id, m.text_id, m.pair_key, COALESCE(m.base_outcome, t.outcome), m.outcome,
                          CASE WHEN m.base_outcome IS NULL THEN t.scores ELSE m.base_scores END, m.scores,
                          CASE WHEN m.base_outcome IS NULL THEN t.answers END, m.answers
                   FROM mutants m JOIN texts t USING (text_id) WHERE m.valid = 1 AND m.bias IS NOT NULL
                   ORDER BY m.mutant_id"""):
            pair_ids = seen.get(key)
            if pair_ids is None:
                if len(seen) >= 100_000:
                    seen.clear()
                pair_ids = seen[key] = key_pairs(key)[0]
            if base_scores is not None:  # an original's scores repeat on its mutants, stored one after another
                if base_scores != last_base[0]:
                    last_base = (base_scores, scores_from_json(base_scores))
                base_scores = last_base[1]
            yield TestedRow(mid, tid, pair_ids, base, outcome, base_scores,
                            None if scores is None else scores_from_json(scores),
                            (base,) if base_answers is None else _unjson(base_answers) or (base,),
                            (outcome,) if answers is None else _unjson(answers) or (outcome,))

    def pairs(self) -> dict[str, Replacement]:
        """Every pair the run's mutants apply (repairs included), by pair id, without spans."""
        self._load_numbers()
        return {r.pair_id: r for r in self._pairs.values()}

    def has_repairs(self) -> bool:
        """Whether any stored mutant has a repair among its replacements (records.REPAIR: --repair, a name's
        pronouns): where none has, a mutant's replacements are its pair key's pairs."""
        return self.db.execute("SELECT 1 FROM pairs WHERE attribute = ? LIMIT 1", (REPAIR,)).fetchone() is not None

    def replacements_of(self, mutant_ids: Sequence[int]) -> dict[int, tuple[Replacement, ...]]:
        """The replacements (repairs included, with their spans) of these mutants, by mutant id."""
        out = {}
        for i in range(0, len(mutant_ids), 500):
            chunk = list(mutant_ids[i:i + 500])
            for mid, blob in self.db.execute(
                    f"SELECT mutant_id, edits FROM mutants WHERE mutant_id IN ({','.join('?' * len(chunk))})", chunk):
                out[mid] = self._replacements(blob)
        return out

    def components_of(self, keys: Sequence[tuple[int, str]]) -> dict[tuple[int, str], MutantRow]:
        """The stored mutants with these (text_id, pair key) keys, as `component` reads each one, in one query per
        few hundred keys; a key with no mutant is absent."""
        compact = {}
        for text_id, key in keys:
            numbers = [self._pair_no_by_id.get(p) for p in key.split(" & ")]
            if None not in numbers:
                compact[(text_id, ",".join(map(str, numbers)))] = (text_id, key)
        wanted, out = list(compact), {}
        for i in range(0, len(wanted), 400):
            chunk = wanted[i:i + 400]
            # an OR of key equalities: SQLite searches the (text_id, pair_key) index once per key (a row-value IN
            # list made it scan every mutant once per chunk)
            where = " OR ".join(["(m.text_id = ? AND pair_key = ?)"] * len(chunk))
            for m in self._mutants(where, "mutant_id", [x for k in chunk for x in k]):
                out[(m.text_id, m.pair_key)] = m
        return out

    def compared_mutants(self) -> Iterator[ComparedMutant]:
        """Every mutant's key, verdicts and outcomes (no text), by text, order and mutant: `hinter compare`'s input."""
        for tid, key, order, attrs, valid, base, outcome, bias, hidden in self.db.execute(
                """SELECT m.text_id, pair_key, ord, attributes, valid, COALESCE(m.base_outcome, t.outcome), m.outcome,
                          bias, hidden FROM mutants m JOIN texts t USING (text_id) ORDER BY m.text_id, ord, mutant_id"""):
            yield ComparedMutant(tid, self._full_key(key), order, attrs, bool(valid), base, outcome, _bool(bias),
                                 _bool(hidden))

    def combination_counts(self) -> list[CombinationCounts]:
        """Per combination of attributes (by order, then name), its mutants counted in one aggregate query."""
        rows = self.db.execute(
            """SELECT attributes, MIN(ord), COUNT(*), SUM(valid), SUM(valid AND bias IS NOT NULL),
                      SUM(valid AND bias = 1), SUM(valid AND queried AND bias IS NULL AND unseen IS NOT 1), SUM(hidden = 1),
                      SUM(strictly_hidden = 1), SUM(valid = 0 AND bias IS NOT NULL), SUM(valid = 0 AND bias = 1),
                      SUM(valid AND unseen = 1), SUM(valid AND NOT queried)
               FROM mutants GROUP BY attributes ORDER BY MIN(ord), attributes""").fetchall()
        return [CombinationCounts(attrs, order, n, *(v or 0 for v in sums)) for attrs, order, n, *sums in rows]

    def discard_reason_counts(self) -> dict[str, dict[str, int]]:
        """Per combination of attributes, its discarded mutants counted by reason ("unrecorded": a run made
        before reasons were stored)."""
        out: dict[str, dict[str, int]] = {}
        for attrs, reason, n in self.db.execute(
                "SELECT attributes, COALESCE(discard_reason, 'unrecorded'), COUNT(*) FROM mutants WHERE valid = 0"
                " GROUP BY 1, 2 ORDER BY 1, 2"):
            out.setdefault(attrs, {})[reason] = n
        return out

    def originals_counts(self) -> OriginalsCounts:
        row = self.db.execute(
            """SELECT (SELECT COUNT(*) FROM texts),
                      (SELECT COUNT(*) FROM texts
                       WHERE outcome IS NULL AND (raw IS NULL OR raw NOT LIKE 'model error:%')),
                      (SELECT COUNT(*) FROM texts WHERE raw LIKE 'model error:%'),
                      (SELECT COUNT(DISTINCT text_id) FROM mutants WHERE valid = 1),
                      (SELECT COUNT(DISTINCT text_id) FROM mutants WHERE valid = 1 AND bias = 1)""").fetchone()
        return OriginalsCounts(*row)

    def finding_rows(self) -> Iterator[FindingRow]:
        """Every tested mutant (valid, outcome and original's outcome parseable, seen) with what it is compared
        with: the findings' input."""
        for tid, reps, base, outcome, base_scores, scores, base_answers, answers in self.db.execute(
                """SELECT m.text_id, m.edits, COALESCE(m.base_outcome, t.outcome), m.outcome,
                          CASE WHEN m.base_outcome IS NULL THEN t.scores ELSE m.base_scores END, m.scores,
                          CASE WHEN m.base_outcome IS NULL THEN t.answers END, m.answers
                   FROM mutants m JOIN texts t USING (text_id) WHERE m.valid = 1 AND m.bias IS NOT NULL
                   ORDER BY m.mutant_id"""):
            yield FindingRow(tid, self._replacements(reps), base, outcome, scores_from_json(base_scores),
                             scores_from_json(scores), _unjson(base_answers) or (base,),
                             _unjson(answers) or (outcome,))

    def aspect_rows(self, tested: bool = False) -> Iterator[tuple[int, int, str, dict[str, AspectRecord]]]:
        """A generative run's judged mutants (`tested`: the valid ones alone, which findings count): (mutant_id,
        text_id, pair key as pair ids joined by ' & ', {aspect: AspectRecord}), in the order stored."""
        for mid, tid, key, column in self.db.execute(
                "SELECT mutant_id, text_id, pair_key, aspects FROM mutants WHERE aspects IS NOT NULL"
                + (" AND valid = 1 AND bias IS NOT NULL" if tested else "") + " ORDER BY mutant_id"):
            yield mid, tid, self._full_key(key), {k: AspectRecord.from_list(v) for k, v in json.loads(column).items()}

    def free_text(self, text_id: int) -> tuple[tuple[str | None, ...], dict[str, tuple[tuple[str | None, ...],
                                                                            dict[str, AspectRecord] | None]]]:
        """A generative run's answers about one text, as a person reads them: (the original's answers, {pair key
        as pair ids joined by ' & ': (the mutant's answers, {aspect: AspectRecord} or None when not judged)}).
        With one sample the answer is the outcome (None: a model error or no answer)."""
        row = self.db.execute("SELECT outcome, answers FROM texts WHERE text_id = ?", (text_id,)).fetchone()
        original = () if row is None else (_unjson(row[1]) or (row[0],))
        mutants = {}
        for key, outcome, answers, aspects, queried in self.db.execute(
                "SELECT pair_key, outcome, answers, aspects, queried FROM mutants WHERE text_id = ?", (text_id,)):
            mutants[self._full_key(key)] = (
                (_unjson(answers) or (outcome,)) if queried else (),
                None if aspects is None else {k: AspectRecord.from_list(v) for k, v in json.loads(aspects).items()})
        return original, mutants

    def original_answers(self) -> list[tuple[str | None, ...]]:
        """With --repeats: every original's answers (the self-flip rate's input)."""
        return [tuple(json.loads(a)) for (a,) in self.db.execute("SELECT answers FROM texts WHERE answers IS NOT NULL")]

    def unparseable_answers(self) -> int:
        """Texts the model answered in a form the task cannot read (model errors are not cached: apart)."""
        return self.db.execute("SELECT COUNT(*) FROM outcomes WHERE outcome IS NULL").fetchone()[0]

    def first_failures(self, limit: int = 3) -> list[str]:
        """The first distinct model errors, then unparseable answers, as stored (originals before mutants)."""
        rows = self.db.execute(
            """SELECT raw FROM (
                 SELECT raw, 0 AS kind, text_id AS k FROM texts WHERE raw LIKE 'model error:%'
                 UNION ALL SELECT raw, 0, 1e9 + mutant_id FROM mutants WHERE raw LIKE 'model error:%'
                 UNION ALL SELECT 'unparseable answer: ' || raw, 1, text_id FROM texts
                           WHERE outcome IS NULL AND raw IS NOT NULL AND raw NOT LIKE 'model error:%'
                 UNION ALL SELECT 'unparseable answer: ' || raw, 1, 1e9 + mutant_id FROM mutants
                           WHERE queried = 1 AND outcome IS NULL AND raw IS NOT NULL AND raw NOT LIKE 'model error:%')
               GROUP BY raw ORDER BY MIN(kind), MIN(k) LIMIT ?""", (limit,)).fetchall()
        return [r[0][:500] for r in rows]

    def venn(self) -> dict[str, int]:
        """Texts with a bias among their atomic mutants only, their intersectional ones only, or both."""
        found = dict(self.db.execute(
            """SELECT kind, COUNT(*) FROM (
                 SELECT text_id, CASE WHEN MAX(ord = 1) = 1 AND MAX(ord > 1) = 1 THEN 'both'
                                      WHEN MAX(ord = 1) = 1 THEN 'atomic_only' ELSE 'intersectional_only' END AS kind
                 FROM mutants WHERE valid = 1 AND bias = 1 GROUP BY text_id) GROUP BY kind""").fetchall())
        return {k: found.get(k, 0) for k in ("atomic_only", "intersectional_only", "both")}


def _run_file(folder: str | os.PathLike, where: str | None) -> Path:
    path = Path(folder) / "run.sqlite"
    if not path.is_file():
        raise InputError(f"no run.sqlite in {folder}", where=_where(path.parent, where),
                         fix="Give the --out folder of a `hinter run`.")
    return path


def _where(path: Path, where: str | None) -> str:
    """The file or folder a message names, after the option that gave it (`--baseline runs/a`): never a bare
    placeholder such as RUN_DIR."""
    return f"{where} {path}" if where and where.startswith("-") else str(path)


# A run.sqlite that lost its content (a copy that failed: 0 bytes) is restored or the run started again; the
# outputs beside it are never replaced by an empty run's.
RESTORE_FIX = ("Restore run.sqlite from a good copy, or start the run again with `hinter run ... --overwrite` "
               "(which asks the model again); no output was changed.")


def holds_run(path: Path) -> bool:
    """Whether the SQLite file `path` holds a run's tables, read without writing (sqlite3.DatabaseError when it is
    not a database). A 0-byte file holds none."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return bool(db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'settings'").fetchone()[0])
    finally:
        db.close()


def lost_run(folder: str | os.PathLike) -> bool:
    """The folder holds a run's outputs (summary.json) but its run.sqlite holds no run: the database was lost
    (a failed copy), not a run stopped as it began (which wrote no output yet)."""
    path = Path(folder) / "run.sqlite"
    return path.is_file() and (Path(folder) / "summary.json").is_file() and not holds_run(path)


def empty_run_error(path: Path, where: str | None = None) -> InputError:
    return InputError(f"run.sqlite holds no run ({path.stat().st_size:,} bytes): a copy that failed, or a run "
                      "stopped as it began", where=_where(path, where), fix=RESTORE_FIX)


# run.sqlite's SHA-256 when its run last wrote its outputs. SQLite keeps no checksum of a row: a changed byte inside
# a stored text reads back as another text, and a report would change its outputs silently. A run about to write
# removes it; a run that wrote its outputs writes it again (hashing a 112 MB file: 0.4 s on a shared 2-core CPU).
SEAL = "run.sqlite.sha256"


def unseal(folder: str | os.PathLike) -> None:
    """A run is about to write run.sqlite: its seal no longer holds."""
    (Path(folder) / SEAL).unlink(missing_ok=True)


def seal(store: RunStore) -> None:
    """run.sqlite as its run leaves it, its outputs written: every page moved out of the WAL, then its digest."""
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    write_atomic(store.path.parent / SEAL, _digest(store.path) + "\n")


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _check_seal(path: Path) -> None:
    """sqlite3.DatabaseError when run.sqlite is not the file its run sealed (no seal, or pages still in a WAL: a
    run under way or killed, nothing to compare)."""
    sealed, wal = path.parent / SEAL, path.with_name(path.name + "-wal")
    if not sealed.is_file() or (wal.is_file() and wal.stat().st_size):
        return
    if sealed.read_text(encoding="utf-8").strip() != _digest(path):
        raise sqlite3.DatabaseError(f"run.sqlite changed since its run wrote its outputs (its SHA-256 is not the "
                                    f"one in {SEAL}: damaged, or written by another tool; if you changed it on "
                                    f"purpose, delete {SEAL})")


def open_run(folder: str | os.PathLike, where: str | None = None, verify: bool = False) -> RunStore:
    """The store of the finished (or interrupted) run in `folder`; `where` names the option that gave it.
    InputError when the folder holds no run.sqlite, or one that holds no run (it is never made into an empty
    one); a StorageError when SQLite cannot read it. `verify`, for the commands whose verdict or outputs must not
    come from a damaged file (report, check): compare the file with its seal, then check every page."""
    path = _run_file(folder, where)
    try:
        if not holds_run(path):
            raise empty_run_error(path, where)
        if verify:
            _check_seal(path)
        store = RunStore(path)
        if verify:
            # without a seal (a killed run, an older one), SQLite reads a damaged page lazily: a zeroed run of
            # bytes came back as rows with NULLs (a TypeError deep in the measures); the check reads each page
            # once (a 112 MB file: 0.1-0.6 s on a shared 2-core CPU)
            problems = [r[0] for r in store.db.execute("PRAGMA quick_check(3)")]
            if problems != ["ok"]:
                store.close()
                raise sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(problems))
        return store
    except sqlite3.Error as e:
        raise storage_error(e, path.parent, _where(path, where)) from None


def _raw(raw: str | None, outcome: str | None) -> str | None:
    """A raw answer as stored: NULL where it is the outcome itself (most classifiers' answers)."""
    return None if outcome is not None and raw == outcome else raw


def _hash_key(key: str) -> bytes | str:
    """An outcome cache key as stored: a text_key (SHA-256 hex, then '#r' for a repeat) as its first 16 bytes and
    the suffix (2**-128 collisions: none in any run); any other key as it is (TEXT never equals a BLOB)."""
    head, tail = key[:64], key[64:]
    if _HEX64.fullmatch(head):  # a regular expression: a generator over 64 characters per key cost a large run
        return bytes.fromhex(head[:32]) + tail.encode()  # seconds (88,000 outcomes saved, 180,000 keys in all)
    return key


_HEX64 = re.compile("[0-9a-f]{64}")


def _unjson(column: str | None) -> tuple | None:
    return None if column is None else tuple(json.loads(column))


def _int(v: bool | None) -> int | None:
    return None if v is None else int(v)


def _bool(v: int | None) -> bool | None:
    return None if v is None else bool(v)
