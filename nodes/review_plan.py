"""review_plan: a person approves or edits the planned queries before the first search (``review`` plan/both).

The node pauses the graph with LangGraph's ``interrupt()``; the checkpoint holds the pause, so the session can
wait across restarts. Resumed with a decision (``state/review.py``): ``approve`` keeps the plan; ``edit`` with
the queries replaces it (rounds 1..n search them in order, round 1 at once). Nothing before ``interrupt()``
has a side effect: LangGraph runs the node again from its start when it resumes.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.review import review_decision


def review_plan(state: ResearchState, runtime: Runtime[Context]) -> dict:
    planned = list(state.get("planned_queries") or [])
    cur = state["current"].copy()
    decision = review_decision(
        interrupt({"point": "plan", "task": state["task"], "queries": planned}),
        "plan",
    )
    if decision.action == "approve" or decision.queries == planned:
        note = "plan approved by the reviewer"
        return {"current": {**cur, "fallbacks": [*cur.get("fallbacks", []), note]}}
    note = f"plan edited by the reviewer: {planned} → {decision.queries}"
    return {
        "planned_queries": decision.queries,
        "current": {
            **cur,
            "query": decision.queries[0],
            "planner": "reviewed",
            "fallbacks": [*cur.get("fallbacks", []), note],
        },
    }
