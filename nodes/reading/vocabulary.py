"""What the heuristic novelty needs from a session's accepted results, kept up to date round by round.

``assess_novelty`` scores a round against everything the session accepted: the vocabulary of all accepted
results and each one's task relevance. Rebuilt every round, that is work over all accepted results per
round (0.77 + 0.66 ms at 500 accepted, ``saturate bench perf``); an ``AcceptedIndex`` holds it and adds only
the results accepted since, so a round costs work over its own results:

- ``vocab``: the union of the accepted results' term sets (``accepted_vocabulary``);
- per accepted result, the task terms it has and the task names it has whole, and per task term the number of
  accepted results that have it: ``relative_relevance`` then needs only the round's own results' term sets.

The index lives in memory beside the graph state, never in it (the checkpoint does not grow), in the session's
runtime ``Context`` (``Context.cache``: it lives and dies with the context, and two contexts never share it): one
per session, found by the identity of the first accepted result object (LangGraph hands a run's nodes the same
objects step after step; ``merge_results`` keeps each accepted result object and their order). It is used only
while its results are, object for object and in order, the first of the session's accepted results, with the title
and snippet they had when indexed; anything else (a resumed or forked session, whose state comes from a
checkpoint as new objects; an accepted set that is not an extension of the indexed one; a result changed in
place) rebuilds it from the state. Without a context the index is built afresh on every call. The results are the
same as recomputing everything (tests check it against ``accepted_vocabulary`` and ``relative_relevance`` after
resume and fork).

Bounded (``CACHE_SIZE`` sessions per context, least recently used out: a context may serve many sessions); one
lock around the lookup and the scoring, so sessions on threads never see an index another thread is extending.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from saturate.nodes.reading.salience import result_text, task_terms_of
from saturate.state.context import Context, SessionCache
from saturate.state.text import term_set

CACHE = "reading.vocabulary"  # the cache's name in a Context (Context.cache)
CACHE_SIZE = 64


class AcceptedIndex:
    """The vocabulary and relevance statistics of one session's accepted results (see the module docstring)."""

    def __init__(self, task: str):
        self.task = task
        self.tt = task_terms_of(task)
        self.items: list[tuple[Mapping[str, Any], object, object]] = []  # (result, its title, its snippet) when indexed
        self.vocab: set[str] = set()
        self.hits: list[tuple[frozenset[str], int]] = []  # per accepted result: (task terms, task names found)
        self.df: dict[str, int] = dict.fromkeys(self.tt.terms, 0)  # task term -> accepted results that have it

    def add(self, result: Mapping[str, Any]) -> None:
        title, snippet = result.get("title", ""), result.get("snippet", "")
        self.items.append((result, title, snippet))
        self.vocab.update(term_set(f"{title} {snippet}"))  # the text accepted_vocabulary reads
        ts = term_set(result_text(result))  # the text relevance_weights reads
        hits = self.tt.hits(ts)
        self.hits.append(hits)
        for t in hits[0]:
            self.df[t] += 1

    def prefix_of(self, task: str, accepted: Sequence[Mapping[str, Any]]) -> bool:
        """Whether the indexed results are the first of ``accepted``, unchanged."""
        if task != self.task or len(self.items) > len(accepted):
            return False
        return all(
            r is cur and r.get("title", "") is title and r.get("snippet", "") is snippet
            for (r, title, snippet), cur in zip(self.items, accepted)
        )

    def relative_relevance(self, new: Sequence[Mapping[str, Any]]) -> list[float]:
        """``reading.salience.relative_relevance(task, accepted, new)`` from the index and the new results only."""
        tt = self.tt
        new_sets = [term_set(result_text(r)) for r in new]
        df = {t: self.df[t] + sum(1 for ts in new_sets if t in ts) for t in tt.terms}
        idf = tt.idf(len(self.items) + len(new), df)
        best = max((tt.weight(h, found, idf, 0.0, 0) for h, found in self.hits), default=0.0)
        weights = [tt.weight(*tt.hits(ts), idf, 0.0, 0) for ts in new_sets]
        return [min(1.0, w / best) if best > 0 else 1.0 for w in weights]


def cache_of(context: Context | None) -> SessionCache | None:
    """The index cache of ``context``'s session (id(first accepted result) -> its index); None without a context."""
    return context.cache(CACHE, CACHE_SIZE) if isinstance(context, Context) else None


@contextmanager
def accepted_index(
    task: str, accepted: Mapping[str, Mapping[str, Any]], context: Context | None = None
) -> Iterator[AcceptedIndex]:
    """The index of ``accepted`` (a session's accepted results by url), up to date, kept in ``context``'s cache
    (built afresh without a context); use it inside the block."""
    results = list(accepted.values())
    cache = cache_of(context)
    if cache is None:
        index = AcceptedIndex(task)
        for r in results:
            index.add(r)
        yield index
        return
    with cache.lock:
        index = None
        if results:
            key = id(results[0])
            index = cache.get(key)
            if index is None or not index.prefix_of(task, results):
                index = AcceptedIndex(task)
            for r in results[len(index.items) :]:
                index.add(r)
            cache.put(key, index)  # holds results[0]: no other object can take its id while the entry lives
        yield index or AcceptedIndex(task)


def cache_clear(context: Context) -> None:
    """Forget every index ``context`` keeps (tests; a benchmark's resumed session)."""
    cache = cache_of(context)
    if cache is not None:
        with cache.lock:
            cache.clear()
