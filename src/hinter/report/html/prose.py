"""Sentences built from the numbers of summary.json. Plain text: the template escapes it."""
from __future__ import annotations

from .formatting import ci_text, combo_label, pct


def reading(s: dict) -> list[str]:
    """A short plain-language reading of the headline numbers."""
    a, i = s["totals"]["atomic"], s["totals"]["intersectional"]
    attrs = ", ".join(s["settings"].get("attributes", []))
    out = [f"hinter changed the people described in {s['texts']} texts ({attrs}), kept the "
           f"{a['valid'] + i['valid']} changed texts whose grammar still matches the original "
           f"({a['discarded'] + i['discarded']} others were discarded), and compared the model's answers."]
    if a["tested"]:
        out.append(f"Changing one attribute flipped the answer in {a['biased']} of {a['tested']} cases "
                   f"({pct(a['error_rate'])})" + (f"; changing several at once, in {i['biased']} of {i['tested']} "
                                                    f"({pct(i['error_rate'])})." if i["tested"] else "."))
    if i["biased"]:
        if i["hidden"]:
            out.append(f"{i['hidden']} of the {i['biased']} intersectional biases are hidden: each attribute changed "
                       "alone leaves the answer unchanged, so testing one attribute at a time would miss them.")
        else:
            out.append("None of the intersectional biases is hidden: each is already caused by one attribute "
                       "changed alone.")
    elif i["tested"]:
        out.append("No intersectional bias was found.")
    rated = [(m["error_rate"], k, m) for kind in ("atomic", "intersectional") for k, m in s[kind].items()
             if m["biased"]]
    if rated:
        _, k, m = max(rated, key=lambda t: (t[0], t[2]["biased"]))
        caution = " The counts are small, so the interval is wide." if m["tested"] < 30 else ""
        out.append(f"The highest error rate is for {combo_label(k)}: {pct(m['error_rate'])} "
                   f"({m['biased']} of {m['tested']}; {ci_text(m['error_rate_ci'])}).{caution}")
    ob = s["originals_with_bias"]
    if ob["of_originals_with_valid_mutants"]:
        out.append(f"{ob['count']} of the {ob['of_originals_with_valid_mutants']} texts with a valid change "
                   f"({pct(ob['rate'])}) lead to at least one bias.")
    fp = s.get("false_positives_avoided", {})
    if fp.get("queried"):
        n = fp["atomic"]["discarded_biased"] + fp["intersectional"]["discarded_biased"]
        out.append(f"Among the discarded changes, {n} would have flipped the answer: false positives the grammar "
                   "check kept out of the results.")
    # Groups named only where even the interval's lower end is above their family's mean: not noise of 1/1.
    clear = sorted(((g["error_rate"], fam, name, g) for kind in ("atomic", "intersectional")
                    for fam, f in s.get("group_bias", {}).get(kind, {}).items()
                    for name, g in f["groups"].items()
                    if g["flagged"] and g["error_rate_ci"][0] > f["mean_error_rate"]), reverse=True)[:3]
    if clear:
        out.append("Target groups clearly above the mean of their attribute or combination: " + ", ".join(
            f"{name.replace('+', ' & ')} ({combo_label(fam)}, {pct(r)}, {g['biased']}/{g['tested']})"
            for r, fam, name, g in clear) + ".")
    return out


def pattern_meaning(comps: list[bool], inter: bool, attrs: list[str]) -> str:
    """A truth-table row in words: which attributes alone flip the answer, and whether together they do."""
    flipped = [a for a, c in zip(attrs, comps) if c]
    if inter and not flipped:
        return "hidden bias"
    if inter:
        return f"explained by {' & '.join(flipped)}"
    if flipped:
        return f"masked: {' & '.join(flipped)} flips alone"
    return "no bias"


def finding_cell(f: dict) -> str:
    """"gender × race: male → female, european → african"."""
    return (" × ".join(c["attribute"] for c in f["components"]) + ": "
            + ", ".join(f"{c['source_group']} → {c['target_group']}" for c in f["components"]))


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
