"""SqlitePageStore: full page texts kept beside the checkpoint, keyed by URL (a PageStore)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from saturate.sources.sqlite_file import connect


class SqlitePageStore:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = connect(
            self.path,
            "CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, text TEXT NOT NULL, stored_at REAL NOT NULL)",
        )

    def put(self, url: str, text: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO pages (url, text, stored_at) VALUES (?, ?, ?)", (url, text, time.time())
            )

    def get(self, url: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT text FROM pages WHERE url = ?", (url,)).fetchone()
        return None if row is None else row[0]

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM pages").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
