"""How much of a text a model read when it kept only the first tokens of it (`Outcome.seen`).

A backend that cuts a text to fit the model (gguf: its context minus the prompt; hf: max_length tokens) keeps
the first `kept` tokens of the text's tokenization. `read_extent` turns that into a character count: the end of
the last whole word whose tokens all lie within the kept ones, checked by tokenizing the text up to there. So

- every character of text[:seen] reached the model (the kept tokens begin with exactly the tokens of text[:seen]):
  `seen` is never larger than what was read; it may be smaller by the part of a word cut in the middle (and by
  the whitespace after the last whole word), so it is exact or conservative;
- text[:seen] ends a word and the next character is whitespace: tokenizers start a new token there (WordPiece
  and byte-level BPE split on whitespace; SentencePiece starts a token at "▁"), so a text that differs from this
  one only after text[:seen] is tokenized alike up to there.

No tokenizer offsets are needed (llama.cpp gives none): a galloping then binary search over the ends of words, each
candidate prefix tokenized (a few dozen tokenizations of at most about twice what was read, per cut text). Texts
that were not cut have seen None.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

MAX_CHECKS = 8  # candidates tried below the binary search's answer before settling for 0
_WORD_END = re.compile(r"\S(?=\s)")


def word_ends(text: str) -> list[int]:
    """The offsets c where a word ends: text[c] is whitespace and text[c - 1] is not."""
    return [m.end() for m in _WORD_END.finditer(text)]


def last_word_end(text: str, limit: int) -> int:
    """The largest word end c <= limit (text[c] is whitespace, text[c - 1] is not), as word_ends finds them; 0 if
    none. Scans back from `limit`: a cut text's prefix can be long, and only its last word matters."""
    c = min(limit, len(text) - 1)
    while c > 0 and not (text[c].isspace() and not text[c - 1].isspace()):
        c -= 1
    return c


def read_extent(text: str, tokens: Sequence[int], kept: int, encode: Callable[[str], list[int]]) -> int | None:
    """Characters of `text` the model read when it kept `tokens[:kept]` of the text's tokens `tokens` (the text
    alone, as the backend tokenized it, without special tokens); `encode` tokenizes a string the same way.
    None when nothing was cut."""
    if kept >= len(tokens):
        return None
    kept = max(0, kept)
    ends = word_ends(text)

    def fits(i: int) -> bool:
        return len(encode(text[:ends[i]])) <= kept

    # The last end whose prefix has at most `kept` tokens (-1: none): galloping from the start, then bisecting, so
    # that the prefixes tokenized stay within about twice what was read, however long the text.
    lo, hi, probe = -1, len(ends) - 1, 0
    while probe <= hi:
        if not fits(probe):
            hi = probe - 1
            break
        lo, probe = probe, 2 * probe + 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    for i in range(lo, max(-1, lo - MAX_CHECKS), -1):
        prefix = list(encode(text[:ends[i]]))
        if len(prefix) <= kept and prefix == list(tokens[:len(prefix)]):
            return ends[i]
    return 0


__all__ = ["last_word_end", "read_extent", "word_ends"]
