"""The chat model: ChatOllama from settings, a start-up check, and what happens when it is unreachable.

``--model ollama:<name>`` / ``SATURATE_MODEL`` selects a local Ollama model; from
Python any LangChain chat model can be passed instead (it is used as is).
Ollama's context window is set explicitly (``num_ctx``; its 2,048 default
silently truncates prompts) and its base URL comes from ``ollama_host``, else
``OLLAMA_HOST``, else ``http://127.0.0.1:11434``.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

from saturate.state.errors import BadInput
from saturate.state.settings import Settings

DEFAULT_HOST = "http://127.0.0.1:11434"
PROBE_TIMEOUT_S = 5.0


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


def make_chat_model(settings: Settings) -> Any:
    # heavy: langchain_ollama (and its ollama client) is imported only when a model is configured
    from langchain_ollama import ChatOllama

    return ChatOllama(
        model=model_name(settings),
        base_url=ollama_host(settings),
        num_ctx=settings.num_ctx,
        client_kwargs={"timeout": settings.model_timeout_s},
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
