"""Where sessions live: the SQLite files of the data directory, or one PostgreSQL database (``database_url``).

Unset (the default), sessions are checkpointed in ``home/sessions.db`` (``SqliteSaver``), the search cache is
``home/cache.db`` and the page store ``home/pages.db``. With ``database_url`` (``SATURATE_DATABASE_URL``,
``--database-url``) set to ``postgresql://...`` all three are in that database: checkpoints through
``langgraph-checkpoint-postgres``'s ``PostgresSaver`` (the saver LangGraph's own server uses) over a
``psycopg_pool.ConnectionPool``, the cache and the pages in two tables of ours (``sources.postgres``). The local
corpus indexes stay in ``home/index`` (derived from the corpus files, rebuilt on any machine).

The URL is resolved per call: an explicit one (Python API ``database_url=``), else the one set for the current
context (``using``), else ``SATURATE_DATABASE_URL`` (the CLI puts ``--database-url`` there, so worker processes
inherit it). One pool per URL and process, opened on first use; the tables are created once, under an advisory
lock so several processes or machines starting together do not race. The password never appears in a message.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from saturate.sources.cache import SearchCache
from saturate.sources.pages import SqlitePageStore
from saturate.sources.postgres import SCHEMA, PgPageStore, PgSearchCache
from saturate.state.errors import BadInput
from saturate.state.settings import ENV_PREFIX, check_database_url, mask_url, scrub_password

if TYPE_CHECKING:  # the optional extra, for annotations only
    from psycopg import Connection
    from psycopg.rows import DictRow
    from psycopg_pool import ConnectionPool

# psycopg and its pool log a lost server's connections ("discarding closed connection", "error ignored
# terminating <psycopg.Pipeline [BAD]>") as warnings; with no logging set up, Python's last-resort handler printed
# them above saturate's one-line error. A NullHandler keeps them off stderr; an application that configures
# logging still receives them (they propagate to its handlers as before).
logging.getLogger("psycopg").addHandler(logging.NullHandler())

ENV = ENV_PREFIX + "DATABASE_URL"
POOL_WAIT_S = 5  # a connection waited for at most this long: a lost server is reported after 2 waits (was 15: 30 s)
CONNECT_TIMEOUT_S = 10
POOL_MAX = 8  # connections a process may hold: one saver + the cache and page store of a few threads
# synchronous_commit=off on saturate's connections: the trade sessions.db makes with WAL + synchronous=NORMAL.
# A killed saturate process loses nothing (every committed step is in the server's WAL buffer, written out within
# ~200 ms by its WAL writer); only a crash of the database server itself may lose the last fraction of a second of
# steps, never corrupting anything — and each checkpoint is several statements, each of which would otherwise
# wait for its own fsync (measured: 14.0 → 17.0 sessions/s for one worker, 20.2 → 28.3 for two).
SESSION_OPTIONS = "-c synchronous_commit=off"
_URL: ContextVar[str | None] = ContextVar("saturate_database_url", default=None)
_POOLS: dict[tuple[str, int], Any] = {}
_READY: set[tuple[str, int]] = set()
_LOCK = threading.Lock()


class StorageError(BadInput):
    """The database named by ``database_url`` cannot be used: one line naming it (password masked) and what to do."""


def database_url(explicit: str | None = None) -> str | None:
    """The PostgreSQL URL in force, or None for the SQLite files of the data directory."""
    for value, where in ((explicit, "database_url"), (_URL.get(), "database_url"), (os.environ.get(ENV), ENV)):
        if value is not None and str(value).strip():
            try:
                return check_database_url(value)
            except ValueError as err:
                raise StorageError(f"{where} {mask_url(str(value))!r}: {err}") from None
    return None


@contextmanager
def using(url: str | None) -> Iterator[None]:
    """Within the block, sessions live at ``url`` (None: as configured outside it)."""
    token = _URL.set(database_url(url) if url else _URL.get())
    try:
        yield
    finally:
        _URL.reset(token)


def where(url: str | None, home) -> str:
    """How a message names the place sessions are in."""
    return f"the database {mask_url(url)}" if url else str(home)


def _driver():
    """psycopg, its dict rows, its pool and LangGraph's PostgresSaver: the optional extra, imported only when a
    PostgreSQL URL is used (a missing extra is one line saying what to install)."""
    try:
        import psycopg  # noqa: PLC0415
        from langgraph.checkpoint.postgres import PostgresSaver  # noqa: PLC0415
        from psycopg.rows import dict_row  # noqa: PLC0415
        from psycopg_pool import ConnectionPool  # noqa: PLC0415
    except ImportError as err:
        raise StorageError(
            f"a PostgreSQL database_url needs the postgres extra ({err.name or err} is missing): "
            "pip install 'saturate[postgres]'"
        ) from None
    return psycopg, dict_row, ConnectionPool, PostgresSaver


def psycopg_module():
    """psycopg itself (the optional extra)."""
    return _driver()[0]


def unreachable(url: str, err: BaseException) -> StorageError:
    text = scrub_password(" ".join(str(err).split()) or type(err).__name__, url)
    return StorageError(
        f"cannot use PostgreSQL at {mask_url(url)} ({text[:300]}): start the server, create the database or fix "
        f"--database-url / {ENV}"
    )


def pool(url: str) -> ConnectionPool[Connection[DictRow]]:
    """This process's connection pool for ``url`` (autocommit, dict rows, no prepared statements: what
    ``PostgresSaver`` expects), with the tables created. A first direct connection gives a clear error at once
    instead of a pool timeout."""
    key = (url, os.getpid())
    with _LOCK:
        found = _POOLS.get(key)
        if found is not None:
            return found
        psycopg, dict_row, ConnectionPool, _ = _driver()
        try:
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.Error as err:
            raise unreachable(url, err) from None
        made = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX,
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "options": SESSION_OPTIONS,
                "connect_timeout": CONNECT_TIMEOUT_S,  # a lost server: each reconnection fails fast
            },
            timeout=POOL_WAIT_S,
            open=True,
            name="saturate",
        )
        _POOLS[key] = made
    _setup(url, made)
    return cast("ConnectionPool[Connection[DictRow]]", made)  # dict rows: the row_factory of its connections


def _setup(url: str, conn_pool) -> None:
    """The checkpoint tables (``PostgresSaver.setup``: its migrations) and ours, once per process, serialised
    across processes and machines by an advisory lock (session-level: some of LangGraph's migrations create
    indexes ``CONCURRENTLY``, which cannot run inside a transaction)."""
    key = (url, os.getpid())
    if key in _READY:
        return
    PostgresSaver = _driver()[3]
    with conn_pool.connection() as conn:
        # Polled, not ``pg_advisory_lock``: a session blocked in that call is inside a transaction, and the
        # ``CREATE INDEX CONCURRENTLY`` of the session holding the lock waits for every open transaction — a
        # deadlock PostgreSQL breaks by failing one of them (seen with two batches starting on a new database).
        while not conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (lock_key("saturate-setup"),)).fetchone()[
            "got"
        ]:
            time.sleep(0.05)
        try:
            for statement in SCHEMA:
                conn.execute(statement)
            PostgresSaver(conn).setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key("saturate-setup"),))
    _READY.add(key)


def lock_key(name: str) -> int:
    """A signed 64-bit advisory-lock key for ``name`` (stable across processes and machines)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


@contextmanager
def postgres_saver(url: str, saver_class: type | None = None) -> Iterator[Any]:
    """A ``PostgresSaver`` (or ``saver_class``, a subclass of it) over this process's pool for ``url``."""
    psycopg, _, _, PostgresSaver = _driver()
    try:
        conn_pool = pool(url)
    except psycopg.Error as err:  # lost between the probe and the setup
        raise unreachable(url, err) from None
    yield (saver_class or PostgresSaver)(conn_pool)


def is_postgres(saver: Any) -> bool:
    """Whether ``saver`` is LangGraph's ``PostgresSaver`` or a subclass of it (saturate's checked one)."""
    return any(cls.__module__.startswith("langgraph.checkpoint.postgres") for cls in type(saver).__mro__)


def latest_threads(saver: Any) -> list[str]:
    """Thread ids of the checkpoint database, most recently updated first."""
    sql = (
        "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints WHERE checkpoint_ns = '' "
        "GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC"
    )
    if is_postgres(saver):
        with saver.conn.connection() as conn:
            return [row["thread_id"] for row in conn.execute(sql).fetchall()]
    return [row[0] for row in saver.conn.execute(sql).fetchall()]


def search_cache(url: str | None, home):
    """The search cache: ``home/cache.db``, or the ``saturate_search_cache`` table at ``url``."""
    if url:
        return PgSearchCache(pool(url))
    return SearchCache(home / "cache.db")


def page_store(url: str | None, home):
    """The page store: ``home/pages.db``, or the ``saturate_pages`` table at ``url``."""
    if url:
        return PgPageStore(pool(url))
    return SqlitePageStore(home / "pages.db")


def close_pools() -> None:
    """Close this process's pools (tests; a worker process closes them on exit)."""
    with _LOCK:
        for key in [k for k in _POOLS if k[1] == os.getpid()]:
            _POOLS.pop(key).close()
            _READY.discard(key)
