"""SQLite storage of the saturation monitor: ``monitor.db`` in the data directory.

Tables (timestamps are UTC epoch seconds, JSON columns are UTF-8 text):

- ``cycles``           one row per benchmark run: metrics, score, level, the full bench result as
                       ``snapshot`` JSON. Pruned after ``SNAPSHOT_RETENTION_DAYS`` (the document's
                       per-cycle snapshots: 90 days).
- ``aggregates``       the permanent per-cycle summary (same id as the cycle): score, level, harness
                       version, the five metrics and the cycle's consistency result (action, reason,
                       urgency), so the improvement-delta history and the rolling window survive
                       pruning. Never deleted (the document's aggregate: permanent).
- ``harness_versions`` every harness config; exactly one row has ``archived = 0``: the current one.
- ``expansions``       every expansion event with its trigger reason, urgency, the rolling average at
                       the trigger, research context and proposals. Never deleted (permanent).

The metric columns carry the document's names (``METRICS``). A schema-1 file (columns
``ceiling_rate`` and ``auditor_agreement_rate``, no consistency or trigger columns) is migrated in
place when opened.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, overload

SNAPSHOT_RETENTION_DAYS = 90
SCHEMA_VERSION = 2
METRICS = (
    "benchmark_ceiling_rate",
    "regression_pass_rate",
    "improvement_delta",
    "proposal_pass_rate",
    "auditor_unanimous_rate",
)
RENAMED = {"ceiling_rate": "benchmark_ceiling_rate", "auditor_agreement_rate": "auditor_unanimous_rate"}  # schema 1
TRIGGERS = ("urgent_expansion", "expansion", "review")  # "review": schema-1 rows only (a review is now a flag)
STATUSES = ("pending", "approved", "applied", "rejected", "rolled_back")
OPEN_STATUSES = ("pending", "approved")  # awaiting a human or awaiting apply: no new trigger of that kind

_METRIC_COLS = ", ".join(f"{m} REAL" for m in METRICS)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS cycles (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    harness_version INTEGER,
    {_METRIC_COLS},
    score REAL NOT NULL,
    level TEXT NOT NULL,
    snapshot TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cycles_ts ON cycles(ts);
CREATE TABLE IF NOT EXISTS aggregates (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    score REAL NOT NULL,
    level TEXT NOT NULL,
    harness_version INTEGER,
    {_METRIC_COLS},
    action TEXT,
    reason TEXT,
    urgency TEXT
);
CREATE TABLE IF NOT EXISTS harness_versions (
    version INTEGER PRIMARY KEY,
    created_ts REAL NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,
    config TEXT NOT NULL,
    parent INTEGER REFERENCES harness_versions(version),
    flagged_for_review INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '',
    expansion_id INTEGER,
    new_checks TEXT NOT NULL DEFAULT '{{"thresholds": [], "benchmarks": []}}',
    enabled_at_cycle INTEGER,
    settled_ts REAL
);
CREATE TABLE IF NOT EXISTS expansions (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN {TRIGGERS!r}),
    status TEXT NOT NULL CHECK (status IN {STATUSES!r}),
    cycle_id INTEGER,
    trigger_reason TEXT,
    urgency TEXT,
    score_at_trigger REAL,
    thread_id TEXT,
    answer TEXT NOT NULL DEFAULT '',
    sources TEXT NOT NULL DEFAULT '[]',
    research_error TEXT,
    proposals TEXT NOT NULL DEFAULT '[]',
    approved_by TEXT,
    decided_ts REAL,
    applied_version INTEGER,
    note TEXT NOT NULL DEFAULT ''
);
"""


def to_epoch(now: Any = None, clock=None) -> float:
    """``now`` as epoch seconds: a datetime (naive = UTC), a number, or None (the clock)."""
    if now is None:
        return float(clock()) if clock else dt.datetime.now(dt.UTC).timestamp()
    if isinstance(now, dt.datetime):
        return (now if now.tzinfo else now.replace(tzinfo=dt.UTC)).timestamp()
    return float(now)


def iso(ts: float | None) -> str:
    if ts is None:
        return "-"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class Store:
    """A connection to ``monitor.db``: schema, transactions, row helpers."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        with self.tx():
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    self.conn.execute(stmt)
            self._migrate()
            self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _migrate(self) -> None:
        """Bring a schema-1 file to schema 2: the document's metric names, consistency and trigger columns."""
        added = {
            "aggregates": ("action TEXT", "reason TEXT", "urgency TEXT"),
            "expansions": ("trigger_reason TEXT", "urgency TEXT", "score_at_trigger REAL"),
        }
        for table in ("cycles", "aggregates", "expansions"):
            cols = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            for old, new in RENAMED.items():
                if table != "expansions" and old in cols:
                    self.conn.execute(f"ALTER TABLE {table} RENAME COLUMN {old} TO {new}")
            for col in added.get(table, ()):
                if col.split()[0] not in cols:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {col}")

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: concurrent writers wait, nothing half-done)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def one(self, sql: str, *params) -> dict | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row else None

    def all(self, sql: str, *params) -> list[dict]:
        return [dict(r) for r in self.conn.execute(sql, params).fetchall()]

    # ------------------------------------------------------------ harness

    def current_version(self) -> dict | None:
        row = self.one("SELECT * FROM harness_versions WHERE archived = 0 ORDER BY version DESC LIMIT 1")
        return _decode_version(row)

    def version(self, version: int) -> dict | None:
        return _decode_version(self.one("SELECT * FROM harness_versions WHERE version = ?", version))

    def versions(self) -> list[dict]:
        return [_decode_version(r) for r in self.all("SELECT * FROM harness_versions ORDER BY version")]

    # ------------------------------------------------------------ expansions

    def expansion(self, expansion_id: int) -> dict | None:
        return _decode_expansion(self.one("SELECT * FROM expansions WHERE id = ?", int(expansion_id)))

    def expansions(self, statuses: tuple[str, ...] | None = None) -> list[dict]:
        if statuses:
            marks = ",".join("?" * len(statuses))
            rows = self.all(f"SELECT * FROM expansions WHERE status IN ({marks}) ORDER BY id", *statuses)
        else:
            rows = self.all("SELECT * FROM expansions ORDER BY id")
        return [_decode_expansion(r) for r in rows]

    # ------------------------------------------------------------ cycles

    def cycle_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM aggregates").fetchone()[0]

    def window(self, size: int) -> list[dict]:
        """The last ``size`` aggregates, oldest first."""
        if size <= 0:
            return []
        return self.all("SELECT * FROM (SELECT * FROM aggregates ORDER BY id DESC LIMIT ?) ORDER BY id", size)

    def deltas(self, size: int) -> list[float]:
        """The improvement deltas of the last ``size`` cycles that have one, oldest first."""
        rows = self.conn.execute(
            "SELECT improvement_delta FROM aggregates WHERE improvement_delta IS NOT NULL ORDER BY id DESC LIMIT ?",
            (size,),
        ).fetchall()
        return [r[0] for r in reversed(rows)]

    def last_snapshot(self) -> dict | None:
        row = self.one("SELECT snapshot FROM cycles ORDER BY id DESC LIMIT 1")
        return json.loads(row["snapshot"]) if row else None


@overload
def _decode_version(row: dict) -> dict: ...
@overload
def _decode_version(row: dict | None) -> dict | None: ...
def _decode_version(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {
        **row,
        "config": json.loads(row["config"]),
        "new_checks": json.loads(row["new_checks"]),
        "archived": bool(row["archived"]),
        "flagged_for_review": bool(row["flagged_for_review"]),
    }


@overload
def _decode_expansion(row: dict) -> dict: ...
@overload
def _decode_expansion(row: dict | None) -> dict | None: ...
def _decode_expansion(row: dict | None) -> dict | None:
    if row is None:
        return None
    return {**row, "sources": json.loads(row["sources"]), "proposals": json.loads(row["proposals"])}
