"""Adaptive depth of the per-source loops: a shallow source stops on its own after 1-2 queries, a rich one
goes deeper (the design, 002: "SAM.gov: 5-8 queries (rich source); Twitter: 1-2 queries (shallow source)")."""

from __future__ import annotations

import pytest

from saturate.graph.build_multi import build_multi_graph
from saturate.nodes.multi._loop_decision import (
    RICH_QUERIES,
    SHALLOW_QUERIES,
    Step,
    count_on_topic,
    heuristic_decision,
)
from saturate.sources import resolve_specs
from saturate.sources.titles import TitleCorpus
from saturate.state.context import Context
from saturate.state.multi_state import initial_multi_state
from saturate.state.settings import SettingsError, load_settings
from saturate.state.source_kinds import DEFAULT_DEPTHS
from saturate.state.source_spec import SourceSpec, resolve

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def step(total=5, new=5, dups=0, on_topic: int | None = 1):
    return Step("q", total=total, new=new, duplicates=dups, on_topic=on_topic)


# ---------------------------------------------------------------- the heuristic decision


def test_the_designs_duplicate_rule_stops_a_shallow_source():
    action, why = heuristic_decision([step(dups=5)], 0.8, "shallow")
    assert action == "stop" and why.startswith("saturated: 5/5 top results were duplicates")
    assert heuristic_decision([step(dups=4)], 0.8, "shallow")[0] == "continue"  # 80 % is not more than 80 %


def test_a_shallow_source_stops_when_nothing_new_names_the_task():
    action, why = heuristic_decision([step(on_topic=0)], 0.8, "shallow")
    assert action == "stop" and "names the task's subject" in why and "probably not here" in why
    assert heuristic_decision([step(on_topic=None)], 0.8, "shallow")[0] == "continue"  # the task names nothing
    assert heuristic_decision([step(total=0, new=0, on_topic=0)], 0.8, "shallow")[0] == "continue"  # empty: rule


def test_a_shallow_source_is_explored_to_its_expected_depth_at_most():
    assert SHALLOW_QUERIES == 2
    assert heuristic_decision([step()], 0.8, "shallow")[0] == "continue"
    action, why = heuristic_decision([step(), step()], 0.8, "shallow")
    assert action == "stop" and "expected depth (2 queries" in why


def test_a_rich_source_goes_on_past_duplicates_while_it_finds_the_subject():
    assert RICH_QUERIES == 5
    history = [step()] + [step(dups=5, on_topic=2)] * 3
    action, why = heuristic_decision(history, 0.8, "rich")
    assert action == "continue" and "rich source is explored to 5 queries" in why
    assert heuristic_decision([step()] * 4 + [step(dups=5, on_topic=2)], 0.8, "rich")[0] == "stop"  # 5 asked
    action, why = heuristic_decision([step(), step(dups=5, on_topic=0)], 0.8, "rich")
    assert action == "stop" and "none of the new results names the task's subject" in why
    assert heuristic_decision([step(), step(dups=5, on_topic=None)], 0.8, "rich")[0] == "stop"
    assert heuristic_decision([step(on_topic=0)] * 4, 0.8, "rich")[0] == "continue"  # no duplicates: go on


def test_on_topic_counts_results_naming_the_tasks_subject():
    results = [
        {"title": "Bubye River", "snippet": "The Bubye River is a tributary of the Limpopo."},
        {"title": "Limpopo", "snippet": "A river in southern Africa."},
        {"title": "River", "snippet": "Bubye is a word."},  # "Bubye River" needs both words
    ]
    assert count_on_topic(BUBYE, results) == 2
    assert count_on_topic("what is the tallest waterfall?", results) is None  # no names in the task
    assert count_on_topic("Who won in 1990?", results) is None  # a number alone is no subject


# ---------------------------------------------------------------- the source depth


def test_source_depths_by_kind_and_per_source():
    expected = {"local": "rich", "titles": "shallow", "wiki": "shallow", "ddg": "rich", "searxng": "rich"}
    assert {kind: DEFAULT_DEPTHS[kind] for kind in expected} == expected  # a kind added later has its own row
    s = load_settings({"sources": "local:a.jsonl,titles:a.jsonl,wiki,ddg,searxng"}, env={})
    assert [x["depth"] for x in resolve_specs(s)] == ["rich", "shallow", "shallow", "rich", "rich"]
    js = load_settings({"sources": '[{"name": "w", "kind": "wiki", "depth": "rich"}, "titles:a.jsonl"]'}, env={})
    assert [(x["name"], x["depth"]) for x in resolve_specs(js)] == [("w", "rich"), ("titles:a", "shallow")]
    assert resolve(SourceSpec(kind="local"), {}, {}, {"local": "shallow"})["depth"] == "shallow"
    with pytest.raises(SettingsError, match="depth"):
        load_settings({"sources": '[{"kind": "wiki", "depth": "bottomless"}]'}, env={})


# ---------------------------------------------------------------- on real corpora


def test_shallow_sources_stop_on_their_own_and_the_rich_one_goes_deeper(
    musique_corpus, musique_tasks, musique_source, wiki_source, tmp_path
):
    """The first 12 musique tasks over the set's full text (rich), its titles (shallow) and the embedded
    Wikipedia summaries (shallow), no breadcrumbs: every shallow loop ends by its own decision within
    2 queries, under its ceiling; the rich one asks more on average."""
    sources = {
        "local:musique": musique_source,
        "titles:musique": TitleCorpus.open(musique_corpus, tmp_path / "index"),
        "wiki": wiki_source,
    }
    settings = load_settings({"cache_ttl_s": 0, "breadcrumb_limit": 0, "entity_limit": 0}, env={})
    specs = [
        resolve(SourceSpec(name=n, kind=k), settings.source_ceilings, settings.source_descriptions)
        for n, k in (("local:musique", "local"), ("titles:musique", "titles"), ("wiki", "wiki"))
    ]
    graph = build_multi_graph()
    queries: dict[str, list[int]] = {"local": [], "titles": [], "wiki": []}
    for task in musique_tasks[:12]:
        out = graph.invoke(
            initial_multi_state(task["question"], settings, specs),
            context=Context(source=musique_source, sources=sources),
        )
        for lp in out["loops"]:
            queries[lp["kind"]].append(lp["queries"])
            events = [ev for ev in out["audit"] if ev["source"] == lp["source"]]
            assert len(events) == lp["queries"] and all(ev["on_topic"] is not None for ev in events)
            if lp["depth"] == "shallow":
                assert lp["queries"] <= SHALLOW_QUERIES < lp["ceiling"]
                assert lp["stop_reason"] == "saturated" and events[-1]["decided_by"] == "heuristic"
    mean = {k: sum(v) / len(v) for k, v in queries.items()}
    assert mean["local"] > max(mean["titles"], mean["wiki"]) and max(queries["local"]) > SHALLOW_QUERIES
    assert min(queries["wiki"]) == 1  # the encyclopaedia often knows nothing of the task: one query is enough
