"""The session layer: checkpointer, threads, and starting, resuming and reading sessions of both modes.

A session is one LangGraph thread in the checkpoint database (``sessions.db`` in
the data directory, SQLite ``SqliteSaver``, durability ``sync``). Its ``kind``
(``question``, ``claim`` or ``multi``) is in its first checkpoint and picks the
graph that runs it: ``build_graph`` for questions and claims,
``build_multi_graph`` for multi-source sessions. Everything that starts, resumes
or reads a session goes through here, whichever mode it is.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from saturate.graph import storage
from saturate.graph.build import build_graph
from saturate.graph.embeddings import multilingual_reader, resolve_embeddings, retrieval_meaning
from saturate.graph.models import resolve_chat_model
from saturate.graph.paths import home_dir, writable
from saturate.sources import make_source, open_sources
from saturate.state.context import Context, SearchSource
from saturate.state.errors import BadInput
from saturate.state.review import review_decision
from saturate.state.settings import Settings, load_settings
from saturate.state.task import TaskError, checked_task
from saturate.state.text import has_control_characters, printable

DURABILITY = "sync"
RECURSION_LIMIT = 1000
# the in-process GGUF model (graph/gguf_chat.py), imported only by a session with a gguf: model: LangChain's chat model
# base is not loaded for the others (issue 46)
GGUF_CHAT = "saturate.graph.gguf_chat"


class InputError(BadInput):
    """Bad input from the user (empty or oversized task, unknown thread...)."""


def check_task(task: str, settings: Settings) -> str:
    """The task checked (``state.task.checked_task``), its error an ``InputError`` as every API input's."""
    try:
        return checked_task(task, settings.task_max_chars)
    except TaskError as exc:
        raise InputError(str(exc)) from None


def resolve_settings(settings: Settings | Mapping | None, overrides: dict[str, Any]) -> Settings:
    """A Settings object or a mapping of settings, and/or keyword overrides (on top of SATURATE_* and the
    defaults). Anything else is bad input with a message saying what to pass."""
    if settings is None:
        return load_settings(overrides)
    if isinstance(settings, Mapping):
        return load_settings({**settings, **overrides})
    if not isinstance(settings, Settings):
        raise InputError(
            f"settings must be a saturate Settings or a dict of settings (got {type(settings).__name__}); "
            "or pass settings as keywords, e.g. research(task, max_rounds=3)"
        )
    return settings.replace(**overrides) if overrides else settings


def check_thread(thread_id: str) -> str:
    """A new thread id a user gave: not empty, at most 200 characters, no control characters or bidi overrides
    (``printable`` would escape them wherever the id is shown)."""
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise InputError("the thread id is empty: give one (--thread NAME) or leave it out for a new one")
    if not _is_text(thread_id):  # bytes that are not UTF-8 on the command line arrive as lone surrogates
        raise InputError("the thread id is not valid UTF-8 text")
    if len(thread_id) > 200 or has_control_characters(thread_id):  # bidi overrides too: ids are shown
        raise InputError(
            f"the thread id '{printable(thread_id[:60])}' is too long (over 200 characters) or has control "
            "characters or bidi overrides"
        )
    return thread_id


def new_thread_id() -> str:
    return time.strftime("s%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}


class SessionsDbError(BadInput):
    """sessions.db is damaged, empty or not writable: named, never replaced (it holds the user's sessions)."""


def _sessions_db_problem(
    path: Path, err: BaseException, then: str = "then `saturate resume THREAD`"
) -> SessionsDbError:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if "readonly" in text or "read-only" in text or isinstance(err, PermissionError):
        return SessionsDbError(
            f"{path} cannot be written ({text}): this command records the session there; make the data "
            "directory writable or point SATURATE_HOME (or --home) elsewhere"
        )
    if ("disk" in text and "full" in text) or getattr(err, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        return SessionsDbError(f"{path}: the disk is full ({text}); free some space, {then}")
    return SessionsDbError(
        f"{path} is not a readable SQLite database ({text}): it holds your sessions, so it is left as it is; "
        "restore it from a backup, or move it away to start a new one"
    )


class DamagedSessionError(SessionsDbError):
    """One session's stored rows (a checkpoint, its metadata or a pending write) no longer decode although
    the database itself is sound (sessions.db, or the PostgreSQL database): named with what is damaged, left as it
    is, and the other sessions stay readable."""

    def __init__(self, thread_id: Any, what: str, path: Path | str | None = None, backup: str = "sessions.db") -> None:
        self.thread_id = thread_id
        self.what = what
        where = f" in {path}" if path is not None else ""
        super().__init__(
            f"session {printable(str(thread_id))!r}{where} is damaged: {what}; it is left as it is and the other "
            f"sessions are unaffected (`saturate runs` lists them) — restore {backup} from a backup to get it back"
        )


class CheckedReads(BaseCheckpointSaver):
    """A checkpointer whose reads (``get_tuple``, ``list``) turn a row that does not decode into
    ``DamagedSessionError``, so every reader (show, runs, resume, checkpoints, fork, prune, the report, MCP) names
    the session instead of a traceback from deep inside LangGraph. Mixed in before LangGraph's saver
    (``CheckedSqliteSaver``, ``CheckedPostgresSaver``): only failures outside the database are caught; its own
    errors (``database_error``: a damaged file, a server gone) are raised as they are, for the commands' handling."""

    path: Path | str | None = None  # where the sessions are, for the message (sessions.db, a masked URL)
    backup: str = "sessions.db"  # what to restore from a backup, for the message

    def database_error(self, err: BaseException) -> bool:
        """Whether ``err`` is the database's own failure rather than a row that does not decode."""
        raise NotImplementedError

    def get_tuple(self, config: RunnableConfig):
        try:
            tup = super().get_tuple(config)
        except Exception as err:  # decoding this thread's rows (msgpack, JSON): nothing else runs here
            if self.database_error(err):
                raise
            raise self.damaged(config, err) from None
        return self.checked(tup) if tup is not None else None

    def list(self, config, **kwargs):
        rows = super().list(config, **kwargs)
        try:
            for tup in rows:
                yield self.checked(tup)
        except Exception as err:  # a row of the history that does not decode
            if isinstance(err, DamagedSessionError) or self.database_error(err):
                raise
            raise self.damaged(config, err) from None
        finally:
            close = getattr(rows, "close", None)  # LangGraph's generator, holding its cursor (and on PostgreSQL the
            if close is not None:  # saver's lock and a pooled connection): let go at once, not when collected
                close()

    def checked(self, tup):
        """The tuple if its parts have the shapes LangGraph reads (a random blob may decode to an int), else
        ``DamagedSessionError``."""
        problem = checkpoint_shape_problem(tup)
        if problem:
            raise DamagedSessionError(tup.config["configurable"].get("thread_id"), problem, self.path, self.backup)
        return tup

    def damaged(self, config, err: BaseException) -> DamagedSessionError:
        thread = ((config or {}).get("configurable") or {}).get("thread_id", "?")
        text = " ".join(str(err).split())[:160] or "no detail"
        what = f"its checkpoints cannot be read ({type(err).__name__}: {text})"
        return DamagedSessionError(thread, what, self.path, self.backup)


class CheckedSqliteSaver(CheckedReads, SqliteSaver):
    """``SqliteSaver`` with ``CheckedReads``: a damaged *file* still raises sqlite3's error, which the commands
    report as a damaged file."""

    path: Path | None = None  # the user's sessions.db (not a private read-only copy), for the message

    def database_error(self, err: BaseException) -> bool:
        return isinstance(err, sqlite3.Error)


@functools.cache
def checked_postgres_saver() -> type[BaseCheckpointSaver]:
    """``PostgresSaver`` with ``CheckedReads`` (the class is made on first use: the postgres extra is optional).
    psycopg's errors are the database's (the server gone, a pool timeout: the commands say so and how to go on),
    but for its ``DataError``: the server's own refusal of a damaged row's value (``jsonb_each_text`` on a
    checkpoint whose ``channel_versions`` is no longer an object), which is damage."""
    psycopg = storage.psycopg_module()
    from langgraph.checkpoint.postgres import PostgresSaver  # noqa: PLC0415

    class CheckedPostgresSaver(CheckedReads, PostgresSaver):
        backup = "the database"

        def database_error(self, err: BaseException) -> bool:
            return isinstance(err, psycopg.Error) and not isinstance(err, psycopg.DataError)

    return CheckedPostgresSaver


def checkpoint_shape_problem(tup) -> str | None:
    """What is wrong with a decoded checkpoint tuple (None: nothing): a checkpoint that is not a mapping of
    mappings, metadata that is not a mapping or whose ``step`` is not a number, pending writes that are not
    (task, channel, value) triples."""
    checkpoint, metadata = tup.checkpoint, tup.metadata
    if not isinstance(checkpoint, Mapping):
        return f"a checkpoint decodes to {type(checkpoint).__name__}, not a checkpoint"
    for key in ("channel_values", "channel_versions", "versions_seen"):
        if not isinstance(checkpoint.get(key, {}), Mapping):
            return f"a checkpoint's {key} is {type(checkpoint[key]).__name__}"
    if not isinstance(metadata, Mapping):
        return f"a checkpoint's metadata decodes to {type(metadata).__name__}"
    step = metadata.get("step", 0)
    if not isinstance(step, int) or isinstance(step, bool):
        return f"a checkpoint's metadata has step {printable(repr(step)[:40])}"
    for write in tup.pending_writes or ():
        if not (isinstance(write, tuple) and len(write) == 3 and isinstance(write[1], str)):
            return "a pending write is not a (task, channel, value) triple"
    return None


@contextmanager
def open_checkpointer(
    home: Path | str | None = None, readonly: bool = False, database_url: str | None = None
) -> Iterator[Any]:
    """The checkpointer: ``PostgresSaver`` when a database URL is in force (``graph.storage``), else ``SqliteSaver``
    on ``home/sessions.db`` (WAL, durability ``sync``, see ``run``).

    ``readonly`` (show, runs, checkpoints): nothing is created or written; yields None when there is no
    sessions.db yet; a read-only data directory is read as it is. A damaged or empty (0-byte) sessions.db
    is a ``SessionsDbError`` naming the file and what to do — never replaced.
    """
    url = storage.database_url(database_url)
    if url:
        with storage.postgres_saver(url, checked_postgres_saver()) as saver:
            saver.path = storage.where(url, home)  # the URL, its password masked
            yield saver
        return
    home = home_dir(home, create=not readonly)
    path = home / "sessions.db"
    if not readonly and (not path.exists() or path.stat().st_size == 0) and writable(home):
        _create_sessions_db(path)
    if path.exists() and path.stat().st_size == 0:
        raise SessionsDbError(
            f"{path} is empty (0 bytes): the sessions it held are gone; restore it from a backup, or move it "
            "away to start a new one"
        )
    if readonly and not path.exists():
        yield None
        return
    if not readonly and not writable(home):
        raise SessionsDbError(
            f"the data directory {home} is read-only: this command records the session there; make it writable "
            "or point SATURATE_HOME (or --home) elsewhere (show, runs and checkpoints work on it as it is)"
        )
    copy = None  # a private copy of a read-only folder's database and its WAL (see _read_only_connection)
    try:
        if readonly:
            conn, copy = _read_only_connection(path, writable(home))
        else:
            conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    except (sqlite3.Error, OSError) as err:
        raise _sessions_db_problem(path, err) from None
    try:
        saver = CheckedSqliteSaver(conn)
        saver.path = path
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # a damaged header fails here
            if readonly:
                has = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'checkpoints'").fetchone()
                if not has:
                    yield None
                    return
                saver.is_setup = True  # read only: the tables are there; setup() would try to write
            else:
                saver.setup()
                # WAL + synchronous=NORMAL: a killed process loses nothing committed (the WAL survives it);
                # only a power cut may lose the last few steps. FULL fsyncs every one of ~10 commits a round.
                conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as err:
            raise _sessions_db_problem(path, err) from None
        yield saver
    finally:
        conn.close()
        if copy is not None:
            copy.cleanup()


def _read_only_connection(path: Path, folder_writable: bool) -> tuple[sqlite3.Connection, Any]:
    """A read-only connection to sessions.db, with the steps still in its WAL (a process killed mid-session
    leaves them in sessions.db-wal until the next writer folds them in).

    In a writable folder, ``mode=ro``. In a read-only one SQLite cannot create the -shm file its WAL reader
    needs: with no WAL to read, ``immutable=1``; with one, ``mode=ro`` works when the -shm the killed process
    left is there, else the database and its WAL are copied to a temporary folder and read there (the second
    value: that folder, removed when the connection closes). Reading with ``immutable=1`` alone ignored the WAL:
    such a session showed as an unknown thread."""
    uri = path.resolve().as_uri()

    def connect(target: str) -> sqlite3.Connection:
        return sqlite3.connect(target, uri=True, check_same_thread=False, timeout=30)

    wal = path.with_name(path.name + "-wal")
    if folder_writable:
        return connect(f"{uri}?mode=ro"), None
    if not (wal.exists() and wal.stat().st_size > 0):
        return connect(f"{uri}?mode=ro&immutable=1"), None
    try:
        conn = connect(f"{uri}?mode=ro")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn, None
    except sqlite3.Error:
        pass
    copy = tempfile.TemporaryDirectory(prefix="saturate-sessions-")
    try:
        shutil.copyfile(path, Path(copy.name) / path.name)
        shutil.copyfile(wal, Path(copy.name) / wal.name)
        return connect((Path(copy.name) / path.name).as_uri()), copy
    except BaseException:
        copy.cleanup()
        raise


def _create_sessions_db(path: Path) -> None:
    """Create sessions.db with its tables, atomically and under a file lock: SQLite makes an empty file first and
    writes its header with the first table, so the tables are made in a temporary file beside it that is renamed
    into place whole. A reader (``runs``, ``show``, another command's check) never sees a 0-byte sessions.db that
    is only being created, and a 0-byte one stays what it always meant: an emptied database, named, never replaced.
    A folder that refuses the lock file or the new file although ``os.access`` says it is writable (a kernel
    filesystem such as /sys, a mount that refuses writes) is one line, as a read-only one is."""
    try:
        with FileLock(str(path.with_name(".sessions.db.lock"))):
            if path.exists():
                return  # another process made it while this one waited, or an emptied one open_checkpointer names
            _build_sessions_db(path)
    except OSError as err:
        raise _sessions_db_problem(path, err, then="then run the command again") from None


def _build_sessions_db(path: Path) -> None:
    """The tables in ``.sessions.db.new-*`` beside ``path``, then renamed to it (the caller holds the lock). On any
    failure (a full disk) the temporary files are removed: nothing half-made is left to be taken for a database."""
    fd, name = tempfile.mkstemp(prefix=".sessions.db.new-", dir=path.parent)
    os.close(fd)
    temp = Path(name)
    try:
        conn = sqlite3.connect(temp, timeout=30)
        try:
            SqliteSaver(conn).setup()
        finally:
            conn.close()  # the last connection: SQLite folds its WAL into the file and removes it
        os.replace(temp, path)
    except sqlite3.Error as err:
        raise _sessions_db_problem(path, err, then="then run the command again") from None
    finally:
        for made in (temp, temp.with_name(temp.name + "-wal"), temp.with_name(temp.name + "-shm")):
            made.unlink(missing_ok=True)


def kind_of(saver: SqliteSaver, thread_id: str) -> str | None:
    """The session's kind from its latest checkpoint (None: no such thread — nor can there be one whose id is not
    text: bytes that are not UTF-8 on a command line arrive as lone surrogates, which no database can store)."""
    if not isinstance(thread_id, str) or not _is_text(thread_id):
        return None
    tup = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    if tup is None:
        return None
    return values_of(tup).get("kind") or "question"


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def values_of(tup) -> dict:
    """A checkpoint's state values; for the input checkpoint (a process killed before the first step was
    saved), the session's input, which LangGraph keeps in the ``__start__`` channel until that step applies it."""
    values = tup.checkpoint.get("channel_values") or {}
    start = values.get("__start__")
    return {**start, **values} if isinstance(start, dict) else values


_COMPILED: dict[str, Any] = {}


def graph_for(kind: str | None, checkpointer=None):
    """The compiled graph of a session's kind on ``checkpointer``: compiled once per process (30 ms a graph,
    most of a short session's framework cost) and copied with the checkpointer (``Pregel.copy``)."""
    key = "multi" if kind == "multi" else "question"
    base = _COMPILED.get(key)
    if base is None:
        base = _COMPILED[key] = _build_multi_graph() if key == "multi" else build_graph()
    return base.copy(update={"checkpointer": checkpointer})


def _build_multi_graph():
    # heavy: the multi-source graph and its nodes, imported by the sessions that run or read one
    from saturate.graph.build_multi import build_multi_graph

    return build_multi_graph()


def make_context(
    settings: Settings,
    home: Path,
    chat_model: Any = None,
    source: SearchSource | None = None,
    specs: list[dict] | None = None,
    sources: Mapping[str, SearchSource] | None = None,
    embeddings: Any = None,
    progress=None,
) -> Context:
    """The runtime context of a session: its source(s), chat model, embeddings and page store.

    A multi-source session (``specs``) gets one source per spec, built from the
    settings unless ``sources`` (by name) are given; its first source doubles as
    ``source``. ``embeddings`` (any LangChain Embeddings) is used as is; without it
    the settings' ``embed_model`` is built when they need embeddings (cached in
    ``embeddings.db`` in the data directory), else the context has none.
    """
    embeddings = resolve_embeddings(settings, embeddings, home)  # first: a model that cannot load fails before indexing
    url = storage.database_url()
    meaning, notes = (None, []) if source is not None else retrieval_meaning(settings, embeddings, progress)
    by_name: dict[str, SearchSource] = {}
    if specs is not None:
        by_name = (
            dict(sources) if sources is not None else open_sources(specs, settings, home, cache(url, home), meaning)
        )
        source = by_name[specs[0]["name"]]
    return Context(
        source=source if source is not None else make_source(settings, home, cache(url, home), meaning),
        chat_model=chat_model,
        pages=storage.page_store(url, home),
        sources=by_name,
        embeddings=embeddings,
        multilingual=multilingual_reader,
        notes=notes,
    )


def cache(url: str | None, home: Path):
    """The search cache at ``url`` (None: the sources open ``home/cache.db`` themselves)."""
    return storage.search_cache(url, home) if url else None


@contextmanager
def session_context(
    settings: Settings,
    home: Path,
    chat_model: Any = None,
    source: SearchSource | None = None,
    specs: list[dict] | None = None,
    sources: Mapping[str, SearchSource] | None = None,
    embeddings: Any = None,
    progress=None,
) -> Iterator[Context]:
    """``make_context`` for one run; what it opened (page store, sources it built) is closed after it, so a
    process running many sessions keeps no file handles (sources passed in are the caller's to close)."""
    context = make_context(settings, home, chat_model, source, specs, sources, embeddings, progress)
    owned: list[Any] = [context.pages]
    if source is None and specs is None:
        owned.append(context.source)
    if specs is not None and sources is None:
        owned += list(context.sources.values())
    try:
        yield context
    finally:
        for thing in owned:
            close = getattr(thing, "close", None)
            if close is not None:
                close()


def run(graph, payload, thread_id: str, context: Context, stream_handler=None) -> dict:
    """Run to the end; ``stream_handler(chunk)`` sees every 'updates' chunk as it happens.

    A handler with a ``stream_mode`` attribute (e.g. ``["updates", "custom"]``, see
    saturate.views.progress) is streamed those modes instead and gets LangGraph's ``(mode, chunk)`` pairs.
    Ctrl-C stops the session at the next step (``interrupt_between_steps``); a second one at once.
    """
    mode = getattr(stream_handler, "stream_mode", "updates") if stream_handler is not None else "values"
    last, paused = None, False
    with interrupt_between_steps() as stop_if_asked:
        for chunk in graph.stream(payload, config(thread_id), context=context, durability=DURABILITY, stream_mode=mode):
            data = chunk[-1] if isinstance(chunk, tuple) else chunk  # (mode, chunk) when several modes stream
            paused = paused or (isinstance(data, dict) and "__interrupt__" in data)  # a review node's interrupt()
            if stream_handler is not None:
                stream_handler(chunk)
            elif not (isinstance(chunk, dict) and "__interrupt__" in chunk):
                last = chunk
            stop_if_asked()
    if stream_handler is None and isinstance(last, dict) and not paused:
        return last  # what graph.invoke returns: the last values
    snap = graph.get_state(config(thread_id))
    waiting = review_waiting(snap)
    return {**snap.values, "_review": waiting} if waiting else snap.values


def review_waiting(snap) -> dict | None:
    """What a session paused for a person (``interrupt()`` in a review node) asks to review, else None."""
    for task in snap.tasks:
        for pending in task.interrupts:
            if isinstance(pending.value, dict):
                return pending.value
    return None


@contextmanager
def interrupt_between_steps() -> Iterator:
    """Ctrl-C (SIGINT) raises KeyboardInterrupt between two steps of the graph, where its generator yields, instead
    of wherever the main thread happens to be: raised inside LangGraph's wait for its worker threads, it could leave
    a future's lock held, and the workers and the process then waited for each other forever (seen about once in
    fifty interrupts: `saturate research` or a script hung instead of stopping). The step under way finishes and is
    checkpointed; a second Ctrl-C raises at once (a slow model call need not be waited for). A ``gguf:`` model's
    generation in this process stops at the first (its call fails, noted, and the step's heuristic finishes it, so a
    model-backed step ends within seconds), and model calls are refused until the session is left. Only in the main
    thread and only over Python's own handler: a notebook kernel, a server or an application with its own SIGINT
    handler keeps it. Yields the check the stream loop calls after each step."""
    asked: list[bool] = []

    def stop_if_asked() -> None:
        if asked:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield lambda: None
        return

    def on_sigint(signum, frame) -> None:
        if asked:  # the second: now
            raise KeyboardInterrupt
        asked.append(True)
        if GGUF_CHAT in sys.modules:  # a gguf: model is loaded (else no generation runs to stop)
            sys.modules[GGUF_CHAT].stop_generation()

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield stop_if_asked
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if asked and GGUF_CHAT in sys.modules:
            sys.modules[GGUF_CHAT].allow_generation()


def start(
    initial: Mapping[str, Any],
    thread_id: str | None,
    home,
    chat_model: Any = None,
    source: SearchSource | None = None,
    sources: Mapping[str, SearchSource] | None = None,
    stream_handler=None,
    embeddings: Any = None,
    database_url: str | None = None,
) -> tuple[str, dict]:
    """Run a new session from its initial state to the end; (thread id, final values)."""
    home_path = home_dir(home)
    thread_id = check_thread(thread_id) if thread_id is not None else new_thread_id()
    settings = Settings.model_validate(initial["settings"])
    with storage.using(database_url), open_checkpointer(home_path) as saver:
        if kind_of(saver, thread_id) is not None:
            raise InputError(
                f"thread {thread_id!r} already exists: resume it, or give another thread id (thread_id= in Python, "
                "--thread on the command line)"
            )
        graph = graph_for(initial.get("kind"), saver)
        specs = initial.get("sources") if initial.get("kind") == "multi" else None
        progress = getattr(stream_handler, "index_progress", None)  # a first vector build reports to the live view
        with session_context(settings, home_path, chat_model, source, specs, sources, embeddings, progress) as context:
            if context.notes:  # how the session ranks, when it cannot do as its settings ask
                initial = {**initial, "notes": list(initial.get("notes") or []) + context.notes}
            return thread_id, run(graph, initial, thread_id, context, stream_handler)


def resume(
    thread_id: str,
    home=None,
    chat_model: Any = None,
    source: SearchSource | None = None,
    sources: Mapping[str, SearchSource] | None = None,
    stream_handler=None,
    embeddings: Any = None,
    database_url: str | None = None,
    review: Any = None,
) -> dict:
    """Continue a session of either mode from its last completed step (a finished one is only read).

    ``review``: the decision for a session paused for review (``state/review.py``), resumed as
    ``Command(resume=decision)``; without one a paused session pauses again with the same question."""
    home_path = home_dir(home)
    with storage.using(database_url), open_checkpointer(home_path) as saver:
        kind = kind_of(saver, thread_id)
        if kind is None:
            raise unknown_thread(thread_id, home_path)
        graph = graph_for(kind, saver)
        snap = graph.get_state(config(thread_id))
        state = snap.values
        waiting = review_waiting(snap)
        if review is not None:
            if waiting is None:
                raise InputError(f"thread {thread_id!r} is not waiting for a review: {status_of(snap)}")
            decision = review.resume if isinstance(review, Command) else review
            # a bad decision fails here, before anything runs; the graph gets it as plain data
            command: Any = Command(resume=review_decision(decision, waiting.get("point", "")).model_dump())
        else:
            command = None
        if "settings" not in state:  # killed between the input checkpoint and the first step's
            state = values_of(saver.get_tuple(config(thread_id)))
        # Not ``snap.next`` alone: LangGraph leaves out of ``next`` the tasks whose writes were already saved
        # (a process killed after a node's writes, before the next checkpoint); ``tasks`` still lists them, and
        # running from the checkpoint applies those writes and goes on. Only a result means finished (unless it
        # waits for a person's review).
        if not state.get("result") or waiting is not None:
            if kind == "multi":
                provided = [spec["name"] for spec in state["sources"] if spec.get("provided")]
                if provided and sources is None:
                    raise InputError(
                        f"thread {thread_id!r} searched sources passed from Python ({', '.join(provided)}); "
                        "pass them again: resume(thread, sources={name: source, ...})"
                    )
            settings = Settings.model_validate(state["settings"])
            if isinstance(chat_model, str):  # a model by name, as the CLI names it
                settings, chat_model = settings.replace(model=chat_model), None
            model, notes = resolve_chat_model(settings, chat_model)
            if notes:
                graph.update_state(config(thread_id), {"notes": [f"on resume: {n}" for n in notes]})
            specs = state["sources"] if kind == "multi" else None
            progress = getattr(stream_handler, "index_progress", None)
            with session_context(settings, home_path, model, source, specs, sources, embeddings, progress) as context:
                if context.notes:
                    graph.update_state(config(thread_id), {"notes": [f"on resume: {n}" for n in context.notes]})
                state = run(graph, command, thread_id, context, stream_handler)
    if not state.get("result") and not state.get("_review"):
        raise InputError(f"thread {thread_id!r} has no result and nothing left to run")
    return state


def status_of(snap) -> str:
    """A session's status from its latest checkpoint: ``done``, ``failed at NODE: error`` (resume retries it) or
    ``interrupted at NODE`` (resume continues it)."""
    if (snap.values or {}).get("result") and not snap.next:
        return "done"
    waiting = review_waiting(snap)
    if waiting is not None:
        return f"waiting for review of the {waiting.get('point', '?')}"
    failed = [t for t in snap.tasks if t.error]
    if failed:
        return f"failed at {','.join(t.name for t in failed)}: {str(failed[0].error)[:120]}"
    names = list(dict.fromkeys([*snap.next, *(t.name for t in snap.tasks)]))
    return "interrupted at " + (",".join(names) or "start")


def unknown_thread(thread_id: str, home: Path) -> InputError:
    place = storage.where(storage.database_url(), home)
    return InputError(f"unknown thread {printable(str(thread_id))!r}: see `saturate runs` for the sessions in {place}")


def session_state(thread_id: str, home=None, database_url: str | None = None) -> dict:
    """The latest checkpointed values of a session of either mode, with ``_next`` (raises InputError if unknown)."""
    if not isinstance(thread_id, str):
        raise InputError(f"session_state(thread_id=...) takes a str (got {type(thread_id).__name__})")
    home_path = home_dir(home, create=False)
    with storage.using(database_url), open_checkpointer(home_path, readonly=True) as saver:
        kind = kind_of(saver, thread_id) if saver is not None else None
        if kind is None:
            raise unknown_thread(thread_id, home_path)
        snap = graph_for(kind, saver).get_state(config(thread_id))
    waiting = review_waiting(snap)
    finished = snap.values.get("result") and waiting is None
    pending = [] if finished else list(dict.fromkeys([*snap.next, *(t.name for t in snap.tasks)]))
    return {**snap.values, "_next": pending, "_status": status_of(snap), **({"_review": waiting} if waiting else {})}


def list_sessions(home=None, database_url: str | None = None) -> list[dict]:
    """Sessions in the database, newest first: thread, task, rounds, status. A session whose checkpoints do not
    decode is listed with status ``damaged: WHAT`` (no task, rounds or time) rather than hiding all the others."""
    home_path = home_dir(home, create=False)
    with storage.using(database_url), open_checkpointer(home_path, readonly=True) as saver:
        if saver is None:
            return []
        graphs = {kind: graph_for(kind, saver) for kind in ("question", "multi")}
        out = []
        for thread_id in storage.latest_threads(saver):
            try:
                out.append(_session_row(saver, graphs, thread_id))
            except DamagedSessionError as err:
                out.append(damaged_row(thread_id, err))
    return out


DAMAGED = "damaged"  # the status a damaged session is listed with (``prune`` leaves those alone)


def _session_row(saver, graphs: dict, thread_id: str) -> dict:
    kind = kind_of(saver, thread_id)
    snap = graphs["multi" if kind == "multi" else "question"].get_state(config(thread_id))
    v = snap.values
    return {
        "thread": thread_id,
        "task": v.get("task", ""),
        # a multi-source session has no rounds: its source queries are counted
        "rounds": len((v.get("queries") if kind == "multi" else v.get("records")) or []),
        "status": status_of(snap),
        "updated": snap.created_at,
    }


def damaged_row(thread_id: str, err: DamagedSessionError) -> dict:
    """``list_sessions``' row for a session that cannot be read: marked, with what is damaged."""
    return {"thread": thread_id, "task": "", "rounds": 0, "status": f"{DAMAGED}: {err.what}", "updated": None}
