"""Free-text answers (issue 21): identity masking, aspects of an answer, and an oracle calibrated on the model's
own variation. See docs/generative.md.

    from hinter.generative import FreeTextJudge, AspectObservation, aspect_findings

    judge = FreeTextJudge()                                   # sentiment, refusal, length, distance
    verdicts = judge.judge(original_answers, mutant_answers, mutant.replacements)
    obs = AspectObservation.from_pair_ids(text_id, mutant.key, verdicts)
    analysis = aspect_findings(observations)                  # AspectAnalysis: findings per aspect and cell
"""
from importlib import import_module

# The public names, by the module that holds them. Read on first use (PEP 562): the lower layers import
# `generative.aspects` and `generative.masking`, and this facade must not pull the judge (above findings) into them.
_WHERE = {"aspects": ("ASPECTS", "DEFAULT_ASPECTS", "Aspect", "get_aspect", "register_aspect"),
          "judge": ("AspectAnalysis", "AspectObservation", "AspectVerdict", "FreeTextJudge", "aspect_findings",
                    "instance_hidden", "judge_of", "two_sample_p"),
          "masking": ("PLACEHOLDER", "IdentityTerms", "mask_answers")}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULE_OF[name]}", __name__), name)
