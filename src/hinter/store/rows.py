"""The rows the pipeline writes and the measures read: one stored text, mutant, verdict or count each, beside the
records they carry (records.py). The store (store/) reads and writes them; nothing here speaks SQL."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple

from hinter.records import Replacement


def list_json(v) -> str | None:
    """A sequence as a compact JSON list (None stays None)."""
    return None if v is None else json.dumps(list(v), separators=(",", ":"))


def scores_to_json(scores: tuple[tuple[str, float], ...] | None) -> str | None:
    """json.dumps([[label, score], ...], separators=(",", ":")), written out for finite float scores (json writes
    a float as its repr): json.dumps was 13 us a text, most of a large run's outcome-cache writes."""
    if scores is None:
        return None
    parts = []
    for label, v in scores:
        quoted = _QUOTED.get(label) if type(label) is str else None
        if quoted is None:
            if type(label) is not str or type(v) is not float:
                return json.dumps([list(x) for x in scores], separators=(",", ":"))
            quoted = _QUOTED[label] = json.dumps(label)
        if type(v) is not float or v - v != 0.0:  # not a float, or not finite (json writes NaN, Infinity)
            return json.dumps([list(x) for x in scores], separators=(",", ":"))
        parts.append(f"[{quoted},{v!r}]")
    return "[" + ",".join(parts) + "]"


_QUOTED: dict[str, str] = {}  # a label as json writes it


def scores_from_json(column: str | None) -> tuple[tuple[str, float], ...] | None:
    """Stored scores; None (no scores) where one is not a finite number: an older hinter stored a model's NaN or
    infinity as it came (json reads them back), and every measure and report then failed on them. The answer's
    label stands; `non_finite_scores` counts such answers for the commands to say so."""
    if column is None:
        return None
    scores = tuple((label, float(v)) for label, v in json.loads(column))
    return scores if all(v - v == 0.0 for _, v in scores) else None


@dataclass(frozen=True)
class TextRow:
    """One original text as stored, with the model's outcome on it (None: unparseable or a model error)."""

    text_id: int
    source_id: str | None
    text: str
    gold: str | None
    outcome: str | None
    raw: str | None
    scores: tuple[tuple[str, float], ...] | None = None
    seen: int | None = None
    answers: tuple[str | None, ...] | None = None  # --repeats: every answer
    errors: int = 0  # answers about the text and its mutants that were model errors: the text is asked again

    def as_tuple(self) -> tuple:
        return (self.text_id, self.source_id, self.text, self.gold, self.outcome, self.raw, scores_to_json(self.scores),
                self.seen, list_json(self.answers), self.errors or None)


@dataclass
class MutantRow:
    """One stored mutant. Mutable while the engine fills in the oracle's verdicts before saving."""

    text_id: int
    order: int
    attributes: str
    pair_key: str
    replacements: tuple[Replacement, ...]
    text: str | None          # None only while being saved (discarded, not queried): rebuilt on reading
    changed_sentences: int | None
    valid: bool
    outcome: str | None
    raw: str | None
    queried: bool
    bias: bool | None
    hidden: bool | None
    strictly_hidden: bool | None
    mutant_id: int | None = None  # set on reading
    scores: tuple[tuple[str, float], ...] | None = None
    seen: int | None = None
    unseen: bool | None = None    # every change beyond what the model read: not tested (bias None)
    base: tuple[str | None, tuple[tuple[str, float], ...] | None] | None = None  # --window: the windowed original
    answers: tuple[str | None, ...] | None = None  # --repeats: every answer
    discard_reason: str | None = None  # discarded only: validity.invariant.DISCARD_REASONS (None: unrecorded)
    aspects: dict | None = None   # a generative task's verdicts: {aspect: AspectRecord}


@dataclass(frozen=True)
class AspectRecord:
    """One aspect of a generative mutant as stored: the values compared (original's, mutant's), the per-text test's
    p-value (None: one answer each), whether it differs, and whether it is hidden on this aspect (intersectional:
    differs while none of its atomic components does)."""

    original: tuple[float, ...]
    mutant: tuple[float, ...]
    p_value: float | None
    differs: bool
    hidden: bool | None = None

    def as_list(self) -> list:
        return [[_short(x) for x in self.original], [_short(x) for x in self.mutant],
                None if self.p_value is None else _short(self.p_value), int(self.differs),
                None if self.hidden is None else int(self.hidden)]

    @classmethod
    def from_list(cls, v: list) -> AspectRecord:
        return cls(tuple(v[0]), tuple(v[1]), v[2], bool(v[3]), None if v[4] is None else bool(v[4]))


def _short(x: float) -> float:
    """Nine significant digits: well past any aspect's meaning, and a third of a float's JSON."""
    return float(f"{x:.9g}")


class KeyedVerdict(NamedTuple):
    """What the measures need of one stored mutant, read without unpacking its edits: its dictionary pairs' ids
    and target groups come from its pair key (repairs, which are edits and not pairs, are not in it). A named
    tuple: a run reads one per mutant, and a tuple is built several times faster than a frozen dataclass."""

    text_id: int
    order: int
    attributes: str
    pair_ids: tuple[str, ...]
    target_groups: tuple[str, ...]
    valid: bool
    bias: bool | None
    hidden: bool | None
    strictly_hidden: bool | None


class TestedRow(NamedTuple):
    """A tested mutant (valid, its outcome and its original's parseable, seen) and what it is compared with: the
    findings' input, read without unpacking its edits (its dictionary pairs' ids come from its pair key)."""

    mutant_id: int
    text_id: int
    pair_ids: tuple[str, ...]
    original: str
    mutant: str
    original_scores: tuple[tuple[str, float], ...] | None
    mutant_scores: tuple[tuple[str, float], ...] | None
    original_answers: tuple[str | None, ...]  # every answer with --repeats, else the outcome alone
    mutant_answers: tuple[str | None, ...]


@dataclass(frozen=True)
class ComparedMutant:
    """One mutant as `hinter compare` matches it across runs: its key, verdicts and outcomes, without its text."""

    text_id: int
    pair_key: str
    order: int
    attributes: str
    valid: bool
    base_outcome: str | None  # what its outcome is compared with: the original's (or, with --window, its window's)
    outcome: str | None
    bias: bool | None
    hidden: bool | None


@dataclass(frozen=True)
class CombinationCounts:
    """The mutants of one combination of attributes, counted by the store in one aggregate query."""

    attributes: str
    order: int
    mutants: int
    valid: int
    tested: int               # valid with a parseable outcome (and a parseable original outcome)
    biased: int               # valid and biased
    unparseable: int          # valid, outcome (or the original's) unparseable
    hidden: int
    strictly_hidden: int
    discarded_tested: int     # discarded yet asked (query_discarded) with a parseable outcome
    discarded_biased: int
    unseen: int = 0           # valid, but every change lies beyond what the model read: not tested
    unasked: int = 0          # valid, left unasked by --adaptive (its cells were settled): not tested


@dataclass(frozen=True)
class OriginalsCounts:
    texts: int
    unparseable: int          # the model answered, but not in a form the task reads (model errors apart)
    model_errors: int         # no answer after retries
    with_valid_mutants: int   # texts with at least one valid mutant
    with_bias: int            # texts with at least one valid biased mutant
