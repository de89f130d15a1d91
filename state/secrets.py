"""API keys: read from the environment only, never a setting, so never checkpointed, and masked wherever shown.

An OpenAI-compatible server (``model = openai:<name>``) may want a key. It is read from
``SATURATE_OPENAI_API_KEY``, else ``OPENAI_API_KEY``, when the client is built; a message that could carry it
(a server's error text, an exception recorded in a round) and every model reply (``nodes/_model.py``: a model that
echoes its key would put it in the answer, the knowledge and the checkpoints) go through ``redact`` first.
"""

from __future__ import annotations

import os

from saturate.state.text import without_pieces

API_KEY_ENV = ("SATURATE_OPENAI_API_KEY", "OPENAI_API_KEY")
NO_KEY = "not-needed"  # local servers need no key, and the OpenAI client refuses to start without one


def api_key() -> str:
    """The key for OpenAI-compatible servers (``NO_KEY`` when none is set)."""
    return next((os.environ[name].strip() for name in API_KEY_ENV if os.environ.get(name, "").strip()), NO_KEY)


def mask(key: str) -> str:
    """How a key is shown: its last four characters when it is long enough to keep the rest secret."""
    return f"****{key[-4:]}" if len(key) >= 12 else "****"


PIECE = 8  # a run of this many characters of a key is taken out too (a reply may echo part of it)


def redact(text: str) -> str:
    """``text`` with every configured key replaced by its mask, and any piece of ``PIECE`` characters or more of
    it (a model that echoes part of its key, a message cut inside one) by ``****``."""
    for name in API_KEY_ENV:
        key = os.environ.get(name, "").strip()
        if len(key) < 4:
            continue
        if key in text:
            text = text.replace(key, mask(key))
        if len(key) > PIECE:
            text = without_pieces(text, [key], PIECE, "****")
    return text
