"""build_graph: the round loop, wired top to bottom, with the routers beside their edges.

START → plan_query ─┬ planned → search → assess_novelty → gate ─┬ accepted → compress ─┬ next_round → plan_query
                    └ review → review_plan → search                │                      └ capped → enrich
                                                                   └ stopped → enrich → decide ─┬ result → END
                                                                          need_more_search → plan_query ┤
                                                                                    review → review_answer ┘
review_answer ─┬ approved → END
               └ more_search → plan_query

The review nodes run only when the ``review`` setting asks for them (a person approves the plan before the
first search and/or the answer before it is final: LangGraph ``interrupt()``); otherwise the routes skip them.

Each router returns *why* (a ``Literal`` of decision names); the path map says
*where* that leads. LangGraph draws the names on the conditional edges, so the
diagram, the progress lines and the report read the topology from here.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from saturate.nodes.assess_novelty import assess_novelty
from saturate.nodes.compress import compress
from saturate.nodes.decide import decide
from saturate.nodes.enrich import enrich
from saturate.nodes.gate import gate
from saturate.nodes.plan_query import plan_query
from saturate.nodes.review_answer import review_answer
from saturate.nodes.review_plan import review_plan
from saturate.nodes.search import search
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.records import ACCEPTED
from saturate.state.settings_of import settings_of

# what each node is doing, for live progress ("round 2: searching"); part of the node's metadata
ROUND = {"part": "round"}
END_STEPS = {"part": "end"}
REVIEW = {"part": "review"}


def route_after_gate(state: ResearchState) -> Literal["accepted", "stopped"]:
    """Accepted rounds (accept, epsilon_pass, cap) go to compress; a stop ends the loop."""
    return "accepted" if (state.get("current") or {}).get("decision") in ACCEPTED else "stopped"


def route_after_compress(state: ResearchState) -> Literal["next_round", "capped"]:
    """After the capped round the loop ends; otherwise the next round starts."""
    return "capped" if (state.get("current") or {}).get("decision") == "cap" else "next_round"


def route_after_plan(state: ResearchState, runtime: Runtime[Context] | None = None) -> Literal["review", "planned"]:
    """Round 1's plan goes to a person first when ``review`` is plan or both."""
    review = settings_of(state, runtime.context if runtime else None).review
    return "review" if review in ("plan", "both") and (state.get("current") or {}).get("round") == 1 else "planned"


def route_after_decide(
    state: ResearchState, runtime: Runtime[Context] | None = None
) -> Literal["need_more_search", "review", "result"]:
    """A claim whose evidence is not yet sufficient goes back for more search while attempts remain; a result goes
    to a person first when ``review`` is answer or both."""
    if state.get("result") is None:
        return "need_more_search"
    settings = settings_of(state, runtime.context if runtime else None)
    return "review" if settings.review in ("answer", "both") else "result"


def route_after_review(state: ResearchState) -> Literal["more_search", "approved"]:
    """The reviewer sent the answer back (the result cleared) or approved it."""
    return "more_search" if state.get("result") is None else "approved"


def build_graph(checkpointer=None, **compile_kwargs):
    g = StateGraph(ResearchState, context_schema=Context)
    g.add_node("plan_query", plan_query, metadata={**ROUND, "step": "planning the query"})
    g.add_node("search", search, metadata={**ROUND, "step": "searching"})
    g.add_node("assess_novelty", assess_novelty, metadata={**ROUND, "step": "scoring novelty"})
    g.add_node("gate", gate, metadata={**ROUND, "step": "gating"})
    g.add_node("compress", compress, metadata={**ROUND, "step": "merging into the knowledge state"})
    g.add_node("enrich", enrich, metadata={**END_STEPS, "step": "fetching full pages"})
    g.add_node("decide", decide, metadata={**END_STEPS, "step": "writing the answer"})
    g.add_node("review_plan", review_plan, metadata={**REVIEW, "step": "waiting for the plan's review"})
    g.add_node("review_answer", review_answer, metadata={**REVIEW, "step": "waiting for the answer's review"})

    g.add_edge(START, "plan_query")
    g.add_conditional_edges("plan_query", route_after_plan, {"planned": "search", "review": "review_plan"})
    g.add_edge("review_plan", "search")
    g.add_edge("search", "assess_novelty")
    g.add_edge("assess_novelty", "gate")
    g.add_conditional_edges("gate", route_after_gate, {"accepted": "compress", "stopped": "enrich"})
    g.add_conditional_edges("compress", route_after_compress, {"next_round": "plan_query", "capped": "enrich"})
    g.add_edge("enrich", "decide")
    g.add_conditional_edges(
        "decide", route_after_decide, {"need_more_search": "plan_query", "review": "review_answer", "result": END}
    )
    g.add_conditional_edges("review_answer", route_after_review, {"more_search": "plan_query", "approved": END})
    return g.compile(checkpointer=checkpointer, **compile_kwargs)
