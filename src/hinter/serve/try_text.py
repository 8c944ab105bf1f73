"""One text through the run's own pipeline, as `hinter serve` answers POST /api/try: the same stages (pipeline.py)
with the run's recorded settings (dictionary and packs, sampling, person-only, repair, window, repeats, validity
mode), on a single text, nothing stored. A text of the run gets exactly the mutants, verdicts and outcomes the run
stored for it."""
from __future__ import annotations

from typing import Sequence

from ..config import RunConfig
from ..dictionary import Dictionary
from ..errors import ModelError
from ..executor import validate_jobs
from ..models.base import OutcomeCache
from ..pipeline import BatchResult, Mutate, ParsedVerdicts, campaign_texts, run_pipeline
from ..records import Edit, edits as edits_of, text_key


def marks(edits: Sequence[Edit]) -> list[list[int]]:
    """Where each edit's new word lies in the mutated text (edits in the original's coordinates; a replacement
    takes the case of the word it replaces, never its length)."""
    out, shift = [], 0
    for start, end, new in sorted(edits):
        out.append([start + shift, start + shift + len(new)])
        shift += len(new) - (end - start)
    return out


def try_text(text: str, config: RunConfig, dictionary: Dictionary, cache: OutcomeCache, validator, *,
             text_id: int = 0, mutate: Mutate | None = None) -> dict:
    """The original's outcome and every atomic and intersectional mutant of `text` as the run `config` describes
    would test it: replacements, text (with `marks`, the changed words), verdict and reason, outcome, flip
    (`bias`) and, for intersectional ones, `hidden` and `strictly_hidden`. `dictionary` is the campaign's
    (pipeline.campaign_dictionary); `cache` an OutcomeCache of the loaded model (answers remembered across tries,
    nothing stored); `validator` a validity Validator; `text_id` the text's id in the run (its pair samples are
    seeded by it). `mutate`: a Mutate stage to reuse (its --person-only parser loads once). ModelError when the
    model gives no answer about the original."""
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
    mutants = []
    for m, r in zip(result.batch.mutants, result.mutants):
        mutants.append({
            "order": r.order, "attributes": r.attributes,
            "replacements": [{**x.to_json(), "describe": x.describe()} for x in r.replacements],
            "text": m.text, "marks": marks(edits_of(r.replacements)), "valid": r.valid,
            "discard_reason": r.discard_reason, "outcome": r.outcome, "raw": r.raw,
            "bias": r.bias if r.valid else None, "hidden": r.hidden, "strictly_hidden": r.strictly_hidden,
            **({"answers": list(r.answers)} if r.answers is not None else {}),
            **({"unseen": True} if r.unseen else {})})
    return {"original": {"text": record.text, "outcome": row.outcome, "raw": row.raw,
                         **({"answers": list(row.answers)} if row.answers is not None else {}),
                         "marks": [list(x) for x in sorted({(s, e) for m in result.batch.mutants
                                                            for s, e, _ in m.edits})]},
            "mutants": mutants, "overlaps_skipped": result.stats.get("overlaps_skipped", 0),
            "seconds": {"validity": round(result.stats["seconds_mutation"] + result.stats["seconds_validity"], 3),
                        "model": round(result.stats["seconds_model"], 3)}}
