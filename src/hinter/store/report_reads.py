"""What people are shown: texts and mutants with their texts rebuilt (reports, serve, study, augment), a bias's
components, `hinter compare`'s rows, a generative run's answers about one text."""
from __future__ import annotations

import json
from typing import Iterator, Sequence

from hinter.records import apply_replacements, edits
from hinter.store.rows import AspectRecord, ComparedMutant, MutantRow, TextRow, scores_from_json
from hinter.store.database import bool_column, unjson


_MUTANT_COLUMNS = ("m.mutant_id, m.text_id, ord, attributes, pair_key, edits, NULL, changed_sentences, valid,"
                   " m.outcome, m.raw, queried, bias, hidden, strictly_hidden, t.text, m.scores, m.seen, m.unseen,"
                   " m.discard_reason")


class ReportReads:
    """The rows people are shown, each mutant's text rebuilt from its original and its edits."""

    def texts(self) -> Iterator[TextRow]:
        """Every stored original, by text_id."""
        for r in self.db.execute("SELECT text_id, source_id, text, gold, outcome, raw, scores, seen, answers FROM texts "
                                 "ORDER BY text_id"):
            yield TextRow(*r[:6], scores_from_json(r[6]), r[7], unjson(r[8]))

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
                            bool_column(r[12]), bool_column(r[13]), bool_column(r[14]), mutant_id=r[0], scores=scores_from_json(r[16]),
                            seen=r[17], unseen=bool_column(r[18]), discard_reason=r[19])

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
            yield ComparedMutant(tid, self._full_key(key), order, attrs, bool(valid), base, outcome, bool_column(bias),
                                 bool_column(hidden))

    def answers_of_text(self, text_id: int) -> tuple[tuple[str | None, ...], dict[str, tuple[tuple[str | None, ...],
                                                                                  dict[str, AspectRecord] | None]]]:
        """A run's answers about one text, as a person reads them: (the original's answers, {pair key as pair ids
        joined by ' & ': (the mutant's answers, {aspect: AspectRecord} or None when not judged: a label task's)}).
        With one answer it is the outcome (None: a model error or no answer)."""
        row = self.db.execute("SELECT outcome, answers FROM texts WHERE text_id = ?", (text_id,)).fetchone()
        original = () if row is None else (unjson(row[1]) or (row[0],))
        mutants = {}
        for key, outcome, answers, aspects, queried in self.db.execute(
                "SELECT pair_key, outcome, answers, aspects, queried FROM mutants WHERE text_id = ?", (text_id,)):
            mutants[self._full_key(key)] = (
                (unjson(answers) or (outcome,)) if queried else (),
                None if aspects is None else {k: AspectRecord.from_list(v) for k, v in json.loads(aspects).items()})
        return original, mutants

    free_text = answers_of_text  # its former name, kept for callers (it reads any run's answers)
