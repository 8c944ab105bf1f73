"""Free-text answers (issue 21): identity masking, aspects of an answer, and an oracle calibrated on the model's
own variation. See docs/generative.md.

    from hinter.generative import FreeTextJudge, AspectObservation, aspect_findings

    judge = FreeTextJudge()                                   # sentiment, refusal, length, distance
    verdicts = judge.judge(original_answers, mutant_answers, mutant.replacements)
    obs = AspectObservation.from_pair_ids(text_id, mutant.key, verdicts)
    analysis = aspect_findings(observations)                  # AspectAnalysis: findings per aspect and cell
"""
from .aspects import ASPECTS, DEFAULT_ASPECTS, Aspect, get_aspect, register_aspect
from .judge import (AspectAnalysis, AspectFinding, AspectObservation, AspectVerdict, FreeTextJudge, aspect_findings,
                    instance_hidden, judge_of, two_sample_p)
from .masking import PLACEHOLDER, IdentityTerms, mask_answers

__all__ = ["ASPECTS", "DEFAULT_ASPECTS", "PLACEHOLDER", "Aspect", "AspectAnalysis", "AspectFinding",
           "AspectObservation", "AspectVerdict", "FreeTextJudge", "IdentityTerms", "aspect_findings", "get_aspect",
           "instance_hidden", "judge_of", "mask_answers", "register_aspect", "two_sample_p"]
