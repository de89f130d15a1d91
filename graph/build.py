"""build_graph: the round loop, wired top to bottom.

START → plan_query → search → assess_novelty → gate ─┬→ compress ─┬→ plan_query
                                                      │            └→ enrich (after the cap)
                                                      └→ enrich → decide ─┬→ END
                                                                          └→ plan_query (a claim that needs more search)
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from saturate.nodes.assess_novelty import assess_novelty
from saturate.nodes.compress import compress
from saturate.nodes.decide import decide
from saturate.nodes.enrich import enrich
from saturate.nodes.gate import gate, route_after_compress, route_after_decide, route_after_gate
from saturate.nodes.plan_query import plan_query
from saturate.nodes.search import search
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState


def build_graph(checkpointer=None, **compile_kwargs):
    g = StateGraph(ResearchState, context_schema=Context)
    g.add_node("plan_query", plan_query)
    g.add_node("search", search)
    g.add_node("assess_novelty", assess_novelty)
    g.add_node("gate", gate)
    g.add_node("compress", compress)
    g.add_node("enrich", enrich)
    g.add_node("decide", decide)

    g.add_edge(START, "plan_query")
    g.add_edge("plan_query", "search")
    g.add_edge("search", "assess_novelty")
    g.add_edge("assess_novelty", "gate")
    g.add_conditional_edges("gate", route_after_gate)
    g.add_conditional_edges("compress", route_after_compress)
    g.add_edge("enrich", "decide")
    g.add_conditional_edges("decide", route_after_decide)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)
