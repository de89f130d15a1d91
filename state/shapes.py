"""The shapes of the dicts the graph state holds, for the type checker (TypedDicts: at run time they are plain dicts).

The state keeps records as plain dicts (``model_dump()`` of the pydantic models in ``state/records.py``) so the
checkpoint stays JSON-like data; these say which keys each has and what they hold, one level deep:

- ``ResultDict``: a search result (``SearchResult.model_dump()``), in ``results`` and ``current["results"]``;
- ``RecordDict``: a round record (``RoundRecord.model_dump()``), one per round in ``records``;
- ``RoundInProgress``: ``current``, the round in progress: plan_query starts it, search, assess_novelty and
  the gate add to it, and the gate copies it into the round's record;
- ``ChainDict`` and ``SlotDict``: what the question asks (``reading.chain``: chains of slots), with what the
  rounds filled in (``reading.slots.fill_chains``, ``_chain_model.model_fill``); ``SupportDict``: a slot's
  sentence and page;
- ``EvidenceDict``: an evidence hit of a claim (``EvidenceHit.model_dump()``), in ``evidence``;
- ``PageRef``: an enrichment entry in ``pages`` (a reference to a page kept in the page store, or why it is not).
"""

from __future__ import annotations

from typing import Any, Required, TypedDict

from saturate.state.records import GateDecision, Stance, Tier


class ResultDict(TypedDict):
    """``SearchResult.model_dump()``: ``url`` is the dedup key."""

    id: str
    url: str
    title: str
    snippet: str
    source: str
    score: float | None


class RecordDict(TypedDict):
    """``RoundRecord.model_dump()`` (see its fields' descriptions); compress adds ``knowledge_chars``, ``compress``
    and its model calls to its round's record (``graph_state.upsert_records``)."""

    round: int
    query: str
    source: str
    planner: str
    total: int
    new: int
    new_urls: list[str]
    result_chars: int
    repeats_top_k: int
    quality_retry: str | None
    quality_overfetch: int
    searches: int
    novelty: float | None
    novelty_method: str
    novelty_detail: dict[str, Any]
    decision: GateDecision | None
    reason: str
    epsilon_draw: float | None
    knowledge_chars: int | None
    compress: str | None
    model_calls: int
    model_calls_by_node: dict[str, int]
    model_tokens: dict[str, int]
    durations_ms: dict[str, float]
    errors: list[str]
    fallbacks: list[str]
    slots: list[dict[str, Any]]
    parts: list[dict[str, Any]]
    complete: bool
    reader: dict[str, Any]


class SupportDict(TypedDict):
    """The sentence a slot's value stands on: result ``n`` of the reading, its url and title."""

    n: int
    url: str
    title: str
    sentence: str


class SlotDict(TypedDict, total=False):
    """One thing the question asks (``reading.chain.Slot.to_dict``: ``n`` to ``focus``), and once a round has read
    the results (``reading.slots.fill_chains``) its resolved subject, value, probability, support and status."""

    n: Required[int]  # its number in the chain, from 1 (a subject "#k" is slot k's value)
    ask: str
    subject: str  # an entity of the question, "#k", "@k" (chain k's answer), "" (from the results)
    relation: list[str]
    kind: str
    focus: str | None
    resolved: str  # the subject as resolved this round
    value: str | None
    p: float
    support: SupportDict | None
    page: bool  # the value's own page is among the results
    stable: bool  # the same value as the round before
    history: list[str | None]  # the value after each round
    by: str  # "model" when the chat model gave the value


class ChainDict(TypedDict):
    """A sub-question (``reading.chain.Chain.to_dict``): its slots, innermost first; ``compare`` is how they combine
    ("choice", "yesno", "common", or "")."""

    ask: str
    compare: str
    slots: list[SlotDict]


class EvidenceDict(TypedDict):
    """``EvidenceHit.model_dump()``: a claim's evidence hit and its stance."""

    url: str
    title: str
    pub_date: str | None
    excerpt: str
    text: str
    stance: Stance
    stance_by: str
    stance_reason: str
    domain: str
    tier: Tier
    weight: float
    attempt: int


class PageRef(TypedDict, total=False):
    """An enrichment entry (``nodes/enrich.py``): the page's url and overlap with the knowledge state, what became
    of it, and for a fetch its size and time; never the page's text."""

    url: Required[str]
    overlap: Required[float]
    status: Required[str]  # stored | fetched | skipped | refused | error
    reason: str  # why skipped, refused or failed
    chars: int
    ms: float
    final_url: str  # after redirects, when the source says so
    content_type: str
    notes: list[str]


class RoundInProgress(TypedDict, total=False):
    """``current``: the round in progress. plan_query starts it (``round`` to ``durations_ms``; the reviewer may
    replace ``query`` and ``planner``), search adds its results and counts, assess_novelty the novelty and the
    chains as this round fills them, the gate its decision; the gate then makes the round's record of it
    (``RecordDict``). Before round 1's plan it is ``{}`` (``initial_state``), which nothing reads by key."""

    # plan_query (review_plan)
    round: Required[int]
    query: Required[str]
    planner: str
    errors: list[str]
    fallbacks: list[str]
    model_calls: int
    model_calls_by_node: dict[str, int]
    model_tokens: dict[str, int]
    durations_ms: dict[str, float]
    # search
    source: str
    results: list[ResultDict]
    total: int
    new: int
    new_urls: list[str]
    result_chars: int
    quality_retry: str | None
    quality_overfetch: int
    searches: int
    repeats_top_k: int
    # assess_novelty
    novelty: float
    novelty_method: str
    novelty_detail: dict[str, Any]
    chains: list[ChainDict]
    # gate
    decision: GateDecision
    reason: str
    epsilon_draw: float | None
