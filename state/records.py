"""The records a session keeps: results, round records, evidence hits, the final result (pydantic).

They travel through the graph state as plain dicts (``model_dump()``) so the
checkpoint serializer stores them as JSON-like data; the models validate them
at the edges (sources, the API, tests).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_serializer

GateDecision = Literal["accept", "epsilon_pass", "stop", "cap"]
Stance = Literal["support", "partial", "refute", "irrelevant"]
Tier = Literal["primary", "wire", "trade", "other"]
ACCEPTED = ("accept", "epsilon_pass", "cap")


class SearchResult(BaseModel):
    """One hit from a source. ``url`` is the dedup key (local docs get ``local://corpus/id``)."""

    id: str = Field(description="The source's own id (corpus doc id, or the URL for web results).")
    url: str
    title: str = ""
    snippet: str = Field(default="", description="Short body shown in the results; full pages never go into the state.")
    source: str = ""
    score: float | None = Field(default=None, description="The source's retrieval score (BM25 for the local corpus).")


class RoundRecord(BaseModel):
    """What happened in one round and why; a person reading a checkpoint should not have to guess."""

    round: int
    query: str
    source: str
    planner: str = Field(description="How the query was made: planned, gap-terms, model, fallback...")
    total: int = 0
    new: int = Field(default=0, description="Results whose url/id the session had not accepted before.")
    new_urls: list[str] = Field(default_factory=list, description="Those results' urls, in rank order.")
    result_chars: int = 0
    repeats_top_k: int = Field(
        default=0, description="How many of the source's top results_per_query were already accepted."
    )
    quality_retry: str | None = Field(
        default=None, description="The simplified query when round 1 fell under the quality floor."
    )
    quality_overfetch: int = Field(
        default=0,
        description="Results round 1 added from its own query's next ranks (the quality floor, no second search).",
    )
    searches: int = Field(
        default=1, description="Source searches this round made (a quality-floor retry is a second one)."
    )
    novelty: float | None = None
    novelty_method: str = ""
    novelty_detail: dict = Field(default_factory=dict)
    decision: GateDecision | None = None
    reason: str = ""
    epsilon_draw: float | None = None
    knowledge_chars: int | None = Field(default=None, description="Size of the knowledge state after this round.")
    compress: str | None = Field(
        default=None, description="How the knowledge state was updated (bodies, extractive, model)."
    )
    model_calls: int = 0
    model_calls_by_node: dict[str, int] = Field(default_factory=dict, description="plan / novelty / compress ...")
    model_tokens: dict[str, int] = Field(default_factory=dict, description="{'in': prompt tokens, 'out': reply tokens}")
    durations_ms: dict[str, float] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)
    slots: list[dict] = Field(
        default_factory=list,
        description="The question's slots after this round: slot, kind, subject, value, p, status, source.",
    )
    parts: list[dict] = Field(
        default_factory=list,
        description="A question of several parts (reading.parts: the sides of a comparison, causes and effects, what "
        "a thing is and how it works): each part's name and whether the reader found a sentence addressing it in the "
        "results so far.",
    )
    complete: bool = Field(
        default=False,
        description="Every slot filled, stable and its answer supported by its own page (the gate stops).",
    )
    reader: dict = Field(
        default_factory=dict,
        description="The trained reader's best answer over the results so far: {'p': probability, 'span': the answer, "
        "'url': its source}; empty when the reader did not read (claims, `reader` rules).",
    )


class SourceRef(BaseModel):
    n: int = Field(description="The number the answer cites as [n].")
    url: str
    title: str = ""
    pub_date: str | None = None
    excerpt: str = ""
    # set for a question's sources (decide), unset (and left out of the dump) for a claim's evidence
    cited: bool | None = Field(default=None, description="The answer cites this source.")
    relevance: float | None = Field(
        default=None, description="Task relevance relative to the most relevant accepted source (0-1)."
    )
    on_topic: bool | None = Field(
        default=None, description="Relevance at least the on-topic floor (half the best source's)."
    )

    @model_serializer(mode="wrap")
    def _leave_out_unset_marks(self, handler):
        data = handler(self)
        for key in ("cited", "relevance", "on_topic"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class AgentResult(BaseModel):
    outcome: Literal["answer", "no_results", "True", "False", "Invalid", "review"] = "answer"
    task: str
    answer: str = Field(default="", description="The answer citing sources as [n]; for a claim, the verdict and why.")
    short_answer: str = Field(
        default="",
        description="The answer itself in a few words (the question's last slot: a name, a date, yes/no); '' when "
        "the sources do not give it.",
    )
    proof: str = Field(default="", description="For a claim: a compact markdown proof citing only evidence hits.")
    brief: list[dict] = Field(
        default_factory=list,
        description="For a question: the best sentences of the accepted sources for each part of the question "
        "(each side of a comparison, causes and effects, what a thing is and how it works): [{part, kind, "
        "sentences: [{text, sources, confirmed_by, contradicted_by, status, p}]}] (reading.brief).",
    )
    sources: list[SourceRef] = Field(default_factory=list)
    stop_reason: str = ""
    rounds: int = 0
    debug: dict = Field(default_factory=dict, description="total_queries, total_pages_visited, errors ...")
    thread_id: str = Field(default="", description="The session's thread: what resume, show and fork take.")
    review: dict | None = Field(
        default=None,
        description="outcome `review`: the session is paused for a person (`review` setting) — what to review "
        "(`point` plan or answer, the queries or the answer); resume it with a decision.",
    )


class EvidenceHit(BaseModel):
    url: str
    title: str = ""
    pub_date: str | None = Field(default=None, description="ISO date when known")
    excerpt: str = Field(default="", description="The passage the stance rests on (a verbatim part of text)")
    text: str = Field(default="", description="The hit's text as retrieved (snippet or page), for checking quotes")
    stance: Stance = "irrelevant"
    stance_by: str = Field(default="heuristic", description="heuristic | model | gold")
    stance_reason: str = ""
    domain: str = ""
    tier: Tier = "other"
    weight: float = 0.0
    attempt: int = 1
