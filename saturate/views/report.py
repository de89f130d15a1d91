"""A session, looked at: a self-contained HTML report and a novelty chart (PNG).

Both are built from the session's checkpoint history
(``graph.get_state_history``), so besides the round records they show what
only the steps know: when each round started and how long it took on the
wall clock, the knowledge-state size and the number of accepted sources after
every round, where a forked session came from, and every checkpoint.

A multi-source session gets its own report (saturate/views/report_multi.py: the
loops per source, the merged sources with who found them, tags, key actors);
``load_session`` / ``render_html`` / ``write_html`` take either kind.

The HTML has no scripts, no external fonts, images or style sheets (its
Content-Security-Policy forbids loading anything), so it renders offline and
can be mailed or archived as one file.

    from saturate.views.report import write_html, write_chart
    write_html("bubye", "report.html")
    write_chart("bubye", "novelty.png")
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import os
import re
from pathlib import Path
from typing import Any

from saturate.graph.paths import home_dir
from saturate.graph.session import InputError, graph_for, kind_of, open_checkpointer
from saturate.graph.timetravel import branch, checkpoint_rows, fork_origin
from saturate.state.files import write_output
from saturate.state.records import ACCEPTED
from saturate.state.text import printable
from saturate.views.diagram import nodes_in_part
from saturate.views.progress import ROUND_PART, short_query, slot_asks, slot_line, slot_marks
from saturate.views.report_multi import multi_view, render_multi_html
from saturate.views.report_parts import (
    Bar,
    bars_svg,
    brief_html,
    cards_html,
    cite_links,
    cited_numbers,
    fmt_time,
    page,
    settings_section,
    thread_span,
    ts,
)
from saturate.views.report_parts import e as _e
from saturate.views.report_parts import link as _link

DECISION_COLOR = {"accept": "#16a34a", "epsilon_pass": "#d97706", "stop": "#dc2626", "cap": "#0e7490"}
DECISION_TEXT = {"accept": "accept", "epsilon_pass": "ε pass", "stop": "stop", "cap": "cap"}
KEY_SETTINGS = (
    "mode",
    "max_rounds",
    "min_rounds",
    "fixed_rounds",
    "novelty_threshold",
    "novelty_epsilon",
    "novelty_method",
    "seed",
    "source",
    "corpus",
)


# ---------------------------------------------------------------- data


def load_session(thread_id: str, home: str | os.PathLike | None = None) -> dict:
    """Everything the report shows, from the thread's checkpoint history (either kind of session: a multi-source
    view has ``kind == "multi"``)."""
    home_path = home_dir(home, create=False)
    with open_checkpointer(home_path, readonly=True) as saver:
        kind = kind_of(saver, thread_id) if saver is not None else None
        # the graph that wrote the thread reads its history (another graph's would not know its nodes)
        graph = graph_for(kind, saver)
        snaps = branch(graph, thread_id) if kind is not None else []
    if not snaps:
        raise InputError(f"unknown thread {thread_id!r}: see `saturate runs` for the sessions in {home_path}")
    if kind == "multi":
        return multi_view(thread_id, snaps)
    return session_view(thread_id, snaps, graph)


def is_multi(view: dict) -> bool:
    return view.get("kind") == "multi"


def summary(view: dict) -> str:
    """What a report covers, in a few words ("3 rounds", "14 queries over 2 sources")."""
    if is_multi(view):
        return f"{len(view['audit'])} queries over {len(view['sources'])} sources"
    return f"{len(view['records'])} rounds"


def round_nodes(graph=None) -> list[str]:
    """The nodes that run a round: those added with ``{"part": "round"}`` (default graph: ``build_graph()``)."""
    return nodes_in_part(ROUND_PART, graph)


def session_view(thread_id: str, snaps: list, graph=None) -> dict:
    """What the report shows, from the thread's checkpoints; ``graph``: the compiled graph that wrote them,
    whose node metadata says which steps belong to a round (default ``build_graph()``)."""
    in_round = set(round_nodes(graph))
    values = snaps[-1].values or {}
    steps = checkpoint_rows(snaps)
    records = list(values.get("records") or [])
    origin = fork_origin(snaps)
    if origin:
        origin["at"] = next((s["created_at"] for s in steps if s.get("forked_from")), None)
    rounds = []
    t0 = ts(steps[0]["created_at"])
    for rec in records:
        n = rec["round"]
        idx = [i for i, s in enumerate(steps) if s["node"] in in_round and s["round"] == n]
        info: dict[str, Any] = {
            "record": rec,
            "steps": [steps[i] for i in idx],
            "settings": values.get("settings") or {},
        }
        if idx:  # the settings as the round ran (a fork may differ)
            info["settings"] = snaps[idx[-1]].values.get("settings") or info["settings"]
            start = ts(steps[idx[0] - 1]["created_at"]) if idx[0] > 0 else ts(steps[idx[0]]["created_at"])
            end = ts(steps[idx[-1]]["created_at"])
            info.update(
                started_s=(start - t0).total_seconds(),
                wall_ms=(end - start).total_seconds() * 1000,
                knowledge_after=steps[idx[-1]]["knowledge_chars"],
                accepted_after=steps[idx[-1]]["accepted"],
                inherited=bool(steps[idx[-1]].get("copied_from")),
            )
        rounds.append(info)
    return {
        "thread": printable(thread_id),  # shown in HTML, Markdown and charts: a bidi override escaped
        "task": values.get("task", ""),
        "settings": values.get("settings") or {},
        "records": records,
        "rounds": rounds,
        "pages": list(values.get("pages") or []),
        "results": dict(values.get("results") or {}),
        "result": values.get("result"),
        "notes": list(values.get("notes") or []),
        "knowledge": values.get("knowledge", ""),
        "next": list(snaps[-1].next),
        "steps": steps,
        "origin": origin,
        "created": steps[0]["created_at"],
        "updated": steps[-1]["created_at"],
    }


def accepted_round(records: list[dict]) -> dict[str, int]:
    """url -> the round that accepted it."""
    out: dict[str, int] = {}
    for r in records:
        if r.get("decision") in ACCEPTED:
            for url in r.get("new_urls") or []:
                out.setdefault(url, r["round"])
    return out


def round_rows(view: dict) -> list[dict]:
    """A compact table of the rounds (for notebooks and scripts)."""
    rows = []
    for info in view["rounds"]:
        r = info["record"]
        rows.append(
            {
                "round": r["round"],
                "query": short_query(r.get("query", ""), view["task"]),
                "planner": r.get("planner"),
                "source": r.get("source"),
                "new/total": f"{r.get('new', 0)}/{r.get('total', 0)}",
                "novelty": r.get("novelty"),
                "decision": r.get("decision"),
                "ε draw": r.get("epsilon_draw"),
                "knowledge chars": info.get("knowledge_after", r.get("knowledge_chars")),
                "accepted sources": info.get("accepted_after"),
                "errors": len(r.get("errors") or []),
            }
        )
    return rows


def rows_html(rows: list[dict]) -> str:
    """A plain HTML table of ``round_rows`` (notebooks display it with IPython.display.HTML)."""
    if not rows:
        return "<p>no rounds</p>"
    e = html.escape
    head = "".join(f"<th>{e(k)}</th>" for k in rows[0])
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{e('' if v is None else (f'{v:.3g}' if isinstance(v, float) else str(v)))}</td>" for v in r.values()
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# ---------------------------------------------------------------- PNG chart


def novelty_chart(
    records: list[dict], threshold: float | None, path: str | os.PathLike, *, title: str = "", mode: str = "saturate"
) -> Path:
    """Bars of novelty per round coloured by the gate decision (ε passes hatched), the threshold line."""
    # heavy: matplotlib (~0.5 s), imported only when a PNG is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rounds = [r["round"] for r in records]
    scores = [r.get("novelty") or 0.0 for r in records]
    fig = Figure(figsize=(max(5.0, 0.9 * len(records) + 2.6), 3.4), dpi=150)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111)
    for rnd, score, rec in zip(rounds, scores, records, strict=True):
        d = rec.get("decision") or "accept"
        ax.bar(
            rnd,
            score,
            width=0.62,
            color=DECISION_COLOR.get(d, "#6b7280"),
            hatch="///" if d == "epsilon_pass" else None,
            edgecolor="white" if d == "epsilon_pass" else DECISION_COLOR.get(d, "#6b7280"),
            linewidth=0.8,
        )
        ax.text(
            rnd,
            png_label_y(score, threshold if mode != "fixed" else None),
            f"{score:.2f}",
            ha="center",
            va="bottom",
            fontsize=8,
            color="#111827",
        )
    handles = [
        Patch(
            facecolor=DECISION_COLOR[d],
            hatch="///" if d == "epsilon_pass" else None,
            edgecolor="white",
            label=DECISION_TEXT[d],
        )
        for d in DECISION_COLOR
        if any((r.get("decision") == d) for r in records)
    ]
    if threshold is not None and mode != "fixed":
        ax.axhline(threshold, color="#111827", linestyle="--", linewidth=1)
        ax.annotate(
            f"threshold {threshold:g}",
            xy=(1, threshold),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
        )
    ax.set_ylim(0, 10.8)
    ax.set_xticks(rounds or [1])
    ax.set_xlim(0.4, max(rounds or [1]) + 0.6)
    ax.set_xlabel("round")
    ax.set_ylabel("novelty (0-10)")
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="y", color="#e5e7eb", linewidth=0.6)
    ax.set_axisbelow(True)
    if handles:
        ax.legend(
            handles=handles,
            loc="lower right",
            bbox_to_anchor=(1, 1),
            fontsize=8,
            frameon=False,
            ncol=len(handles),
            handlelength=1.2,
            columnspacing=1.0,
            borderaxespad=0.2,
        )
    if title:
        ax.set_title(title if len(title) <= 70 else title[:69] + "…", fontsize=9, loc="left", pad=18)
    png = io.BytesIO()  # drawn whole first: a drawing that fails leaves the file as it was
    fig.savefig(png, format="png", facecolor="white", bbox_inches="tight", pad_inches=0.15)
    return write_output(path, png.getvalue(), "output file", InputError)


def png_label_y(score: float, threshold: float | None, height: float = 0.55, gap: float = 0.2) -> float:
    """Where a PNG bar's value label starts (data units, ``va="bottom"``): ``gap`` above the bar, unless its
    box (``height`` high: an 8 pt label on the 0-10.8 axis) would cross the threshold line; then above the line."""
    y = score + gap
    if threshold is not None and y - gap / 2 <= threshold <= y + height:
        return threshold + gap
    return y


def check_chart(view: dict) -> None:
    """The PNG chart is the novelty per round of a single-loop session (InputError for a multi-source one)."""
    if is_multi(view):
        raise InputError(
            f"thread {view['thread']!r} is a multi-source session: it has no novelty rounds to chart; its HTML "
            f"report (`saturate show {view['thread']} --html FILE`) charts each source's queries"
        )


def chart_view(view: dict, path: str | os.PathLike) -> Path:
    check_chart(view)
    s = view["settings"]
    title = f"{view['thread']}: {short_query(view['task'], '')}"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return novelty_chart(
        view["records"], s.get("novelty_threshold"), path, title=title[:110], mode=s.get("mode", "saturate")
    )


def write_chart(thread_id: str, path: str | os.PathLike, home: str | os.PathLike | None = None) -> Path:
    """The novelty chart of a session as a PNG file."""
    return chart_view(load_session(thread_id, home), path)


# ---------------------------------------------------------------- HTML


def _query_html(query: str, task: str) -> str:
    if task and query.startswith(task) and len(query) > len(task):
        return f'<span class="task" title="{_e(query)}">&lt;task&gt;</span> + {_e(query[len(task) :].strip())}'
    return _e(query)


def _badge(decision: str | None) -> str:
    if not decision:
        return '<span class="badge b-muted">—</span>'
    return f'<span class="badge b-{_e(decision)}">{_e(DECISION_TEXT.get(decision, decision))}</span>'


def _bar(novelty: float | None, threshold: float | None, decision: str | None, width: int = 150) -> str:
    h = 12
    color = DECISION_COLOR.get(decision or "", "#9ca3af")
    w = 0 if novelty is None else max(0.0, min(novelty, 10.0)) / 10 * width
    parts = [
        f'<svg width="{width}" height="{h + 4}" viewBox="0 0 {width} {h + 4}" role="img" '
        f'aria-label="novelty {_e(novelty)}">',
        f'<rect x="0" y="2" width="{width}" height="{h}" rx="3" fill="#eef0f3"/>',
        f'<rect x="0" y="2" width="{w:.1f}" height="{h}" rx="3" fill="{color}"/>',
    ]
    if threshold is not None:
        tx = threshold / 10 * width
        parts.append(f'<line x1="{tx:.1f}" y1="0" x2="{tx:.1f}" y2="{h + 4}" stroke="#111827" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _chart_svg(records: list[dict], threshold: float | None, mode: str, round_thresholds: list | None = None) -> str:
    """The timeline chart: novelty per round over the panel's full width, bars coloured by decision, the
    threshold line (and a round's own threshold when a fork changed it later)."""
    shown = threshold if mode != "fixed" else None
    bars = []
    for i, r in enumerate(records):
        nov = r.get("novelty") or 0.0
        d = r.get("decision") or ""
        rt = (round_thresholds or [None] * len(records))[i]
        marks = []
        if rt is not None and shown is not None and rt != threshold:  # a fork changed it later
            marks.append((rt, f"threshold {rt:g} when this round ran"))
        bars.append(
            Bar(
                value=nov,
                fill="url(#hatch)" if d == "epsilon_pass" else DECISION_COLOR.get(d, "#9ca3af"),
                label=f"round {r['round']}",
                short_label=str(r["round"]),
                value_text=f"{nov:.2f}",
                sublabel=DECISION_TEXT.get(d, d),
                sublabel_color=DECISION_COLOR.get(d, "#6b7280"),
                title=f"round {r['round']}: novelty {nov:.2f}, {DECISION_TEXT.get(d, d)}",
                data={"round": r["round"]},
                marks=marks,
            )
        )
    return bars_svg(
        bars,
        ymax=10,
        ticks=[0, 2, 4, 6, 8, 10],
        threshold=shown,
        threshold_label=f"threshold {threshold:g}" if shown is not None else "",
        aria="novelty per round",
        hatch_colors=(DECISION_COLOR["epsilon_pass"], "#fde68a"),
    )


def slots_html(slots: list[dict]) -> str:
    """The question's slots as a table: slot, what it asks (of which subject), value, status, source."""
    rows = []
    for slot in slots:
        what = slot_asks(slot)
        status = ", ".join(slot_marks(slot)) or (slot.get("status") or "")
        src = _link(slot["source"]) if slot.get("source") else "—"
        rows.append(
            f'<tr class="slot" data-status="{_e(slot.get("status"))}"><td>{_e(slot.get("slot"))}</td>'
            f"<td>{_e(what)}</td><td>{_e(slot.get('subject') or '—')}</td>"
            f"<td><b>{_e(slot.get('value') or 'not found')}</b></td><td>{_e(status)}</td><td>{src}</td></tr>"
        )
    return (
        '<table class="slots"><thead><tr><th>slot</th><th>asks for</th><th>of</th><th>value</th><th>status</th>'
        "<th>source</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def render_html(view: dict) -> str:
    """The report page (a string of self-contained HTML), of either kind of session: one function per section."""
    if is_multi(view):
        return render_multi_html(view)
    parts = [
        *_header_html(view),
        *_result_html(view),  # the answer and its brief first: what the reader came for
        *_cards_html(view),
        *_timeline_html(view),
        *_sources_html(view),
        *_enrichment_html(view),
        *_errors_html(view),
        *_knowledge_html(view),
        # settings: the loop's knobs and whatever differs from the default up front, the rest folded
        *settings_section(view["settings"], KEY_SETTINGS, set((view.get("origin") or {}).get("changes") or {})),
        *_checkpoints_html(view),
        _footer_html(view),
    ]
    return page(f"saturate · {view['task'][:80]}", parts)


def _round_errors(view: dict) -> list[tuple[int, str]]:
    """(round, error) of every error the rounds recorded."""
    return [(r["round"], e) for r in view["records"] for e in r.get("errors") or []]


def _page_errors(view: dict) -> list[dict]:
    """The enrichment's pages that failed."""
    return [p for p in view["pages"] if p.get("status") == "error"]


def _cited(view: dict) -> set[int]:
    """The source numbers the answer cites (none before there is an answer)."""
    result = view.get("result") or {}
    return cited_numbers(result.get("answer", "")) if result else set()


def _header_html(view: dict) -> list[str]:
    """The kicker, the task as the title, when/what/how the session ran, and where a fork came from."""
    settings = view["settings"]
    result = view.get("result") or {}
    duration = (ts(view["updated"]) - ts(view["created"])).total_seconds()
    status = (
        "finished" if result else (f"not finished — next step: {', '.join(view['next'])}" if view["next"] else "empty")
    )
    parts = [
        f'<div class="kicker">saturate · session report · thread {thread_span(view["thread"])}</div>',
        f"<h1>{_e(view['task'])}</h1>",
        f'<div class="meta">started <b>{_e(fmt_time(view["created"]))}</b> · '
        f"last step <b>{_e(fmt_time(view['updated']))}</b> "
        f"({duration:.2f} s) · source <b>{_e(settings.get('source'))}</b>"
        f"{(' (' + _e(settings.get('corpus')) + ')') if settings.get('corpus') else ''} · "
        f"mode <b>{_e(settings.get('mode', 'saturate'))}</b> · "
        f"{_e(status)}</div>",
    ]
    origin = view.get("origin")
    if origin:
        changes = (
            ", ".join(f"{k} {v[0]!r} → {v[1]!r}" for k, v in (origin.get("changes") or {}).items())
            or "no setting changed"
        )
        parts.append(
            f'<p class="meta">Forked on {_e(fmt_time(origin.get("at")))} from thread '
            f'<span class="mono">{_e(origin["thread"])}</span> after round '
            f"<b>{_e(origin.get('round'))}</b> "
            f'(checkpoint <span class="mono">{_e(origin.get("checkpoint_id"))}</span>): {_e(changes)}. '
            f"Rounds up to {_e(origin.get('round'))} are inherited.</p>"
        )
    return parts


def _cards_html(view: dict) -> list[str]:
    """The numbers at a glance: rounds, sources, threshold, decisions, errors."""
    records = view["records"]
    threshold = view["settings"].get("novelty_threshold")
    decisions = [r.get("decision") for r in records]
    counts = {d: decisions.count(d) for d in DECISION_COLOR}
    cards = [
        ("rounds", len(records)),
        ("accepted sources", len(view["results"])),
        ("novelty threshold", f"{threshold:g}" if threshold is not None else "—"),
        ("accept / ε pass", f"{counts['accept']} / {counts['epsilon_pass']}"),
        ("stop / cap", f"{counts['stop']} / {counts['cap']}"),
        ("errors", len(_round_errors(view)) + len(_page_errors(view))),
    ]
    return cards_html(cards)


def _result_html(view: dict) -> list[str]:
    """The answer (citations link to the sources), its proof, outcome, slots and notes; or why there is none yet."""
    result = view.get("result") or {}
    parts = ['<h2 id="result">Result</h2>']
    add = parts.append
    if result:
        add(f'<div class="answer">{cite_links(result.get("answer", ""))}</div>')
        if result.get("brief"):
            add(brief_html(result["brief"]))
        if result.get("proof"):  # a verified claim
            proof = cite_links(result["proof"])
            add(f'<details open><summary>proof</summary><div class="panel knowledge">{proof}</div></details>')
        add(
            f'<p class="meta">outcome <b>{_e(result.get("outcome"))}</b> · '
            f"stopped after <b>{_e(result.get('rounds'))}</b> round(s): "
            f"{_e(result.get('stop_reason'))}</p>"
        )
        if result.get("short_answer"):
            add(f'<p class="meta">short answer: <b>{_e(result["short_answer"])}</b></p>')
        slots = (result.get("debug") or {}).get("slots") or []
        if slots:  # what the question asks, as the sources fill it
            add(slots_html(slots))
        for note in (result.get("debug") or {}).get("notes") or []:
            add(f'<p class="note">note: {_e(note)}</p>')
    else:
        nxt = ", ".join(view["next"]) or "nothing"
        add(
            f'<p class="note">No result yet: the session stopped before its end (next step: {_e(nxt)}). '
            f"Continue it with <code>saturate resume {_e(view['thread'])}</code>.</p>"
        )
    return parts


def _timeline_html(view: dict) -> list[str]:
    """The novelty chart over the rounds and the table of rounds."""
    settings = view["settings"]
    records = view["records"]
    chart = _chart_svg(
        records,
        settings.get("novelty_threshold"),
        settings.get("mode", "saturate"),
        [(i.get("settings") or {}).get("novelty_threshold") for i in view["rounds"]],
    )
    parts = [
        '<h2 id="timeline">Timeline of rounds</h2>',
        '<div class="panel">',
        '<div class="legend">'
        + "".join(
            f'<span><i style="background:{c}"></i>{_e(DECISION_TEXT[d])}</span>' for d, c in DECISION_COLOR.items()
        )
        + "<span>— — threshold</span></div>",
        chart,
        "</div>",
        '<div class="panel" style="margin-top:14px"><table class="rounds"><colgroup><col style="width:78px"><col>'
        '<col style="width:100px"><col style="width:170px"><col style="width:210px"><col style="width:112px">'
        '<col style="width:96px">'
        "</colgroup><thead><tr><th>round</th><th>query</th><th>results<br>new / total</th><th>novelty</th><th>gate</th>"
        "<th>knowledge<br>state</th><th>time</th></tr></thead><tbody>",
    ]
    for info in view["rounds"]:
        parts += _round_row_html(view, info)
    if not records:
        parts.append('<tr><td colspan="7">no rounds yet</td></tr>')
    parts.append("</tbody></table></div>")
    return parts


def _round_row_html(view: dict, info: dict) -> list[str]:
    """One round's row: its query and what it found, novelty against the threshold, the gate, the knowledge
    state after it, when it ran."""
    settings = view["settings"]
    threshold = settings.get("novelty_threshold")
    mode = settings.get("mode", "saturate")
    r = info["record"]
    d = r.get("decision")
    nov = r.get("novelty")
    rs = info.get("settings") or settings
    r_threshold = rs.get("novelty_threshold", threshold)
    eps = ""
    if d == "epsilon_pass":
        eps = (
            f'<div class="eps">ε pass: draw {r.get("epsilon_draw", 0):.3f} &lt; '
            f"ε {rs.get('novelty_epsilon', 0):g}</div>"
        )
    elif d == "stop" and r.get("epsilon_draw") is not None:
        eps = f'<div class="sub">ε draw {r["epsilon_draw"]:.3f} ≥ ε {rs.get("novelty_epsilon", 0):g}</div>'
    know = info.get("knowledge_after", r.get("knowledge_chars"))
    cap = settings.get("knowledge_max_chars") or 1
    know_html = (
        "—"
        if know is None
        else (
            f'{know:,} chars<br><svg width="80" height="6"><rect width="80" height="6" rx="3" fill="#eef0f3"/>'
            f'<rect width="{min(80, 80 * know / cap):.1f}" height="6" rx="3" fill="#818cf8"/></svg>'
            f'<div class="sub">{_e(r.get("compress") or "unchanged")}</div>'
        )
    )
    if info.get("accepted_after") is not None:
        know_html += f'<div class="sub">{info["accepted_after"]} sources</div>'
    time_html = ""
    if "started_s" in info:
        time_html = f'+{info["started_s"]:.2f} s<div class="sub">{info["wall_ms"]:.0f} ms wall</div>'
    node_ms = " · ".join(f"{k} {v:.1f}" for k, v in (r.get("durations_ms") or {}).items())
    inh = (
        '<div><span class="inh" title="copied from the original session">inherited</span></div>'
        if info.get("inherited")
        else ""
    )
    q = (
        f'<div class="q">{_query_html(r.get("query", ""), view["task"])}</div>'
        f'<div class="sub">{_e(r.get("planner"))} · {_e(r.get("source"))}</div>'
        + (f'<div class="sub">steps (ms): {_e(node_ms)}</div>' if node_ms else "")
    )
    new_urls = r.get("new_urls") or []
    if new_urls:
        q += (
            f'<details><summary>{len(new_urls)} new result(s)</summary><div class="sub">'
            + "<br>".join(_link(u) for u in new_urls)
            + "</div></details>"
        )
    for slot in r.get("slots") or []:
        q += f'<div class="sub slot">{_e(slot_line(slot))}</div>'
    for e in r.get("errors") or []:
        q += f'<div class="err">error: {_e(e)}</div>'
    for f in r.get("fallbacks") or []:
        q += f'<div class="note">note: {_e(f)}</div>'
    nov_s = "—" if nov is None else f"{nov:.2f}"
    if r_threshold is None or mode == "fixed":
        novelty = f'<td>{_bar(nov, None, d)}<div class="sub"><b>{nov_s}</b> · {_e(r.get("novelty_method"))}</div></td>'
    else:
        cmp_ = "" if nov is None else ("≥" if nov >= r_threshold else "<")
        novelty = (
            f'<td>{_bar(nov, r_threshold, d)}<div class="sub"><b>{nov_s}</b> {cmp_} {r_threshold:g} · '
            f"{_e(r.get('novelty_method'))}</div></td>"
        )
    return [
        f'<tr class="round" data-round="{r["round"]}" data-decision="{_e(d)}" id="round-{r["round"]}">',
        f'<td class="num"><b>{r["round"]}</b>{inh}</td>',
        f"<td>{q}</td>",
        f'<td class="num">{r.get("new", 0)} / {r.get("total", 0)}</td>',
        novelty,
        f'<td>{_badge(d)}{eps}<div class="why">{_e(r.get("reason"))}</div></td>',
        f'<td class="num">{know_html}</td>',
        f'<td class="num">{time_html}</td>',
        "</tr>",
    ]


def _sources_html(view: dict) -> list[str]:
    """The accepted sources, numbered as the answer cites them, with the round that accepted each."""
    result = view.get("result") or {}
    by_round = accepted_round(view["records"])
    cited = _cited(view)
    sources = (
        result.get("sources")
        if result
        else [
            {"n": i + 1, "url": r["url"], "title": r.get("title", ""), "excerpt": r.get("snippet", "")}
            for i, r in enumerate(view["results"].values())
        ]
    )
    if not sources:
        return ['<h2 id="sources">Accepted sources</h2>', '<p class="meta">No source was accepted.</p>']
    parts = ['<h2 id="sources">Accepted sources</h2>', '<ol class="sources">']
    for s in sources:
        rnd = by_round.get(s["url"])
        tags = (f" · round {rnd}" if rnd else "") + (" · cited" if s["n"] in cited else "")
        head = (
            f'<a href="{_e(s["url"])}" rel="noopener noreferrer">{_e(s.get("title") or s["url"])}</a>'
            if re.match(r"^https?://", s["url"])
            else _e(s.get("title") or s["url"])
        )
        parts.append(
            f'<li id="src-{s["n"]}"><span class="n">[{s["n"]}]</span> <b>{head}</b>'
            f'<span class="sub">{_e(tags)}</span>'
            + (f'<div class="sub mono">{_e(s["url"])}</div>' if s.get("title") else "")
            + (f'<div class="excerpt">{_e(s.get("excerpt"))}</div>' if s.get("excerpt") else "")
            + "</li>"
        )
    parts.append("</ol>")
    return parts


def _enrichment_html(view: dict) -> list[str]:
    """The pages fetched (or skipped, or failed) to enrich the accepted results."""
    settings = view["settings"]
    parts = ['<h2 id="enrichment">Enrichment</h2>']
    if not view["pages"]:
        return parts + [
            '<p class="meta">No page was enriched'
            + (" (the session has not reached enrich yet)." if not view.get("result") else ".")
            + "</p>"
        ]
    parts.append(
        '<div class="panel"><table><thead><tr><th>page</th><th>status</th><th>overlap</th><th>chars</th>'
        "<th>why</th></tr></thead><tbody>"
    )
    for p in view["pages"]:
        st = p.get("status")
        cls = "err" if st == "error" else ("sub" if st == "skipped" else "")
        parts.append(
            f'<tr class="page" data-status="{_e(st)}"><td>{_link(p["url"])}</td>'
            f'<td class="{cls}"><b>{_e(st)}</b></td>'
            f'<td class="num">{_e(p.get("overlap"))}</td><td class="num">{_e(p.get("chars", ""))}</td>'
            f'<td class="sub">{_e(p.get("reason", ""))}</td></tr>'
        )
    parts.append("</tbody></table></div>")
    parts.append(
        f'<p class="sub">Pages are fetched for at most url_enrich_count = {_e(settings.get("url_enrich_count"))} '
        "accepted results whose snippet overlaps the knowledge state by ≤ enrich_overlap_max = "
        f"{_e(settings.get('enrich_overlap_max'))}; skips are listed with their overlap.</p>"
    )
    return parts


def _errors_html(view: dict) -> list[str]:
    """Every error the rounds and the enrichment recorded."""
    errors, page_errors = _round_errors(view), _page_errors(view)
    if not (errors or page_errors):
        return ['<h2 id="errors">Errors</h2>', '<p class="meta">None recorded.</p>']
    return [
        '<h2 id="errors">Errors</h2>',
        "<ul>",
        *(f'<li class="err">round {rnd}: {_e(e)}</li>' for rnd, e in errors),
        *(f'<li class="err">enrich {_e(p["url"])}: {_e(p.get("reason"))}</li>' for p in page_errors),
        "</ul>",
    ]


def _knowledge_html(view: dict) -> list[str]:
    """The knowledge state the session ended with (nothing if it is empty)."""
    if not view.get("knowledge"):
        return []
    return ['<h2 id="knowledge">Knowledge state</h2>', f'<div class="panel knowledge">{_e(view["knowledge"])}</div>']


def _checkpoints_html(view: dict) -> list[str]:
    """Every checkpoint (each step of the graph), fork points marked; folded."""
    parts = [
        '<h2 id="checkpoints">Checkpoints</h2>',
        f"<details><summary>{len(view['steps'])} checkpoints (each step of the graph; fork points marked)</summary>",
        '<div class="panel"><table><thead><tr><th>step</th><th>written by</th><th>next</th><th>round</th>'
        "<th>knowledge</th>"
        "<th>sources</th><th>time</th><th>checkpoint id</th></tr></thead><tbody>",
    ]
    for s in view["steps"]:
        fork_mark = (
            f' <span class="inh">fork --round {s["fork_round"]}</span>' if s.get("fork_round") is not None else ""
        )
        parts.append(
            f'<tr class="step"><td class="num">{_e(s["step"])}</td><td>{_e(s["node"])}</td>'
            f"<td>{_e(', '.join(s['next']) or '—')}{fork_mark}</td>"
            f'<td class="num">{_e(s["round"])}</td><td class="num">{_e(s["knowledge_chars"])}</td>'
            f'<td class="num">{_e(s["accepted"])}</td>'
            f'<td class="sub">{_e((s["created_at"] or "")[11:23])}</td>'
            f'<td class="mono sub">{_e(s["checkpoint_id"])}</td></tr>'
        )
    parts.append("</tbody></table></div></details>")
    return parts


def _footer_html(view: dict) -> str:
    """How and when the page was made."""
    return (
        f"<footer>Generated by <code>saturate show {_e(view['thread'])} --html</code> from the checkpoint history at "
        f"{_e(_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M:%S UTC'))}. "
        "Self-contained: no scripts, no external resources.</footer>"
    )


def write_html(thread_id: str, path: str | os.PathLike, home: str | os.PathLike | None = None) -> Path:
    """The HTML report of a session as one self-contained file."""
    return write_html_view(load_session(thread_id, home), path)


def write_html_view(view: dict, path: str | os.PathLike) -> Path:
    return write_output(path, render_html(view), "output file", InputError)
