"""The SQLite file setup the search cache and the page store share (``StoreDb``).

The search cache is derived data (searches are asked again when missing): a
damaged one never fails a session — it is moved aside (``NAME.damaged-TIMESTAMP``,
nothing deleted), an empty one started and the repair noted; if even that fails
the file is bypassed (noted) and every read is a miss.

The page store holds what sessions read (their pages): it is the user's data,
never replaced behind their back — a damaged one found at open is an error
naming the file and what to do (``on_damage``); damage found mid-session stops
its use for that session (noted), the file left as it is.
"""

from __future__ import annotations

import errno
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout

BUSY_TIMEOUT_MS = 5000
SETUP_LOCK_TIMEOUT_S = 60  # the setup lock is held for milliseconds: waiting this long means a stuck holder


def connect(
    path: Path, schema: str, synchronous: str | None = None, busy_timeout_ms: int = BUSY_TIMEOUT_MS
) -> sqlite3.Connection:
    """An autocommit connection usable from any thread, WAL journal, busy timeout, ``schema`` applied.

    Shared across threads (callers hold their own lock) and processes (WAL + busy timeout).

    Switching a new file to WAL takes its write lock, and SQLite answers "database is locked" at once (no busy wait)
    to a connection switching the journal mode while another does: of two processes opening a new cache.db at the
    same moment, one got it in 24 of 200 tries (``saturate batch`` workers: that task's session failed). The setup
    runs one process at a time, under ``.NAME.lock`` beside the file (embeddings.db, seen failing so with eight
    connections opening together on a loaded machine, opens through here too: graph/embeddings.py).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=busy_timeout_ms / 1000)
    try:
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        with FileLock(path.with_name(f".{path.name}.lock"), timeout=SETUP_LOCK_TIMEOUT_S):
            db.execute("PRAGMA journal_mode = WAL")
            db.execute(schema)
        if synchronous:
            db.execute(f"PRAGMA synchronous = {synchronous}")
    except BaseException:
        db.close()
        raise
    return db


def is_busy(err: BaseException) -> bool:
    """A lock held by another process past the busy timeout, or a full or failing disk: not damage of the file,
    so never moved aside; raised (a full disk stops the session at its last checkpoint, see the CLI)."""
    text = str(err).lower()
    if isinstance(err, Timeout):  # the setup lock (``connect``) held past its timeout
        return True
    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
    return isinstance(err, sqlite3.OperationalError) and any(
        word in text for word in ("locked", "busy", "full", "disk i/o")
    )


def _execute(db: sqlite3.Connection, sql: str, args: tuple) -> list[tuple] | int:
    cur = db.execute(sql, args)
    return cur.fetchall() if cur.description is not None else cur.rowcount


class StoreDb:
    """One SQLite file behind a lock: queries through ``rows``, changes through ``change``; damage never raises
    mid-session.

    ``what`` names the file in notes ("search cache", "page store"); ``table`` is
    the table read once at open so a garbage file fails there, not mid-session.
    ``on_damage`` (user data): called with the error when the file is damaged at
    open, and what it returns is raised; without it (derived data) the file is
    repaired as the module docstring says.
    """

    def __init__(
        self,
        path: Path | str,
        schema: str,
        table: str,
        what: str,
        synchronous: str | None = None,
        on_damage: Callable[[BaseException], Exception] | None = None,
    ):
        self.path = Path(path)
        self.schema, self.table, self.what, self.synchronous = schema, table, what, synchronous
        self.on_damage = on_damage
        self._lock = threading.Lock()
        self.notes: list[str] = []  # what happened to the file, reported once each (drain_notes)
        self.disabled = False  # the file cannot be used: reads miss, writes are dropped
        try:
            self._db: sqlite3.Connection | None = self._open()
        except (sqlite3.DatabaseError, OSError) as err:
            if is_busy(err):
                raise
            if on_damage is not None:
                raise on_damage(err) from None
            self._db = self._repair(err)

    def _open(self) -> sqlite3.Connection:
        db = connect(self.path, self.schema, synchronous=self.synchronous)
        try:
            db.execute(f"SELECT count(*) FROM {self.table}").fetchone()  # a damaged page fails here
        except BaseException:
            db.close()
            raise
        return db

    def _repair(self, err: BaseException) -> sqlite3.Connection | None:
        reason = f"{type(err).__name__}: {err}"
        aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            if self.path.exists():
                self.path.replace(aside)
            for suffix in ("-wal", "-shm", "-journal"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            db = self._open()
            moved = f" (kept as {aside.name})" if aside.exists() else ""
            self.notes.append(f"{self.what} {self.path} was unreadable ({reason}): started empty{moved}")
            return db
        except (sqlite3.Error, OSError) as again:
            self.disabled = True
            self.notes.append(f"{self.what} {self.path} is unusable ({reason}; {again}): not used this session")
            return None

    def rows(self, sql: str, args: tuple = ()) -> list[tuple] | None:
        """A query's rows; None when the file is bypassed."""
        out = self._run(sql, args)
        if isinstance(out, int):
            raise TypeError(f"not a query (it returns no rows): {sql}")
        return out

    def change(self, sql: str, args: tuple = ()) -> int | None:
        """A statement that changes rows: how many; None when the file is bypassed."""
        out = self._run(sql, args)
        if isinstance(out, list):
            raise TypeError(f"a query, not a change: {sql}")
        return out

    def _run(self, sql: str, args: tuple = ()) -> list[tuple] | int | None:
        """One statement: its rows (a query) or its rowcount; None when the file is bypassed.

        A damaged file is repaired once and the statement asked again; a lock or a full disk is raised.
        """
        with self._lock:
            if self.disabled or self._db is None:
                return None
            try:
                return _execute(self._db, sql, args)
            except sqlite3.DatabaseError as err:
                if is_busy(err):
                    raise
                self._db.close()
                if self.on_damage is not None:  # the user's file: left as it is, not used further (noted)
                    self._db, self.disabled = None, True
                    self.notes.append(
                        f"{self.what} {self.path} became unreadable ({type(err).__name__}: {err}): not used for the "
                        "rest of this session (the file is left as it is)"
                    )
                    return None
                self._db = self._repair(err)
                return None if self._db is None else _execute(self._db, sql, args)

    def prune(self, before: float, dry_run: bool = False) -> int:
        """Rows of ``table`` stored before ``before`` (epoch seconds): deleted, or only counted (``dry_run``)."""
        if dry_run:
            rows = self.rows(f"SELECT count(*) FROM {self.table} WHERE stored_at < ?", (before,))
            return rows[0][0] if rows else 0
        return self.change(f"DELETE FROM {self.table} WHERE stored_at < ?", (before,)) or 0

    def drain_notes(self) -> list[str]:
        with self._lock:
            notes, self.notes = self.notes, []
        return notes

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self.disabled = True
