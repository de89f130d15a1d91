"""The graph state of a multi-source session (graph/build_multi.py) and its reducers.

Per-source loops run as parallel ``Send`` branches of one superstep; each
returns its hits, audit events and loop summary, which the ``operator.add``
reducers append (LangGraph applies branch writes in task order, not finishing
order, so a run is reproducible). ``merged`` and the later fields are
rewritten whole by the node that owns them.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from saturate.state.settings import Settings


class MultiState(TypedDict, total=False):
    task: str
    settings: dict[str, Any]
    kind: str  # "multi" (api.session_state picks the graph by it)
    sources: list[dict]  # resolved specs {name, kind, corpus, ceiling, description}, in order
    planned_queries: list[str]  # first queries of every loop (the task, or the model's plan)
    hits: Annotated[list[dict], operator.add]  # {source, phase, query_no, query, rank, result}: what each query added
    audit: Annotated[list[dict], operator.add]  # AuditEvent dicts, one per source query
    loops: Annotated[list[dict], operator.add]  # LoopSummary dicts, one per loop (and breadcrumb pass)
    queries: Annotated[list[str], operator.add]  # every query asked, all sources
    safety: Annotated[list[dict], operator.add]  # trips: {kind: timeout|budget, source?, detail}
    usage: Annotated[list[dict], operator.add]  # model calls outside the loops: {node, calls, in, out}
    notes: Annotated[list[str], operator.add]
    merged: list[dict]  # deduplicated results with attribution, in citation order
    leads: list[dict]  # ranked breadcrumbs {name, kind, score, followed}
    breadcrumbs_done: bool
    tags: dict[str, dict]  # merged key -> {tag, reason, with}
    profiles: list[dict]  # KeyActor dicts
    result: dict | None


def initial_multi_state(task: str, settings: Settings, sources: list[dict], notes: tuple[str, ...] = ()) -> MultiState:
    return {
        "task": task,
        "settings": settings.model_dump(),
        "kind": "multi",
        "sources": list(sources),
        "planned_queries": [],
        "notes": list(notes),
        "merged": [],
        "leads": [],
        "breadcrumbs_done": False,
        "tags": {},
        "profiles": [],
        "result": None,
    }


def used_in_state(state: Mapping[str, Any]) -> dict:
    """Calls and tokens the checkpointed state records, and whether the breaker already tripped."""
    rows = [*(state.get("loops") or []), *(state.get("usage") or [])]
    return {
        "calls": sum(r.get("model_calls", 0) for r in rows),
        "tokens": sum(sum((r.get("model_tokens") or {}).values()) for r in rows),
        "tripped": next((s.get("detail") for s in state.get("safety") or [] if s.get("kind") == "budget"), None),
    }
