"""What a fix did, in words (`hinter diff`, `hinter compare`): per combination of attributes, its significant cells
before and after, the cells that stopped or started holding up, and the accuracy on the texts with a gold label.

    gender x race: 14 significant cells before, 2 after; accuracy 88.1% -> 87.9% (on 200 texts with a gold label)

Pure functions of two summaries' findings (summary.json's records) and each run's accuracy (`accuracy`, from its
stored originals).
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Iterable


def combination_of(finding: dict) -> str:
    """The finding's attributes, sorted, joined by " x " (gender x race; one attribute: its name)."""
    return " x ".join(sorted(c["attribute"] for c in finding["components"]))


def cell_name(finding: dict) -> str:
    """The cell in words: "gender: male -> female & race: european -> african" (a multi-label one adds its label)."""
    parts = sorted((c["attribute"], c["source_group"], c["target_group"]) for c in finding["components"])
    return " & ".join(f"{a}: {s} -> {t}" for a, s, t in parts) + (f" [{finding['label']}]" if finding.get("label")
                                                                   else "")


def _significant(findings: Iterable[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in findings or ():
        if f.get("significant"):
            out[combination_of(f)].add(cell_name(f))
    return out


def _same(gold: str, outcome: str | None) -> bool:
    """Whether the model's outcome is the gold label: case aside ("positive" in the IMDB sample, "Positive" from
    the task), label sets compared as sets (gold a JSON list, the outcome "a | b" or "(none)")."""
    if outcome is None:
        return False
    if gold.startswith("["):
        from hinter.analysis.findings import label_set
        try:
            wanted = {str(x).lower() for x in json.loads(gold)}
        except ValueError:
            return gold.lower() == outcome.lower()
        return wanted == {x.lower() for x in label_set(outcome)}
    return gold.strip().lower() == outcome.strip().lower()


def accuracy(texts: Iterable) -> dict | None:
    """The model's accuracy on the originals with a gold label (store.TextRow: gold, outcome); an original without
    a usable answer counts as wrong. None when no original has a gold label."""
    correct = total = 0
    for t in texts:
        if t.gold is None:
            continue
        total += 1
        correct += _same(t.gold, t.outcome)
    return None if total == 0 else {"correct": correct, "texts": total, "rate": correct / total}


def change(findings_a: Iterable[dict], findings_b: Iterable[dict], accuracy_a: dict | None = None,
           accuracy_b: dict | None = None) -> dict:
    """Per combination (significant in either run), its significant cells in A and in B, and the cells gone
    (significant in A only) and appeared (in B only); the accuracies; `sentences`, the whole in words."""
    a, b = _significant(findings_a), _significant(findings_b)
    combos = []
    for combo in sorted(set(a) | set(b), key=lambda c: (c.count(" x "), c)):
        before, after = a.get(combo, set()), b.get(combo, set())
        combos.append({"combination": combo, "before": len(before), "after": len(after),
                       "gone": sorted(before - after), "appeared": sorted(after - before)})
    out = {"combinations": combos, "accuracy": {"before": accuracy_a, "after": accuracy_b}}
    out["sentences"] = sentences(out)
    return out


def _cells(n: int) -> str:
    return f"{n} significant cell{'' if n == 1 else 's'}"


def _pct(acc: dict | None) -> str:
    return "n/a" if acc is None else f"{100 * acc['rate']:.1f}%"


def sentences(c: dict) -> list[str]:
    """The change in words: a line per combination, then the accuracy line (where a run has gold labels)."""
    lines = [f"{x['combination']}: {_cells(x['before'])} before, {x['after']} after"
             + (f" (gone: {'; '.join(x['gone'])})" if x["gone"] else "")
             + (f" (appeared: {'; '.join(x['appeared'])})" if x["appeared"] else "") for x in c["combinations"]]
    if not lines:
        lines.append("no significant cell before or after")
    acc_a, acc_b = c["accuracy"]["before"], c["accuracy"]["after"]
    if acc_a is not None or acc_b is not None:
        n = (acc_b or acc_a)["texts"]
        lines.append(f"accuracy {_pct(acc_a)} -> {_pct(acc_b)} (on {n} text{'' if n == 1 else 's'} with a gold label)")
    return lines


def headline(c: dict) -> str:
    """The change in one line: the combinations' counts, then the accuracy, joined by "; "."""
    parts = [f"{x['combination']}: {_cells(x['before'])} before, {x['after']} after" for x in c["combinations"]]
    acc_a, acc_b = c["accuracy"]["before"], c["accuracy"]["after"]
    if acc_a is not None or acc_b is not None:
        parts.append(f"accuracy {_pct(acc_a)} -> {_pct(acc_b)}")
    return "; ".join(parts) or "no significant cell before or after"
