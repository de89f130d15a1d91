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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_INT = re.compile(r"-?\d+")
_JSON_OBJ = re.compile(r"\{.*\}", re.DOTALL)
MAX_QUERY_CHARS = 300  # a query a model writes is cut here (plans, gap queries, loop decisions)

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
        """(system, user) with ``fields`` filled in (each template takes the fields it names)."""
        return self.system.format(**fields), self.user.format(**fields)


@dataclass
class Reply:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0


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


def call_model(model: Any, system: str, user: str, **options: Any) -> Reply:
    """One chat call; the reply text without think blocks, and its token usage. Raises on failure."""
    reply = with_options(model, **options).invoke([SystemMessage(content=system), HumanMessage(content=user)])
    content = reply.content if hasattr(reply, "content") else reply
    if isinstance(content, list):  # content blocks
        content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    usage = getattr(reply, "usage_metadata", None) or {}
    return Reply(strip_think(str(content)), int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))


def first_int(text: str) -> int | None:
    m = _INT.search(text or "")
    return int(m.group(0)) if m else None


def first_line(text: str) -> str:
    """The first non-empty line, without surrounding quotes, bullets or a 'Query:' label."""
    for line in (text or "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        line = re.sub(r"^(?:search\s+)?query\s*:\s*", "", line, flags=re.IGNORECASE)
        line = line.strip().strip("\"'“”‘’`").strip()
        if line:
            return line
    return ""


def parse_json_object(text: str) -> dict | None:
    """A JSON object from a reply: as is, from a ```json fence, or the outermost {...}; light repair
    (single quotes, trailing commas). None when nothing parses."""
    text = strip_think(text)
    candidates = [text]
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fence:
        candidates.append(fence.group(1))
    m = _JSON_OBJ.search(text)
    if m:
        candidates.append(m.group(0))
    for c in candidates:
        for attempt in (c, re.sub(r",\s*([}\]])", r"\1", c.replace("'", '"'))):
            try:
                value = json.loads(attempt)
            except (ValueError, TypeError):
                continue
            if isinstance(value, dict):
                return value
    return None


def error_text(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}"[:300]


class ModelUsage:
    """Counts one node's model calls and tokens for its round record."""

    def __init__(self, node: str):
        self.node, self.calls, self.tokens_in, self.tokens_out = node, 0, 0, 0

    def call(self, model: Any, prompt: Prompt, *, then: str = "", **fields: Any) -> Reply:
        """One call of ``prompt`` with ``fields``; ``then`` is appended to the user text (a retry's reminder)."""
        system, user = prompt.render(**fields)
        self.calls += 1
        reply = call_model(model, system, f"{user}\n{then}" if then else user, **prompt.options)
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        return reply

    def record(self) -> dict:
        """Fields for the round record (summed across nodes by the records reducer)."""
        return {
            "model_calls": self.calls,
            "model_calls_by_node": {self.node: self.calls} if self.calls else {},
            "model_tokens": {"in": self.tokens_in, "out": self.tokens_out} if self.calls else {},
        }
