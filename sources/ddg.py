"""DuckDuckGoSource: web search through the ``ddgs`` metasearch library.

ddgs raises ``DDGSException("No results found.")`` rather than returning [];
that one case becomes []. Every other failure (DDGSException, its subclasses
RatelimitException and TimeoutException, network errors, anything else) becomes
a SearchError naming the query and the underlying error; nothing is swallowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from state.context import SearchError
from state.records import SearchResult
from state.text import clip

SNIPPET_CHARS = 500
NO_RESULTS = "No results found."


def _default_factory(timeout: int | None) -> Any:
    from ddgs import DDGS  # imported on first use: the local source never needs it

    return DDGS(timeout=timeout)


class DuckDuckGoSource:
    """A SearchSource over ``DDGS().text``; ``fetch`` is not implemented yet (issue 6)."""

    name = "ddg"

    def __init__(
        self,
        region: str = "wt-wt",
        safesearch: str = "moderate",
        timelimit: str | None = None,
        backend: str = "auto",
        timeout: int | None = 10,
        ddgs_factory: Callable[..., Any] | None = None,
    ):
        """``ddgs_factory(timeout=...)`` returns an object with ddgs' ``text()``; default ``DDGS``."""
        self.region = region
        self.safesearch = safesearch
        self.timelimit = timelimit
        self.backend = backend
        self.timeout = timeout
        self._factory = ddgs_factory or _default_factory

    @property
    def params(self) -> dict:
        """The settings that change what a query returns (part of the cache key)."""
        return {"region": self.region, "safesearch": self.safesearch, "timelimit": self.timelimit, "backend": self.backend}

    def search(self, query: str, k: int) -> list[SearchResult]:
        if not query.strip() or k <= 0:
            return []
        try:
            rows = self._factory(timeout=self.timeout).text(
                query,
                region=self.region,
                safesearch=self.safesearch,
                timelimit=self.timelimit,
                backend=self.backend,
                max_results=k,
            )
        except Exception as err:  # noqa: BLE001 - re-raised as SearchError below
            if _is_no_results(err):
                return []
            raise SearchError(
                f"ddg search for {clip(query, 200)!r} failed: {type(err).__name__}: {err}"
            ) from err
        results: list[SearchResult] = []
        seen: set[str] = set()
        for row in rows or []:
            href = (row or {}).get("href")
            if not href or href in seen:
                continue
            seen.add(href)
            results.append(
                SearchResult(
                    id=href,
                    url=href,
                    title=str(row.get("title") or ""),
                    snippet=clip(str(row.get("body") or ""), SNIPPET_CHARS),
                    source=self.name,
                    score=None,
                )
            )
            if len(results) == k:
                break
        return results

    def fetch(self, result: SearchResult) -> str:
        raise SearchError(f"fetching web pages is not implemented yet (issue 6): {result.url}")

    def __repr__(self) -> str:
        return f"DuckDuckGoSource({self.params})"


def _is_no_results(err: Exception) -> bool:
    """Exactly ddgs' DDGSException("No results found.") (not a subclass, not another message)."""
    try:
        from ddgs.exceptions import DDGSException
    except ImportError:  # a stand-in factory without ddgs installed
        return type(err).__name__ == "DDGSException" and str(err) == NO_RESULTS
    return type(err) is DDGSException and str(err) == NO_RESULTS
