"""The per-source JSON decision through the real ChatOllama client and a scripted Ollama-protocol server."""

from __future__ import annotations

import json

import pytest

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.graph.api import research_multi, session_state
from saturate.nodes.multi._loop_decision import LoopDecision, enforce_ceiling, parse_decision
from saturate.state.source_kinds import DEFAULT_DESCRIPTIONS

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"
PLAN = '{"queries": ["Bubye River country", "waterfalls of Zimbabwe"]}'


def decision(action: str, next_query: str | None = None, **kw) -> str:
    return json.dumps(
        {
            "action": action,
            "reasoning": f"because {action}",
            "next_query": next_query,
            "query_rationale": "the bridge entity",
            "expected_new_results": 3,
            "confidence_gaps_fillable": 0.7,
            **kw,
        }
    )


def model_kw(server, **kw):
    return {"model": "ollama:qwen-test", "ollama_host": server.url, "breadcrumb_limit": 0, "entity_limit": 0, **kw}


def test_valid_continue_then_stop(home, musique_source):
    script = OllamaScript(
        plan=[PLAN],
        source_decision=[decision("continue", "Victoria Falls Zimbabwe"), decision("stop")],
        decide=["The waterfall is Victoria Falls [1]."],
    )
    with OllamaServer(script) as server:
        result = research_multi(BUBYE, sources={"m": musique_source}, thread_id="v", **model_kw(server))
    state = session_state("v")
    events = state["audit"]
    assert [ev["query"] for ev in events] == [BUBYE, "Victoria Falls Zimbabwe"]
    assert [ev["decided_by"] for ev in events] == ["model", "model"]
    assert [ev["action"] for ev in events] == ["continue", "stop"]
    assert "because continue" in events[0]["reasoning"] and "the bridge entity" in events[0]["reasoning"]
    loop = state["loops"][0]
    assert loop["stop_reason"] == "model" and loop["model_calls"] == 2 and not loop["fallbacks"]
    assert loop["model_tokens"]["in"] > 0
    # what the model was shown: the source's characteristics, its ceiling, the history, the gaps
    req = script.by_role("source_decision")[0]
    system, user = req["messages"][0]["content"], req["messages"][1]["content"]
    assert DEFAULT_DESCRIPTIONS["local"] in system and "at most 6 queries" in system
    assert "Its typical depth: rich: five to eight queries" in system  # the design's source_depth_expectation
    assert f"| {BUBYE} | 5 | 5 | 0 | 100 |" in user and "Results accumulated from it: 5" in user
    assert "<gaps>" in user and "task terms not found" in user
    assert req["options"]["temperature"] == 0
    assert result.debug["model_calls"] == len(script.requests) == 1 + 2 + 1


@pytest.mark.parametrize(
    "reply,why",
    [
        ("Sure, keep going!", "no JSON object"),
        ('{"action": "continue", "reasoning": "more"}', "invalid decision"),  # no next_query, no numbers
        (decision("maybe"), "invalid decision: action"),
        (decision("continue", "q", confidence_gaps_fillable=3), "confidence_gaps_fillable"),
    ],
)
def test_invalid_decision_falls_back_to_the_heuristic(home, musique_source, reply, why):
    script = OllamaScript(plan=[PLAN], source_decision=[reply], decide=["x [1]"])
    with OllamaServer(script) as server:
        research_multi(BUBYE, sources={"m": musique_source}, thread_id="i", **model_kw(server))
    state = session_state("i")
    loop = state["loops"][0]
    assert loop["fallbacks"] and all(
        "model decision unusable" in f and "heuristic decision" in f for f in loop["fallbacks"]
    )
    assert why in loop["fallbacks"][0]
    assert all(ev["decided_by"] in ("heuristic", "rule") for ev in state["audit"])
    assert loop["stop_reason"] in ("saturated", "ceiling", "empty")


def test_continue_past_the_ceiling_is_stopped_at_the_ceiling(home, musique_source):
    asked = []

    def always_continue(request):
        asked.append(request)
        return decision("continue", f"waterfalls of Africa part {len(asked)}")

    script = OllamaScript(plan=[PLAN], source_decision=[always_continue], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research_multi(
            BUBYE, sources={"m": musique_source}, thread_id="c", source_ceilings='{"local": 3}', **model_kw(server)
        )
    state = session_state("c")
    loop = state["loops"][0]
    assert loop["queries"] == 3 and loop["stop_reason"] == "ceiling"
    assert len(asked) == 2  # asked after queries 1 and 2; at the ceiling the rule stops without asking
    assert state["audit"][-1]["decided_by"] == "rule" and "ceiling reached: 3 of 3" in state["audit"][-1]["reasoning"]
    assert [ev["decided_by"] for ev in state["audit"][:-1]] == ["model", "model"]
    assert result.loops[0].queries <= result.loops[0].ceiling


def test_ceiling_guard_overrides_a_continue():
    assert enforce_ceiling("continue", 3, 3) == ("stop", "continue overridden: ceiling 3 reached")
    assert enforce_ceiling("continue", 2, 3) == ("continue", "")
    assert enforce_ceiling("stop", 1, 3) == ("stop", "")
    d, why = parse_decision("```json\n" + decision("CONTINUE", "  next   query ") + "\n```")
    assert isinstance(d, LoopDecision) and d.action == "continue" and d.next_query == "next query" and not why


def test_model_error_mid_loop_is_recorded(home, musique_source):
    script = OllamaScript(plan=[PLAN], source_decision=[{"status": 500}], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research_multi(BUBYE, sources={"m": musique_source}, thread_id="e", **model_kw(server))
    loop = result.loops[0]
    assert any("source_decision model" in e for e in loop.errors)
    assert any("model error: heuristic decision" in f for f in loop.fallbacks)
    assert result.sources


def test_call_budget_trips_once_and_is_recorded(home, musique_source):
    script = OllamaScript(
        plan=[PLAN], source_decision=[decision("continue", "Victoria Falls Zimbabwe")], decide=["x [1]"]
    )
    with OllamaServer(script) as server:
        result = research_multi(
            BUBYE,
            sources={"a": musique_source, "b": musique_source},
            thread_id="b",
            model_call_budget=3,
            **model_kw(server),
        )
    assert len(script.requests) == 3  # plan + two decisions; nothing after the breaker tripped
    state = session_state("b")
    trips = [s for s in state["safety"] if s["kind"] == "budget"]
    assert len(trips) == 1 and "model_call_budget 3 spent" in trips[0]["detail"]
    fallbacks = [f for lp in state["loops"] for f in lp["fallbacks"]]
    assert any("model budget spent" in f for f in fallbacks)
    assert result.debug["model_calls"] == 3 and result.debug["answer"] == "extractive"
    assert any("budget tripped" in n for n in result.debug["notes"])
    assert any("decide: model budget spent" in n for n in result.debug["notes"])


def test_token_budget_trips(home, musique_source):
    script = OllamaScript(plan=[PLAN], source_decision=[decision("stop")], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research_multi(
            BUBYE, sources={"m": musique_source}, thread_id="t", model_token_budget=5, **model_kw(server)
        )
    assert len(script.requests) == 1  # the plan call used more than 5 tokens: no call started after it
    trips = [s for s in result.debug["safety"] if s["kind"] == "budget"]
    assert len(trips) == 1 and "model_token_budget 5 spent" in trips[0]["detail"]
    assert result.loops[0].stop_reason in ("saturated", "ceiling")


def test_a_decision_slower_than_the_loop_limit_does_not_stop_the_loop(home, musique_source):
    """On a CPU server one decision took longer than the loop's whole wall-clock limit, so the loops stopped after 1-2
    queries (issue 34): the limit is the loop's searching; each decision is bounded by model_timeout_s instead."""
    slow = [
        {"sleep": 0.6, "text": decision("continue", "Victoria Falls Zimbabwe")},
        {"sleep": 0.6, "text": decision("continue", "Zambezi River waterfalls")},
        {"sleep": 0.6, "text": decision("stop")},
    ]
    script = OllamaScript(plan=[PLAN], source_decision=slow, decide=["The waterfall is Victoria Falls [1]."])
    with OllamaServer(script) as server:
        research_multi(
            BUBYE, sources={"m": musique_source}, thread_id="slow", source_loop_timeout_s=0.5, **model_kw(server)
        )
    state = session_state("slow")
    events = state["audit"]
    assert [ev["decided_by"] for ev in events] == ["model", "model", "model"], events
    assert [ev["action"] for ev in events] == ["continue", "continue", "stop"]
    loop = state["loops"][0]
    assert loop["stop_reason"] == "model" and not loop["timed_out"] and loop["elapsed_s"] > 1.5
