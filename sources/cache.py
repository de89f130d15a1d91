"""A search-result cache on disk (SQLite) and CachedSource, a SearchSource that uses it.

Entries are keyed by sha256 of JSON [source name, query, k, params]; ``params``
holds whatever else changes the answer (DDG region, the corpus version...).
Errors are never cached. WAL mode and a busy timeout let several processes
share the file; one connection behind a lock serves the threads of a process.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

from saturate.sources.postgres import PgSearchCache
from saturate.sources.sqlite_file import StoreDb
from saturate.state.context import SearchSource
from saturate.state.records import SearchResult


def cache_key(source: str, query: str, k: int, params: dict | None = None) -> str:
    blob = json.dumps([source, query, k, params or {}], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class SearchCache:
    """key -> (stored_at, results) in an SQLite file (derived data: a damaged file is moved aside, see StoreDb)."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS searches (key TEXT PRIMARY KEY, source TEXT NOT NULL, "
        "query TEXT NOT NULL, stored_at REAL NOT NULL, results TEXT NOT NULL)"
    )

    def __init__(self, path: Path | str):
        self._file = StoreDb(path, self.SCHEMA, "searches", "search cache", synchronous="NORMAL")
        self.path = self._file.path

    @property
    def disabled(self) -> bool:
        """The file could not be repaired: searches go to the source and nothing is cached."""
        return self._file.disabled

    def get(self, key: str, max_age_s: float, now: float) -> list[SearchResult] | None:
        """The results stored under ``key`` if stored within the last ``max_age_s`` seconds."""
        rows = self._file.rows("SELECT stored_at, results FROM searches WHERE key = ?", (key,))
        if not rows or not (0 <= now - rows[0][0] < max_age_s):
            return None
        try:
            return [SearchResult.model_validate(r) for r in json.loads(rows[0][1])]
        except ValueError:  # an entry garbled on disk is a miss (asked again, then overwritten)
            return None

    def put(self, key: str, source: str, query: str, results: list[SearchResult], now: float) -> None:
        blob = json.dumps([r.model_dump() for r in results], ensure_ascii=False)
        self._file.change(
            "INSERT OR REPLACE INTO searches (key, source, query, stored_at, results) VALUES (?, ?, ?, ?, ?)",
            (key, source, query, now, blob),
        )

    def prune(self, older_than_s: float, now: float | None = None, dry_run: bool = False) -> int:
        """Delete entries older than ``older_than_s`` (or only count them); returns how many."""
        now = time.time() if now is None else now
        return self._file.prune(now - older_than_s, dry_run)

    def __len__(self) -> int:
        rows = self._file.rows("SELECT count(*) FROM searches")
        return rows[0][0] if rows else 0

    def drain_notes(self) -> list[str]:
        """The notes not yet reported, once each (a session records them as fallbacks)."""
        return self._file.drain_notes()

    def close(self) -> None:
        self._file.close()


class CachedSource:
    """A SearchSource that answers from ``cache`` within ``ttl_s`` and asks ``inner`` otherwise.

    ``ttl_s == 0`` disables the cache (every search goes to ``inner``, nothing is
    stored). ``name`` and ``fetch`` are the inner source's.
    """

    def __init__(
        self,
        inner: SearchSource,
        cache: SearchCache | PgSearchCache,
        ttl_s: float,
        params: dict | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.inner = inner
        self.cache = cache
        self.ttl_s = ttl_s
        self.params = dict(params or {})
        self.clock = clock
        self.name = inner.name
        self.hits = 0
        self.misses = 0
        self._count_lock = threading.Lock()

    def search(self, query: str, k: int) -> list[SearchResult]:
        if self.ttl_s <= 0 or self.cache.disabled:
            self._count(hit=False)
            return self.inner.search(query, k)
        key = cache_key(self.name, query, k, self.params)
        cached = self.cache.get(key, self.ttl_s, self.clock())
        if cached is not None:
            self._count(hit=True)
            return cached
        self._count(hit=False)
        results = self.inner.search(query, k)  # an error propagates and nothing is stored
        self.cache.put(key, self.name, query, results, self.clock())
        return results

    def fetch(self, result: SearchResult) -> str:
        return self.inner.fetch(result)

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        """The inner corpus's stored document vectors (``LocalCorpus.vectors_of``); {} for a source without them."""
        inner = getattr(self.inner, "vectors_of", None)
        return inner(ids) if inner is not None else {}

    def meaning(self, question: str, ids: list[str], identity: str) -> dict[str, float]:
        """The inner corpus's ``LocalCorpus.meaning``; {} for a source without stored vectors."""
        inner = getattr(self.inner, "meaning", None)
        return inner(question, ids, identity) if inner is not None else {}

    @property
    def vector_identity(self) -> str | None:
        return getattr(self.inner, "vector_identity", None)

    @property
    def retrieval(self) -> str:
        """How the inner source ranks ("lexical (BM25)", "hybrid: <model>"; web search: "its own ranking")."""
        return getattr(self.inner, "name_detail", "its own ranking")

    def documents(self, ids: list[str]) -> dict[str, str]:
        """The inner source's local document texts (``LocalCorpus.documents``); {} for a source without them."""
        inner = getattr(self.inner, "documents", None)
        return inner(ids) if inner is not None else {}

    def drain_notes(self) -> list[str]:
        """What happened to the cache and the inner source's files since the last call."""
        inner = getattr(self.inner, "drain_notes", None)
        return self.cache.drain_notes() + (inner() if inner is not None else [])

    def close(self) -> None:
        """Close the cache file and the inner source's (its index connection); both may be closed twice."""
        self.cache.close()
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def query_key(self, query: str) -> str:
        """The inner source's query key (what it really searches), else the query itself."""
        key = getattr(self.inner, "query_key", None)
        return key(query) if key is not None else " ".join(query.split()).lower()

    def _count(self, hit: bool) -> None:
        with self._count_lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def __repr__(self) -> str:
        return f"CachedSource({self.inner!r}, ttl_s={self.ttl_s}, hits={self.hits}, misses={self.misses})"
