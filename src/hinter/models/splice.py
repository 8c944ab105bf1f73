"""Tokenize what changed: a mutant's tokens from its original's and its edits (the hf: backend's tokenizing).

Most texts a campaign asks are an original with one or two words replaced; tokenizing each of them whole was most
of a GPU run's model stage (issue 32). A tokenizer that never lets a token cross a whitespace character (BERT's:
its normalizer maps whitespace to a space and its pre-tokenizer splits there; WordPiece works within the pieces)
tokenizes `A + " " + X + " " + B` as A's tokens, X's, then B's. So each edit is widened to the whitespace around
it, the widened region of the mutant is tokenized alone, and its tokens replace the original's tokens of that
region. The result equals a full tokenization of the mutant (tests/test_splice.py checks it on the bundled
campaigns and on random edits); where a tokenizer is not of that kind, `splices` says no and every text is
tokenized whole. Pure functions over numpy arrays: the Rust tokenizer is called by the caller.
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np

Edit = tuple[int, int, str]  # (start, end, replacement) in the original's coordinates


def is_boundary(c: str) -> bool:
    """A character that BERT's normalizer turns into a space (\\t, \\n, \\r and Unicode's space separators): no
    token crosses it. Python's isspace() is wider: \\x0b, \\x0c, \\x1c-\\x1f and \\x85 are control characters that
    BERT's normalizer deletes, joining the words on either side."""
    return c in " \t\n\r" or unicodedata.category(c) in ("Zs", "Zl", "Zp")


def splices(tokenizer_json: str) -> bool:
    """Whether tokenizing a region between whitespace alone gives the same tokens as within the whole text:
    BERT's normalizer (cleaning the text: other control characters deleted), its pre-tokenizer, WordPiece, and
    added tokens (matched in the raw text) with no whitespace in them that do not swallow the spaces beside them."""
    spec = json.loads(tokenizer_json)
    normalizer, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec.get("model") or {}
    added_ok = all(not any(map(is_boundary, t.get("content", " "))) and not t.get("lstrip") and not t.get("rstrip")
                   and not t.get("single_word") for t in spec.get("added_tokens") or [])
    return (normalizer.get("type") == "BertNormalizer" and normalizer.get("clean_text") is True
            and pre.get("type") == "BertPreTokenizer" and model.get("type") == "WordPiece" and added_ok)


@dataclass
class Encoded:
    """A text's own tokens (no special tokens, not cut) and each one's character span in the text."""
    ids: np.ndarray  # int64
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64

    @classmethod
    def of(cls, encoding) -> "Encoded":
        """From a tokenizers Encoding (its offsets)."""
        spans = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        return cls(np.asarray(encoding.ids, dtype=np.int64), spans[:, 0].copy(), spans[:, 1].copy())


@dataclass
class Region:
    """A widened stretch of the original [start, end) holding edits, and the mutant's text there."""
    start: int
    end: int
    shift: int  # where the region starts in the mutant, less `start` (the edits before it)
    text: str  # the mutant's text of the region


def regions(original: str, mutant: str, edits: Sequence[Edit]) -> list[Region] | None:
    """The edits widened to the whitespace around them and merged where they touch, in order, each with the
    mutant's text there; None when the edits overlap. A replacement is taken to keep its length in the mutant
    (apply_replacements only changes its case): `rebuilds` checks that the rest of the mutant is the original's."""
    n = len(original)
    spans: list[list] = []  # [start, end, growth of the text inside]
    last_end = -1
    for s, e, new in sorted(edits):
        if s < last_end or not 0 <= s <= e <= n:
            return None
        last_end = e
        start, end = s, e
        while start > 0 and not is_boundary(original[start - 1]):
            start -= 1
        while end < n and not is_boundary(original[end]):
            end += 1
        # touching regions merge: a boundary character between them may be edited away
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
            spans[-1][2] += len(new) - (e - s)
        else:
            spans.append([start, end, len(new) - (e - s)])
    out, shift = [], 0
    for start, end, grown in spans:
        out.append(Region(start, end, shift, mutant[start + shift:end + shift + grown]))
        shift += grown
    return out


def splice(base: Encoded, parts: Sequence[tuple[Region, Encoded]], limit: int) -> Encoded | None:
    """The mutant's first tokens (`limit` at most, or all it has when fewer): the original's outside the regions,
    each region's own inside (shifted to the mutant's coordinates). None when a token of the original crosses a
    region's edge (then the tokenizer is not of the kind `splices` admits, and the caller tokenizes the mutant
    whole)."""
    ids, starts, ends = [], [], []
    at, shift, count = 0, 0, 0  # the next token of the original to take; the shift of the original's tokens there
    for region, own in parts:
        a = int(np.searchsorted(base.starts, region.start, "left"))
        b = int(np.searchsorted(base.starts, region.end, "left"))
        if (a > 0 and base.ends[a - 1] > region.start) or (b > a and base.ends[b - 1] > region.end) or a < at:
            return None
        moved = region.start + region.shift
        ids += [base.ids[at:a], own.ids]
        starts += [base.starts[at:a] + shift, own.starts + moved]
        ends += [base.ends[at:a] + shift, own.ends + moved]
        count += a - at + len(own.ids)
        at = b
        shift = region.shift + len(region.text) - (region.end - region.start)
        if count >= limit:  # what comes after is never read
            break
    else:
        ids.append(base.ids[at:])
        starts.append(base.starts[at:] + shift)
        ends.append(base.ends[at:] + shift)
    return Encoded(np.concatenate(ids)[:limit], np.concatenate(starts)[:limit], np.concatenate(ends)[:limit])


def rebuilds(original: str, mutant: str, found: Sequence[Region]) -> bool:
    """Whether `mutant` is `original` with `found`'s regions put in: a caller's edits that do not make its text
    must not change a token (the text is then tokenized whole)."""
    at = shift = 0
    for g in found:
        if mutant[at + shift:g.start + g.shift] != original[at:g.start]:
            return False
        if mutant[g.start + g.shift:g.start + g.shift + len(g.text)] != g.text:
            return False
        at, shift = g.end, g.shift + len(g.text) - (g.end - g.start)
    return len(mutant) - shift == len(original) and mutant[at + shift:] == original[at:]
