"""`--validity reference`: the reference implementation's preprocessing around the same Algorithms 3 and 4.

For users who must compare a discarded share with the paper's. Transcribed from the reference tool
(github.com/BadrSouani/HInter, tools/utils.py and tools/methods.py), pure functions:

- `format_text`: its dataset formatting (`methods.format_dataset`, applied to the texts of its LLM campaigns
  before mutation, so the model reads them formatted too): `;` and newlines become `.`, `<br>`, `<br/>` and
  `<br />` a space, runs of spaces one space. Here it applies to every reference-mode campaign: validity must
  not depend on the model under test (a suite is built without one).
- `split_sentences`: its regex splitter (`utils.split_into_sentences`): a break after every `.`, `?` and `!`
  but a few abbreviation, initial, number and website patterns; the unterminated tail is dropped, so a change
  there is never checked.
- `prepare`: each changed sentence passes through `str.capitalize()` before parsing (lower-cases all but the
  first letter). Runs of white space become one space, so spaCy makes no whitespace token: the reference's
  AllenNLP tokenizer dropped those tokens and its parser never saw them.
- `changed_pairs`: the sentence count must not change, and a changed mutant sentence over `LIMIT` (500)
  characters makes the mutant invalid (`too_long`) before any parse.

What stays different: the reference parsed with AllenNLP's biaffine dependency parser (PTB labels), which
cannot be installed today; here spaCy parses, and its classifier campaigns (lower-cased, truncated texts) are
not emulated.
"""
from __future__ import annotations

import re

from hinter.validity.invariant import SENTENCE_COUNT, TOO_LONG, SentencePair

LIMIT = 500  # characters of a changed mutant sentence (utils.isTextStructureSimilar's limit_sentence_length)


def format_text(text: str) -> str:
    """methods.format_dataset, for one text."""
    return re.sub(" +", " ", text.replace(";", ".").replace("\n", ".").replace("<br>", " ").replace("<br/>", " ")
                  .replace("<br />", " "))


# utils.split_into_sentences, literally (a StackOverflow recipe)
_ALPHABETS = "([A-Za-z])"
_PREFIXES = "(Mr|St|Mrs|Ms|Dr)[.]"
_SUFFIXES = "(Inc|Ltd|Jr|Sr|Co)"
_STARTERS = r"(Mr|Mrs|Ms|Dr|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|That\s|This\s|Wherever)"
_ACRONYMS = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_WEBSITES = "[.](com|net|org|io|gov)"
_DIGITS = "([0-9])"


def split_sentences(text: str) -> list[str]:
    """The reference's sentence splitter: sentences stripped, the unterminated tail dropped."""
    text = " " + text + "  "
    text = text.replace("\n", " ")
    text = re.sub(_PREFIXES, "\\1<prd>", text)
    text = re.sub(_WEBSITES, "<prd>\\1", text)
    text = re.sub(_DIGITS + "[.]" + _DIGITS, "\\1<prd>\\2", text)
    if "..." in text:
        text = text.replace("...", "<prd><prd><prd>")
    if "Ph.D" in text:
        text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    text = re.sub("\\s" + _ALPHABETS + "[.] ", " \\1<prd> ", text)
    text = re.sub(_ACRONYMS + " " + _STARTERS, "\\1<stop> \\2", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]" + _ALPHABETS + "[.]", "\\1<prd>\\2<prd>\\3<prd>", text)
    text = re.sub(_ALPHABETS + "[.]" + _ALPHABETS + "[.]", "\\1<prd>\\2<prd>", text)
    text = re.sub(" " + _SUFFIXES + "[.] " + _STARTERS, " \\1<stop> \\2", text)
    text = re.sub(" " + _SUFFIXES + "[.]", " \\1<prd>", text)
    text = re.sub(" " + _ALPHABETS + "[.]", " \\1<prd>", text)
    if "”" in text:
        text = text.replace(".”", "”.")
    if "\"" in text:
        text = text.replace(".\"", "\".")
    if "!" in text:
        text = text.replace("!\"", "\"!")
    if "?" in text:
        text = text.replace("?\"", "\"?")
    text = text.replace(".", ".<stop>")
    text = text.replace("?", "?<stop>")
    text = text.replace("!", "!<stop>")
    text = text.replace("<prd>", ".")
    return [s.strip() for s in text.split("<stop>")[:-1]]


_SPACE = re.compile(r"\s+")


def prepare(sentence: str) -> str:
    """What the parser reads of a sentence: white space runs as one space (no whitespace token), capitalized."""
    return _SPACE.sub(" ", sentence).capitalize()


def changed_pairs(original_sentences: list[str], mutant: str) -> tuple[list[SentencePair] | None, str | None]:
    """(the changed sentence pairs as the parser reads them, the reason decided without parsing): (None,
    SENTENCE_COUNT) when the counts differ, (pairs, TOO_LONG) when a changed mutant sentence is over LIMIT
    characters (the reference returns at once there, whatever the other sentences), else (pairs, None)."""
    mutant_sentences = split_sentences(mutant)
    if len(mutant_sentences) != len(original_sentences):
        return None, SENTENCE_COUNT
    changed = [(c, m) for c, m in zip(original_sentences, mutant_sentences) if c != m]
    pairs = [(prepare(c), prepare(m)) for c, m in changed]
    return pairs, TOO_LONG if any(len(m) > LIMIT for _, m in changed) else None
