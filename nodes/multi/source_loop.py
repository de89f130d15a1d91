"""source_loop: one source's saturation loop, run as a parallel ``Send`` branch per source.

The branch gets ``{task, settings, source: <resolved spec>, planned, budget_seed}``
and asks that source query after query, with its own history: the first query is
the plan's first (the task itself without a model), each later one comes from
the decision (``_loop_decision``) after the previous one, until it says stop.

Per query (``_run.SourceRun``): the source is asked for ``results_per_query``
results, over-fetching past results this loop already has (``exclude_seen``, as
the single loop does), under the loop's wall-clock deadline
(``source_loop_timeout_s``, a hanging search included; the time its model decisions take is not counted: each is
bounded by ``model_timeout_s``, their number by the ceiling and ``model_call_budget``); a failed search is an
empty query with its error recorded. Every query leaves an audit event; the
loop leaves one summary (stop reason, timings, model calls). Timeouts and
budget trips are also written to ``safety``.

Cross-source merging happens later (``merge``): a loop judges duplicates
only against its own history, so loops never wait for each other.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from saturate.nodes._budget import BudgetedUsage, BudgetExceeded, session_budget
from saturate.nodes._model import error_text
from saturate.nodes.multi._loop_decision import (
    DECISION,
    LoopDecision,
    enforce_ceiling,
    gaps_text,
    heuristic_decision,
    history_table,
    parse_decision,
    rule_stop,
)
from saturate.nodes.multi._run import SourceRun
from saturate.nodes.reading.salience import gap_query, salient_phrases
from saturate.state.context import Context
from saturate.state.settings import Settings
from saturate.state.source_kinds import DEFAULT_DEPTHS
from saturate.state.source_spec import DEPTH_EXPECTATIONS
from saturate.state.text import term_set


def next_heuristic_query(task: str, run: SourceRun, planned: list[str]) -> tuple[str, str]:
    asked = {q.lower() for q in (s.query for s in run.history)}
    for q in planned:
        if q.strip().lower() not in asked:
            return q, "planned"
    return gap_query(task, run.results, [s.query for s in run.history])


def model_step(model, usage: BudgetedUsage, run: SourceRun, ceiling: int) -> tuple[LoopDecision | None, str]:
    """(LoopDecision or None, why not usable). Raises BudgetExceeded / call errors (ModelTimeout among them)."""
    spec, task = run.spec, run.task
    used = set()
    for s in run.history:
        used |= term_set(s.query)
    leads = salient_phrases(task, run.results, used)
    texts = [f"{r.get('title', '')} {r.get('snippet', '')}" for r in run.results]
    reply = usage.call(
        model,
        DECISION,
        name=spec["name"],
        kind=spec["kind"],
        description=spec["description"],
        depth=DEPTH_EXPECTATIONS.get(spec.get("depth") or DEFAULT_DEPTHS[spec["kind"]], ""),
        ceiling=ceiling,
        task=task,
        asked=len(run.history),
        accumulated=len(run.results),
        history=history_table(run.history),
        gaps=gaps_text(task, texts, leads),
    )
    return parse_decision(reply.text)


def source_loop(state: Any, runtime: Runtime[Context]) -> dict:
    # ``state`` is the Send payload (graph/build_multi.py), typed Any so that LangGraph infers no input schema
    # (and so no channel) from it
    payload: dict = state
    settings = Settings.model_validate(payload["settings"])
    spec, task = payload["source"], payload["task"]
    ctx = runtime.context
    ceiling = int(spec["ceiling"])
    run = SourceRun(
        task,
        spec,
        settings,
        (ctx.sources or {}).get(spec["name"]),
        "loop",
        getattr(runtime.execution_info, "thread_id", None),
        time.monotonic() + settings.source_loop_timeout_s,
        writer=runtime.stream_writer,
    )
    model = ctx.chat_model
    usage = BudgetedUsage("source_decision", session_budget(ctx, settings, payload.get("budget_seed")))
    fallbacks: list[str] = []
    planned = list(payload.get("planned") or []) or [task]
    query = planned[0]
    while True:
        run.ask(query)
        rule = rule_stop(run.history, ceiling, settings.empty_stop_queries, run.timed_out or run.remaining() <= 0)
        if rule:
            run.timed_out = run.timed_out or rule[0] == "timeout"
            run.decide("stop", "rule", rule[1])
            stop, why = rule
            break
        decision, by, note = None, "heuristic", ""
        if model is not None and not usage.budget.tripped:
            asked_at = time.monotonic()
            try:
                decision, problem = model_step(model, usage, run, ceiling)
                if decision is None:
                    note = f"query {len(run.history)}: model decision unusable ({problem}): heuristic decision"
            except BudgetExceeded as exc:
                note = f"query {len(run.history)}: model budget spent ({exc}): heuristic decision"
            except Exception as exc:  # a failed call is recorded; the heuristic decides
                run.errors.append(f"source_decision model: {error_text(exc)}")
                note = f"query {len(run.history)}: model error: heuristic decision"
            # the wall-clock limit is the loop's searching: a decision is bounded by model_timeout_s, and on a CPU
            # server one takes longer than the whole limit (the loops stopped after 1-2 queries, issue 34)
            run.deadline += time.monotonic() - asked_at
        if note:
            fallbacks.append(note)
        if decision is not None:
            action, by = decision.action, "model"
            action, override = enforce_ceiling(action, len(run.history), ceiling)
            reasoning = decision.reasoning + (f" [{override}]" if override else "")
        else:
            action, reasoning = heuristic_decision(
                run.history, settings.duplicate_stop_share, spec.get("depth") or DEFAULT_DEPTHS[spec["kind"]]
            )
        if action == "stop":
            run.decide("stop", by, reasoning)
            stop, why = ("model" if by == "model" else "saturated"), reasoning
            break
        asked = {s.query.strip().lower() for s in run.history}
        if decision is not None and decision.next_query and decision.next_query.lower() not in asked:
            query = decision.next_query
            reasoning += f" → next: {query!r}" + (f" ({decision.query_rationale})" if decision.query_rationale else "")
        else:
            if decision is not None:
                fallbacks.append(
                    f"query {len(run.history)}: model next_query {decision.next_query!r} was asked before: "
                    "heuristic query"
                )
            query, how = next_heuristic_query(task, run, planned)
            reasoning += f" → next ({how}): {query!r}"
        run.decide("continue", by, reasoning)
    return {
        "hits": run.hits,
        "audit": run.audit,
        "queries": [s.query for s in run.history],
        "loops": [run.summary(stop, why, ceiling, usage, fallbacks)],
        "safety": run.safety(usage.trips),
    }
