"""report.html: one self-contained page (inline CSS, JS and SVG; no network) that a person reads in a minute.

Every number shown comes from summary.json (elements carry `data-measure`, its path, and `data-value`, so a test
can check the page against the summary) or from the store's bias instances. Dataset text is always escaped.
"""
from __future__ import annotations

import json
from html import escape

from .instances import Instance, Version

ATOMIC_COLOUR, INTER_COLOUR, HIDDEN_COLOUR = "#2f6db5", "#d9822b", "#8e2dc5"


def _e(x) -> str:
    return escape(str(x), quote=True)


def pct(x, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def ci_text(ci) -> str:
    return "" if not ci else f"95% CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f}%"


def _m(path: str, value, text: str | None = None, tag: str = "span", cls: str = "") -> str:
    """A number on the page, tied to its summary.json path."""
    shown = text if text is not None else (pct(value) if isinstance(value, float) else str(value))
    c = f' class="{cls}"' if cls else ""
    return f'<{tag}{c} data-measure="{_e(path)}" data-value="{_e(json.dumps(value))}">{_e(shown)}</{tag}>'


def _get(s: dict, path: str):
    obj = s
    for p in path.split("."):
        obj = obj[p]
    return obj


def _combo_label(combo: str) -> str:
    return combo.replace("+", " × ")


# ---------------------------------------------------------------- reading in words

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
        out.append(f"The highest error rate is for {_combo_label(k)}: {pct(m['error_rate'])} "
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
            f"{name.replace('+', ' & ')} ({_combo_label(fam)}, {pct(r)}, {g['biased']}/{g['tested']})"
            for r, fam, name, g in clear) + ".")
    return out


# ---------------------------------------------------------------- headline cards

def _card(title: str, value_html: str, sub_html: str, note: str, testid: str) -> str:
    return (f'<div class="card" data-testid="{testid}"><div class="card-title">{_e(title)}</div>'
            f'<div class="card-value">{value_html}</div><div class="card-sub">{sub_html}</div>'
            f'<div class="card-note">{_e(note)}</div></div>')


def headline(s: dict) -> str:
    a, i, ob = s["totals"]["atomic"], s["totals"]["intersectional"], s["originals_with_bias"]
    cards = [
        _card("Texts tested", _m("texts", s["texts"]),
              f'{_m("totals.atomic.valid + totals.intersectional.valid", a["valid"] + i["valid"])} valid changed '
              f'texts of {_m("totals.atomic.mutants + totals.intersectional.mutants", a["mutants"] + i["mutants"])}',
              "Changed texts whose grammar differs from the original are discarded.", "texts"),
        _card("Texts that expose a bias", _m("originals_with_bias.count", ob["count"]),
              f'of {_m("originals_with_bias.of_originals_with_valid_mutants", ob["of_originals_with_valid_mutants"])}'
              f' with a valid change · {_m("originals_with_bias.rate", ob["rate"])}',
              ci_text(ob.get("rate_ci")), "originals"),
        _card("One attribute changed", _m("totals.atomic.error_rate", a["error_rate"]),
              f'{_m("totals.atomic.biased", a["biased"])} flips of {_m("totals.atomic.tested", a["tested"])} tested',
              ci_text(a.get("error_rate_ci")), "atomic"),
        _card("Several attributes at once", _m("totals.intersectional.error_rate", i["error_rate"]),
              f'{_m("totals.intersectional.biased", i["biased"])} flips of '
              f'{_m("totals.intersectional.tested", i["tested"])} tested',
              ci_text(i.get("error_rate_ci")), "intersectional"),
        _card("Hidden biases", _m("totals.intersectional.hidden", i["hidden"], cls="hidden-count"),
              f'of {_m("totals.intersectional.biased", i["biased"])} intersectional biases'
              + (f' · {_m("totals.intersectional.hidden_rate", i["hidden_rate"])}' if i["biased"] else ""),
              "Missed by testing one attribute at a time.", "hidden"),
    ]
    return '<div class="cards">' + "".join(cards) + "</div>"


# ---------------------------------------------------------------- charts (inline SVG)

def _nice_max(x: float) -> float:
    for step in (0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if x <= step:
            return step
    return 1.0


def error_chart(s: dict) -> str:
    rows = [("atomic", k, m) for k, m in s["atomic"].items()] + [("intersectional", k, m)
                                                                   for k, m in s["intersectional"].items()]
    if not rows:
        return '<p class="muted">No mutant was generated.</p>'
    top = _nice_max(max([(m.get("error_rate_ci") or [0, 0])[1] for _, _, m in rows] + [0.01]))
    label_w, bar_w, row_h, text_w = 150, 380, 26, 190
    height = 30 + row_h * len(rows) + 14 * (len({k for k, _, _ in rows}) - 1)
    width = label_w + bar_w + text_w
    x = lambda v: label_w + bar_w * v / top  # noqa: E731
    parts = [f'<svg class="chart" role="img" aria-label="Error rate by attribute and combination" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for t in range(5):
        v = top * t / 4
        parts.append(f'<line x1="{x(v):.1f}" y1="18" x2="{x(v):.1f}" y2="{height - 4}" class="grid"/>'
                     f'<text x="{x(v):.1f}" y="12" class="axis" text-anchor="middle">{100 * v:g}%</text>')
    y, prev = 22, None
    for kind, combo, m in rows:
        if prev and kind != prev:
            y += 14
        prev = kind
        colour = ATOMIC_COLOUR if kind == "atomic" else INTER_COLOUR
        rate = m["error_rate"]
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end" class="label">'
                     f'{_e(_combo_label(combo))}</text>')
        if rate is not None:
            parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{max(x(rate) - label_w, 1.5):.1f}" height="16" '
                         f'fill="{colour}" rx="2"><title>{_e(combo)}: {pct(rate)} ({m["biased"]}/{m["tested"]}) '
                         f'{ci_text(m["error_rate_ci"])}</title></rect>')
            lo, hi = m["error_rate_ci"]
            parts.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y + 12}" y2="{y + 12}" class="whisker"/>'
                         f'<line x1="{x(lo):.1f}" x2="{x(lo):.1f}" y1="{y + 7}" y2="{y + 17}" class="whisker"/>'
                         f'<line x1="{x(hi):.1f}" x2="{x(hi):.1f}" y1="{y + 7}" y2="{y + 17}" class="whisker"/>')
        shown = f"{pct(rate)}  ({m['biased']}/{m['tested']})" if rate is not None else "not tested"
        parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + 16}" class="value" '
                     f'data-measure="{kind}.{_e(combo)}.error_rate" data-value="{_e(json.dumps(rate))}">'
                     f'{_e(shown)}</text>')
        y += row_h
    parts.append("</svg>")
    legend = ('<div class="legend">' + _key(ATOMIC_COLOUR, "one attribute (atomic)")
              + _key(INTER_COLOUR, "several at once (intersectional)")
              + '<span class="key"><span class="whisker-key"></span>95% confidence interval</span></div>')
    return "".join(parts) + legend


def _key(colour: str, text: str) -> str:
    return f'<span class="key"><span class="sw" style="background:{colour}"></span>{_e(text)}</span>'


def hidden_chart(s: dict) -> str:
    by = s.get("attribution", {}).get("by_combination", {})
    combos = [(k, s["intersectional"][k], by.get(k)) for k in s["intersectional"]]
    if not any(m["biased"] for _, m, _ in combos):
        return '<p class="muted">No intersectional bias: nothing is hidden.</p>'
    label_w, bar_w, row_h = 150, 420, 30
    height = 12 + row_h * len(combos)
    width = label_w + bar_w + 160
    parts = [f'<svg class="chart" role="img" aria-label="Hidden share of intersectional biases" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    y = 6
    for combo, m, a in combos:
        parts.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end" class="label">'
                     f'{_e(_combo_label(combo))}</text>')
        total = m["biased"]
        if total and a:
            hidden = m["hidden"]
            undecided = a["no_sub_combination_flips"] - a["of_which_hidden"]  # a part discarded or unanswered
            segs = [(hidden, HIDDEN_COLOUR, "hidden"), (total - hidden - undecided, "#9aa7b8", "explained by a part"),
                    (undecided, "#d9dde3", "parts not testable")]
            x0 = label_w
            for n, colour, what in segs:
                if n:
                    w = bar_w * n / total
                    parts.append(f'<rect x="{x0:.1f}" y="{y + 5}" width="{w:.1f}" height="18" fill="{colour}">'
                                 f'<title>{n} {what}</title></rect>')
                    if w > 24:
                        parts.append(f'<text x="{x0 + w / 2:.1f}" y="{y + 18}" text-anchor="middle" '
                                     f'class="inbar">{n}</text>')
                    x0 += w
        shown = f"{pct(m['hidden_rate'])} hidden ({m['hidden']}/{total})" if total else "no bias"
        parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + 18}" class="value" '
                     f'data-measure="intersectional.{_e(combo)}.hidden" data-value="{m["hidden"]}">{_e(shown)}</text>')
        y += row_h
    parts.append("</svg>")
    legend = ('<div class="legend">' + _key(HIDDEN_COLOUR, "hidden: no attribute alone flips the answer")
              + _key("#9aa7b8", "explained: one attribute alone already flips it")
              + _key("#d9dde3", "undecided: a part was discarded") + "</div>")
    return "".join(parts) + legend


def _pattern_meaning(comps: list[bool], inter: bool, attrs: list[str]) -> str:
    flipped = [a for a, c in zip(attrs, comps) if c]
    if inter and not flipped:
        return "hidden bias"
    if inter:
        return f"explained by {' & '.join(flipped)}"
    if flipped:
        return f"masked: {' & '.join(flipped)} flips alone"
    return "no bias"


def truth_tables(s: dict) -> str:
    tables = []
    for combo, t in s.get("truth_table", {}).items():
        attrs = t["attributes"]
        biggest = max([r["count"] for r in t["rows"]] + [1])
        head = "".join(f"<th>{_e(a)} alone</th>" for a in attrs)
        body = []
        for idx, r in enumerate(t["rows"]):
            cells = "".join(f'<td class="{"flip" if c else "same"}">{"flips" if c else "same"}</td>'
                            for c in r["components"])
            cls = " hidden-row" if r["hidden"] and r["count"] else (" zero" if not r["count"] else "")
            bar = f'<svg width="50" height="10"><rect width="{50 * r["count"] / biggest:.1f}" height="10" ' \
                  f'fill="{HIDDEN_COLOUR if r["hidden"] else "#9aa7b8"}"/></svg>'
            body.append(f'<tr class="tt{cls}">{cells}<td class="{"flip" if r["intersectional"] else "same"}">'
                        f'{"flips" if r["intersectional"] else "same"}</td>'
                        f'<td class="num">{_m(f"truth_table.{combo}.rows.{idx}.count", r["count"])}</td>'
                        f'<td class="meaning">{bar} {_e(_pattern_meaning(r["components"], r["intersectional"], attrs))}</td></tr>')
        tables.append(f'<div class="tt-box"><h4>{_e(_combo_label(combo))}</h4><table class="truth">'
                      f'<thead><tr>{head}<th>together</th><th>mutants</th><th>reading</th></tr></thead>'
                      f'<tbody>{"".join(body)}</tbody></table><p class="muted small">'
                      f'{_m(f"truth_table.{combo}.counted", t["counted"])} intersectional mutants whose parts are all '
                      f'valid and answered; {_m(f"truth_table.{combo}.left_out", t["left_out"])} left out.</p></div>')
    return '<div class="tt-grid">' + "".join(tables) + "</div>" if tables else '<p class="muted">No intersectional mutant.</p>'


def venn(s: dict) -> str:
    v, ob = s["originals_venn"], s["originals_with_bias"]
    none = ob["of_originals_with_valid_mutants"] - ob["count"]
    return (f'<svg class="chart" role="img" aria-label="Originals Venn diagram" viewBox="0 0 420 220" width="420" '
            f'height="220"><circle cx="165" cy="110" r="85" fill="{ATOMIC_COLOUR}" fill-opacity="0.25" '
            f'stroke="{ATOMIC_COLOUR}"/><circle cx="255" cy="110" r="85" fill="{INTER_COLOUR}" fill-opacity="0.25" '
            f'stroke="{INTER_COLOUR}"/>'
            f'<text x="120" y="22" text-anchor="middle" class="label">atomic bias</text>'
            f'<text x="300" y="22" text-anchor="middle" class="label">intersectional bias</text>'
            f'<text x="125" y="118" text-anchor="middle" class="big" data-measure="originals_venn.atomic_only" '
            f'data-value="{v["atomic_only"]}">{v["atomic_only"]}</text>'
            f'<text x="210" y="118" text-anchor="middle" class="big" data-measure="originals_venn.both" '
            f'data-value="{v["both"]}">{v["both"]}</text>'
            f'<text x="295" y="118" text-anchor="middle" class="big" data-measure="originals_venn.intersectional_only" '
            f'data-value="{v["intersectional_only"]}">{v["intersectional_only"]}</text>'
            f'<text x="125" y="138" text-anchor="middle" class="axis">only</text>'
            f'<text x="210" y="138" text-anchor="middle" class="axis">both</text>'
            f'<text x="295" y="138" text-anchor="middle" class="axis">only</text></svg>'
            f'<p class="muted small">Texts by the kind of bias they lead to. {none} of the '
            f'{ob["of_originals_with_valid_mutants"]} texts with a valid change lead to none.</p>')


def _heat_colour(rate: float | None, top: float) -> str:
    if rate is None:
        return "#f3f4f6"
    t = min(rate / top, 1.0) if top else 0.0
    # white -> deep red
    r, g, b = 255 + (192 - 255) * t, 255 + (41 - 255) * t, 255 + (43 - 255) * t
    return f"#{int(r):02x}{int(g):02x}{int(b):02x}"


def group_heatmaps(s: dict) -> str:
    gb = s.get("group_bias", {})
    rates = [g["error_rate"] for kind in gb.values() for f in kind.values() for g in f["groups"].values()]
    top = max(rates + [0.01])
    blocks = []
    for kind in ("atomic", "intersectional"):
        for fam, f in gb.get(kind, {}).items():
            attrs = fam.split("+")
            groups = f["groups"]
            if len(attrs) == 2:
                rows = sorted({g.split("+")[0] for g in groups})
                cols = sorted({g.split("+")[1] for g in groups})
                cell = lambda r, c: (f"{r}+{c}", groups.get(f"{r}+{c}"))  # noqa: E731
            else:
                rows, cols = [""], sorted(groups)
                cell = lambda r, c: (c, groups.get(c))  # noqa: E731
            cw, ch, lw = 92, 40, (110 if len(attrs) == 2 else 8)
            top_h = 34
            width, height = lw + cw * len(cols) + 4, top_h + ch * len(rows) + 4
            parts = [f'<svg class="heat" role="img" aria-label="group bias {_e(fam)}" viewBox="0 0 {width} {height}" '
                     f'width="{width}" height="{height}">']
            for j, c in enumerate(cols):
                parts.append(f'<text x="{lw + cw * j + cw / 2}" y="{top_h - 8}" text-anchor="middle" class="axis">'
                             f'{_e(c)}</text>')
            for i_, r in enumerate(rows):
                if r:
                    parts.append(f'<text x="{lw - 6}" y="{top_h + ch * i_ + ch / 2 + 4}" text-anchor="end" '
                                 f'class="axis">{_e(r)}</text>')
                for j, c in enumerate(cols):
                    name, g = cell(r, c)
                    x0, y0 = lw + cw * j, top_h + ch * i_
                    if g is None:
                        parts.append(f'<rect x="{x0}" y="{y0}" width="{cw - 2}" height="{ch - 2}" fill="#f3f4f6"/>')
                        continue
                    stroke = ' stroke="#111" stroke-width="2.5"' if g["flagged"] else ""
                    dark = g["error_rate"] / top > 0.55
                    path = f"group_bias.{kind}.{fam}.groups.{name}.error_rate"
                    parts.append(
                        f'<rect x="{x0}" y="{y0}" width="{cw - 2}" height="{ch - 2}" rx="3" '
                        f'fill="{_heat_colour(g["error_rate"], top)}"{stroke}><title>{_e(name)}: '
                        f'{pct(g["error_rate"])} ({g["biased"]}/{g["tested"]}) {ci_text(g["error_rate_ci"])}'
                        f'{" · above the mean" if g["flagged"] else ""}</title></rect>'
                        f'<text x="{x0 + cw / 2 - 1}" y="{y0 + 17}" text-anchor="middle" class="cellv'
                        f'{" dark" if dark else ""}" data-measure="{_e(path)}" data-value="{g["error_rate"]}">'
                        f'{pct(g["error_rate"])}</text><text x="{x0 + cw / 2 - 1}" y="{y0 + 31}" '
                        f'text-anchor="middle" class="cellc{" dark" if dark else ""}">{g["biased"]}/{g["tested"]}'
                        f'</text>')
            parts.append("</svg>")
            title = (f"{_e(attrs[0])} (rows) × {_e(attrs[1])} (columns)" if len(attrs) == 2
                     else _e(_combo_label(fam)))
            blocks.append(f'<div class="heat-box"><h4>{title}</h4>{"".join(parts)}<p class="muted small">mean '
                          f'{_m(f"group_bias.{kind}.{fam}.mean_error_rate", f["mean_error_rate"])}; outlined: above '
                          f'the mean</p></div>')
    if not blocks:
        return '<p class="muted">No tested mutant.</p>'
    return ('<div class="heat-grid">' + "".join(blocks) + '</div><p class="muted small">Error rate of the mutants '
            'that change a person <em>to</em> each target group (MutaInT Table 4); darker is higher, the scale tops '
            f'at {pct(top)}.</p>')


# ---------------------------------------------------------------- instances

EXCERPT_AT = 600   # texts longer than this are shown as excerpts around the changes
WINDOW = 70


def _render_segment(text: str) -> str:
    # IMDB reviews hold literal "<br />": shown as line breaks, after escaping (so no markup from data survives).
    return _e(text).replace("&lt;br /&gt;", "<br>").replace("&lt;br/&gt;", "<br>")


def render_text(original: str, v: Version, marks: list[tuple[int, int]], windows: list[tuple[int, int]]) -> str:
    """The version `v` of `original` within `windows` (original coordinates): words it replaced highlighted as
    new, and in the original (no edits) the words that the mutant replaces."""
    from ..mutation import match_case
    edits = {(s, e): new for s, e, new in v.edits}
    out = []
    for w0, w1 in windows:
        if w0 > 0:
            out.append('<span class="gap"> … </span>')
        pos = w0
        for s, e in marks:
            if s < w0 or e > w1:
                continue
            out.append(_render_segment(original[pos:s]))
            if (s, e) in edits:
                out.append(f'<mark class="to">{_e(match_case(original[s:e], edits[(s, e)]))}</mark>')
            elif not v.edits:
                out.append(f'<mark class="from">{_e(original[s:e])}</mark>')
            else:
                out.append(_e(original[s:e]))
            pos = e
        out.append(_render_segment(original[pos:w1]))
    if windows and windows[-1][1] < len(original):
        out.append('<span class="gap">…</span>')
    return "".join(out)


def _windows(text: str, marks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if len(text) <= EXCERPT_AT or not marks:
        return [(0, len(text))]
    wins: list[list[int]] = []
    for s, e in marks:
        a, b = max(0, s - WINDOW), min(len(text), e + WINDOW)
        # widen to whole words
        while a > 0 and not text[a - 1].isspace():
            a -= 1
        while b < len(text) and not text[b].isspace():
            b += 1
        if wins and a <= wins[-1][1]:
            wins[-1][1] = max(wins[-1][1], b)
        else:
            wins.append([a, b])
    return [tuple(w) for w in wins]


def _outcome_pill(v: Version, original_outcome) -> str:
    if v.valid is False:
        return '<span class="pill discarded" title="discarded by the grammar check: not asked">discarded</span>'
    if v.outcome is None and v.valid is not None:
        return '<span class="pill unparseable">unparseable</span>'
    differs = v.valid is not None and v.outcome != original_outcome
    return f'<span class="pill {"flip" if differs else "same"}">{_e(v.outcome)}</span>'


def _version_col(inst: Instance, v: Version, marks, windows, role: str) -> str:
    body = render_text(inst.original.text, v, marks, windows)
    full = ""
    if windows != [(0, len(inst.original.text))]:
        full = (f'<details class="full"><summary>full text</summary><div class="text">'
                f'{render_text(inst.original.text, v, marks, [(0, len(inst.original.text))])}</div></details>')
    raw = f'<details class="raw"><summary>raw answer</summary><pre>{_e(v.raw)}</pre></details>' if v.raw else ""
    return (f'<div class="ver {role}"><div class="ver-head"><span class="ver-label">{_e(v.label)}</span>'
            f'{_outcome_pill(v, inst.original.outcome)}</div><div class="text">{body}</div>{full}{raw}</div>')


def _attribution_line(inst: Instance) -> str:
    if inst.order == 1:
        return ""
    a = inst.attribution or {}
    if inst.hidden:
        parts = " nor ".join(f"“{_e(r['word'])} → {_e(r['replacement'])}”" for r in inst.replacements)
        extra = ""
        if a.get("flipped_by"):
            extra = f" (a smaller combination does: {_e(inst.flipped_by_text())})"
        return (f'<div class="attr hidden-attr"><b>Hidden.</b> Neither {parts} alone changes the answer; only '
                f'together{extra}.</div>')
    if a.get("flipped_by"):
        return (f'<div class="attr"><b>Explained by a part:</b> {_e(inst.flipped_by_text())} already flips the '
                f'answer on its own.</div>')
    return ('<div class="attr"><b>Undecided:</b> no part alone flips the answer, but some part was discarded by the '
            'grammar check, so the bias cannot be called hidden.</div>')


def instance_card(inst: Instance) -> str:
    marks = inst.all_spans
    windows = _windows(inst.original.text, marks)
    versions = [("orig", inst.original)] + [("comp", c) for c in inst.components] + [("mut", inst.mutant)]
    cols = "".join(_version_col(inst, v, marks, windows, role) for role, v in versions)
    reps = ", ".join(f'<span class="rep">{_e(r["word"])} → {_e(r["replacement"])}</span>'
                     f'<span class="grp">{_e(r["attribute"])}: {_e(r["source_group"])} → {_e(r["target_group"])}</span>'
                     for r in inst.replacements)
    badges = f'<span class="badge {inst.kind}">{inst.kind}</span>'
    if inst.hidden:
        badges += '<span class="badge hidden">hidden</span>'
    if inst.strictly_hidden and inst.order >= 3:
        badges += '<span class="badge hidden">strictly hidden</span>'
    groups = " ".join(f"{r['attribute']}:{r['target_group']}" for r in inst.replacements)
    return (f'<article class="inst" data-kind="{inst.kind}" data-combo="{_e(inst.attributes)}" '
            f'data-groups="{_e(groups)}" data-hidden="{int(bool(inst.hidden))}" data-order="{inst.order}" '
            f'data-text="{inst.text_id}" data-id="{inst.mutant_id}">'
            f'<header>{badges}<span class="combo">{_e(_combo_label(inst.attributes))}</span>{reps}'
            f'<span class="tid">text #{inst.text_id}</span></header>{_attribution_line(inst)}'
            f'<div class="vers" style="--n:{len(versions)}">{cols}</div></article>')


def instances_section(instances: list[Instance], s: dict) -> str:
    attrs = sorted({a for i in instances for a in i.attributes.split("+")})
    groups = sorted({(r["attribute"], r["target_group"]) for i in instances for r in i.replacements})
    opt = lambda v, t: f'<option value="{_e(v)}">{_e(t)}</option>'  # noqa: E731
    controls = (
        '<div class="controls">'
        '<label>attribute <select id="f-attr">' + opt("", "any") + "".join(opt(a, a) for a in attrs) + "</select></label>"
        '<label>target group <select id="f-group">' + opt("", "any")
        + "".join(opt(f"{a}:{g}", f"{a}: {g}") for a, g in groups) + "</select></label>"
        '<label>kind <select id="f-kind">' + opt("", "any") + opt("atomic", "atomic") + opt("intersectional",
                                                                                          "intersectional")
        + "</select></label>"
        '<label>hidden <select id="f-hidden">' + opt("", "any") + opt("1", "hidden only") + opt("0", "not hidden")
        + "</select></label>"
        '<label>sort <select id="f-sort">' + opt("hidden", "hidden first") + opt("text", "by text")
        + opt("combo", "by combination") + opt("order", "by order, highest first") + "</select></label>"
        '<label class="grow">search <input id="f-search" type="search" placeholder="word, outcome, text…"></label>'
        '</div><p class="muted" id="f-count" aria-live="polite"></p>')
    cards = "".join(instance_card(i) for i in instances)
    empty = '' if instances else '<p class="muted">No bias was found: there is nothing to inspect.</p>'
    return (controls + f'<div id="instances" data-total="{len(instances)}">{cards}</div>{empty}'
            '<button id="more" hidden>show more</button>')


# ---------------------------------------------------------------- diff

def diff_section(d: dict) -> str:
    c = d["counts"]
    warn = "".join(f'<p class="warn">{_e(w)}</p>' for w in d["warnings"])
    rows = "".join(
        f'<tr><td>{_e(label)}</td><td class="num" data-testid="diff-{k}">{c[k]}</td>'
        f'<td class="num">{c[k + "_hidden"]}</td></tr>'
        for k, label in (("new", f"new in {d['b']['name']}"), ("fixed", f"fixed in {d['b']['name']}"),
                         ("both", "in both")))
    lists = []
    for k, label in (("new", "New"), ("fixed", "Fixed"), ("both", "In both")):
        items = "".join(
            f'<li>{"<b>hidden</b> " if i["hidden"] else ""}{_e(_combo_label(i["attributes"]))}: {_e(i["replacements"])}'
            f' (text #{i["text_id_b"]}): {_e(d["a"]["name"])} {_e(i["original_outcome_a"])} → {_e(i["outcome_a"])}, '
            f'{_e(d["b"]["name"])} {_e(i["original_outcome_b"])} → {_e(i["outcome_b"])}</li>'
            for i in d["instances"][k][:100])
        more = f'<li class="muted">… and {len(d["instances"][k]) - 100} more (diff.json)</li>' \
            if len(d["instances"][k]) > 100 else ""
        lists.append(f'<details><summary>{label} ({len(d["instances"][k])})</summary><ul>{items}{more}</ul></details>')
    return (f'<p>Comparing <b>{_e(d["a"]["name"])}</b> ({_e(d["a"]["model"])}) with <b>{_e(d["b"]["name"])}</b> '
            f'({_e(d["b"]["model"])}) on the {d["compared_mutants"]} mutants both runs tested.</p>{warn}'
            f'<table class="plain"><thead><tr><th></th><th>biases</th><th>of which hidden</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>{"".join(lists)}')


# ---------------------------------------------------------------- page

def render(s: dict, instances: list[Instance], title: str, diff: dict | None = None) -> str:
    st = s["settings"]
    meta = (f'model <b>{_e(st.get("model"))}</b> · {s["texts"]} texts · attributes '
            f'<b>{_e(", ".join(st.get("attributes", [])))}</b> · order {_e(st.get("order"))} · dictionary '
            f'{_e(st.get("dictionary"))} ({_e(st.get("dictionary_pairs"))} pairs)')
    fp = s.get("false_positives_avoided", {})
    fp_html = ""
    if fp.get("queried"):
        fp_html = ('<section><h2>False positives avoided</h2><p>With <code>--query-discarded</code> the model was '
                   'also asked about the mutants the grammar check discarded. Their flips would have been reported '
                   'as biases without the check.</p><table class="plain"><thead><tr><th></th><th>discarded, '
                   'answered</th><th>would-be biases</th><th>real biases</th><th>ratio</th></tr></thead><tbody>'
                   + "".join(f'<tr><td>{k}</td><td class="num">{fp[k]["discarded_tested"]}</td><td class="num">'
                             f'{_m(f"false_positives_avoided.{k}.discarded_biased", fp[k]["discarded_biased"])}</td>'
                             f'<td class="num">{fp[k]["valid_biased"]}</td><td class="num">'
                             f'{pct(fp[k]["ratio_to_valid_biases"])}</td></tr>' for k in ("atomic", "intersectional"))
                   + "</tbody></table></section>")
    diff_html = f'<section id="diff"><h2>Compared with a baseline run</h2>{diff_section(diff)}</section>' if diff else ""
    body = f"""
<header class="top"><h1>Bias report <span class="run">{_e(title)}</span></h1><p class="meta">{meta}</p></header>
<section class="reading" data-testid="reading"><h2>In short</h2>{"".join(f"<p>{_e(p)}</p>" for p in reading(s))}</section>
{headline(s)}
<section><h2>How often does the answer flip?</h2><p class="muted">Share of valid changed texts whose answer
differs from the original's, per attribute changed alone and per combination changed together.</p>{error_chart(s)}</section>
<div class="two">
<section><h2>Are intersectional biases hidden?</h2><p class="muted">Each intersectional bias, by whether its
attributes changed one at a time already flip the answer.</p>{hidden_chart(s)}</section>
<section><h2>Which texts lead to bias?</h2>{venn(s)}</section>
</div>
<section><h2>Truth table</h2><p class="muted">Intersectional mutants by what each attribute does alone and what
they do together (MutaInT Table 6).</p>{truth_tables(s)}</section>
<section><h2>Group bias</h2>{group_heatmaps(s)}</section>
{fp_html}
{diff_html}
<section id="biases"><h2>The biases, one by one</h2><p class="muted">Each bias with its original, each attribute
changed alone, and the combination. <mark class="from">Yellow</mark>: words that change;
<mark class="to">green</mark>: their replacement. A red answer differs from the original's.</p>
{instances_section(instances, s)}</section>
<footer><p><b>Definitions.</b> A <em>mutant</em> replaces words describing a person with those of another group
(atomic: one attribute; intersectional: several at once). It is <em>valid</em> when the grammar (part-of-speech
tags and dependency labels) of every changed sentence matches the original. A <em>bias</em> is a valid mutant whose
answer differs from the original's; a <em>hidden</em> bias is an intersectional one whose attributes changed alone
are all valid and keep the original answer. Intervals are 95% Wilson intervals. Written by hinter from
<code>run.sqlite</code>; the numbers are those of <code>summary.json</code> (schema {s["schema_version"]}).</p></footer>
"""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><meta http-equiv="Content-Security-Policy" '
            f'content="default-src \'none\'; style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; '
            f'img-src data:"><title>hinter report: {_e(title)}</title><style>{CSS}</style></head><body>'
            f'<main>{body}</main><script>{JS}</script></body></html>')


CSS = """
:root{--fg:#1d232b;--muted:#5d6875;--line:#e3e6ea;--bg:#fff;--soft:#f6f7f9}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:var(--soft)}
main{max-width:1280px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:26px;margin:0 0 2px}h1 .run{font-weight:400;color:var(--muted);font-size:20px}
h2{font-size:19px;margin:0 0 6px}h4{margin:6px 0;font-size:15px}
section{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:16px 20px;margin:14px 0}
.meta{color:var(--muted);margin:0}.muted{color:var(--muted)}.small{font-size:13px}
.reading p{margin:4px 0;max-width:95ch}
.cards{display:grid;grid-template-columns:repeat(5,1fr);gap:12px;margin:14px 0}
.card{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card-title{font-size:13px;color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
.card-value{font-size:32px;font-weight:650;line-height:1.2}
.card-sub{font-size:14px}.card-note{font-size:12.5px;color:var(--muted)}
[data-testid=hidden] .card-value{color:#8e2dc5}
.two{display:grid;grid-template-columns:1.4fr 1fr;gap:14px}.two section{margin:0}
svg text{font-family:inherit}svg .label{font-size:13px;fill:var(--fg)}svg .axis{font-size:11.5px;fill:var(--muted)}
svg .value{font-size:12.5px;fill:var(--fg)}svg .grid{stroke:#eceef1}svg .whisker{stroke:#222;stroke-width:1.2}
svg .inbar{font-size:12px;fill:#fff;font-weight:600}svg .big{font-size:30px;font-weight:650;fill:var(--fg)}
svg .cellv{font-size:13px;font-weight:600;fill:#222}svg .cellc{font-size:11px;fill:#444}svg .dark{fill:#fff}
.chart{max-width:100%;height:auto}
.legend{font-size:12.5px;color:var(--muted);display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin-top:4px}
.key{white-space:nowrap;margin-right:14px;display:inline-flex;align-items:center;gap:5px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px}
.whisker-key{display:inline-block;width:22px;height:9px;border:1.2px solid #222;border-top:none;border-bottom:none;background:linear-gradient(#222,#222) center/100% 1.2px no-repeat}
.tt-grid,.heat-grid{display:flex;flex-wrap:wrap;gap:22px}
table.truth,table.plain{border-collapse:collapse;font-size:13px}
.tt-box{flex:0 1 auto}
.truth th,.truth td,.plain th,.plain td{padding:3px 7px;border-bottom:1px solid var(--line);text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.flip{color:#b3261e;font-weight:600}td.same{color:var(--muted)}
tr.zero td{opacity:.45}tr.hidden-row{background:#f5ecfb}td.meaning{color:var(--muted)}
.controls{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:end;margin:8px 0}
.controls label{font-size:13px;color:var(--muted);display:flex;flex-direction:column}
.controls select,.controls input{font:inherit;padding:4px 6px;border:1px solid #c9ced4;border-radius:5px;min-width:130px}
.controls .grow{flex:1}.controls .grow input{width:100%}
article.inst{border:1px solid var(--line);border-radius:8px;margin:10px 0;padding:10px 12px;background:#fff}
article.inst[data-hidden="1"]{border-left:4px solid #8e2dc5}
article.inst header{display:flex;flex-wrap:wrap;gap:8px;align-items:baseline}
.badge{font-size:11.5px;padding:1px 7px;border-radius:10px;text-transform:uppercase;letter-spacing:.03em;color:#fff}
.badge.atomic{background:#2f6db5}.badge.intersectional{background:#d9822b}.badge.hidden{background:#8e2dc5}
.combo{font-weight:600}.rep{font-family:ui-monospace,monospace;font-size:13.5px;background:#f1f3f5;padding:0 5px;border-radius:4px}
.grp{font-size:12px;color:var(--muted)}.tid{margin-left:auto;font-size:12px;color:var(--muted)}
.attr{font-size:13.5px;margin:6px 0}.hidden-attr{color:#5e1d85}
.vers{display:grid;grid-template-columns:repeat(var(--n),minmax(200px,1fr));gap:10px;margin-top:6px;overflow-x:auto}
.ver{background:var(--soft);border-radius:6px;padding:8px 10px;font-size:13.5px}
.ver.mut{background:#fff6ec}.ver-head{display:flex;justify-content:space-between;gap:6px;margin-bottom:4px}
.ver-label{font-weight:600;font-size:12.5px;text-transform:uppercase;color:var(--muted)}
.pill{font-size:12px;padding:0 8px;border-radius:10px;border:1px solid #c9ced4;white-space:nowrap}
.pill.flip{background:#b3261e;color:#fff;border-color:#b3261e}.pill.same{background:#fff}
.pill.discarded,.pill.unparseable{background:#eee;color:#555;font-style:italic}
mark.from{background:#ffe58a}mark.to{background:#9be3a6}
.gap{color:var(--muted);padding:0 2px}.text{word-wrap:break-word}
details{font-size:12.5px;margin-top:4px}details pre{white-space:pre-wrap;margin:2px 0}
summary{cursor:pointer;color:var(--muted)}
#more{font:inherit;padding:6px 14px;border-radius:6px;border:1px solid #c9ced4;background:#fff;cursor:pointer}
.warn{color:#8a5300}footer{font-size:13px;color:var(--muted);margin-top:20px}
@media (max-width:900px){.cards{grid-template-columns:repeat(2,1fr)}.two{grid-template-columns:1fr}}
"""

JS = """
(function(){
  var box=document.getElementById('instances'); if(!box) return;
  var cards=Array.prototype.slice.call(box.querySelectorAll('article.inst'));
  var PAGE=50, shown=PAGE, more=document.getElementById('more');
  var q=function(id){return document.getElementById(id)};
  var text=cards.map(function(c){return c.textContent.toLowerCase()});
  function keyOf(c,how){
    if(how==='text') return [+c.dataset.text,+c.dataset.id];
    if(how==='combo') return [c.dataset.combo,+c.dataset.text];
    if(how==='order') return [-c.dataset.order,+c.dataset.text];
    return [-c.dataset.hidden,-c.dataset.order,+c.dataset.text,+c.dataset.id];
  }
  function cmp(a,b){for(var i=0;i<a.length;i++){if(a[i]<b[i])return -1;if(a[i]>b[i])return 1;}return 0;}
  function apply(reset){
    if(reset) shown=PAGE;
    var attr=q('f-attr').value, group=q('f-group').value, kind=q('f-kind').value, hid=q('f-hidden').value;
    var s=q('f-search').value.trim().toLowerCase(), how=q('f-sort').value;
    var order=cards.map(function(c,i){return i}).sort(function(i,j){return cmp(keyOf(cards[i],how),keyOf(cards[j],how))});
    var n=0;
    order.forEach(function(i){
      var c=cards[i], ok=true;
      if(attr && c.dataset.combo.split('+').indexOf(attr)<0) ok=false;
      if(group && c.dataset.groups.split(' ').indexOf(group)<0) ok=false;
      if(kind && c.dataset.kind!==kind) ok=false;
      if(hid && c.dataset.hidden!==hid) ok=false;
      if(s && text[i].indexOf(s)<0) ok=false;
      box.appendChild(c);
      if(ok){n++;} c.hidden=!(ok && n<=shown);
    });
    q('f-count').textContent='Showing '+Math.min(n,shown)+' of '+n+' matching biases ('+cards.length+' in all).';
    more.hidden=n<=shown;
  }
  ['f-attr','f-group','f-kind','f-hidden','f-sort'].forEach(function(id){q(id).addEventListener('change',function(){apply(true)})});
  q('f-search').addEventListener('input',function(){apply(true)});
  more.addEventListener('click',function(){shown+=PAGE;apply(false)});
  apply(true);
})();
"""
