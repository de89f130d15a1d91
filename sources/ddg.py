"""DuckDuckGoSource: web search through the ``ddgs`` metasearch library, pages through the safe fetcher.

Search: ddgs raises ``DDGSException("No results found.")`` rather than
returning []; that one case becomes [] and is never retried. A transient
failure — ddgs' TimeoutException or RatelimitException, a timeout,
connection or DNS error, HTTP 429/5xx (ddgs folds the underlying error into
the DDGSException message, so the message is matched) — is retried with
backoff (``sources.retry``: bounded, logged, then a SearchError naming the
query, the attempts and the underlying error; nothing is swallowed).

Fetch: ``fetch(result)`` reads the page through ``sources.fetch.fetch_page``
(http/https only, no private addresses, also after redirects, bounded size
and time, HTML/text only) and returns its main text (``sources.extract``) as
a ``FetchedText`` carrying the final URL, content type and notes.
"""

from __future__ import annotations

import random
import re
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from saturate.sources.extract import defuse, main_text
from saturate.sources.fetch import FetchedText, FetchError, fetch_page
from saturate.sources.retry import with_retries
from saturate.state.records import SearchResult
from saturate.state.text import clip

SNIPPET_CHARS = 500
NO_RESULTS = "No results found."

_TRANSIENT = re.compile(
    r"time[ds]?\s?out|timeout|connect|connection|dns|resolv|network|unreachable|reset by peer|broken pipe|"
    r"temporar|rate\s?limit|too many requests|\b429\b|\b50[0-4]\b|service unavailable|bad gateway",
    re.IGNORECASE,
)


def is_transient(err: BaseException) -> bool:
    """A failure worth retrying: timeouts, connection/DNS errors, rate limits, HTTP 429/5xx."""
    if _is_no_results(err):
        return False
    names = {c.__name__ for c in type(err).__mro__}
    if names & {"TimeoutException", "RatelimitException", "TransportError"}:
        return True
    if isinstance(err, (TimeoutError, ConnectionError, socket.gaierror)):
        return True
    if "DDGSException" in names or isinstance(err, OSError):
        return bool(_TRANSIENT.search(str(err)))
    return False


def _default_factory(timeout: int | None) -> Any:
    from ddgs import DDGS  # imported on first use: the local source never needs it

    return DDGS(timeout=timeout)


class DuckDuckGoSource:
    """A SearchSource over ``DDGS().text`` with bounded retries; ``fetch`` reads pages safely."""

    name = "ddg"

    def __init__(
        self,
        region: str = "wt-wt",
        safesearch: str = "moderate",
        timelimit: str | None = None,
        backend: str = "auto",
        timeout: int | None = 10,
        ddgs_factory: Callable[..., Any] | None = None,
        *,
        retries: int = 2,
        retry_base_s: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        fetch_timeout_s: float = 10.0,
        fetch_max_bytes: int = 2_000_000,
        fetch_allow_hosts: Iterable[str] = (),
        fetcher: Callable[..., Any] = fetch_page,
    ):
        """``ddgs_factory(timeout=...)`` returns an object with ddgs' ``text()``; default ``DDGS``.

        ``sleep`` and ``jitter`` are injectable so tests do not wait; ``fetcher``
        is ``fetch_page`` (tests may wrap it to count fetches).
        """
        self.region = region
        self.safesearch = safesearch
        self.timelimit = timelimit
        self.backend = backend
        self.timeout = timeout
        self._factory = ddgs_factory or _default_factory
        self.retries = max(0, int(retries))
        self.retry_base_s = max(0.0, float(retry_base_s))
        self._sleep = sleep
        self._jitter = jitter
        self.fetch_timeout_s = fetch_timeout_s
        self.fetch_max_bytes = fetch_max_bytes
        self.fetch_allow_hosts = tuple(fetch_allow_hosts)
        self._fetcher = fetcher

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> DuckDuckGoSource:
        """A source configured by a ``Settings`` (ddg_*, search_retries*, fetch_*); kwargs win."""
        options = dict(
            region=settings.ddg_region,
            safesearch=settings.ddg_safesearch,
            timelimit=settings.ddg_timelimit,
            backend=settings.ddg_backend,
            retries=settings.search_retries,
            retry_base_s=settings.search_retry_base_s,
            fetch_timeout_s=settings.fetch_timeout_s,
            fetch_max_bytes=settings.fetch_max_bytes,
            fetch_allow_hosts=settings.fetch_allow_hosts,
        )
        options.update(kwargs)
        return cls(**options)

    @property
    def params(self) -> dict:
        """The settings that change what a query returns (part of the cache key)."""
        return {
            "region": self.region,
            "safesearch": self.safesearch,
            "timelimit": self.timelimit,
            "backend": self.backend,
        }

    def search(self, query: str, k: int) -> list[SearchResult]:
        if not query.strip() or k <= 0:
            return []

        def ask() -> list:
            try:
                return self._factory(timeout=self.timeout).text(
                    query,
                    region=self.region,
                    safesearch=self.safesearch,
                    timelimit=self.timelimit,
                    backend=self.backend,
                    max_results=k,
                )
            except Exception as err:
                if _is_no_results(err):
                    return []
                raise

        rows = with_retries(
            ask,
            source="ddg",
            query=query,
            retries=self.retries,
            base_s=self.retry_base_s,
            transient=is_transient,
            sleep=self._sleep,
            jitter=self._jitter,
        )
        results: list[SearchResult] = []
        seen: set[str] = set()
        for row in rows or []:
            href = (row or {}).get("href")
            if not isinstance(href, str) or href in seen or not is_web_url(href):
                continue  # a result without an http(s) link (javascript:, data:, a bare path) is no source
            seen.add(href)
            results.append(
                SearchResult(
                    id=href,
                    url=href,
                    # web text is untrusted: tag-like sequences cannot close a prompt's delimiters
                    title=defuse(str(row.get("title") or "")),
                    snippet=defuse(clip(str(row.get("body") or ""), SNIPPET_CHARS)),
                    source=self.name,
                    score=None,
                )
            )
            if len(results) == k:
                break
        return results

    def fetch(self, result: SearchResult) -> str:
        """The page's main text. Raises FetchRefused / FetchError with the reason (enrich records it)."""
        return read_web_page(
            result.url,
            self._fetcher,
            allow_hosts=self.fetch_allow_hosts,
            max_bytes=self.fetch_max_bytes,
            timeout_s=self.fetch_timeout_s,
        )

    def __repr__(self) -> str:
        return f"DuckDuckGoSource({self.params})"


def read_web_page(
    url: str, fetcher: Callable[..., Any], *, allow_hosts: Iterable[str], max_bytes: int, timeout_s: float
) -> FetchedText:
    """A web page's main text through the safe fetcher (``fetch_page``: no private addresses, also after redirects,
    bounded size and time), with the final URL, content type and notes; FetchRefused / FetchError otherwise. Every
    web source reads its results' pages here."""
    page = fetcher(url, allow_hosts=allow_hosts, max_bytes=max_bytes, timeout_s=timeout_s)
    text = main_text(page.text, page.content_type, page.final_url)
    if not text:
        raise FetchError(f"no main text could be extracted from {page.final_url} ({page.content_type})")
    notes = list(page.notes)
    if page.redirects:
        notes.append(f"redirected {len(page.redirects)} time(s)")
    return FetchedText(text, final_url=page.final_url, content_type=page.content_type, notes=notes)


def _is_no_results(err: Exception) -> bool:
    """Exactly ddgs' DDGSException("No results found.") (not a subclass, not another message)."""
    try:
        from ddgs.exceptions import DDGSException
    except ImportError:  # a stand-in factory without ddgs installed
        return type(err).__name__ == "DDGSException" and str(err) == NO_RESULTS
    return type(err) is DDGSException and str(err) == NO_RESULTS


def is_web_url(href: str) -> bool:
    """An absolute http(s) URL with a host, at most 2,000 characters, no whitespace or control characters."""
    parts = urlsplit(href)
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and len(href) <= 2000
        and not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in href)
    )
