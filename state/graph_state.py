"""The graph state (TypedDict) and its reducers.

Large texts stay out: results keep id, url, title and a snippet; full pages
live in the page store and the state keeps only references. The dicts it holds
are typed one level deep by the TypedDicts of ``state/shapes.py``.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Required, TypedDict, cast

from saturate.state.rng import new_rng
from saturate.state.settings import Settings
from saturate.state.shapes import ChainDict, EvidenceDict, PageRef, RecordDict, ResultDict, RoundInProgress


def merge_results(old: Mapping[str, ResultDict], new: Mapping[str, ResultDict]) -> dict[str, ResultDict]:
    """Accepted results keyed by url; the first time a url was accepted wins."""
    merged = dict(old or {})
    for url, res in (new or {}).items():
        merged.setdefault(url, res)
    return merged


def upsert_records(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[RecordDict]:
    """Round records keyed by round number. A later partial update of the same round
    (compress adding knowledge size and its timing) merges into it: dicts merge,
    lists extend, ``model_calls`` adds up, other fields are replaced."""
    out: list[Mapping[str, Any]] = list(old or [])
    index = {r["round"]: i for i, r in enumerate(out)}
    for rec in new or []:
        i = index.get(rec["round"])
        if i is None:
            index[rec["round"]] = len(out)
            out.append(rec)
            continue
        merged = dict(out[i])
        for key, value in rec.items():
            prev = merged.get(key)
            if key in ("model_calls_by_node", "model_tokens") and isinstance(prev, dict):
                merged[key] = {k: prev.get(k, 0) + value.get(k, 0) for k in {*prev, *value}}
            elif isinstance(prev, dict) and isinstance(value, dict):
                merged[key] = {**prev, **value}
            elif isinstance(prev, list) and isinstance(value, list):
                merged[key] = prev + value
            elif key == "model_calls" and prev is not None:
                merged[key] = prev + value
            else:
                merged[key] = value
        out[i] = merged
    return cast(list[RecordDict], out)


class ResearchState(TypedDict, total=False):
    # Required: initial_state sets these, so every node's input has them (the other keys are read with .get)
    task: Required[str]
    settings: Required[dict[str, Any]]  # Settings.model_dump(); checkpointed so resume uses the same knobs
    planned_queries: list[str]  # the initial plan (rounds 1..len)
    queries: Annotated[list[str], operator.add]  # every query asked, in order
    knowledge: str  # rolling knowledge state, <= knowledge_max_chars
    results: Annotated[dict[str, ResultDict], merge_results]  # accepted results by url (SearchResult dicts)
    round: int  # rounds started
    current: Required[RoundInProgress]  # the round in progress: its results and partial record
    records: Annotated[
        list[RecordDict], upsert_records
    ]  # RoundRecord dicts, one per round (compress adds to its round's)
    rng: Required[dict[str, int]]  # epsilon-draw generator state (see state.rng)
    pages: list[PageRef]  # enrichment: {url, chars, overlap} refs and skips, never page text
    notes: Annotated[list[str], operator.add]  # session-level notes shown in the result (e.g. model fallback)
    kind: str  # "question" (research) or "claim" (verify)
    evidence: Annotated[list[EvidenceDict], operator.add]  # claims: EvidenceHit dicts, the evidence history
    attempts: int  # claims: decide passes so far
    decide_calls: Annotated[int, operator.add]  # claims: model calls of the decide passes that asked for more search
    attempt_start: int  # the round after which the current attempt's rounds count (gate)
    result: dict | None  # AgentResult dict once decided
    chains: Required[
        list[ChainDict]
    ]  # what the question asks: chains of slots with their current values (reading.chain, reading.slots)
    review_queries: list[str]  # queries a reviewer sent the session back with, asked before any other
    parts: list[dict[str, Any]]  # the question's parts (reading.parts): {name, ask, kind, covered}; set in round 1


def initial_state(task: str, settings: Settings, notes: tuple[str, ...] = (), kind: str = "question") -> ResearchState:
    return {
        "task": task,
        "settings": settings.model_dump(),
        "planned_queries": [],
        "knowledge": "",
        "round": 0,
        "current": cast(RoundInProgress, {}),  # plan_query starts round 1's
        "rng": new_rng(settings.seed),
        "pages": [],
        "notes": list(notes),
        "kind": kind,
        "attempts": 0,
        "attempt_start": 0,
        "result": None,
        "chains": [],
    }
