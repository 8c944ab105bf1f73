"""French words for free-text masking (generative.masking): a French mutant's answers are masked of its words in
every gender and number, of the determiner before them (one placeholder: "la voisine" and "le voisin" both read
[ID]), and of the gendered pronouns and titles."""
from __future__ import annotations

from hinter.languages.french.grammar import feminine, masculine

GENDERED = frozenset("il elle ils elles lui eux monsieur madame mademoiselle messieurs mesdames m. mme mlle".split())
# a determiner masked with the word after it (longest first in the pattern: "de la" before "la")
DETERMINERS = ("de la", "à la", "le", "la", "l'", "l’", "les", "un", "une", "du", "au", "aux", "des", "ce", "cet",
               "cette", "ces", "mon", "ma", "mes", "ton", "ta", "tes", "son", "sa", "ses", "notre", "votre", "leur")


def other_genders(word: str) -> set[str]:
    """The word in its other gender, where the rules make it ("marocain": marocaine)."""
    return {g for g in (feminine(word), masculine(word)) if g}
