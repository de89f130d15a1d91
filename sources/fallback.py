"""FallbackSource: an ordered chain of sources (``source ddg,searxng,local``) that answers every query with the
first source able to.

A source that fails (a SearchError after its own retries: rate limited, unreachable, its engines down) is skipped
for ``cooldown_s`` seconds — asking it again at once would fail again and cost its retries — and the next one is
asked the same query; a source that answers with nothing is not cooled down, but the next one is asked too (an
empty page is what a rate-limited DuckDuckGo often returns). Every switch is a note of the round (which source did
not answer and why, which one did), and ``answered`` names the source whose results the round holds, so the
round record, ``saturate show`` and the report say who answered. When no source can answer, one SearchError
lists each one's reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from saturate.state.context import SearchError, SearchSource
from saturate.state.records import SearchResult
from saturate.state.text import clip


class FallbackSource:
    """Search ``sources`` in order; see the module. ``clock`` is injectable for tests."""

    def __init__(
        self, sources: Sequence[SearchSource], cooldown_s: float = 300.0, clock: Callable[[], float] = time.monotonic
    ):
        if not sources:
            raise ValueError("a fallback chain needs at least one source")
        self.sources = list(sources)
        self.name = ",".join(s.name for s in self.sources)
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._cool_until: dict[str, float] = {}
        self._notes: list[str] = []
        self.answered: str | None = None  # the source of the last search's results

    def search(self, query: str, k: int) -> list[SearchResult]:
        reasons: list[str] = []
        now = self._clock()
        self.answered = None
        for i, source in enumerate(self.sources):
            later = i + 1 < len(self.sources)
            until = self._cool_until.get(source.name, 0.0)
            if now < until:
                reasons.append(f"{source.name} skipped (failed {self.cooldown_s - (until - now):.0f} s ago)")
                continue
            try:
                results = source.search(query, k)
            except Exception as err:  # noqa: BLE001 - any failure moves to the next source, with its reason
                self._cool_until[source.name] = now + self.cooldown_s
                reasons.append(f"{source.name} failed ({clip(str(err), 300)})")
                self._drain(source)
                continue
            self._drain(source)
            if not results and later:
                reasons.append(f"{source.name} found nothing")
                continue
            self.answered = source.name
            if reasons:
                self._notes.append(f"{source.name} answered: {'; '.join(reasons)}")
            return results
        raise SearchError(f"no source of {self.name} could answer: {'; '.join(reasons)}")

    def _drain(self, source) -> None:
        drain = getattr(source, "drain_notes", None)
        if drain is not None:
            self._notes += drain()

    def drain_notes(self) -> list[str]:
        out, self._notes = self._notes, []
        return out

    def fetch(self, result: SearchResult) -> str:
        """The page of ``result``, read by the source that found it."""
        for source in self.sources:
            if source.name == result.source and hasattr(source, "fetch"):
                return source.fetch(result)
        raise KeyError(f"no source of {self.name} named {result.source!r} to read {result.url}")

    def documents(self, ids: list[str]) -> dict[str, str]:
        """The texts of these documents from the members that hold documents (a local corpus in the chain)."""
        out: dict[str, str] = {}
        for source in self.sources:
            read = getattr(source, "documents", None)
            if read is not None:
                out.update(read([i for i in ids if i not in out]))
        return out

    def vectors_of(self, ids: list[str]) -> dict[str, list[float]]:
        """The stored vectors of these documents, from the members that store them."""
        out: dict[str, list[float]] = {}
        for source in self.sources:
            read = getattr(source, "vectors_of", None)
            if read is not None:
                out.update(read([i for i in ids if i not in out]))
        return out

    def meaning(self, question: str, ids: list[str], identity: str) -> dict[str, float]:
        """``LocalCorpus.meaning`` of these documents, from the members that store vectors of that model."""
        out: dict[str, float] = {}
        for source in self.sources:
            read = getattr(source, "meaning", None)
            if read is not None:
                out.update(read(question, [i for i in ids if i not in out], identity))
        return out

    def close(self) -> None:
        for source in self.sources:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def __repr__(self) -> str:
        return f"FallbackSource({self.name}, cooldown {self.cooldown_s:g} s)"
