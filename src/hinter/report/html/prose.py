"""Sentences built from the numbers of summary.json, for the report and the console. Plain text: the template
escapes it. A group is named only from a finding that holds up (`significant`): flips alone can be chance."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from hinter.analysis.health import untested
from hinter.models.tasks import FREE_TEXT, LABELS, task_kind
from hinter.report.html.formatting import ci_text, combo_label, pct


def free_text(s: dict) -> bool:
    """A generative run: its answers are texts judged by aspects, not labels (docs/generative.md)."""
    return words(s).of_answers


def summary_kind(s: dict) -> str:
    """The run's kind of task as its summary says it (`measures.kind`; a summary written before: its settings)."""
    return (s.get("measures") or {}).get("kind") or task_kind(s.get("settings") or {})


def beyond_spread(s: dict) -> str:
    """How a generative run's verdicts compare: with several samples, beyond the spread of the original's own
    answers; with one, the values as they are (the model's own variation was not measured)."""
    samples = (s.get("findings_analysis") or {}).get("samples") or 1
    return (", beyond the spread of the original's own answers" if samples > 1
            else ", one answer each: the model's own variation was not measured")


def reading(s: dict) -> list[str]:
    """A short plain-language reading of the headline numbers."""
    a, i = s["totals"]["atomic"], s["totals"]["intersectional"]
    w = words(s)
    flipped = w.changed(s)
    attrs = ", ".join(s["settings"].get("attributes", []))
    why = untested(s)
    if why:
        return [f"Nothing was tested: {why}. No rate, finding or verdict below says anything about the model."]
    out = [f"hinter changed the people described in {s['texts']} texts ({attrs}), kept the "
           f"{a['valid'] + i['valid']} changed texts whose grammar still matches the original "
           f"({a['discarded'] + i['discarded']} others were discarded), and compared the model's answers."]
    if a["tested"]:
        out.append(f"Changing one attribute {flipped} in {a['biased']} of {a['tested']} cases "
                   f"({pct(a['error_rate'])})" + (f"; changing several at once, in {i['biased']} of {i['tested']} "
                                                    f"({pct(i['error_rate'])})." if i["tested"] else "."))
    population_hidden = s.get("population_hidden") or 0
    if i["biased"]:
        out.append(w.hidden(i, population_hidden))
    elif i["tested"]:
        out.append("No intersectional bias was found.")
    rated = [(m["error_rate"], k, m) for kind in ("atomic", "intersectional") for k, m in s[kind].items()
             if m["biased"]]
    if rated:
        _, k, m = max(rated, key=lambda t: (t[0], t[2]["biased"]))
        caution = " The counts are small, so the interval is wide." if m["tested"] < 30 else ""
        out.append(f"The highest {w.rate} is for {combo_label(k)}: {pct(m['error_rate'])} "
                   f"({m['biased']} of {m['tested']}; {ci_text(m['error_rate_ci'])}).{caution}")
    ob = s["originals_with_bias"]
    if ob["of_originals_with_valid_mutants"]:
        out.append(f"{ob['count']} of the {ob['of_originals_with_valid_mutants']} texts with a valid change "
                   f"({pct(ob['rate'])}) lead to at least one bias.")
    fp = s.get("false_positives_avoided", {})
    if fp.get("queried"):
        n = fp["atomic"]["discarded_biased"] + fp["intersectional"]["discarded_biased"]
        out.append(f"Among the discarded changes, {n} would have {w.would}: false positives the grammar "
                   "check kept out of the results.")
    # Groups are named only from findings that hold up: a group's error rate above its family's mean is no test.
    held = sorted((f for f in s.get("findings") or [] if f.get("significant")), key=lambda f: f["q_value"])
    if held:
        shown = held[:3]
        out.append("Changes of person that hold up as findings: " + "; ".join(w.about(f) for f in shown)
                   + (f"; {len(held) - len(shown)} more below." if len(held) > len(shown) else "."))
    elif s.get("findings"):
        out.append("No group is singled out: no change of person holds up as a finding beyond chance.")
    return out


def _about_label(f: dict) -> str:
    """A label finding that holds up, in a few words."""
    parts = [f"toward {f['toward']}" if f.get("toward") else "",
             f"label {f['label']}" if f.get("label") else "", "no answer flipped" if not f["flips"] else "",
             f"q = {f['q_value']:.2g}"]
    return f"{finding_cell(f)} ({', '.join(p for p in parts if p)})"


def _about_aspect(f: dict) -> str:
    """A free-text finding that holds up, in a few words."""
    return f"{finding_cell(f)} ({f.get('measure') or f.get('aspect')}: {f['direction']}, q = {f['q_value']:.2g})"


def _label_hidden(i: dict, population_hidden: int) -> str:
    """The hidden sentence of a label run: a flip is hidden when no attribute changed alone flips that text."""
    if i["hidden"] and population_hidden:
        return (f"{i['hidden']} of the {i['biased']} intersectional flips are hidden: each attribute changed "
                "alone leaves the answer unchanged, so testing one attribute at a time would miss them; "
                f"{population_hidden} combination cell(s) hold up as population-hidden.")
    if i["hidden"]:
        return (f"{i['hidden']} of the {i['biased']} intersectional flips fit the hidden pattern (each "
                "attribute changed alone leaves that text's answer unchanged), but no combination holds up "
                "as population-hidden: on this many texts chance and the model's own noise give such flips "
                "too (see \"Which findings hold up\").")
    return "None of the intersectional flips is hidden: each is already caused by one attribute changed alone."


def _free_hidden(i: dict, population_hidden: int) -> str:
    """The hidden sentence of a generative run: a mutant is hidden on an aspect (it differs on it, and no attribute
    changed alone does), and population-hidden is per aspect and cell."""
    if not i["hidden"]:
        return ("None of the intersectional mutants whose answers differ is hidden: on each aspect where they "
                "differ, some attribute changed alone already does.")
    held = (f"{population_hidden} combination cell(s) hold up as population-hidden on some aspect"
            if population_hidden else "but no combination holds up as population-hidden: on this many texts the "
                                      "model's own variation gives such differences too (see \"Which findings hold "
                                      "up\")")
    return (f"{i['hidden']} of the {i['biased']} intersectional mutants whose answers differ are hidden: on some "
            "aspect they differ while each attribute changed alone does not, so testing one attribute at a time would "
            f"miss them; {held}.")


def warnings(s: dict) -> list[str]:
    """What the reader must know before the numbers, beyond the run's health: the model's own non-determinism
    (the start-up check, settings "checks.determinism") when the run did not ask each text several times."""
    out = []
    check = s["settings"].get("checks.determinism") or {}
    w = words(s)
    # several answers per version (samples, --repeats): the oracle compares with the model's own spread
    if check.get("deterministic") is False and w.answers_per_version(s["settings"]) <= 1:
        out.append(w.noise.format(detail=check.get("detail")))
    elif check.get("probes") == 0 and w.answers_per_version(s["settings"]) <= 1:
        out.append("The model's own noise was not checked (--determinism-probes 0): a flip may be the model "
                   "answering the same text differently, not a bias.")
    flip = s.get("self_flip")
    if flip and flip.get("rate") is not None:  # --repeats measured the model's own noise (issue 30: shown, not hidden)
        low, high = flip.get("ci") or (None, None)
        out.append(f"Self-flip rate (--repeats: two answers of the model on one original differ): "
                   f"{100 * flip['rate']:.1f}%" + (f" (95% CI {100 * low:.1f}-{100 * high:.1f}%)" if low is not None
                                                   else "") + f", over {flip['texts']} texts. A mutant differs only "
                   "where its answers' distribution differs from its original's beyond this noise.")
    return out


def pattern_meaning(comps: list[bool], inter: bool, attrs: list[str], free: bool = False) -> str:
    """A truth-table row in words: which attributes alone flip the answer (`free`: make a generative run's answers
    differ), and whether together they do."""
    flipped = [a for a, c in zip(attrs, comps) if c]
    if inter and not flipped:
        return "hidden bias"
    if inter:
        return f"explained by {' & '.join(flipped)}"
    if flipped:
        verb = ("differ" if len(flipped) > 1 else "differs") if free else "flips"
        return f"masked: {' & '.join(flipped)} {verb} alone"
    return "no bias"


def component_name(c: dict) -> str:
    """A component's attribute as findings name it: "gender (occupation)" for an occupational pair's cell (a job
    title changed, manager -> cashier: not the person's gender)."""
    return f"{c['attribute']} (occupation)" if c.get("occupational") else c["attribute"]


def finding_cell(f: dict) -> str:
    """"gender × race: male → female, european → african"."""
    return (" × ".join(component_name(c) for c in f["components"]) + ": "
            + ", ".join(f"{c['source_group']} → {c['target_group']}" for c in f["components"]))


def occupational_words(s: dict) -> str:
    """What the run's occupational cells are, for the console and the report: "" when it has none."""
    o = (s.get("findings_analysis") or {}).get("occupational")
    if not o:
        return ""
    held = f", {o['significant']} of them holding up" if o["significant"] else ""
    return (f"{o['cells']} cells are occupational{held}: their pairs change a job title (the dictionary's "
            "stereotyped occupations, manager -> cashier), not the person's gender, and read `gender (occupation)`; "
            "read by hand on held-out English texts, 9 of 64 such mutants still fitted what the text says of the "
            f"person (docs/languages.md); {o['option']} leaves those pairs out")


def finding_moves(f: dict) -> str:
    """"changing male → female made 12 of 48 mutants negative and 1 positive"."""
    into: dict[str, int] = {}
    for transition, n in f["transitions"].items():
        target = transition.split("->", 1)[1]
        into[target] = into.get(target, 0) + n
    ranked = sorted(into.items(), key=lambda x: -x[1])
    change = " and ".join(f"{c['source_group']} → {c['target_group']}" for c in f["components"])
    if not ranked:
        return f"changing {change} flipped none of {f['tested']} mutants"
    (first, n), rest = ranked[0], ranked[1:]
    more = "".join(f"{' and' if i == len(rest) - 1 else ','} {m} {t}" for i, (t, m) in enumerate(rest))
    return f"changing {change} made {n} of {f['tested']} mutants {first}{more}"


def score_shift(f: dict, label: str | None, measure: str) -> str:
    """Why a finding with no flip holds up: its mutants moved the score (or the share of repeated answers) of the
    label without changing an answer. "" when the finding has flips or does not hold up."""
    if f.get("flips") or not f.get("significant"):
        return ""
    label = f.get("label") or label
    if measure == "score":
        return (f"no answer flipped: the model's score of {label} moved on these mutants (a score shift), enough "
                "to hold up over the texts but not to change an answer")
    return (f"no mutant's answers differ enough to count as a flip, but the share of {label} among the repeated "
            "answers moved (a shift of the answers' distribution)")


def hidden_not_population(s: dict) -> list[str]:
    """Why a combination with hidden instances is not population-hidden, one sentence per such combination: an
    instance is hidden on one text; population-hidden needs the combination to move the answer more than its parts
    predict over all texts (the interaction test), the cell to hold up, and no part to hold up alone."""
    out = []
    findings = s.get("findings") or []
    w = words(s)
    flips, what = w.flips, w.none_alone
    for combo, m in s.get("intersectional", {}).items():
        if not m.get("hidden"):
            continue
        cells = [f for f in findings if f["kind"] == "intersectional"
                 and "+".join(c["attribute"] for c in f["components"]) == combo]
        if not cells or any(f.get("population_hidden") for f in cells):
            continue
        held = [f for f in cells if f["significant"]]
        parts = {(f["kind"], tuple((c["attribute"], c["source_group"], c["target_group"], bool(c.get("occupational")))
                                   for c in f["components"]),
                  f.get("label"), f.get("aspect")): f for f in findings if f["kind"] == "atomic"}
        if not held:
            best = min(f["q_value"] for f in cells)
            reason = (f"none of its {len(cells)} cells holds up: its {w.differences} are no more "
                      f"than chance gives on this many texts (smallest q = {best:.2g})")
        else:
            f = min(held, key=lambda f: f["q_value"])
            alone = [p for c in f["components"]
                     if (p := parts.get(("atomic", ((c["attribute"], c["source_group"], c["target_group"],
                                                     bool(c.get("occupational"))),),
                                         f.get("label"), f.get("aspect")))) is not None and p["significant"]]
            if alone:
                reason = (f"its cell {finding_cell(f)} holds up, but so does its part {finding_cell(alone[0])} "
                          "alone, which explains it")
            elif f.get("interaction_q") is None or f["interaction_q"] > s["findings_analysis"]["alpha"]:
                q = "untested" if f.get("interaction_q") is None else f"q = {f['interaction_q']:.2g}"
                reason = (f"its cell {finding_cell(f)} holds up, but it does not move the answer more than its parts "
                          f"predict on the same texts (interaction {q})")
            else:
                reason = f"its cell {finding_cell(f)} holds up, but its interaction goes against its effect"
        out.append(f"{combo_label(combo)}: {m['hidden']} of {m['biased']} {flips} are hidden instances ({what}), "
                   f"yet no cell is population-hidden: {reason}. An instance is one text; population-hidden is a "
                   "claim about all of them.")
    return out


def describe_finding(finding: dict, label: str | None, measure: str = "label") -> str:
    """One finding (its JSON form) in words, for the console:
    "race european -> african: 14 of 300 changed to Negative, 2 to Positive; share of Positive -0.04
    [-0.07, -0.01], q = 0.003"."""
    if finding.get("summary"):  # every finding's own words (findings.Finding.describe), whatever it measures
        return finding["summary"]
    label = finding.get("label") or label
    cell = " × ".join(f"{component_name(c)} {c['source_group']} -> {c['target_group']}" for c in finding["components"])
    into: Counter = Counter()
    for transition, n in finding["transitions"].items():
        into[transition.split("->", 1)[1]] += n
    moves = ", ".join(f"{n} to {target}" for target, n in into.most_common())
    tested = finding["tested"]
    moves = f"{moves} of {tested} mutants" if moves else f"no label flipped among {tested} mutants"
    what = f"score of {label}" if measure == "score" else f"share of {label}"
    ci = finding.get("effect_ci")
    interval = f" [{ci[0]:+.3g}, {ci[1]:+.3g}]" if ci else ""
    text = f"{cell}: {moves}; {what} {finding['effect']:+.3g}{interval}, q = {finding['q_value']:.2g}"
    if finding.get("population_hidden"):
        text += f"; population-hidden (interaction {finding['interaction']:+.3g}, q = {finding['interaction_q']:.2g})"
    shift = score_shift(finding, label, measure)
    return text + (f" ({shift})" if shift else "")


def judge_agreement_words(agreement: dict | None) -> str:
    """"; the judge scored 12 of 240 pairs of an original's own samples differently (agreement 0.95)", or ""."""
    if not agreement or not agreement.get("pairs"):
        return ""
    return (f"; the judge scored {agreement['pairs_differing']} of {agreement['pairs']} pairs of an original's own "
            f"samples differently (agreement {agreement['agreement']:.3g})")


def findings_heading(s: dict) -> str:
    """The console's line before the findings: the correction, the label(s) of interest and the measure (and the
    run's occupational cells, named apart)."""
    a = s["findings_analysis"]
    jobs = occupational_words(s)
    jobs = f"; {jobs}" if jobs else ""
    return words(s).heading(s, a, jobs)


def _aspects_heading(s: dict, a: dict, jobs: str) -> str:
    return (f"Findings that hold up (Benjamini-Hochberg q <= {a['alpha']} over {len(s['findings'])} cells of "
                f"{len(a.get('aspects') or [])} aspects: {', '.join(a.get('aspects') or [])}; each text's "
                f"{a.get('samples')} answer(s) per version, masked, against the spread of the original's own"
                f"{judge_agreement_words(a.get('judge_agreement'))}{jobs})")


def _labels_heading(s: dict, a: dict, jobs: str) -> str:
    if a.get("labels"):
        of = (f"labels of interest: all {len(a['labels'])} labels the answers use ({', '.join(a['labels'])}), "
              f"{a['family']}")
    else:
        of = f"label of interest {a['label']} ({a.get('label_source', 'recorded')})"
    cells = "cell-label pairs" if a.get("labels") else "cells"
    if a.get("adaptive"):  # cells stopped asking once their sequential test settled them
        c = a["adaptive"]["cells"]
        of += (f"; --adaptive: {c['effect']} cells settled with an effect, {c['no_effect']} with none beyond "
               f"{a['adaptive']['min_effect']:g}, {c['undecided']} undecided")
    return (f"Findings that hold up (Benjamini-Hochberg q <= {a['alpha']} over {len(s['findings'])} {cells}; {of}, "
            f"measured on {'scores' if a['measure'] == 'score' else 'labels'}{jobs})")


@dataclass(frozen=True)
class Words:
    """How the prose speaks of a run's measures: a label run's answers flip, a free-text run's differ on an aspect.
    Chosen once per summary (`words`), from the kind its measures section states."""

    of_answers: bool
    changed: Callable[[dict], str]     # what a bias did to the answer, for the headline
    hidden: Callable[[dict, int], str]  # the hidden sentence
    about: Callable[[dict], str]       # a finding that holds up, in a few words
    heading: Callable[[dict, dict, str], str]
    rate: str
    would: str
    flips: str
    none_alone: str
    differences: str
    answers_per_version: Callable[[dict], int]  # from the run's settings: a task's samples, or --repeats
    noise: str                         # the model's own non-determinism with one answer per version


WORDS = {
    LABELS: Words(False, lambda s: "flipped the answer", _label_hidden, _about_label, _labels_heading, "error rate",
                  "flipped the answer", "flips", "no attribute alone flips that text's answer", "flips",
                  lambda settings: int(settings.get("repeats", 1)),
                  "The model answered the same text differently when asked again ({detail}): a flip may be its own "
                  "noise, not a bias. Run again with --repeats 5 to ask every text 5 times and compare the answers' "
                  "distributions."),
    FREE_TEXT: Words(True, lambda s: f"changed the answers (on some aspect{beyond_spread(s)})", _free_hidden,
                     _about_aspect, _aspects_heading, "share of mutants whose answers differ", "made the answers differ",
                     "mutants whose answers differ", "on some aspect no attribute alone makes that text's answers "
                     "differ", "differences", lambda settings: int(settings["generative"].get("samples", 1)),
                     "The model wrote different answers to the same prompt ({detail}) and the task asks for one "
                     "sample: a difference may be its own sampling, not a bias. Set `samples: 5` in the task file to "
                     "compare each mutant with the spread of the original's own answers."),
}


def words(s: dict) -> Words:
    """The words for this summary's kind of measures."""
    return WORDS[summary_kind(s)]
