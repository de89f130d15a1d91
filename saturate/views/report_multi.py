"""The HTML report of a multi-source session (graph/build_multi.py), from its checkpoint history.

What it shows, all from the checkpointed state (``MultiState``):

- the result: the answer (citations link to the sources), its outcome and stop reason as the session wrote
  them, notes, safety trips;
- the loops per source: what the source is (kind, depth, ceiling, characteristics), a chart of every query's
  share of new results against the duplicate rule's line, and each query with its results, duplicates, the
  decision (continue / stop, by whom) and its reasoning; the loop's stop reason; the breadcrumb queries;
- the leads (breadcrumbs) ranked, and which were followed;
- the merged sources with who found them (which source loops, with which query), their verification tag
  (verified_official / verified_multi / unverified_single / contradicted) and its reason;
- the key actors (profiles); the settings that shape a multi-source session; every checkpoint.

Self-contained like the single-loop report (saturate/views/report.py): no scripts, no external resources.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from saturate.graph.session import status_of
from saturate.graph.timetravel import checkpoint_rows
from saturate.state.text import printable
from saturate.views.report_parts import (
    Bar,
    badge,
    bars_svg,
    cards_html,
    cite_links,
    cited_numbers,
    e,
    fmt_time,
    link,
    page,
    settings_section,
    task_query,
    thread_span,
    ts,
)

ACTION_COLOR = {"continue": "#16a34a", "stop": "#dc2626"}
LEAD_COLOR = "#6366f1"
TAGS = {
    "verified_official": ("official", "from an official source, or states the same as one"),
    "verified_multi": ("verified", "two independent sources state the same"),
    "unverified_single": ("single source", "no independent source states the same"),
    "contradicted": ("contradiction", "another result gives other dates or figures for the same statement"),
}
MULTI_SETTINGS = (
    "sources",
    "source",
    "corpus",
    "source_ceilings",
    "duplicate_stop_share",
    "empty_stop_queries",
    "breadcrumb_limit",
    "source_loop_timeout_s",
    "model_call_budget",
    "results_per_query",
    "seed",
)


# ---------------------------------------------------------------- data


def multi_view(thread: str, snaps: list) -> dict:
    """What the report shows, from a multi-source thread's checkpoints (oldest first)."""
    last = snaps[-1]
    values = last.values or {}
    steps = checkpoint_rows(snaps)
    result = values.get("result")
    pending = [] if result else list(dict.fromkeys([*last.next, *(t.name for t in last.tasks)]))
    return {
        "kind": "multi",
        "thread": printable(thread),  # shown in HTML and Markdown: a bidi override escaped
        "task": values.get("task", ""),
        "settings": values.get("settings") or {},
        "sources": list(values.get("sources") or []),
        "planned_queries": list(values.get("planned_queries") or []),
        "audit": list(values.get("audit") or []),
        "loops": list(values.get("loops") or []),
        "merged": list(values.get("merged") or []),
        "leads": list(values.get("leads") or []),
        "tags": dict(values.get("tags") or {}),
        "profiles": list(values.get("profiles") or []),
        "safety": list(values.get("safety") or []),
        "notes": list(values.get("notes") or []),
        "result": result,
        "next": pending,
        "status": status_of(last),
        "steps": steps,
        "created": steps[0]["created_at"],
        "updated": steps[-1]["created_at"],
    }


def incremental_pct(ev: dict) -> float:
    """The share of a query's top results its source's loop did not have yet (the audit event's own figure)."""
    if ev.get("incremental_pct") is not None:
        return float(ev["incremental_pct"])
    total = ev.get("total") or 0
    return 100.0 * (total - (ev.get("duplicates") or 0)) / total if total else 0.0


def events_by_source(view: dict) -> dict[str, list[tuple[int, dict]]]:
    """source name → its (index in the audit list, event), loop queries first, then its lead queries."""
    out: dict[str, list[tuple[int, dict]]] = {s["name"]: [] for s in view["sources"]}
    for i, ev in enumerate(view["audit"]):
        out.setdefault(ev["source"], []).append((i, ev))
    for name in out:
        out[name].sort(key=lambda p: (p[1].get("phase") != "loop", p[1].get("query_no", 0), p[0]))
    return out


def source_entries(view: dict) -> list[dict]:
    """The merged sources, numbered as the answer cites them, each with its tag (and the [n] it agrees or
    conflicts ``with``) and who found it."""
    merged = view["merged"]
    by_url = {m["url"]: m for m in merged}
    n_of_key = {m["key"]: i + 1 for i, m in enumerate(merged)}
    result = view.get("result") or {}
    if result.get("sources"):
        rows = [dict(s) for s in result["sources"]]
        n_of_key = {by_url[s["url"]]["key"]: s["n"] for s in rows if s["url"] in by_url}
    else:
        rows = [
            {"n": i + 1, "url": m["url"], "title": m.get("title", ""), "excerpt": m.get("snippet", "")}
            for i, m in enumerate(merged)
        ]
    out = []
    for s in rows:
        m = by_url.get(s["url"], {})
        tag = view["tags"].get(m.get("key"), {})
        out.append(
            {
                **s,
                "found_by": s.get("found_by") or m.get("found_by") or [],
                "tag": s.get("tag") or tag.get("tag"),
                "tag_reason": s.get("tag_reason") or tag.get("reason", ""),
                "with": [n_of_key[k] for k in tag.get("with") or [] if k in n_of_key],
            }
        )
    return out


# ---------------------------------------------------------------- HTML


def _chart(view: dict, by_source: dict[str, list[tuple[int, dict]]]) -> str:
    """Every query's share of new results, grouped by source, against the duplicate rule's line."""
    share = (view["settings"] or {}).get("duplicate_stop_share")
    line = None if share is None else 100 * (1 - share)
    bars, groups = [], []
    for name, events in by_source.items():
        if not events:
            continue
        first = len(bars)
        leads = 0
        for i, ev in events:
            lead = ev.get("phase") != "loop"
            leads += lead
            pct = incremental_pct(ev)
            action = ev.get("action") or ""
            label = f"lead {leads}" if lead else f"q{ev.get('query_no')}"
            bars.append(
                Bar(
                    value=pct,
                    fill=LEAD_COLOR if lead else ACTION_COLOR.get(action, "#9ca3af"),
                    label=label,
                    short_label=f"L{leads}" if lead else str(ev.get("query_no")),
                    value_text=f"{pct:.0f}%",
                    sublabel="lead" if lead else action,
                    sublabel_color=LEAD_COLOR if lead else ACTION_COLOR.get(action, "#6b7280"),
                    title=f"{name} {label}: {ev.get('new', 0)} new / {ev.get('total', 0)}, "
                    f"{ev.get('duplicates', 0)} duplicates → {action}",
                    data={"source": name, "phase": ev.get("phase"), "query": ev.get("query_no"), "event": i},
                )
            )
        groups.append((name, first, len(bars) - 1))
    if not bars:
        return '<p class="meta">No source was queried yet.</p>'
    return bars_svg(
        bars,
        ymax=100,
        ticks=[0, 20, 40, 60, 80, 100],
        tick_text=lambda v: f"{v:g}%",
        threshold=line,
        threshold_label=f"{line:g}% new" if line is not None else "",
        groups=groups,
        aria="new results per query, by source",
    )


def _found_by(found_by: list[dict], anchors: dict[tuple, tuple[int, Any]], task: str) -> str:
    """``local:musique`` q1 <task>; q2 <task> + Bubi River · ``titles:musique`` q1 <task>."""
    per: dict[str, list[str]] = {}
    for f in found_by:
        i, no = anchors.get((f["source"], f.get("phase", "loop"), f["query"]), (None, None))
        name = ("lead" if f.get("phase", "loop") != "loop" else "q") + (str(no) if no is not None else "")
        ref = f'<a href="#q-{i}">{e(name)}</a>' if i is not None else e(name)
        per.setdefault(f["source"], []).append(f"{ref} {task_query(f['query'], task, whole=True)}")
    return " · ".join(f"<b>{e(src)}</b> " + "; ".join(qs) for src, qs in per.items())


def render_multi_html(view: dict) -> str:
    """The report page of a multi-source session (a string of self-contained HTML): one function per section."""
    parts = [
        *_header_html(view),
        *_cards_html(view),
        *_result_html(view),  # result first
        *_loops_html(view),
        *_leads_html(view),
        *_merged_html(view),
        *_actors_html(view),
        *_errors_html(view),
        *settings_section(view["settings"], MULTI_SETTINGS),
        *_checkpoints_html(view),
        _footer_html(view),
    ]
    return page(f"saturate · {view['task'][:80]}", parts)


def _query_errors(view: dict) -> list[tuple[str, Any, str]]:
    """(source, query number, error) of every error a query recorded."""
    return [(ev["source"], ev.get("query_no"), err) for ev in view["audit"] for err in ev.get("errors") or []]


def _loop_errors(view: dict) -> list[tuple[str, str]]:
    """(source, error) of every error a source's loop recorded."""
    return [(lp["source"], err) for lp in view["loops"] for err in lp.get("errors") or []]


def _actors(view: dict) -> list[dict] | None:
    """The key actors: the result's, or the profiles so far."""
    result = view.get("result") or {}
    return result.get("key_actors") if result else view["profiles"]


def _cited(view: dict) -> set[int]:
    """The source numbers the answer cites (none before there is an answer)."""
    result = view.get("result") or {}
    return cited_numbers(result.get("answer", "")) if result else set()


def _tag_counts(entries: list[dict]) -> dict[str, int]:
    """How many merged sources carry each verification tag."""
    return {t: sum(1 for s in entries if s["tag"] == t) for t in TAGS}


def _header_html(view: dict) -> list[str]:
    """The kicker, the task as the title, when the session ran, over which sources, and its status."""
    duration = (ts(view["updated"]) - ts(view["created"])).total_seconds()
    status = "finished" if view.get("result") else f"not finished: {view['status']}"
    names = ", ".join(s["name"] for s in view["sources"])
    return [
        f'<div class="kicker">saturate · multi-source report · thread {thread_span(view["thread"])}</div>',
        f"<h1>{e(view['task'])}</h1>",
        f'<div class="meta">started <b>{e(fmt_time(view["created"]))}</b> · '
        f"last step <b>{e(fmt_time(view['updated']))}</b> ({duration:.2f} s) · "
        f"{len(view['sources'])} sources searched in parallel: <b>{e(names)}</b> · {e(status)}</div>",
    ]


def _cards_html(view: dict) -> list[str]:
    """The numbers at a glance: sources, queries, merged results, verification, key actors, errors."""
    counts = _tag_counts(source_entries(view))
    errors = len(_query_errors(view)) + len(_loop_errors(view))
    cards = [
        ("sources", len(view["sources"])),
        ("queries", len(view["audit"])),
        ("merged results", len(view["merged"])),
        ("found by 2+ sources", sum(1 for m in view["merged"] if len(m.get("sources") or []) > 1)),
        (
            "verified / contradicted",
            f"{counts['verified_official'] + counts['verified_multi']} / {counts['contradicted']}",
        ),
        ("key actors", len(_actors(view) or [])),
        ("errors / trips", f"{errors} / {len(view['safety'])}"),
    ]
    return cards_html(cards)


def _result_html(view: dict) -> list[str]:
    """The answer (citations link to the sources), its outcome and notes; or why there is none yet."""
    result = view.get("result") or {}
    parts = ['<h2 id="result">Result</h2>']
    if result:
        parts += [
            f'<div class="answer">{cite_links(result.get("answer", ""))}</div>',
            f'<p class="meta">outcome <b>{e(result.get("outcome"))}</b> · {e(result.get("rounds"))} queries · '
            f"stop reason: {e(result.get('stop_reason'))}</p>",
        ]
        notes = (result.get("debug") or {}).get("notes") or []
    else:
        nxt = ", ".join(view["next"]) or "nothing"
        parts.append(
            f'<p class="note">No result yet: the session stopped before its end (next step: {e(nxt)}). '
            f"Continue it with <code>saturate resume {e(view['thread'])}</code>.</p>"
        )
        notes = view["notes"]
    return parts + [f'<p class="note">note: {e(note)}</p>' for note in notes]


def _loops_html(view: dict) -> list[str]:
    """The chart of every query's share of new results, then each source's loop."""
    share = view["settings"].get("duplicate_stop_share")
    by_source = events_by_source(view)
    parts = [
        '<h2 id="loops">Loops per source</h2>',
        '<div class="panel">',
        '<div class="legend">'
        f'<span><i style="background:{ACTION_COLOR["continue"]}"></i>continue</span>'
        f'<span><i style="background:{ACTION_COLOR["stop"]}"></i>stop</span>'
        f'<span><i style="background:{LEAD_COLOR}"></i>lead (breadcrumb) query</span>'
        "<span>bar: the share of a query's top results its source's loop did not have yet</span>"
        + (
            f"<span>— — duplicate rule: a query whose top results are more than {share:.0%} duplicates "
            "(under " + f"{100 * (1 - share):g}% new) saturates its source</span>"
            if share is not None
            else ""
        )
        + "</div>",
        _chart(view, by_source),
        "</div>",
    ]
    specs = {s["name"]: s for s in view["sources"]}
    for name, events in by_source.items():
        parts += _source_loop_html(view, name, specs.get(name, {}), events)
    return parts


def _source_loop_html(view: dict, name: str, spec: dict, events: list[tuple[int, dict]]) -> list[str]:
    """One source's panel: what the source is, its loop's summary, and the table of its queries."""
    task = view["task"]
    parts = [
        f'<div class="panel source-loop" data-source="{e(name)}" style="margin-top:14px">',
        f'<h3>{e(name)} <span class="sub">{e(spec.get("kind"))} · {e(spec.get("depth") or "")} · '
        f"ceiling {e(spec.get('ceiling'))}</span></h3>",
    ]
    add = parts.append
    if spec.get("corpus"):
        add(f'<div class="sub mono">{e(spec["corpus"])}</div>')
    if spec.get("description"):
        add(f'<div class="sub">{e(spec["description"])}</div>')
    for lp in (lp for lp in view["loops"] if lp["source"] == name):
        phase = "loop" if lp.get("phase") == "loop" else "breadcrumbs"
        calls = f" · {lp['model_calls']} model calls" if lp.get("model_calls") else ""
        timed = " · timed out" if lp.get("timed_out") else ""
        add(
            f'<p class="meta loop-summary" data-phase="{e(lp.get("phase"))}">{phase}: '
            f"<b>{e(lp.get('queries'))} of {e(lp.get('ceiling'))} queries</b> in {lp.get('elapsed_s', 0):.3f} s"
            f"{e(calls)}{e(timed)} · stopped: {badge('reason', lp.get('stop_reason'))} "
            f"{e(lp.get('reasoning'))}</p>"
        )
        for f in lp.get("fallbacks") or []:
            add(f'<p class="note">note: {e(f)}</p>')
        for err in lp.get("errors") or []:
            add(f'<p class="err">error: {e(err)}</p>')
    if not events:
        add('<p class="meta">No query yet.</p></div>')
        return parts
    add(
        '<table class="queries"><colgroup><col style="width:70px"><col><col style="width:120px">'
        '<col style="width:110px"><col style="width:300px"><col style="width:70px"></colgroup>'
        "<thead><tr><th>#</th><th>query</th><th>top results<br>already had</th><th>new results<br>kept</th>"
        "<th>decision</th><th>time</th></tr></thead><tbody>"
    )
    leads = 0
    for i, ev in events:
        lead = ev.get("phase") != "loop"
        leads += lead
        action = ev.get("action")
        errs = "".join(f'<div class="err">error: {e(x)}</div>' for x in ev.get("errors") or [])
        add(
            f'<tr class="query" id="q-{i}" data-source="{e(name)}" data-phase="{e(ev.get("phase"))}" '
            f'data-action="{e(action)}">'
            f'<td class="num"><b>{"lead " + str(leads) if lead else "q" + str(ev.get("query_no"))}</b></td>'
            f'<td><div class="q">{task_query(ev.get("query", ""), task)}</div>{errs}</td>'
            f'<td class="num">{e(ev.get("duplicates", 0))} of {e(ev.get("total", 0))}'
            f'<div class="sub">{incremental_pct(ev):.0f}% new</div></td>'
            f'<td class="num">{e(ev.get("new", 0))}</td>'
            f"<td>{badge('lead' if lead else action, action)} "
            f'<span class="sub">by {e(ev.get("decided_by"))}</span>'
            f'<div class="why">{e(ev.get("reasoning"))}</div></td>'
            f'<td class="num">{ev.get("ms", 0):.0f} ms</td></tr>'
        )
    add("</tbody></table></div>")
    return parts


def _leads_html(view: dict) -> list[str]:
    """The leads (breadcrumbs) ranked, and which were followed in which source."""
    task, settings = view["task"], view["settings"]
    parts = ['<h2 id="leads">Leads (breadcrumbs)</h2>']
    if not view["leads"]:
        return parts + ['<p class="meta">No lead was found' + ("" if view.get("result") else " (yet)") + ".</p>"]
    parts.append(
        '<div class="panel"><table><thead><tr><th>lead</th><th>kind</th><th>score</th><th>results</th>'
        "<th>followed</th></tr></thead><tbody>"
    )
    for lead in view["leads"]:
        purpose = f" · {lead['purpose']}" if lead.get("purpose") and lead["purpose"] != "breadcrumb" else ""
        if lead.get("followed"):
            followed = "followed" + (f" in <b>{e(lead['source'])}</b>" if lead.get("source") else "")
            followed += f'<div class="sub">{e(lead["source_why"])}</div>' if lead.get("source_why") else ""
        else:
            followed = "—"
        parts.append(
            f'<tr class="lead" data-followed="{"yes" if lead.get("followed") else "no"}">'
            f"<td><b>{e(lead['name'])}</b>"
            + (f'<div class="sub">{task_query(lead["query"], task)}</div>' if lead.get("query") else "")
            + f"</td><td>{e(lead.get('kind'))}{e(purpose)}</td><td>{e(lead.get('score'))}</td>"
            f"<td>{e(lead.get('results', ''))}</td><td>{followed}</td></tr>"
        )
    parts.append("</tbody></table></div>")
    parts.append(
        f'<p class="sub">At most breadcrumb_limit = {e(settings.get("breadcrumb_limit"))} leads get one '
        "targeted query per source after the loops.</p>"
    )
    return parts


def _merged_html(view: dict) -> list[str]:
    """The merged sources with their tags and who found them: the notable ones first, the rest folded."""
    entries = source_entries(view)
    counts = _tag_counts(entries)
    cited = _cited(view)
    anchors = {
        (ev["source"], ev.get("phase", "loop"), ev["query"]): (i, ev.get("query_no"))
        for i, ev in enumerate(view["audit"])
    }
    parts = [
        '<h2 id="sources">Merged sources</h2>',
        '<p class="meta">' + " · ".join(f"{badge(t, TAGS[t][0])} {counts[t]} — {e(TAGS[t][1])}" for t in TAGS) + "</p>",
    ]
    if not entries:
        return parts + ['<p class="meta">No result was merged' + ("" if view.get("result") else " yet") + ".</p>"]

    def notable(s: dict) -> bool:
        return (
            s["n"] in cited
            or s["tag"] in ("verified_official", "verified_multi", "contradicted")
            or len({f["source"] for f in s["found_by"]}) > 1
        )

    first = [s for s in entries if notable(s)]
    rest = [s for s in entries if not notable(s)]
    parts.append(
        '<ol class="sources">' + "".join(_entry_html(s, cited, anchors, view["task"]) for s in first) + "</ol>"
    )
    if rest:
        parts.append(
            f"<details><summary>the other {len(rest)} result{'' if len(rest) == 1 else 's'} "
            "(not cited, found by one source, not verified or contradicted)</summary>"
            '<ol class="sources">'
            + "".join(_entry_html(s, cited, anchors, view["task"]) for s in rest)
            + "</ol></details>"
        )
    return parts


def _entry_html(s: dict, cited: set[int], anchors: dict[tuple, tuple[int, Any]], task: str) -> str:
    """One merged source: its title and link, tag and its reason, who found it, its excerpt."""
    url = s["url"]
    head = link(url, s.get("title") or url) if url.startswith(("http://", "https://")) else e(s.get("title") or url)
    marks = (" · cited" if s["n"] in cited else "") + (
        f" · found by {len({f['source'] for f in s['found_by']})} sources"
        if len({f["source"] for f in s["found_by"]}) > 1
        else ""
    )
    with_ = " ".join(f'<a href="#src-{n}">[{n}]</a>' for n in s["with"])
    return (
        f'<li id="src-{s["n"]}" class="source" data-tag="{e(s["tag"])}"><span class="n">[{s["n"]}]</span> '
        f"<b>{head}</b> {badge(s['tag'], TAGS.get(s['tag'] or '', (s['tag'],))[0]) if s['tag'] else ''}"
        f'<span class="sub">{e(marks)}</span>'
        f'<div class="sub mono">{e(url)}</div>'
        + (
            f'<div class="sub">{e(s["tag_reason"])}{(" — with " + with_) if with_ else ""}</div>'
            if s.get("tag_reason")
            else ""
        )
        + f'<div class="found">found by: {_found_by(s["found_by"], anchors, task)}</div>'
        + (f'<div class="excerpt">{e(s.get("excerpt"))}</div>' if s.get("excerpt") else "")
        + "</li>"
    )


def _actors_html(view: dict) -> list[str]:
    """The key actors (profiles): what and who they are, their role, their facts, the sources naming them."""
    actors = _actors(view)
    if not actors:
        return [
            '<h2 id="actors">Key actors</h2>',
            '<p class="meta">No key actor: no name is mentioned by enough on-topic results.</p>',
        ]
    parts = ['<h2 id="actors">Key actors</h2>']
    for a in actors:
        refs = " ".join(f'<a href="#src-{n}">[{n}]</a>' for n in a.get("sources") or [])
        parts.append(
            f'<div class="actor"><h3>{e(a["name"])} <span class="sub">{e(a.get("kind"))} · '
            f"{e(a.get('mentions'))} results</span> {refs}</h3>"
            + (f"<div>{e(a['what'])}</div>" if a.get("what") else "")
            + (f'<div class="why">role: {e(a["role"])}</div>' if a.get("role") else "")
            + ("<ul>" + "".join(f"<li>{e(f)}</li>" for f in a.get("facts") or []) + "</ul>" if a.get("facts") else "")
            + "</div>"
        )
    return parts


def _errors_html(view: dict) -> list[str]:
    """Every error a query or a loop recorded, and every safety trip."""
    errors, loop_errors = _query_errors(view), _loop_errors(view)
    if not (errors or loop_errors or view["safety"]):
        return ['<h2 id="errors">Errors and safety trips</h2>', '<p class="meta">None recorded.</p>']
    return [
        '<h2 id="errors">Errors and safety trips</h2>',
        "<ul>",
        *(f'<li class="err">{e(src)} q{e(no)}: {e(err)}</li>' for src, no, err in errors),
        *(f'<li class="err">{e(src)} loop: {e(err)}</li>' for src, err in loop_errors),
        *(
            f'<li class="err">tripped {e(s.get("kind"))} ({e(s.get("source") or s.get("phase"))}): '
            f"{e(s.get('detail'))}</li>"
            for s in view["safety"]
        ),
        "</ul>",
    ]


def _checkpoints_html(view: dict) -> list[str]:
    """Every checkpoint (each step of the graph); folded."""
    return [
        '<h2 id="checkpoints">Checkpoints</h2>',
        f"<details><summary>{len(view['steps'])} checkpoints (each step of the graph)</summary>",
        '<div class="panel"><table><thead><tr><th>step</th><th>written by</th><th>next</th><th>time</th>'
        "<th>checkpoint id</th></tr></thead><tbody>",
        *(
            f'<tr class="step"><td class="num">{e(s["step"])}</td><td>{e(s["node"])}</td>'
            f"<td>{e(', '.join(s['next']) or '—')}</td>"
            f'<td class="sub">{e((s["created_at"] or "")[11:23])}</td>'
            f'<td class="mono sub">{e(s["checkpoint_id"])}</td></tr>'
            for s in view["steps"]
        ),
        "</tbody></table></div></details>",
    ]


def _footer_html(view: dict) -> str:
    """How and when the page was made."""
    return (
        f"<footer>Generated by <code>saturate show {e(view['thread'])} --html</code> from the checkpoint history at "
        f"{e(_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M:%S UTC'))}. "
        "Self-contained: no scripts, no external resources.</footer>"
    )
