"""build_multi_graph: research a task over several sources at once, each saturated by its own loop.

    START → plan ─(Send, one per source)→ source_loop ─→ merge ─┬→ breadcrumbs ─(Send, one per source)→ follow → merge
                                                                 └→ triangulate → profiles → decide → END
                                          (breadcrumbs → triangulate directly when there is no lead to follow)

- ``plan`` (nodes/multi_plan.py): the first queries; ``fan_out`` sends one
  ``source_loop`` branch per configured source (``state["sources"]``).
- ``source_loop`` (nodes/source_loop.py): one source's loop — query, decide
  (nodes/loop_decision.py: rules, then the model's JSON decision or the
  heuristic), repeat — with its own history, ceiling, characteristics text and
  wall-clock limit; one audit event per query.
- ``merge`` (nodes/merge.py): cross-source dedup with attribution; runs again
  after the breadcrumbs.
- ``breadcrumbs`` / ``follow`` (nodes/breadcrumbs.py): ranked leads, one
  targeted query per lead and source, bounded by ``breadcrumb_limit``.
- ``triangulate`` (nodes/triangulate.py): verified_multi / unverified_single / contradicted.
- ``profiles`` (nodes/profiles.py): Key actors.
- ``decide`` (nodes/multi_decide.py): the answer (nodes/decide.py's) with tags,
  attribution, Key actors and the per-source summaries.

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

from langgraph.graph import END, START, StateGraph

from saturate.nodes.multi.breadcrumbs import breadcrumbs, follow_leads, route_leads
from saturate.nodes.multi.merge import merge, route_after_merge
from saturate.nodes.multi.decide import decide_multi
from saturate.nodes.multi.plan import fan_out, plan_sources
from saturate.nodes.multi.profiles import profiles
from saturate.nodes.multi.source_loop import source_loop
from saturate.nodes.multi.triangulate import triangulate
from saturate.state.context import Context
from saturate.state.multi_state import MultiState


def build_multi_graph(checkpointer=None, **compile_kwargs):
    g = StateGraph(MultiState, context_schema=Context)
    g.add_node("plan", plan_sources)
    g.add_node("source_loop", source_loop)
    g.add_node("merge", merge)
    g.add_node("breadcrumbs", breadcrumbs)
    g.add_node("follow", follow_leads)
    g.add_node("triangulate", triangulate)
    g.add_node("profiles", profiles)
    g.add_node("decide", decide_multi)

    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", fan_out, ["source_loop"])
    g.add_edge("source_loop", "merge")
    g.add_conditional_edges("merge", route_after_merge, ["breadcrumbs", "triangulate"])
    g.add_conditional_edges("breadcrumbs", route_leads, ["follow", "triangulate"])
    g.add_edge("follow", "merge")
    g.add_edge("triangulate", "profiles")
    g.add_edge("profiles", "decide")
    g.add_edge("decide", END)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)
