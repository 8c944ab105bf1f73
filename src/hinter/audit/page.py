"""DIR/audit.html: one self-contained page (no scripts, no links out), rendered from the Jinja template
report/html/templates/audit.html.j2 with autoescaping, as every other page of hinter: dataset texts and the
user's summary fields are escaped there. This module only says what the page reads of the category file."""
from __future__ import annotations

from hinter.report.html import render_template
from hinter.audit.categories import Categories
from hinter.audit.summary import LABELS, flag_of

CSS = """body{font:15px/1.45 system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
table.rates td{text-align:right;white-space:nowrap}table.rates td:first-child{text-align:left;white-space:normal}
tr.flag td{background:#fde8e8}.twin{display:flex;gap:1em}
.twin div{flex:1;border:1px solid #ccc;padding:.5em;background:#fafafa}code{background:#f3f3f3;word-break:break-all}
.note{color:#555}.missing{color:#a40000}.limitation{border-left:4px solid #a40000;padding-left:.6em}"""

TITLES = (("sex", "Sex"), ("race", "Race/ethnicity"), ("intersectional", "Sex x race/ethnicity"))


def render_page(result: dict, cats: Categories) -> str:
    """audit.html for audit.json's content `result`: the LL144 summary and tables, the twins under four-fifths,
    the observed rates, the method and its limits, the EU AI Act section and the manifest, in that order."""
    observed = result["observed"]["tables"]
    view = {
        "language": cats.language, "titles": TITLES, "cells": len(cats.cells),
        "summary_rows": list(LABELS.items()),
        "flags": {k: flag_of(k) for k in LABELS if k != "data_type"},
        "races": [{"name": r.name, "descriptor": r.descriptor, "words": list(r.words)} for r in cats.races],
        # first names are what render a named person; a race with last names only has none (BBQ's Asian list)
        "first_name_races": [r.name for r in cats.races if any(r.names.values())],
        "last_name_only_races": [r.name for r in cats.races if r.last_names and not any(r.names.values())],
        "inferred_race": sum(row["n"] for row in observed.get("race", [])),
        "inferred_sex": sum(row["n"] for row in observed.get("sex", [])),
    }
    return render_template("audit.html.j2", r=result, v=view, css=CSS)


def render_audit_compare(c: dict) -> str:
    """compare.html for audits (hinter compare of audit folders): each table's impact ratios side by side."""
    return render_template("audit_compare.html.j2", c=c, css=CSS)
