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

from saturate.sources.sqlite_file import connect
from saturate.state.context import SearchSource
from saturate.state.records import SearchResult


def cache_key(source: str, query: str, k: int, params: dict | None = None) -> str:
    blob = json.dumps([source, query, k, params or {}], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class SearchCache:
    """key -> (stored_at, results) in an SQLite file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect(
            self.path,
            "CREATE TABLE IF NOT EXISTS searches (key TEXT PRIMARY KEY, source TEXT NOT NULL, "
            "query TEXT NOT NULL, stored_at REAL NOT NULL, results TEXT NOT NULL)",
            synchronous="NORMAL",
        )

    def get(self, key: str, max_age_s: float, now: float) -> list[SearchResult] | None:
        """The results stored under ``key`` if stored within the last ``max_age_s`` seconds."""
        with self._lock:
            row = self._db.execute("SELECT stored_at, results FROM searches WHERE key = ?", (key,)).fetchone()
        if row is None or not (0 <= now - row[0] < max_age_s):
            return None
        return [SearchResult.model_validate(r) for r in json.loads(row[1])]

    def put(self, key: str, source: str, query: str, results: list[SearchResult], now: float) -> None:
        blob = json.dumps([r.model_dump() for r in results], ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO searches (key, source, query, stored_at, results) VALUES (?, ?, ?, ?, ?)",
                (key, source, query, now, blob),
            )

    def prune(self, older_than_s: float, now: float | None = None) -> int:
        """Delete entries older than ``older_than_s``; returns how many."""
        now = time.time() if now is None else now
        with self._lock:
            return self._db.execute("DELETE FROM searches WHERE stored_at < ?", (now - older_than_s,)).rowcount

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM searches").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedSource:
    """A SearchSource that answers from ``cache`` within ``ttl_s`` and asks ``inner`` otherwise.

    ``ttl_s == 0`` disables the cache (every search goes to ``inner``, nothing is
    stored). ``name`` and ``fetch`` are the inner source's.
    """

    def __init__(
        self,
        inner: SearchSource,
        cache: SearchCache,
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
        if self.ttl_s <= 0:
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
