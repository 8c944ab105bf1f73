"""`hinter compare`: several runs of the same mutants side by side, a column per model."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from hinter.files import write_atomic
from hinter.cli.app import app, console, out_console


def _rate(r: dict) -> str:
    if not r.get("tested"):
        return "–"
    ci = r.get("error_rate_ci")
    return f"{100 * r['error_rate']:.1f}% ({r['biased']}/{r['tested']})" + (
        f"\n[{100 * ci[0]:.1f}–{100 * ci[1]:.1f}%]" if ci else "")


@app.command("compare")
def compare_cmd(
    runs: List[Path] = typer.Argument(..., metavar="RUN", help="Two or more run folders of the same mutants: runs of "
                                      "one suite, or of the same settings with another --model; or two or more "
                                      "audit folders (hinter audit), their impact ratios side by side."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write compare.json and compare.html into this folder."),
    html: Optional[Path] = typer.Option(None, "--html", help="Write the HTML report to this file."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the whole comparison as JSON to this file "
                                            "('-' for standard output)."),
    show: int = typer.Option(10, "--show", help="How many disagreements to list in the terminal."),
) -> None:
    """Error rates with their intervals, hidden counts, significant findings and the mutants on which the models
    disagree (a bias for one, no bias for another), a column per run. Runs whose settings other than the model,
    or whose mutants, differ are refused. `hinter diff` compares two runs bias by bias. Example:

    hinter compare runs/gemma runs/minilm runs/mine --out runs/compared

    Audits before and after a fix: hinter compare runs/audit-before runs/audit-after
    """
    import json as _json

    from hinter.audit.folder import is_audit
    audits = [is_audit(r) for r in runs]
    if any(audits):
        return _compare_audits(runs, audits, out, html, json_out)

    from hinter.report.compare import compare, load_summary
    from hinter.report.html import render_compare
    from hinter.store import open_run
    names = [str(r) for r in runs]
    stores = []
    try:
        for i, r in enumerate(runs):
            stores.append(open_run(r, f"RUN {i + 1} ({r})"))
        c = compare(stores, names, [load_summary(r, s) for r, s in zip(runs, stores)])
    finally:
        for s in stores:
            s.close()
    text = _json.dumps(c, indent=2) + "\n"
    if json_out is not None and str(json_out) == "-":
        sys.stdout.write(text)
        return
    written = []
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        json_out = json_out or out / "compare.json"
        html = html or out / "compare.html"
    if json_out is not None:
        write_atomic(json_out, text)
        written.append(json_out)
    if html is not None:
        write_atomic(html, render_compare(c, " · ".join(r["model"] for r in c["runs"])))
        written.append(html)

    models = [f"{i + 1}. {r['model']}" for i, r in enumerate(c["runs"])]
    table = Table(title=f"Error rates: {c['valid']} valid mutants of {c['texts']} texts, "
                        f"{c['tested_by_all']} tested by every model", title_justify="left")
    table.add_column("attributes")
    for m in models:
        table.add_column(m, justify="right", overflow="fold")
    for combo, row in c["combinations"].items():
        table.add_row(combo, *(_rate(r) + (f"\nhidden {r['hidden']}" if row["kind"] == "intersectional" else "")
                               for r in row["runs"]))
    for kind in ("atomic", "intersectional"):
        table.add_row(f"all {kind}", *(_rate(r) + (f"\nhidden {r['hidden']}" if kind == "intersectional" else "")
                                       for r in c["totals"][kind]))
    table.add_row("significant findings", *(str(r["significant_findings"]) for r in c["runs"]))
    out_console.print(table)
    for i, r in enumerate(c["runs"]):
        out_console.print(f"{i + 1}. {r['model']}: {r['name']}", highlight=False, markup=False, soft_wrap=True)
    if c["findings"]:
        ft = Table(title="Findings that hold up for at least one model (effect, q; * significant)", title_justify="left")
        ft.add_column("cell")
        for m in models:
            ft.add_column(m, justify="right", overflow="fold")
        for f in c["findings"]:
            ft.add_row(f"{f['kind']} {f['cell']}",
                       *("–" if x is None else f"{x['effect']:+.3g} q {x['q_value']:.2g}{' *' if x['significant'] else ''}"
                         for x in f["runs"]))
        out_console.print(ft)
    for i, ch in enumerate(c["changes"]):
        out_console.print(f"What changed from 1. to {i + 2}.:", highlight=False)
        for line in ch["sentences"]:
            out_console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    d = c["disagreements"]
    out_console.print(f"Disagreements (a bias for one model, no bias for another): {d['count']}"
                      + (" (" + ", ".join(f"{k}: {n}" for k, n in d["by_combination"].items()) + ")"
                         if d["by_combination"] else ""), highlight=False, markup=False)
    for x in d["instances"][:show]:
        name = f"text {x['text_id']}" if x["source_id"] == str(x["text_id"]) else \
            f"id {x['source_id']} (text {x['text_id']})"
        verdicts = ", ".join(f"{i + 1} {r['original_outcome']} -> {r['outcome']} ({r['verdict']})"
                             for i, r in enumerate(x["runs"]))
        out_console.print(f"  {name}, {x['replacements']}: {verdicts}", highlight=False, markup=False, soft_wrap=True)
    if d["count"] > show:
        out_console.print(f"  ... and {d['count'] - show} more"
                          + (" (in the JSON and HTML)" if written else " (--out DIR writes them all)"))
    for p in written:
        console.print(f"Written: {p}", highlight=False)


def _compare_audits(folders: List[Path], audits: list[bool], out: Optional[Path], html: Optional[Path],
                    json_out: Optional[Path]) -> None:
    """Two or more audit folders: each table's impact ratios (interval, p, four-fifths) side by side, a column per
    audit; compare.json and compare.html with --out (or --json, --html)."""
    import json as _json

    from hinter.audit.folder import compare_audits, load_audit
    from hinter.errors import InputError
    from hinter.audit.page import render_audit_compare
    if not all(audits):
        runs = [str(f) for f, a in zip(folders, audits) if not a]
        raise InputError(f"{', '.join(runs)} {'is a run' if len(runs) == 1 else 'are runs'}, the others audits: a "
                         "run's error rates and an audit's impact ratios do not compare", where="RUN",
                         fix="Compare audits with audits (hinter audit's --out folders), runs with runs.")
    if len(folders) < 2:
        raise InputError("one audit has nothing to compare with", where="RUN", fix="Give two audit folders or more.")
    c = compare_audits([load_audit(f) for f in folders], [str(f) for f in folders])
    text = _json.dumps(c, indent=2) + "\n"
    if json_out is not None and str(json_out) == "-":
        sys.stdout.write(text)
        return
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        json_out, html = json_out or out / "compare.json", html or out / "compare.html"
    written = []
    if json_out is not None:
        written.append(write_atomic(json_out, text))
    if html is not None:
        written.append(write_atomic(html, render_audit_compare(c)))
    heads = [f"{i + 1}. {a['name']}" for i, a in enumerate(c["audits"])]
    for name, rows in c["tables"].items():
        table = Table(title=f"Impact ratios: {name} (interval; p; * under four-fifths)", title_justify="left")
        table.add_column("category")
        for h in heads:
            table.add_column(h, justify="right", overflow="fold")
        for row in rows:
            table.add_row(row["category"], *(_audit_cell(x) for x in row["audits"]))
        out_console.print(table)
    for i, a in enumerate(c["audits"]):
        out_console.print(f"{i + 1}. {a['name']}: {a['model']}, {a['rendered']} of {a['texts']} texts rendered, "
                          f"{a['under_four_fifths']} cells under four-fifths ({a['date']})", highlight=False,
                          markup=False, soft_wrap=True)
    for p in written:
        console.print(f"Written: {p}", highlight=False)


def _audit_cell(x: dict | None) -> str:
    if x is None:
        return "not in this audit"
    if x["impact_ratio"] is None:
        return "–"
    ci = x.get("impact_ratio_ci")
    p = "" if x.get("p_value") is None else f"; p {x['p_value']:.2g}"
    return f"{x['impact_ratio']:.3f}{' *' if x['four_fifths'] else ''}" + (
        f"\n[{ci[0]:.2f}–{ci[1]:.2f}{p}]" if ci else f"\n[{p[2:]}]" if p else "")
