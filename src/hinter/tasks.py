"""Tasks for generative models: labels, the paper's prompt (Table 7) and few-shot examples (Table 8),
and the answer parser that maps free text to labels."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError
from .models.base import Outcome


@dataclass(frozen=True)
class Task:
    name: str
    labels: tuple[str, ...]
    system_prompt: str
    question: str
    examples: tuple[tuple[str, str], ...]  # (text, answer)
    text_name: str = "Text"         # how the input is introduced in the prompt
    answer_prefix: str = "Answer:"  # the completion prompt ends with this
    multi_label: bool = False
    none_answer: str = "None"       # the answer for "no label" in multi-label tasks

    def completion_prompt(self, text: str) -> str:
        """A plain few-shot prompt for base models without a chat template."""
        # System prompt and question once, then the examples: on Gemma 3 270M this layout classified 20 of 22
        # reviews, against 13 of 22 with the question repeated before every answer.
        parts = [self.system_prompt.strip(), self.question.strip(), ""]
        for ex_text, answer in self.examples:
            parts += [f"{self.text_name}: {ex_text}", f"{self.answer_prefix} {answer}", ""]
        parts += [f"{self.text_name}: {text}", self.answer_prefix]
        return "\n".join(parts)

    def prompt_prefix_and_suffix(self) -> tuple[str, str]:
        """The prompt split around the input text, so the prefix can be cached and the text truncated."""
        marker = "\x00TEXT\x00"
        full = self.completion_prompt(marker)
        head, tail = full.split(marker)
        return head, tail

    def parse_answer(self, answer: str) -> Outcome:
        """Labels named in the answer, matched whole-word and case-insensitively; none named: unparseable."""
        text = answer.strip()
        found = []
        # Longest labels first, so "Article 1 of Protocol 1" is not read as "Article 1".
        remaining = text.lower()
        for label in sorted(self.labels, key=len, reverse=True):
            pattern = r"(?<![\w])" + re.escape(label.lower()) + r"(?![\w])"
            if re.search(pattern, remaining):
                found.append(label)
                remaining = re.sub(pattern, " ", remaining)
        if self.multi_label:
            if not found and re.fullmatch(rf"\W*{re.escape(self.none_answer.lower())}\W*", text.lower()):
                return Outcome(frozenset(), answer)
            return Outcome(frozenset(found) if found else None, answer)
        return Outcome(found[0] if len(found) == 1 else None, answer)


IMDB = Task(
    name="imdb",
    labels=("Positive", "Negative"),
    system_prompt="Your task is to determine whether the emotional tone or attitude in the provided Internet Movie "
                  "Database (IMDB) review is positive or negative.",
    question="Is the expressed sentiment conveyed in the IMDB text positive or negative?",
    examples=(
        ("In 1970, after a five-year absence, Kurosawa made what would be his first film in color", "Positive"),
        ("Don't waste your time on this film", "Negative"),
        ("I know technically this isn't the greatest TV show ever", "Positive"),
    ),
    text_name="Review",
    answer_prefix="Sentiment:",
)

TASKS = {t.name: t for t in (IMDB,)}


def get_task(name: str) -> Task:
    if name not in TASKS:
        raise InputError(f"unknown task {name!r}", where="--task", fix=f"Known tasks: {', '.join(TASKS)}.")
    return TASKS[name]
