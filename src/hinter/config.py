"""One run's settings: a frozen `RunConfig` shared by the CLI, the Python API, `resume` and the executors.

It is validated once, on creation (with the errors that name the option and the fix), and normalised so that
two spellings of one campaign are one config: attributes sorted and deduplicated, paths resolved. What a run
records, and compares on resume, derives from it (`recorded()`). Where the work runs (`Execution`) is kept
apart: it never changes a result, so a run may be continued on another executor.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

# The options of `hinter run` that are settings of the run, as the CLI names them (for messages).
OPTION_NAMES = {
    "dataset": "--dataset", "text_field": "--text-field", "label_field": "--label-field", "limit": "--limit",
    "skip_bad_rows": "--skip-bad-rows", "model": "--model", "task": "--task", "attributes": "--attributes",
    "order": "--order", "dictionary": "--dictionary", "pairs_per_attribute": "--pairs-per-attribute",
    "max_pairs_per_text": "--max-pairs-per-text", "seed": "--seed", "include_occupational": "--no-jobs",
    "query_discarded": "--query-discarded", "window": "--window", "repeats": "--repeats",
    "exclude_evaluative": "--exclude-evaluative", "validity": "--validity",
    "packs": "--packs", "person_only": "--person-only", "repair": "--repair",
}
VALIDITY_MODES = ("paper", "reference")  # --validity
# Options added later, recorded only when set (not at their default): a run made before them (or without them)
# records the same config.
RECORDED_ONLY_WHEN_SET = {"exclude_evaluative", "validity", "packs", "person_only", "repair"}


def _at_least_one(name: str, value: int | float | None, unset: str = "") -> None:
    if value is not None and value < 1:
        raise InputError(f"{OPTION_NAMES.get(name, '--' + name.replace('_', '-'))} must be at least 1{unset}, "
                         f"got {value}", where=OPTION_NAMES.get(name, "--" + name.replace("_", "-")))


def parse_attributes(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """'race, gender' or ('gender', 'race') -> ('gender', 'race'): the order never matters."""
    items = value.split(",") if isinstance(value, str) else value
    attrs = tuple(sorted(dict.fromkeys(a.strip() for a in items if a and a.strip())))
    if not attrs:
        raise InputError("no attribute given", where="--attributes", fix="Name at least one, e.g. race,gender.")
    return attrs


def _resolved(path: str | Path | None, bundled: tuple[str, ...] = ()) -> str | None:
    """A path written as the user likes (./x.csv, x.csv, ~/x.csv) becomes one absolute spelling; a bundled
    sample's name stays a name unless a file of that name is here."""
    if path is None:
        return None
    p = Path(path).expanduser()
    if str(path) in bundled and not p.exists():
        return str(path)
    return str(p.resolve())


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's results (the model's spec included), validated on creation."""

    attributes: tuple[str, ...] = ("gender", "race")
    order: int = 2
    dictionary: str | None = None  # None: the built-in dictionary
    pairs_per_attribute: int | None = None
    max_pairs_per_text: int | None = None
    seed: int = 0
    include_occupational: bool = True
    query_discarded: bool = False
    window: int | None = None  # characters of each text the model reads, around the changes (None: all)
    repeats: int = 1  # every text asked this many times (models that are not deterministic)
    exclude_evaluative: bool = False  # leave out the pairs the lint finds evaluative ("man" -> "ugly man")
    validity: str = "paper"  # "reference": the reference tool's preprocessing around the check (validity/reference.py)
    packs: tuple[str, ...] = ()  # identity packs added to the dictionary (dictionary.with_packs)
    person_only: bool = False  # replace a word only where it refers to a person (person.py)
    repair: bool = False  # fix the a/an and number agreement a replacement broke (repair.py)
    # Where the texts come from, when read by hinter (the CLI); the Python API may pass texts instead.
    dataset: str | None = None
    text_field: str = "text"
    label_field: str = "label"
    limit: int | None = None
    skip_bad_rows: bool = False
    # The model under test, when named by a spec (the Python API may pass an object instead).
    model: str | None = None
    task: str | None = None
    batch_texts: int = field(default=32, compare=False)  # a unit of commit, not a result

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "attributes", parse_attributes(self.attributes))
        packs = self.packs.split(",") if isinstance(self.packs, str) else self.packs
        set_(self, "packs", tuple(sorted(dict.fromkeys(p.strip() for p in packs if p and p.strip()))))
        if self.order < 1:
            raise InputError(f"--order must be at least 1, got {self.order}", where="--order",
                             fix="1 tests atomic mutants only, 2 also pairs of attributes (the paper).")
        _at_least_one("limit", self.limit)
        for name in ("pairs_per_attribute", "max_pairs_per_text"):
            _at_least_one(name, getattr(self, name), " (or unset for all pairs)")
        _at_least_one("batch_texts", self.batch_texts)
        _at_least_one("repeats", self.repeats)
        if self.validity not in VALIDITY_MODES:
            raise InputError(f"--validity must be one of {', '.join(VALIDITY_MODES)}, got {self.validity!r}",
                             where="--validity", fix="paper (the default) checks as the paper's algorithms say; "
                             "reference adds the reference tool's preprocessing, to compare with the paper's numbers.")
        if self.window is not None and self.window < 100:
            raise InputError(f"--window must be at least 100 characters, got {self.window}", where="--window",
                             fix="Give about what the model reads, e.g. --window 2000 for a 512-token classifier.")
        from .datasets import BUNDLED
        set_(self, "dataset", _resolved(self.dataset, tuple(BUNDLED)))
        set_(self, "dictionary", _resolved(self.dictionary))
        if self.task is not None and (Path(self.task).suffix.lower() in (".yaml", ".yml", ".json")
                                      or Path(self.task).exists()):
            set_(self, "task", _resolved(self.task))

    def replace(self, **changes: Any) -> "RunConfig":
        return dataclasses.replace(self, **changes)

    def recorded(self) -> dict:
        """The config as the run folder records it (JSON), from which `from_recorded` rebuilds it."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self) if f.compare and (f.name not in RECORDED_ONLY_WHEN_SET or getattr(self, f.name) != f.default)}

    @classmethod
    def from_recorded(cls, d: dict) -> "RunConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: tuple(v) if k in ("attributes", "packs") else v for k, v in d.items() if k in known})

    @classmethod
    def from_legacy_cli(cls, c: dict) -> "RunConfig":
        """A run recorded before RunConfig (settings key "cli")."""
        return cls(attributes=c["attributes"], order=c["order"], dictionary=c["dictionary"],
                   pairs_per_attribute=c["pairs_per_attribute"], max_pairs_per_text=c["max_pairs_per_text"],
                   seed=c["seed"], include_occupational=not c["no_jobs"], query_discarded=c["query_discarded"],
                   dataset=c["dataset"], text_field=c["text_field"], label_field=c["label_field"], limit=c["limit"],
                   skip_bad_rows=c.get("skip_bad_rows", False), model=c["model"], task=c["task"])


# Recorded settings derived from what was loaded, named for people.
DERIVED_NAMES = {"dictionary_fingerprint": "the dictionary's pairs", "dictionary_pairs": "the dictionary's pair count",
                 "texts_fingerprint": "the dataset's texts", "texts": "the number of texts",
                 "model": "the model (its fingerprint)", "parser": "the parser"}


def describe_differences(previous: dict, current: dict, labels: tuple[str, str] = ("before", "now")) -> list[str]:
    """'--attributes: gender,race before, body now' for each recorded setting that differs. Keys "config.X" are
    options; the others are derived from what was loaded, shown only when no option explains the difference.
    `labels` name the two sides (`hinter compare`: 'in runs/a', 'in runs/b')."""
    def show(v):
        return ",".join(map(str, v)) if isinstance(v, list) else "unset" if v is None else str(v)

    was, now = labels
    differ = [k for k in sorted(set(previous) | set(current)) if previous.get(k) != current.get(k)]
    options = [k for k in differ if k.startswith("config.") or k in OPTION_NAMES]
    unset_as = {"validity": "paper"}  # an option recorded only off its default: unrecorded reads as the default
    return [f"{OPTION_NAMES.get(k.removeprefix('config.'), k)}: "
            f"{show(previous.get(k, unset_as.get(k.removeprefix('config.'))))} {was}, "
            f"{show(current.get(k, unset_as.get(k.removeprefix('config.'))))} {now}" for k in options] or \
           [f"{DERIVED_NAMES.get(k, k)}: {show(previous.get(k))} {was}, {show(current.get(k))} {now}" for k in differ]


@dataclass(frozen=True)
class Execution:
    """Where parsing and model calls run: not a setting of the run (the results are the same)."""

    executor: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    concurrency: int | None = None  # API models: requests at once, in all

    def __post_init__(self) -> None:
        _at_least_one("workers", self.workers)
        _at_least_one("concurrency", self.concurrency)

    def make_executor(self):
        from .executor import make_executor
        return make_executor(self.executor, address=self.ray_address, workers=self.workers,
                             cpus_per_worker=self.cpus_per_worker, gpus_per_worker=self.gpus_per_worker)
