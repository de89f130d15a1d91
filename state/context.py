"""The runtime context: what nodes use but the checkpoint does not store.

Nodes receive it as ``runtime.context`` (LangGraph's ``context_schema``); they
never import a concrete backend, so tests swap in real local backends and any
LangChain chat model works.
"""

from __future__ import annotations

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


@runtime_checkable
class PageStore(Protocol):
    """Full page texts kept beside the checkpoint, keyed by URL."""

    def put(self, url: str, text: str) -> None: ...

    def get(self, url: str) -> str | None: ...


@dataclass
class Context:
    source: SearchSource
    chat_model: Any | None = None  # a LangChain BaseChatModel, optional
    pages: PageStore | None = None
    extra: dict = field(default_factory=dict)
    sources: dict[str, SearchSource] = field(default_factory=dict)  # multi-source sessions: by configured name
