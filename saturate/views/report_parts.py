"""What both HTML reports share (saturate/views/report.py: a single-loop session; report_multi.py: a multi-source
session): the style sheet, escaping, links, badges, the settings table, the page frame, and the bar chart.

The bar chart is an inline SVG drawn in a fixed coordinate system (``CHART_WIDTH`` units wide) and scaled to
the full width of its panel (``width="100%"``), whatever the number of bars. A bar's value label sits above
the bar; when it would touch a reference line (the threshold, or a round's own threshold after a fork) it is
lifted above that line, so a label and a line never overlap.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from saturate.state.settings import load_settings
from saturate.state.text import printable

CHART_WIDTH = 1000  # SVG user units; the chart is scaled to its panel's width
CHART_FONT = "system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif"
LABEL_ASCENT, LABEL_DESCENT, LINE_CLEARANCE = 10.0, 3.0, 3.0  # a 12-unit label's box around its baseline
_CITE = re.compile(r"\[(\d+)\]")

CSS = """
:root { --ink:#111827; --muted:#6b7280; --line:#e5e7eb; --bg:#f9fafb; --accent:#4f46e5; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 28px 28px 60px; }
h1 { font-size: 24px; line-height: 1.3; margin: 4px 0 10px; }
h2 { font-size: 18px; margin: 34px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 6px; }
.kicker { color: var(--muted); font-size: 13px; letter-spacing: .04em; }
.id { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; color: var(--ink); letter-spacing: normal;
  text-transform: none; }
.meta { color: var(--muted); font-size: 14px; }
.meta b { color: var(--ink); font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 12px; margin: 18px 0 6px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.card .v { font-size: 22px; font-weight: 650; }
.card .k { color: var(--muted); font-size: 13px; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 16px; overflow-x: auto; }
.panel + .panel { margin-top: 14px; }
svg.chart { display: block; width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
table.rounds { table-layout: fixed; min-width: 900px; }
.wrap { white-space: normal; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .03em; padding: 8px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
td { padding: 9px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
tr:last-child td { border-bottom: none; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 650; color: #fff;
  white-space: nowrap; }
.b-accept, .b-continue, .b-verified_multi, .b-verified_official { background: #16a34a; }
.b-epsilon_pass { background: #d97706; }
.b-stop, .b-contradicted { background: #dc2626; } .b-cap { background: #0e7490; }
.b-lead { background: #6366f1; } .b-reason { background: #475569; }
.b-muted, .b-unverified_single { background: #9ca3af; }
.eps { display: inline-block; margin-top: 4px; font-size: 12px; color: #92400e; background: #fef3c7; border-radius: 6px;
  padding: 0 6px; }
.why { color: var(--muted); font-size: 13px; margin-top: 3px; }
.q { font-weight: 550; word-break: break-word; }
.q .task { color: var(--muted); font-weight: 400; }
.sub { color: var(--muted); font-size: 12.5px; }
.err { color: #b91c1c; font-size: 13px; }
.note { color: #92400e; font-size: 13px; }
.inh { display: inline-block; font-size: 11px; color: #3730a3; background: #e0e7ff; border-radius: 6px; padding: 0 6px;
  margin-left: 6px; }
details { margin-top: 4px; } summary { cursor: pointer; color: var(--accent); font-size: 13px; }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
.brief h3 { margin: 14px 0 4px; font-size: 15px; } .brief h4 { margin: 8px 0 2px; font-size: 14px; }
.brief li { margin: 3px 0; line-height: 1.5; } .brief .mark { color: #666; font-size: 13px; }
.answer { font-size: 16px; line-height: 1.6; background: #fff; border: 1px solid var(--line);
  border-left: 4px solid var(--accent);
  border-radius: 10px; padding: 14px 18px; }
.answer a { font-weight: 600; }
ol.sources { padding-left: 0; list-style: none; margin: 0; }
ol.sources li { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px;
  margin-bottom: 8px; }
ol.sources .n { display: inline-block; min-width: 30px; font-weight: 700; color: var(--accent); }
.excerpt { color: #374151; font-size: 13.5px; margin-top: 4px; }
.kv td:first-child { width: 34%; }
.changed { background: #fef9c3; }
.knowledge { white-space: pre-wrap; font-size: 13.5px; color: #374151; }
.legend span { margin-right: 14px; font-size: 13px; color: var(--muted); }
.legend i { display: inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 5px;
  vertical-align: -1px; }
.found { font-size: 13px; color: #374151; margin-top: 4px; }
.found b { font-weight: 600; }
.actor { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px;
  margin-bottom: 10px; }
.actor ul { margin: 6px 0 0; padding-left: 20px; font-size: 13.5px; color: #374151; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; }
@media print { body { background: #fff; } .panel, .card, ol.sources li, .answer, .actor { break-inside: avoid; } }
"""


def e(x: Any) -> str:
    """HTML-escaped text ('' for None), control characters and bidi overrides shown as ``\\uXXXX`` (``printable``):
    a source's name or a page's title cannot reorder or hide what the report shows."""
    return html.escape(printable("" if x is None else str(x)))


def link(url: str, text: str | None = None) -> str:
    """A link for http(s) URLs, else the URL as code (local corpora: ``local://corpus/…``)."""
    if re.match(r"^https?://", url or ""):
        return f'<a href="{e(url)}" rel="noopener noreferrer">{e(text or url)}</a>'
    return f"<code>{e(text or url)}</code>" if text is None else f"{e(text)} <code>{e(url)}</code>"


def thread_span(thread: str) -> str:
    """A thread id exactly as the user typed it (the ``id`` class undoes any inherited text-transform)."""
    return f'<span class="id">{e(thread)}</span>'


def cite_links(text: str) -> str:
    """Escaped text whose ``[n]`` citations link to ``#src-n``."""
    return _CITE.sub(lambda m: f'<a href="#src-{m.group(1)}">[{m.group(1)}]</a>', e(text))


def cited_numbers(text: str) -> set[int]:
    return {int(m) for m in _CITE.findall(text or "")}


def cards_html(cards: list[tuple[str, Any]]) -> list[str]:
    """The row of summary cards at the top of a report: (label, value) each."""
    return [
        '<div class="cards">',
        *(f'<div class="card"><div class="v">{e(v)}</div><div class="k">{e(k)}</div></div>' for k, v in cards),
        "</div>",
    ]


def badge(kind: str | None, text: str | None = None) -> str:
    if not kind:
        return '<span class="badge b-muted">—</span>'
    return f'<span class="badge b-{e(kind)}">{e(text or kind)}</span>'


def task_query(query: str, task: str, whole: bool = False) -> str:
    """A query with the task in it shown as ``<task>`` (the added words stay visible); the task alone is shown
    in full unless ``whole``."""
    if task and task in query and (whole or query.strip() != task):
        before, _, after = query.partition(task)
        return (
            (e(before.strip()) + " + " if before.strip() else "")
            + f'<span class="task" title="{e(query)}">&lt;task&gt;</span>'
            + (" + " + e(after.strip()) if after.strip() else "")
        )
    return e(query)


def ts(s: str | None) -> _dt.datetime:
    try:
        return _dt.datetime.fromisoformat(s) if s else _dt.datetime.now(_dt.UTC)
    except ValueError:
        return _dt.datetime.now(_dt.UTC)


def fmt_time(iso: str | None) -> str:
    if not iso:
        return ""
    t = ts(iso)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC") if t.tzinfo else t.strftime("%Y-%m-%d %H:%M:%S")


def norm(d: dict) -> dict:
    """JSON-normalised values (tuples become lists), so stored and default settings compare."""
    return json.loads(json.dumps(d, default=str))


def show_value(v: Any) -> str:
    if v is None:
        return "unset"
    return json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else str(v)


def settings_table(
    keys, values: dict, defaults: dict, changed: AbstractSet[str], marked: AbstractSet[str] = frozenset()
) -> str:
    """setting / value / default rows, the changed ones highlighted (``marked``: "(fork)")."""
    rows = []
    for k in keys:
        cls = ' class="changed"' if k in changed else ""
        mark = " (fork)" if k in marked else ""
        rows.append(
            f"<tr{cls}><td><code>{e(k)}</code></td><td><code>{e(show_value(values[k]))}</code>{e(mark)}</td>"
            f'<td class="sub"><code>{e(show_value(defaults.get(k)))}</code></td></tr>'
        )
    return (
        '<table class="kv"><thead><tr><th>setting</th><th>value</th><th>default</th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def settings_section(settings: dict, key_settings, changed_by_fork: AbstractSet[str] = frozenset()) -> list[str]:
    """The reports' Settings section: the mode's knobs and whatever differs from the default (or was changed
    by a fork, marked) up front, the rest folded."""
    defaults = norm(load_settings({}, env={}).model_dump())
    values = norm(settings)
    changed = {k for k, v in values.items() if v != defaults.get(k)} | set(changed_by_fork)

    def table(keys) -> str:
        return settings_table(keys, values, defaults, changed, changed_by_fork)

    shown = [k for k in values if k in key_settings or k in changed]
    out = [
        '<h2 id="settings">Settings</h2>',
        f'<div class="panel">{table(shown)}</div>',
        '<p class="sub">Highlighted: differs from the default'
        f"{' or changed by the fork' if changed_by_fork else ''}.</p>",
    ]
    rest = [k for k in values if k not in shown]
    if rest:
        out.append(
            f"<details><summary>the other {len(rest)} settings (all at their defaults)</summary>"
            f'<div class="panel">{table(rest)}</div></details>'
        )
    return out


def page(title: str, parts: list[str]) -> str:
    """The whole document: no scripts, and a Content-Security-Policy that forbids loading anything."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>\n"
        + "\n".join(parts)
        + "\n</main></body></html>\n"
    )


# ---------------------------------------------------------------- the bar chart


@dataclass
class Bar:
    """One bar: its value, fill (a colour or ``url(#hatch)``), the label under it and the data-* attributes of
    its ``<g class="bar">``; ``marks``: (value, tooltip) of short reference lines across this bar only."""

    value: float | None
    fill: str
    label: str
    short_label: str
    value_text: str
    sublabel: str = ""
    sublabel_color: str = "#6b7280"
    title: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    marks: list[tuple[float, str]] = field(default_factory=list)


def label_baseline(bar_top: float, lines: list[float]) -> float:
    """The baseline of a value label over a bar whose top is at ``bar_top`` (SVG y grows downwards): just above
    the bar, unless its box would come within ``LINE_CLEARANCE`` of a reference line at one of ``lines``; then
    above that line (again, until nothing is in the way)."""
    y = bar_top - 6
    for _ in range(len(lines) + 1):
        hit = [ly for ly in lines if y - LABEL_ASCENT - LINE_CLEARANCE <= ly <= y + LABEL_DESCENT + LINE_CLEARANCE]
        if not hit:
            return y
        y = min(hit) - LABEL_DESCENT - LINE_CLEARANCE - 1
    return y


def bars_svg(
    bars: list[Bar],
    *,
    ymax: float,
    ticks: list[float],
    tick_text=lambda v: f"{v:g}",
    threshold: float | None = None,
    threshold_label: str = "",
    groups: list[tuple[str, int, int]] | None = None,
    aria: str = "chart",
    hatch_colors: tuple[str, str] = ("#d97706", "#fde68a"),
) -> str:
    """Bars over the full chart width; ``groups``: (name, first, last) index ranges labelled under the axis and
    set apart by a gap; ``threshold``: a dashed line across the chart, labelled in the right margin."""
    n = max(1, len(bars))
    left = 44
    right = (14 + 7 * len(threshold_label)) if threshold is not None else 16
    top, bottom = 22, 50 + (22 if groups else 0)
    height = 260 + (22 if groups else 0)
    plot_w = CHART_WIDTH - left - right
    plot_h = height - top - bottom
    starts = {first for _, first, _ in (groups or [])[1:]}
    gap = 0.6  # between groups, in bar steps
    step = plot_w / (n + gap * len(starts))
    bw = min(step * 0.56, 64)

    def y(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(v, ymax)) / ymax)

    ty = y(threshold) if threshold is not None else None
    out = [
        f'<svg class="chart" viewBox="0 0 {CHART_WIDTH} {height}" width="100%" preserveAspectRatio="xMidYMid meet" '
        f'role="img" aria-label="{e(aria)}" font-family="{CHART_FONT}" font-size="12">',
        f"<title>{e(aria)}</title>",
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        f'<rect width="6" height="6" fill="{hatch_colors[0]}"/>'
        f'<rect width="2.2" height="6" fill="{hatch_colors[1]}"/></pattern></defs>',
    ]
    for v in ticks:
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{CHART_WIDTH - right}" y2="{y(v):.1f}" stroke="#eef0f3"/>')
        out.append(
            f'<text x="{left - 8}" y="{y(v):.1f}" text-anchor="end" dominant-baseline="middle" '
            f'fill="#6b7280">{e(tick_text(v))}</text>'
        )
    centers, x = [], left
    for i, b in enumerate(bars):
        if i in starts:
            x += gap * step
        centers.append(x + step / 2)
        x += step
        cx, val = centers[-1], b.value or 0.0
        data = "".join(f' data-{k}="{e(v)}"' for k, v in b.data.items())
        out.append(f'<g class="bar"{data}>' + (f"<title>{e(b.title)}</title>" if b.title else ""))
        out.append(
            f'<rect x="{cx - bw / 2:.1f}" y="{y(val):.1f}" width="{bw:.1f}" height="{y(0) - y(val):.1f}" '
            f'rx="3" fill="{b.fill}"/>'
        )
        lines = [ty] if ty is not None else []
        for mv, mtitle in b.marks:
            lines.append(y(mv))
            out.append(
                f'<line class="mark" x1="{cx - bw / 2 - 4:.1f}" y1="{y(mv):.1f}" x2="{cx + bw / 2 + 4:.1f}" '
                f'y2="{y(mv):.1f}" stroke="#6b7280" stroke-width="2"><title>{e(mtitle)}</title></line>'
            )
        if step >= 30:
            out.append(
                f'<text class="value" x="{cx:.1f}" y="{label_baseline(y(val), lines):.1f}" text-anchor="middle" '
                f'fill="#111827" font-weight="600" font-size="{12 if step >= 44 else 10}" paint-order="stroke" '
                f'stroke="#fff" stroke-width="3">{e(b.value_text)}</text>'
            )
        out.append(
            f'<text x="{cx:.1f}" y="{height - bottom + 17}" text-anchor="middle" '
            f'fill="#111827">{e(b.label if step >= 64 else b.short_label)}</text>'
        )
        if b.sublabel and step >= 50:
            out.append(
                f'<text x="{cx:.1f}" y="{height - bottom + 33}" text-anchor="middle" '
                f'fill="{b.sublabel_color}" font-weight="600">{e(b.sublabel)}</text>'
            )
        out.append("</g>")
    for name, first, last in groups or []:
        if first > last or last >= len(centers):
            continue
        x1, x2 = centers[first] - bw / 2 - 4, centers[last] + bw / 2 + 4
        gy = height - 24
        out.append(
            f'<g class="group"><path d="M{x1:.1f} {gy - 6} V{gy} H{x2:.1f} V{gy - 6}" fill="none" stroke="#9ca3af"/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{gy + 15}" text-anchor="middle" fill="#374151" '
            f'font-weight="600">{e(name)}</text></g>'
        )
    if ty is not None:
        out.append(
            f'<line class="threshold" x1="{left}" y1="{ty:.1f}" x2="{CHART_WIDTH - right}" y2="{ty:.1f}" '
            'stroke="#111827" stroke-width="1.5" stroke-dasharray="6 4"/>'
        )
        out.append(
            f'<text class="threshold-label" x="{CHART_WIDTH - right + 6}" y="{ty:.1f}" dominant-baseline="middle" '
            f'fill="#111827">{e(threshold_label)}</text>'
        )
    out.append(f'<line x1="{left}" y1="{y(0):.1f}" x2="{CHART_WIDTH - right}" y2="{y(0):.1f}" stroke="#9ca3af"/>')
    out.append("</svg>")
    return "".join(out)


def brief_html(brief: list[dict]) -> str:
    """The brief (``reading.brief``): a heading per part when there are several, each sentence with its citation
    (linked to the source) and how the sources bear it out."""
    from saturate.views.brief import NOTHING, mark

    out = ['<div class="brief" id="brief"><h3>Brief</h3>']
    several = len(brief) > 1
    for part in brief:
        if several:
            out.append(f"<h4>{html.escape(str(part.get('part', '')))}</h4>")
        out.append("<ul>")
        if not part.get("sentences"):
            out.append(f'<li class="note">{html.escape(NOTHING)}</li>')
        for s in part.get("sentences") or []:
            cite = "".join(f"[{int(n)}]" for n in s.get("sources") or [])
            status = html.escape(str(s.get("status", "")).replace(" ", "-"))
            said = cite_links(str(s.get("text", "")) + " " + cite)
            out.append(f'<li class="{status}">{said} <span class="mark">{html.escape(mark(s))}</span></li>')
        out.append("</ul>")
    out.append("</div>")
    return "".join(out)
