"""The Python API of multi-source sessions (checkpointed like single-loop sessions).

    from saturate.graph.multi_api import research_multi
    result = research_multi("Who wrote ...?", sources="local:../shared/data/musique/corpus.jsonl,"
                            "titles:../shared/data/musique/corpus.jsonl")
    print(result.answer, result.tags, [a.name for a in result.key_actors])
    print(result.report)                     # Markdown: answer, tagged sources with attribution, Key actors

``sources`` may instead be a mapping name -> SearchSource object (a spec of the
same name in the ``sources`` setting gives its kind, ceiling and description).
``graph.session_state`` and ``graph.resume`` recognise a multi-source thread
(``kind == "multi"``) and use this graph. Sources passed as objects are not in
the checkpoint: ``resume_multi(thread, sources=...)`` needs them again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from saturate.graph.api import InputError, _config, _run, check_task, home_dir, new_thread_id, open_checkpointer, resolve_settings
from saturate.graph.models import resolve_chat_model
from saturate.graph.build_multi import build_multi_graph
from saturate.graph.multi_sources import open_sources, resolve_specs
from saturate.sources.pages import SqlitePageStore
from saturate.state.context import Context
from saturate.state.multi_records import MultiResult
from saturate.state.multi_state import initial_multi_state
from saturate.state.settings import Settings


def _context(specs: list[dict], settings: Settings, home, model, objects: Mapping | None) -> Context:
    sources = dict(objects) if objects is not None else open_sources(specs, settings, home)
    first = sources[specs[0]["name"]]
    return Context(source=first, sources=sources, chat_model=model, pages=SqlitePageStore(home / "pages.db"))


def research_multi(
    task: str,
    *,
    sources: str | list | Mapping[str, Any] | None = None,
    thread_id: str | None = None,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    settings: Settings | None = None,
    stream_handler=None,
    **overrides: Any,
) -> MultiResult:
    """Research ``task`` over several sources at once and return the attributed, tagged result."""
    objects = sources if isinstance(sources, Mapping) else None
    if sources is not None and objects is None:
        overrides["sources"] = sources
    settings = resolve_settings(settings, overrides)
    task = check_task(task, settings)
    if objects is not None and not objects:
        raise InputError("no sources given")
    specs = resolve_specs(settings, list(objects) if objects is not None else None,
                          {n: getattr(o, "kind", "local") for n, o in (objects or {}).items()})
    home_path = home_dir(home)
    thread_id = thread_id or new_thread_id()
    with open_checkpointer(home_path) as saver:
        graph = build_multi_graph(checkpointer=saver)
        if graph.get_state(_config(thread_id)).values:
            raise InputError(f"thread {thread_id!r} already exists; use resume, or pick another --thread")
        model, notes = resolve_chat_model(settings, chat_model)
        context = _context(specs, settings, home_path, model, objects)
        state = _run(graph, initial_multi_state(task, settings, specs, tuple(notes)), thread_id, context, stream_handler)
    return MultiResult.model_validate(state["result"])


def multi_state(thread_id: str, saver) -> dict:
    snap = build_multi_graph(checkpointer=saver).get_state(_config(thread_id))
    return {**snap.values, "_next": list(snap.next)}


def resume_multi(thread_id: str, *, home=None, chat_model: Any = None, sources: Mapping | None = None,
                 stream_handler=None) -> MultiResult:
    home_path = home_dir(home)
    with open_checkpointer(home_path) as saver:
        graph = build_multi_graph(checkpointer=saver)
        snap = graph.get_state(_config(thread_id))
        if not snap.values:
            raise InputError(f"unknown thread {thread_id!r}")
        state = snap.values
        if snap.next:
            provided = [spec["name"] for spec in state["sources"] if spec.get("provided")]
            if provided and sources is None:
                raise InputError(f"thread {thread_id!r} searched sources passed from Python ({', '.join(provided)}); "
                                 "pass them again: resume_multi(thread, sources={name: source, ...})")
            settings = Settings.model_validate(state["settings"])
            model, notes = resolve_chat_model(settings, chat_model)
            if notes:
                graph.update_state(_config(thread_id), {"notes": [f"on resume: {n}" for n in notes]})
            context = _context(state["sources"], settings, home_path, model, sources)
            state = _run(graph, None, thread_id, context, stream_handler)
    if not state.get("result"):
        raise InputError(f"thread {thread_id!r} has no result and nothing left to run")
    return MultiResult.model_validate(state["result"])
