"""The nodes' in-memory caches never go stale: the validated settings (``state.settings_of``) and the accepted
results' vocabulary and relevance statistics (``nodes._accepted``) equal a fresh computation after rounds,
resume, fork, changed settings and results changed in place."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import saturate.state.settings_of as settings_of_module
from saturate.graph import research, resume
from saturate.graph.build import build_graph
from saturate.graph.paths import home_dir
from saturate.graph.session import open_checkpointer
from saturate.graph.timetravel import fork
from saturate.nodes.assess_novelty import accepted_vocabulary, session_novelty
from saturate.nodes.reading import vocabulary
from saturate.nodes.reading.question import name_in, stem
from saturate.nodes.reading.salience import relative_relevance
from saturate.nodes.reading.vocabulary import accepted_index
from saturate.state.settings import Settings, load_settings
from saturate.state.settings_of import settings_of

from conftest import InterruptingSource

TASK = (
    "When did the provisional government ruling during the reign of terror the country premiering Prison Break start?"
)
KW = dict(seed=11, max_rounds=5, min_rounds=3, novelty_epsilon=0.5)
QUERIES = [
    TASK,
    "Reign of Terror provisional government",
    "Prison Break premiere country",
    "French Revolution National Convention",
    "Committee of Public Safety",
    "television series premiered 2005",
]


# ------------------------------------------------------------------ settings_of


def test_settings_of_validates_once_per_dict_and_sees_every_change():
    settings_of_module.cache_clear()
    values = load_settings({"novelty_threshold": 2.0}, env={}).model_dump()
    first = settings_of({"settings": values})
    assert first == Settings.model_validate(values) and first.novelty_threshold == 2.0
    assert settings_of({"settings": values}) is first  # the same dict: validated once
    # a new dict (a checkpoint read back on resume or fork) with the same content: an equal Settings
    assert settings_of({"settings": copy.deepcopy(values)}) == first
    # a fork's changed settings are a new dict: honoured
    forked = {**values, "novelty_threshold": 9.5}
    assert settings_of({"settings": forked}).novelty_threshold == 9.5
    # the same dict changed in place, even inside a nested value: validated again
    values["novelty_threshold"] = 3.0
    assert settings_of({"settings": values}).novelty_threshold == 3.0
    values["tier_weights"]["other"] = 0.1
    assert settings_of({"settings": values}).tier_weights["other"] == 0.1
    # bad settings raise every time (nothing cached)
    bad = {**values, "max_rounds": 0}
    for _ in range(2):
        with pytest.raises(ValueError, match="max_rounds"):
            settings_of({"settings": bad})
    # a Settings object passes through
    assert settings_of({"settings": first}) is first


def test_settings_of_cache_is_bounded():
    settings_of_module.cache_clear()
    dicts = [load_settings({"seed": i}, env={}).model_dump() for i in range(settings_of_module.CACHE_SIZE + 10)]
    for i, d in enumerate(dicts):
        assert settings_of({"settings": d}).seed == i
    assert len(settings_of_module._cache) == settings_of_module.CACHE_SIZE


# ------------------------------------------------------------------ name_in and stem (compiled and stemmed once)

_TEXT = st.text(alphabet="ab é'_-.’ 1", max_size=30)


@given(name=_TEXT, text=_TEXT)
def test_name_in_is_the_whole_word_pattern(name, text):
    assert name_in(name, text) == (re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None)


@given(word=st.text(alphabet="aeiousdngyéè'’1", max_size=14))
def test_cached_stem_is_the_stem(word):
    assert stem(word) == stem.__wrapped__(word) == stem(word)


# ------------------------------------------------------------------ the accepted-results index


def fresh(task: str, accepted: dict, new: list[dict]) -> tuple[set, list[float]]:
    """What assess_novelty computed before the index: everything from scratch."""
    return accepted_vocabulary(accepted), relative_relevance(task, list(accepted.values()), new)


def indexed(task: str, accepted: dict, new: list[dict]) -> tuple[set, list[float]]:
    with accepted_index(task, accepted) as index:
        return set(index.vocab), index.relative_relevance(new)


@pytest.fixture
def rounds(musique_source) -> list[list[dict]]:
    """Real search results of six queries on the musique corpus, as SearchResult dicts."""
    return [[r.model_dump() for r in musique_source.search(q, 6)] for q in QUERIES]


def test_index_equals_recomputation_round_after_round(rounds):
    vocabulary.cache_clear()
    accepted: dict = {}
    for i, new in enumerate(rounds):
        assert indexed(TASK, accepted, new) == fresh(TASK, accepted, new), f"round {i + 1}"
        assert indexed(TASK, accepted, new) == fresh(TASK, accepted, new)  # again, from the cache
        accepted = {**accepted, **{r["url"]: r for r in new if r["url"] not in accepted}}  # merge_results
    assert len(vocabulary._cache) == 1  # one session, one index, extended each round


def test_index_after_resume_fork_and_changes_equals_recomputation(rounds):
    vocabulary.cache_clear()
    accepted: dict = {}
    for new in rounds[:4]:
        accepted = {**accepted, **{r["url"]: r for r in new if r["url"] not in accepted}}
    probe = rounds[4]
    indexed(TASK, accepted, probe)  # the index holds all four rounds
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
        assert indexed(TASK, acc, probe) == fresh(TASK, acc, probe), name
    # the original session goes on: still right after the others replaced its index
    assert indexed(TASK, accepted, probe) == fresh(TASK, accepted, probe)
    # another task over the same objects
    other = "Who directed Prison Break?"
    assert indexed(other, accepted, probe) == fresh(other, accepted, probe)
    # a result changed in place (its snippet replaced): rebuilt, not served stale
    indexed(TASK, accepted, probe)
    accepted[urls[0]]["snippet"] = "zanzibar quokka marmalade " + accepted[urls[0]]["snippet"]
    vocab, rel = indexed(TASK, accepted, probe)
    assert "quokka" in vocab and (vocab, rel) == fresh(TASK, accepted, probe)
    accepted[urls[1]]["title"] = "Prison Break provisional government Reign of Terror"
    assert indexed(TASK, accepted, probe) == fresh(TASK, accepted, probe)


def test_index_cache_is_bounded(rounds):
    vocabulary.cache_clear()
    pool = [r for new in rounds for r in new]
    for i in range(vocabulary.CACHE_SIZE + 5):
        acc = {f"{r['url']}#{i}": dict(r) for r in pool[:3]}  # new objects: a new session each
        indexed(TASK, acc, rounds[0])
    assert len(vocabulary._cache) == vocabulary.CACHE_SIZE


# ------------------------------------------------------------------ whole sessions: resume and fork


def novelty_steps(thread: str) -> list[tuple[dict, dict]]:
    """(state before assess_novelty, current after it) for every novelty step in a thread's history."""
    with open_checkpointer(home_dir()) as saver:
        graph = build_graph(checkpointer=saver)
        snaps = list(graph.get_state_history({"configurable": {"thread_id": thread}}))
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snaps}
    steps = []
    for snap in snaps:
        parent = by_id.get((snap.parent_config or {}).get("configurable", {}).get("checkpoint_id"))
        if parent is not None and tuple(parent.next) == ("assess_novelty",):
            steps.append((parent.values, snap.values["current"]))
    return steps


def assert_novelty_recomputed(thread: str) -> int:
    steps = novelty_steps(thread)
    for before, cur in steps:
        acc = before.get("results") or {}
        new = before["current"]["results"]
        vocab, rel = fresh(before["task"], acc, new)
        score, detail = session_novelty(new, acc.keys(), vocab, rel)
        assert cur["novelty_method"] == "heuristic"
        assert (cur["novelty"], {k: v for k, v in cur["novelty_detail"].items() if k != "alt"}) == (score, detail)
    return len(steps)


def test_sessions_resumed_and_forked_in_process_score_novelty_as_from_scratch(home, musique_source):
    research(TASK, thread_id="ref", source=musique_source, **KW)  # warms the caches with its own objects
    with pytest.raises(KeyboardInterrupt):
        research(TASK, thread_id="cut", source=InterruptingSource(musique_source, 3), **KW)
    resume("cut", source=musique_source)
    # a fork with other settings: more results per query (other accepted sets) and a stricter threshold
    fork("ref", 2, new_thread="wide", source=musique_source, results_per_query=8, novelty_threshold=6.0)
    for thread in ("ref", "cut", "wide"):
        assert assert_novelty_recomputed(thread) >= 3, thread
    with open_checkpointer(home_dir()) as saver:
        graph = build_graph(checkpointer=saver)
        wide = graph.get_state({"configurable": {"thread_id": "wide"}}).values
        ref = graph.get_state({"configurable": {"thread_id": "ref"}}).values
    # the fork's settings were honoured by every node after the fork point
    assert wide["settings"]["results_per_query"] == 8 and ref["settings"]["results_per_query"] == 5
    assert all(r["total"] <= 5 for r in ref["records"][2:])  # after round 1 (its quality floor may add more)
    assert any(r["total"] > 5 for r in wide["records"][2:])
    assert all("threshold 6" in r["reason"] for r in wide["records"][2:] if r["decision"] in ("accept", "stop"))
