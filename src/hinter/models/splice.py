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
import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Sequence

import numpy as np

Edit = tuple[int, int, str]  # (start, end, replacement) in the original's coordinates


# Characters that BERT's normalizer turns into a space (\t, \n, \r and Unicode's space separators, categories Zs,
# Zl and Zp): no token crosses one. Python's isspace() is wider: \x0b, \x0c, \x1c-\x1f and \x85 are control
# characters that BERT's normalizer deletes, joining the words on either side.
BOUNDARIES = frozenset(" \t\n\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                       "\u2028\u2029\u202f\u205f\u3000")
BOUNDARY = re.compile("[" + "".join(sorted(BOUNDARIES)) + "]")


def is_boundary(c: str) -> bool:
    return c in BOUNDARIES


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
    """A text's own tokens (no special tokens, not cut), each one's end in the text, and where its tokens start and
    its boundary characters lie (for an original whose mutants are spliced; empty otherwise)."""
    ids: np.ndarray  # int64
    ends: list[int]
    starts: list[int]
    cuts: list[int]

    @classmethod
    def of(cls, encoding, text: str | None = None) -> "Encoded":
        """From a tokenizers Encoding (its offsets); with the text, ready to have mutants spliced from it."""
        spans = encoding.offsets
        starts = [a for a, _ in spans] if text is not None else []
        cuts = [m.start() for m in BOUNDARY.finditer(text)] if text is not None else []
        return cls(np.asarray(encoding.ids, dtype=np.int64), [b for _, b in spans], starts, cuts)


@dataclass
class Region:
    """A widened stretch of the original [start, end) holding edits, and the mutant's text there."""
    start: int
    end: int
    shift: int  # where the region starts in the mutant, less `start` (the edits before it)
    text: str  # the mutant's text of the region


def regions(original: str, mutant: str, edits: Sequence[Edit], cuts: list[int] | None = None) -> list[Region] | None:
    """The edits widened to the boundary characters around them (`cuts`: their positions in the original) and
    merged where they touch, in order, each with the mutant's text there; None when the edits overlap. A
    replacement is taken to keep its length in the mutant (apply_replacements only changes its case): `rebuilds`
    checks that the rest of the mutant is the original's."""
    n = len(original)
    if cuts is None:
        cuts = [m.start() for m in BOUNDARY.finditer(original)]
    spans: list[list] = []  # [start, end, growth of the text inside]
    last_end = -1
    for s, e, new in sorted(edits):
        if s < last_end or not 0 <= s <= e <= n:
            return None
        last_end = e
        i = bisect_left(cuts, s)  # the last boundary before s, and the first at or after e
        start = cuts[i - 1] + 1 if i else 0
        j = bisect_left(cuts, e, i)
        end = cuts[j] if j < len(cuts) else n
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


def splice(base: Encoded, parts: Sequence[tuple[Region, Encoded]], limit: int) -> tuple[np.ndarray, int | None] | None:
    """The mutant's first tokens (`limit` at most): the original's outside the regions, each region's own inside;
    and the end in the mutant of its token number `limit` (None when it has fewer tokens: nothing is cut). None
    when a token of the original crosses a region's edge (then the tokenizer is not of the kind `splices` admits,
    and the caller tokenizes the mutant whole). The ids are views of the original's and the regions' arrays joined
    once: a padded batch then takes each row in one copy (a Python list of ints took 6 us a row to convert)."""
    pieces: list[np.ndarray] = []
    n = at = shift = 0  # tokens taken; the next token of the original to take; the shift of its tokens there
    starts, ends = base.starts, base.ends
    for region, own in parts:
        a = bisect_left(starts, region.start, at)
        b = bisect_left(starts, region.end, a)
        if (a > 0 and ends[a - 1] > region.start) or (b > a and ends[b - 1] > region.end):
            return None
        if n + a - at >= limit:  # cut before the region: what comes after is never read
            k = limit - n
            pieces.append(base.ids[at:at + k])
            return np.concatenate(pieces), ends[at + k - 1] + shift
        pieces.append(base.ids[at:a])
        n += a - at
        moved = region.start + region.shift
        if n + len(own.ids) >= limit:
            k = limit - n
            pieces.append(own.ids[:k])
            return np.concatenate(pieces), own.ends[k - 1] + moved
        pieces.append(own.ids)
        n += len(own.ids)
        at = b
        shift = moved + len(region.text) - region.end
    if n + len(base.ids) - at >= limit:
        k = limit - n
        pieces.append(base.ids[at:at + k])
        return np.concatenate(pieces), ends[at + k - 1] + shift
    pieces.append(base.ids[at:])
    return np.concatenate(pieces), None


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
