"""The initial plan with a chat model: the task itself, then two complementary queries of the model's (shared by
both modes' plan nodes).

The task as asked is searched first, as without a model: on issue 45's 40 public questions the model's rewordings
searched in its place lost more answers than they found (SmolLM2 3 lost, 1 gained; Qwen2.5-Coder-0.5B 3 and 2);
the model's queries add to that search, they do not replace it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from saturate.nodes._model import MAX_QUERY_CHARS, ModelUsage, Prompt, first_line, parse_json_object
from saturate.nodes.reading.grounding import on_task


class PlanReply(BaseModel):
    """The plan's JSON: the schema a server is asked to follow (the reply is still read defensively)."""

    queries: list[str] = Field(min_length=1, max_length=2)


PLAN = Prompt(
    "plan",
    system="You plan web searches for a research task. Write two complementary search queries: the first asks "
    "for the task directly, the second approaches it from another angle (another name, a sub-question, "
    'the likely source). Reply with JSON only: {{"queries": ["first query", "second query"]}}',
    user="Task: {task}",
    options={"temperature": 0.3, "num_predict": 120},
    reply=PlanReply,
)
PLAN_RETRY = 'Reply with JSON only, exactly in this form: {"queries": ["...", "..."]}'


def _clean_queries(value, task: str, fallbacks: list[str]) -> list[str]:
    queries = value.get("queries") if isinstance(value, dict) else None
    if not isinstance(queries, list):
        return []
    out: list[str] = []
    for q in queries:
        q = first_line(str(q))[:MAX_QUERY_CHARS] if isinstance(q, (str, int, float)) else ""
        if q and PLAN.echoes(q, task):  # "first query", "second query": the prompt's example, copied
            fallbacks.append(f"planned query {q!r} only repeats the prompt's words: dropped")
        elif q and not on_task(q, task):  # nothing is retrieved yet: a planned query must be about the task
            fallbacks.append(f"planned query {q!r} shares no word with the task: dropped")
        elif q and q.lower() not in {o.lower() for o in out}:
            out.append(q)
    return out[:2]


def model_plan(model, task: str, usage: ModelUsage, fallbacks: list[str]) -> list[str]:
    """The task, then the model's two complementary queries (one equal to the task dropped); [] when its replies are
    unusable. Raises on call failure."""
    reply = usage.call(model, PLAN, task=task)
    queries = _clean_queries(parse_json_object(reply.text), task, fallbacks)
    if not queries:
        fallbacks.append(f"initial plan reply is not the JSON asked for ({reply.text[:60]!r}): asked once more")
        reply = usage.call(model, PLAN, then=PLAN_RETRY, task=task)
        queries = _clean_queries(parse_json_object(reply.text), task, fallbacks)
    if not queries:
        return []
    return [task] + [q for q in queries if " ".join(q.split()).casefold() != " ".join(task.split()).casefold()]
