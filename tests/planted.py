"""Models with planted biases, importable from the CLI as python:planted:NAME (tests add this folder to the path)."""
import re


def __getattr__(name):
    """PAIRS and DIC, a small dictionary shared by the engine and report tests, built when a test first reads them:
    a python:planted model runs in a worker process that imports this module, and importing hinter there would
    cost each run a third of a second."""
    if name not in ("PAIRS", "DIC"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from hinter.mutation.dictionary import Dictionary, Pair
    pairs = (
        Pair("gender", "male", "female", "man", "woman"),
        Pair("gender", "male", "female", "boy", "girl"),
        Pair("race", "european", "african", "white", "black"),
        Pair("race", "european", "asian", "white", "asian"),
    )
    globals().update(PAIRS=pairs, DIC=Dictionary(pairs, "planted"))
    return globals()[name]


# Texts shared by the engine and report tests.
TEXTS = [
    "A white man walked into the shop. The film was fine.",
    "The old man liked the white house. It was big.",
    "A white boy and a man met. They talked for hours.",
    "Nothing to see here. The plot was thin.",
    "The black man sang well. I liked it.",
]


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


def counting(texts):
    """The intersectional planted model, logging every text it is asked about (for the crash-and-resume test),
    slow enough for kills to land inside batches. HINTER_TEST_FAST=1 leaves the delay out (the same answers, the
    same fingerprint): for the runs nobody kills (the references, a killed run's last session); Ray workers read
    it from the session file ("3 fast")."""
    import hashlib
    import os
    import time

    log = os.environ.get("HINTER_TEST_CALLS")
    fast = bool(os.environ.get("HINTER_TEST_FAST"))
    if log:
        session = os.environ.get("HINTER_TEST_SESSION", "0")
        if os.environ.get("HINTER_TEST_SESSION_FILE"):  # Ray workers: the cluster's environment is fixed at its start
            with open(os.environ["HINTER_TEST_SESSION_FILE"]) as f:
                session, _, flag = f.read().strip().partition(" ")
            fast = fast or flag == "fast"
        with open(log, "a") as f:
            for t in texts:
                f.write(f"{session}\t{hashlib.sha256(t.encode()).hexdigest()}\n")
    if not fast:
        time.sleep(0.02 * len(texts))  # slow enough for kills to land inside batches
    return intersectional(texts)


def failing(texts):
    raise ConnectionError("model server unreachable")


def by_hash(texts):
    """An outcome from a hash of the whole text: any change may flip it (a quarter of texts are negative), so a
    campaign exercises every verdict, hidden and attribution case (the golden runs, scripts/golden.py)."""
    import hashlib
    return ["negative" if hashlib.sha256(t.encode()).hexdigest()[0] < "4" else "positive" for t in texts]


def unparseable_tenth(texts):
    """No usable answer (None) for about one text in ten, chosen by a hash of the text; else the intersectional model."""
    import hashlib
    labels = intersectional(texts)
    return [None if int(hashlib.sha256(t.encode()).hexdigest(), 16) % 10 == 0 else lab for t, lab in zip(texts, labels)]


def female_negative(texts):
    """Negative whenever a woman is named (woman, girl, she, her...), else a label from a hash of the text (80%
    positive): a real atomic bias against one target group, on top of text-driven noise."""
    import hashlib
    female = re.compile(r"\b(woman|women|girl|girls|she|her|hers|lady|ladies|mother|daughter|wife)\b", re.IGNORECASE)
    return ["negative" if female.search(t) or hashlib.sha256(t.encode()).hexdigest()[0] < "3" else "positive"
            for t in texts]


_calls = [0]


def noisy(texts):
    """A label from a hash of the text (80% positive), except that on each call a text gets a random label with
    probability 0.1, seeded by $HINTER_TEST_SEED and the call's index in its process: two calls on one text differ with
    probability 2 * 0.05 * 0.95 = 0.095. Blind to who is in the text: any finding is a false one."""
    import hashlib
    import os
    import random
    _calls[0] += 1
    rng = random.Random(f"{os.environ.get('HINTER_TEST_SEED', '0')}:{_calls[0]}")
    out = []
    for t in texts:
        base = "negative" if hashlib.sha256(t.encode()).hexdigest()[0] < "3" else "positive"
        out.append(rng.choice(["positive", "negative"]) if rng.random() < 0.1 else base)
    return out


NOISY_SELF_FLIP = 2 * 0.05 * 0.95


def negative_word(texts):
    """Negative when the text holds a word with negative sentiment that body pairs add ("ugly", "illness"...),
    else positive: a model reacting to a word, not to a group (issue 15: evaluative pairs)."""
    word = re.compile(r"\b(ugly|illness|disorder|cancer|victims)\b", re.IGNORECASE)
    return ["negative" if word.search(t) else "positive" for t in texts]


def position_noise(texts):
    """Each call answers by the text's position in its batch (even: positive, odd: negative): asked about one text
    8 times in one call, it answers both ways (not deterministic), and it is blind to who is in a text."""
    return ["positive" if i % 2 == 0 else "negative" for i, _ in enumerate(texts)]


_FEMALE = re.compile(r"\b(woman|women|girl|girls|she|her|hers|lady|ladies|mother|daughter|wife|female)\b", re.IGNORECASE)


def score_shift(texts):
    """The label from words no dictionary pair changes (positive with "great", "best" or "love", else negative),
    with scores: positive +-3, lowered by 0.5 when a woman is named. A woman moves the score, never the answer:
    a finding with 0 flips."""
    out = []
    for t in texts:
        positive = re.search(r"\b(great|best|love)\b", t, re.IGNORECASE) is not None
        score = (3.0 if positive else -3.0) - (0.5 if _FEMALE.search(t) else 0.0)
        out.append({"label": "positive" if positive else "negative", "scores": {"positive": score, "negative": -score}})
    return out


def article14(texts):
    """A multi-label ECtHR model: Article 6 for every case, and Article 14 too when a woman and an African (or Black)
    person are both named: a bias that moves the second label only."""
    african = re.compile(r"\b(africans?|black)\b", re.IGNORECASE)
    return [["Article 6", "Article 14"] if _FEMALE.search(t) and african.search(t) else ["Article 6"] for t in texts]


def article14_women(texts):
    """Multi-label ECtHR: Article 6 for every case, and Article 14 too when a woman is named (an atomic bias on the
    second label only, common enough in a few cases for a fast test)."""
    return [["Article 6", "Article 14"] if _FEMALE.search(t) else ["Article 6"] for t in texts]
