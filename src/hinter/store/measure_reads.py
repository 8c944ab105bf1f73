"""What the measures and the findings aggregate: verdicts and tested rows read by pair key (no edits unpacked), and
the counts SQLite makes in one query."""
from __future__ import annotations

import json
from typing import Iterator

from hinter.records import Replacement
from hinter.store.rows import AspectRecord, CombinationCounts, KeyedVerdict, OriginalsCounts, TestedRow, scores_from_json
from hinter.store.database import unjson


class MeasureReads:
    """The measures' and findings' reads: one row per mutant without its text or edits, or counts."""

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
        """Every tested mutant with what it is compared with (rows.TestedRow), in the order stored."""
        key_pairs, seen = self._key_pairs, {}
        # each original's outcome, scores and answers, read and parsed once rather than joined onto its mutants
        originals = {tid: (outcome, None if scores is None else scores_from_json(scores),
                           (outcome,) if answers is None else unjson(answers) or (outcome,))
                     for tid, outcome, scores, answers in self.db.execute(
                         "SELECT text_id, outcome, scores, answers FROM texts")}
        for mid, tid, key, base, outcome, base_scores, scores, answers in self.db.execute(
                "SELECT mutant_id, text_id, pair_key, base_outcome, outcome, base_scores, scores, answers FROM mutants"
                " WHERE valid = 1 AND bias IS NOT NULL ORDER BY mutant_id"):
            pair_ids = seen.get(key)
            if pair_ids is None:
                if len(seen) >= 100_000:
                    seen.clear()
                pair_ids = seen[key] = key_pairs(key)[0]
            if base is None:  # compared with the whole original
                base, base_scores, base_answers = originals[tid]
            else:  # with --window: with the original's window it stored
                base_scores, base_answers = None if base_scores is None else scores_from_json(base_scores), (base,)
            yield TestedRow(mid, tid, pair_ids, base, outcome, base_scores,
                            None if scores is None else scores_from_json(scores), base_answers,
                            (outcome,) if answers is None else unjson(answers) or (outcome,))

    def pairs(self) -> dict[str, Replacement]:
        """Every pair the run's mutants apply (repairs included), by pair id, without spans."""
        self._load_numbers()
        return {r.pair_id: r for r in self._pairs.values()}

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

    def aspect_rows(self, tested: bool = False) -> Iterator[tuple[int, int, str, dict[str, AspectRecord]]]:
        """A generative run's judged mutants (`tested`: the valid ones alone, which findings count): (mutant_id,
        text_id, pair key as pair ids joined by ' & ', {aspect: AspectRecord}), in the order stored."""
        for mid, tid, key, column in self.db.execute(
                "SELECT mutant_id, text_id, pair_key, aspects FROM mutants WHERE aspects IS NOT NULL"
                + (" AND valid = 1 AND bias IS NOT NULL" if tested else "") + " ORDER BY mutant_id"):
            yield mid, tid, self._full_key(key), {k: AspectRecord.from_list(v) for k, v in json.loads(column).items()}

    def original_answers(self) -> list[tuple[str | None, ...]]:
        """With --repeats: every original's answers (the self-flip rate's input)."""
        return [tuple(json.loads(a)) for (a,) in self.db.execute("SELECT answers FROM texts WHERE answers IS NOT NULL")]

    def unparseable_answers(self) -> int:
        """Texts the model answered in a form the task cannot read (model errors are not cached: apart)."""
        return self.db.execute("SELECT COUNT(*) FROM outcomes WHERE outcome IS NULL").fetchone()[0]

    def non_finite_scores(self) -> int:
        """Stored answers (originals' and mutants') whose scores hold NaN or an infinity, stored by an older
        hinter: read without their scores (rows.scores_from_json)."""
        n = 0
        for table in ("texts", "mutants"):
            for (column,) in self.db.execute(f"SELECT scores FROM {table} WHERE scores LIKE '%NaN%' OR scores LIKE "
                                             "'%Infinity%'"):  # a label may hold those letters: read to be sure
                n += scores_from_json(column) is None
        return n

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
