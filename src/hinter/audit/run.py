"""`hinter.audit(...)` and `hinter audit`: read the texts, render each in every category, ask the model, and write
DIR/audit.json, DIR/audit.csv, DIR/renderings.csv and DIR/audit.html with the manifest."""
from __future__ import annotations

import csv
import datetime
import hashlib
import json
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ..datasets import BUNDLED, bundled_path, load_dataset
from ..errors import InputError
from ..models import ModelSpec, OutcomeCache, resolve_model
from ..records import Outcome, TextRecord, text_key
from ..store import RunStore
from ..tasks import get_task, is_generative
from ..validity import SpacyParser, Validator
from ..version import __version__
from .categories import Categories, load_categories
from .page import render_page
from .render import NOT_RENDERED_REASONS, RenderedText, render_texts
from .tables import BOOTSTRAP, PERMUTATIONS, counterfactual_tables, observed_tables


def ask(model, texts: Sequence[str], store: RunStore | None = None) -> list[Outcome]:
    """The model's outcome for each text, through hinter's outcome cache (each distinct text asked once, failed
    batches retried, then recorded as errors). The one place the audit asks a model. `store`: answers kept under
    the model's fingerprint, so that a rerun asks only what it has not stored (a changed model asks again)."""
    cache = OutcomeCache(model, store)
    answers = cache.predict(list(texts))
    return [answers[text_key(t)] for t in texts]


def favourable_of(outcome: Outcome, favourable: str) -> bool | None:
    """Whether an outcome is the favourable one; None where the model gave no usable answer."""
    if outcome.error or outcome.value is None:
        return None
    if isinstance(outcome.value, frozenset):
        return favourable in outcome.value
    return outcome.value == favourable


def _sha256_file(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _task_hashes(task) -> dict:
    if task is None:
        return {"task": None, "prompt": None}
    settings = asdict(task) if is_dataclass(task) else repr(task)
    text = json.dumps(settings, sort_keys=True, default=str)
    prompt = task.completion_prompt("{text}") if hasattr(task, "completion_prompt") else ""
    return {"task": hashlib.sha256(text.encode()).hexdigest(), "prompt": hashlib.sha256(prompt.encode()).hexdigest()}


def _check_favourable(task, model, favourable: str) -> None:
    labels = list(task.labels) if task is not None and not is_generative(task) else list(
        getattr(model, "labels", None) or [])
    if labels and favourable not in labels:
        raise InputError(f"the favourable label {favourable!r} is not a label of the task",
                         where="--favourable", fix=f"Choose one of: {', '.join(labels)}.")


def audit(dataset, model, *, task=None, favourable: str, out: str | Path, categories: str | Path | None = None,
          text_field: str = "text", label_field: str | None = "label", id_field: str = "id", limit: int | None = None,
          seed: int = 0, bootstrap: int = BOOTSTRAP, permutations: int = PERMUTATIONS, parser=None,
          tagger=None) -> dict:
    """Audit `model` on `dataset` (a path, a bundled dataset's name, or a list of texts / TextRecords): every text
    that describes a person rendered in every sex x race/ethnicity category of `categories` (default: the EEO-1
    file), the model asked about each rendering and each original, and the tables written into `out`
    (audit.json, audit.csv, renderings.csv, audit.html; outcomes.sqlite keeps the answers for a rerun). Returns
    audit.json's content."""
    cats = load_categories(categories)
    if isinstance(dataset, (str, Path)):
        records = load_dataset(dataset, text_field=text_field, label_field=label_field, id_field=id_field,
                               limit=limit)
        data_source = str(dataset)
        data_file = bundled_path(str(dataset)) if str(dataset) in BUNDLED else Path(dataset)
    else:
        records = [r if isinstance(r, TextRecord) else TextRecord(str(r)) for r in dataset][:limit]
        data_source, data_file = "texts given in Python", None
    task_obj = get_task(task) if task is not None else None
    if is_generative(task_obj):
        raise InputError("the audit reads a label task's outcomes; a free-text task has no favourable label yet",
                         where="--task", fix="Audit a label task (e.g. imdb), or a python: model that returns labels.")
    m = ModelSpec(model, task_obj).load() if isinstance(model, str) else resolve_model(model)
    _check_favourable(task_obj, m, favourable)

    own_parser = parser is None
    parser = parser or SpacyParser()
    try:
        rendered = render_texts(records, cats, Validator(parser).reasons, tagger)
    finally:
        if own_parser:
            parser.close()
    usable = [t for t in rendered if t.renderings]
    if not usable:
        counts = _reasons(rendered)
        raise InputError("no text describes a person the audit can render (" + ", ".join(
            f"{n} {r}" for r, n in counts.items() if n) + ")", where=f"--dataset {data_source}",
            fix="Give texts that name a person with a noun of the category file (man, woman, actor, mother...), "
                "of one sex per text.")
    texts = [t.text for t in rendered] + [r for t in usable for r in t.renderings.values()]
    store = RunStore(Path(out) / "outcomes.sqlite")
    try:
        answers = dict(zip(texts, ask(m, texts, store)))
    finally:
        store.close()
    result = tables_of(rendered, answers, cats, favourable, seed=seed, bootstrap=bootstrap,
                       permutations=permutations)
    result["manifest"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hinter_version": __version__,
        "data_source": data_source,
        "dataset_sha256": _sha256_file(data_file) if data_file is not None else hashlib.sha256(
            "\n".join(r.text for r in records).encode()).hexdigest(),
        "categories_file": cats.source, "categories_sha256": cats.sha256,
        **{f"{k}_sha256": v for k, v in _task_hashes(task_obj).items()},
        "task": getattr(task_obj, "name", None), "favourable": favourable,
        "model": m.fingerprint, "seed": seed, "bootstrap": bootstrap, "permutations": permutations,
        "parser": getattr(parser, "fingerprint", type(parser).__name__),
    }
    write_outputs(Path(out), result, rendered, answers, favourable, cats)
    return result


def _reasons(rendered: Sequence[RenderedText]) -> dict[str, int]:
    counts = {r: 0 for r in NOT_RENDERED_REASONS}
    for t in rendered:
        if t.reason is not None:
            counts[t.reason.split(" (")[0]] += 1
    return counts


def tables_of(rendered: Sequence[RenderedText], answers: dict[str, Outcome], cats: Categories, favourable: str, *,
              seed: int = 0, bootstrap: int = BOOTSTRAP, permutations: int = PERMUTATIONS) -> dict:
    """audit.json's content (less the manifest) from the rendered texts and the model's answers."""
    sexes, races = [s.name for s in cats.sexes], [r.name for r in cats.races]
    cells = cats.cells
    complete, unparseable = [], 0
    for t in rendered:
        if not t.renderings:
            continue
        sel = [favourable_of(answers[t.renderings[c]], favourable) for c in cells]
        if any(v is None for v in sel):  # a text stays only with every category answered: the design is paired
            unparseable += 1
            continue
        complete.append((t, sel))
    y = np.array([sel for _, sel in complete], dtype=float).reshape(len(complete), len(sexes), len(races))
    tables = counterfactual_tables(y, sexes, races, seed=seed, draws=bootstrap, permutations=permutations) \
        if complete else {}
    obs = [(t, favourable_of(answers[t.text], favourable)) for t in rendered]
    obs_known = [(t, v) for t, v in obs if v is not None]
    observed, observed_unknown = observed_tables([t.observed_sex for t, _ in obs_known],
                                                 [t.observed_race for t, _ in obs_known],
                                                 [v for _, v in obs_known], sexes, races, seed=seed, draws=bootstrap)
    result = {
        "favourable": favourable,
        "counts": {"texts": len(rendered), "rendered": len(complete),
                   "not_rendered": {**_reasons(rendered), "unparseable answer": unparseable},
                   "renderings": len(complete) * len(cells)},
        "unknown": sum(1 for t in rendered if not t.renderings) + unparseable,
        "tables": {k: [r.to_json() for r in rows] for k, rows in tables.items()},
        "excluded": [{"table": k, "category": r.category, "reason": r.excluded}
                     for k, rows in tables.items() for r in rows if r.excluded],
        "observed": {"tables": {k: [r.to_json() for r in rows] for k, rows in observed.items()},
                     "unknown": observed_unknown, "unparseable": len(obs) - len(obs_known),
                     "excluded": [{"table": k, "category": r.category, "reason": r.excluded}
                                  for k, rows in observed.items() for r in rows if r.excluded]},
        "twins": _twins(complete, tables, cells, answers),
    }
    scores = [[answers[t.renderings[c]].score(favourable) for c in cells] for t, _ in complete]
    if complete and all(s is not None for row in scores for s in row):
        # a scored model: the scoring rate (above the sample's median score) and its ratios, LL144's second table
        z = np.array(scores, dtype=float)
        above = (z > np.median(z)).astype(float).reshape(y.shape)
        scored = counterfactual_tables(above, sexes, races, seed=seed, draws=bootstrap, permutations=permutations)
        result["scoring"] = {"median": round(float(np.median(z)), 6),
                             "tables": {k: [r.to_json() for r in rows] for k, rows in scored.items()}}
    return result


def _twins(complete, tables, cells, answers, per_cell: int = 3) -> list[dict]:
    """For each intersectional cell under four-fifths, a few texts whose rendering in that cell lost the favourable
    outcome that the reference cell's rendering got: the same application, two categories, two outcomes."""
    rows = tables.get("intersectional", [])
    ref = next((r for r in rows if r.impact_ratio == 1.0), None)  # the most selected (the first on a tie)
    if ref is None:
        return []
    k_ref = cells.index((ref.sex, ref.race))
    out = []
    for row in rows:
        if not row.four_fifths:
            continue
        k = cells.index((row.sex, row.race))
        shown = 0
        for t, sel in complete:
            if sel[k_ref] and not sel[k] and shown < per_cell:
                a, b = t.renderings[cells[k_ref]], t.renderings[cells[k]]
                out.append({"category": row.category, "reference": ref.category, "text_index": t.index,
                            "source_id": t.source_id, "reference_text": a, "text": b,
                            "reference_outcome": answers[a].encode(), "outcome": answers[b].encode()})
                shown += 1
    return out


CSV_FIELDS = ("design", "table", "category", "sex", "race", "n", "selected", "rate", "rate_ci_low", "rate_ci_high",
              "impact_ratio", "impact_ratio_ci_low", "impact_ratio_ci_high", "p_value", "four_fifths", "excluded")


def _csv_rows(design: str, tables: dict) -> list[dict]:
    out = []
    for name, rows in tables.items():
        for r in rows:
            rc, ic = r["rate_ci"] or (None, None), r["impact_ratio_ci"] or (None, None)
            out.append({"design": design, "table": name, "category": r["category"], "sex": r.get("sex"),
                        "race": r.get("race"), "n": r["n"], "selected": r["selected"], "rate": r["rate"],
                        "rate_ci_low": rc[0], "rate_ci_high": rc[1], "impact_ratio": r["impact_ratio"],
                        "impact_ratio_ci_low": ic[0], "impact_ratio_ci_high": ic[1], "p_value": r["p_value"],
                        "four_fifths": r["four_fifths"], "excluded": r["excluded"]})
    return out


def write_outputs(out: Path, result: dict, rendered, answers, favourable: str, cats: Categories) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "audit.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    rows = _csv_rows("counterfactual", result["tables"]) + _csv_rows("observed", result["observed"]["tables"])
    if "scoring" in result:
        rows += _csv_rows("scoring", result["scoring"]["tables"])
    with open(out / "audit.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, CSV_FIELDS)
        w.writeheader()
        w.writerows(rows)
    # one row per rendering (and per original): what the tables count, for a reader to recount them
    with open(out / "renderings.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text_index", "source_id", "kind", "sex", "race", "outcome", "favourable", "text"])
        for t in rendered:
            a = answers.get(t.text)
            w.writerow([t.index, t.source_id, "original", t.observed_sex or "unknown", t.observed_race or "unknown",
                        a.encode() if a else None, favourable_of(a, favourable) if a else None, t.text])
            for (sex, race), text in t.renderings.items():
                a = answers[text]
                w.writerow([t.index, t.source_id, "rendering", sex, race, a.encode(), favourable_of(a, favourable),
                            text])
    (out / "audit.html").write_text(render_page(result, cats), encoding="utf-8")
