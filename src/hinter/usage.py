"""What a campaign costs: calls, tokens and money, measured while it runs, estimated before it starts, and capped.

Tokens come from the model itself where it knows them (an OpenAI-compatible API's `usage`, the embedded GGUF
model's tokenizer): the backend keeps a cumulative `Usage` in its `usage` attribute. Elsewhere (hf:, python:, a
Ray worker's copy, a server that returns no `usage`) they are estimated, about 4 characters a token, and marked
as estimated. Prices are in the currency of the user's choosing per million tokens (`--price-in`, `--price-out`,
or `price_in` / `price_out` in an openai: spec): the cost is tokens_in * price_in / 1e6 + tokens_out *
price_out / 1e6. Answers the run's store already holds are free and never counted: `calls` counts requests made.

The `Meter` sits in the run's outcome cache (models.base.OutcomeCache): before each model batch it checks the
budget (`--budget calls=N | tokens=N | cost=X`) and raises `BudgetReached` when the batch would exceed it, so the
run stops as an interrupt does, everything asked so far kept; after each batch it adds what was spent to the
run's stats, so a resumed run counts what the runs before it spent.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Sequence

from hinter.errors import HinterError, InputError

CHARS_PER_TOKEN = 4.0  # a common rule of thumb for English with BPE tokenizers; only where no tokenizer answers
EXIT_BUDGET = 4  # the exit code of a run stopped by --budget (2: bad input, 3: a failed model, 130: interrupted)
STAT = "usage."  # the run's stats keys: usage.calls, usage.tokens_in, ... (summed over every session of a run)


def estimate_tokens(text: str) -> int:
    """Tokens of `text` where no tokenizer is at hand: one per CHARS_PER_TOKEN characters, at least one."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


@dataclass
class Usage:
    """Cumulative use of a model: requests answered or failed (`calls`), their tokens, and retried requests.
    `estimated_calls`: calls whose tokens are estimated (the server returned no `usage`). Thread-safe `add`."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    retries: int = 0
    estimated_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, calls: int = 0, tokens_in: int = 0, tokens_out: int = 0, retries: int = 0,
            estimated_calls: int = 0) -> None:
        with self._lock:
            self.calls += calls
            self.tokens_in += tokens_in
            self.tokens_out += tokens_out
            self.retries += retries
            self.estimated_calls += estimated_calls

    def numbers(self) -> dict[str, int]:
        with self._lock:
            return {"calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                    "retries": self.retries, "estimated_calls": self.estimated_calls}


@dataclass(frozen=True)
class Prices:
    """Per million tokens, read and written (None: not given)."""

    per_million_in: float | None = None
    per_million_out: float | None = None

    @property
    def given(self) -> bool:
        return self.per_million_in is not None or self.per_million_out is not None

    def cost(self, tokens_in: float, tokens_out: float) -> float:
        return (tokens_in * (self.per_million_in or 0.0) + tokens_out * (self.per_million_out or 0.0)) / 1e6

    def merged(self, other: "Prices | None") -> "Prices":
        """These prices, each one not given taken from `other` (the command line's win over the model spec's)."""
        if other is None:
            return self
        return Prices(self.per_million_in if self.per_million_in is not None else other.per_million_in,
                      self.per_million_out if self.per_million_out is not None else other.per_million_out)


BUDGET_KINDS = ("calls", "tokens", "cost")


@dataclass(frozen=True)
class Budget:
    """`--budget KIND=AMOUNT`: calls (requests), tokens (read and written) or cost (with the prices)."""

    kind: str
    amount: float

    def __str__(self) -> str:
        return f"{self.kind}={self.amount:g}"


def parse_budget(text: str | None) -> Budget | None:
    """'calls=500', 'tokens=2e6', 'cost=5' -> Budget; None -> None; anything else an InputError."""
    if text is None:
        return None
    kind, eq, amount = str(text).partition("=")
    kind = kind.strip().lower()
    fix = "Write --budget calls=N, --budget tokens=N or --budget cost=X (cost needs --price-in / --price-out)."
    if not eq or kind not in BUDGET_KINDS:
        raise InputError(f"cannot read the budget {text!r}", where="--budget", fix=fix)
    try:
        value = float(amount)
    except ValueError:
        raise InputError(f"the budget's amount {amount.strip()!r} is not a number", where="--budget", fix=fix) from None
    if not value > 0 or math.isinf(value):
        raise InputError(f"the budget must be a positive number, got {amount.strip()}", where="--budget", fix=fix)
    if kind != "cost" and value != int(value):
        raise InputError(f"a {kind} budget is a whole number, got {amount.strip()}", where="--budget", fix=fix)
    return Budget(kind, value)


class BudgetReached(HinterError):
    """The next model batch would exceed --budget: the run stops before it, as an interrupt does (every finished
    batch kept; a later run with a larger budget, or none, continues)."""

    exit_code = EXIT_BUDGET


# ---------------------------------------------------------------- what a text costs, before asking

@dataclass(frozen=True)
class TextCost:
    """How a model's calls are estimated: the prompt around a text and the answer's length, in tokens."""

    prompt_tokens: int = 0  # the task's template (instructions, examples) around each text
    answer_tokens: int = 1  # tokens written per answer (a label and its end, or a generative task's max_tokens)

    @classmethod
    def of_task(cls, task) -> "TextCost":
        """From the task the model is asked in: its prompt without the text, and its longest answer."""
        if task is None:
            return cls()
        head, tail = task.prompt_prefix_and_suffix()
        # a label task's longest label and the newline that ends it (multi-label: up to three); the task says
        # what bounds its answers (a free-text task: its max_tokens, an upper bound: a model may stop sooner)
        label = max((estimate_tokens(label) for label in task.labels), default=0) + 1
        if task.multi_label:
            label *= min(3, len(task.labels))
        return cls(estimate_tokens(head + tail), task.answer_tokens(label))

    def of(self, text: str) -> tuple[int, int]:
        return self.prompt_tokens + estimate_tokens(text), self.answer_tokens


def estimated(texts: Sequence[str], cost: TextCost) -> tuple[int, int]:
    """Estimated tokens (read, written) of one call per text."""
    tin = tout = 0
    for t in texts:
        a, b = cost.of(t)
        tin += a
        tout += b
    return tin, tout


# ---------------------------------------------------------------- the meter in the run's cache

class Meter:
    """Counts what a run's model spends and stops it at the budget. `store`: the run store (its stats keep the
    spending of every session); `prices`, `budget`: as given; `cost`: how calls are estimated where the model
    does not count its tokens (and, for the budget's check, how the next batch is estimated)."""

    def __init__(self, model, store=None, budget: Budget | None = None, prices: Prices | None = None,
                 cost: TextCost | None = None, report=None, since_load: bool = True, account: str | None = None):
        self.model, self.store, self.budget = model, store, budget
        # `account`: another model of the run (the judge), counted apart (usage.ACCOUNT.calls...); the budget is
        # the run's, over every account (`share_budget`)
        self.prefix = STAT if account is None else f"{STAT}{account}."
        self.partners: list[Meter] = []
        # progress(stage, done, total): "tokens" (tokens, calls; "tokens~" where some are estimated), "cost" (cost, 0)
        self.report = report
        self.prices = (prices or Prices()).merged(getattr(model, "prices", None))
        self.text_cost = cost or TextCost.of_task(getattr(model, "task", None))
        # a generative task's answers are what the model wrote: count them (a label's raw answer may be a repr)
        self.written_from_answers = bool(getattr(getattr(model, "task", None), "generative", False))
        usage = getattr(model, "usage", None)
        self.counted = usage if isinstance(usage, Usage) else None
        # `since_load`: the model was loaded for this run, so what it counted already (its preflight) is the run's;
        # otherwise (a model object used by several runs) only what it counts from now on
        self._seen = None if self.counted is None else (
            dict.fromkeys(self.counted.numbers(), 0) if since_load else self.counted.numbers())
        before = _account(store.stats() if store is not None else {}, self.prefix)
        self.before = before  # what the earlier sessions of this run spent
        self.session: dict[str, float] = {}
        self._ratio_in = 1.0  # measured / estimated tokens read, learnt from the batches the model counted
        self._in_flight = 0  # calls counted by `sending`, not yet settled by `record`
        if self.counted is not None and since_load and store is not None:
            self.record(())  # what loading it cost (an API's preflight request), stored now: a kill may come next

    def spent(self) -> dict[str, float]:
        """Everything this run spent, the earlier sessions included."""
        keys = set(self.before) | set(self.session)
        return {k: self.before.get(k, 0) + self.session.get(k, 0) for k in keys}

    def share_budget(self, other: "Meter") -> None:
        """Count `other`'s spending against this meter's budget, and this one's against its own."""
        self.partners.append(other)
        other.partners.append(self)
        other.budget = self.budget

    def _budget_spent(self) -> dict[str, float]:
        """What the budget counts: this account's spending and its partners'."""
        total = dict(self.spent())
        for p in self.partners:
            for k, v in p.spent().items():
                total[k] = total.get(k, 0) + v
        return total

    def _batch_estimate(self, texts: Sequence[str]) -> dict[str, float]:
        tin, tout = estimated(texts, self.text_cost)
        tin = int(tin * self._ratio_in)
        return {"calls": len(texts), "tokens": tin + tout, "cost": self.prices.cost(tin, tout)}

    def check(self, texts: Sequence[str], force: bool = False) -> None:
        """Raise BudgetReached if asking `texts` (one model batch) would exceed the budget (`force`: in any case,
        the batches sent together having been cut before it by `fitting`)."""
        if self.budget is None:
            return
        self.record(())  # what the model counted since the last batch (its preflight, the start-up check)
        spent = self._budget_spent()
        now = {"calls": spent.get("calls", 0), "tokens": spent.get("tokens_in", 0) + spent.get("tokens_out", 0),
               "cost": spent.get("cost", 0.0)}[self.budget.kind]
        next_ = self._batch_estimate(texts)[self.budget.kind]
        if force or now + next_ > self.budget.amount:
            shown = f"{now:.4g}" if self.budget.kind == "cost" else f"{int(now)}"
            # `texts`: one model call's inputs, originals and mutants together (not --batch-texts' dataset texts)
            raise BudgetReached(f"the budget {self.budget} is reached: {shown} {self.budget.kind} spent, and the "
                                f"next model call, on {len(texts)} inputs (originals and their mutants), would take "
                                f"about {next_:.4g} more",
                                where="--budget", fix="Every answer so far is kept in the run folder; run the same "
                                "command with a larger --budget (it counts what was spent) or without one to "
                                "continue where it stopped.")

    def fitting(self, chunks: Sequence[Sequence[str]]) -> int:
        """How many of `chunks` (model batches sent together, e.g. over Ray) fit in the budget, in order."""
        if self.budget is None:
            return len(chunks)
        spent = self._budget_spent()
        total = {"calls": spent.get("calls", 0), "tokens": spent.get("tokens_in", 0) + spent.get("tokens_out", 0),
                 "cost": spent.get("cost", 0.0)}[self.budget.kind]
        for i, chunk in enumerate(chunks):
            total += self._batch_estimate(chunk)[self.budget.kind]
            if total > self.budget.amount:
                return i
        return len(chunks)

    def sending(self, texts: Sequence[str]) -> None:
        """Before a call on `texts` is sent: its calls (one a text) counted now, in the store, and settled by the
        next `record` with what the model counted. A run killed (kill -9) while the call is out has counted what
        it sent: on a paid API, no money spent goes unreported."""
        self._in_flight += len(texts)
        if self.store is not None and texts:
            self.store.add_stats({self.prefix + "calls": len(texts), self.prefix + "calls_in_flight": len(texts)})

    def _settled(self, delta: dict[str, float]) -> dict[str, float]:
        """What `record` adds to the store: `delta` less the calls `sending` counted already."""
        if not self._in_flight:
            return delta
        stored = dict(delta)
        stored["calls"] = stored.get("calls", 0) - self._in_flight
        stored["calls_in_flight"] = -self._in_flight
        self._in_flight = 0
        return stored

    def record(self, texts: Sequence[str], answers: Sequence[str] | None = None) -> None:
        """After a batch of `texts` was sent: add what it cost (the model's own count, else an estimate). `answers`:
        what the model wrote for each text, when at hand: the tokens written are then estimated from them, not
        taken as the task's longest answer (a generative task's max_tokens) for every call."""
        if self.counted is not None:
            now = self.counted.numbers()
            delta = {k: now[k] - self._seen[k] for k in now}
            self._seen = now
            if not any(delta.values()):
                if self._in_flight and self.store is not None:  # counted as sent, and nothing was: settled
                    self.store.add_stats({self.prefix + k: v for k, v in self._settled({}).items() if v})
                return
            est_in, _ = estimated(texts, self.text_cost)
            # learn how far the estimate is from the model's count (a batch alone: no preflight or check in it)
            if est_in and delta["tokens_in"] and delta["calls"] == len(texts) and not delta["estimated_calls"]:
                self._ratio_in = delta["tokens_in"] / est_in
        elif not texts:
            return
        else:
            tin, tout = estimated(texts, self.text_cost)
            if self.written_from_answers and answers is not None and len(answers) == len(texts):
                tout = sum(estimate_tokens(a or "") for a in answers)
            delta = {"calls": len(texts), "tokens_in": tin, "tokens_out": tout, "retries": 0,
                     "estimated_calls": len(texts)}
        if self.prices.given:
            delta["cost"] = self.prices.cost(delta["tokens_in"], delta["tokens_out"])
        else:
            delta["unpriced_calls"] = delta["calls"]
        for k, v in delta.items():
            self.session[k] = self.session.get(k, 0) + v
        if self.store is not None:
            self.store.add_stats({self.prefix + k: v for k, v in self._settled(delta).items() if v})
        if self.report is not None:
            spent = self.spent()
            self.report("tokens~" if spent.get("estimated_calls") else "tokens",
                        int(spent.get("tokens_in", 0) + spent.get("tokens_out", 0)), int(spent.get("calls", 0)))
            if self.prices.given:
                self.report("cost", spent.get("cost", 0.0), 0)


def _account(stats: dict[str, float], prefix: str) -> dict[str, float]:
    """One account's stats (`usage.calls`...; `usage.judge.calls`... for the judge), its prefix taken off."""
    return {k[len(prefix):]: v for k, v in stats.items() if k.startswith(prefix) and "." not in k[len(prefix):]}


def _numbers(u: dict[str, float]) -> dict:
    estimated_calls = int(u.get("estimated_calls", 0))
    return {
        "calls": int(u.get("calls", 0)), "tokens_in": int(u.get("tokens_in", 0)),
        "tokens_out": int(u.get("tokens_out", 0)), "retries": int(u.get("retries", 0)),
        # the cost of the calls made with prices given; null when none had any
        "cost": round(u["cost"], 6) if "cost" in u else None,
        "unpriced_calls": int(u.get("unpriced_calls", 0)),
        "estimated": estimated_calls > 0, "estimated_calls": estimated_calls,
    }


JUDGE_ACCOUNT = "judge"


def summary_section(stats: dict[str, float], settings: dict) -> dict:
    """summary.json's `usage`: from the run's stats, every session summed; `judge`, the same numbers for a
    generative task's judge model (its calls count against the run's --budget too)."""
    out = {**_numbers(_account(stats, STAT)), "budget": settings.get("checks.budget")}
    if settings.get("judge_model") is not None:
        out["judge"] = _numbers(_account(stats, f"{STAT}{JUDGE_ACCOUNT}."))
    return out


__all__ = ["BUDGET_KINDS", "Budget", "BudgetReached", "CHARS_PER_TOKEN", "EXIT_BUDGET", "JUDGE_ACCOUNT", "Meter", "Prices", "TextCost",
           "Usage", "estimate_tokens", "estimated", "parse_budget", "summary_section"]
