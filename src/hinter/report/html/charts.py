"""The inline SVG charts: geometry computed from summary.json. Each returns markup built here with every dataset
or summary string escaped, so the template can insert it as is; legends and captions live in the template.
Chart values carry `data-measure` (their summary.json path) and `data-value`, so tests can check the page."""
from __future__ import annotations

import json
from typing import NamedTuple

from markupsafe import Markup, escape

from hinter.report.html.formatting import ci_text, combo_label, pct

COLOURS = {"atomic": "#2f6db5", "intersectional": "#d9822b", "hidden": "#8e2dc5", "explained": "#9aa7b8",
           "undecided": "#d9dde3"}


def _nice_max(x: float) -> float:
    for step in (0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if x <= step:
            return step
    return 1.0



def _rate_axes(label: str, width: int, height: int, top: float, x) -> list[str]:
    """The opening of a bar chart of rates: the svg element and five gridlines from 0 to `top`, labelled in
    percent (`x` maps a rate to its abscissa)."""
    parts = [f'<svg class="chart" role="img" aria-label="{label}" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for t in range(5):
        v = top * t / 4
        parts.append(f'<line x1="{x(v):.1f}" y1="18" x2="{x(v):.1f}" y2="{height - 4}" class="grid"/>'
                     f'<text x="{x(v):.1f}" y="12" class="axis" text-anchor="middle">{100 * v:g}%</text>')
    return parts

def error_chart(s: dict) -> Markup | None:
    """Error rate with its interval per attribute and combination; None when no mutant was generated."""
    rows = [("atomic", k, m) for k, m in s["atomic"].items()] + [("intersectional", k, m)
                                                                   for k, m in s["intersectional"].items()]
    if not rows:
        return None
    top = _nice_max(max([(m.get("error_rate_ci") or [0, 0])[1] for _, _, m in rows] + [0.01]))
    label_w, bar_w, row_h, text_w = 150, 380, 26, 190
    height = 30 + row_h * len(rows) + 14 * (len({k for k, _, _ in rows}) - 1)
    width = label_w + bar_w + text_w
    x = lambda v: label_w + bar_w * v / top  # noqa: E731
    parts = _rate_axes("Error rate by attribute and combination", width, height, top, x)
    y, prev = 22, None
    for kind, combo, m in rows:
        if prev and kind != prev:
            y += 14
        prev = kind
        rate = m["error_rate"]
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end" class="label">'
                     f'{escape(combo_label(combo))}</text>')
        if rate is not None:
            parts.append(f'<rect x="{label_w}" y="{y + 4}" width="{max(x(rate) - label_w, 1.5):.1f}" height="16" '
                         f'fill="{COLOURS[kind]}" rx="2"><title>{escape(combo)}: {pct(rate)} '
                         f'({m["biased"]}/{m["tested"]}) {ci_text(m["error_rate_ci"])}</title></rect>')
            lo, hi = m["error_rate_ci"]
            parts.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y + 12}" y2="{y + 12}" class="whisker"/>'
                         f'<line x1="{x(lo):.1f}" x2="{x(lo):.1f}" y1="{y + 7}" y2="{y + 17}" class="whisker"/>'
                         f'<line x1="{x(hi):.1f}" x2="{x(hi):.1f}" y1="{y + 7}" y2="{y + 17}" class="whisker"/>')
        shown = f"{pct(rate)}  ({m['biased']}/{m['tested']})" if rate is not None else "not tested"
        parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + 16}" class="value" '
                     f'data-measure="{kind}.{escape(combo)}.error_rate" data-value="{escape(json.dumps(rate))}">'
                     f'{escape(shown)}</text>')
        y += row_h
    parts.append("</svg>")
    return Markup("".join(parts))


def hidden_chart(s: dict) -> Markup | None:
    """Per combination, its intersectional biases split into hidden, explained and undecided; None without any."""
    by = s.get("attribution", {}).get("by_combination", {})
    combos = [(k, s["intersectional"][k], by.get(k)) for k in s["intersectional"]]
    if not any(m["biased"] for _, m, _ in combos):
        return None
    label_w, bar_w, row_h = 150, 420, 30
    height = 12 + row_h * len(combos)
    width = label_w + bar_w + 160
    parts = [f'<svg class="chart" role="img" aria-label="Hidden share of intersectional biases" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    y = 6
    for combo, m, a in combos:
        parts.append(f'<text x="{label_w - 8}" y="{y + 17}" text-anchor="end" class="label">'
                     f'{escape(combo_label(combo))}</text>')
        total = m["biased"]
        if total and a:
            hidden = m["hidden"]
            undecided = a["no_sub_combination_flips"] - a["of_which_hidden"]  # a part discarded or unanswered
            segs = [(hidden, COLOURS["hidden"], "hidden"),
                    (total - hidden - undecided, COLOURS["explained"], "explained by a part"),
                    (undecided, COLOURS["undecided"], "parts not testable")]
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
                     f'data-measure="intersectional.{escape(combo)}.hidden" data-value="{m["hidden"]}">'
                     f'{escape(shown)}</text>')
        y += row_h
    parts.append("</svg>")
    return Markup("".join(parts))


def venn(s: dict) -> Markup:
    """Texts by the kind of bias they lead to: atomic only, both, intersectional only."""
    v = s["originals_venn"]
    atomic, inter = COLOURS["atomic"], COLOURS["intersectional"]
    return Markup(
        f'<svg class="chart" role="img" aria-label="Originals Venn diagram" viewBox="0 0 420 220" width="420" '
        f'height="220"><circle cx="165" cy="110" r="85" fill="{atomic}" fill-opacity="0.25" stroke="{atomic}"/>'
        f'<circle cx="255" cy="110" r="85" fill="{inter}" fill-opacity="0.25" stroke="{inter}"/>'
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
        f'<text x="295" y="138" text-anchor="middle" class="axis">only</text></svg>')


class Heatmap(NamedTuple):
    kind: str               # "atomic" or "intersectional"
    family: str             # the attribute or combination, e.g. "gender+race"
    attributes: list[str]
    mean_error_rate: float
    svg: Markup


def _heat_colour(rate: float | None, top: float) -> str:
    if rate is None:
        return "#f3f4f6"
    t = min(rate / top, 1.0) if top else 0.0
    # white -> deep red
    r, g, b = 255 + (192 - 255) * t, 255 + (41 - 255) * t, 255 + (43 - 255) * t
    return f"#{int(r):02x}{int(g):02x}{int(b):02x}"


def heatmaps(s: dict) -> tuple[list[Heatmap], float]:
    """One heatmap of error rates by target group per attribute and combination (a grid for pairs), and the rate
    at which the shared colour scale tops out."""
    gb = s.get("group_bias", {})
    rates = [g["error_rate"] for kind in gb.values() for f in kind.values() for g in f["groups"].values()]
    top = max(rates + [0.01])
    maps = []
    for kind in ("atomic", "intersectional"):
        for fam, f in gb.get(kind, {}).items():
            attrs = fam.split("+")
            maps.append(Heatmap(kind, fam, attrs, f["mean_error_rate"], _heatmap(kind, fam, attrs, f["groups"], top)))
    return maps, top


def _heatmap(kind: str, fam: str, attrs: list[str], groups: dict, top: float) -> Markup:
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
    parts = [f'<svg class="heat" role="img" aria-label="group bias {escape(fam)}" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}">']
    for j, c in enumerate(cols):
        parts.append(f'<text x="{lw + cw * j + cw / 2}" y="{top_h - 8}" text-anchor="middle" class="axis">'
                     f'{escape(c)}</text>')
    for i, r in enumerate(rows):
        if r:
            parts.append(f'<text x="{lw - 6}" y="{top_h + ch * i + ch / 2 + 4}" text-anchor="end" '
                         f'class="axis">{escape(r)}</text>')
        for j, c in enumerate(cols):
            name, g = cell(r, c)
            x0, y0 = lw + cw * j, top_h + ch * i
            if g is None:
                parts.append(f'<rect x="{x0}" y="{y0}" width="{cw - 2}" height="{ch - 2}" fill="#f3f4f6"/>')
                continue
            stroke = ' stroke="#111" stroke-width="2.5"' if g["flagged"] else ""
            dark = " dark" if g["error_rate"] / top > 0.55 else ""
            path = f"group_bias.{kind}.{fam}.groups.{name}.error_rate"
            parts.append(
                f'<rect x="{x0}" y="{y0}" width="{cw - 2}" height="{ch - 2}" rx="3" '
                f'fill="{_heat_colour(g["error_rate"], top)}"{stroke}><title>{escape(name)}: '
                f'{pct(g["error_rate"])} ({g["biased"]}/{g["tested"]}) {ci_text(g["error_rate_ci"])}'
                f'{" · above the mean" if g["flagged"] else ""}</title></rect>'
                f'<text x="{x0 + cw / 2 - 1}" y="{y0 + 17}" text-anchor="middle" class="cellv{dark}" '
                f'data-measure="{escape(path)}" data-value="{g["error_rate"]}">{pct(g["error_rate"])}</text>'
                f'<text x="{x0 + cw / 2 - 1}" y="{y0 + 31}" text-anchor="middle" class="cellc{dark}">'
                f'{g["biased"]}/{g["tested"]}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def study_chart(rows: list[dict]) -> Markup | None:
    """`hinter study`: per dataset and model, the atomic and intersectional error rates (rq1.csv's rows) with their
    intervals; None when nothing was tested."""
    tested = [r for r in rows if r["error_rate"] is not None]
    if not tested:
        return None
    groups: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["model"]), {})[r["kind"]] = r
    top = _nice_max(max([r["error_rate_ci_high"] or 0 for r in tested] + [0.01]))
    label_w, bar_w, text_w, bar_h = 260, 360, 150, 14
    height = 30 + len(groups) * (2 * bar_h + 16)
    width = label_w + bar_w + text_w
    x = lambda v: label_w + bar_w * v / top  # noqa: E731
    parts = _rate_axes("Error rates by dataset and model", width, height, top, x)
    y = 22
    for (dataset, model), kinds in groups.items():
        parts.append(f'<text x="{label_w - 8}" y="{y + bar_h + 4}" text-anchor="end" class="label">'
                     f'{escape(dataset)} · {escape(model[:34])}</text>')
        for kind in ("atomic", "intersectional"):
            r = kinds.get(kind)
            rate = None if r is None else r["error_rate"]
            if rate is not None:
                parts.append(f'<rect x="{label_w}" y="{y}" width="{max(x(rate) - label_w, 1.5):.1f}" '
                             f'height="{bar_h - 2}" fill="{COLOURS[kind]}" rx="2"><title>{escape(model)}, '
                             f'{escape(dataset)}, {kind}: {pct(rate)} ({r["biased"]}/{r["tested"]})</title></rect>')
                lo, hi = r["error_rate_ci_low"], r["error_rate_ci_high"]
                if lo is not None:
                    mid = y + (bar_h - 2) / 2
                    parts.append(f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{mid:.1f}" y2="{mid:.1f}" '
                                 f'class="whisker"/>')
            shown = f"{kind[:5]}. {pct(rate)}" if rate is not None else f"{kind[:5]}. not tested"
            parts.append(f'<text x="{label_w + bar_w + 8}" y="{y + bar_h - 3}" class="value" '
                         f'data-measure="rq1.{escape(dataset)}.{escape(model)}.{kind}.error_rate" '
                         f'data-value="{escape(json.dumps(rate))}">{escape(shown)}</text>')
            y += bar_h
        y += 16
    parts.append("</svg>")
    return Markup("".join(parts))
