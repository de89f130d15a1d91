"""follow: the leads ``breadcrumbs`` chose, followed on one source (a parallel ``Send`` branch per source).

Each branch asks its source one targeted query per lead (``breadcrumbs.LEAD_QUERY``,
already in each lead: the lead with the task, so BM25 and web search stay on topic), skipping a query
that source already asked. Bounded: at most ``breadcrumb_limit`` queries per
source, under the same wall-clock limit as the loops, two empty answers in a
row end it. Every query leaves an audit event (phase ``breadcrumb``); what they
find is merged with attribution like everything else.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from saturate.nodes.multi._loop_decision import rule_stop
from saturate.nodes.multi._run import SourceRun
from saturate.state.context import Context
from saturate.state.settings import Settings


def follow_leads(payload: dict, runtime: Runtime[Context]) -> dict:
    settings = Settings.model_validate(payload["settings"])
    spec = payload["source"]
    run = SourceRun(
        payload["task"],
        spec,
        settings,
        (runtime.context.sources or {}).get(spec["name"]),
        "breadcrumb",
        getattr(runtime.execution_info, "thread_id", None),
        time.monotonic() + settings.source_loop_timeout_s,
        seen=payload.get("seen") or (),
        writer=runtime.stream_writer,
    )
    asked = {q.strip().lower() for q in payload.get("asked") or []}
    leads = [lead for lead in payload["leads"] if lead["query"].strip().lower() not in asked]
    skipped = len(payload["leads"]) - len(leads)
    stop, why = "leads_done", f"{len(leads)} lead(s) followed" + (f", {skipped} already asked" if skipped else "")
    for i, lead in enumerate(leads):
        run.ask(lead["query"])
        rule = rule_stop(
            run.history,
            settings.breadcrumb_limit + 1,
            settings.empty_stop_queries,
            run.timed_out or run.remaining() <= 0,
        )
        if rule:
            run.timed_out = run.timed_out or rule[0] == "timeout"
            stop, why = rule
            run.decide("stop", "rule", f"breadcrumb {lead['name']} ({lead['kind']}); {why}")
            break
        last = i == len(leads) - 1
        run.decide(
            "stop" if last else "continue",
            "lead",
            f"breadcrumb {lead['name']} ({lead['kind']}, score {lead['score']:g})",
        )
    return {
        "hits": run.hits,
        "audit": run.audit,
        "queries": [s.query for s in run.history],
        "loops": [run.summary(stop, why, settings.breadcrumb_limit)],
        "safety": run.safety([]),
    }
