"""``saturate prune``: keep the data directory small without losing a session anyone still wants.

What it removes, and only that:

- with ``older_than_days``: whole sessions last updated before then (every status: an unfinished one that old is
  abandoned; a session whose checkpoints no longer decode has no known age and is kept, noted), page texts stored
  before then, and ``*.damaged-*`` files (damaged caches moved aside) older than it;
- with ``compact``: the history of **finished** sessions — every checkpoint but the last, so ``show``,
  ``runs``, the report and ``--json`` still see the whole session (its rounds are in its state) but it can no
  longer be forked or replayed from an earlier round; unfinished sessions keep every checkpoint (resume needs
  them);
- always: search-cache entries older than ``cache_ttl_s`` (they would never be used again).

Then each database is compacted (SQLite ``VACUUM``) so the space goes back to the disk. ``dry_run`` counts what
would go and changes nothing. LangGraph's ``SqliteSaver`` has ``delete_thread`` (used) but no ``prune``
(``BaseCheckpointSaver.prune`` raises NotImplementedError there), so "keep the latest" is three statements on its
two tables here; the graphs use no ``DeltaChannel``, so the last checkpoint holds the whole state.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from saturate.graph import storage
from saturate.graph.paths import home_dir
from saturate.graph.session import DAMAGED, list_sessions, open_checkpointer
from saturate.sources.cache import SearchCache
from saturate.sources.pages import SqlitePageStore
from saturate.state.errors import BadInput
from saturate.state.settings import Settings, load_settings
from saturate.state.text import printable

DAY_S = 86400.0
DATABASES = ("sessions.db", "cache.db", "pages.db")


@dataclass
class PruneReport:
    dry_run: bool
    deleted: list[dict] = field(default_factory=list)  # {thread, task, status, updated}
    compacted: list[str] = field(default_factory=list)  # finished threads whose history was dropped
    checkpoints_removed: int = 0
    cache_entries: int = 0
    pages: int = 0
    damaged_files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # a damaged cache or page store met on the way (moved aside)
    bytes_before: dict[str, int] = field(default_factory=dict)
    bytes_after: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def prune(
    home=None,
    older_than_days: float | None = None,
    compact: bool = False,
    dry_run: bool = False,
    settings: Settings | None = None,
    now: float | None = None,
    database_url: str | None = None,
) -> PruneReport:
    """Remove what the docstring above says from the data directory ``home`` (or the PostgreSQL database in
    force); a report of what went (or would)."""
    if older_than_days is not None and (
        isinstance(older_than_days, bool) or not isinstance(older_than_days, (int, float))
    ):
        raise BadInput(f"prune(older_than_days=...) takes a number of days (got {type(older_than_days).__name__})")
    if older_than_days is not None and not (older_than_days >= 0):
        raise BadInput(f"--older-than must be a number of days >= 0 (got {older_than_days})")
    settings = settings or load_settings({})
    now = time.time() if now is None else now
    path = home_dir(home, create=False)
    cutoff = None if older_than_days is None else now - older_than_days * DAY_S
    url = storage.database_url(database_url)
    if url:
        with storage.using(url):
            return _prune_postgres(url, path, cutoff, compact, dry_run, settings, now)
    report = PruneReport(dry_run=dry_run, bytes_before=_sizes(path))
    if not path.is_dir():
        return report
    if (path / "sessions.db").exists():
        _prune_sessions(path, cutoff, compact, dry_run, report)
    if (path / "cache.db").exists():
        report.cache_entries = _prune_rows(SearchCache(path / "cache.db"), settings.cache_ttl_s, now, report)
    if cutoff is not None and (path / "pages.db").exists():
        report.pages = _prune_rows(SqlitePageStore(path / "pages.db"), now - cutoff, now, report)
    if cutoff is not None:
        for f in sorted(path.glob("*.damaged-*")):
            if f.stat().st_mtime < cutoff:
                report.damaged_files.append(f.name)
                if not dry_run:
                    f.unlink(missing_ok=True)
    if not dry_run:
        for name in DATABASES:
            _vacuum(path / name)
    report.bytes_after = _sizes(path)
    return report


def _prune_sessions(path: Path, cutoff: float | None, compact: bool, dry_run: bool, report: PruneReport) -> None:
    sessions = _readable(list_sessions(home=path), report)
    old = [s for s in sessions if cutoff is not None and _epoch(s["updated"]) < cutoff]
    gone = {s["thread"] for s in old}
    report.deleted = [{k: s[k] for k in ("thread", "task", "status", "updated")} for s in old]
    done = [s["thread"] for s in sessions if compact and s["status"] == "done" and s["thread"] not in gone]
    with open_checkpointer(path) as saver:
        conn = saver.conn
        for thread in done:
            history = conn.execute(
                "SELECT count(*) FROM checkpoints c WHERE thread_id = ? AND checkpoint_id < "
                "(SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = c.checkpoint_ns)",
                (thread, thread),
            ).fetchone()[0]
            if history:
                report.compacted.append(thread)
                report.checkpoints_removed += history
        for thread in gone:
            report.checkpoints_removed += conn.execute(
                "SELECT count(*) FROM checkpoints WHERE thread_id = ?", (thread,)
            ).fetchone()[0]
        if dry_run:
            return
        for thread in gone:
            saver.delete_thread(thread)
        with conn:  # one transaction: a crash leaves each session either whole or compacted
            for thread in report.compacted:
                _keep_latest(conn, thread)


def _prune_postgres(
    url: str, path: Path, cutoff: float | None, compact: bool, dry_run: bool, settings: Settings, now: float
) -> PruneReport:
    """The same on PostgreSQL: LangGraph's ``PostgresSaver.delete_thread`` and ``prune(strategy="keep_latest")``
    (its own transaction per thread); the server's autovacuum gives the space back, so no sizes are reported."""
    report = PruneReport(dry_run=dry_run)
    sessions = _readable(list_sessions(home=path), report)
    old = [s for s in sessions if cutoff is not None and _epoch(s["updated"]) < cutoff]
    gone = {s["thread"] for s in old}
    report.deleted = [{k: s[k] for k in ("thread", "task", "status", "updated")} for s in old]
    done = [s["thread"] for s in sessions if compact and s["status"] == "done" and s["thread"] not in gone]
    with open_checkpointer(path) as saver, saver.conn.connection() as conn:
        for thread in done:
            history = conn.execute(
                "SELECT count(*) AS n FROM checkpoints c WHERE thread_id = %s AND checkpoint_id < (SELECT "
                "MAX(checkpoint_id) FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = c.checkpoint_ns)",
                (thread, thread),
            ).fetchone()["n"]
            if history:
                report.compacted.append(thread)
                report.checkpoints_removed += history
        for thread in gone:
            report.checkpoints_removed += conn.execute(
                "SELECT count(*) AS n FROM checkpoints WHERE thread_id = %s", (thread,)
            ).fetchone()["n"]
    if not dry_run:
        with open_checkpointer(path) as saver:
            for thread in gone:
                saver.delete_thread(thread)
            if report.compacted:
                saver.prune(report.compacted, strategy="keep_latest")
    report.cache_entries = _prune_rows(storage.search_cache(url, path), settings.cache_ttl_s, now, report)
    if cutoff is not None:
        report.pages = _prune_rows(storage.page_store(url, path), now - cutoff, now, report)
    return report


def _readable(sessions: list[dict], report: PruneReport) -> list[dict]:
    """The sessions whose checkpoints could be read; each damaged one is kept as it is and noted: its last update
    is unknown, and deleting what cannot be read would lose what a backup or ``.recover`` could still give back."""
    out = []
    for s in sessions:
        if s["status"].startswith(DAMAGED):
            report.notes.append(f"session '{printable(s['thread'])}' kept: {printable(s['status'])}")
        else:
            out.append(s)
    return out


def _keep_latest(conn: sqlite3.Connection, thread: str) -> None:
    """Every checkpoint (and its pending writes) of ``thread`` but the latest of each namespace."""
    latest = (
        "(SELECT MAX(checkpoint_id) FROM checkpoints x WHERE x.thread_id = ? AND x.checkpoint_ns = {t}.checkpoint_ns)"
    )
    conn.execute(
        f"DELETE FROM writes WHERE thread_id = ? AND checkpoint_id < {latest.format(t='writes')}", (thread, thread)
    )
    conn.execute(
        f"DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < {latest.format(t='checkpoints')}",
        (thread, thread),
    )
    conn.execute("UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ?", (thread,))


def _prune_rows(store: Any, older_than_s: float, now: float, report: PruneReport) -> int:
    """Through the stores' own classes: a damaged file is handled as a session would (moved aside, noted)."""
    try:
        return store.prune(older_than_s, now, report.dry_run)
    finally:
        report.notes += store.drain_notes()
        store.close()


def _vacuum(db_path: Path) -> None:
    if not db_path.exists():
        return
    conn = sqlite3.connect(db_path, timeout=30)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
    finally:
        conn.close()


def _sizes(path: Path) -> dict[str, int]:
    """Bytes on disk of each database, its WAL included."""
    out = {}
    for name in DATABASES:
        files = [path / name, path / f"{name}-wal"]
        if files[0].exists():
            out[name] = sum(f.stat().st_size for f in files if f.exists())
    return out


def _epoch(iso: str | None) -> float:
    """A checkpoint's ``created_at`` (ISO 8601 with offset) as seconds since the epoch."""
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp() if iso else 0.0
