"""decide_multi: the result of a multi-source session.

The answer is the single loop's (``nodes._answer``: extractive, or the chat
model's with its citations checked in code), from the merged results in
citation order; the model call goes through the session's model budget (a
spent budget means the extractive answer, noted). Around it: every cited source
carries the sources and queries that found it and its verification tag, the
"Key actors" profiles, the tag counts, the per-source loop summaries, safety
trips, and a Markdown report with all of these.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from saturate.nodes._answer import answer_task, trained_reader
from saturate.nodes._budget import BudgetedUsage, session_budget
from saturate.state.context import Context
from saturate.state.multi_records import KeyActor, LoopSummary, MultiResult
from saturate.state.multi_state import MultiState, used_in_state
from saturate.state.settings import Settings
from saturate.state.text import clip, scrub_urls


def loop_line(loop: dict) -> str:
    phase = "" if loop["phase"] == "loop" else " (breadcrumbs)"
    queries = f"{loop['queries']} quer{'y' if loop['queries'] == 1 else 'ies'}"
    return f"{loop['source']}{phase}: {queries}, {loop['stop_reason']} — {loop['reasoning']}"


def report_markdown(result: MultiResult) -> str:
    lines = [f"# {result.task}", "", result.answer, "", "## Sources", ""]
    for s in result.sources:
        by = "; ".join(f"{f.source} ({f.phase}) {f.query!r}" for f in s.found_by)
        lines.append(f"[{s.n}] {s.title} — {s.url}  \n  *{s.tag}* — {s.tag_reason}  \n  found by: {by}")
    if result.key_actors:
        lines += ["", "## Key actors", ""]
        for a in result.key_actors:
            cites = "".join(f"[{n}]" for n in a.sources)
            lines.append(f"- **{a.name}** ({a.kind}, {a.mentions} results {cites}): {a.what}")
            if a.role:
                lines.append(f"  - role: {a.role}")
            lines += [f"  - {f}" for f in a.facts]
    lines += ["", "## Sources searched", ""] + [f"- {loop_line(loop.model_dump())}" for loop in result.loops]
    return "\n".join(lines)


def _without_links(actor: dict, allowed: set[str]) -> dict:
    """A key actor whose sentences (from untrusted results) carry no link but the merged sources' own."""

    def clean(text: str) -> str:
        return scrub_urls(text, allowed)[0]

    return {
        **actor,
        "name": clean(actor.get("name", "")),
        "what": clean(actor.get("what", "")),
        "role": clean(actor.get("role", "")),
        "facts": [clean(f) for f in actor.get("facts") or []],
    }


def parallelism(loops: list[dict], phase: str = "loop") -> float | None:
    """Sum of the loops' times over the span from the first start to the last end (1.0 = sequential)."""
    ls = [loop for loop in loops if loop["phase"] == phase]
    if len(ls) < 2:
        return None
    span = max(loop["started"] + loop["elapsed_s"] for loop in ls) - min(loop["started"] for loop in ls)
    return round(sum(loop["elapsed_s"] for loop in ls) / span, 3) if span > 0 else None


def decide_multi(state: MultiState, runtime: Runtime[Context]) -> dict:
    settings = Settings.model_validate(state["settings"])
    ctx = runtime.context
    merged = state.get("merged") or []
    notes: list[str] = []
    model = ctx.chat_model if merged else None
    budget = session_budget(ctx, settings, used_in_state(state))
    if model is not None and budget.tripped:
        notes.append(f"decide: model budget spent ({budget.tripped}); extractive answer")
        model = None
    calls = BudgetedUsage("decide", budget)
    results = [
        {
            "id": e["id"],
            "url": e["url"],
            "title": e["title"],
            "snippet": e["snippet"],
            "source": ", ".join(e["sources"]),
        }
        for e in merged
    ]
    judge = trained_reader(settings)[0] if model is not None else None  # judges the model's answer
    answered = answer_task(state["task"], results, {}, model, calls, judge=judge)
    safety = [{"kind": "budget", "source": None, "phase": "decide", "detail": t} for t in calls.trips]
    if calls.trips:
        notes.append(f"decide: model budget spent ({calls.trips[0]}); extractive answer")
    usage = [{"node": "decide", "model_calls": calls.calls, "model_tokens": calls.tokens()}] if calls.calls else []
    base = {
        "outcome": "answer" if merged else "no_results",
        "task": state["task"],
        "answer": answered.answer,
        "debug": {
            "answer": answered.method,
            "answered": answered.answered,
            "notes": list(state.get("notes") or []) + notes + answered.notes,
        },
    }
    sources = []
    by_url = {e["url"]: e for e in merged}
    tags = state.get("tags") or {}
    for s in answered.sources:
        s = s.model_dump()
        e = by_url[s["url"]]
        t = tags.get(e["key"], {})
        sources.append({**s, "found_by": e["found_by"], "tag": t.get("tag"), "tag_reason": t.get("reason", "")})
    loops = state.get("loops") or []
    audit = state.get("audit") or []
    all_safety = list(state.get("safety") or []) + safety
    rows = loops + list(state.get("usage") or []) + usage
    result = MultiResult(
        **{**base, "sources": sources},
        key_actors=[
            KeyActor.model_validate(_without_links(a, {e["url"] for e in merged})) for a in state.get("profiles") or []
        ],
        tags={
            tag: sum(1 for s in sources if s["tag"] == tag)
            for tag in ("verified_official", "verified_multi", "unverified_single", "contradicted")
        },
        loops=[LoopSummary.model_validate(loop) for loop in loops],
    )
    result.stop_reason = "; ".join(
        f"{loop['source']}: {loop['stop_reason']}" for loop in loops if loop["phase"] == "loop"
    )
    result.rounds = len(audit)
    result.debug.update(
        total_queries=len(audit),
        queries_by_source={s["name"]: sum(1 for ev in audit if ev["source"] == s["name"]) for s in state["sources"]},
        model_calls=sum(r.get("model_calls", 0) for r in rows),
        model_tokens={k: sum((r.get("model_tokens") or {}).get(k, 0) for r in rows) for k in ("in", "out")},
        errors=[e for loop in loops for e in loop.get("errors", [])],
        safety=all_safety,
        leads=[{k: lead[k] for k in ("name", "kind", "score", "followed")} for lead in state.get("leads") or []],
        parallelism=parallelism(loops),
        merged_results=len(merged),
        multi_source_results=sum(1 for e in merged if len(e["sources"]) > 1),
    )
    result.debug["notes"] = list(result.debug.get("notes") or []) + [
        f"{s['kind']} tripped ({s.get('source') or s.get('phase')}): {clip(s['detail'], 200)}" for s in all_safety
    ]
    result.report = report_markdown(result)
    out: dict = {"result": result.model_dump()}
    if usage:
        out["usage"] = usage
    if safety:
        out["safety"] = safety
    return out
