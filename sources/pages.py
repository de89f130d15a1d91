"""SqlitePageStore: full page texts kept beside the checkpoint, keyed by URL (a PageStore).

The pages are what sessions read, so the file is the user's: a damaged one is
a ``PagesDbError`` at open (one line naming the file and what to do), never
replaced; damage found mid-session stops its use for that session (noted) and
the answer falls back on the snippets (see StoreDb).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from saturate.sources.sqlite_file import StoreDb
from saturate.state.errors import BadInput


class PagesDbError(BadInput):
    """pages.db is damaged: named, never replaced (it holds the pages sessions read)."""


class SqlitePageStore:
    def __init__(self, path: Path | str):
        path = Path(path)

        def damaged(err: BaseException) -> PagesDbError:
            if isinstance(err, OSError) or isinstance(err, sqlite3.OperationalError):
                return PagesDbError(f"{path} cannot be opened ({type(err).__name__}: {err})")
            return PagesDbError(
                f"{path} is not a readable SQLite database ({type(err).__name__}: {err}): it holds the full pages "
                "sessions read, so it is left as it is; restore it from a backup, or move it away (finished "
                "sessions keep their answers; new ones fetch pages again)"
            )

        self._file = StoreDb(
            path,
            "CREATE TABLE IF NOT EXISTS pages (url TEXT PRIMARY KEY, text TEXT NOT NULL, stored_at REAL NOT NULL)",
            "pages",
            "page store",
            on_damage=damaged,
        )
        self.path = self._file.path

    def put(self, url: str, text: str) -> bool:
        """Store a page; False when the file is bypassed (the page is not kept)."""
        done = self._file.change(
            "INSERT OR REPLACE INTO pages (url, text, stored_at) VALUES (?, ?, ?)", (url, text, time.time())
        )
        return done is not None

    def get(self, url: str) -> str | None:
        rows = self._file.rows("SELECT text FROM pages WHERE url = ?", (url,))
        return rows[0][0] if rows else None

    def prune(self, older_than_s: float, now: float | None = None, dry_run: bool = False) -> int:
        """Delete pages stored more than ``older_than_s`` ago (or only count them); returns how many."""
        now = time.time() if now is None else now
        return self._file.prune(now - older_than_s, dry_run)

    def __len__(self) -> int:
        rows = self._file.rows("SELECT count(*) FROM pages")
        return rows[0][0] if rows else 0

    def drain_notes(self) -> list[str]:
        """What happened to the file (moved aside after damage ...) since the last call."""
        return self._file.drain_notes()

    def close(self) -> None:
        self._file.close()
