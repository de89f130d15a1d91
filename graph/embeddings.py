"""Embeddings for re-ranking and embedding novelty: a LangChain ``Embeddings`` chosen by ``embed_model``.

(Interface only for now: ``resolve_embeddings(settings, embeddings=None, home=None)`` returns the
Embeddings a session needs, or None when its settings use none.)
"""

from __future__ import annotations

from typing import Any

from saturate.state.settings import Settings


def needs_embeddings(settings: Settings) -> bool:
    return settings.rerank == "embedding" or settings.novelty_method == "embedding"


def resolve_embeddings(settings: Settings, embeddings: Any = None, home=None) -> Any:
    """The session's Embeddings: the one given, else one built from ``embed_model`` when the settings need it."""
    if embeddings is not None or not needs_embeddings(settings):
        return embeddings
    raise NotImplementedError("embeddings are being built")
