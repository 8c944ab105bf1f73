"""`hinter diff`: biases new, fixed and kept between two runs."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from hinter.files import write_atomic
from hinter.cli.app import app, console, out_console


@app.command("diff")
def diff_cmd(
    run_a: Path = typer.Argument(..., help="The baseline run folder."),
    run_b: Path = typer.Argument(..., help="The new run folder (same data and dictionary)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the whole diff as JSON to this file "
                                            "('-' for standard output)."),
    show: int = typer.Option(10, "--show", help="How many biases of each kind to list."),
) -> None:
    """Biases new in RUN_B, fixed in RUN_B and present in both, hidden ones counted apart. Example:

    hinter diff runs/model-v1 runs/model-v2 --json diff.json
    """
    import json as _json

    from hinter.report.compare import load_summary
    from hinter.report.diff import diff
    from hinter.store import open_run
    a, b = open_run(run_a, "RUN_A"), open_run(run_b, "RUN_B")
    try:
        d = diff(a, b, str(run_a), str(run_b), load_summary(run_a, a), load_summary(run_b, b))
    finally:
        a.close()
        b.close()
    if json_out is not None and str(json_out) == "-":
        sys.stdout.write(_json.dumps(d, indent=2) + "\n")
        return
    if json_out is not None:
        write_atomic(json_out, _json.dumps(d, indent=2) + "\n")
    for w in d["warnings"]:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    out_console.print(f"What changed from {run_a} to {run_b}:", highlight=False, markup=False, soft_wrap=True)
    for line in d["change"]["sentences"]:
        out_console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    c = d["counts"]
    table = Table(title=f"Biases of {run_b} against {run_a} ({d['compared_mutants']} mutants tested in both)",
                  title_justify="left")
    for col in ("", "all", "hidden", "not hidden"):
        table.add_column(col, justify="right" if col else "left")
    for k, label in (("new", "new in B"), ("fixed", "fixed in B"), ("both", "in both")):
        table.add_row(label, str(c[k]), str(c[k + "_hidden"]), str(c[k] - c[k + "_hidden"]))
    out_console.print(table)
    un = d["unmatched_biases"]
    if un["a"] or un["b"]:
        out_console.print(f"Biases whose mutant the other run did not test: {un['a']} in A, {un['b']} in B.")
    for k, label in (("new", "New in B"), ("fixed", "Fixed in B")):
        for i in d["instances"][k][:show]:
            name = f"text {i['text_id_b']}" if i["source_id_b"] == str(i["text_id_b"]) else \
                f"id {i['source_id_b']} (text {i['text_id_b']})"
            out_console.print(f"{label}: {name}, {i['replacements']}"
                              f"{' (hidden)' if i['hidden'] else ''}: A {i['original_outcome_a']} -> {i['outcome_a']},"
                              f" B {i['original_outcome_b']} -> {i['outcome_b']}", highlight=False, markup=False,
                              soft_wrap=True)
    if json_out is not None:
        out_console.print(f"Written: {json_out}")
