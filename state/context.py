"""The runtime context: what nodes use but the checkpoint does not store.

Nodes receive it as ``runtime.context`` (LangGraph's ``context_schema``); they
never import a concrete backend, so tests swap in real local backends and any
LangChain chat model works. It also holds what the nodes keep in memory for the
session (``Context.cache``: the validated settings, the accepted results'
vocabulary index), so those caches live and die with the context.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from saturate.state.records import SearchResult


class SearchError(RuntimeError):
    """A search failed (network, backend, rate limit). Recorded in the round, never fatal."""


@runtime_checkable
class SearchSource(Protocol):
    """Anything that answers a query with results. ``name`` goes into round records."""

    name: str

    def search(self, query: str, k: int) -> list[SearchResult]:
        """At most k results, best first. Raises SearchError on failure; [] when nothing matched."""
        ...

    def fetch(self, result: SearchResult) -> str:
        """The full text behind a result (a corpus document, a web page). Raises on failure."""
        ...

    # Optional: ``query_key(query) -> str``, what the source really searches for a query (a local index: its
    # match expression). Equal keys mean equal answers; the search node uses it to spare a useless retry.
    # Optional: ``documents(ids) -> {id: text}``, the whole texts of results a source holds locally (a corpus
    # index): read at the cost of a lookup by the slot filler and the answer, never fetched over the network.


@runtime_checkable
class PageStore(Protocol):
    """Full page texts kept beside the checkpoint, keyed by URL."""

    def put(self, url: str, text: str) -> bool | None: ...  # False: the store bypassed it (the page is not kept)

    def get(self, url: str) -> str | None: ...


class ModelBudget:
    """The model budget of a multi-source session: a circuit breaker on calls and tokens.

    Shared by the parallel source loops through the context. A call must
    ``acquire`` a slot first: while calls < ``max_calls`` and tokens <
    ``max_tokens`` it gets one (reserved under a lock, so parallel loops never
    exceed the call budget); otherwise the breaker trips — once, with its reason
    — and every later acquire fails. Tokens are known only after a call, so the
    call in flight may take the token count past its limit; no call starts after.
    """

    def __init__(self, max_calls: int, max_tokens: int, calls: int = 0, tokens: int = 0, tripped: str | None = None):
        self.max_calls, self.max_tokens = max_calls, max_tokens
        self.calls, self.tokens, self.tripped = calls, tokens, tripped
        self._lock = threading.Lock()

    def acquire(self) -> tuple[bool, str | None]:
        """(allowed, reason if this acquire tripped the breaker)."""
        with self._lock:
            if self.tripped:
                return False, None
            if self.calls >= self.max_calls:
                self.tripped = f"model_call_budget {self.max_calls} spent ({self.calls} calls)"
            elif self.tokens >= self.max_tokens:
                self.tripped = f"model_token_budget {self.max_tokens} spent ({self.tokens} tokens)"
            if self.tripped:
                return False, self.tripped
            self.calls += 1
            return True, None

    def charge(self, tokens: int) -> None:
        with self._lock:
            self.tokens += tokens


class SessionCache:
    """What a session's nodes keep in memory beside the graph state, never in it (the checkpoint does not grow):
    values by key, at most ``size`` of them (least recently used out). One lives in each ``Context``
    (``Context.cache``), so it lives and dies with the session's context. Callers hold ``lock`` around a lookup
    and the work that depends on it (sessions run on threads)."""

    def __init__(self, size: int):
        self.size = size
        self.lock = threading.Lock()
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any | None:
        """The value kept under ``key`` (now the most recently used), or None."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` under ``key``; the least recently used entries go past ``size``."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class Context:
    source: SearchSource
    chat_model: Any | None = None  # a LangChain BaseChatModel, optional
    pages: PageStore | None = None
    sources: dict[str, SearchSource] = field(default_factory=dict)  # multi-source sessions: by configured name
    embeddings: Any | None = None  # a LangChain Embeddings (rerank / novelty "embedding"), optional
    # a question not in English is read by this model (reading.crosslingual): a function loading it on first use
    multilingual: Callable[[], Any] | None = None
    # claims evaluated with annotated stances (the verify benchmark): url -> recorded stance, or None
    stance_oracle: Callable[[str], str | None] | None = None
    model_budget: ModelBudget | None = None  # multi-source sessions: created on first use (see budget())
    notes: list[str] = field(default_factory=list)  # what the session could not do as asked (lexical retrieval ...)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # the session's in-memory caches by name (see cache()); not an init field: a copy (dataclasses.replace) gets none
    _caches: dict[str, SessionCache] = field(default_factory=dict, init=False, repr=False, compare=False)

    def cache(self, name: str, size: int) -> SessionCache:
        """The session's cache ``name`` (at most ``size`` entries), created on first use: the validated settings
        (``state.settings_of``), the accepted results' vocabulary index (``reading.vocabulary``). Another context
        (another session, or a copy made with ``dataclasses.replace``) has its own."""
        with self._lock:
            found = self._caches.get(name)
            if found is None:
                found = self._caches[name] = SessionCache(size)
            return found

    def budget(self, max_calls: int, max_tokens: int, seed: dict | None = None) -> ModelBudget:
        """The session's model budget, created on first use (seeded with what the checkpoint already records,
        so a resumed session keeps counting); parallel branches racing here get one shared budget."""
        with self._lock:
            if self.model_budget is None:
                seed = seed or {}
                self.model_budget = ModelBudget(
                    max_calls, max_tokens, seed.get("calls", 0), seed.get("tokens", 0), seed.get("tripped")
                )
            return self.model_budget
