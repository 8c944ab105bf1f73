"""Several runs of the same mutants side by side (`hinter compare`): one column per model.

Runs compare only when they tested the same mutants: the same recorded settings except the model (as `resume`
compares them: `recorded.comparable`), and then, mutant by mutant, the same keys and validity verdicts (runs of
one suite, or finished runs of one campaign). Anything else is refused, naming what differs, so that every
number of a row rests on the same texts. Per combination of attributes: each run's error rate with its Wilson
interval and hidden count (from its summary.json), its significant findings, and the **disagreements**: valid
mutants that one model tested as a bias and another tested as no bias (a model that did not test the mutant,
unparseable or unseen, takes no side).
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from hinter.config import describe_differences
from hinter.errors import InputError
from hinter.analysis.measures import summary
from hinter.pipeline.recorded_settings import comparable, config_of
from hinter.records import edits
from hinter.store.rows import ComparedMutant
from hinter.store import RunStore
from hinter.report.change import accuracy, change
from hinter.report.instances import shown_id

# Recorded settings that may differ between compared runs: the model under test (spec and fingerprint).
MODEL_KEYS = ("model", "config.model")
RATE_KEYS = ("valid", "tested", "biased", "error_rate", "error_rate_ci", "unparseable", "hidden", "hidden_rate",
             "hidden_rate_ci")


# Paths compared by what they hold: a dataset or dictionary copied to another path is the same one when its
# texts' (pairs') fingerprint is (as `hinter diff` compares them). A run recorded without the fingerprint keeps
# the path.
BY_CONTENT = {"config.dataset": "texts_fingerprint", "config.dictionary": "dictionary_fingerprint",
              "dictionary": "dictionary_fingerprint"}


def _run_settings(settings: dict) -> dict:
    flat = comparable(settings)
    return {k: v for k, v in flat.items()
            if k not in MODEL_KEYS and not (k in BY_CONTENT and flat.get(BY_CONTENT[k]) is not None)}


def model_name(settings: dict) -> str:
    """The model as the user named it (--model), else its fingerprint (a Python API run)."""
    config = config_of(settings)
    return (config.model if config is not None else None) or str(settings.get("model"))


def check_settings(settings: list[dict], names: list[str]) -> None:
    """InputError naming every setting (other than the model) in which a run differs from the first."""
    first = _run_settings(settings[0])
    problems = []
    for s, name in zip(settings[1:], names[1:]):
        differ = describe_differences(first, _run_settings(s), (f"in {names[0]}", f"in {name}"))
        problems += differ
    if problems:
        raise InputError("the runs were not made with the same settings (only the model may differ): "
                         + "; ".join(problems), where=names[0],
                         fix="Compare runs of one suite (`hinter suite build`, then `hinter run --suite`), or runs of "
                             "the same command with another --model.")


def _key_text(m: ComparedMutant) -> str:
    return f"text {m.text_id}, {m.pair_key}"


def check_mutants(runs: list[dict[tuple[int, str], ComparedMutant]], names: list[str],
                  progress: list[tuple[int, int]]) -> None:
    """InputError when a run's mutants (keys or validity verdicts) differ from the first run's."""
    first = runs[0]
    problems = []
    for run, name, (done, total) in zip(runs[1:], names[1:], progress[1:]):
        only_a = [first[k] for k in first.keys() - run.keys()]
        only_b = [run[k] for k in run.keys() - first.keys()]
        other = [first[k] for k in first.keys() & run.keys() if first[k].valid != run[k].valid]
        if not (only_a or only_b or other):
            continue
        parts = []
        for found, what in ((only_a, f"only in {names[0]}"), (only_b, f"only in {name}"),
                            (other, "valid in one run and discarded in the other")):
            if found:
                eg = min(found, key=lambda m: (m.text_id, m.order, m.pair_key))
                parts.append(f"{len(found)} mutants {what} (e.g. {_key_text(eg)})")
        problems.append(f"{name}'s mutants differ from {names[0]}'s: " + ", ".join(parts))
    if problems:
        unfinished = [f"{n} has {d} of {t} texts" for n, (d, t) in zip(names, progress) if d < t]
        raise InputError("; ".join(problems) + (f" ({'; '.join(unfinished)}: unfinished)" if unfinished else ""),
                         where=names[0],
                         fix=("Finish each run first (`hinter resume FOLDER`). " if unfinished else "")
                         + "Compare runs of one suite, or of the same settings, dataset, dictionary and parser.")


def _cell(f: dict) -> tuple:
    """A finding's key: its kind, components and (multi-label analyses) label, "" for the one label of interest."""
    return (f["kind"], tuple((c["attribute"], c["source_group"], c["target_group"]) for c in f["components"]),
            f.get("label") or "")


def _findings(summaries: list[dict]) -> list[dict]:
    """The cells significant (or population-hidden) in at least one run, each with every run's estimate."""
    per_run = [{_cell(f): f for f in s.get("findings") or []} for s in summaries]
    cells = sorted({c for run in per_run for c, f in run.items() if f.get("significant") or f.get("population_hidden")})
    out = []
    for kind, comps, label in cells:
        out.append({"kind": kind, "cell": " & ".join(f"{a}: {s} -> {t}" for a, s, t in comps)
                    + (f" [{label}]" if label else ""),
                    "runs": [None if (f := run.get((kind, comps, label))) is None else
                             {k: f.get(k) for k in ("tested", "texts", "flips", "toward", "effect", "effect_ci",
                                                    "q_value", "significant", "population_hidden")}
                             for run in per_run]})
    return out


def _verdict(m: ComparedMutant) -> str:
    return "bias" if m.bias else "no bias" if m.bias is False else "not tested"


def compare(stores: list[RunStore], names: list[str], summaries: list[dict]) -> dict:
    """The comparison of runs (at least two) whose stores, names and summaries are given in the same order.
    InputError when the runs did not test the same mutants."""
    if len(stores) < 2:
        raise InputError("give at least two runs to compare", fix="hinter compare RUN_A RUN_B [RUN...]")
    if len(set(names)) < len(names):
        raise InputError("a run is given twice", where=", ".join(names), fix="Give each run folder once.")
    settings = [st.settings() for st in stores]
    check_settings(settings, names)
    runs = [{(m.text_id, m.pair_key): m for m in st.compared_mutants()} for st in stores]
    progress = [(s["health"]["texts_done"], s["health"]["texts_total"]) if "health" in s else (0, 0)
                for s in summaries]
    check_mutants(runs, names, progress)

    combos: dict[str, dict] = {}
    for kind in ("atomic", "intersectional"):
        for combo in sorted(set().union(*(s.get(kind, {}) for s in summaries)),
                            key=lambda c: (summaries[0].get(kind, {}).get(c, {}).get("order", 0), c)):
            combos[combo] = {"kind": kind, "runs": [{k: s.get(kind, {}).get(combo, {}).get(k) for k in RATE_KEYS}
                                                     for s in summaries]}
    totals = {kind: [{k: s["totals"][kind].get(k) for k in RATE_KEYS} for s in summaries]
              for kind in ("atomic", "intersectional")}

    originals = {t.text_id: t for t in stores[0].texts()}
    disagreements, by_combo = [], defaultdict(int)
    all_tested = 0
    for key, m in runs[0].items():  # by text, order and mutant
        row = [run[key] for run in runs]
        if not m.valid:
            continue
        verdicts = {r.bias for r in row}
        all_tested += None not in verdicts
        if not {True, False} <= verdicts:
            continue
        by_combo[m.attributes] += 1
        full = stores[0].component(*key)  # the mutant with its text and replacements
        o = originals[m.text_id]
        disagreements.append({
            "text_id": m.text_id, "source_id": shown_id(o), "order": m.order, "attributes": m.attributes,
            "pair_key": m.pair_key, "replacements": "; ".join(r.describe() for r in full.replacements),
            "original_text": o.text, "mutant_text": full.text,
            "edits": [list(e) for e in sorted(edits(full.replacements))],
            "runs": [{"original_outcome": r.base_outcome, "outcome": r.outcome, "verdict": _verdict(r),
                      "hidden": r.hidden} for r in row]})
    valid = sum(m.valid for m in runs[0].values())
    accuracies = [accuracy(st.texts()) for st in stores]
    return {
        "runs": [{"name": n, "model": model_name(s), "fingerprint": s.get("model"),
                  "significant_findings": su.get("significant_findings"),
                  "population_hidden": su.get("population_hidden"),
                  "complete": su.get("health", {}).get("complete"), "accuracy": acc}
                 for n, s, su, acc in zip(names, settings, summaries, accuracies)],
        # what each run changed against the first (a fix against its baseline), in words
        "changes": [change(summaries[0].get("findings"), su.get("findings"), accuracies[0], acc)
                    for su, acc in zip(summaries[1:], accuracies[1:])],
        "settings": {k: v for k, v in settings[0].items() if k not in MODEL_KEYS and not k.startswith("checks.")},
        "texts": summaries[0].get("texts"), "mutants": len(runs[0]), "valid": valid, "tested_by_all": all_tested,
        "combinations": combos, "totals": totals, "findings": _findings(summaries),
        "disagreements": {"count": len(disagreements), "by_combination": dict(sorted(by_combo.items())),
                          "instances": disagreements},
    }


def load_summary(folder: Path, store: RunStore) -> dict:
    """The run's summary.json, or the summary computed from its store when the run wrote none (interrupted)."""
    path = Path(folder) / "summary.json"
    if path.is_file():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            pass  # a file cut short: the store has everything
    return summary(store)
