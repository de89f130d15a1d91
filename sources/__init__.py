"""Search sources: the local FTS5 corpus, the embedded Wikipedia corpus, DuckDuckGo, the cache.

Web pages are read only through ``sources.fetch`` (the SSRF-guarded fetcher)
and ``sources.extract`` (main text).

``make_source(settings, home)`` builds the source a session uses, wrapped in
the on-disk search cache (``home/cache.db``); local indexes live in ``home/index``.
"""

from __future__ import annotations

from pathlib import Path

from saturate.state.context import SearchSource
from saturate.state.settings import Settings

from saturate.sources.cache import CachedSource, SearchCache, cache_key
from saturate.sources.ddg import DuckDuckGoSource
from saturate.sources.fetch import FetchError, FetchRefused, FetchedText, Page, fetch_page
from saturate.sources.local import INDEX_VERSION, CorpusError, LocalCorpus, match_expression
from saturate.sources.pages import SqlitePageStore
from saturate.sources.wiki import open_wiki

__all__ = [
    "INDEX_VERSION",
    "CachedSource",
    "CorpusError",
    "DuckDuckGoSource",
    "FetchError",
    "FetchRefused",
    "FetchedText",
    "Page",
    "LocalCorpus",
    "SearchCache",
    "SqlitePageStore",
    "cache_key",
    "fetch_page",
    "make_source",
    "match_expression",
    "open_wiki",
]

DDG_TIMEOUT_S = 10


def make_source(settings: Settings, home: Path | str) -> SearchSource:
    """The source ``settings.source`` names, behind the search cache at ``home/cache.db``."""
    home = Path(home).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    if settings.source == "local":
        inner: SearchSource = _open_corpus(settings.corpus, home / "index")
        # the index file name carries the corpus version: a changed corpus misses the cache
        params = {"index": inner.index_path.name if inner.index_path else None}
    elif settings.source == "ddg":
        # ddg_*, search_retries*, fetch_* (the page fetcher's bounds and allow list) come from the settings
        inner = DuckDuckGoSource.from_settings(settings, timeout=DDG_TIMEOUT_S)
        params = inner.params
    else:  # Settings validates the literal; this guards a future value
        raise ValueError(f"unknown source {settings.source!r}")
    return CachedSource(inner, SearchCache(home / "cache.db"), settings.cache_ttl_s, params=params)


def _open_corpus(corpus: str | None, index_dir: Path) -> LocalCorpus:
    if corpus is None:
        return open_wiki(index_dir)
    try:
        return LocalCorpus.open(corpus, index_dir)
    except CorpusError as err:
        raise CorpusError(f"{err} (the `corpus` setting, SATURATE_CORPUS, is {corpus!r})") from None
