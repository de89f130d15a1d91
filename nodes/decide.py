"""decide: the final result, built only from what the session retrieved.

For now (no model synthesis yet) the answer is extractive: the sentences of
accepted results and enriched pages that share the most content terms with
the task, each cited as [n] where n numbers the accepted sources. A source is
listed only if it was retrieved and accepted, so nothing unretrieved is cited.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from state.context import Context
from state.graph_state import ResearchState
from state.records import AgentResult, SourceRef
from state.text import clip, sentences, term_set

ANSWER_SENTENCES = 3
EXCERPT_CHARS = 300


def rank_sentences(task: str, texts: list[tuple[int, str]], limit: int) -> list[tuple[int, str]]:
    """Best sentences for the task: most task terms covered, earlier sources first; no near-duplicates."""
    task_terms = term_set(task)
    scored = []
    for order, (n, text) in enumerate(texts):
        for j, s in enumerate(sentences(text)):
            st = term_set(s)
            hit = len(st & task_terms)
            if hit and len(s) >= 20:
                scored.append((-hit, order, j, n, s, st))
    scored.sort(key=lambda x: x[:3])
    chosen: list[tuple[int, str]] = []
    kept: list[set[str]] = []
    for *_, n, s, st in scored:
        if any(len(st & k) >= 0.8 * max(1, len(st)) for k in kept):
            continue
        chosen.append((n, s))
        kept.append(st)
        if len(chosen) >= limit:
            break
    return chosen


def decide(state: ResearchState, runtime: Runtime[Context]) -> dict:
    task = state["task"]
    accepted = list((state.get("results") or {}).values())
    records = state.get("records") or []
    pages = [p for p in state.get("pages") or [] if p.get("status") == "stored"]
    store = runtime.context.pages if runtime.context else None
    sources = [
        SourceRef(n=i + 1, url=r["url"], title=r.get("title", ""), excerpt=clip(r.get("snippet", ""), EXCERPT_CHARS))
        for i, r in enumerate(accepted)
    ]
    number = {s.url: s.n for s in sources}
    texts: list[tuple[int, str]] = [(number[r["url"]], f"{r.get('snippet', '')}") for r in accepted]
    for p in pages:
        text = store.get(p["url"]) if store is not None else None
        if text and p["url"] in number:
            texts.append((number[p["url"]], text))
    picked = rank_sentences(task, texts, ANSWER_SENTENCES)
    answer = " ".join(f"{s} [{n}]" for n, s in picked)
    if not answer and accepted:
        answer = f"{clip(accepted[0].get('snippet', ''), EXCERPT_CHARS)} [1]"
    last = records[-1] if records else {}
    errors = [e for r in records for e in r.get("errors", [])]
    result = AgentResult(
        outcome="answer" if accepted else "no_results",
        task=task,
        answer=answer or "No results were retrieved for this task.",
        sources=sources,
        stop_reason=f"{last.get('decision', '')}: {last.get('reason', '')}" if last else "",
        rounds=len(records),
        debug={
            "total_queries": len(state.get("queries") or []),
            "total_pages_visited": len(pages),
            "model_calls": sum(r.get("model_calls", 0) for r in records),
            "errors": errors,
        },
    )
    return {"result": result.model_dump()}
