"""``reading.grounding``: whether what a model wrote is about the task or made of the sources' words."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.grounding import (
    folded_terms,
    grounded,
    names_in,
    on_task,
    query_grounded,
    share_in,
    supported,
    vocabulary,
)

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


def test_names_and_numbers_of_a_sentence():
    assert names_in("The Three Musketeers was written by William Shakespeare in 1601.") == {
        "three",
        "musketeer",
        "william",
        "shakespeare",
        "1601",
    }
    assert names_in("Written in 1813 by Jane Austen.") == {"1813", "jane", "austen"}  # the first word is no name


def test_a_sentence_is_supported_only_with_every_name_it_adds():
    assert supported("Pride and Prejudice was written by Jane Austen.", TASK, SOURCES)
    # half of its words are in the sources, but not the name it adds: what SmolLM2 answered, citing a real source
    assert not supported("Pride and Prejudice is an English novel written by William Shakespeare.", TASK, SOURCES)
    assert not supported("Who wrote the novel Pride and Prejudice?", TASK, SOURCES)  # an echo adds nothing
