"""gate: accept the round, let it pass (epsilon), or stop.

Semantics (saturate mode):
- the round is ``max_rounds`` x the number of sub-questions (chains; at most 50) or later: ``cap``, accepted
  and the last round;
- every slot of the question's chains holds a value that is stable (the same as after the round before) and
  supported by its own page among the results (``reading.slots.complete``): ``stop``, and the reason names the slots
  and their values — the evidence is complete;
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
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langgraph.runtime import Runtime

from saturate.nodes._answer import trained_reader
from saturate.nodes.reading.answer import confidence, doc_meaning, read_results, reads_question, result_docs
from saturate.nodes.reading.brief import names_part, own_words
from saturate.nodes.reading.parts import reader_question
from saturate.nodes.reading.reader import candidates
from saturate.nodes.reading.slots import complete, describe, result_texts, slot_asks
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState
from saturate.state.records import ACCEPTED, GateDecision, RoundRecord
from saturate.state.rng import draw
from saturate.state.settings import Settings
from saturate.state.settings_of import settings_of
from saturate.state.shapes import RoundInProgress
from saturate.state.text import clip

KNOWN = "the new results were mostly what was already known"  # a sub-threshold round, in a newcomer's words
ANSWERED = "every part of the question has an answer in the sources"  # the chains are complete
READ = "the reader found the same confident answer two rounds running"  # the reader's stop (its best sentence)
FAILED = "the search failed, so nothing new came in"  # a sub-threshold round whose search raised (recorded errors)


def number(x: float, near: float | None = None) -> str:
    """A score as people read it: two decimals at most (``2.4``, ``3``, ``2.41``), more when rounding would make it
    look equal to ``near`` (the threshold it is compared with: ``2.996 < 3``, never ``3 < 3``)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    if near is not None and x != near and float(text) == near:
        text = f"{x:g}"
    return text


def decide_gate(
    rnd: int,
    score: float,
    settings: Settings,
    rng: dict,
    filled: str | None = None,
    chains: int = 1,
    read: str | None = None,
) -> tuple[GateDecision, str, float | None, dict]:
    """(decision, reason, epsilon draw or None, next rng state). Pure.

    ``filled``: when every slot of the question's chains holds a value that is stable and supported by its own
    page (``reading.slots.complete``), the words saying so ("[1.1] country = Zimbabwe; [1.2] waterfall = Victoria
    Falls"): the loop stops, whatever the novelty (stability needs two rounds, so never before round 2);
    ``min_rounds``, the threshold and epsilon govern the novelty fallback. ``chains``: the number of
    sub-questions; the round cap is ``max_rounds`` for each (at most 50). ``read``: when the trained reader's best
    sentence reached ``reader_stop_p`` this round and the round before and is the same sentence, the words saying
    so ("'Victoria Falls is a waterfall …' (p 0.21, then 0.22 ≥ reader_stop_p 0.15)"): from ``min_rounds`` on,
    the loop stops whatever the novelty.

    The reason says why in words first, then the numbers it was decided on; the session's ``stop_reason`` is the
    last round's reason (``stopped after 3 round(s): the new results were mostly what was already known (novelty
    2.4 < threshold 3; random draw 0.870 ≥ epsilon 0.15)``)."""
    t = cast(float, settings.novelty_threshold)  # Settings sets it from the novelty method when unset
    nov = number(score, t)
    if settings.mode == "fixed":
        if rnd >= settings.fixed_rounds:
            return "cap", f"fixed mode: all {settings.fixed_rounds} rounds done (fixed_rounds)", None, rng
        return "accept", f"fixed mode: round {rnd} of {settings.fixed_rounds} (fixed_rounds)", None, rng
    cap = min(50, settings.max_rounds * max(1, chains))
    if rnd >= cap:
        vs = f"{'≥' if score >= t else '<'} threshold {t:g}"
        per = f" x {chains} sub-questions" if chains > 1 else ""
        return (
            "cap",
            f"the round limit was reached (max_rounds {settings.max_rounds}{per}; novelty {nov} {vs})",
            None,
            rng,
        )
    if filled:
        return "stop", f"{ANSWERED}: {filled} (the same two rounds running, the answer's own page retrieved)", None, rng
    if rnd < settings.min_rounds:
        return "accept", f"too early to stop (round {rnd} < min_rounds {settings.min_rounds}; novelty {nov})", None, rng
    if read:
        return "stop", f"{READ}: {read}", None, rng
    if score >= t:
        return "accept", f"the new results were new enough to go on (novelty {nov} ≥ threshold {t:g})", None, rng
    u, rng = draw(rng)
    eps = settings.novelty_epsilon
    if u < eps:
        return (
            "epsilon_pass",
            f"{KNOWN}, but a random draw let the search go on (novelty {nov} < threshold {t:g}; "
            f"random draw {u:.3f} < epsilon {eps:g})",
            u,
            rng,
        )
    chance = f"; random draw {u:.3f} ≥ epsilon {eps:g}" if eps > 0 else ""  # epsilon 0: the threshold alone
    return "stop", f"{KNOWN} (novelty {nov} < threshold {t:g}{chance})", u, rng


def filled_words(chains: Sequence[Mapping[str, Any]]) -> str:
    """The slots and their values, as the stop reason says them, each slot in the question's words: "[1.1] country
    of Bubye River (a place) = Zimbabwe; [1.2] …" (``reading.slots.slot_asks``)."""
    return "; ".join(
        f"[{i + 1}.{s['n']}] {slot_asks(c, s, i)} = {s['value']}" for i, c in enumerate(chains) for s in c["slots"]
    )


def reader_best(
    state: ResearchState, cur: RoundInProgress, runtime: Runtime[Context], settings: Settings, needed: bool = False
) -> dict | None:
    """The trained reader's best answer over the accepted results and this round's: {"p" (its confidence that the
    sentence answers, ``reading.answer.confidence``), "sentence", "url"}; None for a claim, with the reader's stop
    off (``reader_stop_p`` 1, the default) unless ``needed`` (the slots' stop asks), for a question the reader does
    not answer (``reading.answer.reads_question``: multi-hop, comparisons), with ``reader`` rules, or when the reader
    cannot load (decide notes why)."""
    if (settings.reader_stop_p >= 1 and not needed) or state.get("kind") == "claim":
        return None  # the stop is off (the default: it costs a reading each round and gained nothing measured)
    if not reads_question(state["task"]):
        return None
    reader, _ = trained_reader(settings)
    if reader is None:
        return None
    accepted = state.get("results") or {}
    results = list(accepted.values()) + [r for r in cur.get("results", []) if r["url"] not in accepted]
    if not results:
        return None
    source = runtime.context.source
    meaning = doc_meaning(reader, source, state["task"], results)
    reads = read_results(reader, state["task"], results, result_texts(source, results), meaning)
    if not reads:
        return None
    top = reads[0]
    conf = confidence(reader, reads)
    return {"p": round(conf, 4), "sentence": top.candidate.text, "url": results[top.candidate.doc]["url"]}


def values_read(chains: Sequence[Mapping[str, Any]], best: Mapping[str, Any]) -> bool:
    """Whether every slot's value is in the reader's best sentence: for a question the reader answers, a value of
    the slot filler's stops the loop only when it is what the reader reads as the answer."""
    sentence = str(best.get("sentence") or "").lower()
    return all(str(s.get("value") or "").lower() in sentence for c in chains for s in c.get("slots") or [])


def covered_parts(
    state: ResearchState, cur: RoundInProgress, runtime: Runtime[Context], settings: Settings
) -> list[dict] | None:
    """A question of several parts (``reading.parts``): each part marked covered once the trained reader finds a
    sentence addressing it and naming it (``reading.brief.names_part``) with ``p`` at least ``brief_min_p`` — a
    sentence the brief would show for it — in the accepted results and this round's; a part once covered stays so.
    None for a question of one part, or when the reader cannot run (rules, a broken install: decide notes why)."""
    parts = state.get("parts") or []
    if len(parts) < 2 or all(p.get("covered") for p in parts):
        return None
    reader, _ = trained_reader(settings)
    if reader is None:
        return None
    accepted = state.get("results") or {}
    results = list(accepted.values()) + [r for r in cur.get("results", []) if r["url"] not in accepted]
    docs = result_docs(results, result_texts(runtime.context.source, results))
    out = []
    for p, own in zip(parts, own_words(parts)):
        ask = reader_question(p)  # its sentences in the brief's order (by shared words: reading.brief)
        covered = bool(p.get("covered")) or any(
            x.p >= settings.brief_min_p and names_part(x, own) for x in reader.read(ask, candidates(ask, docs))
        )
        out.append({**p, "covered": covered})
    return out


def stable_answer(before: dict | None, now: dict | None, stop_p: float) -> str | None:
    """The words of the reader's stop when its best sentence reached ``stop_p`` in both rounds and is the same
    sentence; None otherwise."""
    if not before or not now or not now.get("sentence") or stop_p >= 1:
        return None
    if before.get("p", 0.0) < stop_p or now["p"] < stop_p or before.get("sentence") != now["sentence"]:
        return None
    said = clip(now["sentence"], 80)
    return f"'{said}' (p {number(before['p'])}, then {number(now['p'])} ≥ reader_stop_p {stop_p:g})"


def gate(state: ResearchState, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    settings = settings_of(state, runtime.context)
    cur = state["current"].copy()
    # rounds count from the start of the current attempt (a claim sent back for more search gets a fresh loop)
    rnd = cur["round"] - state.get("attempt_start", 0)
    chains = cur.get("chains") or state.get("chains") or []
    done = complete(chains)
    filled = filled_words(chains) if done else None
    best = reader_best(state, cur, runtime, settings, needed=bool(filled))
    if filled and best is not None and not values_read(chains, best):
        filled = None  # a slot's value the reader's answer does not hold ends nothing (the question is the reader's)
    parts = covered_parts(state, cur, runtime, settings)
    records = state.get("records") or []
    before = records[-1].get("reader") if records and rnd > 1 else None
    read = stable_answer(before, best, settings.reader_stop_p)
    decision, reason, u, rng = decide_gate(
        rnd, cur.get("novelty") or 0.0, settings, state["rng"], filled, max(1, len(chains)), read
    )
    update: dict = {}
    if decision == "stop" and reason.startswith(KNOWN) and cur.get("errors") and not cur.get("total"):
        # nothing came back because the search failed: say that, not that the results repeated (the numbers stay)
        reason = FAILED + reason[len(KNOWN) :]
    if decision == "stop" and settings.stop_round == "keep":
        # the stopping round's search is paid for: its results join the session's sources (no compress, so
        # no knowledge update and no model call processes them)
        accepted = state.get("results") or {}
        kept = {r["url"]: r for r in cur.get("results", []) if r["url"] not in accepted}
        if kept:
            update["results"] = kept
            reason += f"; its {len(kept)} new result(s) kept (stop_round=keep)"
    if parts is not None and (decision in ACCEPTED or settings.stop_round == "keep"):
        update["parts"] = parts  # a part covered by results the session keeps
    shown_parts = parts if parts is not None else state.get("parts") or []
    filled_now = cur.get("chains")  # the chains as this round's results filled them (assess_novelty)
    if filled_now and (decision in ACCEPTED or settings.stop_round == "keep"):
        update["chains"] = filled_now  # what this round's results filled stands with them
    cur.update(decision=decision, reason=reason, epsilon_draw=u)
    durations = {**cur.get("durations_ms", {}), "gate": round((time.perf_counter() - t0) * 1000, 3)}
    # the round's fields as the search, novelty and this node wrote them into ``current``; a field the round did
    # not write takes the model's default (source and planner have none: "" when missing, as ever)
    fields = {k: v for k, v in cur.items() if k in RoundRecord.model_fields}
    record = RoundRecord.model_validate(
        {
            "source": "",
            "planner": "",
            **fields,
            "durations_ms": durations,
            "slots": describe(filled_now) if filled_now else [],
            "complete": done,
            "reader": best or {},
            "parts": [{"name": p["name"], "covered": bool(p.get("covered"))} for p in shown_parts]
            if len(shown_parts) > 1
            else [],
        }
    ).model_dump()
    runtime.stream_writer(
        {"event": "round", **record, "threshold": settings.novelty_threshold, "mode": settings.mode}
    )  # live progress (stream_mode "custom")
    return {**update, "current": cur, "rng": rng, "records": [record]}
