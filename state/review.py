"""A person's decision at a review point (``review`` setting): what ``interrupt()`` hands back to the graph.

The graph pauses with LangGraph's ``interrupt()`` before the first search (``review`` ``plan`` or ``both``: the
planned queries) and before the answer is final (``answer`` or ``both``). It is resumed with
``Command(resume=decision)``, where a decision is ``"approve"`` or a mapping:

- ``{"action": "approve"}``: go on as planned / accept the answer;
- ``{"action": "edit", "queries": [...]}`` (plan): the queries to search first, in order — edit, add and drop
  by giving the whole list;
- ``{"action": "more", "note": "..."}`` (answer): send the session back for more search; the note is the next
  round's query.

``review_decision`` validates one (``ReviewError``, a ``BadInput``, saying what is wrong), so the CLI and the
Python API refuse a bad decision before anything resumes; the review nodes validate again (a decision sent
through LangGraph's server arrives unchecked).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from saturate.state.errors import BadInput

MAX_REVIEW_QUERIES = 10
MAX_REVIEW_TEXT = 300  # a query or note is cut here, as a model's query is


class ReviewError(BadInput):
    """A review decision that cannot be applied (unknown action, no queries, a note missing)."""


class ReviewDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "edit", "more"]
    queries: list[str] = Field(default_factory=list, max_length=MAX_REVIEW_QUERIES)
    note: str = ""

    @field_validator("queries")
    @classmethod
    def _queries(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for q in value:
            q = " ".join(str(q).split())[:MAX_REVIEW_TEXT]
            if q and q.lower() not in {o.lower() for o in out}:
                out.append(q)
        return out

    @field_validator("note")
    @classmethod
    def _note(cls, value: str) -> str:
        return " ".join(value.split())[:MAX_REVIEW_TEXT]


def review_decision(value: Any, point: str) -> ReviewDecision:
    """``value`` as the decision at review point ``point`` (``plan`` or ``answer``); ReviewError when unusable."""
    if isinstance(value, ReviewDecision):
        decision = value
    else:
        if isinstance(value, str):
            value = {"action": value.strip().lower()}
        if not isinstance(value, dict):
            raise ReviewError(f"a review decision is 'approve' or a dict with an action (got {type(value).__name__})")
        try:
            decision = ReviewDecision.model_validate(value)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "decision"
            raise ReviewError(f"review decision: {where}: {first['msg']}") from None
    if decision.action == "edit" and point != "plan":
        raise ReviewError("edit applies to the plan; the answer is approved or sent back with action 'more'")
    if decision.action == "more" and point != "answer":
        raise ReviewError("more applies to the answer; the plan is approved or edited")
    if decision.action == "edit" and not decision.queries:
        raise ReviewError("an edited plan needs at least one query")
    if decision.action == "more" and not decision.note:
        raise ReviewError("sending the answer back needs a note: what to search for")
    return decision
