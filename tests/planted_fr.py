"""A planted French model for tests/test_french.py: negative only for a woman of Maghrebi origin (a feminine
person noun with a feminine arab-group word), so neither change alone flips it: a hidden intersectional bias."""
import re

_WOMAN = re.compile(r"\b(voisine|femme|mère|actrice|directrice|infirmière|boulangère|amie|patronne|serveuse|employée|"
                    r"vendeuse|cousine|cliente)s?\b", re.I)
_MAGHREB = re.compile(r"\b(marocaine|algérienne|tunisienne|arabe)s?\b", re.I)


def predict(texts):
    # the run's task (imdb) reads Positive / Negative: a label of its own ("positif") would be unparseable
    return ["Negative" if _WOMAN.search(t) and _MAGHREB.search(t) else "Positive" for t in texts]


# ---- the French audit (hinter audit --language fr): texts about one candidate each, and a planted audit model
JOBS = ["comptable", "architecte", "journaliste", "secrétaire", "dentiste", "libraire", "analyste", "graphiste",
        "photographe", "interprète"]  # epicene: "comme ingénieur" would not follow a candidate made female


def applications() -> list[tuple[str, str]]:
    """(id, text): 10 applications, each about one man or one woman (the pronoun right after the person, so the
    agreement reaches it), then texts the audit cannot render, each for its own reason."""
    out = []
    for i, job in enumerate(JOBS):
        det, noun, pron, adj = ("Le", "candidat", "Il", "motivé") if i % 2 == 0 else \
            ("La", "candidate", "Elle", "motivée")
        out.append((f"a{i}", f"{det} {noun} est très {adj}. {pron} a {i + 2} ans d'expérience comme {job} et ses "
                             "références sont excellentes."))
    return out + [("no-person", "Le temps était beau toute la semaine."),
                  ("two-sexes", "Le candidat a remercié sa femme."),
                  # "il" after "dossier": the agreement stops at another masculine noun, whom "il" means is unknown
                  ("pronoun", "Le candidat a envoyé un dossier. Il a beaucoup d'expérience.")]


_BLACK_WOMAN = re.compile(r"\b(candidate|voisine|femme)\s+noire\b", re.I)


def rejects_black_women(texts):
    """Exactly one intersectional category rejected: a woman described as noire (the agreement carried: a
    rendering "la candidate noir" would not match)."""
    return ["Negative" if _BLACK_WOMAN.search(t) else "Positive" for t in texts]


def answers_outside_the_task(texts):
    """For the French task avis (labels positif, négatif): answers in English for a woman ("Positive"), in the
    task's own labels otherwise: the English word is no label of the task, so those answers are unparseable."""
    return ["Positive" if _WOMAN.search(t) else "positif" for t in texts]
