"""The records every stage shares: a replacement (one dictionary pair applied to a text), its JSON form as the
run store keeps it, its pair id, the one function that rebuilds a text from edits, and the one way to describe a
replacement to people ("gender: man -> woman").

Nothing here imports another hinter module, so every stage may import it.
"""
from __future__ import annotations

import hashlib
import json
import numbers
import operator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Iterable, Sequence

Span = tuple[int, int]
Edit = tuple[int, int, str]  # (start, end) in the original text, and the string that replaces it


def pair_id(attribute: str, source_group: str, target_group: str, word: str, replacement: str) -> str:
    """The id of a dictionary pair: "gender:male>female:man>woman" (a pair key in the store joins them)."""
    return f"{attribute}:{source_group}>{target_group}:{word}>{replacement}"


def pair_key(pair_ids: Iterable[str]) -> str:
    """A mutant within its text, as the store's mutants.pair_key column holds it: its pair ids joined by ' & '."""
    return " & ".join(pair_ids)


@dataclass(frozen=True)
class Replacement:
    """One pair applied to a text: every whole-word occurrence (its spans) of `word` becomes `replacement`."""

    attribute: str
    source_group: str
    target_group: str
    word: str
    replacement: str
    spans: tuple[Span, ...]

    @cached_property
    def pair_id(self) -> str:  # computed once: the store and the oracle key every mutant by it
        return pair_id(self.attribute, self.source_group, self.target_group, self.word, self.replacement)

    def describe(self) -> str:
        """The replacement in words, as every report, export and message shows it: "gender: man -> woman"."""
        return f"{self.attribute}: {self.word} -> {self.replacement}"

    def to_json(self) -> dict:
        """The JSON form stored in mutants.replacements: {attribute, source_group, target_group, word,
        replacement, spans}, spans as [start, end] lists (keys in this order, so stored rows stay byte-equal)."""
        return {"attribute": self.attribute, "source_group": self.source_group, "target_group": self.target_group,
                "word": self.word, "replacement": self.replacement, "spans": [list(s) for s in self.spans]}

    @classmethod
    def from_json(cls, d: dict) -> Replacement:
        return cls(d["attribute"], d["source_group"], d["target_group"], d["word"], d["replacement"],
                   tuple(map(tuple, d["spans"])))


# The attribute of a mutant's extra edits: not a dictionary pair but what follows from one (a/an and number
# agreement with --repair, the pronouns that follow a name of the names pack). Such a Replacement has the repair's
# kind as source_group ("a/an", "number", "pronoun") and the attribute that caused it as target_group. It is part
# of the mutant's text and edits, never of its key, attributes, order or components.
REPAIR = "repair"


def dictionary_replacements(replacements: Iterable[Replacement]) -> tuple[Replacement, ...]:
    """The replacements that apply dictionary pairs (a mutant's identity), without its repairs."""
    return tuple(r for r in replacements if r.attribute != REPAIR)


def replacements_to_json(replacements: Sequence[Replacement]) -> str:
    """The mutants.replacements column: a JSON list of each replacement's JSON form."""
    return json.dumps([r.to_json() for r in replacements])


def replacements_from_json(column: str) -> tuple[Replacement, ...]:
    return tuple(Replacement.from_json(d) for d in json.loads(column))


def edits(replacements: Iterable[Replacement]) -> list[Edit]:
    """(start, end, replacement) on the original text, for every span of every replacement, in their order. A
    later replacement of the very same span overrides an earlier one: a French agreement repair inflects a word
    another attribute replaced ("marocain" -> "algérien" -> "algérienne" beside "voisine")."""
    out: dict[Span, Edit] = {}
    for r in replacements:
        for s, e in r.spans:
            out[(s, e)] = (s, e, r.replacement)
    return list(out.values())


# Words a title keeps in lower case inside it ("People of Color").
SMALL_WORDS = frozenset("a an and as at but by for in nor of on or the to with".split())


def starts_sentence(text: str, start: int) -> bool:
    """Whether the word at `start` begins a sentence (or the text, or a line): before it, past spaces, quotes and
    opening brackets, there is nothing, a line break, or . ! ?"""
    i = start - 1
    while i >= 0 and text[i] != "\n" and (text[i].isspace() or text[i] in "\"'“‘([«"):
        i -= 1
    return i < 0 or text[i] in ".!?\n"


def _capitalised_words(replacement: str) -> str:
    """Every word of `replacement` with a capital initial (its own capitals kept), the small words of a title
    after the first left alone: "south african" -> "South African", "african-american" -> "African-American"."""
    def up(m):
        word = m.group(2)
        keep = m.start() > 0 and word.lower() in SMALL_WORDS
        return m.group(1) + (word if keep else word[:1].upper() + word[1:])
    import re
    return re.sub(r"(^|[\s\-‐‑/])([^\s\-‐‑/]+)", up, replacement)


# Words whose capitals are their spelling, not shouting: their replacement keeps its own case ("The new CEO" ->
# "The new editor", not "EDITOR"). The built-in dictionary's only word in capitals is CEO.
ACRONYMS = frozenset({"CEO", "CFO", "COO", "CTO", "VP"})


@lru_cache(maxsize=1 << 16)  # a campaign asks the same few words in the same cases over and over
def match_case(original: str, replacement: str, mid_sentence: bool = False) -> str:
    """Give `replacement` the case of `original`: MAN -> WOMAN, Man -> Woman, man -> woman; the replacement's own
    capitals are kept (man -> South African). A capitalised word inside a sentence (`mid_sentence`) is a proper
    word or part of a title, so every word of the replacement gets a capital ("the Asian actress" -> "the South
    African actress"); at a sentence's start the capital says nothing more, and only the first letter follows it
    ("Men are" -> "Ugly men are"). An acronym (ACRONYMS) is written in capitals, not shouted: its replacement keeps
    its own case, capitalised at a sentence's start."""
    letters = [c for c in original if c.isalpha()]
    if original in ACRONYMS:
        return replacement if mid_sentence else replacement[:1].upper() + replacement[1:]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return replacement.upper()
    if letters and original[0].isupper():
        if mid_sentence:
            return _capitalised_words(replacement)
        return replacement[:1].upper() + replacement[1:]
    return replacement


def apply_replacements(text: str, edits: Iterable[Edit]) -> str:
    """Replace each (start, end) span of `text` by its new string in the case of the word it replaces, all at once
    (spans must not overlap). The one way a text is rebuilt from edits: mutation builds mutants with it, the store
    rebuilds discarded mutants' texts (not stored) with it, and the report rebuilds each version it shows."""
    out, pos = [], 0
    for start, end, new in sorted(edits):
        out.append(text[pos:start])
        out.append(match_case(text[start:end], new, not starts_sentence(text, start)))
        pos = end
    out.append(text[pos:])
    return "".join(out)


# The store's compact form of a mutant's edits (issue 14: a run stores edits, never mutant texts): per
# replacement its pair's number in the run's pair table and its spans, as unsigned LEB128 varints; spans as
# (gap from the previous span's end, zigzag-signed in case spans come unsorted, length). A 2-replacement mutant with one span each takes about 8 bytes
# where its JSON took about 280.

def _put_varint(out: bytearray, n: int) -> None:
    if n < 0:
        raise ValueError(f"cannot pack a negative number ({n})")
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def pack_edits(items: Iterable[tuple[int, Sequence[Span]]]) -> bytes:
    """(pair number, spans) per replacement -> bytes (spans kept in their order)."""
    out = bytearray()
    for number, spans in items:
        _put_varint(out, number)
        _put_varint(out, len(spans))
        pos = 0
        for start, end in spans:
            gap = start - pos
            _put_varint(out, 2 * gap if gap >= 0 else -2 * gap - 1)
            _put_varint(out, end - start)
            pos = end
    return bytes(out)


def unpack_edits(blob: bytes) -> list[tuple[int, tuple[Span, ...]]]:
    """The inverse of `pack_edits`. ValueError on bytes it did not write (truncated)."""
    values, n, shift = [], 0, 0
    for b in blob:
        n |= (b & 0x7F) << shift
        if b & 0x80:
            shift += 7
        else:
            values.append(n)
            n, shift = 0, 0
    if shift:
        raise ValueError("truncated edits")
    out, i = [], 0
    while i < len(values):
        if i + 2 > len(values):
            raise ValueError("truncated edits")
        number, count = values[i], values[i + 1]
        i += 2
        if i + 2 * count > len(values):
            raise ValueError("truncated edits")
        spans, pos = [], 0
        for j in range(count):
            z = values[i + 2 * j]
            start = pos + (z >> 1 if z % 2 == 0 else -(z >> 1) - 1)
            pos = start + values[i + 2 * j + 1]
            spans.append((start, pos))
        out.append((number, tuple(spans)))
        i += 2 * count
    return out


@dataclass(frozen=True)
class TextRecord:
    """One text of a campaign: its text, the dataset's id for it, its gold label."""

    text: str
    source_id: str | None = None
    gold: str | None = None


def text_key(text: str) -> str:
    """A text's identity in caches and stores (its SHA-256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def texts_fingerprint(records: Iterable[TextRecord]) -> str:
    """A campaign's texts, in order (runs and suites record it; a resume on other texts is refused)."""
    h = hashlib.sha256()
    for r in records:
        h.update(text_key(r.text).encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Outcome:
    """A model's normalised answer: a label, a set of labels (multi-label), or None when unparseable.

    `scores`: (label, score) pairs where the backend has scores, in the task's or model's label order, else None.
    What a score is depends on the backend (see each one's docstring): a first-token logit (gguf, hf-causal), a
    classifier logit (hf; for a multi-label model the label's own logit, chosen when >= 0), a first-token
    log-probability (openai, only the labels found among the returned top log-probabilities), or what a user's
    function gave (python). The answer is consistent with them: a single label decided from scores has the highest
    one. A dict may be given (it is stored as a tuple, so an Outcome stays hashable).

    `seen`: how many characters of the input text the model read, when the backend cut the text to fit the model
    (None: it read the whole text). It is exact or conservative, never larger than what was read: the model's input
    is the same for any text that starts with text[:seen] and differs only after it up to where reading stopped.
    """

    value: str | frozenset[str] | None
    raw: str = ""
    error: bool = False  # the model failed (after retries): no outcome at all
    scores: tuple[tuple[str, float], ...] | None = None
    seen: int | None = None

    def __post_init__(self) -> None:
        scores = self.scores
        if scores is not None:
            items = scores.items() if isinstance(scores, dict) else scores
            object.__setattr__(self, "scores", tuple((str(label), float(score)) for label, score in items))
        if self.seen is not None:
            seen = None if isinstance(self.seen, bool) else operator.index(self.seen) if isinstance(
                self.seen, numbers.Integral) else None
            if seen is None or seen < 0:
                raise ValueError(f"Outcome.seen must be a character count >= 0 or None, got {self.seen!r}")
            object.__setattr__(self, "seen", int(seen))

    def score(self, label: str) -> float | None:
        """The score of `label`, or None where the backend gave it none."""
        for name, value in self.scores or ():
            if name == label:
                return value
        return None

    @property
    def parseable(self) -> bool:
        return self.value is not None

    def encode(self) -> str | None:
        """A canonical string for storage and comparison (label sets sorted, joined by ' | ')."""
        if self.value is None:
            return None
        if isinstance(self.value, frozenset):
            return " | ".join(sorted(self.value)) if self.value else "(none)"
        return self.value
