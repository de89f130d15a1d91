"""follow: one lead (or key entity) followed on its best source — a parallel ``Send`` branch per lead.

``breadcrumbs`` ranks the leads and chooses, for each followed lead and each
researched entity, the one source to ask (the design's ``_follow_breadcrumb``:
"determines best source to investigate, executes targeted query"); ``route_leads``
(graph/build_multi.py) sends one branch per lead, so all of them run in one
superstep, concurrently. A branch asks its source the lead's query
(``breadcrumbs.LEAD_QUERY``: the lead with the task, so BM25 and web search stay on
topic; ``ENTITY_QUERY`` for an entity: its name), over-fetching past every result
the session already has, under the same wall-clock limit as the loops. The query
leaves an audit event (phase ``breadcrumb`` or ``entity``, query number = the
lead's place among those followed); what it finds is merged with attribution
like everything else.
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from saturate.nodes.multi._loop_decision import rule_stop
from saturate.nodes.multi._run import SourceRun
from saturate.state.context import Context
from saturate.state.settings import Settings


def follow_leads(state: Any, runtime: Runtime[Context]) -> dict:
    # ``state`` is the Send payload (graph/build_multi.py), typed Any so that LangGraph infers no input schema
    # (and so no channel) from it
    payload: dict = state
    settings = Settings.model_validate(payload["settings"])
    spec = payload["source"]
    leads = payload["leads"]
    run = SourceRun(
        payload["task"],
        spec,
        settings,
        (runtime.context.sources or {}).get(spec["name"]),
        leads[0].get("purpose") or "breadcrumb",
        getattr(runtime.execution_info, "thread_id", None),
        time.monotonic() + settings.source_loop_timeout_s,
        seen=payload.get("seen") or (),
        writer=runtime.stream_writer,
        number=max(0, int(payload.get("number") or 1) - 1),
    )
    stop, why = "leads_done", ", ".join(f"{lead['name']} ({lead['kind']})" for lead in leads) + " followed"
    for i, lead in enumerate(leads):
        run.ask(lead["query"])
        rule = rule_stop(
            run.history, len(leads) + 1, settings.empty_stop_queries, run.timed_out or run.remaining() <= 0
        )
        what = "entity research" if lead.get("purpose") == "entity" else "breadcrumb"
        chosen = f"; {lead['source_why']}" if lead.get("source_why") else ""
        if rule:
            run.timed_out = run.timed_out or rule[0] == "timeout"
            stop, why = rule
            run.decide("stop", "rule", f"{what} {lead['name']} ({lead['kind']}){chosen}; {why}")
            break
        run.decide(
            "stop" if i == len(leads) - 1 else "continue",
            "lead",
            f"{what} {lead['name']} ({lead['kind']}, score {lead['score']:g}){chosen}",
        )
    return {
        "hits": run.hits,
        "audit": run.audit,
        "queries": [s.query for s in run.history],
        "loops": [run.summary(stop, why, len(leads))],
        "safety": run.safety([]),
    }
