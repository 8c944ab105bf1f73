"""`hinter study`: the paper's research questions (RQ1-RQ4) over many models and datasets in one command.

One suite per dataset (mutants and verdicts, validated once: `build_suite`), every model run on it
(`hinter.run(suite=...)`, with --query-discarded so that RQ3 can count the false positives the invariant avoids),
then the tables, each from the runs' own summary.json (and, for grammar and the mutant-level overlap of RQ4, their
stores), beside the paper's numbers with the reason for every difference named. A study folder re-run with the same
settings continues: a suite already built is reused, and each run continues where it stopped.

    DIR/study.json              the plan (models, datasets, options) and the wall time of each step
    DIR/suites/DATASET.suite    one suite per dataset
    DIR/runs/DATASET/MODEL/     one run folder per dataset and model (summary.json, report.html...)
    DIR/rq1.csv ... rq4.csv     the tables; rq1_cells.csv (per attribute and combination), rq1_findings.csv
    DIR/study.html              one page: the tables, the paper's numbers beside them, charts
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from hinter.api import build_suite, run
from hinter.config import MODEL, RunConfig, describe_differences, option_fields
from hinter.errors import InputError
from hinter.files import write_atomic, write_dict_csv
from hinter.analysis.health import model_failure
from hinter.analysis.measures import wilson
from hinter.records import dictionary_replacements
from hinter.store import open_run
from hinter.pipeline.suite import load_suite
from hinter.models.tasks import TASK_REGISTRY
from hinter.validity import grammar

STUDY_FORMAT = 1
# Options a study sets itself: the model and dataset come from its lists; RQ3 needs the discarded mutants' answers.
STUDY_OWNED = ("model", "dataset", "query_discarded")
# Mutants (and originals) scored for grammar per dataset and kind at most: a seeded sample, as the paper sampled.
GRAMMAR_SAMPLE = 500

# The paper's own numbers (HInter, arXiv 2503.11962; MutaInT, the earlier version), as the tables cite them.
PAPER_MODELS = "Llama 2, GPT-3.5 and 16 fine-tuned BERT-family classifiers"
PAPER = {
    # RQ1, Table 9: intersectional error rate per dataset (total over its models) and overall; Fig. 5: atomic
    "error_rate": {
        "intersectional": {"all": 0.1461, "ecthr": 0.1137, "ledgar": 0.0458, "scotus": 0.1060, "eurlex": 0.2166,
                           "imdb": 0.0543},
        "atomic": {"all": 0.0933},
    },
    # IMDB per model (Table 9; the reference repository's llm_original_mutants_testing_stats.csv)
    "imdb_by_model": {"Llama 2": 0.0352, "GPT-3.5": 0.0712},
    # RQ1, Table 9: hidden share of intersectional biases per dataset and overall
    "hidden_rate": {"all": 0.1662, "ecthr": 0.1806, "ledgar": 0.1224, "scotus": 0.1892, "eurlex": 0.1473,
                    "imdb": 0.2813},
    # RQ1, Fig. 4(b) and 5(b): originals with at least one bias
    "originals_with_bias": {"intersectional": 0.3988, "atomic": 0.3843},
    # RQ2 (Fig. 6): weighted mean Grammarly score, intersectional campaign; MutaInT: mutants' score / originals'
    "grammar": {"intersectional": {"originals": 78.73, "valid": 79.50}},
    "grammar_ratio": {"atomic": 0.989, "intersectional": 0.974},
    # RQ3.1: share of mutants discarded; RQ3.2: false positives among all flips, and their ratio to real biases
    "discarded_share": 0.9758,
    "false_positive_share": 0.9071,
    "false_positive_ratio": 7_604_247 / 779_224,
    # RQ3.3: grammar of valid vs discarded mutants
    "grammar_valid_vs_discarded": {"valid": 78.44, "discarded": 73.40},
    # RQ4.1: intersectional biased mutants without an atomic one (16.99%), atomic ones with an intersectional one
    "intersectional_without_atomic": 0.1699,
    "atomic_with_intersectional": 0.8343,
    # RQ4.2: bias-inducing originals: strictly intersectional 5.98-9.71%, strictly atomic 4.64-14.04%, both <= 49.64%
    "originals_intersectional_only": (0.0598, 0.0971),
    "originals_atomic_only": (0.0464, 0.1404),
    "originals_both_max": 0.4964,
    # MutaInT: 12% of inputs expose intersectional bias, 10% of those hidden
    "mutaint_error_rate": 0.121,
    "mutaint_hidden": 0.10,
}


# ---------------------------------------------------------------- the plan

@dataclass(frozen=True)
class StudyPlan:
    """What a study runs: models (specs) x datasets, with the run options applied to every dataset; and models
    run on one dataset alone (`models_by_dataset`: a classifier fine-tuned for it answers in its own labels)."""

    models: tuple[str, ...]
    datasets: tuple[str, ...]
    options: dict = field(default_factory=dict)  # RunConfig fields by name, but for STUDY_OWNED
    models_by_dataset: dict = field(default_factory=dict)  # dataset -> tuple of specs, run after `models`

    def __post_init__(self) -> None:
        if not self.datasets:
            raise InputError("no dataset given", where="--datasets", fix="Name at least one: --datasets imdb ...")
        stray = sorted(set(self.models_by_dataset) - set(self.datasets))
        if stray:
            raise InputError(f"models_by_dataset names {', '.join(stray)}, not among the datasets",
                             where="--study", fix="Add it to datasets:, or remove its models.")
        object.__setattr__(self, "models_by_dataset",
                           {d: tuple(v) for d, v in self.models_by_dataset.items() if v})
        bare = [d for d in self.datasets if not self.models_for(d)]
        if bare:
            raise InputError("no model given" + (f" for {', '.join(bare)}" if self.models_by_dataset else ""),
                             where="--models",
                             fix="Name at least one: --models gguf:default ... (or, in a study file, "
                                 "models_by_dataset: {DATASET: [SPEC]})")
        for kind, items in (("--models", self.models), ("--datasets", self.datasets),
                            *(("models_by_dataset", self.models_for(d)) for d in self.models_by_dataset)):
            repeated = sorted({x for x in items if items.count(x) > 1})
            if repeated:
                raise InputError(f"{', '.join(repeated)} given twice", where=kind, fix="Name each once.")
        names = {f.name for f in option_fields()}
        owned = sorted(set(self.options) & set(STUDY_OWNED))
        if owned:
            raise InputError(f"{', '.join(owned)} cannot be set for a study", where="--study",
                             fix="A study takes its models and datasets from its lists, and always queries the "
                                 "discarded mutants (RQ3).")
        unknown = sorted(set(self.options) - names)
        if unknown:
            raise InputError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}",
                             where="--study", fix=f"The options (hinter run's, by field name): "
                                                  f"{', '.join(sorted(names - set(STUDY_OWNED)))}.")
        # one spelling per value ("race,gender" and [gender, race] are one study), as RunConfig normalises it
        opts = {k: tuple(v) if isinstance(v, list) else v for k, v in self.options.items()}
        normal = RunConfig(**opts)
        object.__setattr__(self, "options", {k: getattr(normal, k) for k in sorted(opts)})
        for d in self.datasets:  # each combination validated now, not after an hour of runs
            self.config(d)

    def models_for(self, dataset: str) -> tuple[str, ...]:
        """The models run on a dataset: every dataset's, then its own."""
        return (*self.models, *self.models_by_dataset.get(dataset, ()))

    def task_of(self, dataset: str) -> str:
        from hinter.datasets import BUNDLED
        if self.options.get("task"):
            return self.options["task"]
        if dataset in BUNDLED and TASK_REGISTRY.find(dataset) is not None:
            return dataset
        raise InputError(f"no task for the dataset {dataset}", where="--task",
                         fix="Give --task (the bundled datasets imdb, ecthr, eurlex, ledgar, scotus have their own).")

    def config(self, dataset: str, model: str | None = None) -> RunConfig:
        return RunConfig(**{**self.options, "dataset": dataset, "model": model, "task": self.task_of(dataset),
                            "query_discarded": True})

    def build_options(self, dataset: str) -> dict:
        """The options of the dataset's suite (all but the model stage's)."""
        config = self.config(dataset)
        return {f.name: getattr(config, f.name) for f in option_fields() if f.metadata["stage"] != MODEL}

    def model_options(self, dataset: str) -> dict:
        config = self.config(dataset)
        return {f.name: getattr(config, f.name) for f in option_fields(MODEL) if f.name != "model"}

    def recorded(self) -> dict:
        recorded = {"models": list(self.models), "datasets": list(self.datasets),
                    "options": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(self.options.items())}}
        if self.models_by_dataset:
            recorded["models_by_dataset"] = {d: list(v) for d, v in self.models_by_dataset.items()}
        return recorded


def read_study_file(path: str | Path) -> dict:
    """A study file (YAML or JSON): `models` and `datasets` (lists), `models_by_dataset` (a list of models per
    dataset, run on it alone), and any run options by field name (`limit: 5`, `attributes: [race, gender]`),
    optionally under `options:`."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no study file {path}", where="--study", fix="Give a YAML file with models: and datasets:.")
    try:
        d = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except yaml.YAMLError as e:
        raise InputError(f"{path} is not valid YAML ({e})", where=f"--study {path}", fix="Fix the file.") from None
    if not isinstance(d, dict):
        raise InputError(f"{path} is not a mapping", where=f"--study {path}",
                         fix="Write models: [...], datasets: [...] and run options as keys.")
    by_dataset = d.pop("models_by_dataset", None) or {}
    out = {"models": d.pop("models", None) or [], "datasets": d.pop("datasets", None) or [],
           "options": {**d.pop("options", {}), **d}}
    if not isinstance(by_dataset, dict):
        raise InputError("models_by_dataset must map each dataset to its models", where=f"--study {path}",
                         fix="models_by_dataset: {imdb: [hf:runs/minilm/imdb]}")
    lists = {**{k: out[k] for k in ("models", "datasets")}, **{f"models_by_dataset.{k}": v for k, v in by_dataset.items()}}
    for key, value in lists.items():
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise InputError(f"{key} must be a list of names", where=f"--study {path}", fix=f"{key}: [a, b]")
        lists[key] = value
    out["models"], out["datasets"] = lists["models"], lists["datasets"]
    out["models_by_dataset"] = {str(k): lists[f"models_by_dataset.{k}"] for k in by_dataset}
    return out


def folder_name(spec: str) -> str:
    """A run folder's name for a model spec: readable, and distinct for distinct specs."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:60] or "model"
    return f"{readable}-{hashlib.sha256(spec.encode()).hexdigest()[:6]}"


# ---------------------------------------------------------------- running

@dataclass
class StudyRuns:
    """Where a study's suites and runs are: runs[(dataset, model)] is a run folder."""

    out: Path
    plan: StudyPlan
    suites: dict[str, Path]
    runs: dict[tuple[str, str], Path]
    seconds: dict[str, float]


def _check_folder(out: Path, plan: StudyPlan) -> dict:
    """The study folder's record; a folder holding another study's plan is refused (its runs would mix)."""
    record = out / "study.json"
    if not record.exists():
        return {}
    previous = json.loads(record.read_text(encoding="utf-8"))
    old, new = previous.get("plan", {}).get("options", {}), plan.recorded()["options"]
    if old != new:
        # a plan's options are those given: one not given is at its default (not a run recorded before it existed)
        given = set(old) | set(new)
        defaults = {f.name: f.default for f in option_fields() if f.name in given}
        differ = describe_differences({f"config.{k}": old.get(k, defaults.get(k)) for k in given},
                                      {f"config.{k}": new.get(k, defaults.get(k)) for k in given}, ("before", "now"))
        raise InputError(f"{out} holds a study with other options ({'; '.join(differ)})", where="--out",
                         fix="Give the same options to continue it, or another --out folder.")
    return previous


def run_study(plan: StudyPlan, out: str | Path, *, parser=None, executor=None,
              say: Callable[[str], None] = lambda line: None,
              progress: Callable[[str, str, str, int, int], None] | None = None,
              suites_only: bool = False) -> StudyRuns:
    """Build (or reuse) each dataset's suite and run (or continue) every model on it; then write the tables
    (`write_tables`). `say` gets a line per step; `progress(dataset, model, stage, done, total)` as runs advance.
    `suites_only`: build the suites and stop (the same command continues elsewhere: spaCy here, a GPU there)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    previous = _check_folder(out, plan)
    seconds: dict[str, float] = dict(previous.get("seconds", {}))
    suites: dict[str, Path] = {}
    runs: dict[tuple[str, str], Path] = {}

    def record() -> None:
        write_atomic(out / "study.json", json.dumps({"format": STUDY_FORMAT, "plan": plan.recorded(),
                                                     "seconds": seconds}, indent=1))

    record()
    for dataset in plan.datasets:
        path = out / "suites" / f"{folder_name(dataset)}.suite"
        wanted = RunConfig(**plan.build_options(dataset))
        if path.exists():
            built = load_suite(path)
            if built.config != wanted:  # the plan's check above covers options; a changed dataset file lands here
                raise InputError(f"the suite {path} was built with other settings", where="--out",
                                 fix="Give another --out folder, or remove the suite to rebuild it.")
            say(f"{dataset}: suite {path} reused ({len(built.records)} texts)")
        else:
            started = time.perf_counter()
            partial = path.with_name(path.name + ".partial")  # a killed build never leaves a suite behind
            partial.parent.mkdir(parents=True, exist_ok=True)
            build_suite(out=partial, parser=parser, executor=executor, **plan.build_options(dataset))
            partial.replace(path)
            seconds[f"suite {dataset}"] = round(time.perf_counter() - started, 2)
            record()
            s = load_suite(path)
            say(f"{dataset}: suite built ({len(s.records)} texts, {sum(map(len, s.mutants.values())):,} mutants), "
                f"{seconds[f'suite {dataset}']:.1f} s")
        suites[dataset] = path
        for model in () if suites_only else plan.models_for(dataset):
            folder = out / "runs" / folder_name(dataset) / folder_name(model)
            started = time.perf_counter()
            report = None if progress is None else (lambda stage, done, total, d=dataset, m=model:
                                                    progress(d, m, stage, done, total))
            run(suite=path, model=model, out=folder, progress=report, executor=executor,
                **plan.model_options(dataset))
            took = round(time.perf_counter() - started, 2)
            key = f"run {dataset} {model}"
            seconds[key] = round(seconds.get(key, 0.0) + took, 2)  # a continued run adds its time
            record()
            say(f"{dataset} / {model}: done, {took:.1f} s")
            runs[(dataset, model)] = folder
    return StudyRuns(out, plan, suites, runs, seconds)


# ---------------------------------------------------------------- the tables

KINDS = ("atomic", "intersectional")


def _ci(x) -> tuple[Any, Any]:
    return (x[0], x[1]) if x else (None, None)


def pct(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


# Why a study's number may differ from the paper's, by the kind of figure
MODEL_REASON = ("another model ({model}; the paper's: " + PAPER_MODELS + ") answering through another prompt and "
                "parser of answers")
CAMPAIGN_REASON = ("the campaign, not the model (the same mutants for every model): the paper mutated every "
                   "occurrence of every dictionary pair in long legal texts, and a change in a long text is discarded "
                   "more often; a study samples texts and pairs (--sample, --max-pairs-per-text) and parses with "
                   "spaCy's en_core_web_sm")


# An interval wider than this (20 percentage points) holding the paper's number is "undecided", not "agrees"
WIDE_INTERVAL = 0.20


def compare_with_paper(ours: float | None, ci, paper: float | None, *, model: str, n: int,
                       what: str = "tested mutants", reason: str = MODEL_REASON) -> str:
    """'agrees' when the paper's value lies in our 95% interval (no wider than WIDE_INTERVAL: else 'undecided'),
    else 'differs', with the reasons named: `reason` (by default the model, never the paper's) and the sample."""
    if paper is None:
        return "the paper gives no number for this cell"
    if ours is None:
        return f"not measured here: no {what}"
    lo, hi = _ci(ci)
    why = reason.format(model=model)
    if lo is not None and lo <= paper <= hi:
        if hi - lo > WIDE_INTERVAL:  # consistent with the paper, and with much else: no agreement to claim
            return (f"undecided: the paper's {pct(paper)} lies in this 95% interval ({pct(lo)}-{pct(hi)}), too wide "
                    f"at {n} {what} to confirm or refute it; {why}")
        return (f"agrees: the paper's {pct(paper)} lies in this 95% interval ({pct(lo)}-{pct(hi)}, {n} {what}), "
                f"though {why}")
    side = "higher" if ours > paper else "lower"
    return (f"differs ({pct(ours)} is {side} than the paper's {pct(paper)}, outside this 95% interval "
            f"{pct(lo)}-{pct(hi)}): {why}; a sample of {n} {what} (the paper: thousands to millions)")


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


def rq1_rows(runs: StudyRuns) -> tuple[list[dict], list[dict], list[dict]]:
    """RQ1: per model, dataset and kind (rq1.csv), per attribute and combination (rq1_cells.csv), and the
    significant findings (rq1_findings.csv), each number as the run's summary.json gives it."""
    main, cells, findings = [], [], []
    for (dataset, model), folder in runs.runs.items():
        s = _summary(folder)
        failed = model_failure(s)  # a run whose model failed is marked, never read as "no bias"
        venn = s["originals_venn"]
        with_valid = s["originals_with_bias"]["of_originals_with_valid_mutants"]
        significant = [f for f in s.get("findings", []) if f.get("significant")]
        for kind in KINDS:
            t = s["totals"][kind]
            texts = venn["both"] + venn["atomic_only" if kind == "atomic" else "intersectional_only"]
            paper = PAPER["error_rate"][kind].get(dataset, PAPER["error_rate"][kind]["all"])
            lo, hi = _ci(t.get("error_rate_ci"))
            main.append({
                "model": model, "dataset": dataset, "kind": kind, "mutants": t["mutants"], "valid": t["valid"],
                "tested": t["tested"], "biased": t["biased"], "error_rate": t["error_rate"],
                "error_rate_ci_low": lo, "error_rate_ci_high": hi,
                "hidden": t.get("hidden", ""), "hidden_rate": t.get("hidden_rate", ""),
                "originals_with_bias": texts, "originals_with_valid_mutants": with_valid,
                "originals_with_bias_rate": texts / with_valid if with_valid else None,
                "significant_findings": sum(f["kind"] == kind for f in significant),
                "failed_share": s["health"]["failed_share"], "model_failed": failed or "",
                "paper_error_rate": paper,
                "paper_source": f"HInter Table 9, {dataset}" if dataset in PAPER["error_rate"][kind]
                else ("HInter RQ1, all datasets" if kind == "intersectional" else "HInter Fig. 5, all models"),
                "difference": (f"not comparable: {failed}" if failed else
                               compare_with_paper(t["error_rate"], t.get("error_rate_ci"), paper, model=model,
                                                  n=t["tested"]))})
            for combo, m in s[kind].items():
                lo, hi = _ci(m.get("error_rate_ci"))
                cells.append({"model": model, "dataset": dataset, "kind": kind, "attributes": combo,
                              "mutants": m["mutants"], "valid": m["valid"], "tested": m["tested"],
                              "biased": m["biased"], "error_rate": m["error_rate"], "error_rate_ci_low": lo,
                              "error_rate_ci_high": hi, "hidden": m.get("hidden", ""),
                              "hidden_rate": m.get("hidden_rate", "")})
        for f in significant:
            findings.append({"model": model, "dataset": dataset, "kind": f["kind"],
                             "cell": " + ".join(f"{c['attribute']}:{c['source_group']}>{c['target_group']}"
                                                for c in f["components"]),
                             "label": f.get("label", s.get("findings_analysis", {}).get("label")),
                             "tested": f["tested"], "flips": f.get("flips"), "effect": f.get("effect"),
                             "q_value": f.get("q_value"), "population_hidden": f.get("population_hidden", False)})
    return main, cells, findings


def _grammar_module():
    """The grammar checker (hinter.validity.grammar with its Harper), or None where this install has none."""
    try:
        import harper  # noqa: F401  (the checker's engine: pip install 'hinter[grammar]')
    except ImportError:
        return None
    return grammar


def weighted_mean(scores: Sequence[float], words: Sequence[int]) -> float | None:
    """The mean score with each text weighted by its words (the paper's "weighted mean score": Grammarly scores a
    document, and a long text weighs as much as its words); None for no text or no words."""
    total = sum(words)
    return sum(s * w for s, w in zip(scores, words)) / total if total else None


def _sample(items: list, n: int, seed: str) -> list:
    if len(items) <= n:
        return items
    return random.Random(seed).sample(items, n)


def grammar_of(folder: Path, sample: int = GRAMMAR_SAMPLE) -> dict | None:
    """Weighted grammar scores of one run's texts, by kind: the originals with a mutant of that kind, its valid
    and its discarded mutants (a seeded sample of each, at most `sample`); None without a grammar checker."""
    g = _grammar_module()
    if g is None:
        return None
    store = open_run(folder)
    try:
        originals = {t.text_id: t.text for t in store.texts()}
        by_kind: dict[str, dict[str, list[str]]] = {k: {"valid": [], "discarded": []} for k in KINDS}
        having: dict[str, set[int]] = {k: set() for k in KINDS}
        for m in store.mutants():
            kind = "atomic" if m.order == 1 else "intersectional"
            by_kind[kind]["valid" if m.valid else "discarded"].append(m.text)
            having[kind].add(m.text_id)
    finally:
        store.close()
    out = {}
    for kind in KINDS:
        groups = {"originals": _sample([originals[i] for i in sorted(having[kind])], sample, f"{kind}:o"),
                  "valid": _sample(by_kind[kind]["valid"], sample, f"{kind}:v"),
                  "discarded": _sample(by_kind[kind]["discarded"], sample, f"{kind}:d")}
        out[kind] = {}
        for group, texts in groups.items():
            scores = list(g.grammar_scores(texts)) if texts else []
            out[kind][group] = {"n": len(texts),
                                "score": weighted_mean(scores, [g.count_words(t) for t in texts])}
    return out


def grammar_in_parallel(folders: list[Path], sample: int = GRAMMAR_SAMPLE) -> list[dict | None]:
    """grammar_of each run folder, a process per folder (at most one per core): the checker lints on one core, and
    on long texts it is most of a study's tables' time (a dataset's mutants share their unchanged sentences with
    its originals, which the checker's cache lints once: so one process per dataset, never one per group)."""
    workers = min(len(folders), os.cpu_count() or 1)
    if workers <= 1 or _grammar_module() is None:
        return [grammar_of(f, sample) for f in folders]
    import multiprocessing

    # spawned, not forked: the parent may hold a model's threads and a CUDA context
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(grammar_of, folders, [sample] * len(folders)))


def rq2_rows(runs: StudyRuns, grammar: dict[str, dict | None]) -> list[dict]:
    """RQ2: per dataset and kind, the weighted grammar score of the originals and of the valid mutants (the
    suite's: the same for every model)."""
    rows = []
    for dataset in runs.plan.datasets:
        g = grammar.get(dataset)
        for kind in KINDS:
            cell = (g or {}).get(kind, {})
            o, v = cell.get("originals", {}), cell.get("valid", {})
            ratio = v["score"] / o["score"] if o.get("score") and v.get("score") is not None else None
            paper = PAPER["grammar"].get(kind, {})
            rows.append({
                "dataset": dataset, "kind": kind, "originals": o.get("n"), "valid_mutants": v.get("n"),
                "grammar_originals": o.get("score"), "grammar_valid_mutants": v.get("score"),
                "grammar_ratio": ratio, "paper_grammar_originals": paper.get("originals"),
                "paper_grammar_valid_mutants": paper.get("valid"),
                "paper_grammar_ratio": PAPER["grammar_ratio"][kind],
                "difference": grammar_difference(ratio, PAPER["grammar_ratio"][kind], g is not None,
                                                 v.get("n") or 0)})
    return rows


def grammar_difference(ratio: float | None, paper_ratio: float, available: bool, n: int) -> str:
    if not available:
        return "not measured: no grammar checker installed (pip install 'hinter[grammar]')"
    if ratio is None:
        return "not measured: no valid mutant"
    gap = ratio - paper_ratio
    return (f"{'agrees' if abs(gap) < 0.02 else 'differs'}: mutants score {100 * ratio:.1f}% of the originals' here, "
            f"{100 * paper_ratio:.1f}% in MutaInT; another checker (offline, not Grammarly: its scores are on "
            f"another scale, so only the ratio compares), {n} valid mutants scored")


def rq3_rows(runs: StudyRuns, grammar: dict[str, dict | None]) -> list[dict]:
    """RQ3: the discarded share, the false positives avoided (flips among the discarded mutants, which the study
    queries), and the grammar of valid against discarded mutants."""
    rows = []
    for (dataset, model), folder in runs.runs.items():
        s = _summary(folder)
        fp = s.get("false_positives_avoided", {})
        g = grammar.get(dataset)
        for kind in KINDS:
            t = s["totals"][kind]
            f = fp.get(kind, {})
            fake, real = f.get("discarded_biased", 0), f.get("valid_biased", t["biased"])
            share = fake / (fake + real) if fake + real else None
            cell = (g or {}).get(kind, {})
            lo, hi = _ci(t.get("discarded_share_ci"))
            rows.append({
                "model": model, "dataset": dataset, "kind": kind, "mutants": t["mutants"],
                "discarded": t["discarded"], "discarded_share": t["discarded_share"],
                "discarded_share_ci_low": lo, "discarded_share_ci_high": hi,
                "discarded_tested": f.get("discarded_tested", t.get("discarded_tested")),
                "false_positives_avoided": fake, "valid_biased": real, "false_positive_share": share,
                "ratio_to_valid_biases": f.get("ratio_to_valid_biases"),
                "grammar_valid_mutants": cell.get("valid", {}).get("score"),
                "grammar_discarded_mutants": cell.get("discarded", {}).get("score"),
                "paper_discarded_share": PAPER["discarded_share"],
                "paper_false_positive_share": PAPER["false_positive_share"],
                "paper_grammar_valid": PAPER["grammar_valid_vs_discarded"]["valid"],
                "paper_grammar_discarded": PAPER["grammar_valid_vs_discarded"]["discarded"],
                "difference": "discarded share " + compare_with_paper(
                    t["discarded_share"], t.get("discarded_share_ci"), PAPER["discarded_share"], model=model,
                    n=t["mutants"], what="mutants", reason=CAMPAIGN_REASON) + "; false positives " + compare_with_paper(
                    share, wilson(fake, fake + real), PAPER["false_positive_share"], model=model, n=fake + real,
                    what="flips",
                    reason="the share follows the discarded share above and how readily the model flips: "
                    + MODEL_REASON)})
    return rows


def _mutant_overlap(folder: Path) -> tuple[int, int, int, int]:
    """(atomic biased mutants, of which with an intersectional biased mutant of the same text holding their
    replacement; intersectional biased mutants, of which with no biased atomic mutant among their parts)."""
    store = open_run(folder)
    try:
        atomic, inter = [], []
        for m in store.biased_mutants():
            if not m.valid or not m.bias:
                continue
            reps = frozenset(dictionary_replacements(m.replacements))
            (atomic if m.order == 1 else inter).append((m.text_id, reps))
    finally:
        store.close()
    # an atomic mutant's replacements (one pair, with the pronouns a name pack moves along) are "held" by an
    # intersectional mutant of the same text whose replacements include them all
    inter_by_text: dict[int, list[frozenset]] = {}
    for t, reps in inter:
        inter_by_text.setdefault(t, []).append(reps)
    atomic_by_text: dict[int, list[frozenset]] = {}
    for t, reps in atomic:
        atomic_by_text.setdefault(t, []).append(reps)
    with_inter = sum(any(r <= big for big in inter_by_text.get(t, ())) for t, r in atomic)
    without_atomic = sum(not any(small <= reps for small in atomic_by_text.get(t, ())) for t, reps in inter)
    return len(atomic), with_inter, len(inter), without_atomic


def rq4_rows(runs: StudyRuns) -> list[dict]:
    """RQ4: the originals atomic and intersectional testing each find (their overlap), the mutant-level overlap,
    and the hidden and population-hidden rates."""
    rows = []
    for (dataset, model), folder in runs.runs.items():
        s = _summary(folder)
        venn, inter = s["originals_venn"], s["totals"]["intersectional"]
        found = sum(venn.values())
        atomic_n, atomic_with, inter_n, inter_without = _mutant_overlap(folder)
        cells = [f for f in s.get("findings", []) if f["kind"] == "intersectional"]
        lo, hi = _ci(inter.get("hidden_rate_ci"))
        paper_hidden = PAPER["hidden_rate"].get(dataset, PAPER["hidden_rate"]["all"])
        rows.append({
            "model": model, "dataset": dataset,
            "originals_with_bias": found, "originals_atomic_only": venn["atomic_only"],
            "originals_both": venn["both"], "originals_intersectional_only": venn["intersectional_only"],
            "share_atomic_only": venn["atomic_only"] / found if found else None,
            "share_both": venn["both"] / found if found else None,
            "share_intersectional_only": venn["intersectional_only"] / found if found else None,
            "atomic_biased_mutants": atomic_n, "atomic_with_intersectional": atomic_with,
            "atomic_with_intersectional_share": atomic_with / atomic_n if atomic_n else None,
            "intersectional_biased": inter["biased"], "hidden": inter.get("hidden"),
            "hidden_rate": inter.get("hidden_rate"), "hidden_rate_ci_low": lo, "hidden_rate_ci_high": hi,
            "intersectional_without_atomic": inter_without,
            "population_hidden": s.get("population_hidden", 0), "intersectional_cells": len(cells),
            "population_hidden_rate": s.get("population_hidden", 0) / len(cells) if cells else None,
            "paper_hidden_rate": paper_hidden,
            "paper_atomic_with_intersectional": PAPER["atomic_with_intersectional"],
            "paper_share_intersectional_only": "5.98%-9.71%", "paper_share_atomic_only": "4.64%-14.04%",
            "difference": "hidden rate " + compare_with_paper(inter.get("hidden_rate"), inter.get("hidden_rate_ci"),
                                                              paper_hidden, model=model, n=inter["biased"],
                                                              what="intersectional biases")})
    return rows


def _write_csv(path: Path, rows: list[dict], columns: Sequence[str] | None = None) -> Path:
    columns = list(columns or (rows[0].keys() if rows else []))
    return write_dict_csv(path, columns, rows)


RQ2_COLUMNS = ("dataset", "kind", "originals", "valid_mutants", "grammar_originals", "grammar_valid_mutants",
               "grammar_ratio", "paper_grammar_originals", "paper_grammar_valid_mutants", "paper_grammar_ratio",
               "difference")


def write_tables(runs: StudyRuns, *, grammar_sample: int = GRAMMAR_SAMPLE) -> dict:
    """rq1.csv .. rq4.csv (with rq1_cells.csv and rq1_findings.csv) and study.html in the study folder; returns
    the tables by name."""
    out = runs.out
    first_run = {d: runs.runs[(d, runs.plan.models_for(d)[0])] for d in runs.plan.datasets}
    # the mutants are the suite's, the same in every run of a dataset: scored once, from its first model's run
    grammar = dict(zip(first_run, grammar_in_parallel(list(first_run.values()), grammar_sample)))
    rq1, cells, findings = rq1_rows(runs)
    tables = {"rq1": rq1, "rq1_cells": cells, "rq1_findings": findings, "rq2": rq2_rows(runs, grammar),
              "rq3": rq3_rows(runs, grammar), "rq4": rq4_rows(runs)}
    empty_columns = {"rq1_findings": ("model", "dataset", "kind", "cell", "label", "tested", "flips", "effect",
                                      "q_value", "population_hidden"), "rq2": RQ2_COLUMNS}
    for name, rows in tables.items():
        _write_csv(out / f"{name}.csv", rows, empty_columns.get(name) if name in empty_columns else None)
    headline = headline_rows(tables)
    _write_csv(out / "paper.csv", headline)
    from hinter.report.html import render_study
    summaries = {key: _summary(folder) for key, folder in runs.runs.items()}
    html = render_study(tables=tables, headline=headline, summaries=summaries, plan=runs.plan.recorded(),
                        seconds=runs.seconds, grammar_available=_grammar_module() is not None)
    write_atomic(out / "study.html", html)
    return tables


def _pooled(rows: list[dict], k: str, n: str) -> tuple[float | None, int, Any]:
    hits, total = sum(r[k] or 0 for r in rows), sum(r[n] or 0 for r in rows)
    return (hits / total if total else None), total, wilson(hits, total)


def headline_rows(tables: dict) -> list[dict]:
    """The paper's headline figures beside the study's, pooled over its models and datasets (paper.csv)."""
    rows = []
    models = ", ".join(sorted({r["model"] for r in tables["rq1"]}))

    def add(what, ours, ci, paper, n, unit, source, reason=MODEL_REASON):
        rows.append({"figure": what, "study": ours, "study_ci_low": _ci(ci)[0], "study_ci_high": _ci(ci)[1],
                     "n": n, "paper": paper, "source": source,
                     "difference": compare_with_paper(ours, ci, paper, model=models, n=n, what=unit, reason=reason)})

    for kind, paper, source in (("intersectional", PAPER["error_rate"]["intersectional"]["all"], "HInter RQ1"),
                                ("atomic", PAPER["error_rate"]["atomic"]["all"], "HInter RQ1, Fig. 5")):
        kr = [r for r in tables["rq1"] if r["kind"] == kind]
        ours, n, ci = _pooled(kr, "biased", "tested")
        add(f"{kind} error rate", ours, ci, paper, n, "tested mutants", source)
    r4 = tables["rq4"]
    ours, n, ci = _pooled(r4, "hidden", "intersectional_biased")
    add("hidden share of intersectional biases", ours, ci, PAPER["hidden_rate"]["all"], n, "intersectional biases",
        "HInter RQ1, Table 9")
    ours, n, ci = _pooled(r4, "atomic_with_intersectional", "atomic_biased_mutants")
    add("atomic biases with an intersectional one", ours, ci, PAPER["atomic_with_intersectional"], n,
        "atomic biases", "HInter RQ4.1")
    r3 = tables["rq3"]
    first = {}  # the discarded share is the suite's, the same for every model: each dataset counted once
    for r in r3:
        first.setdefault((r["dataset"], r["kind"]), r)
    ours, n, ci = _pooled(list(first.values()), "discarded", "mutants")
    add("discarded share", ours, ci, PAPER["discarded_share"], n, "mutants", "HInter RQ3.1", CAMPAIGN_REASON)
    fake = sum(r["false_positives_avoided"] or 0 for r in r3)
    real = sum(r["valid_biased"] or 0 for r in r3)
    add("false positives among all flips", fake / (fake + real) if fake + real else None, wilson(fake, fake + real),
        PAPER["false_positive_share"], fake + real, "flips", "HInter RQ3.2",
        "the share follows the discarded share and how readily the model flips: " + MODEL_REASON)
    return rows
