"""`hinter audit --decisions FILE`: the audit of decisions as recorded (DCWP's rules, 6 RCNY 5-301 and 5-302(a),
ask for the tool's historical data first). No model: each row of the file is one applicant, with the sex, the
race/ethnicity and the decision recorded (and a score, for a tool that scores); the tables are the audit's own
three (sex, race/ethnicity, intersectional) on these rows, with the 2% rule applied and shown, the unknown
category counted with every value that made it unknown, and LL144's scoring rate (the share scoring above the
sample's median) from the score. What this measures: outcomes, which mix the tool's treatment with who applied
(the counterfactual audit, `hinter audit --dataset`, measures the treatment alone)."""
from __future__ import annotations

import datetime
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hinter.config import DATASET, option
from hinter.datasets import table_rows
from hinter.errors import InputError
from hinter.files import json_text, storage_errors, write_set
from hinter.version import __version__
from hinter.audit.categories import Categories, load_categories
from hinter.audit.run import audit_csv_text, csv_rows
from hinter.audit.summary import LABELS, AuditSummary, flag_of, summary_section
from hinter.audit.tables import MIN_SHARE, observed_tables

EMPTY = "(empty)"  # how an empty or missing value is listed among the unknown ones


@dataclass(frozen=True)
class DecisionsInput:
    """`hinter audit --decisions`'s options (each field declares its flag and help, as RunConfig's do)."""

    decisions: str | None = option(
        None, "--decisions", "Audit recorded decisions instead of a model: a JSONL, CSV or Parquet file with one row "
        "per applicant (the sex, the race/ethnicity and the decision recorded). Needs --sex-field, --race-field, "
        "--selected-field and --favourable; no --model, --dataset or --task.", DATASET)
    sex_field: str | None = option(None, "--sex-field", "With --decisions: the column holding each applicant's sex "
                                   "(a category of the category file: female, male; or F, M, woman, man).", DATASET)
    race_field: str | None = option(None, "--race-field", "With --decisions: the column holding each applicant's "
                                    "race/ethnicity (a category's name, descriptor or word: White, Black or African "
                                    "American, Black, Hispanic...).", DATASET)
    selected_field: str | None = option(None, "--selected-field", "With --decisions: the column holding the "
                                        "decision; a row is selected where it equals --favourable.", DATASET)
    score_field: str | None = option(None, "--score-field", "With --decisions: the column holding the tool's score "
                                     "(a number), for LL144's scoring rate: the share scoring above the sample's "
                                     "median.", DATASET)


@dataclass(frozen=True)
class Decision:
    sex: str | None  # a category of the file, None: unknown
    race: str | None
    selected: bool
    score: float | None
    raw_sex: str  # as recorded (EMPTY when empty)
    raw_race: str


def _norm(value) -> str:
    """A recorded value as compared: booleans as true/false, text stripped and case-folded."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value).strip().casefold()


def _lookups(cats: Categories) -> tuple[dict[str, str], dict[str, str]]:
    """Recorded value (normalised) -> category, for sex (its name, its nouns, its initial where no other sex shares
    it) and race (its name, descriptor and words)."""
    sex: dict[str, str] = {}
    initials = Counter(s.name[:1].casefold() for s in cats.sexes)
    for s in cats.sexes:
        for w in (s.name, *s.nouns[:1]):
            sex.setdefault(_norm(w), s.name)
        if initials[s.name[:1].casefold()] == 1:
            sex.setdefault(s.name[:1].casefold(), s.name)
    race: dict[str, str] = {}
    for r in cats.races:
        for w in (r.name, r.descriptor, *r.words):
            race.setdefault(_norm(w), r.name)
    return sex, race


def read_decisions(path: str | Path, cats: Categories, fields: DecisionsInput, favourable: str) -> list[Decision]:
    """The rows of the decisions file, each with its categories (None where the value is empty or not one the
    category file knows), whether it is selected, and its score. An InputError names the file, the line and the
    fix: a column that is not in the file, a row without a decision, a score that is not a number, a --favourable
    that no row records."""
    sex_of, race_of = _lookups(cats)
    wanted = {"--sex-field": fields.sex_field, "--race-field": fields.race_field,
              "--selected-field": fields.selected_field, "--score-field": fields.score_field}
    out: list[Decision] = []
    outcomes: Counter = Counter()
    for i, (row, where) in enumerate(table_rows(path)):
        if i == 0:  # a column named wrong: said once, with the file's columns
            for flag, name in wanted.items():
                if name is not None and name not in row:
                    raise InputError(f"no column {name!r} (columns: {', '.join(map(str, row)) or 'none'})",
                                     where=where, fix=f"Name the column with {flag}.")
        decision = row.get(fields.selected_field)
        if _norm(decision) == "":
            raise InputError(f"the decision ({fields.selected_field!r}) is empty", where=where,
                             fix="Give every row its recorded decision, or leave the row out.")
        outcomes[str(decision)] += 1
        score = None
        if fields.score_field is not None:
            value = row.get(fields.score_field)
            try:
                score = float(value) if not isinstance(value, bool) and _norm(value) != "" else None
            except (TypeError, ValueError):
                score = None
            if score is None or not np.isfinite(score):
                raise InputError(f"the score ({fields.score_field!r}) is {value!r}, not a number", where=where,
                                 fix="Give every row a numeric score, or leave --score-field out.")
        raw_sex, raw_race = row.get(fields.sex_field), row.get(fields.race_field)
        out.append(Decision(sex_of.get(_norm(raw_sex)), race_of.get(_norm(raw_race)),
                            _norm(decision) == _norm(favourable), score,
                            EMPTY if _norm(raw_sex) == "" else str(raw_sex).strip(),
                            EMPTY if _norm(raw_race) == "" else str(raw_race).strip()))
    if not out:
        raise InputError("the file holds no decisions", where=str(path), fix="Give one row per applicant.")
    if not any(d.selected for d in out):
        raise InputError(f"no row records the decision {favourable!r} in {fields.selected_field!r} (recorded: "
                         f"{', '.join(f'{v} ({n})' for v, n in outcomes.most_common(10))})", where="--favourable",
                         fix="Give --favourable the value that means selected, as the file writes it.")
    return out


def decisions_tables(decisions: list[Decision], cats: Categories, *, seed: int = 0) -> dict:
    """audit.json's content (less the manifest) from the decisions: the three tables, the unknown category per
    table with each value that made it unknown, the exclusions (the 2% rule, of all rows), and with scores the
    scoring rate's tables."""
    sexes, races = [s.name for s in cats.sexes], [r.name for r in cats.races]
    sex, race = [d.sex for d in decisions], [d.race for d in decisions]
    tables, unknown = observed_tables(sex, race, [d.selected for d in decisions], sexes, races, seed=seed,
                                      share_of=len(decisions), unit="applicant")
    values = {"sex": Counter(d.raw_sex for d in decisions if d.sex is None),
              "race": Counter(d.raw_race for d in decisions if d.race is None)}
    result = {
        "data_type": "historical",
        "counts": {"rows": len(decisions), "selected": sum(d.selected for d in decisions)},
        "tables": {k: [r.to_json() for r in rows] for k, rows in tables.items()},
        "unknown": {k: {"count": unknown[k], **({"values": dict(values[k].most_common())} if k in values else
                                                {"note": "a row whose sex or race/ethnicity is unknown"})}
                    for k in unknown},
        "excluded": [{"table": k, "category": r.category, "reason": r.excluded}
                     for k, rows in tables.items() for r in rows if r.excluded],
        "min_share": MIN_SHARE,
    }
    scores = [d.score for d in decisions]
    if scores and all(s is not None for s in scores):
        median = float(np.median(scores))
        scored, _ = observed_tables(sex, race, [s > median for s in scores], sexes, races, seed=seed,
                                    share_of=len(decisions), unit="applicant")
        result["scoring"] = {"median": round(median, 6), "rule": "the share of rows scoring above the sample's "
                             "median score (every row of the file)",
                             "tables": {k: [r.to_json() for r in rows] for k, rows in scored.items()}}
    return result


def audit_decisions(fields: DecisionsInput, *, favourable: str | None, out: str | Path,
                    categories: str | Path | None = None, language: str = "en", seed: int = 0,
                    summary: AuditSummary | dict | None = None) -> dict:
    """Audit the recorded decisions of `fields.decisions` and write DIR/audit.json, DIR/audit.csv and
    DIR/audit.html (data type "historical"). Returns audit.json's content."""
    missing = [flag for flag, v in (("--sex-field", fields.sex_field), ("--race-field", fields.race_field),
                                    ("--selected-field", fields.selected_field), ("--favourable", favourable))
               if not v]
    if missing:
        raise InputError(f"--decisions needs {', '.join(missing)}", where="--decisions",
                         fix="Name the file's columns: --sex-field COLUMN --race-field COLUMN --selected-field "
                             "COLUMN, and --favourable VALUE (the decision that means selected).")
    cats = load_categories(categories, language)
    decisions = read_decisions(fields.decisions, cats, fields, favourable)
    result = decisions_tables(decisions, cats, seed=seed)
    result["favourable"] = favourable
    result["summary"] = summary_section(summary, "historical")
    path = Path(fields.decisions)
    result["manifest"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hinter_version": __version__, "data_type": "historical", "data_source": str(fields.decisions),
        "dataset_sha256": hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None,
        "categories_file": cats.source, "categories_sha256": cats.sha256,
        "sex_field": fields.sex_field, "race_field": fields.race_field, "selected_field": fields.selected_field,
        "score_field": fields.score_field, "favourable": favourable, "seed": seed,
    }
    write_decisions(Path(out), result)
    return result


def write_decisions(out: Path, result: dict) -> None:
    """audit.json, audit.csv (design "historical", and "scoring", with the published summary's fields) and
    audit.html, written as one set (files.write_set), as the model's audit writes its outputs."""
    from hinter.report.html import render_template

    rows = csv_rows("historical", result["tables"])
    if "scoring" in result:
        rows += csv_rows("scoring", result["scoring"]["tables"])
    page = render_template("audit_decisions.html.j2", 
        r=result, titles=(("sex", "Sex"), ("race", "Race/ethnicity"), ("intersectional", "Sex x race/ethnicity")),
        summary_rows=[(k, label) for k, label in LABELS.items() if k != "data_type"],
        flags={k: flag_of(k) for k in LABELS if k != "data_type"})
    with storage_errors(out):
        out.mkdir(parents=True, exist_ok=True)
        write_set({out / "audit.json": json_text(result, indent=2) + "\n", out / "audit.csv": audit_csv_text(result, rows),
                   out / "audit.html": page})
