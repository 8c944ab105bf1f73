"""`hinter.audit(...)` and `hinter audit`: read the texts, render each in every category, ask the model, and write
DIR/audit.json, DIR/audit.csv, DIR/renderings.csv and DIR/audit.html with the manifest."""
from __future__ import annotations

import datetime
import hashlib
import json
import logging
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from hinter.campaign import Campaign, input_notes, read_texts
from hinter.config import Execution, RunConfig
from hinter.datasets import BUNDLED, bundled_path
from hinter.errors import InputError
from hinter.files import csv_text, json_text, storage_errors, write_set
from hinter.generative.aspects import refusal
from hinter.generative.judge_aspect import RUBRIC, judge_settings
from hinter.generative.masking import IdentityTerms
from hinter.languages import get_language
from hinter.records import Outcome, TextRecord
from hinter.models.tasks import get_task, is_generative
from hinter.validity import SpacyParser, Validator
from hinter.version import __version__
from hinter.audit.categories import Categories, load_categories
from hinter.audit.page import render_page
from hinter.audit.render import NOT_RENDERED_REASONS, RenderedText, render_texts
from hinter.audit.summary import TEST_DATA, AuditSummary, summary_section
from hinter.audit.tables import BOOTSTRAP, PERMUTATIONS, counterfactual_tables, observed_tables

log = logging.getLogger("hinter")


@dataclass(frozen=True)
class Verdict:
    """What the tables read of one text's answers: selected (None: no usable answer), what is shown of the
    answer, the favourable label's score (None: no scores), and for a free-text task the share of its samples
    judged favourable."""

    selected: bool | None
    shown: str | None
    score: float | None = None
    share: float | None = None


GENERATIVE_MEASURES = ("judge", "not-refused")


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
    labels = list(task.labels) if task is not None else list(getattr(model, "labels", None) or [])
    if labels and favourable not in labels:
        raise InputError(f"the favourable label {favourable!r} is not a label of the task",
                         where="--favourable", fix=f"Choose one of: {', '.join(labels)}.")


def audit(dataset, model, *, task=None, favourable: str | None = None, out: str | Path,
          categories: str | Path | None = None, text_field: str = "text", label_field: str | None = "label",
          id_field: str = "id", limit: int | None = None, skip_bad_rows: bool = False, seed: int = 0,
          bootstrap: int = BOOTSTRAP,
          permutations: int = PERMUTATIONS,
          parser=None, tagger=None, judge: str | None = None, budget: str | None = None,
          price_in: float | None = None, price_out: float | None = None, overwrite: bool = False,
          execution: Execution | None = None, executor=None, progress=None, language: str = "en",
          summary: AuditSummary | dict | None = None, notify: Callable[[str], None] = log.info) -> dict:
    """Audit `model` on `dataset` (a path, a bundled dataset's name, or a list of texts / TextRecords): every text
    that describes a person rendered in every sex x race/ethnicity category of `categories` (default: the EEO-1
    file), the model asked about each rendering and each original, and the tables written into `out`
    (audit.json, audit.csv, renderings.csv, audit.html). The model is asked through the run's Campaign
    (`Campaign.model_session`): the answers kept in `out`/run.sqlite under the model's fingerprint (a rerun asks
    nothing again; a changed model is refused unless `overwrite`), usage counted as a run's, `budget` as --budget.
    A free-text task (reference-letter) reads `favourable` as a measure: `judge` (the judge model, `judge` or the
    task's, says the masked letter is favourable; the default) or `not-refused`. `language` (--language, the
    run's): the texts' language, whose category file, parser and grammar render them (French: the descriptor after
    the noun, the agreement carried; docs/languages.md). `summary`: what the published summary carries that only the
user can say (auditor, distribution date, data description...: audit.summary.AuditSummary). Returns audit.json's
content."""
    cats = load_categories(categories, language)
    published = summary_section(summary, TEST_DATA)  # checked before the model is asked
    # the dataset read as a run reads it, with the run's checks (--label-field, --skip-bad-rows) and notes
    inputs = RunConfig(dataset=str(dataset) if isinstance(dataset, (str, Path)) else None, text_field=text_field,
                       label_field=label_field, id_field=id_field, limit=limit, skip_bad_rows=skip_bad_rows,
                       language=language)
    skipped: list[str] = []
    if isinstance(dataset, (str, Path)):
        records, skipped = read_texts(inputs)
        data_source = str(dataset)
        data_file = bundled_path(str(dataset)) if str(dataset) in BUNDLED else Path(dataset)
    else:
        records = [r if isinstance(r, TextRecord) else TextRecord(str(r)) for r in dataset][:limit]
        data_source, data_file = "texts given in Python", None
    if task is not None and not isinstance(task, str):
        task = getattr(task, "name", task)
    task_obj = get_task(task) if task is not None else None
    measure = _measure_of(task_obj, favourable, judge)
    favourable = measure.favourable
    config = RunConfig(model=model if isinstance(model, str) else None, task=task, budget=budget,
                       price_in=price_in, price_out=price_out, language=language)
    for message in input_notes(inputs, records, skipped, Path(out)):
        notify(message)

    own_parser = parser is None
    parser = parser or SpacyParser(get_language(language).spacy_model, language=language)
    try:
        validator = Validator(parser)
        rendered = render_texts(records, cats, validator.reasons, tagger, validator.disagree,
                                parse=parser.parse)
        usable = [t for t in rendered if t.renderings]
        if not usable:
            counts = _reasons(rendered)
            raise InputError("no text describes a person the audit can render (" + ", ".join(
                f"{n} {r}" for r, n in counts.items() if n) + ")", where=f"--dataset {data_source}",
                fix="Give texts that name a person with a noun of the category file (man, woman, actor, "
                    "mother...), of one sex per text.")
        texts = list(dict.fromkeys([t.text for t in rendered] + [r for t in usable for r in t.renderings.values()]))
        campaign = Campaign(config, [], model, Path(out), parser=parser, overwrite=overwrite,
                            execution=execution or Execution(), executor=executor)
        settings = {"audit": {"task": getattr(task_obj, "name", None), **_task_hashes(task_obj),
                              "measure": measure.recorded}, **measure.settings}
        with campaign.model_session(settings, progress) as session:
            measure.check(session.model)
            answers = session.ask(texts, measure.samples)
            verdicts = measure.verdicts(answers, cats, session)
            usage = session.finish()
            fingerprint = session.model.fingerprint
            if session.stored_at_start:
                notify(f"{session.stored_at_start} answers were already stored in {out}: reused, not asked again "
                       f"({session.calls} asked now); pass --overwrite to ask again.")
    finally:
        if own_parser:
            parser.close()
    result = tables_of(rendered, verdicts, cats, seed=seed, bootstrap=bootstrap, permutations=permutations)
    result["favourable"] = favourable
    published["tool_name"] = published["tool_name"] or (model if isinstance(model, str) else fingerprint)
    result["summary"] = published
    result.update(measure.result)
    result["usage"] = usage
    result["manifest"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hinter_version": __version__,
        "data_source": data_source,
        "dataset_sha256": _sha256_file(data_file) if data_file is not None else hashlib.sha256(
            "\n".join(r.text for r in records).encode()).hexdigest(),
        "categories_file": cats.source, "categories_sha256": cats.sha256,
        **{f"{k}_sha256": v for k, v in _task_hashes(task_obj).items()},
        "task": getattr(task_obj, "name", None), "favourable": favourable, "language": language,
        "model": fingerprint, "seed": seed, "bootstrap": bootstrap, "permutations": permutations,
        "parser": getattr(parser, "fingerprint", type(parser).__name__),
        **({"judge_model": settings["judge_model"], "judge_rubric": RUBRIC} if "judge_model" in settings else {}),
    }
    write_outputs(Path(out), result, rendered, verdicts, cats)
    return result


@dataclass(frozen=True)
class AuditMeasure:
    """What the audit counts as favourable, one record for a label task and a free-text task: `favourable` (a
    label, or a measure of a free-text answer), `samples` (answers per rendering), `recorded` and `settings` (what
    the run records: the measure, the judge model), `result` (audit.json's `measure` section: free text only),
    `check(model)` (the favourable label is one the model answers), `verdicts(answers, cats, session)`."""

    favourable: str
    samples: int
    recorded: str | None
    settings: dict
    result: dict
    check: Callable
    verdicts: Callable


def _measure_of(task_obj, favourable: str | None, judge: str | None) -> AuditMeasure:
    """The audit's measure for its task: a label of the task, or a measure of a free-text answer (`judge`, the
    default, or `not-refused`) over its samples; an InputError when the favourable outcome is neither."""
    return (_free_text_measure if is_generative(task_obj) else _label_measure)(task_obj, favourable, judge)


def _label_measure(task_obj, favourable: str | None, judge: str | None) -> AuditMeasure:
    if favourable is None:
        raise InputError("the audit needs the favourable label", where="--favourable",
                         fix="Give --favourable LABEL, one of the task's labels (e.g. Positive).")
    _check_favourable(task_obj, None, favourable)
    return AuditMeasure(favourable, 1, None, {}, {}, lambda model: _check_favourable(task_obj, model, favourable),
                        lambda answers, cats, session: {t: _label_verdict(a[0], favourable)
                                                        for t, a in answers.items()})


def _free_text_measure(task_obj, favourable: str | None, judge: str | None) -> AuditMeasure:
    """The judge's verdict on the masked letter (its model: `judge`, else the task's), or not a refusal."""
    favourable = favourable or "judge"
    if favourable not in GENERATIVE_MEASURES:
        raise InputError(f"the favourable outcome {favourable!r} is not a measure of a free-text answer",
                         where="--favourable", fix="For a free-text task give --favourable judge (the judge model "
                         "finds the letter favourable) or --favourable not-refused.")
    judge_spec = judge or task_obj.judge
    judged = favourable == "judge"
    if judged and not judge_spec:
        raise InputError(f"--favourable judge needs a judge model, and the task {task_obj.name} names none",
                         where="--judge", fix="Give --judge SPEC (any --model spec: gguf:default, "
                         "python:module:function, openai-chat:MODEL@URL), or --favourable not-refused.")
    return AuditMeasure(
        favourable, task_obj.samples, favourable,
        {"judge_model": judge_settings(judge_spec)["judge_model"]} if judged else {},
        {"measure": {"task": task_obj.name, "favourable": favourable, "samples": task_obj.samples,
                     "judge": judge_spec if judged else None,
                     "rule": "a rendering is selected when more than half of its samples are favourable"}},
        lambda model: None, lambda answers, cats, session: _judged(answers, cats, favourable, judge_spec, session))


def _label_verdict(outcome: Outcome, favourable: str) -> Verdict:
    return Verdict(favourable_of(outcome, favourable), outcome.encode(), outcome.score(favourable))


def _judged(answers: dict, cats: Categories, measure: str, judge_spec: str | None, session) -> dict[str, Verdict]:
    """A free-text task's verdicts: each sample measured (the judge's yes on the letter with the category words
    masked, or not a refusal), and the rendering selected when more than half of its samples are favourable."""
    terms = IdentityTerms.of([(w, w) for w in cats.identity_words()])
    letters = {t: [a.value if isinstance(a.value, str) and not a.error else None for a in outs]
               for t, outs in answers.items()}
    written = [x for xs in letters.values() for x in xs if x is not None]
    if measure == "judge":
        masked = terms.mask_all(written)
        values = dict(zip(written, session.judge(judge_spec, masked))) if written else {}
    else:
        values = {x: 1.0 - refusal(x) for x in written}
    out = {}
    for t, xs in letters.items():
        if any(x is None for x in xs):
            out[t] = Verdict(None, None)
            continue
        share = sum(values[x] for x in xs) / len(xs)
        out[t] = Verdict(share > 0.5, xs[0], share=round(share, 6))
    return out


def _reasons(rendered: Sequence[RenderedText]) -> dict[str, int]:
    counts = {r: 0 for r in NOT_RENDERED_REASONS}
    for t in rendered:
        if t.reason is not None:
            counts[t.reason.split(" (")[0]] += 1
    return counts


def tables_of(rendered: Sequence[RenderedText], verdicts: dict[str, Verdict], cats: Categories, *,
              seed: int = 0, bootstrap: int = BOOTSTRAP, permutations: int = PERMUTATIONS) -> dict:
    """audit.json's content (less the manifest) from the rendered texts and the verdicts on the model's answers."""
    sexes, races = [s.name for s in cats.sexes], [r.name for r in cats.races]
    cells = cats.cells
    complete, unparseable = [], 0
    unanswered = {f"{a} / {b}": 0 for a, b in cells}  # renderings with no usable answer, per category
    for t in rendered:
        if not t.renderings:
            continue
        sel = [verdicts[t.renderings[c]].selected for c in cells]
        for (a, b), v in zip(cells, sel):
            unanswered[f"{a} / {b}"] += v is None
        if any(v is None for v in sel):  # a text stays only with every category answered: the design is paired
            unparseable += 1
            continue
        complete.append((t, sel))
    y = np.array([sel for _, sel in complete], dtype=float).reshape(len(complete), len(sexes), len(races))
    tables = counterfactual_tables(y, sexes, races, seed=seed, draws=bootstrap, permutations=permutations) \
        if complete else {"sex": [], "race": [], "intersectional": []}  # nothing to compare: empty, and said why
    obs = [(t, verdicts[t.text].selected) for t in rendered]
    obs_known = [(t, v) for t, v in obs if v is not None]
    observed, observed_unknown = observed_tables([t.observed_sex for t, _ in obs_known],
                                                 [t.observed_race for t, _ in obs_known],
                                                 [v for _, v in obs_known], sexes, races, seed=seed, draws=bootstrap)
    kept = {t.index for t, _ in complete}
    result = {
        "counts": {"texts": len(rendered), "rendered": len(complete),
                   "not_rendered": {**_reasons(rendered), "unparseable answer": unparseable},
                   "renderings": len(complete) * len(cells),
                   "unanswered_renderings": {k: n for k, n in unanswered.items() if n},
                   "rendered_by": {how: sum(1 for t, _ in complete if t.how == how) for how in NAMED_BY}},
        "texts": text_outcomes(rendered, kept),
        "unknown": sum(1 for t in rendered if not t.renderings) + unparseable,
        "tables": {k: _with_applicants([r.to_json() for r in rows], len(complete)) for k, rows in tables.items()},
        "excluded": [{"table": k, "category": r.category, "reason": r.excluded}
                     for k, rows in tables.items() for r in rows if r.excluded],
        "observed": {"tables": {k: _with_applicants([r.to_json() for r in rows]) for k, rows in observed.items()},
                     "unknown": observed_unknown, "unparseable": len(obs) - len(obs_known),
                     "excluded": [{"table": k, "category": r.category, "reason": r.excluded}
                                  for k, rows in observed.items() for r in rows if r.excluded]},
        "twins": _twins(complete, tables, cells, verdicts),
        "names": names_section([t for t, _ in complete], cats),
        "limitations": limitations(len(complete), unparseable, unanswered),
    }
    scores = [[verdicts[t.renderings[c]].score for c in cells] for t, _ in complete]
    if complete and all(s is not None for row in scores for s in row):
        # a scored model: the scoring rate (above the sample's median score) and its ratios, LL144's second table
        z = np.array(scores, dtype=float)
        above = (z > np.median(z)).astype(float).reshape(y.shape)
        scored = counterfactual_tables(above, sexes, races, seed=seed, draws=bootstrap, permutations=permutations)
        result["scoring"] = {"median": round(float(np.median(z)), 6),
                             "tables": {k: _with_applicants([r.to_json() for r in rows], len(complete))
                                        for k, rows in scored.items()}}
    return result


def _with_applicants(rows: list[dict], texts: int | None = None) -> list[dict]:
    """Each row with `applicants`, the texts (applications) behind its `n`: in the counterfactual design every
    rendered text is in every category (`texts`), its n counting renderings (a sex's n is texts x races); in the
    observed design each text is one applicant of one category (n)."""
    return [{**r, "applicants": r["n"] if texts is None else texts} for r in rows]


def limitations(rendered: int, unparseable: int, unanswered: dict[str, int]) -> list[str]:
    """What the tables cannot say, in sentences: no text answered in every category (no table at all), or texts
    left out because the model gave no usable answer in some category (named, with counts)."""
    worst = sorted(((n, k) for k, n in unanswered.items() if n), key=lambda x: (-x[0], x[1]))
    where = ", ".join(f"{k} ({n})" for n, k in worst)
    if not rendered and unparseable:
        return [f"No text was answered in every category, so there is no rate or impact ratio to report: the model "
                f"gave no usable answer for the renderings in {where} (renderings unanswered per category). The "
                f"design compares each text with itself across categories; check the model's answers in "
                f"renderings.csv (outcome empty) and audit it again."]
    if unparseable:
        return [f"{unparseable} texts left out of the tables because the model gave no usable answer for some of "
                f"their renderings: {where} (renderings unanswered per category). A model that fails in one "
                f"category is itself a difference of treatment the tables do not count."]
    return []


NAMED_BY = ("noun", "name", "pronoun")  # how a rendered text names its person (render.Person.how)


def text_outcomes(rendered: Sequence[RenderedText], kept: set[int]) -> list[dict]:
    """Each text's outcome, in the dataset's order: `rendered` (in every category, every answer usable), or
    `not rendered` with the reason (render's, with its detail, or "unparseable answer"); `named_by`: how the text
    names its person (noun: the descriptor before it; name or pronoun: the descriptor in apposition, the name
    rendered), None where no person was found."""
    out = []
    for t in rendered:
        done = t.index in kept
        reason = None if done else t.reason or "unparseable answer"
        out.append({"index": t.index, "id": t.source_id, "outcome": "rendered" if done else "not rendered",
                    "reason": reason, "named_by": t.how})
    return out


def names_section(complete: Sequence[RenderedText], cats: Categories) -> dict:
    """How the texts that name their person were rendered: which categories have names of their own (BBQ's),
    which get an unmarked name (the descriptor alone marks the race), whether last names were rendered."""
    own, unmarked, kept = [], [], []
    for sex, race in cats.cells:
        cell = f"{sex} / {race}"
        (own if cats.named(race, sex) else unmarked if (cats.unmarked_names or {}).get(sex) else kept).append(cell)
    return {
        "texts_naming_the_person": sum(1 for t in complete if t.named),
        "rendered_with_own_names": own,
        "descriptors_only": unmarked + kept,
        "descriptors_only_note": "a named person rendered in these categories gets a first name of no marked race "
                                 "(unmarked_names) or, without one, keeps the name as written: only the descriptor "
                                 "marks the category" if unmarked + kept else None,
        "last_names": "rendered" if cats.last_names_rendered else "kept as written: not every race has a list, and "
                      "a kept surname would mark a race in the others",
        "sources": {**{r.name: r.names_source for r in cats.races if r.names_source},
                    **({"unmarked": cats.unmarked_names_source} if cats.unmarked_names_source else {})},
    }


def _twins(complete, tables, cells, verdicts, per_cell: int = 3) -> list[dict]:
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
                            "reference_outcome": verdicts[a].shown, "outcome": verdicts[b].shown})
                shown += 1
    return out


CSV_FIELDS = ("design", "table", "category", "sex", "race", "n", "applicants", "selected", "rate", "rate_ci_low",
              "rate_ci_high", "impact_ratio", "impact_ratio_ci_low", "impact_ratio_ci_high", "p_value", "four_fifths",
              "too_few", "excluded")
# the published summary's fields, repeated on every row: each row of audit.csv says what it is a result of
SUMMARY_FIELDS = ("data_type", "audit_date", "auditor", "distribution_date", "employer", "tool_name", "tool_version",
                  "job_category", "data_period", "data_description", "test_data_reason")
RENDERINGS_FIELDS = ("text_index", "source_id", "kind", "sex", "race", "outcome", "favourable", "favourable_share",
                     "text")


def audit_csv_text(result: dict, rows: list[dict]) -> str:
    """audit.csv: the table rows (csv_rows), each with the published summary's fields (SUMMARY_FIELDS)."""
    published = {**result.get("summary", {}), "audit_date": result.get("manifest", {}).get("date")}
    columns = CSV_FIELDS + SUMMARY_FIELDS
    return csv_text(columns, ([{**r, **{k: published.get(k) for k in SUMMARY_FIELDS}}.get(c) for c in columns]
                              for r in rows))


def csv_rows(design: str, tables: dict) -> list[dict]:
    out = []
    for name, rows in tables.items():
        for r in rows:
            rc, ic = r["rate_ci"] or (None, None), r["impact_ratio_ci"] or (None, None)
            out.append({"design": design, "table": name, "category": r["category"], "sex": r.get("sex"),
                        "race": r.get("race"), "n": r["n"], "applicants": r.get("applicants"),
                        "selected": r["selected"], "rate": r["rate"],
                        "rate_ci_low": rc[0], "rate_ci_high": rc[1], "impact_ratio": r["impact_ratio"],
                        "impact_ratio_ci_low": ic[0], "impact_ratio_ci_high": ic[1], "p_value": r["p_value"],
                        "four_fifths": r["four_fifths"], "too_few": r.get("too_few"), "excluded": r["excluded"]})
    return out


def output_texts(result: dict, rendered, verdicts: dict[str, Verdict], cats: Categories) -> dict[str, str]:
    """Every output's text by file name (audit.json, audit.csv, renderings.csv, audit.html), made in memory first
    so that they are written as one set. The CSVs go through the project's CSV writer: dataset ids and texts that
    begin like a formula are written as text (files.safe_cell)."""
    rows = csv_rows("counterfactual", result["tables"]) + csv_rows("observed", result["observed"]["tables"])
    if "scoring" in result:
        rows += csv_rows("scoring", result["scoring"]["tables"])
    audit_csv = audit_csv_text(result, rows)

    # one row per rendering (and per original): what the tables count, for a reader to recount them
    def renderings():
        for t in rendered:
            v = verdicts.get(t.text)
            yield [t.index, t.source_id, "original", t.observed_sex or "unknown", t.observed_race or "unknown",
                   v.shown if v else None, v.selected if v else None, v.share if v else None, t.text]
            for (sex, race), text in t.renderings.items():
                v = verdicts[text]
                yield [t.index, t.source_id, "rendering", sex, race, v.shown, v.selected, v.share, text]

    return {"audit.json": json_text(result, indent=2) + "\n", "audit.csv": audit_csv,
            "renderings.csv": csv_text(RENDERINGS_FIELDS, renderings()), "audit.html": render_page(result, cats)}


def write_outputs(out: Path, result: dict, rendered, verdicts: dict[str, Verdict], cats: Categories) -> None:
    """The four outputs as one set (files.write_set): a full disk or a kill while writing leaves the previous
    audit's four files whole, never new tables beside an old page; the disk's refusal is a StorageError (exit 2)."""
    texts = output_texts(result, rendered, verdicts, cats)
    with storage_errors(out):
        out.mkdir(parents=True, exist_ok=True)
        write_set({out / name: text for name, text in texts.items()})
