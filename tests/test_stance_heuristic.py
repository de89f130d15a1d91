"""The replay keeps every recorded passage; the heuristic stance gets direction right; the two examples of issue 13."""

from __future__ import annotations

import pytest

from saturate.graph import session_state, verify
from saturate.nodes.reading.stance import Alignment, align, heuristic_stance, stance_of
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


@pytest.mark.parametrize(
    "claim,passage,stance",
    [
        # support: the claim's names and numbers, and what it says of them
        ("Water boils at 100 °C at sea level.", "At sea level, water boils at 100 °C (212 °F).", "support"),
        ("C# was developed by Microsoft.", "C# is a programming language developed by Microsoft.", "support"),
        # refute: another value in the same slot, about the same subject
        ("The Eiffel Tower is located in Berlin.", "The Eiffel Tower is located in Paris, France.", "refute"),
        (
            "Between 1989 and 2005, Arsenal won four league titles.",
            "Arsenal was founded in 1886. Between 1989 and 2005, they won five League titles and five FA Cups.",
            "refute",
        ),
        (
            "Gary Smith holds a degree in economics from Stanford University.",
            "Gary Smith earned his degree in economics from Yale University in 1971.",
            "refute",
        ),
        (
            "The peregrine falcon reaches 240 miles per hour when diving.",
            "When diving, the peregrine falcon reaches 186 miles per hour.",
            "refute",
        ),
        # no refutation from a number elsewhere, a cue word or another subject
        (
            "Water boils at 100 °C at sea level.",
            "The surface of this fresh water lake is approximately 4,000 m (13,100 ft) under the surface of the ice, "
            "which places it at approximately 500 m (1,600 ft) below sea level.",
            "irrelevant",
        ),
        ("Water boils at 100 °C at sea level.", "More than 100 peaks lie above sea level.", "irrelevant"),
        ("The Eiffel Tower is located in Berlin.", "The Eiffel Tower is not located in Berlin.", "irrelevant"),
        ("The Eiffel Tower is located in Berlin.", "Berlin is the capital and largest city of Germany.", "irrelevant"),
        # the same names, something else said of them
        ("The Eiffel Tower is located in Paris.", "The Eiffel Tower was painted in Paris.", "irrelevant"),
    ],
)
def test_stance_direction(claim, passage, stance):
    got, excerpt, reason = heuristic_stance(claim, passage)
    assert got == stance, reason
    assert " ".join(excerpt.split()) in " ".join(passage.split())


def test_the_thresholds_decide_between_support_partial_and_irrelevant():
    a = Alignment(0.55, "x", 0.5, False, "Bridge", True, (), None)
    assert stance_of(a, 0.6, 0.5)[0] == "partial" and stance_of(a, 0.5, 0.4)[0] == "support"
    assert stance_of(a, 0.7, 0.6)[0] == "irrelevant"
    assert stance_of(a, 0.5, 0.4, relation_from=0.6)[0] == "irrelevant"
    conflicted = Alignment(0.55, "x", 0.5, False, "Bridge", True, (), (0.45, "y", "1931 where the claim has 1932"))
    assert stance_of(conflicted, refute_context=0.4)[0] == "refute"
    assert stance_of(conflicted, refute_context=0.5)[0] == "partial"
    elsewhere = Alignment(0.9, "x", 1.0, False, "Bridge", False, (), None)
    assert stance_of(elsewhere, 0.5, 0.4)[0] == "irrelevant"


def test_alignment_measures_what_the_rules_read():
    a = align("The Eiffel Tower is located in Berlin.", "The Eiffel Tower is a wrought-iron lattice tower in Paris.")
    # "Tower" is a common noun where the passage writes "tower": the subject's name is "Eiffel"
    assert a.subject == "Eiffel" and a.subject_found and a.missing == ("berlin",) and a.conflict is None
    b = align("Water boils at 100 °C at sea level.", "Measured water temperatures range from 30 to 100 °C.")
    assert b.missing == () and b.relation < 0.3  # "boils", "sea level" are not there


def test_the_two_examples_on_the_embedded_corpus(home):
    """Issue 13: the Berlin claim is not True, the boiling claim is not False (default and strict profiles)."""
    for profile in ("calibrated", "strict"):
        berlin = verify("The Eiffel Tower is located in Berlin.", seed=0, verify_profile=profile)
        boiling = verify("Water boils at 100 °C at sea level.", seed=0, verify_profile=profile)
        assert berlin.outcome in ("False", "Invalid"), berlin.proof
        assert boiling.outcome in ("True", "Invalid"), boiling.proof
