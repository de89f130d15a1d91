"""The nodes' in-memory caches never go stale: the validated settings (``state.settings_of``) and, in whole
sessions, the accepted results' vocabulary and relevance statistics (``reading.vocabulary``) equal a fresh
computation after rounds, resume, fork and changed settings; they live in the session's runtime Context, so two
sessions never share one. The index itself, round by round and with results
changed in place, and the cached ``name_in`` and ``stem``: tests/reading/test_vocabulary.py and test_question.py."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

import saturate.state.settings_of as settings_of_module
from saturate.graph import research, resume
from saturate.graph.build import build_graph
from saturate.graph.paths import home_dir
from saturate.graph.session import open_checkpointer
from saturate.graph.timetravel import fork
from saturate.nodes.assess_novelty import accepted_vocabulary, session_novelty
from saturate.nodes.reading import vocabulary
from saturate.nodes.reading.salience import relative_relevance
from saturate.nodes.reading.vocabulary import accepted_index
from saturate.state.context import Context
from saturate.state.settings import Settings, load_settings
from saturate.state.settings_of import settings_of

from conftest import InterruptingSource

TASK = (
    "When did the provisional government ruling during the reign of terror the country premiering Prison Break start?"
)
KW = dict(seed=11, max_rounds=5, min_rounds=3, novelty_epsilon=0.5)


# ------------------------------------------------------------------ settings_of


def test_settings_of_validates_once_per_dict_and_sees_every_change(musique_source):
    ctx = Context(source=musique_source)
    values = load_settings({"novelty_threshold": 2.0}, env={}).model_dump()
    first = settings_of({"settings": values}, ctx)
    assert first == Settings.model_validate(values) and first.novelty_threshold == 2.0
    assert settings_of({"settings": values}, ctx) is first  # the same dict: validated once
    # a new dict (a checkpoint read back on resume or fork) with the same content: an equal Settings
    assert settings_of({"settings": copy.deepcopy(values)}, ctx) == first
    # a fork's changed settings are a new dict: honoured
    forked = {**values, "novelty_threshold": 9.5}
    assert settings_of({"settings": forked}, ctx).novelty_threshold == 9.5
    # the same dict changed in place, even inside a nested value: validated again
    values["novelty_threshold"] = 3.0
    assert settings_of({"settings": values}, ctx).novelty_threshold == 3.0
    values["tier_weights"]["other"] = 0.1
    assert settings_of({"settings": values}, ctx).tier_weights["other"] == 0.1
    # bad settings raise every time (nothing cached)
    bad = {**values, "max_rounds": 0}
    for _ in range(2):
        with pytest.raises(ValueError, match="max_rounds"):
            settings_of({"settings": bad}, ctx)
    # a Settings object passes through
    assert settings_of({"settings": first}, ctx) is first
    # without a context (a routing function, code outside a run): validated every time, nothing kept
    again = settings_of({"settings": values})
    assert again == settings_of({"settings": values}, ctx) and again is not settings_of({"settings": values})
    settings_of_module.cache_clear(ctx)
    assert cached(ctx) == 0


def cached(ctx: Context) -> int:
    """How many settings dicts the session's context keeps validated."""
    cache = settings_of_module.cache_of(ctx)
    assert cache is not None
    return len(cache)


def test_settings_of_cache_is_bounded(musique_source):
    ctx = Context(source=musique_source)
    dicts = [load_settings({"seed": i}, env={}).model_dump() for i in range(settings_of_module.CACHE_SIZE + 10)]
    for i, d in enumerate(dicts):
        assert settings_of({"settings": d}, ctx).seed == i
    assert cached(ctx) == settings_of_module.CACHE_SIZE


def test_two_sessions_never_share_a_cache(musique_source):
    """The caches live in the session's runtime Context: two contexts (two sessions) keep their own, and a copy of
    a context (``dataclasses.replace``, as the server makes one per run) starts with none."""
    one, two = Context(source=musique_source), Context(source=musique_source)
    values = load_settings({}, env={}).model_dump()
    first = settings_of({"settings": values}, one)
    assert settings_of({"settings": values}, one) is first
    assert cached(one) == 1 and cached(two) == 0  # the other session validated nothing
    second = settings_of({"settings": values}, two)
    assert second == first and second is not first  # validated again in the other session, not shared
    assert settings_of({"settings": values}, two) is second
    assert settings_of_module.cache_of(one) is not settings_of_module.cache_of(two)
    assert cached(replace(one)) == 0
    # the accepted results' index likewise
    results = [r.model_dump() for r in musique_source.search(TASK, 5)]
    accepted = {r["url"]: r for r in results}
    with accepted_index(TASK, accepted, one) as a:
        pass
    with accepted_index(TASK, accepted, one) as again:
        assert again is a  # the same session: kept
    with accepted_index(TASK, accepted, two) as b:
        assert b is not a and b.vocab == a.vocab  # the other session: its own, equal
    assert vocabulary.cache_of(one) is not vocabulary.cache_of(two)
    one_cache, two_cache = vocabulary.cache_of(one), vocabulary.cache_of(two)
    assert one_cache is not None and two_cache is not None and len(one_cache) == len(two_cache) == 1
    # without a context: built afresh every call
    with accepted_index(TASK, accepted) as c, accepted_index(TASK, accepted) as d:
        assert c is not d and c.vocab == d.vocab == a.vocab


# ------------------------------------------------------------------ whole sessions: resume and fork


def fresh(task: str, accepted: dict, new: list[dict]) -> tuple[set, list[float]]:
    """What assess_novelty computed before the index: everything from scratch."""
    return accepted_vocabulary(accepted), relative_relevance(task, list(accepted.values()), new)


def novelty_steps(thread: str) -> list[tuple[dict, dict]]:
    """(state before assess_novelty, current after it) for every novelty step in a thread's history."""
    with open_checkpointer(home_dir()) as saver:
        graph = build_graph(checkpointer=saver)
        snaps = list(graph.get_state_history({"configurable": {"thread_id": thread}}))
    by_id = {s.config.get("configurable", {})["checkpoint_id"]: s for s in snaps}
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
