"""Search sources: the local FTS5 corpus, the embedded Wikipedia corpus, DuckDuckGo, the cache.

Web pages are read only through ``sources.fetch`` (the SSRF-guarded fetcher)
and ``sources.extract`` (main text).

``sources.factory`` builds any source for both modes (``make_source`` for the
single loop, ``open_sources`` for a multi-source session), wrapped in the
on-disk search cache (``home/cache.db``); local indexes live in ``home/index``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from saturate.sources.cache import CachedSource, SearchCache, cache_key
from saturate.sources.factory import make_source, open_source, open_sources, resolve_specs
from saturate.sources.fetch_errors import FetchError, FetchRefused
from saturate.sources.local import INDEX_VERSION, CorpusError, LocalCorpus, match_expression
from saturate.sources.pages import SqlitePageStore
from saturate.sources.wiki import open_wiki

if TYPE_CHECKING:  # what the type checker and editors see; at run time each is imported on first use
    from saturate.sources.ddg import DuckDuckGoSource
    from saturate.sources.fetch import FetchedText, Page, fetch_page

# the web's sources and the page fetcher (httpcore and the SSRF guard): loaded on first use (PEP 562 ``__getattr__``),
# so a session on a local corpus does not import them (the factory imports a source kind's module when it is asked for)
_LAZY = {
    "DuckDuckGoSource": "saturate.sources.ddg",
    "FetchedText": "saturate.sources.fetch",
    "Page": "saturate.sources.fetch",
    "fetch_page": "saturate.sources.fetch",
}

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
    "open_source",
    "open_sources",
    "open_wiki",
    "resolve_specs",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'saturate.sources' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


# One name per module: this folder is the sub-package `saturate.sources` (saturate/sources links here). Imported as
# `sources` it would be a second copy of every module in it, with its own classes and caches: refused here, and by
# ruff's banned-api rule before anything runs (pyproject.toml).
if __name__ != "saturate.sources":
    raise ImportError(f"import saturate.sources, not {__name__} (docs/layout.md: one name per module)")
