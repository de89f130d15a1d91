"""build_multi_graph: research a task over several sources at once, each saturated by its own loop.

    START → plan ─(Send per source)→ source_loop → merge ─┬ leads → breadcrumbs ─┬ (Send per source) → follow → merge
                                                           │                       └ no_leads → triangulate
                                                           └ done → triangulate → profiles → decide → END

- ``plan`` (nodes/multi/plan.py): the first queries; ``fan_out`` (below) sends one
  ``source_loop`` branch per configured source (``state["sources"]``).
- ``source_loop`` (nodes/multi/source_loop.py): one source's loop — query, decide
  (rules, then the model's JSON decision or the heuristic), repeat — with its own
  history, ceiling, characteristics text and wall-clock limit; one audit event per query.
- ``merge`` (nodes/multi/merge.py): cross-source dedup with attribution; runs again
  after the breadcrumbs.
- ``breadcrumbs`` (nodes/multi/breadcrumbs.py): ranked leads; ``route_leads`` (below)
  sends one ``follow`` branch per source (nodes/multi/follow.py), one targeted
  query per lead, bounded by ``breadcrumb_limit``.
- ``triangulate`` (nodes/multi/triangulate.py): verified_multi / unverified_single / contradicted.
- ``profiles`` (nodes/multi/profiles.py): Key actors.
- ``decide`` (nodes/multi/decide.py): the answer with tags, attribution, Key
  actors and the per-source summaries.

Parallelism: the branches sent in one superstep run concurrently — LangGraph
runs a superstep's tasks in its thread pool, sync nodes included (measured: three
branches sleeping 1.0/0.5/0.8 s finish in 1.07 s; tests/test_multi_graph.py
asserts wall < 0.75 × the sum with real sleeping corpora). Searches of
different sources overlap; CPU-bound Python in them shares the GIL. Branch
writes are applied in task order, so a run does not depend on which thread
finished first. With a checkpointer, finished branches' writes are kept when
another branch fails; a resumed session re-runs only the unfinished ones.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from saturate.nodes.multi.breadcrumbs import breadcrumbs
from saturate.nodes.multi.decide import decide_multi
from saturate.nodes.multi.follow import follow_leads
from saturate.nodes.multi.merge import merge
from saturate.nodes.multi.plan import plan_sources
from saturate.nodes.multi.profiles import profiles
from saturate.nodes.multi.source_loop import source_loop
from saturate.nodes.multi.triangulate import triangulate
from saturate.state.context import Context
from saturate.state.multi_state import MultiState, used_in_state


def fan_out(state: MultiState) -> list[Send]:
    """One source_loop branch per configured source."""
    seed = used_in_state(state)
    return [
        Send(
            "source_loop",
            {
                "task": state.get("task", ""),
                "settings": state.get("settings") or {},
                "source": spec,
                "planned": list(state.get("planned_queries") or [state.get("task", "")]),
                "budget_seed": seed,
            },
        )
        for spec in state.get("sources") or []
    ]


def route_after_merge(state: MultiState) -> Literal["leads", "done"]:
    """The first merge looks for leads; the merge after following them goes on to triangulate."""
    return "done" if state.get("breadcrumbs_done") else "leads"


def route_leads(state: MultiState) -> list[Send] | Literal["no_leads"]:
    """One follow branch per followed lead or researched entity, on the source ``breadcrumbs`` chose for it.

    All of them run in one superstep, concurrently: a lead costs one search's latency, not its place in a
    queue. Each branch over-fetches past every result the session already has (any source's), so what it
    adds is new to the session."""
    asked = {(ev["source"], ev["query"]) for ev in state.get("audit") or []}
    # numbered over every lead followed so far (earlier passes too): a query number is unique in the session
    followed = [
        (n, lead)
        for n, lead in enumerate((lead for lead in state.get("leads") or [] if lead.get("followed")), start=1)
        if lead.get("source") and (lead["source"], lead["query"]) not in asked
    ]
    if not followed:
        return "no_leads"
    specs = {spec["name"]: spec for spec in state.get("sources") or []}
    seen = list(dict.fromkeys(h["result"]["url"] for h in state.get("hits") or []))
    seed = used_in_state(state)
    return [
        Send(
            "follow",
            {
                "task": state.get("task", ""),
                "settings": state.get("settings") or {},
                "source": specs[lead["source"]],
                "leads": [lead],
                "number": n,
                "seen": seen,
                "budget_seed": seed,
            },
        )
        for n, lead in followed
        if lead["source"] in specs
    ] or "no_leads"


def build_multi_graph(checkpointer=None, **compile_kwargs):
    g = StateGraph(MultiState, context_schema=Context)
    g.add_node("plan", plan_sources, metadata={"step": "planning the first queries"})
    g.add_node("source_loop", source_loop, metadata={"step": "saturating the sources"})
    g.add_node("merge", merge, metadata={"step": "merging across sources"})
    g.add_node("breadcrumbs", breadcrumbs, metadata={"step": "ranking leads"})
    g.add_node("follow", follow_leads, metadata={"step": "following leads"})
    g.add_node("triangulate", triangulate, metadata={"step": "triangulating"})
    g.add_node("profiles", profiles, metadata={"step": "profiling key actors"})
    g.add_node("decide", decide_multi, metadata={"step": "writing the answer"})

    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan_out, ["source_loop"])
    g.add_edge("source_loop", "merge")
    g.add_conditional_edges("merge", route_after_merge, {"leads": "breadcrumbs", "done": "triangulate"})
    g.add_conditional_edges("breadcrumbs", route_leads, {"no_leads": "triangulate", "follow": "follow"})
    g.add_edge("follow", "merge")
    g.add_edge("triangulate", "profiles")
    g.add_edge("profiles", "decide")
    g.add_edge("decide", END)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)
