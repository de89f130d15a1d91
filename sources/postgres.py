"""The search cache and the page store in PostgreSQL: the same interfaces as ``SearchCache`` and
``SqlitePageStore``, over a ``psycopg_pool.ConnectionPool`` the caller owns (``graph.storage``).

Used when ``database_url`` is set, so several processes and machines share one cache and one page store beside
the checkpoints. The cache is derived data: a query that fails (a lost connection) is a miss, noted once, and the
session goes on searching the source; the page store is the user's: a failed write is reported as not kept
(``put`` returns False), the answer falls back on the snippets. Nothing here imports psycopg: the pool brings it.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from saturate.state.records import SearchResult

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS saturate_search_cache (key TEXT PRIMARY KEY, source TEXT NOT NULL, "
    "query TEXT NOT NULL, stored_at DOUBLE PRECISION NOT NULL, results JSONB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS saturate_search_cache_stored_at ON saturate_search_cache (stored_at)",
    "CREATE TABLE IF NOT EXISTS saturate_pages (url TEXT PRIMARY KEY, text TEXT NOT NULL, "
    "stored_at DOUBLE PRECISION NOT NULL)",
)


class _PgTable:
    """Statements on one table through the pool; a database error is noted once and answers None."""

    def __init__(self, pool: Any, what: str):
        self.pool = pool
        self.what = what
        self._notes: list[str] = []
        self._noted = False
        self._lock = threading.Lock()

    def run(self, sql: str, params: tuple = ()) -> list[dict] | None:
        try:
            with self.pool.connection() as conn:
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []
        except Exception as err:  # psycopg.Error / PoolTimeout: a fault of the service, recorded, never raised
            with self._lock:
                if not self._noted:
                    self._noted = True
                    text = " ".join(str(err).split())[:200]
                    self._notes.append(f"{self.what} in PostgreSQL failed ({type(err).__name__}: {text})")
            return None

    def drain_notes(self) -> list[str]:
        with self._lock:
            out, self._notes = self._notes, []
        return out


class PgSearchCache:
    """key -> (stored_at, results) in ``saturate_search_cache`` (see ``SearchCache``)."""

    disabled = False

    def __init__(self, pool: Any):
        self._table = _PgTable(pool, "the search cache")
        self.path = None

    def get(self, key: str, max_age_s: float, now: float) -> list[SearchResult] | None:
        rows = self._table.run("SELECT stored_at, results FROM saturate_search_cache WHERE key = %s", (key,))
        if not rows or not (0 <= now - rows[0]["stored_at"] < max_age_s):
            return None
        try:
            return [SearchResult.model_validate(r) for r in rows[0]["results"]]
        except (ValueError, TypeError):
            return None

    def put(self, key: str, source: str, query: str, results: list[SearchResult], now: float) -> None:
        blob = json.dumps([r.model_dump() for r in results], ensure_ascii=False)
        self._table.run(
            "INSERT INTO saturate_search_cache (key, source, query, stored_at, results) "
            "VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (key) DO UPDATE SET "
            "stored_at = EXCLUDED.stored_at, results = EXCLUDED.results",
            (key, source, query, now, blob),
        )

    def prune(self, older_than_s: float, now: float | None = None, dry_run: bool = False) -> int:
        now = time.time() if now is None else now
        verb = "SELECT count(*) AS n" if dry_run else "WITH gone AS (DELETE"
        sql = (
            f"{verb} FROM saturate_search_cache WHERE stored_at < %s"
            if dry_run
            else f"{verb} FROM saturate_search_cache WHERE stored_at < %s RETURNING 1) SELECT count(*) AS n FROM gone"
        )
        rows = self._table.run(sql, (now - older_than_s,))
        return rows[0]["n"] if rows else 0

    def __len__(self) -> int:
        rows = self._table.run("SELECT count(*) AS n FROM saturate_search_cache")
        return rows[0]["n"] if rows else 0

    def drain_notes(self) -> list[str]:
        return self._table.drain_notes()

    def close(self) -> None:
        """The pool is the process's (``graph.storage``): nothing to close here."""


class PgPageStore:
    """Full page texts by URL in ``saturate_pages`` (see ``SqlitePageStore``)."""

    def __init__(self, pool: Any):
        self._table = _PgTable(pool, "the page store")
        self.path = None

    def put(self, url: str, text: str) -> bool:
        done = self._table.run(
            "INSERT INTO saturate_pages (url, text, stored_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (url) DO UPDATE SET text = EXCLUDED.text, stored_at = EXCLUDED.stored_at",
            (url, text.replace("\x00", ""), time.time()),  # PostgreSQL text holds no NUL
        )
        return done is not None

    def get(self, url: str) -> str | None:
        rows = self._table.run("SELECT text FROM saturate_pages WHERE url = %s", (url,))
        return rows[0]["text"] if rows else None

    def prune(self, older_than_s: float, now: float | None = None, dry_run: bool = False) -> int:
        now = time.time() if now is None else now
        if dry_run:
            rows = self._table.run(
                "SELECT count(*) AS n FROM saturate_pages WHERE stored_at < %s", (now - older_than_s,)
            )
        else:
            rows = self._table.run(
                "WITH gone AS (DELETE FROM saturate_pages WHERE stored_at < %s RETURNING 1) "
                "SELECT count(*) AS n FROM gone",
                (now - older_than_s,),
            )
        return rows[0]["n"] if rows else 0

    def __len__(self) -> int:
        rows = self._table.run("SELECT count(*) AS n FROM saturate_pages")
        return rows[0]["n"] if rows else 0

    def drain_notes(self) -> list[str]:
        return self._table.drain_notes()

    def close(self) -> None:
        """The pool is the process's (``graph.storage``): nothing to close here."""
