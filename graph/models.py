"""The chat model: ChatOllama or ChatOpenAI from settings, a start-up check, and what happens when it is unreachable.

``--model ollama:<name>`` / ``SATURATE_MODEL`` selects a local Ollama model, ``--model openai:<name>`` a model
of an OpenAI-compatible server (LM Studio, llama-server, vLLM) at ``openai_base_url``, ``--model gguf:<path>`` a
GGUF file run inside the process (graph/gguf_chat.py); from Python any LangChain chat model can be passed instead
(it is used as is). Where the servers are and what they hold:
graph/model_servers.py. Ollama's context window is set explicitly (``num_ctx``; its 2,048 default silently
truncates prompts); an OpenAI-compatible server's reported context is kept in the model's metadata.

``model_timeout_s`` bounds a call three ways: httpx applies it to each read
(``client_kwargs["timeout"]``, ChatOpenAI's ``timeout``); ``nodes._model.call_model`` to the whole call
(it reads that same setting), so a server dripping its reply releases the node
in time; and ``reply_bounds`` makes the abandoned request end too: its body must
arrive within that time of the request and be at most ``MAX_REPLY_BYTES`` (a
server ignoring ``num_predict`` is not read forever).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
from pydantic import SecretStr

from saturate.graph.model_servers import (
    PROBE_TIMEOUT_S,
    ModelUnavailable,
    ollama_host,
    ollama_model,
    openai_base_url,
    openai_model,
    protocol,
    served_context,
    served_name,
)
from saturate.state.secrets import api_key
from saturate.state.settings import Settings

__all__ = ["ModelUnavailable", "make_chat_model", "ollama_host", "probe", "reply_bounds", "resolve_chat_model"]
# The largest chat response body read. Ollama streams NDJSON, about 130 bytes a token: the 600 tokens the prompts
# ask for at most (num_predict) are under 100 KB.
MAX_REPLY_BYTES = 2_000_000
_DEADLINE = "saturate_deadline"  # the request extension carrying when its response must be complete


def model_name(settings: Settings) -> str:
    assert settings.model is not None
    return served_name(settings.model)


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
        if isinstance(response.stream, httpx.SyncByteStream):  # always, in the sync client these hooks are for
            response.stream = _BoundedBody(response.stream, request, deadline, max_bytes)

    return {"request": [stamp], "response": [bound]}


def make_chat_model(settings: Settings, context: int | None = None) -> Any:
    """The chat model of ``settings.model``; ``context``: the server's reported context (tokens), for an
    ``openai:`` model (``nodes._model.context_tokens`` reads it from the model's metadata to fit prompts)."""
    if protocol(settings.model) == "gguf":
        from saturate.graph import gguf_chat  # LangChain's chat model base: only for a gguf: model

        return gguf_chat.chat_model(settings)  # its context is the file's (at most num_ctx)
    if protocol(settings.model) == "openai":
        return _openai_chat_model(settings, context)
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


def _openai_chat_model(settings: Settings, context: int | None) -> Any:
    # heavy: langchain_openai (and the openai client) only for an openai: model
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model_name(settings),
        base_url=openai_base_url(settings),
        api_key=SecretStr(api_key()),  # from the environment at each build: never in the settings or a checkpoint
        # per request (the openai client's timeout), and (nodes._model.call_timeout reads it) per call
        timeout=settings.model_timeout_s,
        max_retries=1,  # the openai client's own retry of 408/429/5xx and dropped connections, Retry-After honoured
        # the body bounded as for Ollama: complete within model_timeout_s of the request, at most MAX_REPLY_BYTES
        http_client=httpx.Client(timeout=settings.model_timeout_s, event_hooks=reply_bounds(settings.model_timeout_s)),
        metadata={"context_tokens": context or settings.num_ctx},
    )


def probe(settings: Settings) -> int | None:
    """Check that the model's server answers and has the model; ModelUnavailable with what to do otherwise.
    The context length (tokens) an OpenAI-compatible server reports for it, else None. A ``gguf:`` file is checked
    and loaded (once per process): its context is the one it runs with."""
    if protocol(settings.model) == "gguf":
        from saturate.graph import gguf_chat

        return gguf_chat.load(settings).n_ctx
    name = model_name(settings)
    if protocol(settings.model) == "openai":
        base = openai_base_url(settings)
        return served_context(base, openai_model(base, name, wait_s=max(PROBE_TIMEOUT_S, settings.model_timeout_s)))
    ollama_model(ollama_host(settings), name)
    return None


def resolve_chat_model(settings: Settings, chat_model: Any = None) -> tuple[Any, list[str]]:
    """(chat model or None, notes for the result). A model passed from Python wins and is not probed."""
    if chat_model is not None:
        return chat_model, []
    if settings.model is None:
        return None, []
    try:
        context = probe(settings)
    except ModelUnavailable as exc:
        if settings.on_model_error == "heuristic":
            return None, [f"model {settings.model} unavailable at start ({exc}); this session used the heuristic paths"]
        raise
    model = make_chat_model(settings, context)
    if protocol(settings.model) != "gguf":
        return model, []
    from saturate.graph import gguf_chat  # loaded by make_chat_model

    return model, gguf_chat.notes_of(model)
