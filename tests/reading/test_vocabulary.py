"""``reading.vocabulary``: the accepted results' index (vocabulary and relevance statistics) equals a fresh
computation round after round, after resume, fork and results changed in place; its cache (the session's, in its
runtime Context) is bounded."""

from __future__ import annotations

import copy

import pytest

from saturate.nodes.assess_novelty import accepted_vocabulary
from saturate.nodes.reading import vocabulary
from saturate.nodes.reading.salience import relative_relevance
from saturate.nodes.reading.vocabulary import accepted_index
from saturate.state.context import Context

TASK = (
    "When did the provisional government ruling during the reign of terror the country premiering Prison Break start?"
)


QUERIES = [
    TASK,
    "Reign of Terror provisional government",
    "Prison Break premiere country",
    "French Revolution National Convention",
    "Committee of Public Safety",
    "television series premiered 2005",
]


def fresh(task: str, accepted: dict, new: list[dict]) -> tuple[set, list[float]]:
    """What assess_novelty computed before the index: everything from scratch."""
    return accepted_vocabulary(accepted), relative_relevance(task, list(accepted.values()), new)


def indexed(task: str, accepted: dict, new: list[dict], ctx: Context | None) -> tuple[set, list[float]]:
    with accepted_index(task, accepted, ctx) as index:
        return set(index.vocab), index.relative_relevance(new)


def cached(ctx: Context) -> int:
    """How many indexes the session's context keeps."""
    cache = vocabulary.cache_of(ctx)
    assert cache is not None
    return len(cache)


@pytest.fixture
def rounds(musique_source) -> list[list[dict]]:
    """Real search results of six queries on the musique corpus, as SearchResult dicts."""
    return [[r.model_dump() for r in musique_source.search(q, 6)] for q in QUERIES]


def test_index_equals_recomputation_round_after_round(rounds, musique_source):
    ctx = Context(source=musique_source)
    accepted: dict = {}
    for i, new in enumerate(rounds):
        assert indexed(TASK, accepted, new, ctx) == fresh(TASK, accepted, new), f"round {i + 1}"
        assert indexed(TASK, accepted, new, ctx) == fresh(TASK, accepted, new)  # again, from the cache
        assert indexed(TASK, accepted, new, None) == fresh(TASK, accepted, new)  # no context: built afresh
        accepted = {**accepted, **{r["url"]: r for r in new if r["url"] not in accepted}}  # merge_results
    assert cached(ctx) == 1  # one session, one index, extended each round
    vocabulary.cache_clear(ctx)
    assert cached(ctx) == 0


def test_index_after_resume_fork_and_changes_equals_recomputation(rounds, musique_source):
    ctx = Context(source=musique_source)
    accepted: dict = {}
    for new in rounds[:4]:
        accepted = {**accepted, **{r["url"]: r for r in new if r["url"] not in accepted}}
    probe = rounds[4]
    indexed(TASK, accepted, probe, ctx)  # the index holds all four rounds
    urls = list(accepted)
    cases = {
        # resume: the same results read back from a checkpoint (new objects)
        "resumed": copy.deepcopy(accepted),
        # fork from an earlier round: a shorter accepted set sharing the first objects ...
        "earlier": {u: accepted[u] for u in urls[:5]},
        # ... which then accepts other results than the original did
        "diverged": {**{u: accepted[u] for u in urls[:5]}, **{r["url"]: r for r in rounds[5]}},
        # the same objects in another order
        "reordered": {u: accepted[u] for u in reversed(urls)},
        # nothing accepted
        "empty": {},
    }
    for name, acc in cases.items():
        assert indexed(TASK, acc, probe, ctx) == fresh(TASK, acc, probe), name
    # the original session goes on: still right after the others replaced its index
    assert indexed(TASK, accepted, probe, ctx) == fresh(TASK, accepted, probe)
    # another task over the same objects
    other = "Who directed Prison Break?"
    assert indexed(other, accepted, probe, ctx) == fresh(other, accepted, probe)
    # a result changed in place (its snippet replaced): rebuilt, not served stale
    indexed(TASK, accepted, probe, ctx)
    accepted[urls[0]]["snippet"] = "zanzibar quokka marmalade " + accepted[urls[0]]["snippet"]
    vocab, rel = indexed(TASK, accepted, probe, ctx)
    assert "quokka" in vocab and (vocab, rel) == fresh(TASK, accepted, probe)
    accepted[urls[1]]["title"] = "Prison Break provisional government Reign of Terror"
    assert indexed(TASK, accepted, probe, ctx) == fresh(TASK, accepted, probe)


def test_index_cache_is_bounded(rounds, musique_source):
    ctx = Context(source=musique_source)
    pool = [r for new in rounds for r in new]
    for i in range(vocabulary.CACHE_SIZE + 5):
        acc = {f"{r['url']}#{i}": dict(r) for r in pool[:3]}  # new objects: a new session each
        indexed(TASK, acc, rounds[0], ctx)
    assert cached(ctx) == vocabulary.CACHE_SIZE
