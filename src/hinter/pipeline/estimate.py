"""A campaign's calls and tokens, counted before the first model call (`hinter run --dry-run`, and the estimate a
run on an API model prints first).

The texts a model is asked about are known only once mutation and validity have run: the distinct texts of the
campaign (the originals and the mutants asked about, once each: the run's cache never asks a text twice) times
--repeats (a generative task: its samples). `exact=True` runs both stages, as the run will (with --suite the
verdicts are recorded: instant); `exact=False` runs mutation alone and counts every mutant as if valid, an upper
bound (with --query-discarded it is exact), which costs no parse. Tokens are estimated from characters
(usage.CHARS_PER_TOKEN) with the task's prompt around each text and its answer's length.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

from hinter.config import RunConfig
from hinter.pipeline.stages import Mutate, TextBatch, Verdicts, answers_per_text, text_batches, texts_to_ask
from hinter.records import TextRecord, text_key
from hinter.usage import Prices, TextCost


@dataclass
class Estimate:
    """What a campaign (the texts not yet stored) will ask: `texts` distinct, `calls` (texts x repeats), estimated
    `tokens_in` / `tokens_out`, `cost` (None without prices); `upper_bound`: validity did not run, every mutant
    counted as valid; `cells`: the attribute combinations with a mutant to ask about."""

    texts: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    upper_bound: bool = False
    adaptive: bool = False     # --adaptive asks fewer: the count is the full campaign's, an upper bound
    originals: int = 0
    mutants: int = 0
    cells: set[str] = field(default_factory=set)

    def as_dict(self) -> dict:
        return {"originals": self.originals, "mutants": self.mutants, "texts": self.texts, "calls": self.calls,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cost": self.cost,
                "upper_bound": self.upper_bound, "tokens_estimated": True}

    def lines(self, repeats: int = 1) -> list[str]:
        at_most = "at most " if self.upper_bound else ""
        times = f" x {repeats} repeats" if repeats > 1 else ""
        cost = "" if self.cost is None else f", cost about {self.cost:.4g} (at the prices given, per million tokens)"
        out = [f"Estimate: {at_most}{self.calls:,} model calls ({self.texts:,} distinct texts{times}: "
               f"{self.originals:,} originals and the mutants asked about), about {self.tokens_in:,} tokens read "
               f"and {self.tokens_out:,} written{cost}."]
        if self.upper_bound:
            out.append("  (an upper bound: validity has not run yet, so every mutant is counted as valid; "
                       "`hinter run --dry-run` runs it for the exact count)")
        if self.adaptive:
            out.append("  (--adaptive asks fewer: this counts every valid mutant; it asks at most three per text "
                       "and undecided cell, and stops asking for a cell once it is settled: docs/adaptive.md)")
        out.append("  Tokens are estimated from characters (about 4 a token) with the task's prompt; the run "
                   "counts the model's own where it reports them.")
        return out


def _verdicts_as_valid(mutate: Mutate, batches) -> Iterator[tuple[TextBatch, Verdicts]]:
    """Mutation alone: every mutant counted valid but those decided before parsing (too long)."""
    for start, texts in batches:
        batch, _ = mutate.batch(start, texts)
        early = batch.early or [None] * len(batch.mutants)
        yield batch, Verdicts([r is None for r in early], list(early))


def count(config: RunConfig, pairs: Iterator[tuple[TextBatch, Verdicts]], cost: TextCost,
          prices: Prices | None = None, upper_bound: bool = False) -> Estimate:
    """Count the calls and tokens of the batches' texts to ask (distinct over the campaign)."""
    e = Estimate(upper_bound=upper_bound, adaptive=config.adaptive)
    n = answers_per_text(config)  # --repeats, or a generative task's samples
    seen: set[str] = set()
    for batch, verdicts in pairs:
        e.originals += len(batch.texts)
        for m, v in zip(batch.mutants, verdicts.valid):
            if v or config.query_discarded:
                e.mutants += 1
                e.cells.add("+".join(m.attributes))
        texts, _ = texts_to_ask(batch, verdicts, config)
        for t in texts:
            k = text_key(t)
            if k in seen:
                continue
            seen.add(k)
            tin, tout = cost.of(t)
            e.texts += 1
            e.tokens_in += tin * n
            e.tokens_out += tout * n
    e.calls = e.texts * n
    if prices is not None and prices.given:
        e.cost = prices.cost(e.tokens_in, e.tokens_out)
    return e


def estimate(config: RunConfig, records: Sequence[TextRecord], *, dictionary=None, suite=None, done=frozenset(),
             exact: bool = True, task=None, prices: Prices | None = None,
             validate: Callable | None = None) -> Estimate:
    """The estimate of the campaign over `records` less the `done` text ids. With a `suite`, its recorded verdicts;
    else mutation with `dictionary` (a campaign's, pipeline.campaign_dictionary) and, when `exact`, `validate`
    (an executor's validate, started)."""
    cost = TextCost.of_task(task)
    batches = text_batches(records, set(done), config.batch_texts)
    if suite is not None:
        return count(config, suite.verdicts(batches), cost, prices)
    mutate = Mutate(config, dictionary)
    if exact:
        from hinter.pipeline.stages import ParsedVerdicts
        return count(config, ParsedVerdicts(mutate, validate).verdicts(batches), cost, prices)
    return count(config, _verdicts_as_valid(mutate, batches), cost, prices, upper_bound=not config.query_discarded)


def incomplete_cells(config: RunConfig, records: Sequence[TextRecord], done: set[int], *, dictionary=None,
                     suite=None) -> list[str]:
    """The attribute combinations with a mutant in a text not yet stored: their counts are incomplete (mutation
    alone, or the suite's mutants: no parse)."""
    batches = text_batches(records, set(done), config.batch_texts)
    cells: set[str] = set()
    if suite is not None:
        for batch, _ in suite.verdicts(batches):
            cells.update("+".join(m.attributes) for m in batch.mutants)
    else:
        mutate = Mutate(config, dictionary)
        for start, texts in batches:
            batch, _ = mutate.batch(start, texts)
            cells.update("+".join(m.attributes) for m in batch.mutants)
    return sorted(cells, key=lambda c: (c.count("+"), c))
