"""Asking a source one query: the search step both modes share.

With ``exclude_seen`` the source is asked for more than ``k`` (past the results
already in hand, at most ``MAX_FETCH``) so a query can still bring ``k`` unseen
results; how many of its top ``k`` were repeats is counted. A source that
returns one URL twice keeps the first. A failed search is an empty answer with
its error recorded (failure is data); with a ``timeout`` the search runs under
that wall-clock bound (``_deadline``), a hanging one included.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from saturate.nodes._deadline import DeadlineExceeded, call_with_deadline
from saturate.nodes._model import error_text

MAX_FETCH = 50  # over-fetch bound when skipping results already in hand


@dataclass
class Answer:
    top: list[dict] = field(default_factory=list)  # the source's top k, as ranked
    unseen: list[dict] = field(default_factory=list)  # the first k results not in ``seen``
    repeats: int = 0  # how many of ``top`` were in ``seen``
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False


def ask(
    source, name: str, query: str, k: int, seen: Collection[str], exclude_seen: bool, timeout: float | None = None
) -> Answer:
    """One query to ``source`` (``name`` for error messages); never raises for a failed search."""
    want = min(MAX_FETCH, k + len(seen)) if exclude_seen else k
    answer = Answer()
    raw: list[dict] = []
    try:
        got = (
            source.search(query, want)
            if timeout is None
            else call_with_deadline(source.search, query, want, timeout=timeout)
        )
        raw = [r.model_dump() if hasattr(r, "model_dump") else dict(r) for r in got]
    except DeadlineExceeded as exc:
        answer.timed_out = True
        answer.errors.append(f"search {name} {query!r}: timeout ({exc})")
    except Exception as exc:  # failure is data: recorded, the session goes on
        answer.errors.append(f"search {name} {query!r}: {error_text(exc)}")
    unique: dict[str, dict] = {}
    for r in raw:
        unique.setdefault(r["url"], r)
    raw = list(unique.values())
    answer.top = raw[:k]
    answer.repeats = sum(1 for r in answer.top if r["url"] in seen)
    answer.unseen = [r for r in (raw if exclude_seen else answer.top) if r["url"] not in seen][:k]
    return answer
