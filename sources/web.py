"""What every web source (``ddg``, ``searxng``) shares: bounded retries of a search (``sources.retry``), the
cleaning of its result rows into SearchResults, and reading a result's page through the safe fetcher.

``WebSource`` holds the settings of both (``search_retries*``, ``fetch_*``); a source subclasses it, says how to
ask its engine, and calls ``_retrying`` and ``_results``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from saturate.sources.extract import main_text
from saturate.sources.fetch import FetchedText, fetch_page
from saturate.sources.fetch_errors import FetchError
from saturate.sources.retry import with_retries
from saturate.state.records import SearchResult
from saturate.state.text import clip, defuse

SNIPPET_CHARS = 500


class WebSource:
    """The retry and page-reading settings of a web source, and the steps every web source takes."""

    name = "web"

    def __init__(
        self,
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
        """``sleep`` and ``jitter`` are injectable so tests do not wait; ``fetcher`` is ``fetch_page`` (tests may wrap
        it to count fetches)."""
        self.retries = max(0, int(retries))
        self.retry_base_s = max(0.0, float(retry_base_s))
        self._sleep = sleep
        self._jitter = jitter
        self.fetch_timeout_s = fetch_timeout_s
        self.fetch_max_bytes = fetch_max_bytes
        self.fetch_allow_hosts = tuple(fetch_allow_hosts)
        self._fetcher = fetcher

    @staticmethod
    def web_options(settings: Any) -> dict:
        """The ``Settings`` every web source takes: ``search_retries*`` and ``fetch_*``."""
        return dict(
            retries=settings.search_retries,
            retry_base_s=settings.search_retry_base_s,
            fetch_timeout_s=settings.fetch_timeout_s,
            fetch_max_bytes=settings.fetch_max_bytes,
            fetch_allow_hosts=settings.fetch_allow_hosts,
        )

    def _retrying(self, ask: Callable[[], Any], query: str, transient: Callable[[BaseException], bool]) -> Any:
        return with_retries(
            ask,
            source=self.name,
            query=query,
            retries=self.retries,
            base_s=self.retry_base_s,
            transient=transient,
            sleep=self._sleep,
            jitter=self._jitter,
        )

    def _results(
        self, rows: Iterable[Any], k: int, url: str, title: str, text: str, score: str | None = None, title_chars=None
    ) -> list[SearchResult]:
        """The first ``k`` rows (dicts) with an http(s) link as SearchResults, each link once; ``url``, ``title``,
        ``text`` and ``score`` name the row's keys. Web text is untrusted: tag-like sequences are defused, so they
        cannot close a prompt's delimiters."""
        results: list[SearchResult] = []
        seen: set[str] = set()
        for row in rows or []:
            href = row.get(url) if isinstance(row, dict) else None
            if not isinstance(href, str) or href in seen or not is_web_url(href):
                continue  # a result without an http(s) link (javascript:, data:, a bare path) is no source
            seen.add(href)
            heading = str(row.get(title) or "")
            value = row.get(score) if score else None
            results.append(
                SearchResult(
                    id=href,
                    url=href,
                    title=defuse(clip(heading, title_chars) if title_chars else heading),
                    snippet=defuse(clip(str(row.get(text) or ""), SNIPPET_CHARS)),
                    source=self.name,
                    score=value if isinstance(value, int | float) else None,
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


def read_web_page(
    url: str, fetcher: Callable[..., Any], *, allow_hosts: Iterable[str], max_bytes: int, timeout_s: float
) -> FetchedText:
    """A web page's main text through the safe fetcher (``fetch_page``: no private addresses, also after redirects,
    bounded size and time), with the final URL, content type and notes; FetchRefused / FetchError otherwise."""
    page = fetcher(url, allow_hosts=allow_hosts, max_bytes=max_bytes, timeout_s=timeout_s)
    text = main_text(page.text, page.content_type, page.final_url)
    if not text:
        raise FetchError(f"no main text could be extracted from {page.final_url} ({page.content_type})")
    notes = list(page.notes)
    if page.redirects:
        notes.append(f"redirected {len(page.redirects)} time(s)")
    return FetchedText(text, final_url=page.final_url, content_type=page.content_type, notes=notes)


def is_web_url(href: str) -> bool:
    """An absolute http(s) URL with a host, at most 2,000 characters, no whitespace or control characters."""
    parts = urlsplit(href)
    return (
        parts.scheme.lower() in ("http", "https")
        and bool(parts.hostname)
        and len(href) <= 2000
        and not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in href)
    )
