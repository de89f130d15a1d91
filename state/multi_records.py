"""Records of a multi-source session: audit events, loop summaries, the attributed result.

Like the single loop's records they travel through the graph state as plain
dicts; these models document and validate them at the edges (API, tests).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from saturate.state.records import AgentResult, SourceRef

Tag = Literal["verified_official", "verified_multi", "unverified_single", "contradicted"]
Phase = Literal["loop", "breadcrumb", "entity"]  # a source loop, a followed lead, an entity researched
StopReason = Literal["ceiling", "saturated", "empty", "timeout", "model", "leads_done"]


class AuditEvent(BaseModel):
    """One source query: who asked what, what came back, and why the loop went on or stopped."""

    session: str | None = Field(default=None, description="The thread id (None without a checkpointer).")
    source: str
    phase: Phase = "loop"
    query_no: int = Field(
        description="1-based: a loop's query number (per source); for a followed lead or entity, its place "
        "among all those followed in the session."
    )
    query: str
    total: int = Field(default=0, description="Results among the source's top results_per_query.")
    new: int = Field(default=0, description="Results this source's loop did not have yet (over-fetched past repeats).")
    duplicates: int = Field(default=0, description="Top results this source's loop already had.")
    incremental_pct: float = Field(default=0.0, description="100 x (total - duplicates) / total; 0 for an empty query.")
    action: Literal["continue", "stop"] = "continue"
    decided_by: str = Field(default="heuristic", description="rule (ceiling/timeout/empty), heuristic, model, lead")
    reasoning: str = ""
    ms: float = 0.0
    errors: list[str] = Field(default_factory=list)


class LoopSummary(BaseModel):
    source: str
    kind: str
    phase: Phase = "loop"
    ceiling: int
    queries: int
    stop_reason: StopReason
    reasoning: str = ""
    started: float = Field(description="Unix time the loop started (for measuring parallelism).")
    elapsed_s: float
    timed_out: bool = False
    model_calls: int = 0
    model_tokens: dict[str, int] = Field(default_factory=dict)
    fallbacks: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class FoundBy(BaseModel):
    source: str
    query: str
    phase: str = "loop"


class AttributedSource(SourceRef):
    """A cited source with every source and query that found it and its verification tag."""

    found_by: list[FoundBy] = Field(default_factory=list)
    tag: Tag | None = None
    tag_reason: str = ""


class KeyActor(BaseModel):
    name: str
    kind: Literal["identifier", "organisation", "person", "other"]
    what: str = Field(default="", description="What it is: a defining sentence from the results.")
    role: str = Field(default="", description="Its part in the task: the mentioning sentence closest to the task.")
    facts: list[str] = Field(default_factory=list, description="Dated or numeric sentences about it.")
    sources: list[int] = Field(default_factory=list, description="The [n] of the sources mentioning it.")
    mentions: int = 0


class MultiResult(AgentResult):
    sources: list[AttributedSource] = Field(default_factory=list)
    key_actors: list[KeyActor] = Field(default_factory=list)
    tags: dict[str, int] = Field(default_factory=dict, description="How many sources carry each tag.")
    loops: list[LoopSummary] = Field(default_factory=list)
    report: str = Field(default="", description="Markdown: the answer, sources with tags and attribution, Key actors.")
