"""How numbers and combination names read on the page; shared by the prose, the charts and the templates."""
from __future__ import annotations


def pct(x, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def ci_text(ci) -> str:
    return "" if not ci else f"95% CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f}%"


def combo_label(combo: str) -> str:
    return combo.replace("+", " × ")
