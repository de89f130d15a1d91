"""The command line of multi-source sessions: ``saturate research --multi`` / ``--sources``, and ``show``.

    saturate research "TASK" --sources "local:a.jsonl,titles:a.jsonl,ddg" [--breadcrumb-limit 5] [--json]
    saturate research "TASK" --multi            # the configured `sources`, else the `source`/`corpus` one alone
    saturate show THREAD                        # loops, the audit event of every source query, leads, trips, result

Live progress: one line per source query as it is decided (the ``source_query``
custom events of the loops), on stderr; ``--events`` writes them as JSON lines.
"""

from __future__ import annotations

import json
import sys

from saturate.cli.loading import engine_loading
from saturate.cli.output import exit_code, print_answer, print_notes_and_errors, print_sources, say
from saturate.views.progress import query_counts, short_query


def wants_multi(args) -> bool:
    return bool(getattr(args, "multi", False) or getattr(args, "setting_sources", None))


def query_line(ev: dict, task: str = "") -> str:
    phase = "" if ev.get("phase") == "loop" else " (lead)"
    err = f"  errors: {len(ev['errors'])}" if ev.get("errors") else ""
    return (
        f"[{ev['source']}] q{ev['query_no']}{phase}: {short_query(ev['query'], task)!r}  {query_counts(ev)}"
        f"  → {ev['action']} ({ev.get('decided_by')}): {ev.get('reasoning', '')}{err}"
    )


def why_stopped(loop: dict) -> str:
    """A loop's stop reason and its reasoning, said once: ``saturated: 5/5 top results were duplicates (> 80%)``,
    not ``saturated — saturated: …`` (the heuristic's reasoning already starts with the reason)."""
    reason, reasoning = str(loop.get("stop_reason") or ""), str(loop.get("reasoning") or "")
    if not reason or reasoning.startswith(f"{reason}:") or reasoning.startswith(f"{reason} "):
        return reasoning or reason
    return f"{reason} — {reasoning}" if reasoning else reason


class MultiProgress:
    """A stream_handler: a line per source query (rich/plain) or JSON lines (``jsonl``), on stderr."""

    stream_mode = ["updates", "custom"]

    def __init__(self, task: str = "", style: str = "rich", file=None):
        self.task, self.style, self.file = task, style, file or sys.stderr
        self.header: str | None = None  # printed with the first event: bad input found opening sources stays one line

    def __call__(self, item) -> None:
        if self.header is not None:
            header, self.header = self.header, None
            say(header, file=self.file, flush=True)
        mode, chunk = item if isinstance(item, tuple) else ("updates", item)
        if mode == "custom" and isinstance(chunk, dict) and chunk.get("event") == "source_query":
            if self.style == "jsonl":
                text = json.dumps(chunk, ensure_ascii=False, default=str)
            else:
                text = query_line(chunk, self.task)
            say(text, file=self.file, flush=True)
        elif mode == "updates" and isinstance(chunk, dict) and self.style != "jsonl":
            if "merge" in chunk:
                merged = (chunk["merge"] or {}).get("merged") or []
                multi = sum(1 for e in merged if len(e["sources"]) > 1)
                say(f"merged: {len(merged)} results, {multi} found by 2+ sources", file=self.file, flush=True)
            if "breadcrumbs" in chunk:
                found = (chunk["breadcrumbs"] or {}).get("leads") or []
                leads = [lead["name"] for lead in found if lead.get("followed")]
                say(f"breadcrumbs: following {', '.join(leads) or 'nothing'}", file=self.file, flush=True)

    def close(self) -> None:
        pass


def multi_source_line(s) -> str:
    """A source of a multi-source result: number, title, URL, verification tag and who found it."""
    by = "; ".join(f"{f.source} {f.query!r}" + (" (lead)" if f.phase != "loop" else "") for f in s.found_by)
    return f"[{s.n}] {s.title} — {s.url}  [{s.tag}]\n     found by: {by}"


def print_multi_result(result, thread: str, as_json: bool, quiet: bool) -> None:
    if not print_answer(result, thread, as_json, quiet):
        return
    print_sources(result, thread, line=multi_source_line)
    if result.key_actors:
        say("\nKey actors")
        for a in result.key_actors:
            say(f"- {a.name} ({a.kind}; {a.mentions} results {''.join(f'[{n}]' for n in a.sources)}): {a.what}")
            if a.role:
                say(f"    role: {a.role}")
            for f in a.facts:
                say(f"    fact: {f}")
    say("\ntags: " + ", ".join(f"{k} {v}" for k, v in result.tags.items()))
    say("sources searched:")
    for loop in result.loops:
        phase = "" if loop.phase == "loop" else " (breadcrumbs)"
        say(f"  {loop.source}{phase}: {loop.queries} of {loop.ceiling} queries, {why_stopped(loop.model_dump())}")
    print_notes_and_errors(result)
    say(f"thread: {thread}   (saturate show {thread})")


def run_research(args, settings) -> int:
    """``saturate research --multi`` / ``--sources``: the settings are already validated."""
    with engine_loading():  # heavy: LangGraph and LangChain, imported when a session runs
        from saturate import research_multi
        from saturate.graph import check_thread, new_thread_id

    task = " ".join(args.task.split())  # as the session will hold it (research_multi checks it: one check)
    thread = args.thread = new_thread_id() if args.thread is None else check_thread(args.thread)
    live = None
    if getattr(args, "events", False):
        live = MultiProgress(task, style="jsonl")
    elif not (args.json or args.quiet):
        live = MultiProgress(task)
        names = ", ".join(s.name for s in settings.sources) if settings.sources else f"{settings.source} (alone)"
        live.header = f"thread {thread} · multi-source: {names}"
    result = research_multi(args.task, thread_id=thread, home=args.home, settings=settings, stream_handler=live)
    print_multi_result(result, thread, args.json, args.quiet)
    return exit_code(result)


def audit_lines(state: dict) -> list[str]:
    task = state.get("task", "")
    lines = []
    for ev in state.get("audit") or []:
        lines.append(f"audit {ev.get('session') or '-'} · {query_line(ev, task)}")
    return lines


def show(state: dict, thread: str) -> int:
    task = state["task"]
    say(f"task: {task}")
    sources = ", ".join(f"{s['name']} ({s['kind']}, ceiling {s['ceiling']})" for s in state["sources"])
    say(f"thread {thread} · multi-source · {sources}")
    for line in audit_lines(state):
        say(line)
    for loop in state.get("loops") or []:
        phase = "" if loop["phase"] == "loop" else " (breadcrumbs)"
        calls = f"  model calls {loop['model_calls']}" if loop.get("model_calls") else ""
        say(
            f"loop {loop['source']}{phase}: {loop['queries']} of {loop['ceiling']} queries "
            f"in {loop['elapsed_s']:.3f} s, {why_stopped(loop)}{calls}"
        )
        for f in loop.get("fallbacks") or []:
            say(f"  note   {f}")
    followed: dict[str, list[dict]] = {}  # one name once, with each way it was followed (a lead, its own page)
    for lead in state.get("leads") or []:
        if lead.get("followed"):
            followed.setdefault(lead["name"].lower(), []).append(lead)
    if followed:
        say("leads followed: " + ", ".join(lead_words(ways) for ways in followed.values()))
    for s in state.get("safety") or []:
        say(f"TRIPPED {s['kind']} ({s.get('source') or s.get('phase')}): {s['detail']}")
    if state.get("result"):
        r = state["result"]
        say(f"\nanswer: {r['answer']}")
        for s in r["sources"]:
            say(
                f"  [{s['n']}] {s['title']} — {s['url']}  [{s.get('tag')}]  found by "
                + ", ".join(sorted({f["source"] for f in s.get("found_by") or []}))
            )
        for a in r.get("key_actors") or []:
            say(f"  key actor: {a['name']} ({a['kind']}): {a['what']}")
    elif state.get("_next"):
        say(f"\nnot finished: next step {', '.join(state['_next'])} — saturate resume {thread}")
    return 0


def lead_words(ways: list[dict]) -> str:
    """One followed name as ``show`` lists it: "Zimbabwe (other: with the task in local:musique; its own page in
    titles:musique)"."""
    how = {"breadcrumb": "with the task", "entity": "its own page"}
    said = "; ".join(f"{how.get(str(w.get('purpose')), w.get('purpose'))} in {w.get('source')}" for w in ways)
    return f"{ways[0]['name']} ({ways[0]['kind']}: {said})"
