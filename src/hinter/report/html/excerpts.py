"""Dataset texts as an instance card shows them: escaped (they are untrusted), long ones cut to excerpts around
the changed words, and the changed words highlighted."""
from __future__ import annotations

from typing import Callable, NamedTuple

from markupsafe import Markup, escape

from hinter.records import Edit, apply_replacements, dictionary_replacements, match_case, starts_sentence
from hinter.report.instances import Instance, Version

EXCERPT_AT = 600   # texts longer than this are shown as excerpts around the changes
WINDOW = 70


class Shown(NamedTuple):
    role: str              # "orig", "comp" or "mut": the column's style
    version: Version
    text: Markup           # the excerpts, or the whole text when short
    full: Markup | None    # the whole text, when `text` is excerpted
    answers: list[Markup] | None = None  # a generative run's: every answer, its masked words marked


def versions(inst: Instance, language: str = "en") -> list[Shown]:
    """The original, each atomic component and the mutant, as the card's columns show them (a free-text run's
    answers masked with its `language`'s words)."""
    texts = _texts(inst.original.text, inst.all_spans)
    shown = [("orig", inst.original)] + [("comp", c) for c in inst.components] + [("mut", inst.mutant)]
    terms = _judge_masks(inst, len(shown), language)
    return [Shown(role, v, *texts(v), None if t is None or v.answers is None else [masked_answer(a, t) for a in v.answers])
            for (role, v), t in zip(shown, terms)]


def _judge_masks(inst: Instance, versions: int, language: str = "en") -> list:
    """Per version shown, the identity terms its answers were masked of when judged on aspects (as the judge masked
    them against the original, with the run's `language`), or None: a label's answers are shown as given."""
    if not inst.free_text:
        return [None] * versions
    from hinter.generative.masking import IdentityTerms
    every = IdentityTerms.of(inst.replacements, language)
    parts = [IdentityTerms.of([r], language) for r in dictionary_replacements(inst.replacements)]
    return [every] + parts + [every] if len(parts) == len(inst.components) else [every] * versions


def _texts(original: str, marks: list[tuple[int, int]]) -> Callable[[Version], tuple[Markup, Markup | None]]:
    """A version of `original` as a card shows it: its excerpts around `marks` (or the whole text when short), and
    the whole text when excerpted (else None); laid out once for all of a card's versions."""
    windows, whole = _windows(original, marks), [(0, len(original))]
    cut, full = _layout(original, marks, windows), None if windows == whole else _layout(original, marks, whole)
    return lambda v: (render_text(original, v, cut), None if full is None else render_text(original, v, full))


def masked_answer(answer: str | None, terms) -> Markup:
    """One answer, escaped, with the words identity masking hides from the aspects (`terms`: its IdentityTerms)
    marked rather than replaced, so that a reader sees both what the model wrote and what the judge compared."""
    if answer is None:
        return Markup('<span class="pill unparseable">no answer (a model error)</span>')
    out, pos = [], 0
    for s, e in terms.spans(answer):
        out.append(_render_segment(answer[pos:s]))
        out.append(f'<mark class="masked" title="masked: read as [ID] by every aspect">{escape(answer[s:e])}</mark>')
        pos = e
    out.append(_render_segment(answer[pos:]))
    return Markup("".join(out))


def _render_segment(text: str) -> str:
    # IMDB reviews hold literal "<br />": shown as line breaks, after escaping (so no markup from data survives).
    # str() first: Markup.replace would escape its arguments.
    return str(escape(text)).replace("&lt;br /&gt;", "<br>").replace("&lt;br/&gt;", "<br>")


def _layout(original: str, marks: list[tuple[int, int]], windows: list[tuple[int, int]]) -> list:
    """`original` within `windows` (original coordinates) as pieces: the escaped text between the marks and the gaps,
    which every version of a card shows alike (escaped once for all of them), and each mark's (start, end, its
    original words escaped), which `render_text` fills in per version."""
    out: list = []
    for w0, w1 in windows:
        if w0 > 0:
            out.append('<span class="gap"> … </span>')
        pos = w0
        for s, e in marks:
            if s < w0 or e > w1:
                continue
            out.append(_render_segment(original[pos:s]))
            out.append((s, e, str(escape(original[s:e]))))
            pos = e
        out.append(_render_segment(original[pos:w1]))
    if windows and windows[-1][1] < len(original):
        out.append('<span class="gap">…</span>')
    return out


def render_text(original: str, v: Version, layout: list) -> Markup:
    """The version `v` of `original` laid out by `_layout`: words it replaced highlighted as new, and in the
    original (no edits) the words that the mutant replaces."""
    edits = {(s, e): new for s, e, new in v.edits}
    out = []
    for piece in layout:
        if type(piece) is str:
            out.append(piece)
            continue
        s, e, words = piece
        new = edits.get((s, e))
        if new is not None:
            new = match_case(original[s:e], new, not starts_sentence(original, s))  # as mutation did
            out.append(f'<mark class="to">{escape(new)}</mark>')
        elif not v.edits:
            out.append(f'<mark class="from">{words}</mark>')
        else:
            out.append(words)
    return Markup("".join(out))


def _windows(text: str, marks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(text) <= EXCERPT_AT or not marks:
        return [(0, len(text))]
    wins: list[list[int]] = []
    for s, e in marks:
        a, b = max(0, s - WINDOW), min(len(text), e + WINDOW)
        # widen to whole words
        while a > 0 and not text[a - 1].isspace():
            a -= 1
        while b < len(text) and not text[b].isspace():
            b += 1
        if wins and a <= wins[-1][1]:
            wins[-1][1] = max(wins[-1][1], b)
        else:
            wins.append([a, b])
    return [tuple(w) for w in wins]


def edited_versions(original: str, changes: list[Edit], label: str) -> list[Shown]:
    """The original and one version of it with `changes`, as an instance card shows them (`hinter compare`)."""
    texts = _texts(original, sorted((s, e) for s, e, _ in changes))
    return [Shown(role, v, *texts(v)) for role, v in (
        ("orig", Version("Original", original, [])),
        ("mut", Version(label, apply_replacements(original, changes), list(changes))))]
