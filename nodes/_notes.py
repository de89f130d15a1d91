"""Notes a source or store keeps about its own files (an index rebuilt, a damaged cache moved aside ...).

They are read once each (``drain_notes``) and land in the round's fallbacks or
the session's notes, so a repair is never silent.
"""

from __future__ import annotations

from saturate.nodes._model import error_text


def drain_notes(owner: object, name: str = "") -> list[str]:
    """``owner.drain_notes()`` if it has one; a failure to read them is itself a note."""
    drain = getattr(owner, "drain_notes", None)
    if drain is None:
        return []
    try:
        return [str(n) for n in drain()]
    except Exception as exc:
        return [f"notes of {name or type(owner).__name__}: {error_text(exc)}"]
