"""Triage (issue 16): a reviewer's verdicts on a run's biases, kept in RUN_DIR/triage.json (small, sorted,
meant to be committed beside the model), shown in the report and honoured by the CI gate.

A verdict is "confirmed" (a real bias) or "not_bias" (dismissed), with a reason and an optional expiry date
(from that day on it no longer counts), about one instance (a biased mutant: its text and pair key, stable when
the same campaign runs again) or a whole finding (a cell: every biased mutant with those attribute changes). An
instance's own verdict wins over its finding's.

`section` computes the summary's "triage" section (how many flips were reviewed, the share confirmed with its
Wilson interval: an estimate of the findings' precision; and what the gate leaves out); `gated` applies it to a
summary: dismissed instances do not count in `--fail-on` / `hinter check`. Pure functions; `load` and `save` are
the only I/O.
"""
from __future__ import annotations

import copy
import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from hinter.errors import InputError
from hinter.files import write_atomic
from hinter.analysis.measures import wilson
from hinter.records import Replacement

FILE = "triage.json"
CONFIRMED, NOT_BIAS = "confirmed", "not_bias"
VERDICTS = (CONFIRMED, NOT_BIAS)
MAX_REASON = 2000


def cell_key(groups: Iterable[tuple[str, str, str]]) -> str:
    """A finding (cell) by its changes: "gender:male>female & race:european>african", attributes sorted."""
    return " & ".join(sorted(f"{a}:{s}>{t}" for a, s, t in groups))


def cell_of(replacements: Sequence[Replacement]) -> str:
    return cell_key((r.attribute, r.source_group, r.target_group) for r in replacements)


def cell_of_finding(finding: dict) -> str:
    """The cell key of a summary.json finding (its `components`)."""
    return cell_key((c["attribute"], c["source_group"], c["target_group"]) for c in finding["components"])


@dataclass(frozen=True)
class Verdict:
    verdict: str                          # CONFIRMED or NOT_BIAS
    reason: str
    instance: tuple[int, str] | None = None  # (text_id, pair_key) of one biased mutant
    finding: str | None = None            # or a whole cell (cell_key)
    expires: dt.date | None = None        # from this day on the verdict no longer counts
    at: str = ""                          # when it was recorded (UTC, ISO 8601)
    shown: str = ""                       # what it is about, in words, for people reading the file

    @property
    def target(self) -> tuple:
        return ("instance", self.instance) if self.instance is not None else ("finding", self.finding)

    def active(self, today: dt.date) -> bool:
        return self.expires is None or today < self.expires

    def to_json(self) -> dict:
        d: dict = {"verdict": self.verdict, "reason": self.reason}
        if self.instance is not None:
            d["text_id"], d["pair_key"] = self.instance
        else:
            d["finding"] = self.finding
        d["expires"] = None if self.expires is None else self.expires.isoformat()
        d["at"], d["about"] = self.at, self.shown
        return d


def parse_verdict(d: object, where: str = FILE) -> Verdict:
    """A verdict from its JSON form (the file's or an API request's); InputError naming what is wrong."""
    if not isinstance(d, dict):
        raise InputError("a verdict must be an object", where=where)
    verdict, reason = d.get("verdict"), d.get("reason", "")
    if verdict not in VERDICTS:
        raise InputError(f"unknown verdict {verdict!r}", where=where, fix=f"Use one of {', '.join(VERDICTS)}.")
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise InputError("the reason must be a string of at most 2000 characters", where=where)
    if verdict == NOT_BIAS and not reason.strip():
        raise InputError("a verdict 'not_bias' needs a reason", where=where,
                         fix="Say why the flip is not a bias (e.g. 'the change alters the meaning').")
    expires = d.get("expires")
    if expires not in (None, ""):
        try:
            expires = dt.date.fromisoformat(str(expires))
        except ValueError:
            raise InputError(f"cannot read the expiry date {expires!r}", where=where,
                             fix="Give a date as YYYY-MM-DD, or none.") from None
    else:
        expires = None
    has_instance = "text_id" in d or "pair_key" in d
    if has_instance == ("finding" in d):
        raise InputError("a verdict is about one instance (text_id and pair_key) or one finding (finding)",
                         where=where)
    if has_instance:
        text_id, pair_key = d.get("text_id"), d.get("pair_key")
        if not isinstance(text_id, int) or isinstance(text_id, bool) or not isinstance(pair_key, str) or not pair_key:
            raise InputError("text_id must be an integer and pair_key a non-empty string", where=where)
        instance, finding = (text_id, pair_key), None
    else:
        if not isinstance(d["finding"], str) or not d["finding"]:
            raise InputError("finding must be a cell key like 'gender:male>female'", where=where)
        instance, finding = None, d["finding"]
    return Verdict(verdict, reason.strip(), instance, finding, expires, str(d.get("at") or ""),
                   str(d.get("about") or ""))


def load(folder: str | os.PathLike) -> list[Verdict]:
    """The verdicts saved in `folder` ([] without a triage file)."""
    path = Path(folder) / FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark of an editor dropped
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read the triage file ({e})", where=str(path),
                         fix="Fix the JSON, or remove the file to start the triage over.") from None
    items = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError('the triage file holds no "verdicts" list', where=str(path))
    return [parse_verdict(d, f"{path}, verdict {i + 1}") for i, d in enumerate(items)]


def save(folder: str | os.PathLike, verdicts: Sequence[Verdict]) -> Path:
    """Write the verdicts, sorted, one key per line (diffs stay small); atomically (a crash keeps the old file)."""
    path = Path(folder) / FILE
    ordered = sorted(verdicts, key=lambda v: (v.instance is None, v.instance or (0, ""), v.finding or ""))
    body = {"about": "hinter triage: reviewers' verdicts on this run's biases (hinter serve writes it; "
                     "commit it beside the model). not_bias instances do not count in --fail-on / hinter check.",
            "verdicts": [v.to_json() for v in ordered]}
    return write_atomic(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")


def upsert(verdicts: Sequence[Verdict], new: Verdict) -> list[Verdict]:
    """The verdicts with `new` replacing any earlier one about the same instance or finding."""
    return [v for v in verdicts if v.target != new.target] + [new]


def remove(verdicts: Sequence[Verdict], target: tuple) -> list[Verdict]:
    return [v for v in verdicts if v.target != target]


@dataclass(frozen=True)
class Bias:
    """What triage needs of one biased mutant (the store's MutantRow has it all)."""

    text_id: int
    pair_key: str
    attributes: str
    order: int
    hidden: bool | None
    strictly_hidden: bool | None
    cell: str

    @classmethod
    def of(cls, m) -> Bias:
        return cls(m.text_id, m.pair_key, m.attributes, m.order, m.hidden, m.strictly_hidden, cell_of(m.replacements))


def resolve(biases: Iterable[Bias], verdicts: Sequence[Verdict], today: dt.date) -> dict[tuple[int, str], Verdict]:
    """The active verdict of each reviewed bias: its own, else its finding's."""
    own = {v.instance: v for v in verdicts if v.instance is not None and v.active(today)}
    by_cell = {v.finding: v for v in verdicts if v.finding is not None and v.active(today)}
    out = {}
    for b in biases:
        v = own.get((b.text_id, b.pair_key)) or by_cell.get(b.cell)
        if v is not None:
            out[(b.text_id, b.pair_key)] = v
    return out


def section(biases: Sequence[Bias], verdicts: Sequence[Verdict], today: dt.date | None = None) -> dict:
    """The summary's "triage" section: reviewed flips, the share confirmed (precision) with its 95% Wilson
    interval, and what the gate leaves out (`gate`: per combination the dismissed biases, hidden ones among them;
    the texts still with a bias; the findings dismissed whole)."""
    today = today or dt.date.today()
    decided = resolve(biases, verdicts, today)
    confirmed = sum(v.verdict == CONFIRMED for v in decided.values())
    dismissed = [b for b in biases if (b.text_id, b.pair_key) in decided
                 and decided[(b.text_id, b.pair_key)].verdict == NOT_BIAS]
    reviewed = len(decided)
    per_combo: dict[str, dict[str, int]] = {}
    for b in dismissed:
        c = per_combo.setdefault(b.attributes, {"biased": 0, "hidden": 0, "strictly_hidden": 0})
        c["biased"] += 1
        c["hidden"] += bool(b.hidden)
        c["strictly_hidden"] += bool(b.strictly_hidden)
    gone = {(b.text_id, b.pair_key) for b in dismissed}
    keys = {(b.text_id, b.pair_key) for b in biases}
    return {
        "file": FILE, "date": today.isoformat(), "verdicts": len(verdicts),
        "expired": sum(not v.active(today) for v in verdicts),
        # verdicts about no bias of this run (the campaign changed): kept in the file, counted nowhere
        "unmatched": sum(v.instance is not None and v.instance not in keys for v in verdicts),
        "flips": len(biases), "reviewed": reviewed, "confirmed": confirmed, "dismissed": len(dismissed),
        "precision": round(confirmed / reviewed, 6) if reviewed else None,
        "precision_ci": wilson(confirmed, reviewed),
        "gate": {"combinations": dict(sorted(per_combo.items())),
                 "texts_with_bias": len({b.text_id for b in biases if (b.text_id, b.pair_key) not in gone}),
                 "findings": sorted(v.finding for v in verdicts
                                    if v.finding is not None and v.verdict == NOT_BIAS and v.active(today))},
    }


def _rates(m: dict, hidden: bool) -> None:
    m["error_rate"] = round(m["biased"] / m["tested"], 6) if m["tested"] else None
    m["error_rate_ci"] = wilson(m["biased"], m["tested"])
    if hidden and "hidden" in m:
        m["hidden_rate"] = round(m["hidden"] / m["biased"], 6) if m["biased"] else None
        m["hidden_rate_ci"] = wilson(m["hidden"], m["biased"])


def gated(s: dict) -> dict:
    """The summary the gate reads: a copy of `s` without the biases its "triage" section dismissed (their
    combinations' and totals' biased, hidden and rates; texts with a bias; significant findings dismissed
    whole). `s` itself when nothing was dismissed."""
    t = s.get("triage")
    if not t or not (t["dismissed"] or t["gate"]["findings"]):
        return s
    s = copy.deepcopy(s)
    for combo, less in t["gate"]["combinations"].items():
        kind = "atomic" if "+" not in combo else "intersectional"
        for m in (s.get(kind, {}).get(combo), s["totals"][kind]):
            if m is None:
                continue
            for k, n in less.items():
                if k in m:
                    m[k] -= n
            _rates(m, kind == "intersectional")
    ob = s.get("originals_with_bias")
    if ob is not None:
        ob["count"] = t["gate"]["texts_with_bias"]
        n = ob["of_originals_with_valid_mutants"]
        ob["rate"] = round(ob["count"] / n, 6) if n else None
        ob["rate_ci"] = wilson(ob["count"], n)
    gone = set(t["gate"]["findings"])
    for f in s.get("findings", []):
        if f.get("significant") and cell_of_finding(f) in gone:
            f["significant"] = False
            s["significant_findings"] -= 1
            if f.get("population_hidden"):
                f["population_hidden"] = False
                s["population_hidden"] -= 1
    return s


def attach(s: dict, store, folder: str | os.PathLike, today: dt.date | None = None) -> dict:
    """Add the "triage" section to the summary `s` of the run in `folder` when it has a triage file (else
    leave `s` as it is); returns `s`."""
    verdicts = load(folder)
    if verdicts:
        s["triage"] = section([Bias.of(m) for m in store.biased_mutants()], verdicts, today)
    return s
