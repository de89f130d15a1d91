"""DuckDuckGoSource: web search through the ``ddgs`` metasearch library, pages through the safe fetcher.

Search: ddgs raises ``DDGSException("No results found.")`` rather than
returning []; that one case becomes [] and is never retried. A transient
failure — ddgs' TimeoutException or RatelimitException, a timeout,
connection error or temporary DNS failure, HTTP 429/5xx (ddgs folds the underlying error into
the DDGSException message, so the message is matched) — is retried with
backoff (``sources.retry``: bounded, logged, then a SearchError naming the
query, the attempts and the underlying error; nothing is swallowed).

Results and pages as every web source has them (``sources.web.WebSource``):
links that are not http(s) dropped, text defused; ``fetch(result)`` reads the
page through the safe fetcher and returns its main text.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from saturate.sources.web import WebSource
from saturate.state.records import SearchResult
from saturate.state.settings import Settings

NO_RESULTS = "No results found."

_TRANSIENT = re.compile(
    r"time[ds]?\s?out|timeout|connect|connection|dns|resolv|network|unreachable|reset by peer|broken pipe|"
    r"temporar|rate\s?limit|too many requests|\b429\b|\b50[0-4]\b|service unavailable|bad gateway",
    re.IGNORECASE,
)


# a host name that does not resolve: retrying it only repeats the failure (unlike "Temporary failure in name
# resolution", EAI_AGAIN, which is retried)
_NO_SUCH_HOST = re.compile(
    r"name or service not known|nodename nor servname|no address associated with hostname|\bNXDOMAIN\b",
    re.IGNORECASE,
)


def is_transient(err: BaseException) -> bool:
    """A failure worth retrying: timeouts, connection errors, a temporary DNS failure, rate limits, HTTP 429/5xx.
    A host name that does not resolve is not (``_NO_SUCH_HOST``)."""
    if _is_no_results(err):
        return False
    if (isinstance(err, socket.gaierror) and err.errno == socket.EAI_NONAME) or _NO_SUCH_HOST.search(str(err)):
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


class DuckDuckGoSource(WebSource):
    """A SearchSource over ``DDGS().text`` with bounded retries; ``fetch`` reads pages safely (``WebSource``)."""

    name = "ddg"

    def __init__(
        self,
        region: str = "wt-wt",
        safesearch: str = "moderate",
        timelimit: str | None = None,
        backend: str = "auto",
        timeout: int | None = 10,
        ddgs_factory: Callable[..., Any] | None = None,
        **web: Any,
    ):
        """``ddgs_factory(timeout=...)`` returns an object with ddgs' ``text()``; default ``DDGS``. ``web``: the
        retry and fetch settings of ``WebSource``."""
        super().__init__(**web)
        self.region = region
        self.safesearch = safesearch
        self.timelimit = timelimit
        self.backend = backend
        self.timeout = timeout
        self._factory = ddgs_factory or _default_factory

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> DuckDuckGoSource:
        """A source configured by a ``Settings`` (ddg_*, search_retries*, fetch_*); kwargs win."""
        options = dict(
            region=settings.ddg_region,
            safesearch=settings.ddg_safesearch,
            timelimit=settings.ddg_timelimit,
            backend=settings.ddg_backend,
            **cls.web_options(settings),
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

        rows = self._retrying(ask, query, is_transient)
        return self._results(rows, k, url="href", title="title", text="body")

    def __repr__(self) -> str:
        return f"DuckDuckGoSource({self.params})"


def _is_no_results(err: BaseException) -> bool:
    """Exactly ddgs' DDGSException("No results found.") (not a subclass, not another message)."""
    try:
        from ddgs.exceptions import DDGSException
    except ImportError:  # a stand-in factory without ddgs installed
        return type(err).__name__ == "DDGSException" and str(err) == NO_RESULTS
    return type(err) is DDGSException and str(err) == NO_RESULTS


DDG_TIMEOUT_S = 10  # ddgs' own per-request timeout (retries are counted by search_retries)


def build(corpus: str | None, settings: Settings, index_dir: Path) -> DuckDuckGoSource:
    """The ``ddg`` source kind (its row in ``state/source_kinds.py``): the ``ddg_*``, ``search_retries*`` and
    ``fetch_*`` settings; no corpus, no index."""
    return DuckDuckGoSource.from_settings(settings, timeout=DDG_TIMEOUT_S)
