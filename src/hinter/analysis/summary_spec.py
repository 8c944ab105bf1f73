"""summary.json declared once: every entry's name, where it lives, what computes it and one line of doc.

`measures.summary` builds the file; this module says what is in it. The gate (`report.gate.check_paths`) learns
from it which paths a `--fail-on` condition may name before a run, `reference_markdown()` renders the reference
(docs/summary-schema.md is its output, checked by tests/test_summary_spec.py), and a test checks that a real
run's summary has exactly the declared keys.
"""
from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 2


@dataclass(frozen=True)
class Entry:
    """One row of the reference: the JSON `keys` it declares, and how they are computed and read.

    `shown`: how the row names them (default: the keys); `computed`: the function that computes them;
    `fields`: for a run-wide object, its numeric members a condition may name (dotted for nested ones);
    `data_keyed`: its keys depend on the data (attributes, groups, patterns): a condition's path is checked
    by its first part only before a run; `optional`: present only when the doc line says so."""

    keys: tuple[str, ...]
    computed: str
    doc: str
    shown: str | None = None
    fields: tuple[str, ...] = ()
    data_keyed: bool = False
    optional: bool = False

    def name(self) -> str:
        return self.shown or ", ".join(f"`{k}`" for k in self.keys)


# the per-kind totals of the evaluative and occupational sections
_TOTALS = tuple(f"totals.{kind}.{k}" for kind in ("atomic", "intersectional") for k in ("mutants", "valid", "tested",
                                                                                           "biased"))

_COMBO = "measures.combination_measures"
# Per attribute (`atomic.ATTRIBUTE`) and combination (`intersectional.COMBO`); their sums in `totals.KIND`.
COMBINATION = (
    Entry(("order",), _COMBO, "1 for atomic, k for a combination of k attributes (not in `totals`)", optional=True),
    Entry(("mutants",), _COMBO, "mutants generated"),
    Entry(("valid", "discarded", "discarded_share", "discarded_share_ci"), _COMBO,
          "passed / failed the dependency invariant (and `--grammar`, when given); discarded / mutants"),
    Entry(("discarded_by",), "store.discard_reason_counts",
          "the discarded mutants by reason, `{reason: count}` (the counts sum to `discarded`; reasons with no "
          "mutant left out): `sentence_count` (the mutant's sentence count differs from the original's), `pos` (a "
          "changed sentence's part-of-speech tags differ), `deps` (its dependency labels differ), `too_long` (only "
          "with `--validity reference`: a changed sentence is over 500 characters), `grammar` (only with "
          "`--grammar`: the mutant passed the invariant, but its changed sentences' grammar score fell by more than "
          "the option allows), `unrecorded` (a run stored before reasons were). A mutant stops at the first failing "
          "sentence the engine finds; with several, the reason is that sentence's",
          fields=("sentence_count", "pos", "deps", "too_long", "grammar", "unrecorded")),
    Entry(("tested",), _COMBO, "valid mutants whose outcome and whose original's outcome are both parseable"),
    Entry(("biased", "error_rate", "error_rate_ci"), _COMBO,
          "tested mutants whose outcome differs from the original's; biased / tested"),
    Entry(("unparseable",), _COMBO, "valid mutants with an unparseable outcome (never bias, never no bias)"),
    Entry(("unseen",), _COMBO, "valid mutants whose every change lies beyond what a truncating model read (not "
          "tested, never \"no bias\"; `--window` tests them)"),
    Entry(("unasked",), _COMBO, "valid mutants that `--adaptive` left unasked once the cells they would inform were "
          "settled (not tested, never \"no bias\"; 0 in a full campaign)"),
    Entry(("hidden", "hidden_rate", "hidden_rate_ci"), _COMBO,
          "(intersectional) biases whose atomic components are all valid and all agree with the original; "
          "hidden / biased", optional=True),
    Entry(("strictly_hidden",), _COMBO,
          "(order ≥ 3) hidden, and no valid lower-order sub-combination is a bias (in `biases.csv` and "
          "`instances.csv`, order-2 rows carry it too: equal to `hidden`)", optional=True),
    Entry(("discarded_tested", "discarded_biased"), _COMBO,
          "(only with `--query-discarded`) discarded mutants the model answered, and those whose answer flipped",
          optional=True),
    Entry(("evaluative",), "measures.evaluative_counts",
          "mutants using an evaluative pair (\"man\" -> \"ugly man\"): `mutants`, `valid`, `tested`, `biased` "
          "(absent for a run recorded before the check)", fields=("mutants", "valid", "tested", "biased"),
          optional=True),
    Entry(("occupational",), "measures.occupational_counts",
          "mutants applying an occupational pair (the dictionary's `*_job.csv`: \"manager\" -> \"cashier\", a "
          "stereotyped occupation, not the person's gender): `mutants`, `valid`, `tested`, `biased`, `error_rate`, "
          "`error_rate_ci` (only in the combinations that have some; `--no-jobs` leaves those pairs out)",
          fields=("mutants", "valid", "tested", "biased", "error_rate"), optional=True),
)

_SUMMARY = "measures.summary"
_FINDINGS = "measures.findings_section"
RUN = (
    Entry(("schema_version",), "summary_spec.SCHEMA_VERSION", str(SCHEMA_VERSION)),
    Entry(("settings",), "store.settings", "the run's settings (model fingerprint, attributes, order, dictionary, "
          "samples, seed...)", data_keyed=True),
    Entry(("texts",), "store.originals_counts", "originals tested"),
    Entry(("atomic", "intersectional"), _COMBO, "per attribute / combination, the table above", data_keyed=True,
          shown="`atomic.ATTRIBUTE`, `intersectional.COMBO`"),
    Entry(("totals",), "measures.summary (totals)",
          "`atomic` and `intersectional`: the table above summed", data_keyed=True, shown="`totals.KIND`"),
    Entry(("originals_with_bias",), _SUMMARY, "`count` of originals with a biased valid mutant, "
          "`of_originals_with_valid_mutants`, `rate`, `rate_ci`",
          fields=("count", "of_originals_with_valid_mutants", "rate")),
    Entry(("originals_venn",), "store.venn", "originals whose biases are `atomic_only`, `intersectional_only`, "
          "`both`", fields=("atomic_only", "intersectional_only", "both")),
    Entry(("truth_table",), "measures.truth_table", "MutaInT Table 6: `rows`, one per pattern (all 2^(k+1) "
          "listed): `components` (bias of each atomic component, in the order of `attributes`), `intersectional` "
          "(bias of the mutant), `count`, `hidden` (the pattern no component flips, mutant flips); `counted` "
          "mutants (the mutant and all its components valid and answered), `left_out` (the others)",
          data_keyed=True, shown="`truth_table.COMBO`"),
    Entry(("group_bias",), "measures.group_bias", "MutaInT Table 4: `groups` keyed by target group "
          "(combinations: target groups joined by `+`, in attribute order), each with `tested`, `biased`, "
          "`error_rate`, `error_rate_ci`, `flagged` (rate above the family's `mean_error_rate`, the unweighted mean "
          "of its groups' rates). A flagged group is a description, not a test: the report names a group only "
          "from a finding that holds up", data_keyed=True,
          shown="`group_bias.atomic.ATTRIBUTE`, `group_bias.intersectional.COMBO`"),
    Entry(("top_pairs",), "measures.top_pairs", "the word pairs whose atomic mutants expose bias most often (at "
          "most 20, most biased mutants first; pairs with none left out): each `attribute`, `source_group`, "
          "`target_group`, `word`, `replacement`, `tested`, `biased`, `error_rate`, `error_rate_ci` (Wilson): "
          "whether a group flips the model, or one word of it"),
    Entry(("attribution",), "measures.attribution_summary", "`totals` and `by_combination`: intersectional "
          "`biases`, `flipped_by_size` (how many are already flipped by a sub-combination of that size, the "
          "smallest one), `no_sub_combination_flips`, `of_which_hidden`, `of_which_with_untested_parts` (a part "
          "discarded or unanswered, so not conclusive)", data_keyed=True),
    Entry(("false_positives_avoided",), "measures.false_positives", "`queried` (`--query-discarded` on), and per "
          "`atomic` / `intersectional`: `discarded_tested`, `discarded_biased` (biases the invariant kept out), "
          "`valid_biased`, `ratio_to_valid_biases`", data_keyed=True),
    Entry(("evaluative",), "measures.evaluative_counts", "`pairs` (the run's evaluative pairs) and `totals` per "
          "`atomic` / `intersectional`: `mutants`, `valid`, `tested`, `biased` that use one (absent for a run "
          "recorded before the check)", fields=("pairs", *_TOTALS),
          optional=True),
    Entry(("occupational",), "measures.occupational_counts", "`dictionary_pairs` (the occupational pairs of the "
          "run's dictionary), `option` (`--no-jobs`, which leaves them out) and `totals` per `atomic` / "
          "`intersectional`: `mutants`, `valid`, `tested`, `biased` that apply one (absent when the run applied "
          "none)", fields=("dictionary_pairs", *_TOTALS),
          optional=True),
    Entry(("unparseable",), "store.originals_counts, store.unparseable_answers", "unparseable outcomes of "
          "`originals` and `mutants`; `originals_model_errors`; `answers`: texts the model answered in a form the "
          "task cannot read", fields=("originals", "mutants", "originals_model_errors", "answers")),
    Entry(("first_errors",), "store.first_failures", "the first distinct model errors, then unparseable answers, "
          "as stored (at most 3)", data_keyed=True),
    Entry(("health",), "health.health", "`complete` (all texts done), `texts_done`, `texts_total`, "
          "`model_calls`, `failed_calls` (model errors and unparseable answers), `failed_share`, "
          "`originals_unanswered`, `texts_to_ask_again` (texts with a model error among their answers, which the "
          "same command or `hinter resume` asks again, up to 3 runs). A run whose `failed_share` exceeds `--max-failed-share` (0.05) or whose "
          "`originals_unanswered` exceeds `--max-failed-originals` (0) ends with exit 3, and `check` / `--fail-on` "
          "refuse it (exit 3) unless `--allow-model-errors`; `check` refuses an incomplete run, and `check` / "
          "`--fail-on` refuse a run that tested no mutant (exit 3, saying why: no dictionary word matched, every "
          "mutant discarded, no usable answer)",
          fields=("complete", "texts_done", "texts_total", "model_calls", "failed_calls", "failed_share",
                  "originals_unanswered", "texts_to_ask_again")),
    Entry(("measures",), _FINDINGS, "what the findings measure, one section whatever the task: `kind` (`labels`: "
          "the model's answers are labels; `free text`: they are texts judged by aspects), `records` (one per "
          "measure: `name` (the label of interest, or the aspect), `of` (`label share`, `score` or `aspect`), "
          "`more` / `less` (a positive / negative effect in words), `bound` (the values' range: 1 for shares, null "
          "when unbounded), `unit`, `test` (how a cell is judged on it)), `alpha`, `tested`, `significant`, "
          "`population_hidden`", fields=("alpha", "tested", "significant", "population_hidden")),
    Entry(("findings",), "findings.measured_findings", "one per measure and cell (an attribute's source -> target "
          "group; for intersectional cells the tuple of them), the same keys for a label and a free-text aspect: "
          "`measure` (its `measures.records` name), `kind`, `components` [{`attribute`, `source_group`, "
          "`target_group`}], `tested`, `texts`, `texts_changed`, `flips` (mutants whose outcome flips; an aspect: "
          "whose answers differ beyond the original's own spread), `transitions` {\"A->B\": n} and `toward` (a "
          "label's; `{}` and null for an aspect), `direction` (the effect in words: \"less positive\", \"more "
          "often Negative\"; null when none), "
          "`effect`, `effect_ci` (the interval of the same test as `p_value`, inverted: it excludes 0 exactly when "
          "p <= alpha), `cohens_h` (the effect's size, Cohen's h: 2 asin √p_mutant − 2 asin √p_original, p the "
          "originals' and the mutants' mean share, per text then over texts; in [−π, π], the sign of `effect`, about "
          "0.2 small, 0.5 medium, 0.8 large, comparable across base rates where `effect` is not; null for a score or "
          "an unbounded aspect; a description, not a test: `q_value` says whether it holds up), `p_value`, "
          "`q_value`, `significant`, `testable` (false where the cell cannot be "
          "significant), `note` (why), `summary` (the finding in words); a cell of occupational pairs (a job "
          "title, not the person's gender; named `gender (occupation)` in the report) has `occupational: true`, on "
          "the finding and its component; intersectional cells also `interaction`, "
          "`interaction_ci`, `interaction_q`, `population_hidden`; in a multi-label analysis one per cell and "
          "label; `evaluative_tested`, `evaluative_flips` (an aspect: `evaluative_differ`) when the run recorded its "
          "evaluative pairs. A significant finding with 0 `flips` is a score shift (or, with `--repeats` or "
          "samples, a shift of the answers' distribution). The statistics: docs/findings.md, docs/generative.md. "
          "Deprecated, kept for a release: `label` (a multi-label finding's; read `measure`), `aspect` and `differ` "
          "(a free-text finding's; read `measure` and `flips`). An `--adaptive` run's findings add `e_value`, "
          "`settled` (`effect`, `no "
          "effect`: nothing beyond `--min-effect`, or `undecided`), `texts_tested` (the texts its test used) and, "
          "intersectional, `interaction_e_value` (the sequential tests that decided when the cell stopped asking; "
          "docs/adaptive.md)", data_keyed=True),
    Entry(("findings_analysis",), _FINDINGS, "deprecated (read `measures`; kept for a release, with what only it "
          "holds): `label` (the label of interest: `--label`, else the task's first "
          "label as the answers spell it; null in a multi-label analysis), `label_source` (where it came from), "
          "`measure` (`score` or `label`), `alpha`, `tested`, `significant`, `population_hidden`; a multi-label "
          "task (or answers that are label sets) without `--label`: `labels` (every label is of interest), "
          "`family` (all labels' cells in one Benjamini-Hochberg family), `labels_moved` (labels with a "
          "significant finding); a generative task: `measure` `aspects`, `aspects` (their names) and `samples` "
          "(answers per version); with the judge aspect, `judge` {`model`, `rubric`} and `judge_agreement` "
          "{`texts`, `pairs`, `pairs_differing`, `pairs_identical`, `agreement`, `note`}: the judge's agreement "
          "with itself on pairs of the original's own samples (docs/generative.md); an `--adaptive` run: `family` "
          "`adaptive` {`label`, `min_effect`, `cells` {`effect`, `no_effect`, `undecided`}, `cells_bound`}; a run "
          "with occupational cells: `occupational` {`cells`, `significant`, `option`: `--no-jobs`}", fields=("alpha", "tested", "significant", "population_hidden")),
    Entry(("significant_findings", "population_hidden"), _FINDINGS, "how many cells hold up (q <= alpha), and "
          "how many intersectional cells are population-hidden (a generative task: over every aspect)"),
    Entry(("self_flip",), "findings.self_flip_rate", "with `--repeats`: the model's own flip rate (two answers "
          "on one original differ) with its 95% interval `ci` and `texts`; null otherwise",
          fields=("rate", "texts")),
    Entry(("determinism",), "engine.check_determinism", "the start-up check: `deterministic` (true, false, or "
          "null when the model failed on it, or when a generative task's samples measure the model's own variation "
          "instead, or when `--determinism-probes 0` skipped it), `detail` and `probes` (the copies asked; absent "
          "in runs made before the option); when false or skipped and the run has no `--repeats`, the report "
          "says so first", data_keyed=True),
    Entry(("overlaps_skipped", "model_calls", "model_errors", "sentences_tagged", "sentences_parsed"),
          "store.stats", "work done"),
    Entry(("seconds",), "store.stats", "time per stage, `{stage: seconds}`", data_keyed=True),
    Entry(("usage",), "usage.summary_section", "what the model cost, every session of the run summed: `calls` "
          "(requests made; answers reused from the run folder cost none), `tokens_in`, `tokens_out` (the model's own "
          "count where it gives one: an OpenAI-compatible API's `usage`, the embedded GGUF model), `retries`, "
          "`estimated` (true when some calls' tokens are estimated, about 4 characters a token) and "
          "`estimated_calls`, `cost` (tokens times `--price-in` / `--price-out` per million tokens; null without "
          "prices), `unpriced_calls` (calls made with no price given: not in `cost`), `budget` (null without "
          "`--budget`; else `budget`, `reached`, `incomplete_cells`: the attribute combinations with a mutant not "
          "yet asked about, `texts_done`, `texts_total`); `judge` (a generative task with a judge model: the same "
          "numbers for the judge's calls, one per distinct answer it reads; `--budget` counts them too). "
          "docs/usage.md",
          fields=("calls", "tokens_in", "tokens_out", "retries", "cost", "estimated_calls", "unpriced_calls")),
    Entry(("person_only_skipped",), "store.stats", "English runs without `--any-occurrence` (before issue 40: with "
          "`--person-only`): occurrences of dictionary words left alone because they do not refer to a person",
          optional=True),
    Entry(("repairs",), "store.stats", "English runs, `--repair`, a pack whose pronouns follow a name: repair "
          "edits made, per kind (`a/an`, `number`, `pronoun`)", data_keyed=True, optional=True),
    Entry(("triage",), "triage.section", "only when the run folder holds a `triage.json`: see below",
          data_keyed=True, optional=True),
)


def data_keyed_sections() -> tuple[str, ...]:
    """Top-level sections whose keys depend on the data: a condition into them is checked by name only."""
    return tuple(k for e in RUN if e.data_keyed for k in e.keys if k not in ("atomic", "intersectional", "totals"))


def skeleton(attributes: tuple[str, ...] | list[str], order: int) -> dict:
    """A summary with every declared path a condition may name, zeros for values, for the combinations that
    `attributes` up to `order` make (`report.gate.check_paths` parses conditions against it before a run)."""
    import itertools
    table: dict = {}
    for e in COMBINATION:
        for k in e.keys:
            table[k] = {f: 0 for f in e.fields} if e.fields else 0
    out: dict = {"totals": {"atomic": table, "intersectional": table},
                 "atomic": {a: table for a in attributes},
                 "intersectional": {"+".join(c): table for k in range(2, min(order, len(attributes)) + 1)
                                    for c in itertools.combinations(sorted(attributes), k)}}
    for e in RUN:
        for k in e.keys:
            if k in out or e.data_keyed:
                continue
            if not e.fields:
                out[k] = 0
                continue
            node = out.setdefault(k, {})
            for f in e.fields:
                *path, last = f.split(".")
                at = node
                for p in path:
                    at = at.setdefault(p, {})
                at[last] = 0
    return out


_INTRO = """# summary.json, schema_version {version}

<!-- Generated by `hinter.analysis.summary_spec.reference_markdown()` from the declaration in src/hinter/analysis/summary_spec.py:
     edit that, then run `python -c "import hinter.analysis.summary_spec as s; print(s.reference_markdown(), end='')" >
     docs/summary-schema.md`. tests/test_summary_spec.py checks that this file matches. -->

`OUT/summary.json` holds every measure of a run, computed from `OUT/run.sqlite` alone (`hinter.analysis.measures.summary`;
definitions in [method.md](method.md), "Measures"). `hinter run` writes it at the end of a run and
`hinter report` rewrites it from the store, so it always matches the page. Version 2 only **adds** keys to
version 1; every version-1 key keeps its name and meaning.

Rates are `null` when their denominator is 0. Every rate `X` has `X_ci`: its 95% Wilson score interval
`[low, high]` (also `null` when the denominator is 0; `hinter.analysis.stats.wilson`, rounded to 6 decimals).
"""

_COMBINATION_HEAD = """## Per attribute and combination

`atomic` (keyed by attribute, e.g. `gender`) and `intersectional` (keyed by the sorted attributes joined by
`+`, e.g. `gender+race`):
"""

_COMBINATION_TAIL = """`totals.atomic` and `totals.intersectional`: the same counts summed over attributes /
combinations, with their rates and intervals (`strictly_hidden` when the run has order ≥ 3), and `discarded_by` summed.
"""

_TAIL = """## Paths, for `--fail-on` and `hinter.testing`

A condition is `PATH OP NUMBER` with OP one of `> >= < <= == !=`. PATH is a dotted path into this file; `*`
matches every key at its level (the condition holds if it holds for any match). A path that does not resolve
as written is read under `totals`, then under `totals.*`. Before a run, `--fail-on` paths are checked against
this declaration (sections keyed by data, such as `group_bias`, by their name only):

| condition | reads |
|---|---|
| `intersectional.error_rate>0.05` | `totals.intersectional.error_rate` |
| `hidden>0` | `totals.*.hidden` (only the intersectional totals have it) |
| `biased>0` | any bias at all (`totals.atomic.biased`, `totals.intersectional.biased`) |
| `intersectional.*.error_rate>0.1` | any combination above 10% |
| `intersectional.gender+race.hidden_rate>=0.5` | one combination |
| `group_bias.atomic.gender.groups.*.error_rate>0.2` | any gender target group |
| `originals_with_bias.rate>0.1` | run-wide |
| `significant_findings>0` | any finding that holds up (controls false discoveries over all cells) |
| `population_hidden>0` | any combination treated worse than its parts predict, with no part significant alone |

A `null` measure never satisfies a condition. An unknown path or a malformed condition is an input error (exit 2).
A run that tested no mutant fails every gate (exit 3), whatever its conditions.

## Other files

Every file that names a text gives `text_id` (the text's position among those read, from 0) and `source_id`: the
dataset's own id of the text (its `id` field or column), or the `text_id` again when the dataset has none. The
report's cards show the same (`id X · text #N`).

- `biases.csv` (every run, one layout for labels and free text): one row per bias: `text_id, source_id, order,
  attributes, replacements, hidden, strictly_hidden, measure` (what changed: `outcome` for a label task, whose
  answer flipped; for a free-text task the aspects on which the mutant's answers differ, joined by `+`)`,
  original_outcome, mutant_outcome` (a label task's; empty for free text, whose answers are below)`, differs_on,
  hidden_on` (the aspects on which the mutant differs, and on which it is hidden; empty for a label task)`,
  original_answers, mutant_answers` (free text: every sample, a JSON list; empty for a label task)`, original_text,
  mutant_text, mutant_raw` (a label task's raw answer). A free-text run's file had no `measure`,
  `original_outcome`, `mutant_outcome` and `mutant_raw` before, a label run's no `measure`, `differs_on`,
  `hidden_on`, `original_answers` and `mutant_answers`: the columns of both, in their order, are kept.
- `instances.csv`, `instances.parquet` (`hinter report`; Parquet needs `pyarrow`, the `parquet` extra): one row per
  bias: `mutant_id, text_id, source_id, kind, order, attributes, target_groups, replacements, hidden,
  strictly_hidden, flipped_by` (the smallest sub-combinations that already flip the outcome, `none` when none does)`,
  original_outcome, mutant_outcome, component_outcomes, original_text, mutant_text, mutant_raw`.
- A generative run's (answers are texts, docs/generative.md) `instances.csv`: `mutant_id` to `strictly_hidden` as above, `differs_on,
  hidden_on`, then per aspect `ASPECT_original, ASPECT_mutant` (the means over the samples, the original's as masked
  for this mutant)`, ASPECT_p, ASPECT_differs, ASPECT_hidden`, then `original_answers, mutant_answers,
  component_answers` (a JSON object: each attribute changed alone and its answers, null where discarded)`,
  original_text, mutant_text`.
- `diff.json` (`hinter report --baseline` or `hinter diff --json`): `counts` (`new`, `fixed`, `both`, each with
  `_hidden`), `by_combination`, `unmatched_biases`, `warnings` (settings that differ), `instances` per category,
  each naming its text in both runs (`text_id_a`, `source_id_a`, `text_id_b`, `source_id_b`).
- `triage` (only when the run folder holds a `triage.json`, written by `hinter serve`): `verdicts`, `expired`,
  `unmatched` (verdicts about no bias of this run), `flips`, `reviewed`, `confirmed`, `dismissed`, `precision`
  (confirmed / reviewed) and `precision_ci` (95% Wilson), `date`, and `gate`: per combination the dismissed biases
  (`biased`, `hidden`, `strictly_hidden`), `texts_with_bias` left, and the findings dismissed whole. The gate
  (`--fail-on`, `hinter check`) reads the summary less these; the other sections are the run's as measured.
"""


def _table(entries) -> str:
    rows = ["| key | meaning | computed by |", "|---|---|---|"]
    rows += [f"| {e.name()} | {e.doc} | `{e.computed}` |" for e in entries]
    return "\n".join(rows) + "\n"


def reference_markdown() -> str:
    """docs/summary-schema.md: the reference of summary.json, rendered from this declaration."""
    run = [e for e in RUN if e.keys not in (("atomic", "intersectional"), ("totals",))]
    return "\n".join([_INTRO.format(version=SCHEMA_VERSION), _COMBINATION_HEAD, _table(COMBINATION),
                      _COMBINATION_TAIL, "## Run-wide\n", _table(run), _TAIL])
