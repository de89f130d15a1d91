"""Gate semantics and properties (hypothesis), on the pure decision and on whole sessions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from saturate.graph import build_graph
from saturate.nodes.gate import decide_gate
from saturate.sources import LocalCorpus
from saturate.state import Context, initial_state, load_settings
from saturate.state.records import ACCEPTED
from saturate.state.rng import draw, new_rng

from conftest import strip_timings


def _settings(**kw):
    return load_settings(kw, env={})


def test_no_stop_before_min_rounds_and_cap_at_max():
    s = _settings(min_rounds=3, max_rounds=5, novelty_threshold=5, novelty_epsilon=0.0)
    rng = new_rng(0)
    assert decide_gate(1, 0.0, s, rng)[0] == "accept"
    assert decide_gate(2, 0.0, s, rng)[0] == "accept"
    assert decide_gate(3, 0.0, s, rng)[0] == "stop"
    assert decide_gate(3, 5.0, s, rng)[0] == "accept"
    assert decide_gate(5, 10.0, s, rng)[0] == "cap"
    assert decide_gate(5, 0.0, s, rng)[0] == "cap"


def test_draw_only_for_sub_threshold_rounds_and_state_advances():
    s = _settings(novelty_epsilon=1.0, novelty_threshold=3)
    rng = new_rng(42)
    d, reason, u, after = decide_gate(3, 1.0, s, rng)
    assert d == "epsilon_pass" and u is not None and after["draws"] == 1 and "epsilon" in reason
    d, _, u, same = decide_gate(3, 9.0, s, rng)
    assert d == "accept" and u is None and same == rng


def test_reasons_say_why_in_words_then_the_numbers():
    s = _settings(min_rounds=2, max_rounds=4, novelty_threshold=3, novelty_epsilon=0.15)
    rng = new_rng(0)
    assert decide_gate(1, 0.5, s, rng)[1] == "too early to stop (round 1 < min_rounds 2; novelty 0.5)"
    assert decide_gate(2, 4.25, s, rng)[1] == "the new results were new enough to go on (novelty 4.25 ≥ threshold 3)"
    assert decide_gate(4, 2.4, s, rng)[1] == "the round limit was reached (max_rounds 4; novelty 2.4 < threshold 3)"
    stops = [decide_gate(2, 2.4, s, new_rng(seed)) for seed in range(40)]
    d, reason, u, _ = next(x for x in stops if x[0] == "stop")
    assert reason == (
        f"the new results were mostly what was already known (novelty 2.4 < threshold 3; random draw {u:.3f} ≥ "
        "epsilon 0.15)"
    )
    d, reason, u, _ = next(x for x in stops if x[0] == "epsilon_pass")
    assert reason.startswith("the new results were mostly what was already known, but a random draw let the search")
    assert reason.endswith(f"(novelty 2.4 < threshold 3; random draw {u:.3f} < epsilon 0.15)")
    # epsilon 0: the threshold alone decides, and no draw is mentioned; a score never looks equal to the threshold
    no_chance = _settings(min_rounds=1, novelty_threshold=3, novelty_epsilon=0.0)
    assert decide_gate(2, 2.996, no_chance, rng)[1] == (
        "the new results were mostly what was already known (novelty 2.996 < threshold 3)"
    )
    fixed = _settings(mode="fixed", fixed_rounds=3)
    assert decide_gate(3, 1.0, fixed, rng)[:2] == ("cap", "fixed mode: all 3 rounds done (fixed_rounds)")
    assert all("stop:" not in decide_gate(r, x, s, new_rng(r))[1] for r in range(1, 5) for x in (0.0, 2.9, 9.0))


def test_epsilon_frequency_across_seeds():
    """Sub-threshold rounds pass through with probability epsilon (0.15), across 4000 seeds."""
    s = _settings()
    n = 4000
    passes = sum(decide_gate(3, 0.5, s, new_rng(seed))[0] == "epsilon_pass" for seed in range(n))
    sigma = (0.15 * 0.85 / n) ** 0.5
    assert abs(passes / n - 0.15) < 4 * sigma, passes / n


def test_draws_are_uniform_within_one_seed():
    rng, us = new_rng(7), []
    for _ in range(20000):
        u, rng = draw(rng)
        us.append(u)
    assert all(0 <= u < 1 for u in us)
    for lo in (0.0, 0.25, 0.5, 0.75):
        share = sum(lo <= u < lo + 0.25 for u in us) / len(us)
        assert abs(share - 0.25) < 0.015


# ------------------------------------------------------------------ whole sessions

DOCS = [
    {"id": f"d{i}", "title": f"{topic} {i}", "text": f"{topic} {body} number {i}. " * 3}
    for i, (topic, body) in enumerate(
        [
            (t, b)
            for t in ("Amber River", "Basalt Ridge", "Cobalt Lake", "Dune Sea", "Ember Forest", "Frost Peak")
            for b in (
                "flows north past old mills",
                "hosts rare birds in spring",
                "was mapped by surveyors in 1890",
                "feeds the valley farms",
                "lies beside the granite quarry",
            )
        ]
    )
]


@pytest.fixture(scope="module")
def small_source():
    return LocalCorpus.from_records(DOCS, "small")


def run_session(source, **kw) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """Run a whole session; returns (final state, list of (node, round) in execution order)."""
    graph = build_graph()
    state = initial_state("Amber River rare birds and the granite quarry", _settings(**kw))
    steps, rnd, final = [], 0, None
    for mode, chunk in graph.stream(state, context=Context(source=source), stream_mode=["updates", "values"]):
        if mode == "values":
            final = chunk
            rnd = chunk.get("round", rnd)
        else:
            steps.extend((node, rnd) for node in chunk)
    assert final is not None
    return final, steps


def _rounds_ordered(d: dict[str, Any]) -> bool:
    return d["min_rounds"] <= d["max_rounds"]


session_settings = st.fixed_dictionaries(
    {
        "max_rounds": st.integers(1, 7),
        "min_rounds": st.integers(1, 7),
        "novelty_threshold": st.floats(0, 10),
        "novelty_epsilon": st.sampled_from([0.0, 0.15, 0.5, 1.0]),
        "seed": st.integers(0, 2**31),
        "novelty_method": st.sampled_from(["heuristic", "seed-heuristic"]),
    }
).filter(_rounds_ordered)


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kw=session_settings)
def test_session_properties(small_source, kw):
    final, steps = run_session(small_source, **kw)
    recs = final["records"]
    # ends within max_rounds, never stops before min_rounds
    assert 1 <= len(recs) <= kw["max_rounds"]
    assert final["result"] is not None
    stops = [r for r in recs if r["decision"] == "stop"]
    for r in stops:
        assert r["round"] >= kw["min_rounds"]
    if len(recs) < kw["max_rounds"]:
        assert recs[-1]["decision"] == "stop"
    else:
        assert recs[-1]["decision"] in ("cap", "stop")
    # compress runs exactly for accepted rounds, never for a rejected one
    compressed = [rnd for node, rnd in steps if node == "compress"]
    assert compressed == [r["round"] for r in recs if r["decision"] in ACCEPTED]
    assert all(r.get("knowledge_chars") is None for r in stops)
    # epsilon passes only below the threshold, after min_rounds, with a recorded draw
    for r in recs:
        if r["decision"] == "epsilon_pass":
            assert r["novelty"] < kw["novelty_threshold"] and r["epsilon_draw"] < kw["novelty_epsilon"]


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kw=session_settings)
def test_same_seed_same_trace(small_source, kw):
    a, _ = run_session(small_source, **kw)
    b, _ = run_session(small_source, **kw)
    assert strip_timings(a) == strip_timings(b)


@pytest.mark.parametrize("stop_round", ["discard", "keep"])
def test_rejected_round_is_never_compressed(musique_source, stop_round):
    graph = build_graph()
    task = "What is the name of the waterfall in the country where the Bubye River is found?"
    kw = dict(
        novelty_epsilon=0.0,
        novelty_threshold=10,
        min_rounds=2,
        max_rounds=5,
        seed=1,
        search_quality_floor=0,
        stop_round=stop_round,
    )
    steps, after_r1 = [], None
    for mode, chunk in graph.stream(
        initial_state(task, _settings(**kw)), context=Context(source=musique_source), stream_mode=["updates", "values"]
    ):
        if mode == "updates":
            steps.extend(chunk)
        elif steps and steps[-1] == "compress" and after_r1 is None:
            after_r1 = chunk
        final = chunk
    assert after_r1 is not None
    r1, r2 = final["records"]
    assert (r1["decision"], r2["decision"]) == ("accept", "stop")
    assert r2["new"] > 0  # round 2 found results the session had not accepted ...
    if stop_round == "discard":  # ... and none of them were merged (the design's semantics)
        assert final["results"] == after_r1["results"]
    else:  # ... kept as sources (the search was paid for), said in the reason
        assert set(final["results"]) == set(after_r1["results"]) | set(r2["new_urls"])
        assert f"{r2['new']} new result(s) kept (stop_round=keep)" in r2["reason"]
    # either way the stopped round changes no knowledge: no compress, no model call
    assert final["knowledge"] == after_r1["knowledge"]
    assert r2["knowledge_chars"] is None and r2.get("compress") is None
    assert steps.count("compress") == 1


def test_the_reader_stops_the_loop_on_a_confident_answer_two_rounds_running():
    from saturate.nodes.gate import READ, stable_answer

    s = _settings(min_rounds=3, max_rounds=5, novelty_threshold=5, novelty_epsilon=0.0, reader_stop_p=0.8)
    falls = "Victoria Falls is a waterfall on the Zambezi River at the border between Zambia and Zimbabwe."
    a = {"p": 0.91, "sentence": falls, "url": "local://x"}
    b = {"p": 0.95, "sentence": falls, "url": "local://x"}
    words = stable_answer(a, b, s.reader_stop_p)
    assert words is not None and words.startswith("'Victoria Falls is a waterfall") and len(words) < 140
    assert words.endswith("(p 0.91, then 0.95 ≥ reader_stop_p 0.8)")
    decision, reason, u, _ = decide_gate(3, 9.0, s, new_rng(0), read=words)
    assert decision == "stop" and reason.startswith(READ) and u is None  # whatever the novelty
    assert decide_gate(2, 9.0, s, new_rng(0), read=words)[0] == "accept"  # min_rounds keeps its meaning
    assert decide_gate(5, 9.0, s, new_rng(0), read=words)[0] == "cap"  # the cap still comes first
    assert stable_answer({**a, "p": 0.7}, b, 0.8) is None  # not confident the round before
    assert stable_answer(a, {**b, "sentence": "Kariba is a dam."}, 0.8) is None  # another answer
    assert stable_answer(a, {**b, "sentence": ""}, 0.8) is None  # no answer at all
    assert stable_answer(None, b, 0.8) is None  # the first round has nothing to be stable with
    assert stable_answer(a, b, 1.0) is None  # reader_stop_p 1 turns the reader's stop off


def test_every_round_records_the_readers_best_answer(musique_source):
    s = load_settings({"max_rounds": 3, "seed": 1, "reader_stop_p": 0.15}, env={})
    out = build_graph().invoke(initial_state("Where is the Bubye River?", s), context=Context(source=musique_source))
    reads = [r["reader"] for r in out["records"]]
    assert reads and all(0.0 <= r["p"] <= 1.0 and r["url"].startswith("local://") and r["sentence"] for r in reads)
    q = "What is the name of the waterfall in the country where the Bubye River is found?"
    out = build_graph().invoke(initial_state(q, s), context=Context(source=musique_source))
    assert all(r["reader"] == {} for r in out["records"])  # multi-hop: the rules answer, the reader does not read
    claim = load_settings({"max_rounds": 2, "seed": 1, "reader_stop_p": 0.15}, env={})
    state = initial_state("The Bubye River is in Zimbabwe.", claim, kind="claim")
    out = build_graph().invoke(state, context=Context(source=musique_source))
    assert all(r["reader"] == {} for r in out["records"])  # claims are judged, not read
    off = load_settings({"max_rounds": 2, "seed": 1}, env={})  # the default: the reader's stop off, nothing read
    out = build_graph().invoke(initial_state("Where is the Bubye River?", off), context=Context(source=musique_source))
    assert all(r["reader"] == {} for r in out["records"])
