"""report.html: one self-contained page (inline CSS, JS and SVG; no network) that a person reads in a minute.

The page is the Jinja template templates/report.html.j2, with static/report.css and static/report.js inlined;
charts.py draws the SVG charts, prose.py writes the reading in words, excerpts.py cuts and highlights the texts.
Every number shown comes from summary.json (elements carry `data-measure`, its path, and `data-value`, so a test
can check the page against the summary) or from the store's bias instances. Autoescaping is on: dataset text is
always escaped, and only markup built here (charts, excerpts, the static files) is inserted as is.
"""
from __future__ import annotations

import json
from importlib.resources import files

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from hinter.analysis.findings import consistent_shift
from hinter.analysis.health import model_failure, untested
from hinter.records import dictionary_replacements
from hinter.report.instances import Instance
from hinter.report.html import charts
from hinter.report.html.excerpts import edited_versions, versions
from hinter.report.html.formatting import ci_text, combo_label, pct
from hinter.report.html.prose import (beyond_spread, finding_cell, finding_moves, hidden_not_population, occupational_words,
                    pattern_meaning, reading, score_shift, warnings, words)

_env = Environment(loader=PackageLoader(__name__, "templates"), autoescape=True, undefined=StrictUndefined,
                   trim_blocks=True, lstrip_blocks=True)
_env.filters.update(pct=pct, ci=ci_text, combo=combo_label, json=json.dumps)
_env.globals.update(colours=charts.COLOURS, versions=versions, pattern_meaning=pattern_meaning,
                    cell_name=finding_cell, moves=finding_moves,
                    score_shift=score_shift, hidden_not_population=hidden_not_population,
                    consistent_shift=consistent_shift, occupational_words=occupational_words)


def render_template(name: str, **context) -> str:
    """One of the package's templates rendered in the project's one Jinja environment (autoescape, strict)."""
    return _env.get_template(name).render(**context)


def _static(name: str) -> Markup:
    # Our own files, inlined into <style> and <script>: escaping them would break the CSS and JS.
    return Markup((files(__name__) / "static" / name).read_text(encoding="utf-8"))


def render_compare(c: dict, title: str, shown: int = 200) -> str:
    """compare.html for the comparison `c` (report.compare): the first `shown` disagreements as cards."""
    listed = [(d, edited_versions(d["original_text"], [tuple(e) for e in d["edits"]],
                                  d["attributes"].replace("+", " + "))) for d in c["disagreements"]["instances"][:shown]]
    return _env.get_template("compare.html.j2").render(c=c, title=title, listed=listed, css=_static("report.css"))


def render(s: dict, instances: list[Instance], title: str, diff: dict | None = None, serve: dict | None = None) -> str:
    """The page for the summary `s` and its bias `instances`; with `diff` (report.diff), the comparison section;
    with `serve` (hinter serve's context: runs, attributes, its CSS and JS), the live page: triage on each bias and
    "try a sentence"."""
    heatmaps, heat_top = charts.heatmaps(s)
    serve = None if serve is None else {**serve, "js": _static("serve.js"), "css": _static("serve.css")}
    return _env.get_template("report.html.j2").render(
        s=s, instances=instances, title=title, diff=diff, reading=reading(s), model_failure=model_failure(s),
        free=words(s).of_answers, beyond=beyond_spread(s),
        warnings=warnings(s), untested=untested(s),
        error_chart=charts.error_chart(s), hidden_chart=charts.hidden_chart(s), venn=charts.venn(s),
        heatmaps=heatmaps, heat_top=heat_top,
        filter_attributes=sorted({a for i in instances for a in i.attributes.split("+")}),
        filter_groups=sorted({(r.attribute, r.target_group) for i in instances
                              for r in dictionary_replacements(i.replacements)}),
        filter_combos=sorted({i.attributes for i in instances}, key=lambda c: (c.count("+"), c)), serve=serve,
        css=_static("report.css"), js=_static("report.js"))


def render_serve(serve: dict) -> str:
    """hinter serve's page without a run: "try a sentence" alone."""
    serve = {**serve, "js": _static("serve.js"), "css": _static("serve.css")}
    return _env.get_template("serve_page.html.j2").render(serve=serve, css=_static("report.css"))


def render_study(*, tables: dict, headline: list[dict], summaries: dict, plan: dict, seconds: dict,
                 grammar_available: bool) -> str:
    """study.html (`hinter study`): its tables (rq1..rq4, as the CSV files hold them), the paper's headline
    figures beside the study's, and the charts of every run (`summaries` by (dataset, model))."""
    runs = [{"dataset": d, "model": m, "error_chart": charts.error_chart(s), "hidden_chart": charts.hidden_chart(s),
             "venn": charts.venn(s)} for (d, m), s in summaries.items()]
    return _env.get_template("study.html.j2").render(
        tables=tables, headline=headline, plan=plan, seconds=seconds, grammar_available=grammar_available,
        study_chart=charts.study_chart(tables["rq1"]), runs=runs, css=_static("report.css"))
