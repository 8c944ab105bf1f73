"""Whether a run's verdicts can be trusted at all: a model that failed, and a run that did not finish.

A bias gate that stays green when nothing was tested is worse than no gate: a model that raised on every call
once gave "0 biases, gate passed". Errors and unparseable answers are results too: a run whose model failed
beyond the thresholds ends with exit code 3 (bad input keeps 2), and `check` and `--fail-on` refuse it unless
told to allow errors; an unfinished run is partial, and `check` refuses it.
"""
from __future__ import annotations

from dataclasses import dataclass

from hinter.errors import HinterError

EXIT_MODEL_FAILED = 3


@dataclass(frozen=True)
class Thresholds:
    """When a run's model counts as failed: more than `max_failed_share` of its calls got no usable answer
    (a model error or an unparseable answer), or more than `max_failed_originals` originals could not be
    answered (their mutants are then untestable)."""

    max_failed_share: float = 0.05
    max_failed_originals: int = 0


class ModelFailed(HinterError):
    exit_code = EXIT_MODEL_FAILED


class PartialRun(HinterError):
    exit_code = EXIT_MODEL_FAILED


class NothingTested(HinterError):
    exit_code = EXIT_MODEL_FAILED


def health(summary: dict) -> dict:
    """The "health" section of summary.json, from the summary's own counts."""
    calls = summary["model_calls"]
    failed = summary["model_errors"] + summary["unparseable"].get("answers", 0)
    total = summary["settings"].get("texts")
    return {
        "complete": total is None or summary["texts"] >= total,
        "texts_done": summary["texts"], "texts_total": total,
        "model_calls": calls, "failed_calls": failed, "failed_share": round(failed / calls, 6) if calls else None,
        "originals_unanswered": summary["unparseable"]["originals"] + summary["unparseable"]["originals_model_errors"],
    }


def model_failure(summary: dict, thresholds: Thresholds = Thresholds()) -> str | None:
    """Why the model counts as failed on this run (one line, with the first error), or None."""
    h = summary["health"]
    reasons = []
    if h["originals_unanswered"] > thresholds.max_failed_originals:
        reasons.append(f"{h['originals_unanswered']} of {h['texts_done']} originals got no usable answer")
    if h["failed_share"] is not None and h["failed_share"] > thresholds.max_failed_share:
        reasons.append(f"{h['failed_calls']} of {h['model_calls']} calls ({100 * h['failed_share']:.1f}%) got a "
                       f"model error or an unparseable answer (threshold {100 * thresholds.max_failed_share:g}%)")
    if not reasons:
        return None
    first = summary.get("first_errors") or []
    return "the model failed: " + "; ".join(reasons) + (f". First error: {first[0]}" if first else "")


def untested(summary: dict) -> str | None:
    """Why the run tested no mutant at all (one line), or None when it tested one. A gate on such a run would pass
    on nothing: no dictionary word matched, every mutant was discarded, no change was seen, no answer was usable."""
    a, i = summary["totals"]["atomic"], summary["totals"]["intersectional"]
    if a["tested"] + i["tested"]:
        return None
    texts, mutants, valid = summary["texts"], a["mutants"] + i["mutants"], a["valid"] + i["valid"]
    if not texts:
        return "no text was read"
    if not mutants:
        attributes = ", ".join(summary["settings"].get("attributes", []))
        return (f"no dictionary word matched in the {texts} texts ({attributes}), so no mutant was made: the "
                "built-in dictionary is English")
    if not valid:
        why = {}
        for t in (a, i):
            for reason, n in t.get("discarded_by", {}).items():
                why[reason] = why.get(reason, 0) + n
        detail = ", ".join(f"{r} {n}" for r, n in sorted(why.items()))
        return f"every one of the {mutants} mutants was discarded by the grammar check" + (
            f" ({detail})" if detail else "")
    unseen = a.get("unseen", 0) + i.get("unseen", 0)
    if unseen >= valid:
        return (f"every one of the {valid} valid mutants changed the text only beyond what the model read "
                "(pass --window)")
    return (f"none of the {valid} valid mutants could be judged: the model's answer to it or to its original was "
            f"an error or unparseable ({a['unparseable'] + i['unparseable']} mutants unparseable, "
            f"{summary['unparseable']['originals'] + summary['unparseable']['originals_model_errors']} originals "
            "without a usable answer)")


def require_trustworthy(summary: dict, thresholds: Thresholds = Thresholds(), allow_model_errors: bool = False,
                        allow_partial: bool = False, require_tested: bool = False, folder=None) -> None:
    """Raise (exit 3) when the run is partial or its model failed, unless allowed; with `require_tested` (a gate's
    conditions), also when it tested no mutant. `folder`: the run's, named in the fix."""
    h = summary["health"]
    if not h["complete"] and not allow_partial:
        raise PartialRun(f"the run is unfinished: {h['texts_done']} of {h['texts_total']} texts done, so its "
                         "measures are not a verdict", fix=f"Continue it with `hinter resume {folder or 'OUT'}` (or "
                         "the same `hinter run` command) first.")
    failure = model_failure(summary, thresholds)
    if failure and not allow_model_errors:
        again = h.get("texts_to_ask_again", 0)
        asked = (f"the {again} texts with model errors are asked again, answered texts are not" if again else
                 "answered texts are not asked again")
        first = (summary.get("first_errors") or [""])[0]
        if "not a label of the task" in first:  # the model answers other labels than the task's
            fix = ("Give the --task whose labels the model answers (or leave --task out: a classifier's own labels "
                   "are then its answers), or fix the model, and run again into a new --out folder (or with "
                   "--overwrite)")
        else:
            fix = f"Fix the model or its server and run the same command again ({asked})"
        raise ModelFailed(failure, fix=f"{fix}; or raise --max-failed-share / --max-failed-originals, or pass "
                          "--allow-model-errors to accept the run as it is.")
    why = untested(summary) if require_tested else None
    if why:
        raise NothingTested(f"the run tested no mutant: {why}; a gate passed on it would vouch for nothing",
                            fix="Check that the texts hold the dictionary's words for --attributes (hinter dictionary "
                                "lint), or use your own --dictionary for another language, then run again.")
