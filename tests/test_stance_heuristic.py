"""The replay keeps every recorded passage; the graph judges each; the two examples of issue 13 (the heuristic
stance's direction on its own: tests/reading/test_stance.py)."""

from __future__ import annotations

import pytest

from saturate.graph import session_state, verify
from saturate.sources.replay import ReplaySource, replay_urls
from saturate.state.records import SearchResult

PAGE = "https://example.org/page"


def test_every_recorded_passage_is_its_own_hit_with_a_real_link():
    urls = [PAGE, "https://b.org/x", PAGE, "https://c.org/y#intro", PAGE, "https://c.org/y#intro"]
    assert replay_urls(urls) == [
        PAGE,
        "https://b.org/x",
        f"{PAGE}#passage-3",  # a repeat gets a fragment: the link still opens the page
        "https://c.org/y#intro",
        f"{PAGE}#passage-5",
        "https://c.org/y#passage-6",  # a repeated fragment is replaced
    ]
    src = ReplaySource(
        [
            {"url": PAGE, "passage": "First passage.", "stance": "support"},
            {"url": PAGE, "passage": "Second passage.", "stance": "refute"},
        ]
    )
    results = src.search("anything", 5)
    assert [r.url for r in results] == [PAGE, f"{PAGE}#passage-2"]
    assert [src.stance_oracle(r.url) for r in results] == ["support", "refute"]
    assert src.fetch(results[1]) == "Second passage." == src.passage(f"{PAGE}#passage-2")
    with pytest.raises(KeyError):
        src.fetch(SearchResult(id="x", url="https://elsewhere.org/"))


def test_the_graph_judges_every_passage(home):
    claim = "The Sydney Harbour Bridge opened in 1932."
    hits = [
        {"url": PAGE, "passage": "The Sydney Harbour Bridge opened in 1932 after eight years of work."},
        {"url": PAGE, "passage": "The Sydney Harbour Bridge in Sydney opened in 1931, a local paper wrote."},
        {"url": PAGE, "passage": "Bananas are rich in potassium."},
    ]
    verify(claim, thread_id="r", source=ReplaySource(hits), seed=0)
    stances = {h["url"]: h["stance"] for h in session_state("r")["evidence"]}
    assert stances == {PAGE: "support", f"{PAGE}#passage-2": "refute", f"{PAGE}#passage-3": "irrelevant"}


def test_the_two_examples_on_the_embedded_corpus(home):
    """Issue 13: the Berlin claim is not True, the boiling claim is not False (default and strict profiles)."""
    for profile in ("calibrated", "strict"):
        berlin = verify("The Eiffel Tower is located in Berlin.", seed=0, verify_profile=profile)
        boiling = verify("Water boils at 100 °C at sea level.", seed=0, verify_profile=profile)
        assert berlin.outcome in ("False", "Invalid"), berlin.proof
        assert boiling.outcome in ("True", "Invalid"), boiling.proof
