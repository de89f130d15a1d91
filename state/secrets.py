"""API keys: read from the environment only, never a setting, so never checkpointed, and masked wherever shown.

An OpenAI-compatible server (``model = openai:<name>``) may want a key. It is read from
``SATURATE_OPENAI_API_KEY``, else ``OPENAI_API_KEY``, when the client is built; a message that could carry it
(a server's error text, an exception recorded in a round) goes through ``redact`` first.
"""

from __future__ import annotations

import os

API_KEY_ENV = ("SATURATE_OPENAI_API_KEY", "OPENAI_API_KEY")
NO_KEY = "not-needed"  # local servers need no key, and the OpenAI client refuses to start without one


def api_key() -> str:
    """The key for OpenAI-compatible servers (``NO_KEY`` when none is set)."""
    return next((os.environ[name].strip() for name in API_KEY_ENV if os.environ.get(name, "").strip()), NO_KEY)


def mask(key: str) -> str:
    """How a key is shown: its last four characters when it is long enough to keep the rest secret."""
    return f"****{key[-4:]}" if len(key) >= 12 else "****"


def redact(text: str) -> str:
    """``text`` with every configured key replaced by its mask."""
    for name in API_KEY_ENV:
        key = os.environ.get(name, "").strip()
        if len(key) >= 4 and key in text:
            text = text.replace(key, mask(key))
    return text
