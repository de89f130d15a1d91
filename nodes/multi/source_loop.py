"""source_loop: one source's saturation loop, run as a parallel ``Send`` branch per source.

The branch gets ``{task, settings, source: <resolved spec>, planned, budget_seed}``
and asks that source query after query, with its own history: the first query is
the plan's first (the task itself without a model), each later one comes from
the decision (``nodes.loop_decision``) after the previous one, until it says stop.

Per query: the source is asked for ``results_per_query`` results, over-fetching
past results this loop already has (``exclude_seen``, as the single loop does);
``duplicates`` counts how many of the top ``results_per_query`` it already had,
``new`` what the query added. The search runs under the loop's wall-clock
deadline (``source_loop_timeout_s``, a hanging search included); a failed
search is an empty query with its error recorded. Every query leaves an audit
event (session = thread id, source, query number, query, total, new,
duplicates, incremental %, action and reasoning), streamed as a custom event
``source_query`` too; the loop leaves one summary (stop reason, timings, model
calls). Timeouts and budget trips are also written to ``safety``.

Cross-source merging happens later (``nodes.merge``): a loop judges duplicates
only against its own history, so loops never wait for each other.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from saturate.nodes._budget import BudgetExceeded, BudgetedUsage, session_budget
from saturate.nodes._deadline import DeadlineExceeded, call_with_deadline
from saturate.nodes._model import error_text
from saturate.nodes.multi._loop_decision import (
    DECISION_OPTIONS, DECISION_SYSTEM, DECISION_USER, Step, enforce_ceiling, gaps_text, heuristic_decision,
    history_table, parse_decision, rule_stop,
)
from saturate.nodes.plan_query import gap_query, salient_phrases
from saturate.nodes.search import MAX_FETCH
from saturate.state.context import Context
from saturate.state.settings import Settings
from saturate.state.text import term_set


class SourceRun:
    """Queries against one source with a shared deadline, collecting hits, audit events and history."""

    def __init__(self, task: str, spec: dict, settings: Settings, source, phase: str, session: str | None,
                 deadline: float, seen=(), writer=None):
        self.task, self.spec, self.settings, self.source = task, spec, settings, source
        self.phase, self.session, self.deadline = phase, session, deadline
        self.writer = writer or (lambda ev: None)
        self.seen: set[str] = set(seen)
        self.history: list[Step] = []
        self.hits: list[dict] = []
        self.audit: list[dict] = []
        self.results: list[dict] = []  # what this run added, in order
        self.errors: list[str] = []
        self.timed_out = False
        self.started = time.time()
        self.t0 = time.perf_counter()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def ask(self, query: str) -> Step:
        """One query; its audit event is left open (action/reasoning) until ``decide``."""
        t0 = time.perf_counter()
        k = self.settings.results_per_query
        want = min(MAX_FETCH, k + len(self.seen)) if self.settings.exclude_seen else k
        errors: list[str] = []
        raw: list[dict] = []
        if self.source is None:
            errors.append(f"source {self.spec['name']!r} is not configured in the runtime context")
        else:
            try:
                got = call_with_deadline(self.source.search, query, want, timeout=self.remaining())
                raw = [r.model_dump() if hasattr(r, "model_dump") else dict(r) for r in got]
            except DeadlineExceeded as exc:
                self.timed_out = True
                errors.append(f"search {self.spec['name']} {query!r}: timeout ({exc})")
            except Exception as exc:  # failure is data: an empty query, recorded
                errors.append(f"search {self.spec['name']} {query!r}: {error_text(exc)}")
        unique: dict[str, dict] = {}
        for r in raw:
            unique.setdefault(r["url"], r)
        raw = list(unique.values())
        top = raw[:k]
        duplicates = sum(1 for r in top if r["url"] in self.seen)
        pool = raw if self.settings.exclude_seen else top
        fresh = [r for r in pool if r["url"] not in self.seen][:k]
        n = len(self.history) + 1
        for rank, r in enumerate(fresh):
            self.seen.add(r["url"])
            self.results.append(r)
            self.hits.append({"source": self.spec["name"], "phase": self.phase, "query_no": n, "query": query,
                              "rank": rank, "result": r})
        step = Step(query, total=len(top), new=len(fresh), duplicates=duplicates, error=bool(errors))
        self.history.append(step)
        self.errors += errors
        self.audit.append({
            "session": self.session, "source": self.spec["name"], "phase": self.phase, "query_no": n, "query": query,
            "total": step.total, "new": step.new, "duplicates": duplicates, "incremental_pct": step.incremental_pct,
            "action": "continue", "decided_by": "", "reasoning": "", "ms": round((time.perf_counter() - t0) * 1000, 3),
            "errors": errors,
        })
        return step

    def decide(self, action: str, by: str, reasoning: str) -> None:
        self.history[-1].reasoning = reasoning
        self.audit[-1].update(action=action, decided_by=by, reasoning=reasoning)
        self.writer({"event": "source_query", **self.audit[-1]})  # live progress (stream_mode "custom")

    def summary(self, stop_reason: str, reasoning: str, ceiling: int, usage=None, fallbacks=()) -> dict:
        return {
            "source": self.spec["name"], "kind": self.spec["kind"], "phase": self.phase, "ceiling": ceiling,
            "queries": len(self.history), "stop_reason": stop_reason, "reasoning": reasoning,
            "started": self.started, "elapsed_s": round(time.perf_counter() - self.t0, 4), "timed_out": self.timed_out,
            "model_calls": usage.calls if usage else 0, "model_tokens": usage.tokens() if usage else {},
            "fallbacks": list(fallbacks), "errors": list(self.errors),
        }

    def safety(self, budget_trips: list[str]) -> list[dict]:
        out = [{"kind": "budget", "source": self.spec["name"], "phase": self.phase, "detail": t} for t in budget_trips]
        if self.timed_out:
            out.append({"kind": "timeout", "source": self.spec["name"], "phase": self.phase,
                        "detail": f"after {len(self.history)} queries, {time.perf_counter() - self.t0:.2f} s "
                                  f"(limit {self.settings.source_loop_timeout_s:g} s)"})
        return out


def next_heuristic_query(task: str, run: SourceRun, planned: list[str]) -> tuple[str, str]:
    asked = {q.lower() for q in (s.query for s in run.history)}
    for q in planned:
        if q.strip().lower() not in asked:
            return q, "planned"
    return gap_query(task, run.results, [s.query for s in run.history])


def model_step(model, usage: BudgetedUsage, run: SourceRun, ceiling: int) -> tuple[object | None, str]:
    """(LoopDecision or None, why not usable). Raises BudgetExceeded / DeadlineExceeded / call errors."""
    spec, task = run.spec, run.task
    used = set()
    for s in run.history:
        used |= term_set(s.query)
    leads = salient_phrases(task, run.results, used)
    texts = [f"{r.get('title', '')} {r.get('snippet', '')}" for r in run.results]
    system = DECISION_SYSTEM.format(name=spec["name"], kind=spec["kind"], description=spec["description"], ceiling=ceiling)
    user = DECISION_USER.format(task=task, asked=len(run.history), ceiling=ceiling, accumulated=len(run.results),
                                history=history_table(run.history), gaps=gaps_text(task, texts, leads))
    reply = call_with_deadline(usage.call, model, system, user, timeout=run.remaining(), **DECISION_OPTIONS)
    return parse_decision(reply.text)


def source_loop(payload: dict, runtime: Runtime[Context]) -> dict:
    settings = Settings.model_validate(payload["settings"])
    spec, task = payload["source"], payload["task"]
    ctx = runtime.context
    ceiling = int(spec["ceiling"])
    run = SourceRun(task, spec, settings, (ctx.sources or {}).get(spec["name"]), "loop",
                    getattr(runtime.execution_info, "thread_id", None),
                    time.monotonic() + settings.source_loop_timeout_s, writer=runtime.stream_writer)
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
            try:
                decision, problem = model_step(model, usage, run, ceiling)
                if decision is None:
                    note = f"query {len(run.history)}: model decision unusable ({problem}): heuristic decision"
            except BudgetExceeded as exc:
                note = f"query {len(run.history)}: model budget spent ({exc}): heuristic decision"
            except DeadlineExceeded:
                run.timed_out = True
            except Exception as exc:  # a failed call is recorded; the heuristic decides
                run.errors.append(f"source_decision model: {error_text(exc)}")
                note = f"query {len(run.history)}: model error: heuristic decision"
        if run.timed_out:
            run.decide("stop", "rule", "the loop's wall-clock limit was spent waiting for the model")
            stop, why = "timeout", "the loop's wall-clock limit was spent waiting for the model"
            break
        if note:
            fallbacks.append(note)
        if decision is not None:
            action, by = decision.action, "model"
            action, override = enforce_ceiling(action, len(run.history), ceiling)
            reasoning = decision.reasoning + (f" [{override}]" if override else "")
        else:
            action, reasoning = heuristic_decision(run.history, settings.duplicate_stop_share)
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
                fallbacks.append(f"query {len(run.history)}: model next_query {decision.next_query!r} was asked before: heuristic query")
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
