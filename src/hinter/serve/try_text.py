"""One text through the run's own pipeline, as `hinter serve` answers POST /api/try: the same stages (pipeline.py)
with the run's recorded settings (dictionary and packs, sampling, person-only, repair, window, repeats, validity
mode), on a single text, nothing stored. A text of the run gets exactly the mutants, verdicts and outcomes the run
stored for it."""
from __future__ import annotations

from typing import Sequence

from hinter.config import RunConfig
from hinter.mutation.dictionary import Dictionary
from hinter.errors import ModelError
from hinter.executor import validate_jobs
from hinter.generative.masking import IdentityTerms
from hinter.models.base import OutcomeCache
from hinter.pipeline.stages import BatchResult, Mutate, ParsedVerdicts, campaign_texts, run_pipeline, task_of
from hinter.records import Edit
from hinter.records import edits as edits_of
from hinter.records import text_key
from hinter.store.rows import AspectRecord
from hinter.models.tasks import is_generative


def marks(edits: Sequence[Edit]) -> list[list[int]]:
    """Where each edit's new word lies in the mutated text (edits in the original's coordinates; a replacement
    takes the case of the word it replaces, never its length)."""
    out, shift = [], 0
    for start, end, new in sorted(edits):
        out.append([start + shift, start + shift + len(new)])
        shift += len(new) - (end - start)
    return out


def aspects_json(aspects: dict[str, AspectRecord] | None) -> dict | None:
    """A generative mutant's verdicts as the run stores them (store.AspectRecord, values to nine digits): per aspect
    the values compared (`original`, `mutant`: one per sample), their means, the per-text test's `p_value` (None:
    one answer each), `differs` and `hidden`."""
    if aspects is None:
        return None
    out = {}
    for name, record in aspects.items():
        original, mutant, p, differs, hidden = record.as_list()
        out[name] = {"original": original, "mutant": mutant,
                     "original_mean": sum(original) / len(original) if original else None,
                     "mutant_mean": sum(mutant) / len(mutant) if mutant else None,
                     "p_value": p, "differs": bool(differs), "hidden": None if hidden is None else bool(hidden)}
    return out


def mutants_answers(row) -> list[str | None]:
    """A mutant's answers as stored: every sample, or with one sample its outcome ([] when it was not asked)."""
    return list(row.answers) if row.answers is not None else [row.outcome] if row.queried else []


def masked_spans(answers: Sequence[str | None], replacements, language: str = "en") -> list[list[list[int]]]:
    """Per answer, where identity masking hides a word (generative.masking, with the run's `language`): the page
    marks them."""
    terms = IdentityTerms.of(list(replacements), language)
    return [[list(x) for x in terms.spans(a)] if a else [] for a in answers]


def try_text(text: str, config: RunConfig, dictionary: Dictionary, cache: OutcomeCache, validator, *,
             text_id: int = 0, mutate: Mutate | None = None) -> dict:
    """The original's outcome and every atomic and intersectional mutant of `text` as the run `config` describes
    would test it: replacements, text (with `marks`, the changed words), verdict and reason, outcome, flip
    (`bias`) and, for intersectional ones, `hidden` and `strictly_hidden`. `dictionary` is the campaign's
    (pipeline.campaign_dictionary); `cache` an OutcomeCache of the loaded model (answers remembered across tries,
    nothing stored); `validator` a validity Validator; `text_id` the text's id in the run (its pair samples are
    seeded by it). `mutate`: a Mutate stage to reuse (its person filter's parser loads once). ModelError when the
    model gives no answer about the original. A generative run's (`generative` true): every version's `answers`
    (every sample) and each judged mutant's `aspects` (aspects_json), as the run stores them."""
    (record,) = campaign_texts(config, [text])
    results: list[BatchResult] = []
    source = ParsedVerdicts(mutate or Mutate(config, dictionary), lambda jobs: validate_jobs(validator, jobs))
    run_pipeline([(text_id, [(text_id, record)])], source, results.append, config.replace(batch_texts=1),
                 cache=cache, total=1)
    (result,) = results
    original = cache.predict([record.text])[text_key(record.text)]  # remembered: not asked again
    if original.error:
        raise ModelError(f"the model gave no answer about the text ({(original.raw or '')[:300]})",
                         fix="Check the model, then try again.")
    (row,) = result.texts
    generative = any(r.aspects is not None for r in result.mutants) or _generative(config)
    mutants = []
    for m, r in zip(result.batch.mutants, result.mutants):
        mutants.append({
            "order": r.order, "attributes": r.attributes,
            "replacements": [{**x.to_json(), "describe": x.describe()} for x in r.replacements],
            "text": m.text, "marks": marks(edits_of(r.replacements)), "valid": r.valid,
            "discard_reason": r.discard_reason, "outcome": r.outcome, "raw": r.raw,
            "bias": r.bias if r.valid else None, "hidden": r.hidden, "strictly_hidden": r.strictly_hidden,
            **({"answers": list(r.answers)} if r.answers is not None else
               {"answers": mutants_answers(r)} if generative else {}),
            **({"aspects": aspects_json(r.aspects), "masked": masked_spans(mutants_answers(r), r.replacements,
                                                                            config.language)}
               if generative else {}),
            **({"unseen": True} if r.unseen else {})})
    original_answers = list(row.answers) if row.answers is not None else [row.outcome]
    return {"generative": generative, "original": {"text": record.text, "outcome": row.outcome, "raw": row.raw,
                         **({"answers": list(row.answers)} if row.answers is not None else
                            {"answers": [row.outcome]} if generative else {}),
                         **({"masked": masked_spans(original_answers, [x for r in result.mutants
                                                                       for x in r.replacements], config.language)}
                            if generative else {}),
                         "marks": [list(x) for x in sorted({(s, e) for m in result.batch.mutants
                                                            for s, e, _ in m.edits})]},
            "mutants": mutants, "overlaps_skipped": result.stats.get("overlaps_skipped", 0),
            "seconds": {"validity": round(result.stats["seconds_mutation"] + result.stats["seconds_validity"], 3),
                        "model": round(result.stats["seconds_model"], 3)}}


def _generative(config: RunConfig) -> bool:
    """Whether the run's task is generative (its answers are texts), even where no mutant was judged."""
    return is_generative(task_of(config))
