"""The SQLite file setup the search cache and the page store share."""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 5000


def connect(path: Path, schema: str, synchronous: str | None = None) -> sqlite3.Connection:
    """An autocommit connection usable from any thread, WAL journal, busy timeout, ``schema`` applied.

    Shared across threads (callers hold their own lock) and processes (WAL + busy timeout).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA journal_mode = WAL")
    if synchronous:
        db.execute(f"PRAGMA synchronous = {synchronous}")
    db.execute(schema)
    return db
