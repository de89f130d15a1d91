"""SqlitePageStore: full page texts kept beside the checkpoint, keyed by URL (a PageStore).

Pages are derived data (fetched again when missing): a damaged file is moved
aside and the session goes on with the snippets, noted (see DerivedDb).
"""

from __future__ import annotations

import time
from pathlib import Path

from saturate.sources.sqlite_file import DerivedDb


class SqlitePageStore:
    def __init__(self, path: Path | str):
        self._file = DerivedDb(
            path,
            "CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, text TEXT NOT NULL, stored_at REAL NOT NULL)",
            "pages",
            "page store",
        )
        self.path = self._file.path

    def put(self, url: str, text: str) -> bool:
        """Store a page; False when the file is bypassed (the page is not kept)."""
        done = self._file.run(
            "INSERT OR REPLACE INTO pages (url, text, stored_at) VALUES (?, ?, ?)", (url, text, time.time())
        )
        return done is not None

    def get(self, url: str) -> str | None:
        rows = self._file.run("SELECT text FROM pages WHERE url = ?", (url,))
        return rows[0][0] if rows else None

    def prune(self, older_than_s: float, now: float | None = None, dry_run: bool = False) -> int:
        """Delete pages stored more than ``older_than_s`` ago (or only count them); returns how many."""
        now = time.time() if now is None else now
        return self._file.prune(now - older_than_s, dry_run)

    def __len__(self) -> int:
        rows = self._file.run("SELECT count(*) FROM pages")
        return rows[0][0] if rows else 0

    def drain_notes(self) -> list[str]:
        """What happened to the file (moved aside after damage ...) since the last call."""
        return self._file.drain_notes()

    def close(self) -> None:
        self._file.close()
