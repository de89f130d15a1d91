"""Asking a source one query: the search step both modes share.

With ``exclude_seen`` the source is asked for more than ``k`` (past the results
already in hand, at most ``MAX_FETCH``) so a query can still bring ``k`` unseen
results; how many of its top ``k`` were repeats is counted. A source that
returns one URL twice keeps the first. A failed search is an empty answer with
its error recorded (failure is data); with a ``timeout`` the search runs under
that wall-clock bound (``_deadline``), a hanging one included.

With a ``rerank`` function the source's top ``depth`` candidates are re-ordered
before they count as results (``embedding_reranker``: cosine to the task in
embedding space blended with the source's own, normalised score); ``top``,
``repeats`` and ``unseen`` then follow the new order. A failing re-ranker is
recorded and the source's order kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from saturate.nodes._deadline import DeadlineExceeded, call_with_deadline
from saturate.nodes._model import error_text
from saturate.nodes._notes import drain_notes

MAX_FETCH = 50  # over-fetch bound when skipping results already in hand


@dataclass
class Answer:
    top: list[dict] = field(default_factory=list)  # the source's top k, as ranked
    unseen: list[dict] = field(default_factory=list)  # the first k results not in ``seen``
    repeats: int = 0  # how many of ``top`` were in ``seen``
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)  # what the source noted about its files (index rebuilt ...)


def ask(
    source,
    name: str,
    query: str,
    k: int,
    seen: Collection[str],
    exclude_seen: bool,
    timeout: float | None = None,
    extra: int = 0,
    rerank: Callable[[list[dict]], list[dict]] | None = None,
    depth: int = 0,
) -> Answer:
    """One query to ``source`` (``name`` for error messages); never raises for a failed search.

    ``extra``: also ask for that many results past the top ``k`` (``unseen`` then holds up to ``k + extra``),
    so a caller can take more without a second search."""
    want = min(MAX_FETCH, k + extra + len(seen)) if exclude_seen else k + extra
    if rerank is not None:
        want = max(want, depth)
    answer = Answer()
    raw: list[dict] = []
    try:
        got = (
            source.search(query, want)
            if timeout is None
            else call_with_deadline(source.search, query, want, timeout=timeout)
        )
        raw, dropped = usable_results(got)
        if dropped:
            answer.notes.append(
                f"search {name} {query!r}: {dropped} result(s) without an http(s) link or not a result at all "
                "dropped (javascript:, data:, file: … are never sources)"
            )
    except DeadlineExceeded as exc:
        answer.timed_out = True
        answer.errors.append(f"search {name} {query!r}: timeout ({exc})")
    except Exception as exc:  # failure is data: recorded, the session goes on
        answer.errors.append(f"search {name} {query!r}: {error_text(exc)}")
    answer.notes += drain_notes(source, name)
    unique: dict[str, dict] = {}
    for r in raw:
        unique.setdefault(r["url"], r)
    raw = list(unique.values())
    if rerank is not None and raw:
        try:
            raw = rerank(raw[:depth]) + raw[depth:]
        except Exception as exc:  # failure is data: the source's own order stands
            answer.errors.append(f"rerank {name} {query!r}: {error_text(exc)}")
    answer.top = raw[:k]
    answer.repeats = sum(1 for r in answer.top if r["url"] in seen)
    pool = raw if exclude_seen else raw[: k + extra]
    answer.unseen = [r for r in pool if r["url"] not in seen][: k + extra]
    return answer


_SOURCE_URL = re.compile(r"(?:https?|local)://[^\s/?#]+", re.IGNORECASE)  # a web page, or a local corpus's document


def usable_results(got: Any) -> tuple[list[dict], int]:
    """(the results a source returned as dicts, how many were dropped): each needs a link to a web page or a local
    corpus's document (``javascript:``, ``data:``, ``file:`` and anything else never become a source); a missing
    title is its link, a missing snippet empty — a source of one's own (Python API) need not fill every field."""
    out: list[dict] = []
    dropped = 0
    for r in got or []:
        try:
            d = r.model_dump() if hasattr(r, "model_dump") else dict(r)
        except (TypeError, ValueError):
            dropped += 1
            continue
        url = d.get("url")
        if not isinstance(url, str) or not _SOURCE_URL.match(url.strip()):
            dropped += 1
            continue
        d["url"] = url.strip()
        d["title"] = str(d.get("title") or d["url"])
        d["snippet"] = str(d.get("snippet") or "")
        out.append(d)
    return out, dropped


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def result_passage(result: Mapping[str, Any]) -> str:
    """The text of a result that is embedded: its title and snippet."""
    return f"{result.get('title', '')}. {result.get('snippet', '')}".strip(". ")


def passage_vectors(embeddings, source, results: Sequence[Mapping[str, Any]]) -> list[list[float]]:
    """The results' vectors: a local corpus's stored document vectors where the corpus holds them under the same
    model as ``embeddings`` (``LocalCorpus.vectors_of``: no text is embedded twice), else their passages embedded."""
    stored: dict[str, list[float]] = {}
    if source is not None and getattr(embeddings, "identity", None) is not None:
        if getattr(source, "vector_identity", None) == embeddings.identity:
            stored = source.vectors_of([r["id"] for r in results if r.get("id")])
    missing = [r for r in results if r.get("id") not in stored]
    fresh = iter(embeddings.embed_documents([result_passage(r) for r in missing]) if missing else [])
    return [stored[r["id"]] if r.get("id") in stored else next(fresh) for r in results]


def embedding_reranker(embeddings, anchor: str, weight: float, source=None) -> Callable[[list[dict]], list[dict]]:
    """Re-order candidates by ``weight`` x cosine(anchor, candidate) + (1 - weight) x the source's score,
    min-max normalised over the candidates (a source without scores: its rank, 1 for the first); the candidates'
    vectors are the source's stored ones when it has them (``passage_vectors``)."""
    anchor_vec: list[float] = []

    def rerank(candidates: list[dict]) -> list[dict]:
        if not anchor_vec:
            anchor_vec.extend(embeddings.embed_query(anchor))
        vecs = passage_vectors(embeddings, source, candidates)
        n = len(candidates)
        raw = [s for s in (r.get("score") for r in candidates) if s is not None]
        if len(raw) == n and n > 1 and max(raw) > min(raw):  # every candidate has a score
            lo, hi = min(raw), max(raw)
            source_score = [(s - lo) / (hi - lo) for s in raw]
        else:
            source_score = [1 - i / n for i in range(n)]
        blended = [weight * cosine(anchor_vec, v) + (1 - weight) * s for v, s in zip(vecs, source_score)]
        order = sorted(range(n), key=lambda i: -blended[i])
        return [candidates[i] for i in order]

    return rerank


def reranker(
    settings, embeddings, task: str, notes: list[str], source=None
) -> Callable[[list[dict]], list[dict]] | None:
    """The re-ranker the settings ask for (``rerank``), anchored on the task; None for ``none``. Without
    embeddings in the runtime context the source's order stands, and ``notes`` says so."""
    if settings.rerank != "embedding":
        return None
    if embeddings is None:
        notes.append("rerank=embedding but no embeddings in the runtime context: the source's order was kept")
        return None
    return embedding_reranker(embeddings, task, settings.rerank_weight, source)
