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


def split_sentences(text: str) -> list[str]:
    sentences, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group(1):
            word = _LAST_WORD.search(text, start, m.start())
            token = word.group(1).lower().lstrip("(\"'") if word else ""
            if m.group(1) == "." and (token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())):
                continue  # "Mr." or an initial such as "J."
            end = m.end()
        else:
            end = m.start()
        piece = text[start:end].strip()
        if piece:
            sentences.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences
