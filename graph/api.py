"""The Python API: run, resume and inspect checkpointed research sessions.

    from saturate.graph import research
    result = research("What is the capital of Zimbabwe?", max_rounds=4, seed=7)
    print(result.answer, [s.url for s in result.sources])

Every session is checkpointed in SQLite (durability ``sync``) under one thread
id, in the data directory: ``SATURATE_HOME`` if set, else
``$XDG_DATA_HOME/saturate`` (``~/.local/share/saturate``).
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from langgraph.checkpoint.sqlite import SqliteSaver

from saturate.graph.build import build_graph
from saturate.graph.paths import home_dir
from saturate.graph.models import ModelUnavailable, resolve_chat_model
from saturate.sources import make_source
from saturate.sources.pages import SqlitePageStore
from saturate.state.context import Context, SearchSource
from saturate.state.graph_state import initial_state
from saturate.state.records import AgentResult
from saturate.state.settings import Settings, SettingsError, load_settings

DURABILITY = "sync"
RECURSION_LIMIT = 1000


class InputError(ValueError):
    """Bad input from the user (empty or oversized task, unknown thread...)."""


def check_task(task: str, settings: Settings) -> str:
    if task is None or not str(task).strip():
        raise InputError("the task is empty: say what to research, e.g. saturate research \"Who built the Eiffel Tower?\"")
    task = " ".join(str(task).split())
    if len(task) > settings.task_max_chars:
        raise InputError(
            f"the task is {len(task)} characters long; the limit is {settings.task_max_chars} "
            "(task_max_chars / SATURATE_TASK_MAX_CHARS). Shorten it or raise the limit."
        )
    return task


def resolve_settings(settings: Settings | None, overrides: dict[str, Any]) -> Settings:
    """A Settings object and/or keyword overrides (on top of SATURATE_* and the defaults)."""
    if settings is None:
        return load_settings(overrides)
    return settings.replace(**overrides) if overrides else settings


def new_thread_id() -> str:
    return time.strftime("s%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@contextmanager
def open_checkpointer(home: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(home / "sessions.db", check_same_thread=False, timeout=30)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        # WAL + synchronous=NORMAL: a killed process loses nothing committed (the WAL survives it);
        # only a power cut may lose the last few steps. FULL fsyncs every one of ~10 commits a round.
        conn.execute("PRAGMA synchronous=NORMAL")
        yield saver
    finally:
        conn.close()


def make_context(settings: Settings, home: Path, chat_model: Any = None, source: SearchSource | None = None) -> Context:
    return Context(
        source=source if source is not None else make_source(settings, home),
        chat_model=chat_model,
        pages=SqlitePageStore(home / "pages.db"),
    )


def _config(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}


def _run(graph, payload, thread_id: str, context: Context, stream_handler=None) -> dict:
    """Run to the end; ``stream_handler(chunk)`` sees every 'updates' chunk as it happens.

    A handler with a ``stream_mode`` attribute (e.g. ``["updates", "custom"]``, see
    graph.progress) is streamed those modes instead and gets LangGraph's ``(mode, chunk)`` pairs.
    """
    if stream_handler is None:
        return graph.invoke(payload, _config(thread_id), context=context, durability=DURABILITY)
    mode = getattr(stream_handler, "stream_mode", "updates")
    for chunk in graph.stream(payload, _config(thread_id), context=context, durability=DURABILITY, stream_mode=mode):
        stream_handler(chunk)
    return graph.get_state(_config(thread_id)).values


def verify(claim: str, **kwargs: Any) -> AgentResult:
    """Verify a claim: research it with the saturation loop, collect evidence hits, decide.

    Returns an AgentResult with outcome True / False / Invalid, a markdown ``proof``
    citing only evidence hits, and the counted ``sources``. Same keywords as ``research``.
    """
    return research(claim, _kind="claim", **kwargs)


def research(
    task: str,
    *,
    thread_id: str | None = None,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    source: SearchSource | None = None,
    settings: Settings | None = None,
    stream_handler=None,
    context_extra: dict | None = None,
    _kind: str = "question",
    **overrides: Any,
) -> AgentResult:
    """Run one research session to the end and return its result.

    Settings: a ``Settings`` object, or keyword overrides on top of the
    ``SATURATE_*`` environment and the defaults. ``source`` replaces the
    configured search source (any object with ``name``, ``search``, ``fetch``);
    ``chat_model`` is any LangChain chat model.
    """
    settings = resolve_settings(settings, overrides)
    task = check_task(task, settings)
    home_path = home_dir(home)
    thread_id = thread_id or new_thread_id()
    with open_checkpointer(home_path) as saver:
        graph = build_graph(checkpointer=saver)
        if graph.get_state(_config(thread_id)).values:
            raise InputError(f"thread {thread_id!r} already exists; use resume, or pick another --thread")
        model, notes = resolve_chat_model(settings, chat_model)
        if settings.novelty_method == "model" and model is None and not notes:
            raise InputError("novelty_method=model needs a chat model: set --model ollama:<name> (or pass chat_model)")
        context = make_context(settings, home_path, model, source)
        context.extra.update(context_extra or {})
        state = _run(graph, initial_state(task, settings, tuple(notes), kind=_kind), thread_id, context, stream_handler)
    return AgentResult.model_validate(state["result"])


def session_state(thread_id: str, home: str | os.PathLike | None = None) -> dict:
    """The latest checkpointed values of a session (raises InputError for an unknown thread)."""
    with open_checkpointer(home_dir(home)) as saver:
        snap = build_graph(checkpointer=saver).get_state(_config(thread_id))
        if snap.values.get("kind") == "multi":  # a multi-source session: read it with its own graph
            from saturate.graph.multi_api import multi_state

            return multi_state(thread_id, saver)
    if not snap.values:
        raise InputError(f"unknown thread {thread_id!r}: see `saturate runs` for the sessions in {home_dir(home)}")
    return {**snap.values, "_next": list(snap.next)}


def resume(
    thread_id: str,
    *,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    source: SearchSource | None = None,
    stream_handler=None,
) -> AgentResult:
    """Continue a session from its last completed step (a no-op for a finished one)."""
    home_path = home_dir(home)
    if session_state(thread_id, home_path).get("kind") == "multi":
        from saturate.graph.multi_api import resume_multi

        return resume_multi(thread_id, home=home_path, chat_model=chat_model, stream_handler=stream_handler)
    with open_checkpointer(home_path) as saver:
        graph = build_graph(checkpointer=saver)
        snap = graph.get_state(_config(thread_id))
        if not snap.values:
            raise InputError(f"unknown thread {thread_id!r}: see `saturate runs` for the sessions in {home_path}")
        if snap.next:
            settings = Settings.model_validate(snap.values["settings"])
            model, notes = resolve_chat_model(settings, chat_model)
            if notes:
                graph.update_state(_config(thread_id), {"notes": [f"on resume: {n}" for n in notes]})
            context = make_context(settings, home_path, model, source)
            state = _run(graph, None, thread_id, context, stream_handler)
        else:
            state = snap.values
    if not state.get("result"):
        raise InputError(f"thread {thread_id!r} has no result and nothing left to run")
    return AgentResult.model_validate(state["result"])


def list_sessions(home: str | os.PathLike | None = None) -> list[dict]:
    """Sessions in the database, newest first: thread, task, rounds, status."""
    home_path = home_dir(home)
    with open_checkpointer(home_path) as saver:
        rows = saver.conn.execute(
            "SELECT thread_id, MAX(checkpoint_id) FROM checkpoints WHERE checkpoint_ns = '' "
            "GROUP BY thread_id ORDER BY MAX(checkpoint_id) DESC"
        ).fetchall()
        graph = build_graph(checkpointer=saver)
        out = []
        for thread_id, _ in rows:
            snap = graph.get_state(_config(thread_id))
            v = snap.values
            out.append(
                {
                    "thread": thread_id,
                    "task": v.get("task", ""),
                    # a multi-source session has no rounds: its source queries are counted
                    "rounds": len(v.get("queries") if v.get("kind") == "multi" else v.get("records") or []),
                    "status": "done" if v.get("result") else ("interrupted at " + ",".join(snap.next) if snap.next else "empty"),
                    "updated": snap.created_at,
                }
            )
    return out


__all__ = [
    "InputError",
    "ModelUnavailable",
    "SettingsError",
    "check_task",
    "home_dir",
    "list_sessions",
    "make_context",
    "open_checkpointer",
    "research",
    "resume",
    "verify",
    "session_state",
]
