"""Checks of a word-pair dictionary (`hinter dictionary lint`): pairs that cannot mean what a bias test assumes.

Kinds (each finding names the file, line and pair):
- `bad-line`: a line `hinter run` cannot read (a missing field, an unquoted comma...): every one is listed;
- `self-pair`: a word mapped to itself; `duplicate`: a pair listed twice;
- `capitalised`: a replacement that writes a common word with a capital ("Husband;Wife"): hinter keeps a
  replacement's own capitals, so "her husband" would become "her Wife";
- `asymmetric`: X -> Y present, Y -> X absent although the reverse pairs (B -> A of A -> B) exist;
- `evaluative`: the replacement adds (or removes) a word that carries sentiment in VADER's lexicon ("man" ->
  "ugly man"): a model reacting to it reacts to a negative word, not to a group;
- `inside-word` (on texts): the word matches inside hyphenated words ("writer" in "Co-writer");
- `never-matches` (on texts): the word occurs in no text;
- `not-a-person` (on texts, from a spaCy parse): most of the word's occurrences neither are a person noun nor
  modify one ("black" coat, "white" wine, he speaks "Spanish").

The checks are pure functions of the pairs (and of texts, or parsed sentences); loading and parsing are the
caller's (cli/dictionary.py).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from typing import Callable, Iterable, Sequence

from hinter.mutation.dictionary import Pair, WordMatcher, load_dictionary
from hinter.validity import sentence_spans
from hinter.validity.parsers import DEFAULT_SPACY_MODEL

KINDS = ("bad-line", "self-pair", "duplicate", "capitalised", "asymmetric", "evaluative", "inside-word",
         "never-matches", "not-a-person")
CHEAP_KINDS = ("self-pair", "duplicate", "capitalised", "asymmetric", "evaluative")  # no texts needed
REFUSED_KINDS = ("bad-line", "self-pair")  # what `hinter run` refuses: the lint exits non-zero on them
# Capitalised only before a name ("Mr Smith", "Queen Anne"): a capital on them is no mistake.
HONORIFICS = frozenset("mr mrs ms mx dr sir madam dame lord lady king queen prince princess i".split())
# VADER rates words from -4 to +4 (the mean of 10 raters); 1.0 keeps "ugly" (-2.3), "blind" (-1.7), "pretty" (2.2)
# and leaves out the faint ones ("fine" 0.8, "young" absent).
EVALUATIVE_THRESHOLD = 1.0
NOT_A_PERSON_SHARE = 0.5  # report a word when more than this share of its occurrences is not about a person
NOT_A_PERSON_MIN = 3      # ... and it occurs at least this often (fewer tell nothing)


@dataclass(frozen=True)
class Finding:
    kind: str
    attribute: str
    file: str
    line: int
    word: str
    replacement: str
    detail: str

    def to_json(self) -> dict:
        return asdict(self)


def _finding(kind: str, p: Pair, detail: str) -> Finding:
    return Finding(kind, p.attribute, p.file, p.line, p.word, p.replacement, detail)


def _tokens(s: str) -> list[str]:
    return re.findall(r"[\w']+", s.lower())


@lru_cache(maxsize=1)
def vader_lexicon() -> dict[str, float]:
    """VADER's word valences (package vader-sentiment), read from its lexicon file (no import of its analyser)."""
    text = (resources.files("vader_sentiment") / "vader_lexicon.txt").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) >= 2 and " " not in cells[0]:
            try:
                out[cells[0].lower()] = float(cells[1])
            except ValueError:
                continue
    return out


def evaluative_reason(p: Pair, lexicon: dict[str, float], threshold: float = EVALUATIVE_THRESHOLD) -> str | None:
    """Why `p` is evaluative ("adds 'ugly' (VADER -2.3)"), or None. The words the replacement adds and removes
    (a multiset difference of tokens: "man" -> "ugly man" adds "ugly" only) change the text's sentiment by the
    sum of their valences; at least `threshold` away from 0 is evaluative ("hero" -> "heroine", +2.6 -> +2.7,
    is not)."""
    word, repl = Counter(_tokens(p.word)), Counter(_tokens(p.replacement))
    rated = [(verb, t, lexicon[t]) for verb, part in (("adds", repl - word), ("removes", word - repl))
             for t in sorted(part) if t in lexicon]
    net = sum(v if verb == "adds" else -v for verb, _, v in rated)
    if abs(net) < threshold:
        return None
    parts = [f"{verb} {t!r} (VADER {v:+.1f})" for verb, t, v in rated]
    return ", ".join(parts) + (f": {net:+.1f} in all" if len(parts) > 1 else "")


def evaluative_ids(pairs: Iterable[Pair], threshold: float = EVALUATIVE_THRESHOLD) -> set[str]:
    """The ids of the evaluative pairs among `pairs`."""
    lexicon = vader_lexicon()
    return {p.id for p in pairs if evaluative_reason(p, lexicon, threshold)}


def evaluative_check(pairs: Iterable[Pair], threshold: float = EVALUATIVE_THRESHOLD) -> dict:
    """What a run records of its evaluative pairs (settings "checks.evaluative"): the lexicon, the threshold and
    the sorted pair ids."""
    try:
        lexicon = f"VADER (vader-sentiment {version('vader-sentiment')})"
    except PackageNotFoundError:
        lexicon = "VADER"
    return {"lexicon": lexicon, "threshold": threshold, "pairs": sorted(evaluative_ids(pairs, threshold))}


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Words English writes in lower case inside a sentence: PERSON_NOUNS and the built-in dictionary's gender and
    body words (not its race words: most are proper, African, Asian), less the honorifics."""
    words = set(PERSON_NOUNS)
    for p in load_dictionary().pairs:
        if p.attribute in ("gender", "body"):
            words.update(_tokens(p.word) + _tokens(p.replacement))
    return frozenset(words - HONORIFICS)


def capitalised_reason(p: Pair, common: frozenset[str]) -> str | None:
    """Why `p`'s replacement is wrongly capitalised (it writes a common word with a capital), or None."""
    # a capital initial on a common word; an acronym (CEO) is written in capitals whatever the text
    words = [w for w in re.findall(r"[\w']+", p.replacement)
             if w[:1].isupper() and not w.isupper() and w.lower() in common]
    if not words:
        return None
    return (f"{p.replacement!r} writes {', '.join(map(repr, words))} with a capital, and hinter keeps a replacement's "
            f"capitals: 'her {p.word.lower()}' would become 'her {p.replacement}'. Write common words in lower case "
            "(a word capitalised in the text gets its capital back)")


def bad_line_findings(problems: Iterable) -> list[Finding]:
    """bad-line: each line `hinter run` refuses (dictionary.BadLine: file, line, error), with the error's fix."""
    return [Finding("bad-line", "", b.file, b.line, "", "", b.error.problem + (f". {b.error.fix}" if b.error.fix
                                                                                else "")) for b in problems]


def static_findings(pairs: Sequence[Pair], threshold: float = EVALUATIVE_THRESHOLD) -> list[Finding]:
    """The kinds that need no text: self-pair, duplicate, capitalised, asymmetric, evaluative."""
    out: list[Finding] = []
    groups: dict[tuple, set[tuple[str, str]]] = defaultdict(set)
    for p in pairs:
        groups[(p.attribute, p.source_group, p.target_group, p.occupational)].add((p.word.lower(), p.replacement.lower()))
    seen: dict[tuple, Pair] = {}
    lexicon = vader_lexicon()
    common = common_words()
    for p in pairs:
        w, r = p.word.lower(), p.replacement.lower()
        if w == r:
            out.append(_finding("self-pair", p, f"maps {p.word!r} to itself: it can never change a text"))
            continue
        key = (p.attribute, p.source_group, p.target_group, p.occupational, w, r)
        if key in seen:
            first = seen[key]
            out.append(_finding("duplicate", p, f"the same pair as line {first.line}"
                                + ("" if first.file == p.file else f" of {first.file}")))
            continue
        seen[key] = p
        capitals = capitalised_reason(p, common)
        if capitals:
            out.append(_finding("capitalised", p, capitals))
        reverse = groups.get((p.attribute, p.target_group, p.source_group, p.occupational))
        if reverse is not None and (r, w) not in reverse:
            out.append(_finding("asymmetric", p, f"no {p.replacement!r} -> {p.word!r} among the "
                                f"{p.target_group} -> {p.source_group} pairs"))
        reason = evaluative_reason(p, lexicon, threshold)
        if reason:
            out.append(_finding("evaluative", p, reason))
    return out


def _first_pair_per_word(pairs: Sequence[Pair]) -> dict[tuple[str, str], tuple[Pair, int]]:
    """(attribute, lower-cased word) -> (its first pair, how many pairs it has): text findings are per word."""
    out: dict[tuple[str, str], tuple[Pair, int]] = {}
    for p in pairs:
        k = (p.attribute, p.word.lower())
        out[k] = (out[k][0], out[k][1] + 1) if k in out else (p, 1)
    return out


def _others(n: int) -> str:
    return f" (and {n - 1} other pair{'s' if n > 2 else ''} of the word)" if n > 1 else ""


HYPHENS = "-\u2010\u2011"


def _inside_hyphenated(text: str, start: int, end: int) -> bool:
    """A match glued by a hyphen to a word ("Co-writer", "Spider-Man"): the match is part of a compound."""
    before = start >= 2 and text[start - 1] in HYPHENS and text[start - 2].isalnum()
    after = end + 1 < len(text) and text[end] in HYPHENS and text[end + 1].isalnum()
    return before or after


def _excerpt(text: str, start: int, end: int, width: int = 30) -> str:
    a, b = max(0, start - width), min(len(text), end + width)
    return ("..." if a else "") + " ".join(text[a:b].split()) + ("..." if b < len(text) else "")


def text_findings(pairs: Sequence[Pair], texts: Iterable[str], never: bool = True) -> list[Finding]:
    """inside-word (the word matched inside hyphenated words, as hinter's matcher allows: a hyphen is a word
    boundary) and, if `never`, never-matches (the word occurs in no text). One finding per attribute and word."""
    words = _first_pair_per_word(pairs)
    matcher = WordMatcher(w for _, w in words)
    total: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    example: dict[str, str] = {}
    for text in texts:
        for w, spans in matcher.find(text).items():
            total[w] += len(spans)
            for s, e in spans:
                if _inside_hyphenated(text, s, e):
                    inside[w] += 1
                    example.setdefault(w, _excerpt(text, s, e))
    out = []
    for (attribute, w), (p, n) in words.items():
        if inside[w]:
            out.append(_finding("inside-word", p, f"{inside[w]} of {total[w]} matches inside hyphenated words, "
                                f"e.g. {example[w]!r}{_others(n)}"))
        if never and not total[w]:
            out.append(_finding("never-matches", p, f"occurs in no text{_others(n)}"))
    return out


# Person nouns beyond the dictionary's own: who a text talks about, most often (films, courts, contracts).
PERSON_NOUNS = frozenset("""
person people persons individual individuals human humans man men woman women guy guys gal gals boy boys girl girls
kid kids child children baby babies teen teens teenager teenagers adult adults folk folks lady ladies gentleman
gentlemen family families parent parents father fathers mother mothers dad dads mom moms mum mums son sons daughter
daughters brother brothers sister sisters husband husbands wife wives friend friends neighbour neighbor neighbours
neighbors couple couples actor actors actress actresses director directors producer producers writer writers
cast star stars hero heroes heroine heroines villain villains character characters protagonist lead leads singer
singers dancer dancers player players artist artists author authors student students teacher teachers doctor
doctors nurse nurses officer officers cop cops soldier soldiers worker workers employee employees boss bosses
president judge judges lawyer lawyers applicant applicants defendant defendants plaintiff plaintiffs victim victims
witness witnesses citizen citizens resident residents immigrant immigrants refugee refugees member members leader
leaders audience viewer viewers fan fans critic critics king queen prince princess lord priest nun monk chick chicks
dude dudes curate
community communities population populations group groups crowd someone somebody anyone anybody everyone
everybody nobody one ones who whom
""".split())
PERSON_PRONOUNS = frozenset("i me you he him she her we us they them myself yourself himself herself ourselves "
                            "themselves who whom someone somebody everyone everybody".split())
MODIFIER_DEPS = frozenset({"amod", "compound", "nmod", "poss", "appos", "nummod", "npadvmod"})
PREDICATE_DEPS = frozenset({"acomp", "attr", "oprd"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})


def person_nouns(pairs: Iterable[Pair]) -> frozenset[str]:
    """PERSON_NOUNS, the dictionary's gender words, and the last word of its other multi-word terms ("old
    folks" -> "folks", "ugly men" -> "men"): heads that name people. Not race terms: their last word is an
    adjective ("south african", "non-white")."""
    out = set(PERSON_NOUNS)
    for p in pairs:
        for term in (p.word, p.replacement):
            toks = _tokens(term)
            if toks and (p.attribute == "gender" or (len(toks) > 1 and p.attribute != "race")):
                out.add(toks[-1])
    return frozenset(out)


def refers_to_person(span, nouns: frozenset[str]) -> bool:
    """Whether a spaCy span (one occurrence of a dictionary word) refers to a person: its head is a person noun
    (or a PERSON entity, or a personal pronoun), or it modifies one (through conjunctions: "black and white
    actors"), or it is said of one ("she is black")."""
    def person(t) -> bool:
        return (t.lower_ in nouns or t.lemma_.lower() in nouns or t.ent_type_ == "PERSON"
                or (t.pos_ == "PRON" and t.lower_ in PERSON_PRONOUNS))

    head = span.root
    if head.pos_ in ("NOUN", "PROPN", "PRON") and (person(head) or (
            head.ent_type_ == "NORP" and head.dep_ not in MODIFIER_DEPS)):  # "the Japanese" as a people
        return True
    t = head
    while t.dep_ == "conj" and t.head is not t:
        t = t.head
    if t.dep_ in MODIFIER_DEPS and person(t.head):
        return True
    if t.dep_ in PREDICATE_DEPS:
        return any(c.dep_ in SUBJECT_DEPS and person(c) for c in t.head.children)
    return False


def not_a_person_findings(pairs: Sequence[Pair], texts: Iterable[str], parse: Callable[[list[str]], list],
                          share: float = NOT_A_PERSON_SHARE, minimum: int = NOT_A_PERSON_MIN) -> list[Finding]:
    """not-a-person: words whose occurrences, in more than `share` of at least `minimum` cases, do not refer
    to a person. `parse(sentences)` returns spaCy Docs (the sentences holding a match are parsed, once each)."""
    words = _first_pair_per_word(pairs)
    nouns = person_nouns(pairs)
    matcher = WordMatcher(w for _, w in words)
    hits: dict[str, list[tuple[int, int]]] = defaultdict(list)  # sentence -> match spans in it
    for text in texts:
        found = matcher.find(text)
        if not found:
            continue
        for a, b in sentence_spans(text):
            for w, spans in found.items():
                for s, e in spans:
                    if a <= s and e <= b:
                        hits[text[a:b]].append((s - a, e - a, w))
    sentences = list(hits)
    total: Counter[str] = Counter()
    other: Counter[str] = Counter()
    example: dict[str, str] = {}
    for sentence, doc in zip(sentences, parse(sentences)):
        for s, e, w in sorted(set(hits[sentence])):
            span = doc.char_span(s, e, alignment_mode="expand")
            if span is None or not len(span):
                continue
            total[w] += 1
            if not refers_to_person(span, nouns):
                other[w] += 1
                example.setdefault(w, _excerpt(sentence, s, e))
    out = []
    for (attribute, w), (p, n) in words.items():
        if total[w] >= minimum and other[w] > share * total[w]:
            out.append(_finding("not-a-person", p, f"{other[w]} of {total[w]} occurrences "
                                f"({100 * other[w] / total[w]:.0f}%) are not about a person, e.g. "
                                f"{example[w]!r}{_others(n)}"))
    return out


def spacy_parse(model: str | None = None) -> Callable[[list[str]], list]:
    """A parse function for `not_a_person_findings`: spaCy's English pipeline with its entity recogniser."""
    from hinter.languages.parses import import_spacy
    spacy = import_spacy()
    nlp = spacy.load(model or DEFAULT_SPACY_MODEL)
    return lambda sentences: list(nlp.pipe(sentences, batch_size=64))


def lint(pairs: Sequence[Pair], texts: Sequence[str] | None = None,
         parse: Callable[[list[str]], list] | None = None, threshold: float = EVALUATIVE_THRESHOLD,
         problems: Iterable = ()) -> list[Finding]:
    """Every finding: the bad lines (`problems`, from load_dictionary), the static kinds, then with `texts`
    inside-word and never-matches, and with `parse` not-a-person. Sorted by kind (in KINDS order), file and line."""
    out = bad_line_findings(problems) + static_findings(pairs, threshold)
    if texts is not None:
        out += text_findings(pairs, texts)
        if parse is not None:
            out += not_a_person_findings(pairs, texts, parse)
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda f: (order[f.kind], f.file, f.line, f.word))


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    c = Counter(f.kind for f in findings)
    return {k: c[k] for k in KINDS if c[k]}


NOUNS = {"bad-line": ("line hinter run refuses", "lines hinter run refuses"),
         "self-pair": ("self-pair", "self-pairs"), "duplicate": ("duplicate", "duplicates"),
         "capitalised": ("capitalised replacement", "capitalised replacements"),
         "asymmetric": ("asymmetric pair", "asymmetric pairs"),
         "evaluative": ("evaluative replacement", "evaluative replacements"),
         "inside-word": ("word matched inside hyphenated words", "words matched inside hyphenated words"),
         "never-matches": ("word that never matches", "words that never match"),
         "not-a-person": ("word mostly not about a person", "words mostly not about a person")}


def summary_line(findings: Iterable[Finding]) -> str | None:
    """'12 evaluative replacements, 3 duplicates' (None when there is nothing to say)."""
    c = counts(findings)
    return ", ".join(f"{n} {NOUNS[k][n != 1]}" for k, n in c.items()) or None
