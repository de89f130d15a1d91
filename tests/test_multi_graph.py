"""The multi-source graph on real local corpora: concurrency, ceilings, cross-source dedup, early stops, safety."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from saturate.graph.api import research_multi, session_state
from saturate.graph.build_multi import build_multi_graph
from saturate.nodes.multi.breadcrumbs import BREADCRUMB_PASSES
from saturate.sources.local import LocalCorpus
from saturate.state.context import Context
from saturate.state.multi_records import MultiResult
from saturate.state.multi_state import initial_multi_state
from saturate.state.settings import Settings, load_settings
from saturate.state.source_spec import SourceSpec, resolve

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


class SleepyCorpus(LocalCorpus):
    """A real FTS5 corpus whose every search first sleeps (a stand-in for a slow, I/O-bound source)."""

    sleep_s = 0.15

    def search(self, query, k):
        time.sleep(self.sleep_s)
        return super().search(query, k)


def specs_for(names_kinds, settings):
    return [
        resolve(SourceSpec(name=n, kind=k), settings.source_ceilings, settings.source_descriptions)
        for n, k in names_kinds
    ]


def run_graph(task, sources: dict, kinds: dict | None = None, **overrides):
    settings = load_settings({"cache_ttl_s": 0, **overrides}, env={})
    specs = specs_for([(n, (kinds or {}).get(n, "local")) for n in sources], settings)
    first = next(iter(sources.values()))
    return build_multi_graph().invoke(
        initial_multi_state(task, settings, specs), context=Context(source=first, sources=sources)
    )


@pytest.fixture(scope="module")
def subset_corpus(musique_corpus, tmp_path_factory):
    """A second real corpus sharing documents with musique: its river, falls and Zimbabwe paragraphs."""
    path = tmp_path_factory.mktemp("subset") / "subset.jsonl"
    keep = [
        line
        for line in musique_corpus.open(encoding="utf-8")
        if any(w in json.loads(line)["text"] for w in ("Zimbabwe", "waterfall", "Falls", "Bubye"))
    ]
    path.write_text("".join(keep), encoding="utf-8")
    return path


class WatchedCorpus(SleepyCorpus):
    """A sleeping corpus that counts how many searches of all the sources are sleeping at the same moment."""

    lock = threading.Lock()
    running = 0
    most = 0

    def search(self, query, k):
        with WatchedCorpus.lock:
            WatchedCorpus.running += 1
            WatchedCorpus.most = max(WatchedCorpus.most, WatchedCorpus.running)
        try:
            return super().search(query, k)
        finally:
            with WatchedCorpus.lock:
                WatchedCorpus.running -= 1


def test_loops_run_concurrently(musique_corpus, tmp_path):
    """Three sleeping sources: their searches are in flight at the same moment (events, not seconds: the test holds
    on a busy machine; how much faster that makes a session is `saturate bench multi`'s figure)."""
    sources = {f"s{i}": WatchedCorpus.open(musique_corpus, tmp_path / "index") for i in range(3)}
    WatchedCorpus.running = WatchedCorpus.most = 0
    out = run_graph(BUBYE, sources, source_ceilings={"local": 3}, duplicate_stop_share=1.0, breadcrumb_limit=0)
    loops = [lp for lp in out["loops"] if lp["phase"] == "loop"]
    assert [lp["queries"] for lp in loops] == [3, 3, 3]  # every loop to its ceiling: 3 x 0.15 s of sleep each
    assert WatchedCorpus.most >= 2, "no two sources were ever searched at the same moment: the loops ran in turn"
    total = sum(lp["elapsed_s"] for lp in loops)
    span = max(lp["started"] + lp["elapsed_s"] for lp in loops) - min(lp["started"] for lp in loops)
    assert span < total and out["result"]["debug"]["parallelism"] > 1  # the loops' own records say they overlapped


def test_cross_source_dedup_with_attribution(musique_corpus, subset_corpus, tmp_path):
    sources = {
        "musique": LocalCorpus.open(musique_corpus, tmp_path / "i"),
        "subset": LocalCorpus.open(subset_corpus, tmp_path / "i"),
    }
    out = run_graph(BUBYE, sources, breadcrumb_limit=2)
    merged = out["merged"]
    ids = [i for e in merged for i in e["ids"]]
    assert len(ids) == len(set(ids)), "one document, one merged result"
    both = [e for e in merged if set(e["sources"]) == {"musique", "subset"}]
    assert both, "the shared paragraphs were found by both corpora"
    for e in both:
        assert len(e["urls"]) == 2 and {f["source"] for f in e["found_by"]} == {"musique", "subset"}
        assert all(f["query"] in out["queries"] for f in e["found_by"])
    bubye = next(e for e in merged if e["title"] == "Bubye River")
    assert set(bubye["sources"]) == {"musique", "subset"}
    # surfaced in the result: the cited source lists every source and query that found it
    cited = next(s for s in out["result"]["sources"] if s["title"] == "Bubye River")
    assert {f["source"] for f in cited["found_by"]} == {"musique", "subset"}
    assert out["result"]["debug"]["multi_source_results"] == len(both)


def test_same_corpus_two_kinds_merge_by_url(musique_corpus, tmp_path, home):
    c = str(musique_corpus)
    result = research_multi(BUBYE, sources=f"local:{c},titles:{c}", thread_id="kinds")
    assert [(lp.source, lp.phase) for lp in result.loops if lp.phase == "loop"] == [
        ("local:musique", "loop"),
        ("titles:musique", "loop"),
    ]
    bubye = next(s for s in result.sources if s.title == "Bubye River")
    assert {f.source for f in bubye.found_by} == {"local:musique", "titles:musique"}
    assert {lp.source: lp.ceiling for lp in result.loops if lp.phase == "loop"} == {
        "local:musique": 6,
        "titles:musique": 3,
    }


@pytest.mark.slow  # about 15 s: 15 generated multi-source sessions
@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ceiling=st.integers(1, 4),
    share=st.sampled_from([0.0, 0.5, 0.8, 1.0]),
    k=st.integers(1, 5),
    empty=st.integers(1, 3),
    leads=st.integers(0, 3),
)
def test_ceilings_hold(musique_source, ceiling, share, k, empty, leads):
    sources = {"a": musique_source, "b": musique_source}
    out = run_graph(
        BUBYE,
        sources,
        source_ceilings={"local": ceiling},
        duplicate_stop_share=share,
        results_per_query=k,
        empty_stop_queries=empty,
        breadcrumb_limit=leads,
    )
    loops = [lp for lp in out["loops"] if lp["phase"] == "loop"]
    for lp in loops:
        assert lp["queries"] <= ceiling
        assert sum(1 for ev in out["audit"] if ev["source"] == lp["source"] and ev["phase"] == "loop") == lp["queries"]
    # after the loops: one branch per followed lead or researched entity, one query each; every query audited
    followed = [lp for lp in out["loops"] if lp["phase"] != "loop"]
    assert all(lp["queries"] <= lp["ceiling"] == 1 for lp in followed)
    for phase in ("breadcrumb", "entity"):
        audited = [ev for ev in out["audit"] if ev["phase"] == phase]
        assert len(audited) == sum(lp["queries"] for lp in followed if lp["phase"] == phase)
    assert sum(1 for ev in out["audit"] if ev["phase"] == "breadcrumb") <= leads * BREADCRUMB_PASSES
    assert sum(1 for ev in out["audit"] if ev["phase"] == "entity") <= Settings().entity_limit
    assert all(lp["stop_reason"] in ("ceiling", "saturated", "empty") for lp in loops)
    assert all(lp["queries"] == ceiling for lp in loops if lp["stop_reason"] == "ceiling")
    if share == 1.0:  # "more than 100 % duplicates" never happens: only the ceiling stops a loop that finds things
        assert all(lp["queries"] == ceiling for lp in loops)


def test_two_empty_queries_stop_a_source_early(musique_source):
    silent = LocalCorpus.from_records([{"id": "1", "title": "Zebra", "text": "Zebras graze on the savanna."}], "silent")
    out = run_graph(BUBYE, {"musique": musique_source, "silent": silent}, breadcrumb_limit=0)
    loop = next(lp for lp in out["loops"] if lp["source"] == "silent")
    assert loop["queries"] == 2 and loop["stop_reason"] == "empty" and loop["ceiling"] == 6
    events = [ev for ev in out["audit"] if ev["source"] == "silent"]
    assert [ev["total"] for ev in events] == [0, 0] and events[-1]["action"] == "stop"
    assert "returned nothing" in events[-1]["reasoning"]
    other = next(lp for lp in out["loops"] if lp["source"] == "musique")
    assert other["stop_reason"] != "empty" and other["queries"] >= 2


def test_saturation_heuristic_stops_on_duplicates(musique_source):
    out = run_graph(BUBYE, {"m": musique_source}, breadcrumb_limit=0, entity_limit=0, duplicate_stop_share=0.8)
    loop = out["loops"][0]
    events = [ev for ev in out["audit"] if ev["source"] == "m" and ev["phase"] == "loop"]
    assert loop["stop_reason"] == "saturated" and loop["queries"] < loop["ceiling"] and loop["depth"] == "rich"
    assert events[-1]["duplicates"] / events[-1]["total"] > 0.8 and events[-1]["decided_by"] == "heuristic"
    # a rich source goes on past duplicates only while its new results still name the task's subject
    assert all(ev["duplicates"] / ev["total"] <= 0.8 or ev["on_topic"] for ev in events[:-1])


def test_timeout_trips_and_is_recorded(musique_corpus, musique_source, tmp_path, home):
    slow = SleepyCorpus.open(musique_corpus, tmp_path / "index")
    slow.sleep_s = 1.0
    t0 = time.perf_counter()
    result = research_multi(
        BUBYE,
        sources={"slow": slow, "fast": musique_source},
        thread_id="to",
        source_loop_timeout_s=0.3,
        breadcrumb_limit=0,
    )
    assert time.perf_counter() - t0 < 1.0  # the hanging search was not waited for
    loop = next(lp for lp in result.loops if lp.source == "slow")
    assert loop.stop_reason == "timeout" and loop.timed_out and loop.elapsed_s < 0.6
    assert any(s["kind"] == "timeout" and s["source"] == "slow" for s in result.debug["safety"])
    assert any("timeout tripped (slow)" in n for n in result.debug["notes"])
    state = session_state("to")
    assert any(s["kind"] == "timeout" for s in state["safety"])
    ev = next(ev for ev in state["audit"] if ev["source"] == "slow")
    assert ev["errors"] and "timeout" in ev["errors"][0] and ev["session"] == "to"
    fast = next(lp for lp in result.loops if lp.source == "fast")
    assert not fast.timed_out and result.sources


def test_audit_events_are_checkpointed(musique_corpus, home):
    c = str(musique_corpus)
    research_multi(BUBYE, sources=f"local:{c},titles:{c}", thread_id="aud", breadcrumb_limit=1)
    state = session_state("aud")
    assert state["kind"] == "multi" and state["audit"]
    for ev in state["audit"]:
        assert ev["session"] == "aud" and ev["source"] in ("local:musique", "titles:musique")
        assert {
            "query_no",
            "query",
            "total",
            "new",
            "duplicates",
            "incremental_pct",
            "reasoning",
            "action",
        } <= ev.keys()
        assert ev["reasoning"]
    per = {}
    for ev in state["audit"]:
        if ev["phase"] == "loop":
            per.setdefault(ev["source"], []).append(ev["query_no"])
    assert all(nos == list(range(1, len(nos) + 1)) for nos in per.values()) and len(per) == 2
    # a followed lead's or entity's number is its place among all those followed: unique in the session
    followed = [lead for lead in state["leads"] if lead["followed"]]
    nos = [ev["query_no"] for ev in state["audit"] if ev["phase"] != "loop"]
    assert len(nos) == len(set(nos)) == len(followed) and set(nos) == set(range(1, len(followed) + 1))
    assert {ev["phase"] for ev in state["audit"]} == {"loop", "breadcrumb", "entity"}


def test_runs_are_reproducible(musique_source):
    a = run_graph(BUBYE, {"a": musique_source, "b": musique_source})
    b = run_graph(BUBYE, {"a": musique_source, "b": musique_source})
    assert [e["key"] for e in a["merged"]] == [e["key"] for e in b["merged"]]
    assert a["result"]["answer"] == b["result"]["answer"]


@pytest.mark.slow
def test_interrupted_session_resumes(musique_corpus, musique_source, home):
    from saturate.graph.api import resume
    from saturate.graph.paths import home_dir
    from saturate.graph.session import InputError, open_checkpointer
    from saturate.graph.session import config as _config
    from saturate.sources import open_sources, resolve_specs

    c = str(musique_corpus)
    settings = load_settings({"sources": f"local:{c},titles:{c}"}, env={})
    specs = resolve_specs(settings)
    with open_checkpointer(home_dir()) as saver:  # stop after the loops have been merged
        graph = build_multi_graph(checkpointer=saver, interrupt_after=["merge"])
        sources = open_sources(specs, settings, home_dir())
        graph.invoke(
            initial_multi_state(BUBYE, settings, specs),
            _config("r"),
            # the first source doubles as the context's source, as session.make_context does
            context=Context(source=sources[specs[0]["name"]], sources=sources),
        )
    state = session_state("r")
    assert state["_next"] == ["breadcrumbs"] and state["merged"] and not state["result"]
    result = resume("r")  # graph.resume recognises the multi-source thread
    assert isinstance(result, MultiResult)
    assert result.outcome == "answer" and any(lp.phase == "breadcrumb" for lp in result.loops)
    assert session_state("r")["result"]["answer"] == result.answer

    # sources passed as objects are not in the checkpoint: resuming needs them again
    with open_checkpointer(home_dir()) as saver:
        graph = build_multi_graph(checkpointer=saver, interrupt_after=["merge"])
        objs = {"m": musique_source}
        graph.invoke(
            initial_multi_state(BUBYE, settings, resolve_specs(settings, ["m"])),
            _config("o"),
            context=Context(source=musique_source, sources=objs),
        )
    with pytest.raises(InputError, match="pass them again"):
        resume("o")
    assert resume("o", sources=objs).outcome == "answer"
