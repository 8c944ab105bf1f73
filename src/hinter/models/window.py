"""What the model reads of a long text (`--window N`): N characters around the changed region.

A model that truncates (2,048 tokens for the embedded Gemma, 512 for BERT-like classifiers) never sees a change
made beyond its cut: on the bundled ECtHR sample 52% of race and gender matches lie beyond about 512 tokens.
With a window, the model reads the same slice of the original and of the mutant, placed around the mutant's
changes. Windows start on a grid of N/4 characters, so nearby mutants of one text share their windowed original
(one model call); mutants changing distant regions get distinct windows, each with its own original.
"""
from __future__ import annotations

from typing import Sequence

from hinter.records import Edit, apply_replacements


def window_bounds(length: int, edits: Sequence[Edit], size: int) -> tuple[int, int]:
    """[start, end) of the window of `size` characters holding every edit (wider only when the edits span more)."""
    lo, hi = min(s for s, _, _ in edits), max(e for _, e, _ in edits)
    if length <= size:
        return 0, length
    if hi - lo >= size:
        return lo, hi
    centre = (lo + hi) // 2
    start = max(0, min(lo, centre - size // 2, length - size))
    grid = max(1, size // 4)
    start = start // grid * grid  # on the grid, and still at or before the first edit
    return start, max(min(length, start + size), hi)


def windowed(text: str, edits: Sequence[Edit], bounds: tuple[int, int]) -> tuple[str, str, list[Edit]]:
    """The window of the original, of the mutant, and the edits in the window's coordinates."""
    start, end = bounds
    local = [(s - start, e - start, new) for s, e, new in edits]
    original = text[start:end]
    return original, apply_replacements(original, local), local
