"""A dictionary built from SBIC-style annotations (`hinter dictionary extract`), the way HInter built its own:
the groups each post targets, per category -> a word list per group -> word pairs between the groups of a
category (../shared/docs/METHOD.md; the paper, section 4 "Bias dictionary").

1. Each annotation names target groups (SBIC `targetMinority`, or a derived file's `sanitized_target`/`target`;
   several groups are separated by commas, variants by a slash: "overweight/fat folks" is "overweight folks" and
   "fat folks") and, in SBIC's own files, their category (`targetCategory`: race, gender, body, disabled,
   victim, culture, social). Without that column the category comes from the words of the target
   (data/sbic/categories.csv); a target with no known word is left out.
2. A group is a target less its generic head ("black folks" -> black, head "folks"; "women" has no head: the
   group is the noun itself). Its words: the descriptor and the phrases seen ("black", "black folks"). Groups
   named by fewer than `min_count` annotations are left out (typos, one-offs).
3. Pairs between every two groups A != B of an attribute: descriptor to descriptor ("black" -> "asian"), each
   phrase of A to B's with the same head ("black folks" -> "asian folks"), and a noun group's words to B's main
   phrase ("jews" -> "christian folks"). Categories become attributes as in the paper's dictionary: disabled
   and victim go to body (its "disorder" groups), the others keep their name.

The paper's authors then inspected the pairs by hand; `hinter dictionary lint` is the tool for that step.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Iterable

from hinter.mutation.dictionary import Pair
from hinter.errors import InputError
from hinter.files import write_atomic

ATTRIBUTE_OF_CATEGORY = {"race": "race", "gender": "gender", "body": "body", "disabled": "body", "victim": "body",
                         "culture": "culture", "social": "social"}
GENERIC_HEADS = ("folks", "people", "persons", "individuals", "folk")
TARGET_COLUMNS = ("targetMinority", "sanitized_target", "target")


@dataclass
class Group:
    attribute: str
    descriptor: str | None          # "black" of "black folks"; None for a noun group ("women")
    phrases: Counter = field(default_factory=Counter)  # surface phrases seen, with their counts

    @property
    def name(self) -> str:
        """The group's name in file names: no underscore (SOURCE_TARGET.csv), no space."""
        base = self.descriptor if self.descriptor is not None else self.main
        return re.sub(r"[^a-z0-9+]+", "-", base.lower()).strip("-") or "group"

    @property
    def main(self) -> str:
        return self.phrases.most_common(1)[0][0]

    @property
    def heads(self) -> set[str]:
        return {h for p in self.phrases for h in [_descriptor(p)[1]] if h}

    @property
    def term(self) -> str:
        """The group as one term, where a noun is paired with it: "christian folks" (its most seen head)."""
        if self.descriptor is None:
            return self.main
        heads = Counter({h: n for p, n in self.phrases.items() for h in [_descriptor(p)[1]] if h})
        return f"{self.descriptor} {heads.most_common(1)[0][0] if heads else 'people'}"

    @property
    def count(self) -> int:
        return sum(self.phrases.values())

    def words(self) -> list[str]:
        return sorted({*self.phrases, *([self.descriptor] if self.descriptor else [])})


def _categories() -> list[tuple[tuple[str, ...], str]]:
    text = (resources.files("hinter") / "data" / "sbic" / "categories.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#"))
    return [(tuple(r["word"].split()), r["category"]) for r in rows]


def infer_category(target: str, table: list[tuple[tuple[str, ...], str]] | None = None) -> str | None:
    """The category of a target from its words, left to right, a two-word phrase before a word
    ("native american folks" -> race; "mass shooting victims" -> victim); None when no word is known."""
    table = table if table is not None else _categories()
    known = {words: cat for words, cat in table}
    toks = target.lower().split()
    for i in range(len(toks)):
        for n in (2, 1):
            if tuple(toks[i:i + n]) in known and i + n <= len(toks):
                return known[tuple(toks[i:i + n])]
    return None


def split_targets(value: str) -> list[str]:
    """'liberals, feminists' -> two targets; 'overweight/fat folks' -> 'overweight folks', 'fat folks';
    an aggregated file's "['black folks', 'women']" -> two targets."""
    value = value.strip().strip("[]")
    out = []
    for part in value.split(","):
        part = " ".join(part.strip().strip("'\"").lower().split())
        if not part:
            continue
        if "/" in part:
            *alts, last = part.split("/")
            last_words = last.split()
            head = last_words[-1] if len(last_words) > 1 and last_words[-1] in GENERIC_HEADS else None
            for alt in [*alts, last]:
                alt = alt.strip()
                if head and not alt.endswith(" " + head):
                    alt = f"{alt} {head}"
                out.append(alt)
        else:
            out.append(part)
    return out


def _descriptor(target: str) -> tuple[str | None, str | None]:
    """('black', 'folks') for 'black folks'; ('asian', None) for a lone adjective ('asian'); (None, None) for a
    noun group ('women', 'jews', 'feminists')."""
    words = target.split()
    if len(words) > 1 and words[-1] in GENERIC_HEADS:
        return " ".join(words[:-1]), words[-1]
    if len(words) == 1 and not target.endswith(("s", "men", "+")):
        return target, None
    return None, None


def read_annotations(path: Path) -> list[tuple[str, str | None]]:
    """(target value, category or None) per annotation row of an SBIC-style CSV file."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading byte-order mark (Excel) dropped
    except OSError as e:
        raise InputError(f"cannot read the file ({e.strerror})", where=str(path)) from None
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    target = next((c for c in TARGET_COLUMNS if c in columns), None)
    if target is None:
        raise InputError(f"no target column (one of {', '.join(TARGET_COLUMNS)})", where=f"{path}, line 1",
                         fix="Give a CSV with the targeted group of each annotation in a column targetMinority "
                             "(and optionally targetCategory), as SBIC's files have.")
    has_category = "targetCategory" in columns
    return [(row[target] or "", (row.get("targetCategory") or None) if has_category else None) for row in reader]


def build_groups(annotations: Iterable[tuple[str, str | None]], min_count: int = 3) -> dict[str, list[Group]]:
    """Attribute -> its groups, each named by at least `min_count` annotations."""
    table = _categories()
    groups: dict[tuple[str, str], Group] = {}
    for value, category in annotations:
        targets = split_targets(value)
        categories = split_targets(category) if category else []
        for i, t in enumerate(targets):
            # one category per target where the file gives as many, else the first given, else inferred
            cat = (categories[i] if len(categories) == len(targets) else categories[0]) if categories \
                else infer_category(t, table)
            attribute = ATTRIBUTE_OF_CATEGORY.get(cat or "")
            if attribute is None:
                continue
            descriptor, _ = _descriptor(t)
            key = (attribute, descriptor if descriptor is not None else _singular(t))
            g = groups.setdefault(key, Group(attribute, descriptor))
            g.descriptor = g.descriptor or descriptor  # "mexicans" then "mexican folks": one group, "mexican"
            g.phrases[t] += 1
    out: dict[str, list[Group]] = defaultdict(list)
    for (attribute, _), g in sorted(groups.items()):
        if g.count >= min_count:
            out[attribute].append(g)
    return dict(out)


def _singular(noun: str) -> str:
    """A noun group's key: 'mexicans' and 'mexican' are one group ('ethiopians', 'ethiopian')."""
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") and len(noun) > 3 else noun


def pairs_between(groups: dict[str, list[Group]]) -> list[Pair]:
    """Every pair between two groups A != B of an attribute, symmetric by construction: between two descriptor
    groups the descriptors ("black" -> "asian") and their phrases with each head either was seen with ("black
    folks" -> "asian folks"); otherwise the groups' terms ("jews" -> "christian folks")."""
    out: dict[tuple, Pair] = {}
    for attribute, gs in groups.items():
        for a in gs:
            for b in gs:
                if a is b or a.name == b.name:
                    continue
                if a.descriptor and b.descriptor:
                    candidates = [(a.descriptor, b.descriptor)] + [
                        (f"{a.descriptor} {h}", f"{b.descriptor} {h}") for h in sorted(a.heads | b.heads)]
                else:
                    candidates = [(a.term, b.term)]
                for w, r in candidates:
                    if w.lower() != r.lower():
                        out.setdefault((attribute, a.name, b.name, w, r), Pair(attribute, a.name, b.name, w, r))
    return list(out.values())


def write_dictionary(groups: dict[str, list[Group]], pairs: list[Pair], out: Path, source: str) -> list[Path]:
    """hinter's folder layout: ATTRIBUTE/GROUP.csv (the group's words) and ATTRIBUTE/A_B.csv (`word;replacement`
    lines), with a SOURCE.md saying where it came from. Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    by_file: dict[Path, list[str]] = defaultdict(list)
    for p in pairs:
        by_file[out / p.attribute / f"{p.source_group}_{p.target_group}.csv"].append(f"{p.word};{p.replacement}")
    for attribute, gs in groups.items():
        for g in gs:
            by_file[out / attribute / f"{g.name}.csv"] = g.words()
    for path, lines in sorted(by_file.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, "\n".join(lines) + "\n")
        written.append(path)
    readme = out / "SOURCE.md"
    write_atomic(
        readme, "# A dictionary extracted by `hinter dictionary extract`\n\n"
        f"From: {source}\n\nGroups (words named by at least the minimum number of annotations) per attribute: "
        + "; ".join(f"{a} {len(gs)}" for a, gs in groups.items()) + f". Pairs: {len(pairs)}.\n\n"
        "Inspect the pairs before use (`hinter dictionary lint DIR --dataset ...`), as the paper's authors did.\n")
    written.append(readme)
    return written


def overlap(extracted: Iterable[Pair], builtin: Iterable[Pair]) -> dict[str, dict]:
    """Per attribute (those of either dictionary): pairs (lower-cased word -> replacement, groups aside: the two
    name them differently) and words (words and replacements) in both, only extracted, only built-in."""
    def index(pairs):
        p, w = defaultdict(set), defaultdict(set)
        for x in pairs:
            p[x.attribute].add((x.word.lower(), x.replacement.lower()))
            w[x.attribute] |= {x.word.lower(), x.replacement.lower()}
        return p, w

    (ep, ew), (bp, bw) = index(extracted), index(builtin)
    out = {}
    for a in sorted(set(ep) | set(bp)):
        out[a] = {"pairs": {"both": len(ep[a] & bp[a]), "only_extracted": len(ep[a] - bp[a]),
                            "only_builtin": len(bp[a] - ep[a])},
                  "words": {"both": len(ew[a] & bw[a]), "only_extracted": len(ew[a] - bw[a]),
                            "only_builtin": len(bw[a] - ew[a])},
                  "shared_words": sorted(ew[a] & bw[a])[:20]}
    return out
