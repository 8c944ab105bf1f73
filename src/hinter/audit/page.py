"""DIR/audit.html: one self-contained page (no scripts, no links out), every text escaped with html.escape. The
NYC LL144 layout first (date, data source, counts, the three tables, unknown count, exclusions), then the
intersectional cells under four-fifths with example twins, the observed rates, the method and its limits, and an
EU AI Act Article 10 section."""
from __future__ import annotations

from html import escape

from .categories import Categories

CSS = """body{font:15px/1.45 system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
table.rates td{text-align:right;white-space:nowrap}table.rates td:first-child{text-align:left;white-space:normal}
tr.flag td{background:#fde8e8}.twin{display:flex;gap:1em}
.twin div{flex:1;border:1px solid #ccc;padding:.5em;background:#fafafa}code{background:#f3f3f3;word-break:break-all}
.note{color:#555}"""


def _e(x) -> str:
    return escape("" if x is None else str(x))


def _num(x, pct: bool = False) -> str:
    if x is None:
        return "–"
    return f"{100 * x:.1f}%" if pct else f"{x:.3f}"


def _ci(ci, pct: bool = False) -> str:
    return "–" if not ci else f"{_num(ci[0], pct)} – {_num(ci[1], pct)}"


def table_html(rows: list[dict], title: str) -> str:
    head = ("<tr><th>category</th><th>n</th><th>selected</th><th>selection rate</th><th>95% interval</th>"
            "<th>impact ratio</th><th>95% interval</th><th>p (ratio = 1)</th><th>under 4/5</th><th>excluded</th></tr>")
    body = []
    for r in rows:
        flag = ' class="flag"' if r["four_fifths"] else ""
        body.append(f"<tr{flag}><td>{_e(r['category'])}</td><td>{r['n']}</td><td>{r['selected']}</td>"
                    f"<td>{_num(r['rate'], True)}</td><td>{_ci(r['rate_ci'], True)}</td>"
                    f"<td>{_num(r['impact_ratio'])}</td><td>{_ci(r['impact_ratio_ci'])}</td>"
                    f"<td>{_num(r['p_value'])}</td><td>{'yes' if r['four_fifths'] else 'no' if r['four_fifths'] is False else '–'}"
                    f"</td><td>{_e(r['excluded'] or '')}</td></tr>")
    return f"<h3>{_e(title)}</h3><table class=rates>{head}{''.join(body)}</table>"


TITLES = (("sex", "Sex"), ("race", "Race/ethnicity"), ("intersectional", "Sex x race/ethnicity"))


def render_page(result: dict, cats: Categories) -> str:
    """audit.html: the LL144 layout, the twins under four-fifths, the observed rates, the method and its limits,
    the EU AI Act section and the manifest, in that order."""
    head = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Bias audit</title><style>{CSS}</style>"
            "</head><body><h1>Bias audit: selection rates and impact ratios</h1>")
    parts = [head, *_summary(result), *_outcomes(result), *_twins(result), *_observed(result), *_method(result, cats),
             *_eu_ai_act(result, cats)]
    man = result.get("manifest", {})
    parts.append("<h2>Manifest</h2><table>" + "".join(f"<tr><th>{_e(k)}</th><td><code>{_e(v)}</code></td></tr>"
                                                     for k, v in man.items()) + "</table></body></html>\n")
    return "".join(parts)


def _summary(result: dict) -> list[str]:
    """The LL144 layout: date, data, counts, the three tables, the unknown count, exclusions, scoring."""
    man, counts = result.get("manifest", {}), result["counts"]
    parts = []
    extra = []
    m = result.get("measure")
    if m:
        extra.append(("Measure of a free-text answer", f"{m['favourable']} ({m['rule']}; {m['samples']} samples"
                      + (f"; judge {m['judge']}" if m.get("judge") else "") + ")"))
    if "usage" in result:
        extra.append(("Model calls (this folder, every session)", result["usage"]["calls"]))
    parts.append("<h2>Summary (NYC Local Law 144 layout)</h2><table>" + "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in (
            ("Date of the audit", man.get("date")), ("Data source", man.get("data_source")),
            ("Model", man.get("model")), ("Task", man.get("task")), ("Favourable outcome", result["favourable"]),
            ("Texts read", counts["texts"]), ("Texts rendered in every category", counts["rendered"]),
            ("Renderings asked", counts["renderings"]),
            ("Not rendered or unanswered (the unknown count)", result["unknown"]),
            *extra)) + "</table>")
    parts.append("<p class=note>Each rendered text is read by the model once in every category below: the counts "
                 "per category are equal by design (n per sex and per race counts renderings). The texts not "
                 "rendered, by reason (" + _e(", ".join(
                     f"{n} {r}" for r, n in counts["not_rendered"].items())) + ").</p>")
    for key, title in TITLES:
        if key in result["tables"]:
            parts.append(table_html(result["tables"][key], title))
    excluded = result["excluded"]
    parts.append("<h3>Exclusions</h3><p>" + ("; ".join(f"{_e(x['table'])} {_e(x['category'])}: {_e(x['reason'])}"
                                                   for x in excluded) or
                                         "None: every category holds the same texts, over 2% of the data.") + "</p>")
    if "scoring" in result:
        parts.append(f"<h2>Scoring rates</h2><p>The share of renderings whose score for {_e(result['favourable'])} is "
                     f"above the sample's median ({_e(result['scoring']['median'])}), and its ratios.</p>")
        for key, title in TITLES:
            parts.append(table_html(result["scoring"]["tables"][key], "Scoring rate: " + title))
    return parts


def _outcomes(result: dict) -> list[str]:
    """How the texts were rendered (through a person noun, a name or a pronoun) and each text not rendered, with
    its reason (audit.json's `texts`)."""
    texts = result.get("texts")
    if texts is None:
        return []
    by = result["counts"].get("rendered_by", {})
    parts = ["<h3>Texts not rendered</h3><p class=note>Rendered texts name their person with a person noun "
             f"({_e(by.get('noun', 0))}; the descriptor before it: \u201cthe Black woman\u201d), a name "
             f"({_e(by.get('name', 0))}) or a pronoun only ({_e(by.get('pronoun', 0))}; the descriptor in "
             "apposition: \u201cShe, a Black woman, has\u2026\u201d; in French the first mention becomes "
             "\u201cune femme noire\u201d). Each text's outcome is in audit.json (<code>texts</code>).</p>"]
    dropped = [t for t in texts if t["outcome"] != "rendered"]
    if dropped:
        parts.append("<table><tr><th>text</th><th>id</th><th>reason</th></tr>" + "".join(
            f"<tr><td>{_e(t['index'])}</td><td>{_e(t['id'] or '')}</td><td>{_e(t['reason'])}</td></tr>"
            for t in dropped) + "</table>")
    else:
        parts.append("<p>None: every text was rendered in every category.</p>")
    return parts


def _twins(result: dict) -> list[str]:
    """The intersectional categories under four-fifths, each with its example twins."""
    parts = []
    parts.append("<h2>Intersectional categories under four-fifths, with example twins</h2>")
    flagged = [r for r in result["tables"].get("intersectional", []) if r["four_fifths"]]
    if not flagged:
        parts.append("<p>No intersectional category has an impact ratio under 0.8.</p>")
    for r in flagged:
        parts.append(f"<h3>{_e(r['category'])}: impact ratio {_num(r['impact_ratio'])} "
                     f"({_ci(r['impact_ratio_ci'])}), p = {_num(r['p_value'])}</h3>")
        for t in (t for t in result["twins"] if t["category"] == r["category"]):
            parts.append(f"<p class=note>Text {_e(t['source_id'] or t['text_index'])}: the same application, two "
                         f"categories, two outcomes.</p><div class=twin><div><b>{_e(t['reference'])}</b>: "
                         f"{_e(t['reference_outcome'])}<p>{_e(t['reference_text'])}</p></div><div><b>"
                         f"{_e(t['category'])}</b>: {_e(t['outcome'])}<p>{_e(t['text'])}</p></div></div>")
    return parts


def _observed(result: dict) -> list[str]:
    """The observed rates: the texts as they are, each in the category its words give."""
    parts = []
    obs = result["observed"]
    parts.append("<h2>Observed rates: the texts as they are</h2><p>Each original text's category from the identity "
                 "words it holds (a race word right before a person noun, a first name of the category file, the "
                 "sex of its person nouns and pronouns); <code>unknown</code> where none. This is what an audit on "
                 "historical data reports: it mixes the model's treatment with who the texts are about. The "
                 "counterfactual tables above hold the texts fixed and change only the category. Unknown: " +
                 _e(", ".join(f"{k} {v}" for k, v in obs["unknown"].items())) + ".</p>")
    for key, title in TITLES:
        parts.append(table_html(obs["tables"][key], "Observed: " + title))
    return parts


def _method(result: dict, cats: Categories) -> list[str]:
    """The method and its limits, the category words, and the names used."""
    parts = []
    words = "".join(f"<tr><td>{_e(r.name)}</td><td>{_e(r.descriptor)}</td><td>{_e(', '.join(r.words))}</td></tr>"
                    for r in cats.races)
    parts.append(
        "<h2>Method and limits</h2><p>Every text that describes a person (a person noun of the category file: "
        "man, woman, actor, mother...) is rendered in every sex x race/ethnicity category: the first mention gets "
        "the category's descriptor (\"the Black woman\"), every person noun takes the category's sex, and the "
        "pronouns follow (he/she, his/her, him/her). Texts with words of more than one sex are not rendered. The "
        "renderings of a text pass hinter's dependency invariant against one another (each against the first), "
        "not against the original, since inserting a descriptor changes a sentence's structure; a text whose "
        "renderings differ in structure is left out as a whole, so that every text stays in every category. "
        "Rate intervals: a percentile bootstrap over texts (seeded), a text's renderings drawn together. "
        "Impact-ratio intervals: the same bootstrap, simultaneous over every pair of categories, since the "
        "reference is the most selected category of the same data. p-values: a permutation test within texts, "
        "against the smallest ratio of each permutation, for the same reason. The four-fifths flag alone is "
        "not evidence on few texts: read it with the interval and the p-value.</p><p>Limits: descriptors are explicit words; a model may react "
        "differently to implicit markers (dialect, schools; names only where the text names its person, and "
        "only for the categories with names of their own). The category words are a list, not an understanding "
        "of the text: a second person of the same sex is changed too; identity words elsewhere in the text are "
        "left as they are. One word per descriptor keeps the renderings comparable, so \"Hawaiian\" stands for "
        "Native Hawaiian or Other Pacific Islander and \"Indigenous\" for American Indian or Alaska Native. The "
        "model is audited on these texts only: another population of applications can give other rates.</p>"
        f"<table><tr><th>category</th><th>descriptor</th><th>words (observed category)</th></tr>{words}</table>")
    names = result.get("names")
    if names:
        parts.append(
            f"<h3>Names</h3><p>{_e(names['texts_naming_the_person'])} rendered texts name their person with a first "
            "name of the category file (of the person's sex); each rendering gives the person a first name of its "
            "category. With names of their own (" + _e(", ".join(names["sources"].get(r.name, "") and r.name
                                                                for r in cats.races if r.names_source) or "none") +
            "): " + _e(", ".join(names["rendered_with_own_names"]) or "none") + ". <b>Rendered by descriptors only"
            "</b>: " + _e(", ".join(names["descriptors_only"]) or "none") + (
                f" ({_e(names['descriptors_only_note'])})" if names["descriptors_only_note"] else "") +
            f". Last names: {_e(names['last_names'])}.</p><p class=note>Sources: " + _e("; ".join(
                f"{k}: {v}" for k, v in names["sources"].items()) or "none") + ".</p>")
    return parts


def _eu_ai_act(result: dict, cats: Categories) -> list[str]:
    """The EU AI Act's Article 10 section: what was examined, with which data, how, what was found."""
    man, counts = result.get("manifest", {}), result["counts"]
    flagged = [r for r in result["tables"].get("intersectional", []) if r["four_fifths"]]
    parts = []
    inter = result["tables"].get("intersectional", [])
    worst = min((r for r in inter if r["impact_ratio"] is not None), key=lambda r: r["impact_ratio"], default=None)
    parts.append(
        "<h2>EU AI Act, Article 10: examination for possible biases</h2><table>"
        f"<tr><th>What was examined</th><td>The outcomes of the model {_e(man.get('model'))} on the task "
        f"{_e(man.get('task'))} (favourable outcome: {_e(result['favourable'])}), per sex, race/ethnicity and their "
        "intersection (Article 10(2)(f)).</td></tr>"
        f"<tr><th>With which data</th><td>{_e(man.get('data_source'))} (sha256 {_e(man.get('dataset_sha256'))}): "
        f"{counts['texts']} texts, {counts['rendered']} rendered in all {len(cats.cells)} categories. Special-"
        "category data were not processed: the categories are written into the texts by the audit (Article 10(5)"
        ").</td></tr><tr><th>How</th><td>Counterfactual renderings of each text (above), validated by the "
        "dependency invariant; selection rates, impact ratios, intervals and tests as described in the method."
        "</td></tr>"
        f"<tr><th>What was found</th><td>{len(flagged)} intersectional categor{'y' if len(flagged) == 1 else 'ies'} "
        "under the four-fifths line" + (f"; the lowest impact ratio: {_e(worst['category'])}, "
                                       f"{_num(worst['impact_ratio'])} ({_ci(worst['impact_ratio_ci'])})"
                                       if worst else "") + ".</td></tr>"
        "<tr><th>Left to the provider</th><td>Whether these texts represent the system's intended use and "
        "population (Article 10(3)-(4)); the measures to prevent and mitigate the biases found (10(2)(g)); other "
        "protected characteristics (age, disability, religion...) and implicit markers; the record-keeping of "
        "this audit with the system's technical documentation.</td></tr></table>")
    return parts
