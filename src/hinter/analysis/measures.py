"""Every measure of a run, computed from what the run store returns (pure computation: the store alone speaks
SQL, and anyone can recompute these numbers with SQL on run.sqlite).

Definitions: ../shared/docs/METHOD.md "What a run reports"; the summary.json schema: docs/summary-schema.md.
A valid mutant whose outcome (or whose original's outcome) is unparseable is counted under `unparseable` and
left out of `tested`, the denominator of the error rate: it is neither a bias nor a non-bias.
"""
from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from statistics import fmean

from hinter.analysis import stats
from hinter.analysis.adaptive import decide, plan_of
from hinter.mutation.dictionary import occupational_ids
from hinter.analysis.findings import ALPHA, Measure, Observation, analyse, choose_label, is_label_set, label_set, self_flip_rate
from hinter.generative.judge import AspectObservation, AspectVerdict, aspect_findings
from hinter.generative.judge_aspect import judge_agreement
from hinter.analysis.health import health
from hinter.store.rows import KeyedVerdict, TestedRow
from hinter.store import RunStore
from hinter.analysis.summary_spec import SCHEMA_VERSION
from hinter.models.tasks import FREE_TEXT, task_kind
from hinter.usage import summary_section as usage_section


def _rate(n: int, d: int) -> float | None:
    return round(n / d, 6) if d else None


def wilson(k: int, n: int) -> list[float] | None:
    """95% Wilson score interval of k successes in n trials (`stats.wilson`, rounded for JSON); None when n = 0."""
    if not n:
        return None
    low, high = stats.wilson(k / n, n)
    return [round(low, 6), round(high, 6)]


# What the measures need of one stored mutant: its text, order, attributes, pair ids and target groups (from its
# pair key: no edits unpacked), validity and verdicts.
Verdict = KeyedVerdict


def verdicts(store: RunStore) -> dict[tuple[int, tuple[str, ...]], Verdict]:
    """Every mutant, keyed by (text_id, pair ids): sub-combinations are found by their key."""
    return {(v.text_id, v.pair_ids): v for v in store.keyed_verdicts()}


def _tested(v: Verdict | None) -> bool:
    return v is not None and v.valid and v.bias is not None


def attribution(v: Verdict, by_key: dict) -> dict:
    """The smallest sub-combinations of an intersectional bias's replacements that already flip the outcome.

    `flipped_by`: the pair-id tuples of minimal size among valid, biased sub-combinations ([] when none flips:
    the bias needs every replacement together); `size`: their size (None); `untested`: sub-combinations that
    cannot answer (missing, discarded or unparseable), so an empty `flipped_by` is only conclusive when 0.
    """
    untested, flipped = 0, []
    for k in range(1, v.order):
        for sub in itertools.combinations(v.pair_ids, k):
            s = by_key.get((v.text_id, sub))
            if not _tested(s):
                untested += 1
            elif s.bias and (not flipped or len(flipped[0]) == k):  # keep only the smallest size
                flipped.append(sub)
    return {"flipped_by": [list(s) for s in flipped], "size": len(flipped[0]) if flipped else None,
            "untested": untested}


def combination_measures(store: RunStore) -> dict[str, dict]:
    out = {}
    reasons = store.discard_reason_counts()
    for c in store.combination_counts():
        n, valid, tested, biased = c.mutants, c.valid, c.tested, c.biased
        m = {"order": c.order, "mutants": n, "valid": valid, "discarded": n - valid,
             "discarded_share": _rate(n - valid, n), "discarded_share_ci": wilson(n - valid, n),
             # why the discarded ones were (counts sum to `discarded`)
             "discarded_by": reasons.get(c.attributes, {}),
             "tested": tested, "biased": biased,
             "error_rate": _rate(biased, tested), "error_rate_ci": wilson(biased, tested),
             "unparseable": c.unparseable,
             # valid, but changed only beyond what a truncating model read: not tested, never "no bias"
             "unseen": c.unseen,
             # valid, left unasked by --adaptive once the cells they would inform were settled: not tested
             "unasked": c.unasked}
        if c.order >= 2:
            m["hidden"] = c.hidden
            m["hidden_rate"] = _rate(c.hidden, biased)
            m["hidden_rate_ci"] = wilson(c.hidden, biased)
            if c.order >= 3:
                m["strictly_hidden"] = c.strictly_hidden
        if c.discarded_tested:
            # Biases among discarded mutants: false positives the invariant avoids (only with query_discarded).
            m["discarded_tested"] = c.discarded_tested
            m["discarded_biased"] = c.discarded_biased
        out[c.attributes] = m
    return out


def _totals(per_combo: dict[str, dict], intersectional: bool) -> dict:
    keys = ("mutants", "valid", "discarded", "tested", "biased", "unparseable", "unseen", "unasked") + (("hidden",) if intersectional else ())
    chosen = [m for m in per_combo.values() if (m["order"] >= 2) == intersectional]
    t = {k: sum(m[k] for m in chosen) for k in keys}
    t["discarded_by"] = {}
    for m in chosen:
        for reason, n in m["discarded_by"].items():
            t["discarded_by"][reason] = t["discarded_by"].get(reason, 0) + n
    t["discarded_by"] = dict(sorted(t["discarded_by"].items()))
    t["discarded_share"] = _rate(t["discarded"], t["mutants"])
    t["discarded_share_ci"] = wilson(t["discarded"], t["mutants"])
    t["error_rate"] = _rate(t["biased"], t["tested"])
    t["error_rate_ci"] = wilson(t["biased"], t["tested"])
    if intersectional:
        t["hidden_rate"] = _rate(t["hidden"], t["biased"])
        t["hidden_rate_ci"] = wilson(t["hidden"], t["biased"])
        if any(m["order"] >= 3 for m in chosen):
            t["strictly_hidden"] = sum(m.get("strictly_hidden", 0) for m in chosen)
    return t


def truth_table(by_key: dict) -> dict[str, dict]:
    """MutaInT Table 6: per combination, how many intersectional mutants show each pattern of
    (bias of each atomic component, bias of the intersectional mutant), over those whose components and
    themselves are valid with parseable outcomes. Every pattern is listed, zeros included."""
    counts: dict[str, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))
    excluded: dict[str, int] = defaultdict(int)
    orders = {}
    for v in by_key.values():
        if v.order < 2:
            continue
        orders[v.attributes] = v.order
        comps = [by_key.get((v.text_id, (p,))) for p in v.pair_ids] if _tested(v) else None
        if comps is None or not all(map(_tested, comps)):
            excluded[v.attributes] += 1
            continue
        counts[v.attributes][tuple([c.bias for c in comps]) + (v.bias,)] += 1
    out = {}
    for combo in sorted(orders, key=lambda c: (orders[c], c)):
        k = orders[combo]
        rows = []
        for pattern in itertools.product((False, True), repeat=k + 1):
            comps, inter = pattern[:k], pattern[k]
            rows.append({"components": list(comps), "intersectional": inter, "count": counts[combo].get(pattern, 0),
                         "hidden": inter and not any(comps)})
        out[combo] = {"attributes": combo.split("+"), "rows": rows,
                      "counted": sum(counts[combo].values()), "left_out": excluded[combo]}
    return out


def group_bias(by_key: dict) -> dict:
    """MutaInT Table 4: error rate by target group (atomic, per attribute) and by tuple of target groups
    (intersectional, per combination); a group is flagged where its rate exceeds the unweighted mean rate of
    the groups of its family (attribute or combination)."""
    cells: dict[str, dict[str, dict[str, dict]]] = {"atomic": defaultdict(dict), "intersectional": defaultdict(dict)}
    for v in by_key.values():
        if not _tested(v):
            continue
        kind = "atomic" if v.order == 1 else "intersectional"
        g = cells[kind][v.attributes].setdefault("+".join(v.target_groups), {"tested": 0, "biased": 0})
        g["tested"] += 1
        g["biased"] += int(v.bias)
    out = {}
    for kind, families in cells.items():
        out[kind] = {}
        for family in sorted(families):
            groups = families[family]
            for g in groups.values():
                g["error_rate"] = _rate(g["biased"], g["tested"])
                g["error_rate_ci"] = wilson(g["biased"], g["tested"])
            mean = round(sum(g["error_rate"] for g in groups.values()) / len(groups), 6)
            for g in groups.values():
                g["flagged"] = g["error_rate"] > mean
            out[kind][family] = {"mean_error_rate": mean, "groups": dict(sorted(groups.items()))}
    return out


TOP_PAIRS = 20  # summary.json's top_pairs: the word pairs that flip the model most, this many at most


def top_pairs(by_key: dict, n: int = TOP_PAIRS) -> list[dict]:
    """The word pairs whose atomic mutants expose bias most often, most biased mutants first (then the higher
    rate, then the pair): where a reviewer looks first (is it the group, or the word?). Pairs with no biased
    mutant are left out. Each: `attribute`, `source_group`, `target_group`, `word`, `replacement`, `tested`,
    `biased`, `error_rate` and its Wilson `error_rate_ci`."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for v in by_key.values():
        if v.order == 1 and _tested(v):
            c = counts[v.pair_ids[0]]
            c[0] += 1
            c[1] += int(v.bias)
    ranked = sorted((item for item in counts.items() if item[1][1]),
                    key=lambda item: (-item[1][1], -item[1][1] / item[1][0], item[0]))
    out = []
    for pid, (tested, biased) in ranked[:n]:
        attribute, groups, words = pid.split(":", 2)
        source, target = groups.split(">", 1)
        word, replacement = words.split(">", 1)
        out.append({"attribute": attribute, "source_group": source, "target_group": target, "word": word,
                    "replacement": replacement, "tested": tested, "biased": biased,
                    "error_rate": _rate(biased, tested), "error_rate_ci": wilson(biased, tested)})
    return out


def attribution_summary(by_key: dict) -> dict:
    """Intersectional biases by the size of the smallest sub-combination that already flips the outcome,
    in total and per combination."""
    def empty():
        return {"biases": 0, "flipped_by_size": {}, "no_sub_combination_flips": 0, "of_which_hidden": 0,
                "of_which_with_untested_parts": 0}

    total, per = empty(), defaultdict(empty)
    for v in by_key.values():
        if v.order < 2 or not v.valid or not v.bias:
            continue
        a = attribution(v, by_key)
        for t in (total, per[v.attributes]):
            t["biases"] += 1
            if a["size"] is not None:
                t["flipped_by_size"][str(a["size"])] = t["flipped_by_size"].get(str(a["size"]), 0) + 1
            else:
                t["no_sub_combination_flips"] += 1
                t["of_which_hidden"] += int(bool(v.hidden))
                t["of_which_with_untested_parts"] += int(a["untested"] > 0)
    return {"totals": total, "by_combination": dict(sorted(per.items()))}


def evaluative_pairs(settings: dict) -> set[str] | None:
    """The run's evaluative pair ids (settings "checks.evaluative", lint.evaluative_check); None for a run
    recorded before the check."""
    check = settings.get("checks.evaluative")
    return None if check is None else set(check["pairs"])


def _empty_counts() -> dict:
    return {"mutants": 0, "valid": 0, "tested": 0, "biased": 0}


def counts_using(by_key: dict, pair_ids: set[str] | frozenset[str]) -> dict[str, dict]:
    """Per combination: the mutants that apply one of `pair_ids` (evaluative pairs, occupational ones), the valid,
    tested and biased ones."""
    per: dict[str, dict] = defaultdict(_empty_counts)
    disjoint = pair_ids.isdisjoint
    # counted by (combination, validity, verdict) first, in one pass in C: a run has few of those, and many mutants
    kinds = Counter([(v.attributes, v.valid, v.bias) for v in by_key.values() if not disjoint(v.pair_ids)])
    for (attributes, valid, bias), n in kinds.items():
        c = per[attributes]
        c["mutants"] += n
        if valid:
            c["valid"] += n
            if bias is not None:
                c["tested"] += n
                c["biased"] += n if bias else 0
    return per


def evaluative_counts(by_key: dict, evaluative: set[str], per_combo: dict[str, dict]) -> dict:
    """Per combination (added to `per_combo` as "evaluative") and in total: the mutants that use an evaluative
    pair ("man" -> "ugly man"), the valid ones, and the biased ones: flips a model may owe to a word's sentiment."""
    empty = _empty_counts
    per = counts_using(by_key, evaluative)
    for combo, m in per_combo.items():
        m["evaluative"] = per.get(combo, empty())
    totals = {kind: {k: sum(m["evaluative"][k] for m in per_combo.values() if (m["order"] >= 2) == (kind != "atomic"))
                     for k in empty()} for kind in ("atomic", "intersectional")}
    return {"pairs": len(evaluative), "totals": totals}


def _mark_evaluative(findings: list[dict], rows: list[TestedRow], evaluative: set[str], store: RunStore) -> None:
    """Each finding gains `evaluative_tested` / `evaluative_flips`: its mutants that use an evaluative pair, and
    those whose outcome differs from the original's."""
    tested: Counter = Counter()
    flips: Counter = Counter()
    rows = [r for r in rows if not evaluative.isdisjoint(r.pair_ids)]
    # a mutant's cell is its dictionary pairs: its repairs (a/an, number) are edits, not components
    occupational = occupational_ids(store.settings().get("dictionary"))
    part = {p: (x.attribute, x.source_group, x.target_group, p in occupational) for p, x in store.pairs().items()}
    for r in rows:
        cell = tuple(sorted(map(part.__getitem__, r.pair_ids)))
        tested[cell] += 1
        flips[cell] += int(r.original != r.mutant)
    for f in findings:
        cell = tuple(sorted((c["attribute"], c["source_group"], c["target_group"], bool(c.get("occupational")))
                            for c in f["components"]))
        f["evaluative_tested"], f["evaluative_flips"] = tested[cell], flips[cell]


def occupational_note(findings, settings: dict) -> dict:
    """`findings_analysis.occupational`, when the run applied occupational pairs (dictionary *_job.csv): how many
    cells and significant findings change an occupation rather than the person's gender, and the option that
    leaves those pairs out (they are the paper's, and stay in its campaign by default)."""
    marked = [f for f in findings if f.occupational]
    if not marked:
        return {}
    return {"occupational": {"cells": len(marked), "significant": sum(f.significant for f in marked),
                             "option": "--no-jobs"}}


def occupational_counts(by_key: dict, occupational: frozenset[str], per_combo: dict[str, dict]) -> dict | None:
    """Per combination (added to `per_combo` as "occupational", where it has some) and in total: the mutants
    that apply an occupational pair (manager -> cashier), the valid, tested and biased ones: flips of a stereotyped
    occupation, not of the person's gender. None when the run applied no occupational pair."""
    empty = _empty_counts
    per = counts_using(by_key, occupational)
    if not per:
        return None
    for combo, c in per.items():
        c["error_rate"], c["error_rate_ci"] = _rate(c["biased"], c["tested"]), wilson(c["biased"], c["tested"])
        per_combo[combo]["occupational"] = c
    totals = {kind: {k: sum(c[k] for combo, c in per.items() if (per_combo[combo]["order"] >= 2) == (kind != "atomic"))
                     for k in empty()} for kind in ("atomic", "intersectional")}
    return {"dictionary_pairs": len(occupational), "option": "--no-jobs", "totals": totals}


def false_positives(store: RunStore, per_combo: dict[str, dict]) -> dict:
    """RQ3.2: biases among discarded mutants (asked only with query_discarded) and their ratio to real biases."""
    queried = bool(store.settings().get("query_discarded"))
    out = {"queried": queried}
    for kind, chosen in (("atomic", [m for m in per_combo.values() if m["order"] == 1]),
                         ("intersectional", [m for m in per_combo.values() if m["order"] >= 2])):
        tested = sum(m.get("discarded_tested", 0) for m in chosen)
        fp = sum(m.get("discarded_biased", 0) for m in chosen)
        real = sum(m["biased"] for m in chosen)
        out[kind] = {"discarded_tested": tested, "discarded_biased": fp, "valid_biased": real,
                     "ratio_to_valid_biases": _rate(fp, real) if queried else None}
    return out


def findings_section(store: RunStore, alpha: float | None = None, label: str | None = None,
                     settings: dict | None = None) -> dict:
    """The run's findings (docs/findings.md): one per cell, with direction, effect, p and q values and, for
    intersectional cells, the population-level interaction. `alpha` and `label` (the label of interest)
    default to what the run recorded (`--alpha`, `--label`; `settings`: the store's, when already read), else
    0.05 and the task's first label, spelled as the answers spell it. A multi-label run (a multi-label task, or
    answers that are label sets) without a `label` makes every label of interest: each cell is tested per label,
    all in one Benjamini-Hochberg family."""
    settings = settings if settings is not None else store.settings()
    alpha = alpha if alpha is not None else settings.get("analysis.alpha") or ALPHA
    if task_kind(settings) == FREE_TEXT:
        return aspect_section(store, alpha, settings)
    rows = list(store.tested_rows())
    occupational = occupational_ids(settings.get("dictionary"))  # their cells are counted apart from gender
    # every distinct answer (its uses read it as a set: each is parsed once, not once per mutant)
    answered = {a for r in rows for answers in (r.original_answers, r.mutant_answers) for a in answers}
    explicit = label or settings.get("analysis.label")  # --label now or at the run (older runs: the task's first)
    task_labels = settings.get("analysis.task_labels") or []
    multi = explicit is None and (settings.get("analysis.multi_label") or any(is_label_set(a) for a in answered))
    repeated = any(len(r.mutant_answers) > 1 for r in rows)

    if multi:
        seen = {x for a in answered if a is not None for x in label_set(a)}
        labels = [x for x in task_labels if x in seen] + sorted(seen.difference(task_labels))
        observations = [Observation.from_pair_ids((r.text_id, r.original, r.original_answers),
                                                  r.pair_ids, r.original_answers, r.mutant_answers,
                                                  occupational=occupational) for r in rows]
        analysis = analyse(observations, labels=labels, alpha=alpha)
        source = "every label the answers use" + (" (a multi-label task)" if settings.get("analysis.multi_label")
                                                  else " (the answers are label sets)")
    else:
        fallback = (Counter(r.original for r in {r.text_id: r for r in rows}.values()).most_common(1)[0][0]
                    if rows else None)
        # a run recorded before the task's labels were (no analysis.task_labels) recorded the task's first label
        # as analysis.label by default
        recorded = settings.get("analysis.label")
        wanted = [(label, "--label"), (recorded, "--label" if task_labels else "the label recorded with the run"),
                  (task_labels[0] if task_labels else None, "the task's first label")]
        if settings.get("adaptive_plan"):  # its e-values follow the label its plan tested: the description too
            wanted = [(settings["adaptive_plan"]["label"], "the label --adaptive tested")]
        label, source = choose_label(wanted, answered, fallback)

        def score(scores):
            value = dict(scores).get(label) if scores else None
            return None if value is None else (value,)

        # with repeats the tests compare the answers' distributions (one score per call is not kept)
        observations = [Observation.from_pair_ids((r.text_id, r.original, r.original_answers),
                                                  r.pair_ids, r.original_answers,
                                                  r.mutant_answers, None if repeated else score(r.original_scores),
                                                  None if repeated else score(r.mutant_scores),
                                                  occupational=occupational) for r in rows]
        # an adaptive run's test is on the share of its label (its plan's): the description too
        analysis = analyse(observations, label=label, alpha=alpha,
                           use_scores=False if settings.get("adaptive_plan") else None)
    answers = store.original_answers()
    self_flip = self_flip_rate(answers).to_dict() if answers else None
    out = analysis.to_dict()
    out["label_source"] = source
    out.update(occupational_note(analysis.findings, settings))
    if settings.get("adaptive_plan") and not multi:  # --adaptive: what each cell's sequential test decided
        out["adaptive"] = decide(out["findings"], plan_of(settings["adaptive_plan"], rows,
                                                          occupational_ids(settings.get("dictionary"))))
    evaluative = evaluative_pairs(settings)
    if evaluative is not None:
        _mark_evaluative(out["findings"], rows, evaluative, store)
    if multi:
        records = [Measure.label_share(x) for x in labels]
    else:
        records = [Measure.score(label) if analysis.measure == "score" else Measure.label_share(label)]
    return {**out, "significant": len(analysis.significant()),
            "population_hidden": len(analysis.population_hidden()), "self_flip": self_flip,
            "records": [m.to_dict() for m in records]}


def aspect_section(store: RunStore, alpha: float, settings: dict) -> dict:
    """A generative run's findings (docs/generative.md): per aspect and cell, from the aspect values stored with
    each judged mutant; every finding carries its `aspect`, and the counts run over all aspects."""

    rows = list(store.aspect_rows(tested=True))
    occupational = occupational_ids(settings.get("dictionary"))
    observations = [
        AspectObservation.from_pair_ids(text_id, key.split(" & "), {
            name: AspectVerdict(name, r.original, r.mutant, fmean(r.mutant) - fmean(r.original), r.p_value, r.differs)
            for name, r in records.items()}, occupational)
        for _, text_id, key, records in rows]
    analysis = aspect_findings(observations, alpha=alpha)
    out = analysis.to_dict()
    out.update(occupational_note(analysis.findings, settings))
    significant, hidden = out.pop("significant_findings"), out.pop("population_hidden")
    out.update({"measure": "aspects", "aspects": settings["generative"].get("aspects"),
                "samples": settings["generative"].get("samples")})
    if settings.get("judge_model"):
        out["judge"] = {"model": settings["judge_model"], "rubric": settings.get("judge_rubric")}
        out["judge_agreement"] = judge_agreement_of(store, rows)
    evaluative = evaluative_pairs(settings)
    if evaluative is not None:  # per finding: its mutants that use an evaluative pair, and those that differ
        tested: Counter = Counter()
        differ: Counter = Counter()
        for _, _, key, records in rows:
            pair_ids = key.split(" & ")
            if evaluative.intersection(pair_ids):
                cell = tuple(sorted((*p.split(":", 2)[:2], p in occupational) for p in pair_ids))
                for name, r in records.items():
                    tested[name, cell] += 1
                    differ[name, cell] += r.differs
        for f in out["findings"]:
            cell = tuple(sorted((c["attribute"], f"{c['source_group']}>{c['target_group']}", bool(c.get("occupational")))
                                for c in f["components"]))
            f["evaluative_tested"], f["evaluative_differ"] = tested[f["aspect"], cell], differ[f["aspect"], cell]
    return {**out, "significant": significant, "population_hidden": hidden, "self_flip": None,
            "records": [Measure.aspect(name).to_dict() for name in settings["generative"].get("aspects") or []]}


def judge_agreement_of(store: RunStore, rows: list) -> dict:
    """The judge's agreement with itself on each original's own samples (generative/judge_aspect.py), from the
    judge values of the original stored with its first judged mutant."""
    first: dict = {}
    for _, text_id, _, records in rows:
        if "judge" in records and text_id not in first:
            first[text_id] = records["judge"].original
    answers = {t.text_id: t.answers for t in store.texts() if t.text_id in first}
    return judge_agreement((values, None if answers.get(tid) is None else [a for a in answers[tid] if a is not None])
                           for tid, values in first.items())


def summary(store: RunStore, alpha: float | None = None, label: str | None = None) -> dict:
    per_combo = combination_measures(store)
    by_key = verdicts(store)
    settings = store.settings()
    evaluative = evaluative_pairs(settings)
    # mutants using an evaluative pair, per combination (per_combo[...]["evaluative"]) and in total
    evaluative_section = None if evaluative is None else evaluative_counts(by_key, evaluative, per_combo)
    # mutants using an occupational pair (a job title, not the person's gender), counted apart the same way
    occupational_section = occupational_counts(by_key, occupational_ids(settings.get("dictionary")), per_combo)
    # a model error (no answer after retries) is not an unparseable answer: counted apart
    o = store.originals_counts()
    with_valid, with_bias = o.with_valid_mutants, o.with_bias
    stats = store.stats()
    s = {
        "schema_version": SCHEMA_VERSION,
        "settings": settings,
        "texts": o.texts,
        "atomic": {k: v for k, v in per_combo.items() if v["order"] == 1},
        "intersectional": {k: v for k, v in per_combo.items() if v["order"] >= 2},
        "totals": {"atomic": _totals(per_combo, False), "intersectional": _totals(per_combo, True)},
        "originals_with_bias": {"count": with_bias, "of_originals_with_valid_mutants": with_valid,
                                "rate": _rate(with_bias, with_valid), "rate_ci": wilson(with_bias, with_valid)},
        "originals_venn": store.venn(),
        "truth_table": truth_table(by_key),
        "group_bias": group_bias(by_key),
        "attribution": attribution_summary(by_key),
        "top_pairs": top_pairs(by_key),
        "false_positives_avoided": false_positives(store, per_combo),
        **({} if evaluative_section is None else {"evaluative": evaluative_section}),
        **({} if occupational_section is None else {"occupational": occupational_section}),
        "unparseable": {"originals": o.unparseable,
                        "mutants": sum(m["unparseable"] for m in per_combo.values()),
                        "originals_model_errors": o.model_errors,
                        "answers": store.unparseable_answers()},
        "overlaps_skipped": int(stats.get("overlaps_skipped", 0)),
        # --person-only: dictionary-word occurrences left alone as not about a person; --repair: edits per kind
        **({"person_only_skipped": int(stats.get("person_only_skipped", 0))}
           if "person_only_skipped" in stats or settings.get("person_only") else {}),
        **({"repairs": {k[len("repairs."):]: int(v) for k, v in sorted(stats.items()) if k.startswith("repairs.")}}
           if any(k.startswith("repairs.") for k in stats) or settings.get("repair") else {}),
        # texts the model answered, from the outcome cache: the same after a crash and resume as without one
        "model_calls": store.outcome_count() + int(stats.get("model_errors", 0)),
        "model_errors": int(stats.get("model_errors", 0)),
        "sentences_tagged": int(stats.get("sentences_tagged", 0)),
        "sentences_parsed": int(stats.get("sentences_parsed", 0)),
        "seconds": {k[len("seconds_"):]: round(v, 2) for k, v in stats.items() if k.startswith("seconds_")},
        "first_errors": store.first_failures(),
        # what the model cost: calls made (answers reused from the store are free), tokens, cost (hinter.usage)
        "usage": usage_section(stats, settings),
    }
    f = findings_section(store, alpha, label, s["settings"])
    s["findings"] = f.pop("findings")
    s["determinism"] = s["settings"].get("checks.determinism")  # the start-up check: one short text asked --determinism-probes times
    s["self_flip"] = f.pop("self_flip")  # with --repeats: how often two answers on one original differ
    records = f.pop("records")
    # the one measures section, the same for labels and free text (findings_analysis: kept for a release)
    s["measures"] = {"kind": task_kind(settings), "records": records, "alpha": f["alpha"], "tested": f["tested"],
                     "significant": f["significant"], "population_hidden": f["population_hidden"]}
    s["findings_analysis"] = f  # deprecated (docs/summary-schema.md): label of interest, measure, alpha, counts
    s["significant_findings"] = f["significant"]
    s["population_hidden"] = f["population_hidden"]
    s["health"] = health(s)
    # texts whose answers were model errors, which the same command or `hinter resume` asks again (store.MAX_TRIES)
    s["health"]["texts_to_ask_again"] = len(store.again_text_ids())
    return s
