"""Sentence splitting: a deterministic rule-based splitter, the same for originals and mutants."""
from __future__ import annotations

import re

# Words whose trailing period does not end a sentence.
_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "inc", "ltd", "co", "corp", "no", "nos",
    "art", "arts", "para", "paras", "e.g", "i.e", "cf", "al", "fig", "p", "pp", "v", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "ft", "u.s", "u.k", "e.u",
}
# A sentence ends at ., ! or ? (with closing quotes or brackets) before white space, or at an HTML
# line break or a blank line.
_BOUNDARY = re.compile(r"""([.!?]+['")\]]*)(?=\s)|(?:<br\s*/?>\s*)+|\n\s*\n""", re.IGNORECASE)
_LAST_WORD = re.compile(r"(\S+)$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each sentence, white space stripped."""
    spans, start = [], 0

    def add(a: int, b: int) -> None:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            spans.append((a, b))

    for m in _BOUNDARY.finditer(text):
        if m.group(1):
            word = _LAST_WORD.search(text, start, m.start())
            token = word.group(1).lower().lstrip("(\"'") if word else ""
            if m.group(1) == "." and (token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())):
                continue  # "Mr." or an initial such as "J."
            add(start, m.end())
        else:
            add(start, m.start())
        start = m.end()
    add(start, len(text))
    return spans


def split_sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


# A replacement can move a sentence boundary only if it writes or removes one of these characters, or
# changes the word just before a full stop (the abbreviation check).
_BOUNDARY_CHARS = frozenset(".!?<\n")


def _ends_sentence(token: str) -> bool:
    """Whether a full stop after `token` ends a sentence (the abbreviation check of `sentence_spans`)."""
    token = token.lower().lstrip("(\"'")
    return not (token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha()))


def boundaries_kept(text: str, edits: list[tuple[int, int, str]]) -> bool:
    """True when applying `edits` (start, end, new) to `text` cannot change its sentence boundaries."""
    for start, end, new in edits:
        if _BOUNDARY_CHARS.intersection(text[start:end]) or _BOUNDARY_CHARS.intersection(new):
            return False
        if end < len(text) and text[end] == ".":
            # The edit ends the word before a full stop: the boundary stays if the abbreviation check
            # gives the same answer for the old and the new last word.
            run_start = start
            while run_start > 0 and not text[run_start - 1].isspace():
                run_start -= 1
            prefix = text[run_start:start]
            if "<" in prefix or ">" in prefix:
                return False
            old_token = (prefix + text[start:end]).split()[-1]
            new_token = (prefix + new).split()[-1] if (prefix + new).split() else ""
            if _ends_sentence(old_token) != _ends_sentence(new_token):
                return False
    return True
