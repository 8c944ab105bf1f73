"""The audit's categories (sex x race/ethnicity) and their words, read from a replaceable YAML file
(data/audit/categories.yaml by default). Every field is checked here, once: an error names the file, the line and
the fix, never a traceback."""
from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from hinter.errors import InputError
from hinter.languages import LANGUAGES, get_language

PRONOUN_FORMS = ("subject", "object", "possessive", "independent", "reflexive")  # a language with audit rules
# gives its own (French: the subject only, languages/french/audit.py)
SEX_FIELDS = ("nouns", "pronouns")
RACE_FIELDS = ("descriptor", "article", "words", "names", "last_names", "names_source")
TOP_FIELDS = ("language", "sex", "race", "unmarked_names", "unmarked_names_source")
REQUIRED_TOP = ("sex", "race")


@dataclass(frozen=True)
class Sex:
    name: str
    nouns: tuple[str, ...]  # aligned across sexes: nouns[i] of one sex renders as nouns[i] of another
    pronouns: dict  # PRONOUN_FORMS -> word


@dataclass(frozen=True)
class Race:
    name: str
    descriptor: str  # inserted before the person noun: "the Black woman" (French: after it, masculine singular)
    article: str | None  # "a" or "an" before the descriptor (English only)
    words: tuple[str, ...]  # identity words marking the category in a text as it is (lower case)
    names: dict  # sex -> first names (capitalised): the observed category, and a named person's rendering
    last_names: tuple[str, ...] = ()  # capitalised; rendered only where every category has some
    names_source: str | None = None  # the names' provenance, as the file gives it


@dataclass(frozen=True)
class Categories:
    sexes: tuple[Sex, ...]
    races: tuple[Race, ...]
    source: str  # the file read
    sha256: str  # of its bytes: the audit's manifest records it
    unmarked_names: dict = None  # sex -> first names of no marked race: a named person in a category without names
    unmarked_names_source: str | None = None
    language: str = "en"  # the texts' language (the file's `language:`): its Language.audit rules render it

    def identity_words(self) -> set[str]:
        """Every word that says who a person is in this file (descriptors, race words, nouns, pronouns, names):
        what a judge model's input has masked."""
        out = {w for r in self.races for w in (r.descriptor, *r.words, *r.last_names,
                                               *(n for ns in r.names.values() for n in ns))}
        out |= {w for s in self.sexes for w in (*s.nouns, *s.pronouns.values())}
        out |= {n for ns in (self.unmarked_names or {}).values() for n in ns}
        return out

    def named(self, race: str, sex: str) -> bool:
        """Whether the category (sex, race) has first names of its own."""
        return bool(next(r for r in self.races if r.name == race).names.get(sex))

    @property
    def last_names_rendered(self) -> bool:
        """Last names are rendered only where every race has a list: otherwise a kept surname would mark a race."""
        return all(r.last_names for r in self.races)

    @property
    def cells(self) -> list[tuple[str, str]]:
        """Every (sex, race) category, sexes outer: the order of every table and of each text's renderings."""
        return [(s.name, r.name) for s in self.sexes for r in self.races]


def default_categories_path(language: str = "en") -> Path:
    """The packaged category file of the texts' language (languages.Language.audit_categories)."""
    return Path(str(resources.files("hinter") / "data" / get_language(language).audit_categories))


def _line(node) -> int:
    return node.start_mark.line + 1


def _mapping(node, where: str, what: str) -> dict:
    """A YAML mapping node as {key: (key node, value node)}."""
    if not isinstance(node, yaml.MappingNode):
        raise InputError(f"{what} must be a mapping (name: fields)", where=f"{where}, line {_line(node)}",
                         fix=f"Write {what} as `name:` followed by indented fields, as the default file does.")
    return {k.value: (k, v) for k, v in node.value}


def _check_keys(fields: dict, allowed: tuple[str, ...], required: tuple[str, ...], where: str, what: str) -> None:
    for key, (knode, _) in fields.items():
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"Did you mean `{close[0]}`? " if close else ""
            raise InputError(f"unknown field {key!r} in {what}", where=f"{where}, line {_line(knode)}",
                             fix=f"{hint}The fields of {what} are: {', '.join(allowed)}.")
    for key in required:
        if key not in fields:
            raise InputError(f"{what} has no `{key}`", where=where,
                             fix=f"Give {what} its `{key}` (see the default file, data/audit/categories.yaml).")


def _words(node, where: str, what: str, lower: bool = True) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value or any(
            not isinstance(v, yaml.ScalarNode) or not str(v.value).strip() for v in node.value):
        raise InputError(f"{what} must be a non-empty list of words", where=f"{where}, line {_line(node)}",
                         fix="Write it as [word, word, ...], each word filled in.")
    return tuple(str(v.value).strip().lower() if lower else str(v.value).strip() for v in node.value)


def _text(node, where: str, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise InputError(f"{what} must be a word", where=f"{where}, line {_line(node)}", fix="Fill it in.")
    return str(node.value).strip()


def load_categories(path: str | Path | None = None, language: str = "en") -> Categories:
    """The categories of `path` (default: the packaged EEO-1 file of `language`), every field checked; a file
    whose `language:` is not the audit's is refused (its words would match nothing, or the wrong grammar)."""
    p = Path(path) if path is not None else default_categories_path(language)
    where = str(p)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the category file ({e.strerror})", where=where,
                         fix="Give the path of a YAML file laid out as data/audit/categories.yaml.") from None
    try:
        root = yaml.compose(raw.decode("utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"the category file is not valid YAML ({getattr(e, 'problem', None) or e})",
                         where=where + line, fix="Fix the YAML syntax there (indentation, a missing colon...).") from None
    if root is None:
        raise InputError("the category file is empty", where=where, fix="Give it `sex:` and `race:` sections.")
    top = _mapping(root, where, "the category file")
    _check_keys(top, TOP_FIELDS, REQUIRED_TOP, where, "the category file")
    lang = _text(top["language"][1], where, "`language`").lower() if "language" in top else "en"
    if lang not in LANGUAGES:
        raise InputError(f"unknown language {lang!r}", where=f"{where}, line {_line(top['language'][1])}",
                         fix=f"Write one of: {', '.join(LANGUAGES)}.")
    if lang != language:
        raise InputError(f"the category file is in {LANGUAGES[lang].name} and the audit in "
                         f"{LANGUAGES[language].name}", where=where,
                         fix=f"Pass --language {lang}, or a category file with `language: {language}`.")
    rules = get_language(lang).audit  # None: the descriptor before the noun, English's pronoun forms
    agreeing = rules is not None
    forms_needed = rules.pronoun_forms if agreeing else PRONOUN_FORMS

    sexes = []
    for name, (knode, vnode) in _mapping(top["sex"][1], where, "`sex`").items():
        fields = _mapping(vnode, where, f"sex {name!r}")
        _check_keys(fields, SEX_FIELDS, SEX_FIELDS, f"{where}", f"sex {name!r}")
        nouns = _words(fields["nouns"][1], where, f"the nouns of sex {name!r}")
        forms = _mapping(fields["pronouns"][1], where, f"the pronouns of sex {name!r}")
        _check_keys(forms, forms_needed, forms_needed, where, f"the pronouns of sex {name!r}")
        pronouns = {f: _text(forms[f][1], where, f"pronoun {f} of sex {name!r}").lower() for f in forms_needed}
        if agreeing and name not in rules.sexes:
            raise InputError(f"sex {name!r} has no grammatical gender", where=f"{where}, line {_line(knode)}",
                             fix=f"A {LANGUAGES[lang].name} file names its sexes "
                                 f"{' and '.join(sorted(rules.sexes, reverse=True))}: the agreement carried "
                                 "follows the grammatical gender.")
        sexes.append((Sex(str(name), nouns, pronouns), _line(knode)))
    if len(sexes) < 2:
        raise InputError("an audit needs at least two sexes", where=where, fix="List at least two under `sex:`.")
    first = sexes[0][0]
    for s, line in sexes[1:]:
        if len(s.nouns) != len(first.nouns):
            raise InputError(f"sex {s.name!r} has {len(s.nouns)} nouns and {first.name!r} {len(first.nouns)}",
                             where=f"{where}, line {line}",
                             fix="The noun lists are aligned (the i-th noun of one sex renders as the i-th of the "
                                 "other): give every sex the same number of nouns.")

    races = []
    sex_names = {s.name for s, _ in sexes}
    for name, (knode, vnode) in _mapping(top["race"][1], where, "`race`").items():
        fields = _mapping(vnode, where, f"race {name!r}")
        _check_keys(fields, RACE_FIELDS if not agreeing else tuple(f for f in RACE_FIELDS if f != "article"),
                    ("descriptor", "words") if agreeing else ("descriptor", "article", "words"), where,
                    f"race {name!r}")
        descriptor = _text(fields["descriptor"][1], where, f"the descriptor of race {name!r}")
        words = _words(fields["words"][1], where, f"the words of race {name!r}")
        article = None
        if agreeing:  # the masculine singular; its other forms from the inflection rules, or the file is refused
            if rules.descriptor_forms(descriptor) is None:
                raise InputError(f"the descriptor of race {name!r} ({descriptor!r}) cannot be inflected",
                                 where=f"{where}, line {_line(fields['descriptor'][1])}",
                                 fix=f"Give one masculine singular adjective whose feminine the {LANGUAGES[lang].name}"
                                     " rules make (languages/agreeing/grammar.py: noir, asiatique, océanien...).")
            descriptor = descriptor.lower()
            words = rules.word_forms(words + (descriptor,))
        else:
            article = _text(fields["article"][1], where, f"the article of race {name!r}").lower()
            if article not in ("a", "an"):
                raise InputError(f"the article of race {name!r} is {article!r}", where=f"{where}, line "
                                 f"{_line(fields['article'][1])}", fix="Write `a` or `an` (as said before the "
                                 "descriptor).")
        names: dict[str, tuple[str, ...]] = {}
        if "names" in fields:
            for sex, (sk, sv) in _mapping(fields["names"][1], where, f"the names of race {name!r}").items():
                if sex not in sex_names:
                    raise InputError(f"names for an unknown sex {sex!r} in race {name!r}",
                                     where=f"{where}, line {_line(sk)}",
                                     fix=f"Name one of the sexes: {', '.join(sorted(sex_names))}.")
                names[str(sex)] = _words(sv, where, f"the {sex} names of race {name!r}", lower=False)
        last = _words(fields["last_names"][1], where, f"the last names of race {name!r}", lower=False) \
            if "last_names" in fields else ()
        source = _text(fields["names_source"][1], where, f"the names_source of race {name!r}") \
            if "names_source" in fields else None
        races.append(Race(str(name), descriptor, article, words, names, last, source))
    if len(races) < 2:
        raise InputError("an audit needs at least two races/ethnicities", where=where,
                         fix="List at least two under `race:`.")
    unmarked: dict[str, tuple[str, ...]] = {}
    if "unmarked_names" in top:
        for sex, (sk, sv) in _mapping(top["unmarked_names"][1], where, "`unmarked_names`").items():
            if sex not in sex_names:
                raise InputError(f"unmarked names for an unknown sex {sex!r}", where=f"{where}, line {_line(sk)}",
                                 fix=f"Name one of the sexes: {', '.join(sorted(sex_names))}.")
            unmarked[str(sex)] = _words(sv, where, f"the unmarked {sex} names", lower=False)
    unmarked_source = _text(top["unmarked_names_source"][1], where, "unmarked_names_source") \
        if "unmarked_names_source" in top else None
    return Categories(tuple(s for s, _ in sexes), tuple(races), where, hashlib.sha256(raw).hexdigest(), unmarked,
                      unmarked_source, lang)
