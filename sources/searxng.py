"""SearxngSource: web search through a SearXNG (or searx) instance's JSON API, pages through the safe fetcher.

``GET {url}/search?q=…&format=json`` with the instance's own categories, language, time range, safe search and
engines. The instance is the user's: it may run on localhost or a private address, so it is asked directly (with
``httpx``, bounded in time and size), not through the SSRF-guarded fetcher; the result URLs it returns are the
web's, and reading them goes through ``sources.fetch`` like every other page (private, loopback and link-local
addresses refused, also after redirects).

What can go wrong, and what the user reads (one line, a SearchError the round records):

- the instance cannot be reached: its URL and the ``searxng_url`` setting;
- it answers HTML, or HTTP 403, instead of JSON: its JSON format is off — ``search: formats: [html, json]`` in its
  ``settings.yml`` turns it on;
- it rate-limits (HTTP 429, its limiter): retried after Retry-After within a bound (``sources.retry``), then the
  failure (a chain's next source answers);
- it answers with no results and names unresponsive engines (every engine timed out, was suspended or is
  unreachable): a failure naming them, not an empty "nothing found" — the instance did not search.
"""

from __future__ import annotations

import json
import time
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx

from saturate.sources.retry import RateLimited
from saturate.sources.web import WebSource
from saturate.state.context import SearchError
from saturate.state.records import SearchResult
from saturate.state.settings import Settings
from saturate.state.text import clip

MAX_REPLY_BYTES = 5_000_000  # a search page's JSON is tens of KB; anything far larger is not one
SAFESEARCH = {"off": 0, "moderate": 1, "on": 2}
JSON_OFF = (
    "its JSON format is off: add json to `search: formats:` in its settings.yml (e.g. `formats: [html, json]`) "
    "and restart it"
)


class SearxngSource(WebSource):
    """A SearchSource over a SearXNG instance's ``/search?format=json``; pages read safely (``WebSource.fetch``)."""

    name = "searxng"

    def __init__(
        self,
        url: str = "http://127.0.0.1:8888",
        categories: str = "general",
        language: str = "all",
        time_range: str | None = None,
        safesearch: str = "moderate",
        engines: str | None = None,
        timeout_s: float = 10.0,
        **web: Any,
    ):
        """``web``: the retry and fetch settings of ``WebSource``."""
        super().__init__(**web)
        self.url = url.rstrip("/")
        self.categories = categories
        self.language = language
        self.time_range = time_range
        self.safesearch = safesearch
        self.engines = engines
        self.timeout_s = timeout_s
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=True,
            max_redirects=3,
            headers={"Accept": "application/json", "User-Agent": "saturate (research agent)"},
            trust_env=False,  # the user's own instance, asked directly: no proxy from the environment
        )

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> SearxngSource:
        """A source configured by a ``Settings`` (searxng_*, search_retries*, fetch_*); kwargs win."""
        options = dict(
            url=settings.searxng_url,
            categories=settings.searxng_categories,
            language=settings.searxng_language,
            time_range=settings.searxng_time_range,
            safesearch=settings.searxng_safesearch,
            engines=settings.searxng_engines,
            **cls.web_options(settings),
        )
        options.update(kwargs)
        return cls(**options)

    @property
    def params(self) -> dict:
        """The settings that change what a query returns (part of the cache key)."""
        return {
            "url": self.url,
            "categories": self.categories,
            "language": self.language,
            "time_range": self.time_range,
            "safesearch": self.safesearch,
            "engines": self.engines,
        }

    def search(self, query: str, k: int) -> list[SearchResult]:
        if not query.strip() or k <= 0:
            return []
        reply = self._retrying(lambda: self._ask(query), query, _transient)
        results = self._results(
            reply.get("results"), k, url="url", title="title", text="content", score="score", title_chars=300
        )
        if not results:
            dead = _unresponsive(reply)
            if dead:
                raise SearchError(
                    f"searxng search for {clip(query, 200)!r}: no results, and its engines did not answer ({dead})"
                )
        return results

    def _ask(self, query: str) -> dict:
        params = {
            "q": query,
            "format": "json",
            "categories": self.categories,
            "language": self.language,
            "safesearch": SAFESEARCH[self.safesearch],
            "pageno": 1,
        }
        if self.time_range:
            params["time_range"] = self.time_range
        if self.engines:
            params["engines"] = self.engines
        try:
            with self._client.stream("GET", f"{self.url}/search", params=params) as response:
                body = _read_bounded(response)
        except httpx.ConnectError as err:
            raise SearchError(
                f"cannot reach SearXNG at {self.url} ({err}): start it, or set searxng_url (SATURATE_SEARXNG_URL)"
            ) from None
        status, kind = response.status_code, response.headers.get("content-type", "")
        if status == 429 or (status in (503, 202) and b"limit" in body.lower()):
            raise RateLimited(f"HTTP {status} (rate limited)", _retry_after(response.headers.get("retry-after")))
        if status == 403:
            raise SearchError(f"SearXNG at {self.url} refused format=json (HTTP 403): {JSON_OFF}")
        if status >= 500:
            raise httpx.HTTPStatusError(f"HTTP {status}", request=response.request, response=response)
        if status != 200:  # searx/SearXNG say why in JSON ({"error": "Invalid value ... for parameter language"})
            said = _error_text(body)
            raise SearchError(
                f"SearXNG at {self.url} answered HTTP {status} to /search"
                + (f": {said}" if said else "")
                + (" (check the searxng_* settings)" if status == 400 else "")
            )
        if "json" not in kind.lower():
            if "html" in kind.lower() or body.lstrip()[:1] == b"<":
                raise SearchError(f"SearXNG at {self.url} answered HTML, not JSON: {JSON_OFF}")
        try:
            reply = json.loads(body)
        except ValueError:
            what = kind or "no content type"
            raise SearchError(f"SearXNG at {self.url} answered something that is not JSON ({what})") from None
        if not isinstance(reply, dict):
            raise SearchError(f"SearXNG at {self.url} answered JSON that is not a search reply")
        return reply

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"SearxngSource({self.params})"


def _read_bounded(response: httpx.Response) -> bytes:
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > MAX_REPLY_BYTES:
            raise SearchError(f"SearXNG's reply is larger than {MAX_REPLY_BYTES:,} bytes: not a search page")
    return bytes(body)


def _transient(err: BaseException) -> bool:
    """Retried: rate limits, timeouts, a dropped connection, HTTP 5xx. Not: an unreachable instance (asked again
    it stays unreachable within a session: the chain's next source answers at once), anything it said in words."""
    if isinstance(err, RateLimited | httpx.TimeoutException | httpx.RemoteProtocolError | httpx.ReadError):
        return True
    return isinstance(err, httpx.HTTPStatusError)


def _retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_text(body: bytes) -> str:
    try:
        said = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    return clip(str(said), 200) if said else ""


def _unresponsive(reply: dict) -> str:
    """ "google (timeout), bing (HTTP error)" from a reply's unresponsive_engines ([[name, reason], ...])."""
    rows = reply.get("unresponsive_engines") or []
    named = [f"{row[0]} ({row[1]})" for row in rows if isinstance(row, list | tuple) and len(row) >= 2]
    return clip(", ".join(named), 300)


def build(corpus: str | None, settings: Settings, index_dir: Path) -> SearxngSource:
    """The ``searxng`` source kind (its row in ``state/source_kinds.py``): the ``searxng_*``, ``search_retries*`` and
    ``fetch_*`` settings; no corpus, no index."""
    return SearxngSource.from_settings(settings)
