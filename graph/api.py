"""The Python API: run, resume and inspect checkpointed research sessions.

    from saturate.graph import research
    result = research("What is the capital of Zimbabwe?", max_rounds=4, seed=7)
    print(result.answer, [s.url for s in result.sources])

Every session is checkpointed (durability ``sync``) under one thread id, in
SQLite in the data directory (``SATURATE_HOME`` if set, else
``$XDG_DATA_HOME/saturate``, i.e. ``~/.local/share/saturate``), or in
PostgreSQL with ``database_url="postgresql://..."`` (or ``SATURATE_DATABASE_URL``). Starting, resuming
and reading sessions of both modes is the session layer's (``graph.session``);
this module is what a Python user calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from saturate.graph import session
from saturate.graph.models import resolve_chat_model
from saturate.graph.session import InputError, list_sessions, session_state
from saturate.sources import resolve_specs
from saturate.state.context import SearchSource
from saturate.state.graph_state import initial_state
from saturate.state.multi_records import MultiResult
from saturate.state.multi_state import initial_multi_state
from saturate.state.records import AgentResult
from saturate.state.settings import Settings
from saturate.state.text import did_you_mean


class ArgumentError(InputError):
    """A Python API function called with an argument it cannot use (a wrong type, an unknown keyword); the message
    names the argument and what it takes."""


# the API functions' own keywords, suggested beside the settings for a mistyped one (``thread`` → ``thread_id``)
_OWN_KEYWORDS = ("thread_id", "home", "chat_model", "embeddings", "settings", "stream_handler", "source", "sources")


def _type_name(value: Any) -> str:
    return type(value).__name__


def check_arguments(
    fn: str,
    *,
    text: tuple[str, Any] | None = None,
    thread_id: Any = None,
    home: Any = None,
    chat_model: Any = None,
    embeddings: Any = None,
    settings: Any = None,
    stream_handler: Any = None,
    overrides: Mapping[str, Any] | None = None,
) -> None:
    """The arguments of the API function ``fn``, checked at the boundary: ``ArgumentError`` saying which one is
    wrong and what it takes, before anything is opened or run."""
    if text is not None and not isinstance(text[1], str):
        raise ArgumentError(f"{fn}() takes the {text[0]} as a str (got {_type_name(text[1])}: {str(text[1])[:60]!r})")
    if thread_id is not None and not isinstance(thread_id, str):
        raise ArgumentError(f"{fn}(thread_id=...) takes a str (got {_type_name(thread_id)})")
    if home is not None and not isinstance(home, (str, os.PathLike)):
        raise ArgumentError(f"{fn}(home=...) takes a path: a str or os.PathLike (got {_type_name(home)})")
    if chat_model is not None and not isinstance(chat_model, str) and not callable(getattr(chat_model, "invoke", None)):
        raise ArgumentError(
            f"{fn}(chat_model=...) takes a LangChain chat model (with .invoke) or a name such as "
            f"'ollama:qwen2.5:7b' (got {_type_name(chat_model)})"
        )
    methods = ("embed_query", "embed_documents")
    if embeddings is not None and not all(callable(getattr(embeddings, m, None)) for m in methods):
        raise ArgumentError(
            f"{fn}(embeddings=...) takes LangChain Embeddings (embed_query, embed_documents) "
            f"(got {_type_name(embeddings)})"
        )
    if settings is not None and not isinstance(settings, (Settings, Mapping)):
        raise ArgumentError(f"{fn}(settings=...) takes a Settings or a dict of settings (got {_type_name(settings)})")
    if stream_handler is not None and not callable(stream_handler):
        raise ArgumentError(
            f"{fn}(stream_handler=...) takes a callable receiving each chunk (got {_type_name(stream_handler)})"
        )
    unknown = [k for k in overrides or {} if k not in Settings.model_fields]
    if unknown:
        hint = did_you_mean(unknown[0], [*Settings.model_fields, *_OWN_KEYWORDS])
        raise ArgumentError(
            f"{fn}() got an unexpected keyword argument {unknown[0]!r}"
            + (f"; {hint}" if hint else "")
            + ": keywords beyond its own are settings (see saturate.state.Settings)"
        )


def _by_name(source: Any, chat_model: Any, overrides: dict[str, Any]) -> tuple[SearchSource | None, Any]:
    """A source or chat model given by name is resolved as the CLI does (``source="ddg"`` is the ``source``
    setting, ``chat_model="ollama:qwen2.5:7b"`` the ``model`` setting); a source object must be a SearchSource."""
    if isinstance(source, str):
        overrides["source"], source = source, None
    elif source is not None and not isinstance(source, SearchSource):
        raise InputError(
            f"source must be a search source (an object with name, search(query, k) and fetch(result)) or a "
            f"source name such as 'local' or 'ddg' (got {type(source).__name__})"
        )
    if isinstance(chat_model, str):
        overrides["model"], chat_model = chat_model, None
    return source, chat_model


def research(
    task: str,
    *,
    thread_id: str | None = None,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    embeddings: Any = None,
    source: SearchSource | str | None = None,
    settings: Settings | dict | None = None,
    stream_handler=None,
    _kind: str = "question",
    **overrides: Any,
) -> AgentResult:
    """Run one research session to the end and return its result.

    Settings: a ``Settings`` object, or keyword overrides on top of the
    ``SATURATE_*`` environment and the defaults. ``source`` replaces the
    configured search source (any object with ``name``, ``search``, ``fetch``,
    or a source name such as ``"ddg"``, which is the ``source`` setting);
    ``chat_model`` is any LangChain chat model; ``embeddings`` any LangChain
    Embeddings, used when ``rerank`` / ``novelty_method`` ask for embeddings
    (without it they are built from ``embed_model``: see ``graph.embeddings``).
    """
    fn = "verify" if _kind == "claim" else "research"
    if "sources" in overrides:
        raise ArgumentError(
            f"{fn}() searches one source (source=...); for several sources in parallel use "
            "research_multi(task, sources=...)"
        )
    check_arguments(
        fn,
        text=("claim" if _kind == "claim" else "task", task),
        thread_id=thread_id,
        home=home,
        chat_model=chat_model,
        embeddings=embeddings,
        settings=settings,
        stream_handler=stream_handler,
        overrides=overrides,
    )
    source, chat_model = _by_name(source, chat_model, overrides)
    settings = session.resolve_settings(settings, overrides)
    task = session.check_task(task, settings)
    model, notes = resolve_chat_model(settings, chat_model)
    if settings.novelty_method == "model" and model is None and not notes:
        raise InputError("novelty_method=model needs a chat model: set --model ollama:<name> (or pass chat_model)")
    initial = initial_state(task, settings, tuple(notes), kind=_kind)
    thread, state = session.start(
        initial,
        thread_id,
        home,
        model,
        source=source,
        stream_handler=stream_handler,
        embeddings=embeddings,
        database_url=settings.database_url,
    )
    return result_of(state, thread)


def result_of(state: dict, thread_id: str) -> AgentResult:
    """A session's AgentResult, or — paused for a person — one with outcome ``review`` and what to review."""
    if state.get("_review"):
        return AgentResult(outcome="review", task=state.get("task", ""), thread_id=thread_id, review=state["_review"])
    return AgentResult.model_validate({**state["result"], "thread_id": thread_id})


def verify(claim: str, **kwargs: Any) -> AgentResult:
    """Verify a claim: research it with the saturation loop, collect evidence hits, decide.

    Returns an AgentResult with outcome True / False / Invalid, a markdown ``proof``
    citing only evidence hits, and the counted ``sources``. Same keywords as ``research``.
    """
    return research(claim, _kind="claim", **kwargs)


def research_multi(
    task: str,
    *,
    sources: str | list | Mapping[str, Any] | None = None,
    thread_id: str | None = None,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    embeddings: Any = None,
    settings: Settings | dict | None = None,
    stream_handler=None,
    **overrides: Any,
) -> MultiResult:
    """Research ``task`` over several sources at once and return the attributed, tagged result.

    ``sources``: spec strings (``"local:a.jsonl,titles:a.jsonl,ddg"``, see the ``sources``
    setting) or a mapping name -> SearchSource object (a spec of the same name in the
    ``sources`` setting gives its kind, ceiling and description). Sources passed as
    objects are not in the checkpoint: ``resume(thread, sources=...)`` needs them again.
    ``chat_model`` and ``embeddings`` as for ``research``.
    """
    check_arguments(
        "research_multi",
        text=("task", task),
        thread_id=thread_id,
        home=home,
        chat_model=chat_model,
        embeddings=embeddings,
        settings=settings,
        stream_handler=stream_handler,
        overrides=overrides,
    )
    if sources is not None and not isinstance(sources, (str, list, tuple, Mapping)):
        raise ArgumentError(
            f"research_multi(sources=...) takes spec strings ('local,wiki'), a list of them, or a mapping "
            f"name -> source object (got {_type_name(sources)})"
        )
    objects = sources if isinstance(sources, Mapping) else None
    if sources is not None and objects is None:
        overrides["sources"] = sources
    for name, obj in (objects or {}).items():
        if not isinstance(obj, SearchSource):
            raise InputError(
                f"source {name!r} must be a search source object (name, search, fetch); "
                f"to name sources by kind pass a spec string such as 'local:a.jsonl,ddg'"
            )
    _, chat_model = _by_name(None, chat_model, overrides)
    settings = session.resolve_settings(settings, overrides)
    task = session.check_task(task, settings)
    if settings.review != "off":
        raise InputError(
            f"review {settings.review!r} works with single-source sessions; multi-source ones are not paused"
        )
    if objects is not None and not objects:
        raise InputError("no sources given")
    specs = resolve_specs(
        settings,
        list(objects) if objects is not None else None,
        {n: getattr(o, "kind", "local") for n, o in (objects or {}).items()},
    )
    model, notes = resolve_chat_model(settings, chat_model)
    initial = initial_multi_state(task, settings, specs, tuple(notes))
    thread, state = session.start(
        initial,
        thread_id,
        home,
        model,
        sources=objects,
        stream_handler=stream_handler,
        embeddings=embeddings,
        database_url=settings.database_url,
    )
    return MultiResult.model_validate({**state["result"], "thread_id": thread})


def resume(
    thread_id: str,
    *,
    home: str | os.PathLike | None = None,
    chat_model: Any = None,
    embeddings: Any = None,
    source: SearchSource | None = None,
    sources: Mapping[str, SearchSource] | None = None,
    stream_handler=None,
    database_url: str | None = None,
    review: Any = None,
) -> AgentResult | MultiResult:
    """Continue a session of either mode from its last completed step (a no-op for a finished one).

    ``chat_model`` and ``embeddings`` are not in the checkpoint: pass them again, or they are built from the
    session's settings. ``database_url``: where the session is (default: ``SATURATE_DATABASE_URL``, else the
    data directory's sessions.db). ``review``: the decision for a session paused for review (outcome
    ``review``): ``"approve"``, ``{"action": "edit", "queries": [...]}``, ``{"action": "more", "note": "..."}``
    or LangGraph's ``Command(resume=...)`` carrying one (``state/review.py``)."""
    check_arguments(
        "resume", text=("thread_id", thread_id), home=home, embeddings=embeddings, stream_handler=stream_handler
    )
    if chat_model is not None and not isinstance(chat_model, str):
        check_arguments("resume", chat_model=chat_model)
    state = session.resume(
        thread_id,
        home,
        chat_model,
        source,
        sources,
        stream_handler,
        embeddings,
        database_url=database_url,
        review=review,
    )
    if state.get("kind") == "multi":
        return MultiResult.model_validate({**state["result"], "thread_id": thread_id})
    return result_of(state, thread_id)


__all__ = [
    "ArgumentError",
    "InputError",
    "list_sessions",
    "research",
    "research_multi",
    "resume",
    "session_state",
    "verify",
]
