"""A planted French model for tests/test_french.py: negative only for a woman of Maghrebi origin (a feminine
person noun with a feminine arab-group word), so neither change alone flips it: a hidden intersectional bias."""
import re

_WOMAN = re.compile(r"\b(voisine|femme|mère|actrice|directrice|infirmière|boulangère)s?\b", re.I)
_MAGHREB = re.compile(r"\b(marocaine|algérienne|tunisienne)s?\b", re.I)


def predict(texts):
    # the run's task (imdb) reads Positive / Negative: a label of its own ("positif") would be unparseable
    return ["Negative" if _WOMAN.search(t) and _MAGHREB.search(t) else "Positive" for t in texts]
