"""Calling the optional chat model from a node: prompts, defensive parsing, counted calls.

**Prompts** follow one rule everywhere: each is a ``Prompt`` constant (system
and user templates with their sampling options) in the module that formats and
sends it — the node, or the private helper a node calls. Every ``Prompt``
registers itself under its role name in ``PROMPTS``, so tools that must know the
prompts (the scripted Ollama server of the tests and benchmarks) read them from
there instead of restating them.

Small local models drift, so every reply is cleaned (``<think>`` blocks
stripped) and parsed defensively by the caller; every call reports its token
usage so rounds and sessions can count them.

**Hostile replies** are bounded before anything reads them: a reply is cut at
``MAX_REPLY_CHARS`` characters (and the cut noted in ``Reply.notes``), JSON is
extracted in linear time (``parse_json_object``), and a call whose model has a
timeout (``call_timeout``: ChatOllama's ``client_kwargs["timeout"]``, set from
``model_timeout_s`` by graph/models.py) runs under a deadline for the whole call,
so a server dripping its reply cannot hold a node longer than that.
"""

from __future__ import annotations

import contextvars
import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from saturate.nodes._deadline import DeadlineExceeded, call_with_deadline
from saturate.state.text import defuse

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d+)?|\.\d+)")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
MAX_QUERY_CHARS = 300  # a query a model writes is cut here (plans, gap queries, loop decisions)
# A reply is cut here before anything parses it (the cut is noted). The prompts ask for at most 600 tokens
# (num_predict), a few thousand characters; a server ignoring num_predict must not feed the parsers megabytes.
MAX_REPLY_CHARS = 20_000
MAX_JSON_ATTEMPTS = 16  # parse_json_object tries a JSON object at no more than this many '{' of a reply

PROMPTS: dict[str, Prompt] = {}


@dataclass(frozen=True)
class Prompt:
    """A prompt: its role name, system and user templates (``str.format`` fields) and sampling options."""

    name: str
    system: str
    user: str
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if PROMPTS.setdefault(self.name, self) is not self:
            raise ValueError(f"two prompts are named {self.name!r}")

    @property
    def marker(self) -> str:
        """The system text before its first template field: what identifies this prompt in a request."""
        return self.system.split("{", 1)[0]

    def render(self, **fields: Any) -> tuple[str, str]:
        """(system, user) with ``fields`` filled in (each template takes the fields it names).

        Every text field is defused first (``state.text.defuse``): results, pages and corpus text are
        untrusted, whatever their source, and cannot open or close the prompt's data delimiters.
        """
        fields = {k: defuse(v) if isinstance(v, str) else v for k, v in fields.items()}
        return self.system.format(**fields), self.user.format(**fields)


class ModelTimeout(TimeoutError):
    """A model call took longer than its timeout in all (not a ``DeadlineExceeded``: that is the caller's own)."""


@dataclass
class Reply:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    notes: list[str] = field(default_factory=list)  # what was done to the reply (a cut)


def strip_think(text: str) -> str:
    """Remove <think>...</think> blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text or "").strip()


def with_options(model: Any, **options: Any) -> Any:
    """The model with per-prompt sampling options (temperature, num_predict...).

    Applied to models that have these fields (ChatOllama and other pydantic chat
    models) as a copy, so the shared model keeps its own settings (num_ctx, host).
    Models without such a field are used as they are.
    """
    fields = getattr(type(model), "model_fields", {})
    update = {k: v for k, v in options.items() if k in fields}
    return model.model_copy(update=update) if update else model


def call_timeout(model: Any) -> float | None:
    """Seconds one call of ``model`` may take in all, or None (unbounded).

    It is the model's ``client_kwargs["timeout"]`` when that is a number: what graph/models.py sets from
    ``model_timeout_s`` on ChatOllama. httpx applies it to each read; ``call_model`` to the whole call.
    """
    timeout = (getattr(model, "client_kwargs", None) or {}).get("timeout")
    return float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None


def call_model(model: Any, system: str, user: str, **options: Any) -> Reply:
    """One chat call; the reply text without think blocks, and its token usage. Raises on failure.

    The whole call is bounded by ``call_timeout(model)`` (``ModelTimeout`` past it; the abandoned request is
    left to end on its own, which graph/models.py bounds on the wire). The reply is cut at ``MAX_REPLY_CHARS``
    before its think blocks are stripped, and the cut is noted in ``Reply.notes``.
    """
    invoke = with_options(model, **options).invoke
    messages = [SystemMessage(content=system), HumanMessage(content=user)]
    timeout = call_timeout(model)
    if timeout is None:
        reply = invoke(messages)
    else:
        try:  # the call runs in a worker thread: it keeps this thread's context (callbacks, tracing)
            reply = call_with_deadline(contextvars.copy_context().run, invoke, messages, timeout=timeout)
        except DeadlineExceeded:
            raise ModelTimeout(f"no complete reply within {timeout:g} s (model_timeout_s)") from None
    content = reply.content if hasattr(reply, "content") else reply
    if isinstance(content, list):  # content blocks
        content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    content, notes = str(content), []
    if len(content) > MAX_REPLY_CHARS:
        notes.append(f"model reply of {len(content):,} characters cut to {MAX_REPLY_CHARS:,} before parsing")
        content = content[:MAX_REPLY_CHARS]
    usage = getattr(reply, "usage_metadata", None) or {}
    tokens_in, tokens_out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return Reply(strip_think(content), tokens_in, tokens_out, notes)


def first_number(text: str) -> float | None:
    """The first number in the text ("7.5" is 7.5, "Score: 4 of 10" is 4, "-3" is -3); None when there is none."""
    m = _NUMBER.search(text or "")
    return float(m.group(0)) if m else None


first_int = first_number  # the former name (nodes/assess_novelty.py), which read "7.5" as 7


def first_line(text: str) -> str:
    """The first non-empty line, without surrounding quotes, bullets or a 'Query:' label."""
    for line in (text or "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        line = re.sub(r"^(?:search\s+)?query\s*:\s*", "", line, flags=re.IGNORECASE)
        line = line.strip().strip("\"'“”‘’`").strip()
        if line:
            return line
    return ""


def _repair(text: str) -> str:
    """The light repair of a model's almost-JSON: single quotes made double, trailing commas dropped."""
    return _TRAILING_COMMA.sub(r"\1", text.replace("'", '"'))


def parse_json_object(text: str) -> dict | None:
    """The first JSON object in a reply (bare, in a ```json fence or inside prose), else None.

    Linear in the reply: an object is decoded (``json.JSONDecoder.raw_decode``, which ignores what follows
    it) at each '{' in turn, as is and then lightly repaired (single quotes, trailing commas), at no more than
    ``MAX_JSON_ATTEMPTS`` of them, so a reply of 300 KB of '{' costs a few failed decodes, not a backtracking
    regex's quadratic time.
    """
    text = strip_think(text)
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(MAX_JSON_ATTEMPTS):
        if start < 0:
            break
        for attempt, at in ((text, start), (_repair(text[start:]), 0)):
            try:
                value, _end = decoder.raw_decode(attempt, at)
            except (ValueError, RecursionError):  # RecursionError: nesting deeper than json decodes
                continue
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


def error_text(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}"[:300]


class ModelUsage:
    """Counts one node's model calls and tokens for its round record."""

    def __init__(self, node: str):
        self.node, self.calls, self.tokens_in, self.tokens_out = node, 0, 0, 0
        self.notes: list[str] = []  # what was done to the replies (cuts), for the node's fallbacks
        self.by_node: dict[str, int] = {}  # calls per purpose (a node may merge another's usage: merge)

    def call(self, model: Any, prompt: Prompt, *, then: str = "", **fields: Any) -> Reply:
        """One call of ``prompt`` with ``fields``; ``then`` is appended to the user text (a retry's reminder)."""
        system, user = prompt.render(**fields)
        self.calls += 1
        self.by_node[self.node] = self.by_node.get(self.node, 0) + 1
        reply = call_model(model, system, f"{user}\n{then}" if then else user, **prompt.options)
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        self.notes += [f"{self.node}: {note}" for note in reply.notes]
        return reply

    def merge(self, other: ModelUsage) -> None:
        """Count another usage's calls and tokens in this one (its notes are the caller's to keep)."""
        self.calls += other.calls
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        for node, n in other.by_node.items():
            self.by_node[node] = self.by_node.get(node, 0) + n

    def record(self) -> dict:
        """Fields for the round record (summed across nodes by the records reducer)."""
        return {
            "model_calls": self.calls,
            "model_calls_by_node": {k: v for k, v in self.by_node.items() if v} if self.calls else {},
            "model_tokens": {"in": self.tokens_in, "out": self.tokens_out} if self.calls else {},
        }
