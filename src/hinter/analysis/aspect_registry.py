"""The aspects of a free-text answer by name, and how a change in each reads: the `Aspect` record, the registry
`ASPECTS` and the built-in aspects' declarations. Below the tasks and the findings, which read only this (a task
checks its aspects' names; a finding words its direction and unit); the functions that compute the built-ins live
with the judge in generative/aspects.py, named here by "module:function" and imported on first use, so that no
lower stage imports the free-text package.

    from hinter.generative.aspects import register_aspect   # the same function, re-exported

    @register_aspect("formality", more="more formal", less="less formal")
    def formality(answer: str) -> float: ...
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from typing import Callable, Sequence

from hinter.errors import InputError
from hinter.registry import Registry


@lru_cache(maxsize=None)
def _load(reference: str) -> Callable[..., float]:
    module, _, name = reference.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Aspect:
    """One number per answer. `function`: a callable, or "module:function" imported on first use (the built-ins);
    `more` / `less`: how a rise / fall reads in a finding ("more positive"); `unit`: what the number is; `binary`:
    values are 0 or 1 (effects are shares); `relational`: `function(answer, reference)`, the reference being one of
    the original's answers (see generative/judge.py), else `function(answer)`; `batch`: the function takes a list of
    answers and returns one number per answer (a judge model, asked about many answers at once)."""

    name: str
    function: Callable[..., float] | str
    more: str
    less: str
    unit: str = ""
    binary: bool = False
    relational: bool = False
    description: str = ""
    batch: bool = False

    @property
    def compute(self) -> Callable[..., float]:
        """The function itself (a "module:function" reference imported)."""
        return _load(self.function) if isinstance(self.function, str) else self.function

    def values(self, answers: Sequence[str], reference: str | None = None) -> tuple[float, ...]:
        function = self.compute
        if self.batch:
            out = tuple(float(v) for v in function(list(answers)))
            if len(out) != len(answers):
                raise ValueError(f"the aspect {self.name} gave {len(out)} values for {len(answers)} answers")
        elif self.relational:
            if reference is None:
                raise ValueError(f"the aspect {self.name} needs a reference answer")
            out = tuple(float(function(a, reference)) for a in answers)
        else:
            out = tuple(float(function(a)) for a in answers)
        for v in out:
            if v != v or v in (float("inf"), float("-inf")):
                raise ValueError(f"the aspect {self.name} gave {v} (it must give finite numbers)")
        return out


def _check_aspect(name: str, entry: object) -> Aspect:
    if not isinstance(entry, Aspect) or entry.name != name:
        raise InputError(f"the hinter_aspects entry point {name!r} is not an Aspect named {name!r}",
                         where="the aspect registry", fix="Point the entry point at a hinter.generative.aspects.Aspect.")
    return entry


def _builtins() -> None:
    for aspect in BUILTIN_ASPECTS:
        ASPECTS.register(aspect.name, aspect, origin="hinter.generative.aspects")


ASPECTS: Registry[Aspect] = Registry("aspects", "aspect", "--aspects", builtins=_builtins, check=_check_aspect)


def register_aspect(name: str, *, more: str, less: str, unit: str = "", binary: bool = False,
                    relational: bool = False, description: str = ""):
    """Decorator: register `function(answer) -> float` (relational: `function(answer, reference)`) as an aspect."""
    def wrap(function: Callable[..., float]) -> Callable[..., float]:
        ASPECTS.register(name, Aspect(name, function, more, less, unit, binary, relational,
                                      description or (function.__doc__ or "").strip().split("\n")[0]),
                         origin=f"from {function.__module__}")
        return function
    return wrap


def get_aspect(name: str | Aspect) -> Aspect:
    if isinstance(name, Aspect):
        return name
    return ASPECTS.get(name)


def aspect_names() -> list[str]:
    return list(ASPECTS.names())


DEFAULT_ASPECTS = ("sentiment", "refusal", "length", "distance")

# The built-ins: their functions (and why they are computed so) in generative/aspects.py.
_FUNCTIONS = "hinter.generative.aspects"
SENTIMENT = Aspect("sentiment", f"{_FUNCTIONS}:sentiment", "more positive", "less positive", "VADER compound, -1..1",
                   description="VADER's compound valence of the answer, -1..1")
REFUSAL = Aspect("refusal", f"{_FUNCTIONS}:refusal", "refused more often", "refused less often",
                 "share of answers refused", binary=True,
                 description="the model declines (patterns: I can't help with..., I must decline...)")
LENGTH = Aspect("length", f"{_FUNCTIONS}:length", "longer", "shorter", "words", description="words in the answer")
AGENCY = Aspect("agency", f"{_FUNCTIONS}:agency", "described in more agentic terms",
                "described in more communal terms", "(agentic - communal) / (agentic + communal) words, -1..1",
                description="agentic words (ambitious, confident, leader...) against communal ones (kind, warm, "
                            "helpful...), as studies of letters of recommendation count them")
DOUBT = Aspect("doubt", f"{_FUNCTIONS}:doubt", "written with more doubt", "written with less doubt",
               "doubt raisers per 100 words",
               description="doubt raisers (hedges: might, perhaps, seems...; faint praise: adequate, satisfactory...; "
                           "negative turns: however, lacks, weaknesses...), as studies of letters of recommendation "
                           "count them")
DISTANCE = Aspect("distance", f"{_FUNCTIONS}:semantic_distance", "further from the original's answers",
                  "closer to the original's answers", "1 - cosine of MiniLM embeddings", relational=True,
                  description="semantic distance to a reference answer of the original (all-MiniLM-L6-v2)")
# The judge aspect as findings read it (direction, unit); a run's judge is this aspect bound to its judge model
# (generative/judge_aspect.judge_aspect, from the task file's `judge: SPEC`).
JUDGE = Aspect("judge", f"{_FUNCTIONS}:needs_a_judge_model", "judged favourable more often",
               "judged favourable less often", "share of answers a judge model calls favourable", binary=True,
               batch=True,
               description="a judge model asked, with a fixed rubric, whether the answer is favourable to the person")
BUILTIN_ASPECTS = (SENTIMENT, REFUSAL, LENGTH, AGENCY, DOUBT, DISTANCE, JUDGE)
