"""Models with planted biases, importable from the CLI as python:planted:NAME (tests add this folder to the path)."""
import re


def _has(text, word):
    return re.search(rf"\b{word}\b", text, re.IGNORECASE) is not None


def intersectional(texts):
    """Flips to "negative" only when a woman and a black person are both named: a hidden intersectional bias."""
    return ["negative" if _has(t, "woman") and _has(t, "black") else "positive" for t in texts]


def atomic_gender(texts):
    """Flips whenever a woman is named."""
    return ["negative" if _has(t, "woman") else "positive" for t in texts]


def nonsense(texts):
    return [None for _ in texts]
