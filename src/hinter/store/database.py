"""The run's SQLite file: its schema and migrations, the numbering of the dictionary pairs its mutants apply, its
settings and stats, and the seal that tells a damaged file."""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Sequence

from hinter.errors import InputError
from hinter.files import storage_error, write_atomic
from hinter.records import Replacement, pack_edits
from hinter.records import pair_key as join_pair_ids
from hinter.records import replacements_from_json, unpack_edits



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


class StoreFile:
    """One connection to a run.sqlite, made current on opening (columns added since, older forms converted); the
    pairs' numbers are loaded once and shared by the writes and the reads."""

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

    def _migrate(self) -> None:
        mutant_cols = [r[1] for r in self.db.execute("PRAGMA table_info(mutants)")]
        outcome_types = {r[1]: r[2] for r in self.db.execute("PRAGMA table_info(outcomes)")}
        legacy_mutants, legacy_outcomes = "replacements" in mutant_cols, outcome_types.get("model") == "TEXT"
        if not (legacy_mutants or legacy_outcomes):
            return
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
                    [(self._model_no(model), hash_key(h), outcome, None if raw == outcome else raw, scores, seen)
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

    @staticmethod
    def read_settings(folder: str | os.PathLike, where: str | None = None) -> dict:
        """The settings recorded in the run in `folder`, read without creating or changing anything (resume reads
        them to start the run again): {} for a run stopped as it began. InputError when run.sqlite is missing,
        or holds no run while outputs lie beside it (lost_run); a StorageError when it is unreadable."""
        path = run_file(folder, where)
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
            raise storage_error(e, path.parent, where_named(path, where)) from None

    def save_settings(self, settings: dict) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)",
                                [(k, json.dumps(v)) for k, v in settings.items()])

    def settings(self) -> dict:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM settings")}

    def forget_settings(self, keys: Sequence[str]) -> None:
        """Remove settings that were kept only for a while (the determinism check's answers while unfinished)."""
        with self.db:
            self.db.executemany("DELETE FROM settings WHERE key = ?", [(k,) for k in keys])

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


def run_file(folder: str | os.PathLike, where: str | None) -> Path:
    path = Path(folder) / "run.sqlite"
    if not path.is_file():
        raise InputError(f"no run.sqlite in {folder}", where=where_named(path.parent, where),
                         fix="Give the --out folder of a `hinter run`.")
    return path


def where_named(path: Path, where: str | None) -> str:
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
                      "stopped as it began", where=where_named(path, where), fix=RESTORE_FIX)


# run.sqlite's SHA-256 when its run last wrote its outputs. SQLite keeps no checksum of a row: a changed byte inside
# a stored text reads back as another text, and a report would change its outputs silently. A run about to write
# removes it; a run that wrote its outputs writes it again (hashing a 112 MB file: 0.4 s on a shared 2-core CPU).
SEAL = "run.sqlite.sha256"


# The files of a run's database that hinter writes, and the only ones --overwrite deletes: SQLite's own beside
# run.sqlite (its write-ahead log, shared memory and rollback journal) and the seal. A glob (run.sqlite*) once took
# the user's run.sqlite.bak and "run.sqlite good copy" with them.
RUN_FILES = ("run.sqlite", "run.sqlite-wal", "run.sqlite-shm", "run.sqlite-journal", SEAL)


def remove_run_files(folder: str | os.PathLike) -> None:
    """Delete the run's database in `folder` (RUN_FILES), to start it again (--overwrite); nothing else."""
    for name in RUN_FILES:
        (Path(folder) / name).unlink(missing_ok=True)


def unseal(folder: str | os.PathLike) -> None:
    """A run is about to write run.sqlite: its seal no longer holds."""
    (Path(folder) / SEAL).unlink(missing_ok=True)


def seal(store: StoreFile) -> None:
    """run.sqlite as its run leaves it, its outputs written: every page moved out of the WAL, then its digest."""
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    write_atomic(store.path.parent / SEAL, _digest(store.path) + "\n")


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def check_seal(path: Path) -> None:
    """sqlite3.DatabaseError when run.sqlite is not the file its run sealed (no seal, or pages still in a WAL: a
    run under way or killed, nothing to compare)."""
    sealed, wal = path.parent / SEAL, path.with_name(path.name + "-wal")
    if not sealed.is_file() or (wal.is_file() and wal.stat().st_size):
        return
    if sealed.read_text(encoding="utf-8").strip() != _digest(path):
        raise sqlite3.DatabaseError(f"run.sqlite changed since its run wrote its outputs (its SHA-256 is not the "
                                    f"one in {SEAL}: damaged, or written by another tool; if you changed it on "
                                    f"purpose, delete {SEAL})")


def raw_column(raw: str | None, outcome: str | None) -> str | None:
    """A raw answer as stored: NULL where it is the outcome itself (most classifiers' answers)."""
    return None if outcome is not None and raw == outcome else raw


def hash_key(key: str) -> bytes | str:
    """An outcome cache key as stored: a text_key (SHA-256 hex, then '#r' for a repeat) as its first 16 bytes and
    the suffix (2**-128 collisions: none in any run); any other key as it is (TEXT never equals a BLOB)."""
    head, tail = key[:64], key[64:]
    if _HEX64.fullmatch(head):  # a regular expression: a generator over 64 characters per key cost a large run
        return bytes.fromhex(head[:32]) + tail.encode()  # seconds (88,000 outcomes saved, 180,000 keys in all)
    return key


_HEX64 = re.compile("[0-9a-f]{64}")


def unjson(column: str | None) -> tuple | None:
    return None if column is None else tuple(json.loads(column))


def int_column(v: bool | None) -> int | None:
    return None if v is None else int(v)


def bool_column(v: int | None) -> bool | None:
    return None if v is None else bool(v)
