"""DuckDuckGoSource with stand-in DDGS objects (the real ddgs exceptions) and once with the real DDGS."""

from __future__ import annotations

import socket
import time

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from saturate.sources import DuckDuckGoSource
from saturate.state.context import SearchError, SearchSource
from saturate.state.records import SearchResult

ROWS = [
    {
        "title": "Victoria Falls - Wikipedia",
        "href": "https://en.wikipedia.org/wiki/Victoria_Falls",
        "body": "Waterfall " * 200,
    },
    {"title": "Visit Zambia", "href": "https://zambia.travel/falls", "body": "The Smoke that Thunders."},
    {"title": "Duplicate", "href": "https://zambia.travel/falls", "body": "again"},
    {"title": "No link", "body": "dropped"},
    {"title": "Third", "href": "https://example.org/3", "body": None},
]


class StandIn:
    """Records how it was built and called; returns rows or raises."""

    def __init__(self, rows=None, error: Exception | None = None):
        self.rows, self.error = rows or [], error
        self.made: list[dict] = []
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, **kwargs):
        self.made.append(kwargs)
        return self

    def text(self, query, **kwargs):
        self.calls.append((query, kwargs))
        if self.error is not None:
            raise self.error
        return self.rows[: kwargs["max_results"]]


def test_rows_become_results():
    fake = StandIn(ROWS)
    src = DuckDuckGoSource(
        region="us-en", safesearch="off", timelimit="w", backend="duckduckgo", timeout=7, ddgs_factory=fake
    )
    assert isinstance(src, SearchSource) and src.name == "ddg"
    results = src.search("victoria falls", 5)
    assert [r.url for r in results] == [
        "https://en.wikipedia.org/wiki/Victoria_Falls",
        "https://zambia.travel/falls",
        "https://example.org/3",
    ]
    first = results[0]
    assert isinstance(first, SearchResult) and first.id == first.url and first.source == "ddg"
    assert first.score is None and first.title == "Victoria Falls - Wikipedia"
    assert len(first.snippet) <= 500 and first.snippet.endswith("…")
    assert results[2].snippet == ""
    assert fake.made == [{"timeout": 7}]
    assert fake.calls == [
        (
            "victoria falls",
            {"region": "us-en", "safesearch": "off", "timelimit": "w", "backend": "duckduckgo", "max_results": 5},
        )
    ]


def test_results_without_a_web_link_are_skipped():
    rows = [
        {"href": "javascript:alert(1)", "title": "evil", "body": "x"},
        {"href": "https://example.org/a", "title": "fine", "body": "y"},
        {"href": "/relative/path", "title": "no host", "body": "z"},
        {"href": "https://exa mple.org/b", "title": "space", "body": "w"},
        {"href": None, "title": "none", "body": "v"},
    ]
    assert [r.url for r in DuckDuckGoSource(ddgs_factory=StandIn(rows)).search("q", 10)] == ["https://example.org/a"]


def test_k_caps_results():
    assert len(DuckDuckGoSource(ddgs_factory=StandIn(ROWS)).search("falls", 1)) == 1


def test_blank_query_is_not_sent():
    fake = StandIn(ROWS)
    assert DuckDuckGoSource(ddgs_factory=fake).search("   ", 5) == [] and fake.calls == []


def test_no_results_exception_is_empty():
    assert DuckDuckGoSource(ddgs_factory=StandIn(error=DDGSException("No results found."))).search("zzqx", 5) == []


@pytest.mark.parametrize(
    "error",
    [
        DDGSException("DNSError: error resolving DNS"),
        RatelimitException("202 Ratelimit"),
        TimeoutException("timed out"),
        RatelimitException("No results found."),  # a subclass is a real failure even with that message
        ConnectionError("connection reset by peer"),
        ValueError("bad region"),
    ],
)
def test_other_errors_become_search_errors(error: Exception):
    src = DuckDuckGoSource(ddgs_factory=StandIn(error=error), sleep=lambda s: None)  # transient ones are retried first
    with pytest.raises(SearchError) as info:
        src.search("victoria falls", 5)
    message = str(info.value)
    assert "'victoria falls'" in message and type(error).__name__ in message and str(error) in message
    assert info.value.__cause__ is error


def test_fetch_goes_through_the_safe_fetcher():
    """Pages are read by sources.fetch (tests/test_fetch.py, tests/test_web_enrich.py); here: no network needed."""
    from saturate.sources.fetch_errors import FetchRefused

    src = DuckDuckGoSource(ddgs_factory=StandIn(ROWS))
    for url in ("file:///etc/passwd", "http://169.254.169.254/latest/meta-data/", "http://[::1]/"):
        with pytest.raises(FetchRefused):
            src.fetch(SearchResult(id=url, url=url))


def test_real_ddgs_without_network_raises_search_error():
    src = DuckDuckGoSource(timeout=3)
    start = time.monotonic()
    try:
        results = src.search("victoria falls zambezi", 3)
    except SearchError as err:
        assert "victoria falls zambezi" in str(err) and "Exception" in str(err)
    else:  # pragma: no cover - only where a network is available
        pytest.skip(f"a network is available here: got {len(results)} results")
    assert time.monotonic() - start < 20


@pytest.mark.parametrize(
    ("error", "attempts"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), 1),  # no such host: not retried
        (DDGSException("ConnectError: [Errno -2] Name or service not known"), 1),
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), 3),  # retried
    ],
)
def test_a_host_that_does_not_resolve_is_not_retried(error, attempts):
    fake = StandIn(error=error)
    src = DuckDuckGoSource(ddgs_factory=fake, sleep=lambda s: None, retries=2)
    with pytest.raises(SearchError, match=f"after {attempts} attempt"):
        src.search("victoria falls", 5)
    assert len(fake.calls) == attempts
