"""gate: accept the round, let it pass (epsilon), or stop.

Semantics (saturate mode):
- the round is ``max_rounds`` (or later): ``cap``, accepted and the last round;
- fewer than ``min_rounds`` rounds have run, counting this one: ``accept``;
- the novelty score reaches ``novelty_threshold``: ``accept``;
- otherwise one draw u from the session's seeded generator: u < ``novelty_epsilon``
  gives ``epsilon_pass`` (accepted, the loop goes on), else ``stop``.
In fixed mode every round is accepted and round ``fixed_rounds`` is the cap.
A stopped round's results are discarded (the design's semantics) unless
``stop_round`` is ``keep``: then they join the session's sources here (never
compressed: no knowledge update, no model call).

The decision needs a draw whose generator state lives in the graph state, so it
is made by this node (a conditional edge cannot update state); the conditional
edge after it (``graph.build.route_after_gate``) then only reads it.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.records import RoundRecord
from saturate.state.rng import draw
from saturate.state.settings import Settings


def decide_gate(rnd: int, score: float, settings: Settings, rng: dict) -> tuple[str, str, float | None, dict]:
    """(decision, reason, epsilon draw or None, next rng state). Pure."""
    if settings.mode == "fixed":
        if rnd >= settings.fixed_rounds:
            return "cap", f"fixed mode: round {rnd} of {settings.fixed_rounds}", None, rng
        return "accept", f"fixed mode: round {rnd} of {settings.fixed_rounds}", None, rng
    if rnd >= settings.max_rounds:
        return "cap", f"hard cap: max_rounds={settings.max_rounds} reached (novelty {score:g})", None, rng
    if rnd < settings.min_rounds:
        return "accept", f"round {rnd} < min_rounds={settings.min_rounds}: no stop yet (novelty {score:g})", None, rng
    if score >= settings.novelty_threshold:
        return "accept", f"novelty {score:g} >= threshold {settings.novelty_threshold:g}", None, rng
    u, rng = draw(rng)
    if u < settings.novelty_epsilon:
        return (
            "epsilon_pass",
            f"novelty {score:g} < threshold {settings.novelty_threshold:g}, but draw {u:.3f} < epsilon "
            f"{settings.novelty_epsilon:g}: pass through",
            u,
            rng,
        )
    return (
        "stop",
        f"novelty {score:g} < threshold {settings.novelty_threshold:g} "
        f"(draw {u:.3f} >= epsilon {settings.novelty_epsilon:g})",
        u,
        rng,
    )


def gate(state: ResearchState, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    settings = Settings.model_validate(state["settings"])
    cur = dict(state["current"])
    # rounds count from the start of the current attempt (a claim sent back for more search gets a fresh loop)
    rnd = cur["round"] - state.get("attempt_start", 0)
    decision, reason, u, rng = decide_gate(rnd, cur.get("novelty") or 0.0, settings, state["rng"])
    update: dict = {}
    if decision == "stop" and settings.stop_round == "keep":
        # the stopping round's search is paid for: its results join the session's sources (no compress, so
        # no knowledge update and no model call processes them)
        accepted = state.get("results") or {}
        kept = {r["url"]: r for r in cur.get("results", []) if r["url"] not in accepted}
        if kept:
            update["results"] = kept
            reason += f"; its {len(kept)} new result(s) kept (stop_round=keep)"
    cur.update(decision=decision, reason=reason, epsilon_draw=u)
    durations = {**cur.get("durations_ms", {}), "gate": round((time.perf_counter() - t0) * 1000, 3)}
    record = RoundRecord(
        round=cur["round"],
        query=cur["query"],
        source=cur.get("source", ""),
        planner=cur.get("planner", ""),
        total=cur.get("total", 0),
        new=cur.get("new", 0),
        new_urls=cur.get("new_urls", []),
        result_chars=cur.get("result_chars", 0),
        repeats_top_k=cur.get("repeats_top_k", 0),
        quality_retry=cur.get("quality_retry"),
        quality_overfetch=cur.get("quality_overfetch", 0),
        searches=cur.get("searches", 1),
        novelty=cur.get("novelty"),
        novelty_method=cur.get("novelty_method", ""),
        novelty_detail=cur.get("novelty_detail", {}),
        decision=decision,
        reason=reason,
        epsilon_draw=u,
        model_calls=cur.get("model_calls", 0),
        model_calls_by_node=cur.get("model_calls_by_node", {}),
        model_tokens=cur.get("model_tokens", {}),
        durations_ms=durations,
        errors=cur.get("errors", []),
        fallbacks=cur.get("fallbacks", []),
    ).model_dump()
    runtime.stream_writer(
        {"event": "round", **record, "threshold": settings.novelty_threshold, "mode": settings.mode}
    )  # live progress (stream_mode "custom")
    return {**update, "current": cur, "rng": rng, "records": [record]}
