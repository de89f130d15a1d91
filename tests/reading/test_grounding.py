"""``reading.grounding``: whether what a model wrote is about the task or made of the sources' words."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.grounding import folded_terms, grounded, on_task, query_grounded, share_in, vocabulary

TASK = "Who wrote the novel Pride and Prejudice?"
SOURCES = vocabulary(
    [
        "Pride and Prejudice. 1813 novel by Jane Austen, published by Thomas Egerton.",
        "Jane Austen. English novelist known for six novels set among the landed gentry.",
    ]
)


def test_plurals_fold_onto_their_singular():
    assert folded_terms("novels countries glass") == {"novel", "country", "glass"}


@pytest.mark.parametrize(
    "query,about",
    [
        ("Pride and Prejudice author", True),
        ("novels by Jane Austen", True),  # "novels" ~ "novel"
        ("Jazz", False),  # what SmolLM2 planned for this question
        ("Boys World", False),
        ("The original sentence is:", False),
    ],
)
def test_on_task(query, about):
    assert on_task(query, TASK) is about


def test_a_query_about_a_bridge_found_in_the_sources_is_grounded():
    assert query_grounded("Thomas Egerton publisher", TASK, SOURCES)  # not in the task, from the sources
    assert not query_grounded("Thomas Egerton publisher", TASK, frozenset())  # nothing retrieved yet
    assert not query_grounded("Boys World", TASK, SOURCES)


def test_grounded_needs_half_of_the_words():
    assert share_in("Jane Austen wrote six novels", SOURCES) == pytest.approx(4 / 5)  # "wrote" is in neither
    assert grounded("Jane Austen wrote six novels", SOURCES)
    assert not grounded("Charles Dickens wrote Bleak House", SOURCES)
    assert not grounded("", SOURCES) and not grounded("the of and", SOURCES)  # no content words: nothing grounds
