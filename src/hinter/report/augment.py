"""Counterfactual training data from a run or a suite (`hinter augment`, issue 24).

Each original is written with its valid mutants (atomic and intersectional: the dependency invariant kept them),
every mutant labelled with its original's label: the gold label where the dataset has one, else the model's
outcome on the original (a run), else none (a suite or dataset without gold labels: the caller says so). A model
trained on them sees each text with other people in it and the same label: the counterfactual augmentation of
Kusner et al. and ASTRAEA's retraining, for intersections of attributes too.

The selection is pure (`augment`): only mutants of given cells (a run's significant findings) or combinations,
mutants that use an evaluative pair left out, no text twice (a mutant that repeats an original, or another
mutant, is dropped), then a seeded balance of the cells within each combination of attributes, of the
combinations, or of every cell. Readers (`from_run`, `from_suite`) and writers (JSONL, CSV, a `datasets` folder) sit around it.
"""
from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from hinter.mutation.dictionary import Pair
from hinter.errors import InputError
from hinter.files import write_atomic, write_csv
from hinter.mutation.lint import evaluative_ids
from hinter.analysis.measures import findings_section
from hinter.records import Replacement, apply_replacements, dictionary_replacements, edits

KINDS = ("original", "atomic", "intersectional")
BALANCES = ("none", "groups", "combinations", "both")
LABEL_SOURCES = ("gold", "model", "none")
FORMATS = {".jsonl": "jsonl", ".csv": "csv", "": "datasets"}
EVALUATIVE = frozenset({"*"})  # Selection.exclude_pairs: the source's own evaluative pairs (the readers resolve it)
COLUMNS = ("text", "label", "source_id", "kind", "text_id", "attributes", "groups", "replacements")

# A cell as the findings name it: per changed attribute (sorted), its source and target group.
Cell = tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Original:
    """One original text with the label its mutants inherit (None: none known)."""

    text_id: int
    source_id: str
    text: str
    label: str | None


@dataclass(frozen=True)
class Candidate:
    """One valid mutant of an original: its text and its dictionary replacements (repairs left out)."""

    text_id: int
    text: str
    replacements: tuple[Replacement, ...]

    @property
    def cell(self) -> Cell:
        return tuple(sorted((r.attribute, r.source_group, r.target_group) for r in self.replacements))

    @property
    def combination(self) -> str:
        return "+".join(sorted(r.attribute for r in self.replacements))


@dataclass(frozen=True)
class Row:
    """One line of the augmented data."""

    text: str
    label: str | None
    source_id: str
    kind: str
    text_id: int
    attributes: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()        # per attribute "attribute:source>target"
    replacements: str = ""              # "gender: man -> woman; race: white -> black"

    def to_dict(self) -> dict:
        return {"text": self.text, "label": self.label, "source_id": self.source_id, "kind": self.kind,
                "text_id": self.text_id, "attributes": list(self.attributes), "groups": list(self.groups),
                "replacements": self.replacements}


@dataclass(frozen=True)
class Selection:
    """Which mutants to write. `cells`: only these (None: all); `combinations`: only mutants matching one of these
    (`parse_combination`; empty: all); `exclude_pairs`: pair ids whose mutants are left out; `balance`: one of
    BALANCES; `originals`: write each original with a kept mutant before its mutants; `seed`: of the balance."""

    cells: frozenset | None = None
    combinations: tuple = ()
    exclude_pairs: frozenset = frozenset()
    balance: str = "none"
    originals: bool = True
    seed: int = 0


@dataclass
class Augmented:
    rows: list[Row]
    label_source: str
    counts: dict[str, int] = field(default_factory=dict)  # what was left out, and why


# ---------------------------------------------------------------- selection (pure)

def parse_combination(spec: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """`gender+race` (any groups) or `gender:male>female+race:european>african` (these groups) as sorted
    (attribute, source, target) triples. ValueError on a malformed spec."""
    out = []
    for part in spec.split("+"):
        part = part.strip()
        attribute, _, groups = part.partition(":")
        source = target = None
        if groups:
            source, sep, target = groups.partition(">")
            if not sep or not source or not target:
                raise ValueError(f"{part!r}: write attribute:source>target, e.g. gender:male>female")
        if not attribute:
            raise ValueError(f"{spec!r}: an empty attribute")
        out.append((attribute, source, target))
    if len({a for a, _, _ in out}) != len(out):
        raise ValueError(f"{spec!r}: an attribute named twice")
    return tuple(sorted(out, key=lambda x: x[0]))


def matches(cell: Cell, combination: tuple[tuple[str, str | None, str | None], ...]) -> bool:
    """Whether a mutant's cell is of this combination (the same attributes; the groups where given)."""
    return len(cell) == len(combination) and all(
        a == ca and (s is None or s == cs) and (t is None or t == ct) for (ca, cs, ct), (a, s, t) in zip(cell, combination))


def _draw(items: list, n: int, rng: random.Random) -> list:
    """`n` of `items` drawn by `rng`, in their order."""
    if len(items) <= n:
        return items
    keep = set(rng.sample(range(len(items)), n))
    return [x for i, x in enumerate(items) if i in keep]


def balance(mutants: list[Candidate], how: str, seed: int = 0) -> list[Candidate]:
    """`groups`: within each combination of attributes, every cell keeps as many mutants as its smallest cell;
    `combinations`: every combination keeps as many as the smallest combination; `both`: every cell of every
    combination keeps as many as the smallest cell of all. Seeded draws; the kept mutants in their order."""
    if how not in BALANCES:
        raise ValueError(f"balance: one of {', '.join(BALANCES)}, not {how!r}")
    if how == "none" or not mutants:
        return mutants
    rng = random.Random(seed)
    groups: dict[tuple, list] = defaultdict(list)
    for m in mutants:
        groups[(m.combination,) if how == "combinations" else (m.combination, m.cell)].append(m)
    if how == "groups":
        smallest: dict[str, int] = {}
        for (combo, _), ms in groups.items():
            smallest[combo] = min(smallest.get(combo, len(ms)), len(ms))
        size = {key: smallest[key[0]] for key in groups}
    else:
        n = min(map(len, groups.values()))
        size = {key: n for key in groups}
    kept = {id(m) for key in sorted(groups) for m in _draw(groups[key], size[key], rng)}
    return [m for m in mutants if id(m) in kept]


def augment(originals: Sequence[Original], mutants: Iterable[Candidate], selection: Selection = Selection(),
            label_source: str = "gold") -> Augmented:
    """The augmented rows: per original (in text_id order) the original, then its kept mutants, each with the
    original's label. With a label source other than "none", an original without a label is left out with its
    mutants (counted: `unlabelled_texts`)."""
    if label_source not in LABEL_SOURCES:
        raise ValueError(f"label_source: one of {LABEL_SOURCES}")
    counts = Counter({k: 0 for k in ("unlabelled_texts", "evaluative_left_out", "outside_selection",
                                     "repeated_texts", "balanced_away")})
    by_id = {o.text_id: o for o in originals}
    labelled = {tid for tid, o in by_id.items() if o.label is not None or label_source == "none"}
    counts["unlabelled_texts"] = len(by_id) - len(labelled)
    seen = {o.text for o in originals}  # a mutant equal to any original is no new text
    kept: list[Candidate] = []
    for m in mutants:
        if m.text_id not in labelled:
            continue
        if selection.exclude_pairs and any(r.pair_id in selection.exclude_pairs for r in m.replacements):
            counts["evaluative_left_out"] += 1
            continue
        cell = m.cell
        if (selection.cells is not None and cell not in selection.cells) or (
                selection.combinations and not any(matches(cell, c) for c in selection.combinations)):
            counts["outside_selection"] += 1
            continue
        if m.text in seen:
            counts["repeated_texts"] += 1
            continue
        seen.add(m.text)
        kept.append(m)
    balanced = balance(kept, selection.balance, selection.seed)
    counts["balanced_away"] = len(kept) - len(balanced)
    per_text: dict[int, list[Candidate]] = defaultdict(list)
    for m in balanced:
        per_text[m.text_id].append(m)
    rows, written_originals = [], set()
    for tid in sorted(per_text):
        o = by_id[tid]
        if selection.originals and o.text not in written_originals:  # a dataset may repeat a text
            written_originals.add(o.text)
            rows.append(Row(o.text, o.label, o.source_id, "original", tid))
        for m in per_text[tid]:
            rows.append(Row(m.text, o.label, o.source_id, "atomic" if len(m.replacements) == 1 else "intersectional",
                            tid, tuple(a for a, _, _ in m.cell), tuple(f"{a}:{s}>{t}" for a, s, t in m.cell),
                            "; ".join(r.describe() for r in m.replacements)))
    return Augmented(rows, label_source, dict(counts))


def cells_of_findings(findings: Iterable[dict]) -> frozenset:
    """The cells of the significant findings (summary.json's records), whatever their label."""
    return frozenset(tuple(sorted((c["attribute"], c["source_group"], c["target_group"]) for c in f["components"]))
                     for f in findings if f.get("significant"))


# ---------------------------------------------------------------- readers

def _candidate(text_id: int, original: str, replacements: Sequence[Replacement]) -> Candidate:
    # the mutant's text from the original and every edit (repairs too); its identity from the dictionary's pairs
    return Candidate(text_id, apply_replacements(original, edits(replacements)),
                     dictionary_replacements(replacements))


def from_run(store, selection: Selection, significant: bool = False) -> Augmented:
    """Augment from a run's store (store.RunStore): labels from gold where the dataset has them, else the model's
    outcomes on the originals; `significant`: only the cells of the run's significant findings."""
    texts = list(store.texts())
    source = "gold" if any(t.gold is not None for t in texts) else "model"
    originals = [Original(t.text_id, t.source_id if t.source_id is not None else str(t.text_id), t.text,
                          t.gold if source == "gold" else t.outcome) for t in texts]
    if significant:
        selection = _replace(selection, cells=cells_of_findings(findings_section(store)["findings"]))
    if selection.exclude_pairs == EVALUATIVE:
        selection = _replace(selection, exclude_pairs=_evaluative(store.settings().get("checks.evaluative"),
                                                                  store.mutants()))
    mutants = (Candidate(m.text_id, m.text, dictionary_replacements(m.replacements))  # the store rebuilt its text
               for m in store.mutants() if m.valid)
    return augment(originals, mutants, selection, source)


def from_suite(suite, selection: Selection) -> Augmented:
    """Augment from a suite (suite.Suite: no model): labels from gold where the dataset has them, else none."""
    records = suite.records
    source = "gold" if any(r.gold is not None for r in records) else "none"
    originals = [Original(i, r.source_id if r.source_id is not None else str(i), r.text, r.gold)
                 for i, r in enumerate(records)]
    if selection.exclude_pairs == EVALUATIVE:
        selection = _replace(selection, exclude_pairs=_evaluative(
            suite.evaluative, (m for ms in suite.mutants.values() for m in ms)))
    mutants = (_candidate(tid, records[tid].text, m.replacements)
               for tid in sorted(suite.mutants) for m in suite.mutants[tid] if m.valid)
    return augment(originals, mutants, selection, source)


def _evaluative(check: dict | None, mutants: Iterable) -> frozenset:
    """The evaluative pair ids a run or suite recorded; for one recorded before the check, found now among the
    pairs its mutants use (lint.evaluative_ids, the same check)."""
    if check is not None:
        return frozenset(check["pairs"])
    pairs = {(r.attribute, r.source_group, r.target_group, r.word, r.replacement)
             for m in mutants for r in dictionary_replacements(m.replacements)}
    return frozenset(evaluative_ids(Pair(*p) for p in pairs))


def _replace(selection: Selection, **changes) -> Selection:
    return replace(selection, **changes)


# ---------------------------------------------------------------- writers

def output_format(path: str | Path) -> str:
    """jsonl, csv or datasets (a folder: no suffix), by the path's suffix; InputError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"cannot tell the format of {path} from its suffix {suffix!r}", where="--out",
                         fix="End it in .jsonl or .csv, or give a folder name without a suffix (a `datasets` folder).")
    return FORMATS[suffix]


def write(rows: Sequence[Row], path: str | Path, raw_csv: bool = False) -> Path:
    """Write the rows as the path's suffix says (`output_format`): JSONL (one object per line), CSV (lists joined
    by '+'), or a folder saved by the `datasets` library (Dataset.save_to_disk)."""
    path = Path(path)
    fmt = output_format(path)
    if fmt != "datasets":
        path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        write_atomic(path, "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in rows))
    elif fmt == "csv":  # cells safe in spreadsheets unless --raw-csv (a text beginning '=' gets a leading ')
        write_csv(path, COLUMNS, (["+".join(v) if isinstance(v, list) else v for v in (d[c] for c in COLUMNS)]
                                  for d in (r.to_dict() for r in rows)), raw=raw_csv)
    else:
        try:
            import datasets
        except ImportError:
            raise InputError("writing a datasets folder needs the `datasets` package", where="--out",
                             fix="pip install datasets, or end --out in .jsonl or .csv.") from None
        features = datasets.Features({
            "text": datasets.Value("string"), "label": datasets.Value("string"),
            "source_id": datasets.Value("string"), "kind": datasets.Value("string"),
            "text_id": datasets.Value("int64"), "attributes": datasets.Sequence(datasets.Value("string")),
            "groups": datasets.Sequence(datasets.Value("string")), "replacements": datasets.Value("string")})
        datasets.Dataset.from_list([r.to_dict() for r in rows], features=features).save_to_disk(str(path))
    return path
