"""The chat model: ChatOllama from settings, a start-up check, and what happens when it is unreachable.

``--model ollama:<name>`` / ``SATURATE_MODEL`` selects a local Ollama model; from
Python any LangChain chat model can be passed instead (it is used as is).
Ollama's context window is set explicitly (``num_ctx``; its 2,048 default
silently truncates prompts) and its base URL comes from ``ollama_host``, else
``OLLAMA_HOST``, else ``http://127.0.0.1:11434``.

``model_timeout_s`` bounds a call three ways: httpx applies it to each read
(``client_kwargs["timeout"]``); ``nodes._model.call_model`` to the whole call
(it reads that same setting), so a server dripping its reply releases the node
in time; and ``reply_bounds`` makes the abandoned request end too: its body must
arrive within that time of the request and be at most ``MAX_REPLY_BYTES`` (a
server ignoring ``num_predict`` is not read forever).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import httpx

from saturate.state.errors import BadInput
from saturate.state.settings import Settings

DEFAULT_HOST = "http://127.0.0.1:11434"
PROBE_TIMEOUT_S = 5.0
# The largest chat response body read. Ollama streams NDJSON, about 130 bytes a token: the 600 tokens the prompts
# ask for at most (num_predict) are under 100 KB.
MAX_REPLY_BYTES = 2_000_000
_DEADLINE = "saturate_deadline"  # the request extension carrying when its response must be complete


class ModelUnavailable(BadInput):
    """The configured model cannot be used (host unreachable, model not pulled)."""


def ollama_host(settings: Settings) -> str:
    host = settings.ollama_host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
    if "://" not in host:  # OLLAMA_HOST is often given as host:port
        host = "http://" + host
    return host.rstrip("/")


def model_name(settings: Settings) -> str:
    assert settings.model is not None
    return settings.model.split(":", 1)[1]


class ReplyTooLong(httpx.ReadError):
    """A model server sent a response body over MAX_REPLY_BYTES (ignoring num_predict)."""


class _BoundedBody(httpx.SyncByteStream):
    """A response body that fails once it is past its deadline or over ``max_bytes``."""

    def __init__(self, body: httpx.SyncByteStream, request: httpx.Request, deadline: float, max_bytes: int):
        self.body, self.request, self.deadline, self.max_bytes = body, request, deadline, max_bytes

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for chunk in self.body:
            size += len(chunk)
            if size > self.max_bytes:
                raise ReplyTooLong(f"model reply over {self.max_bytes:,} bytes", request=self.request)
            if time.monotonic() > self.deadline:
                raise httpx.ReadTimeout("model reply not complete within model_timeout_s", request=self.request)
            yield chunk

    def close(self) -> None:
        self.body.close()


def reply_bounds(total_s: float, max_bytes: int = MAX_REPLY_BYTES) -> dict:
    """httpx event hooks (a sync client's): each response body must be complete within ``total_s`` of its
    request and at most ``max_bytes``, else reading it raises (``httpx.ReadTimeout`` / ``ReplyTooLong``).

    A read still waits up to the client's read timeout, so a dripping body ends within about twice ``total_s``.
    """

    def stamp(request: httpx.Request) -> None:
        request.extensions[_DEADLINE] = time.monotonic() + total_s

    def bound(response: httpx.Response) -> None:
        request = response.request
        deadline = request.extensions.get(_DEADLINE, time.monotonic() + total_s)
        response.stream = _BoundedBody(response.stream, request, deadline, max_bytes)

    return {"request": [stamp], "response": [bound]}


def make_chat_model(settings: Settings) -> Any:
    # heavy: langchain_ollama (and its ollama client) is imported only when a model is configured
    from langchain_ollama import ChatOllama

    return ChatOllama(
        model=model_name(settings),
        base_url=ollama_host(settings),
        num_ctx=settings.num_ctx,
        # per read, and (nodes._model.call_timeout reads it) per call
        client_kwargs={"timeout": settings.model_timeout_s},
        # the sync client only: httpx's async client awaits its hooks (call_model calls invoke, never ainvoke)
        sync_client_kwargs={"event_hooks": reply_bounds(settings.model_timeout_s)},
    )


def probe(settings: Settings) -> None:
    """Check that Ollama answers and has the model; ModelUnavailable with what to do otherwise."""
    host, name = ollama_host(settings), model_name(settings)
    try:
        resp = httpx.get(f"{host}/api/tags", timeout=PROBE_TIMEOUT_S)
        resp.raise_for_status()
        tags = resp.json().get("models") or []
    except (httpx.HTTPError, ValueError) as exc:
        raise ModelUnavailable(
            f"cannot reach Ollama at {host} ({type(exc).__name__}: {exc}). Start it with `ollama serve`, "
            "point OLLAMA_HOST / --ollama-host at it, or pass --on-model-error heuristic to run without the model"
        ) from None
    names = {t.get("name") for t in tags} | {t.get("model") for t in tags}
    if name not in names and f"{name}:latest" not in names:
        have = ", ".join(sorted(n for n in names if n)) or "none"
        raise ModelUnavailable(f"Ollama at {host} has no model {name!r} (it has: {have}); run `ollama pull {name}`")


def resolve_chat_model(settings: Settings, chat_model: Any = None) -> tuple[Any, list[str]]:
    """(chat model or None, notes for the result). A model passed from Python wins and is not probed."""
    if chat_model is not None:
        return chat_model, []
    if settings.model is None:
        return None, []
    try:
        probe(settings)
    except ModelUnavailable as exc:
        if settings.on_model_error == "heuristic":
            return None, [f"model {settings.model} unavailable at start ({exc}); this session used the heuristic paths"]
        raise
    return make_chat_model(settings), []
