"""search: one query against the session's source.

Results are not merged here: they wait in ``current`` until the gate accepts
the round (compress merges them). Round 1 has a quality floor: fewer than
``search_quality_floor`` characters of results gets up to ``results_per_query``
more results the round does not have yet, and the record says so — from one
retry with a simplified query (its content terms only), or, where that would
search the same terms again (a local index: ``query_key``), from the first
query's own next ranks, fetched with it (no second search).
A failed search is recorded in the round and yields an empty round.
"""

from __future__ import annotations

import time
from typing import cast

from langgraph.runtime import Runtime

from saturate.nodes._search import ask, reranker
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.settings_of import settings_of
from saturate.state.shapes import ResultDict
from saturate.state.text import terms

SIMPLIFIED_MAX_TERMS = 8


def simplify(query: str) -> str:
    """Content terms of the query, each once, at most SIMPLIFIED_MAX_TERMS."""
    seen: list[str] = []
    for t in terms(query):
        if t not in seen:
            seen.append(t)
    return " ".join(seen[:SIMPLIFIED_MAX_TERMS])


def search(state: ResearchState, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    settings = settings_of(state, runtime.context)
    cur = state["current"].copy()
    source = runtime.context.source
    errors = list(cur.get("errors", []))
    queries = [cur["query"]]
    accepted = state.get("results") or {}
    k = settings.results_per_query
    name = getattr(source, "name", "source")
    # Round 1's quality floor: a thin first answer gets more results. Where the simplified query would be
    # the same search (a local index matches the same terms), its retry would only fetch ranks k+1..2k for
    # the price of a second search: the first query over-fetches them instead. Otherwise (web search) the
    # simplified query is really asked.
    simple, same = "", False
    if cur["round"] == 1:
        simple = simplify(cur["query"])
        key = getattr(source, "query_key", None)
        same = (
            not simple
            or simple.lower() == cur["query"].strip().lower()
            or (key is not None and key(simple) == key(cur["query"]))
        )
    notes: list[str] = []
    rerank = reranker(settings, runtime.context.embeddings, cur["query"], notes, source)
    first = ask(
        source,
        name,
        cur["query"],
        k,
        accepted,
        settings.exclude_seen,
        timeout=settings.search_timeout_s,
        extra=k if same else 0,
        rerank=rerank,
        depth=settings.rerank_depth,
    )
    errors += first.errors
    notes += first.notes
    repeats_top_k = first.repeats
    results = (first.unseen if settings.exclude_seen else first.top)[:k]
    chars = sum(len(r["title"]) + len(r["snippet"]) for r in results)
    retry, overfetched = None, 0
    if cur["round"] == 1 and chars < settings.search_quality_floor:
        if same:
            more = [r for r in first.unseen[k:] if r["url"] not in {x["url"] for x in results}]
            overfetched = len(more)
            results += more
        else:
            retry = simple
            queries.append(simple)
            more = ask(
                source,
                name,
                simple,
                k,
                {r["url"] for r in results} | set(accepted),
                True,
                timeout=settings.search_timeout_s,
                rerank=rerank,
                depth=settings.rerank_depth,
            )
            errors += more.errors
            notes += more.notes
            results += more.unseen
        chars = sum(len(r["title"]) + len(r["snippet"]) for r in results)
    answered = getattr(source, "answered", None) or getattr(source, "name", type(source).__name__)
    new = sum(1 for r in results if r["url"] not in accepted)
    cur.update(
        source=answered,
        results=cast(list[ResultDict], results),  # SearchResult dicts (nodes._search.ask)
        total=len(results),
        new=new,
        new_urls=[r["url"] for r in results if r["url"] not in accepted],
        result_chars=chars,
        quality_retry=retry,
        quality_overfetch=overfetched,
        searches=len(queries),
        repeats_top_k=repeats_top_k,
        errors=errors,
        durations_ms={**cur.get("durations_ms", {}), "search": round((time.perf_counter() - t0) * 1000, 3)},
    )
    if notes:
        cur["fallbacks"] = cur.get("fallbacks", []) + notes
    if overfetched:
        cur["fallbacks"] = cur.get("fallbacks", []) + [
            f"round 1 under quality floor ({settings.search_quality_floor} chars): {overfetched} more results of "
            "the same query (its simplified form searches the same terms here, so no second search)"
        ]
    if retry:
        cur["fallbacks"] = cur.get("fallbacks", []) + [
            f"round 1 under quality floor ({settings.search_quality_floor} chars): retried as {retry!r}"
        ]
    runtime.stream_writer(
        {
            "event": "search",
            "round": cur["round"],
            "query": cur["query"],
            "source": answered,
            "total": len(results),
            "new": new,
            "errors": len(errors),
        }
    )  # live progress (stream_mode "custom")
    return {"current": cur, "round": cur["round"], "queries": queries}
