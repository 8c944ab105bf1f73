"""What the engine and the outcome cache write into a run, and what a rerun reads to know what is left to ask."""
from __future__ import annotations

import json
from operator import itemgetter
from typing import Sequence

from hinter.models.base import Outcome
from hinter.records import REPAIR, pack_edits
from hinter.store.rows import MutantRow, TextRow, list_json, scores_from_json, scores_to_json
from hinter.store.database import MAX_TRIES, hash_key, int_column, raw_column


# The mutants table's columns as a batch writes them, and those that only an option fills (--window's base,
# --repeats' answers, a generative task's aspects).
MUTANT_COLUMNS = ("text_id", "ord", "attributes", "pair_key", "edits", "changed_sentences", "valid", "outcome", "raw",
                  "queried", "bias", "hidden", "strictly_hidden", "scores", "seen", "unseen", "base_outcome",
                  "base_scores", "answers", "discard_reason", "aspects")
OPTIONAL_COLUMNS = frozenset({"base_outcome", "base_scores", "answers", "aspects"})


class Writes:
    """The engine's and the outcome cache's writes (one batch of texts per transaction), and what a rerun skips."""

    def cached_outcomes(self, model: str, keys: Sequence[str]) -> dict[str, Outcome]:
        found = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            if model not in self._models:
                break
            stored = {hash_key(k): k for k in chunk}
            q = ("SELECT text_hash, outcome, raw, scores, seen FROM outcomes WHERE model = ? AND text_hash IN "
                 f"({','.join('?' * len(chunk))})")
            for h, outcome, raw, scores, seen in self.db.execute(q, (self._models[model], *stored)):
                # the encoded form compares like the original
                found[stored[h]] = Outcome(outcome, (outcome if raw is None else raw) or "",
                                           scores=scores_from_json(scores), seen=seen)
        return found

    def save_outcomes(self, model: str, items: Sequence[tuple[str, Outcome]]) -> None:
        with self.db:
            if not items:
                return
            no = self._model_no(model)  # once a call, not once a text; each answer encoded once
            rows = []
            for k, o in items:
                value = o.encode()
                rows.append((no, hash_key(k), value, raw_column(o.raw, value), scores_to_json(o.scores), o.seen))
            self.db.executemany("INSERT OR REPLACE INTO outcomes (model, text_hash, outcome, raw, scores, seen) "
                                "VALUES (?, ?, ?, ?, ?, ?)", rows)

    def outcome_count(self) -> int:
        """How many texts the model answered, from the outcome cache (the same after a crash and resume)."""
        return self.db.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0]

    def save_batch(self, texts: Sequence[TextRow], mutants: Sequence[MutantRow],
                   stats: dict[str, float] | None = None) -> None:
        try:
            self._save_batch(texts, mutants, stats)
        except BaseException:
            self._load_numbers()  # pairs numbered in the transaction rolled back are gone
            raise

    def _keys_and_edits(self, mutants: Sequence[MutantRow]) -> tuple[list[str], list[bytes]]:
        """Each mutant's compact pair key and packed edits. A replacement's bytes do not depend on the others of its
        mutant, and the mutants of a text share replacements (an intersectional one reuses its atomic parts'): each
        is numbered and packed once, by identity (every one stays alive while the batch is saved), in the order the
        mutants hold them (so new pairs are numbered as they first appear); a mutant then joins its parts."""
        blobs, numbers = {}, {}
        for i, r in {id(r): r for m in mutants for r in m.replacements}.items():
            no = self._number(r)
            blobs[i] = pack_edits([(no, r.spans)])
            numbers[i] = None if r.attribute == REPAIR else str(no)  # a repair is an edit, not a pair of the key
        return ([",".join(filter(None, map(numbers.__getitem__, map(id, m.replacements)))) for m in mutants],
                [b"".join(map(blobs.__getitem__, map(id, m.replacements))) for m in mutants])

    def _save_batch(self, texts: Sequence[TextRow], mutants: Sequence[MutantRow],
                    stats: dict[str, float] | None) -> None:
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
            rows = [(m.text_id, m.order, m.attributes, key, edits, m.changed_sentences, int(m.valid), m.outcome,
                     raw_column(m.raw, m.outcome), int(m.queried), int_column(m.bias), int_column(m.hidden),
                     int_column(m.strictly_hidden), scores_to_json(m.scores), m.seen, int_column(m.unseen),
                     None if m.base is None else m.base[0], None if m.base is None else scores_to_json(m.base[1]),
                     list_json(m.answers), None if m.valid else m.discard_reason,
                     None if m.aspects is None else json.dumps({k: v.as_list() for k, v in m.aspects.items()},
                                                               separators=(",", ":")))
                    for m, key, edits in zip(mutants, *self._keys_and_edits(mutants))]
            # an option's column that no row of the batch fills is left out of its INSERT (NULL all the same): the
            # sqlite3 module binds a NULL through an adapter lookup, five times an integer's cost
            kept = [j for j, c in enumerate(MUTANT_COLUMNS) if c not in OPTIONAL_COLUMNS
                    or any(r[j] is not None for r in rows)]
            if len(kept) < len(MUTANT_COLUMNS):
                rows = list(map(itemgetter(*kept), rows))
            self.db.executemany(f"INSERT OR REPLACE INTO mutants ({', '.join(MUTANT_COLUMNS[j] for j in kept)})"
                                f" VALUES ({', '.join('?' * len(kept))})", rows)

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
