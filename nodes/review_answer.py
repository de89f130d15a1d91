"""review_answer: a person approves the answer or sends the session back for more search (``review``
answer/both).

The node pauses the graph with LangGraph's ``interrupt()`` after ``decide`` wrote the result; the checkpoint
holds the pause. Resumed with a decision (``state/review.py``): ``approve`` ends the session with the answer;
``more`` with a note clears the result and queues the note as the next round's query (``review_queries``): the
loop goes on from there (at least that round; the gate judges it as any other) and the answer is decided and
reviewed again.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.review import review_decision


def review_answer(state: ResearchState, runtime: Runtime[Context]) -> dict:
    result = state.get("result") or {}
    sources = [
        {"n": s.get("n"), "title": s.get("title", ""), "url": s.get("url", "")} for s in result.get("sources", [])
    ]
    decision = review_decision(
        interrupt(
            {
                "point": "answer",
                "task": state["task"],
                "answer": result.get("answer", ""),
                "short_answer": result.get("short_answer", ""),
                "outcome": result.get("outcome", ""),
                "sources": sources,
                "stop_reason": result.get("stop_reason", ""),
                "rounds": result.get("rounds", 0),
            }
        ),
        "answer",
    )
    if decision.action == "approve":
        return {
            "notes": ["answer approved by the reviewer"],
            "result": {**result, "debug": _noted(result, "answer approved by the reviewer")},
        }
    note = f"sent back for more search by the reviewer: {decision.note!r}"
    return {
        "result": None,
        "review_queries": [*(state.get("review_queries") or []), decision.note],
        "notes": [note],
    }


def _noted(result: dict, note: str) -> dict:
    debug = dict(result.get("debug") or {})
    debug["notes"] = [*(debug.get("notes") or []), note]
    return debug
