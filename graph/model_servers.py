"""The model servers a session talks to: where they are, whether they answer, what they hold.

One place for both protocols, shared by the chat model (graph/models.py) and the embeddings
(graph/embeddings.py):

- **Ollama** (``ollama:<model>``): the base URL is ``ollama_host``, else ``OLLAMA_HOST``, else
  ``http://127.0.0.1:11434``; ``/api/tags`` lists its models.
- **OpenAI-compatible** (``openai:<model>``: LM Studio, llama.cpp's ``llama-server``, vLLM, ...): the base URL
  is ``openai_base_url``, else ``OPENAI_BASE_URL``; the key comes from the environment only
  (``state/secrets.py``); ``/models`` lists the served models and, on vLLM (``max_model_len``) and LM Studio
  (``max_context_length``), their context length; llama.cpp reports its context in ``/props`` (``n_ctx``).

Every failure is a one-line ``BadInput`` of the caller's class saying what to do.
"""

from __future__ import annotations

import os

import httpx

from saturate.state.errors import BadInput
from saturate.state.secrets import NO_KEY, api_key, mask, redact
from saturate.state.settings import Settings, check_http_url, mask_url

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
PROBE_TIMEOUT_S = 5.0
OPENAI_SERVERS = (
    "LM Studio http://127.0.0.1:1234/v1, llama-server http://127.0.0.1:8080/v1, vLLM http://127.0.0.1:8000/v1"
)
# where OpenAI-compatible servers put a model's context length in /models (vLLM; LM Studio; others)
CONTEXT_KEYS = ("max_model_len", "max_context_length", "context_length", "context_window")


class ModelUnavailable(BadInput):
    """The configured model cannot be used (server unreachable, model not there, key refused)."""


def protocol(spec: str | None) -> str:
    """``ollama``, ``openai`` or ``gguf``: the protocol a model spec (``ollama:<name>``, ``openai:<name>``,
    ``gguf:<path>``: llama.cpp inside the process, graph/gguf_chat.py) speaks."""
    return (spec or "").split(":", 1)[0]


def served_name(spec: str) -> str:
    """The model's name on its server: ``qwen2.5:7b`` of ``ollama:qwen2.5:7b``."""
    return spec.split(":", 1)[1].strip()


# --- Ollama ----------------------------------------------------------------------------------------------------


def ollama_host(settings: Settings, error: type[BadInput] = ModelUnavailable) -> str:
    """Ollama's base URL; ``error`` when ``OLLAMA_HOST`` (Ollama's variable, not a setting: the settings check
    ``ollama_host`` themselves) is no usable URL."""
    host = settings.ollama_host or os.environ.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST
    if "://" not in host:  # OLLAMA_HOST is often given as host:port
        host = "http://" + host
    return server_url(host.rstrip("/"), "OLLAMA_HOST", error)


def server_url(url: str, name: str, error: type[BadInput]) -> str:
    """``url`` when it is a usable http(s) URL (``check_http_url``), else ``error`` naming ``name``, where it came
    from, with the URL masked: httpx would fail on it with a traceback at the first request."""
    try:
        return check_http_url(url)
    except ValueError as exc:
        raise error(f"{name} {mask_url(url)!r}: {exc}") from None


def ollama_tags(host: str, error: type[BadInput] = ModelUnavailable, purpose: str = "") -> list[dict]:
    """The models Ollama at ``host`` holds (its /api/tags); ``error`` naming the host when it does not answer."""
    try:
        resp = httpx.get(f"{host}/api/tags", timeout=PROBE_TIMEOUT_S)
        resp.raise_for_status()
        tags = resp.json().get("models") or []
    except (httpx.HTTPError, httpx.InvalidURL, ValueError, AttributeError) as exc:
        raise error(
            f"cannot reach Ollama at {host}{purpose} ({type(exc).__name__}: {exc}). Start it with `ollama serve`, "
            "or point OLLAMA_HOST / --ollama-host at it"
        ) from None
    return [t for t in tags if isinstance(t, dict)]


def ollama_tag(tags: list[dict], name: str) -> dict | None:
    """The tag of model ``name`` (``name`` alone means ``name:latest``, as in Ollama), or None."""
    wanted = {name, name if ":" in name else f"{name}:latest"}
    return next((t for t in tags if {t.get("name"), t.get("model")} & wanted), None)


def ollama_names(tags: list[dict]) -> str:
    return ", ".join(sorted({str(t.get("name") or t.get("model")) for t in tags})) or "none"


def ollama_model(
    host: str, name: str, error: type[BadInput] = ModelUnavailable, purpose: str = "", what: str = "model"
) -> dict:
    """The tag of model ``name`` on Ollama at ``host`` (the start-up probe of the chat model and the embeddings);
    ``error`` naming the host when it does not answer, or what it holds when the model is not there (``what``:
    ``model``, ``embedding model``)."""
    tags = ollama_tags(host, error, purpose)
    tag = ollama_tag(tags, name)
    if tag is None:
        raise error(f"Ollama at {host} has no {what} {name!r} (it has: {ollama_names(tags)}); run `ollama pull {name}`")
    return tag


# --- OpenAI-compatible -----------------------------------------------------------------------------------------


def openai_base_url(settings: Settings, error: type[BadInput] = ModelUnavailable) -> str:
    base = settings.openai_base_url or os.environ.get("OPENAI_BASE_URL", "").strip()
    if not base:
        raise error(
            f"an openai: model needs the server's address: set --openai-base-url / SATURATE_OPENAI_BASE_URL (or "
            f"OPENAI_BASE_URL), e.g. {OPENAI_SERVERS}"
        )
    return server_url(base.rstrip("/"), "OPENAI_BASE_URL", error)  # openai_base_url itself is checked as a setting


def openai_models(
    base: str, error: type[BadInput] = ModelUnavailable, purpose: str = "", wait_s: float = PROBE_TIMEOUT_S
) -> list[dict]:
    """The model entries of ``base``/models; ``error`` with one line (the key masked) when that fails. A server that
    accepts the connection is given ``wait_s`` to answer: a one-slot server (llama-cpp-python) answers nothing while
    it generates another client's reply, which may take as long as a model call."""
    key = api_key()
    headers = {"Authorization": f"Bearer {key}"}
    try:
        resp = httpx.get(f"{base}/models", headers=headers, timeout=httpx.Timeout(PROBE_TIMEOUT_S, read=wait_s))
    except httpx.ReadTimeout:
        raise error(
            f"the OpenAI-compatible server at {base}{purpose} accepted the connection but did not answer /models "
            f"within {wait_s:g} s: busy with another request? (a one-slot server answers nothing while it "
            "generates); try again when it is free, or raise --model-timeout-s"
        ) from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL is no HTTPError: a last guard
        raise error(
            redact(
                f"cannot reach the OpenAI-compatible server at {base}{purpose} ({type(exc).__name__}: {exc}). Start "
                f"it (LM Studio's server, llama-server, vllm serve) or set --openai-base-url (e.g. {OPENAI_SERVERS})"
            )
        ) from None
    if resp.status_code in (401, 403):
        shown = "no API key" if key == NO_KEY else f"the API key {mask(key)}"
        raise error(
            f"the server at {base} refused {shown} (HTTP {resp.status_code}): set SATURATE_OPENAI_API_KEY or "
            "OPENAI_API_KEY to the key it expects"
        )
    if resp.status_code >= 400:
        raise error(f"the server at {base} answered /models with HTTP {resp.status_code}: is it OpenAI-compatible?")
    try:
        data = resp.json().get("data")
    except (ValueError, AttributeError):
        kind = "HTML" if "html" in resp.headers.get("content-type", "").lower() else "something else"
        raise error(
            f"the server at {base} answered /models with {kind}, not JSON: openai_base_url must be the API's base, "
            "usually ending in /v1"
        ) from None
    return [m for m in data or [] if isinstance(m, dict)]


def openai_model(
    base: str, name: str, error: type[BadInput] = ModelUnavailable, purpose: str = "", wait_s: float = PROBE_TIMEOUT_S
) -> dict:
    """The ``/models`` entry of ``name`` at ``base``; ``error`` naming what the server has when it is not there."""
    models = openai_models(base, error, purpose, wait_s)
    entry = next((m for m in models if m.get("id") == name), None)
    if entry is None:
        have = ", ".join(sorted(str(m.get("id")) for m in models)) or "none"
        raise error(f"the server at {base} has no model {name!r} (it has: {have}); load it there first")
    return entry


def served_context(base: str, entry: dict) -> int | None:
    """The context length (tokens) the server reports for a model, or None when it reports none."""
    for key in CONTEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and value > 0:
            return value
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    try:  # llama.cpp's server: the slots' context in /props
        props = httpx.get(f"{root}/props", timeout=PROBE_TIMEOUT_S).json()
        value = (props.get("default_generation_settings") or {}).get("n_ctx")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and value > 0 else None
