"""One source's queries within a loop (or a breadcrumb pass): hits, audit events, history, deadline.

Shared by the ``source_loop`` and ``follow`` nodes. Per query the source is
asked through ``nodes._search.ask`` (over-fetching past results this loop
already has when ``exclude_seen``), under the loop's wall-clock deadline;
``duplicates`` counts how many of the top ``results_per_query`` it already had,
``new`` what the query added, ``on_topic`` how many of those name the task's
subject (``_loop_decision.count_on_topic``; None when the task names nothing).
Every query leaves an audit event (session = thread id, source, query number,
query, total, new, duplicates, incremental %, on topic, action and reasoning),
streamed as a custom event ``source_query`` once decided.
"""

from __future__ import annotations

import time

from saturate.nodes._search import Answer, ask
from saturate.nodes.multi._loop_decision import Step, count_on_topic
from saturate.state.settings import Settings
from saturate.state.text import defuse, scrub_urls


class SourceRun:
    """Queries against one source with a shared deadline, collecting hits, audit events and history."""

    def __init__(
        self,
        task: str,
        spec: dict,
        settings: Settings,
        source,
        phase: str,
        session: str | None,
        deadline: float,
        seen=(),
        writer=None,
        number: int = 0,
    ):
        self.task, self.spec, self.settings, self.source = task, spec, settings, source
        self.phase, self.session, self.deadline = phase, session, deadline
        self.writer = writer or (lambda ev: None)
        self.seen: set[str] = set(seen)
        self.history: list[Step] = []
        self.hits: list[dict] = []
        self.audit: list[dict] = []
        self.results: list[dict] = []  # what this run added, in order
        self.errors: list[str] = []
        self.notes: list[str] = []  # the source's notes about its files (index or cache rebuilt ...)
        self.timed_out = False
        self.number = number  # the query number of the first query, minus 1 (a lead's place among the followed)
        self.started = time.time()
        self.t0 = time.perf_counter()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def ask(self, query: str) -> Step:
        """One query; its audit event is left open (action/reasoning) until ``decide``."""
        t0 = time.perf_counter()
        k = self.settings.results_per_query
        if self.source is None:
            answer = Answer(errors=[f"source {self.spec['name']!r} is not configured in the runtime context"])
        else:
            answer = ask(
                self.source,
                self.spec["name"],
                query,
                k,
                self.seen,
                self.settings.exclude_seen,
                timeout=self.remaining(),
            )
        self.timed_out = self.timed_out or answer.timed_out
        n = self.number + len(self.history) + 1
        for rank, r in enumerate(answer.unseen):
            self.seen.add(r["url"])
            self.results.append(r)
            self.hits.append(
                {
                    "source": self.spec["name"],
                    "phase": self.phase,
                    "query_no": n,
                    "query": query,
                    "rank": rank,
                    "result": r,
                }
            )
        step = Step(
            query,
            total=len(answer.top),
            new=len(answer.unseen),
            duplicates=answer.repeats,
            error=bool(answer.errors),
            on_topic=count_on_topic(self.task, answer.unseen),
        )
        self.history.append(step)
        self.errors += answer.errors
        self.notes += answer.notes
        self.audit.append(
            {
                "session": self.session,
                "source": self.spec["name"],
                "phase": self.phase,
                "query_no": n,
                "query": query,
                "total": step.total,
                "new": step.new,
                "duplicates": step.duplicates,
                "incremental_pct": step.incremental_pct,
                "on_topic": step.on_topic,
                "action": "continue",
                "decided_by": "",
                "reasoning": "",
                "ms": round((time.perf_counter() - t0) * 1000, 3),
                "errors": answer.errors,
            }
        )
        return step

    def decide(self, action: str, by: str, reasoning: str) -> None:
        reasoning = shown_text(reasoning)
        self.history[-1].reasoning = reasoning
        self.audit[-1].update(action=action, decided_by=by, reasoning=reasoning)
        self.writer({"event": "source_query", **self.audit[-1]})  # live progress (stream_mode "custom")

    def summary(self, stop_reason: str, reasoning: str, ceiling: int, usage=None, fallbacks=()) -> dict:
        return {
            "source": self.spec["name"],
            "kind": self.spec["kind"],
            "depth": self.spec.get("depth"),
            "phase": self.phase,
            "ceiling": ceiling,
            "queries": len(self.history),
            "stop_reason": stop_reason,
            "reasoning": shown_text(reasoning),
            "started": self.started,
            "elapsed_s": round(time.perf_counter() - self.t0, 4),
            "timed_out": self.timed_out,
            "model_calls": usage.calls if usage else 0,
            "model_tokens": usage.tokens() if usage else {},
            "fallbacks": [*self.notes, *fallbacks],
            "errors": list(self.errors),
        }

    def safety(self, budget_trips: list[str]) -> list[dict]:
        out = [{"kind": "budget", "source": self.spec["name"], "phase": self.phase, "detail": t} for t in budget_trips]
        if self.timed_out:
            out.append(
                {
                    "kind": "timeout",
                    "source": self.spec["name"],
                    "phase": self.phase,
                    "detail": f"after {len(self.history)} queries, {time.perf_counter() - self.t0:.2f} s "
                    f"(limit {self.settings.source_loop_timeout_s:g} s)",
                }
            )
        return out


def shown_text(text: str) -> str:
    """A model's or a page's words as they are recorded and shown (the loop's reasoning, the report's rows): no
    link of any kind (``javascript:``, ``data:``, ``file:``, a bare domain: ``[link removed]``), no tag-like
    sequence, no control character. Printing escapes the rest (``printable``)."""
    cleaned, _ = scrub_urls(defuse(str(text or "")))
    return "".join(c if c.isprintable() or c == " " else " " for c in cleaned)
