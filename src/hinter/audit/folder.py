"""An audit's folder as the other commands read it: `hinter check` gates it as it gates a run, `hinter compare`
puts two or more audits' ratios side by side, `hinter report` points to its page. Pure functions over audit.json's
content, so that the commands and their tests share them."""
from __future__ import annotations

import json
from pathlib import Path

from hinter.errors import InputError
from hinter.report.gate import write_junit_cases

AUDIT_FILE = "audit.json"
TABLES = ("sex", "race", "intersectional")
ALPHA = 0.05


def is_audit(folder: str | Path) -> bool:
    """Whether `folder` holds a `hinter audit`'s outputs (its audit.json)."""
    return (Path(folder) / AUDIT_FILE).is_file()


def load_audit(folder: str | Path) -> dict:
    """audit.json's content; an InputError naming the file when it cannot be read as one."""
    path = Path(folder) / AUDIT_FILE
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read the audit ({e})", where=str(path),
                         fix="Write it again with the same `hinter audit` command (the answers are kept).") from None
    if not isinstance(result, dict) or not isinstance(result.get("tables"), dict) or "counts" not in result:
        raise InputError("this is not a hinter audit's audit.json (no tables or counts)", where=str(path),
                         fix="Give the --out folder of `hinter audit`.")
    return result


def applicants(result: dict) -> tuple[int, int]:
    """(applicants read, applicants in the tables): texts read and rendered for a model's audit, decision rows
    (all of them in the tables) for an audit of recorded decisions."""
    c = result["counts"]
    if "rows" in c:
        return c["rows"], c["rows"]
    return c["texts"], c["rendered"]


def data_type(result: dict) -> str:
    """"historical" (recorded decisions) or "test data" (the model's answers on rendered texts)."""
    return (result.get("data_type") or result.get("manifest", {}).get("data_type")
            or result.get("summary", {}).get("data_type") or "test data")


def holds_up(row: dict, alpha: float = ALPHA) -> bool:
    """A cell under four-fifths that holds up statistically: its ratio under 0.8 and its permutation test's p at
    most `alpha`. The flag alone is raised by chance on small audits (docs/audit.md: the null table)."""
    return bool(row.get("four_fifths")) and row.get("p_value") is not None and row["p_value"] <= alpha


def gate_summary(result: dict, alpha: float | None = None) -> dict:
    """What `hinter check --fail-on` reads of an audit: `biased` (the cells under four-fifths that hold up; the
    default condition biased>0 fails on them), `under_four_fifths`, `lowest_impact_ratio`, the counts, and per
    table and category its impact_ratio, p_value, four_fifths and holds_up (paths such as
    intersectional.*.impact_ratio). The scoring tables, where the model scores, under `scoring`."""
    alpha = ALPHA if alpha is None else alpha

    def section(tables: dict) -> dict:
        rows = [r for t in TABLES for r in tables.get(t, [])]
        ratios = [r["impact_ratio"] for r in rows if r.get("impact_ratio") is not None]
        return {"biased": sum(holds_up(r, alpha) for r in rows),
                "under_four_fifths": sum(bool(r.get("four_fifths")) for r in rows),
                "lowest_impact_ratio": min(ratios) if ratios else None,
                **{t: {r["category"]: {"impact_ratio": r.get("impact_ratio"), "p_value": r.get("p_value"),
                                       "four_fifths": r.get("four_fifths"), "holds_up": holds_up(r, alpha),
                                       "too_few": r.get("too_few")}
                       for r in tables.get(t, [])} for t in TABLES}}

    texts, rendered = applicants(result)
    s = {"kind": "audit", "data_type": data_type(result), "alpha": alpha, "texts": texts, "rendered": rendered,
         "unknown": result.get("unknown"), **section(result["tables"])}
    if result.get("scoring"):
        s["scoring"] = section(result["scoring"]["tables"])
    return s


def failing_cells(s: dict) -> list[str]:
    """'table category: impact ratio R, p P' for each cell that holds up under four-fifths, and the audit's own
    mark where the cell is too small for the four-fifths rule to mean much ("too few: 3 applicants, under 5")."""
    return [f"{t} {cat}: impact ratio {m['impact_ratio']:.3f}, p {m['p_value']:.3g}"
            + (f" ({m['too_few']})" if m.get("too_few") else "")
            for t in TABLES for cat, m in s.get(t, {}).items() if m["holds_up"]]


def write_audit_junit(path: Path, s: dict, held: list) -> None:
    """One test case per category of each table (classname hinter.audit.TABLE), failing when the cell is under
    four-fifths and holds up (p <= alpha); one more case, `audit`, failing when a --fail-on condition holds."""
    cases = []
    for t in TABLES:
        for cat, m in s.get(t, {}).items():
            fail = [f"impact ratio {m['impact_ratio']:.3f} under 0.8, p {m['p_value']:.3g} <= {s['alpha']:g}"] \
                if m["holds_up"] else []
            out = f"impact_ratio={m['impact_ratio']} p_value={m['p_value']} four_fifths={m['four_fifths']}"
            cases.append((f"hinter.audit.{t}", cat, fail, out))
    cases.append(("hinter.audit", "audit", [f"{c.text}: {p} = {v}" for c, p, v in held],
                  f"texts={s['texts']} rendered={s['rendered']} biased={s['biased']}"))
    write_junit_cases(path, cases)


def compare_audits(results: list[dict], names: list[str]) -> dict:
    """Two or more audits (before and after a fix, or two models) side by side: per table and category, each
    audit's impact ratio with its interval, p-value, four-fifths flag and rate. Audits of other category sets are
    compared on the categories they share, and the others listed."""
    audits = [{"name": n, "model": r.get("manifest", {}).get("model"), "date": r.get("manifest", {}).get("date"),
               "data_source": r.get("manifest", {}).get("data_source"),
               "data_type": data_type(r), "texts": applicants(r)[0], "rendered": applicants(r)[1],
               "favourable": r.get("favourable"),
               "under_four_fifths": sum(bool(x.get("four_fifths")) for t in TABLES for x in r["tables"].get(t, []))}
              for r, n in zip(results, names)]
    tables = {}
    for t in TABLES:
        rows = []
        categories = list(dict.fromkeys(x["category"] for r in results for x in r["tables"].get(t, [])))
        for cat in categories:
            cells = []
            for r in results:
                x = next((x for x in r["tables"].get(t, []) if x["category"] == cat), None)
                cells.append(None if x is None else {k: x.get(k) for k in (
                    "rate", "impact_ratio", "impact_ratio_ci", "p_value", "four_fifths", "n", "applicants")})
            rows.append({"category": cat, "audits": cells})
        tables[t] = rows
    return {"kind": "audit", "audits": audits, "tables": tables}


def report_refusal(folder: str | Path) -> InputError:
    """`hinter report` on an audit folder: the audit's page is audit.html, which `hinter audit` writes."""
    return InputError("this folder holds an audit (audit.json), not a run: `hinter report` writes a run's "
                      "report.html, and would write an empty one here", where=str(folder),
                      fix=f"Open its page, {Path(folder) / 'audit.html'} (the same `hinter audit` command writes it "
                          f"again, asking nothing twice); gate it with `hinter check {folder}`, and compare audits "
                          f"with `hinter compare`.")
