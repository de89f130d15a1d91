"""Calling the optional chat model from a node: defensive, counted, never fatal."""

from __future__ import annotations

import re
from typing import Any

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """Remove <think>...</think> blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text or "").strip()


def call_model(model: Any, system: str, user: str) -> str:
    """One chat call; returns the reply text with think blocks removed. Raises on failure."""
    from langchain_core.messages import HumanMessage, SystemMessage

    reply = model.invoke([SystemMessage(content=system), HumanMessage(content=user)])
    content = reply.content if hasattr(reply, "content") else reply
    if isinstance(content, list):  # content blocks
        content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    return strip_think(str(content))


def error_text(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}"[:300]
