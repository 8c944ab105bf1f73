"""Stage 1: the bias dictionary (word pairs per sensitive attribute) and its one-pass matcher.

A dictionary folder holds one sub-folder per attribute; in it, `A_B.csv` files map words of group A to
words of group B (`word;replacement` per line), and `A_B_job.csv` files hold occupational pairs. Files
with one group name (`male.csv`, `male_job.csv`) list a group's words and are not pairs. A dictionary can
also be one CSV or JSON file with the columns attribute, source_group, target_group, word, replacement.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable

import ahocorasick

from hinter.errors import HinterError, InputError
from hinter.languages import get_language
from hinter.records import pair_id

COLUMNS = ("attribute", "source_group", "target_group", "word", "replacement")


@dataclass(frozen=True)
class Pair:
    """One substitution `word -> replacement` of a sensitive attribute."""

    attribute: str
    source_group: str
    target_group: str
    word: str
    replacement: str
    occupational: bool = False
    # Where the pair was read (for lint messages); not part of its identity: equality, hash and id ignore them.
    file: str = field(default="", compare=False, repr=False)
    line: int = field(default=0, compare=False, repr=False)

    @property
    def id(self) -> str:
        return pair_id(self.attribute, self.source_group, self.target_group, self.word, self.replacement)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _lower_same_length(text: str) -> str:
    """Lower-case without changing offsets (a few characters lower-case to two)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


class WordMatcher:
    """Finds every whole-word, case-insensitive occurrence of the dictionary's words in one pass.

    One Aho-Corasick automaton over all words, so a text is scanned once whatever the size of the
    dictionary; overlapping words ("men" inside "old men") are all reported.
    """

    def __init__(self, words: Iterable[str]):
        self._automaton = ahocorasick.Automaton()
        for w in {w.lower() for w in words}:
            self._automaton.add_word(w, w)
        self._empty = len(self._automaton) == 0
        if not self._empty:
            self._automaton.make_automaton()

    def find(self, text: str) -> dict[str, tuple[tuple[int, int], ...]]:
        """Map each lower-cased dictionary word present in `text` to its (start, end) spans."""
        if self._empty:
            return {}
        low = _lower_same_length(text)
        found: dict[str, list[tuple[int, int]]] = defaultdict(list)
        n = len(low)
        for end_idx, word in self._automaton.iter(low):
            start, end = end_idx - len(word) + 1, end_idx + 1
            if start > 0 and _is_word_char(low[start - 1]) and _is_word_char(word[0]):
                continue
            if end < n and _is_word_char(low[end]) and _is_word_char(word[-1]):
                continue
            found[word].append((start, end))
        return {w: tuple(sorted(spans)) for w, spans in found.items()}


@dataclass(frozen=True)
class Dictionary:
    pairs: tuple[Pair, ...]
    source: str = "built-in"
    # Identity packs (with_packs): attributes whose pairs carry the person's pronouns along when the groups'
    # gender (the group name's first part, female-black) changes, and attributes matched only where capitalised.
    pronouns_follow: frozenset[str] = frozenset()
    capitalised: frozenset[str] = frozenset()

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(sorted({p.attribute for p in self.pairs}))

    @cached_property
    def matcher(self) -> WordMatcher:
        return WordMatcher(p.word for p in self.pairs)

    @cached_property
    def pairs_by_word(self) -> dict[str, tuple[Pair, ...]]:
        by_word: dict[str, list[Pair]] = defaultdict(list)
        for p in self.pairs:
            by_word[p.word.lower()].append(p)
        return {w: tuple(ps) for w, ps in by_word.items()}

    def restrict(self, attributes: Iterable[str], include_occupational: bool = True) -> "Dictionary":
        wanted = list(attributes)
        unknown = [a for a in wanted if a not in self.attributes]
        if unknown:
            raise InputError(
                f"unknown attribute {', '.join(map(repr, unknown))}",
                where=f"dictionary {self.source}",
                fix=f"Choose among {', '.join(self.attributes)}, or pass a dictionary that defines it.",
            )
        keep = tuple(p for p in self.pairs if p.attribute in wanted and (include_occupational or not p.occupational))
        return dataclasses.replace(self, pairs=keep)

    def without(self, pair_ids: set[str]) -> "Dictionary":
        """The dictionary less the pairs of these ids."""
        return dataclasses.replace(self, pairs=tuple(p for p in self.pairs if p.id not in pair_ids))

    def sample(self, per_attribute: int | None, seed: int = 0) -> "Dictionary":
        """A seeded uniform sample of at most `per_attribute` pairs of each attribute (None: all)."""
        if per_attribute is None:
            return self
        rng = random.Random(seed)
        keep: list[Pair] = []
        for attribute in self.attributes:
            pairs = [p for p in self.pairs if p.attribute == attribute]
            keep.extend(pairs if len(pairs) <= per_attribute else rng.sample(pairs, per_attribute))
        return dataclasses.replace(self, pairs=tuple(keep))

    def fingerprint(self) -> str:
        import hashlib

        h = hashlib.sha256()
        for p in self.pairs:
            h.update(p.id.encode())
            h.update(b"\0")
        return h.hexdigest()[:16]


FOLDER_FIX = "Every pair needs a word and its replacement, as `word;replacement`."
ROWS_FIX = (f"Every row needs the columns {', '.join(COLUMNS)}, each filled in (quote a value that holds a comma, "
            "as CSV does).")


def _check_pair(pair: Pair, where: str, strict: bool = True, fix: str = FOLDER_FIX) -> Pair:
    fields = {"attribute": pair.attribute, "source_group": pair.source_group, "target_group": pair.target_group,
              "word": pair.word, "replacement": pair.replacement}
    for name, value in fields.items():
        if not value:
            raise InputError(f"empty {name}", where=where, fix=fix)
    if strict and pair.word.lower() == pair.replacement.lower():
        raise InputError(f"the pair maps {pair.word!r} to itself", where=where,
                         fix="Remove the line: such a pair can never change a text.")
    return pair


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a leading byte-order mark (Excel) dropped
    except UnicodeDecodeError as e:
        raise InputError(f"not valid UTF-8 (byte {e.start})", where=str(path), fix="Save the file as UTF-8.") from None
    except OSError as e:
        raise InputError(f"cannot read the file ({e.strerror})", where=str(path)) from None


@dataclass(frozen=True)
class BadLine:
    """A line of a dictionary that `hinter run` refuses (`load_dictionary(problems=...)` lists them all)."""

    file: str
    line: int
    error: InputError


def _collect(problems: list[BadLine] | None, file, line: int, error: InputError) -> None:
    """Raise `error`, or, when the caller collects them (the lint), list it and go on with the next line."""
    if problems is None:
        raise error
    problems.append(BadLine(str(file), line, error))


def _pairs_from_folder(root: Path, strict: bool = True, problems: list[BadLine] | None = None) -> list[Pair]:
    pairs: list[Pair] = []
    for attr_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(attr_dir.glob("*.csv")):
            stem = f.stem
            occupational = stem.endswith("_job")
            groups = (stem[: -len("_job")] if occupational else stem).split("_")
            if len(groups) == 1:
                continue  # a group's word list, not pairs
            if len(groups) != 2:
                _collect(problems, f, 0, InputError(
                    "cannot tell the two groups from the file name", where=str(f),
                    fix="Name pair files SOURCE_TARGET.csv (or SOURCE_TARGET_job.csv), with no other underscore."))
                continue
            for lineno, line in enumerate(_read_text(f).splitlines(), start=1):
                if not line.strip():
                    continue
                cells = [c.strip() for c in line.split(";")]
                where = f"{f}, line {lineno}"
                try:
                    if len(cells) != 2:
                        raise InputError(
                            f"expected `word;replacement`, found {len(cells)} field(s) in {line.strip()!r}",
                            where=where, fix="Write one pair per line, the two words separated by one semicolon.")
                    pairs.append(_check_pair(Pair(attr_dir.name, groups[0], groups[1], cells[0], cells[1],
                                                  occupational, str(f), lineno), where, strict))
                except InputError as e:
                    _collect(problems, f, lineno, e)
    return pairs


def _pairs_from_rows(rows: Iterable[tuple[int, dict]], path: Path, strict: bool = True,
                     problems: list[BadLine] | None = None, header: int | None = None) -> list[Pair]:
    """Pairs of a CSV (`header`: its column count) or JSON dictionary's rows."""
    pairs = []
    what = "row" if header is not None else "object"
    for lineno, row in rows:
        where = f"{path}, line {lineno}"
        try:
            if not isinstance(row, dict):
                raise InputError(f"expected an {what} with the dictionary columns", where=where, fix=ROWS_FIX)
            if header is not None and (None in row or None in row.values()):  # cut by an unquoted comma, or short
                found = len([v for k, v in row.items() if k is not None and v is not None]) + len(row.get(None) or ())
                raise InputError(f"the row has {found} field{'s' if found != 1 else ''} where the header has "
                                 f"{header}", where=where, fix=ROWS_FIX)
            missing = [c for c in COLUMNS if c not in row]
            if missing:
                raise InputError(f"missing column(s) {', '.join(missing)}", where=where, fix=ROWS_FIX)
            values = {c: str(row[c] if row[c] is not None else "").strip() for c in COLUMNS}
            occ = str(row.get("occupational", "")).strip().lower() in {"1", "true", "yes"}
            pairs.append(_check_pair(Pair(**values, occupational=occ, file=str(path), line=lineno), where, strict,
                                     ROWS_FIX))
        except InputError as e:
            _collect(problems, path, lineno, e)
    return pairs


def load_dictionary(path: str | Path | None = None, *, strict: bool = True,
                    problems: list[BadLine] | None = None, language: str = "en") -> Dictionary:
    """The built-in SBIC-derived dictionary (None), a dictionary folder, or one CSV/JSON file. `strict=False`
    (`hinter dictionary lint`): self-pairs and repeated pairs are kept, for the lint to report. `problems`: a list
    that receives every line `hinter run` would refuse, instead of an error at the first."""
    if path is None:  # the language's built-in dictionary (languages.Language.dictionary)
        folder = get_language(language).dictionary
        root = resources.files("hinter") / "data" / folder
        with resources.as_file(root) as p:
            return Dictionary(tuple(_pairs_from_folder(Path(p), strict)),
                              "built-in" if language == "en" else f"built-in-{language}")
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", where=f"dictionary {path}",
                         fix="Pass a dictionary folder (ATTRIBUTE/SOURCE_TARGET.csv) or a CSV/JSON file.")
    if path.is_dir():
        pairs = _pairs_from_folder(path, strict, problems)
    elif path.suffix.lower() == ".json":
        try:
            data = json.loads(_read_text(path))
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON ({e.msg})", where=f"{path}, line {e.lineno}") from None
        if not isinstance(data, list):
            raise InputError("expected a JSON list of pair objects", where=str(path))
        pairs = _pairs_from_rows(((i + 1, r) for i, r in enumerate(data)), path, strict, problems)
    elif path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(_read_text(path)))
        header = len(reader.fieldnames or ())
        pairs = _pairs_from_rows(((reader.line_num, r) for r in reader), path, strict, problems, header)
    else:
        raise InputError(f"unknown dictionary format {path.suffix!r}", where=str(path),
                         fix="Use a folder of CSV pair files, a .csv file or a .json file.")
    if not pairs and not problems:
        raise InputError("the dictionary holds no word pairs", where=str(path),
                         fix="Add pair files named SOURCE_TARGET.csv with `word;replacement` lines.")
    return Dictionary(tuple(dict.fromkeys(pairs) if strict else pairs), str(path))


def pack_names() -> tuple[str, ...]:
    """The identity packs shipped with hinter (src/hinter/data/packs/NAME: pairs.csv, SOURCE.md, LICENSE)."""
    root = resources.files("hinter") / "data" / "packs"
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "pairs.csv").is_file()))


def load_pack(name: str) -> Dictionary:
    """One identity pack by name: a separate dictionary with its own licence, never part of the default one."""
    if name not in pack_names():
        raise InputError(f"unknown identity pack {name!r}", where="--packs",
                         fix=f"Choose among {', '.join(pack_names())}.")
    root = resources.files("hinter") / "data" / "packs" / name
    with resources.as_file(root) as p:
        d = load_dictionary(Path(p) / "pairs.csv")
        meta = json.loads(_read_text(Path(p) / "pack.json"))
    return Dictionary(d.pairs, name, frozenset(meta.get("pronouns_follow", ())), frozenset(meta.get("capitalised", ())))


def with_packs(base: Dictionary, packs: Iterable[str]) -> Dictionary:
    """`base` with the pairs of the named identity packs added: their attributes are then chosen with --attributes
    like the base's, and combine with them (name x religion, name x race)."""
    out = base
    for name in packs:
        if name in out.source.split("+")[1:]:
            continue  # already added (the CLI adds them before the engine sees the dictionary)
        pack = load_pack(name)
        clash = sorted(set(pack.attributes) & set(out.attributes))
        if clash:
            raise InputError(f"the pack {name!r} defines the attribute(s) {', '.join(clash)} that the dictionary "
                             f"{out.source} already has", where="--packs",
                             fix="Rename the attribute in your dictionary, or leave the pack out.")
        out = Dictionary(out.pairs + pack.pairs, f"{out.source}+{name}", out.pronouns_follow | pack.pronouns_follow,
                         out.capitalised | pack.capitalised)
    return out


@lru_cache(maxsize=8)
def occupational_ids(source: str | None) -> frozenset[str]:
    """The ids of the occupational pairs (`*_job.csv`, a column `occupational`) of the dictionary a run recorded
    as its source (settings "dictionary": "built-in", a path, "+pack" for each identity pack). A finding whose
    cell applies them changed a stereotyped occupation (`manager -> cashier`), not the person's gender: measures
    mark it. Empty when the source cannot be read again (moved, or a dictionary built in memory)."""
    if not source:
        return frozenset()
    base, *packs = source.split("+")
    try:
        d = with_packs(load_dictionary(None if base == "built-in" else base), packs)
    except (HinterError, OSError):
        return frozenset()
    return frozenset(p.id for p in d.pairs if p.occupational)

