"""``reading.parts``: the parts of a question the brief is organised by and the loop searches for."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.parts import checked_parts, part_results, question_parts


def names(question: str) -> list[str]:
    return [p["name"] for p in question_parts(question)]


@pytest.mark.parametrize(
    "question, sides",
    [
        ("Compare nuclear and solar power", ["nuclear power", "solar power"]),  # the head noun shared
        ("What are the differences between mitosis and meiosis?", ["mitosis", "meiosis"]),
        ("coffee vs tea", ["coffee", "tea"]),
        ("How do comets differ from asteroids?", ["comets", "asteroids"]),
        ("Who was born first, Mark Twain or Charles Dickens?", ["Mark Twain", "Charles Dickens"]),
    ],
)
def test_a_comparison_has_a_part_per_side(question, sides):
    parts = question_parts(question)
    assert [p["name"] for p in parts] == sides and all(p["kind"] == "side" for p in parts)


def test_a_named_criterion_goes_with_each_side():
    parts = question_parts("Compare the Roman Empire and the Han dynasty in terms of population")
    assert [p["ask"] for p in parts] == ["Roman Empire: population", "Han dynasty: population"]
    choice = question_parts("Who was born first, Mark Twain or Charles Dickens?")
    assert choice[0]["ask"] == "Mark Twain: Who was born first"


def test_named_aspects_are_parts_of_the_topic():
    parts = question_parts("What are the main causes and effects of climate change?")
    assert [(p["name"], p["ask"]) for p in parts] == [
        ("causes", "causes of climate change"),
        ("effects", "effects of climate change"),
    ]
    assert names("What are the advantages and disadvantages of nuclear power?") == ["advantages", "disadvantages"]


@pytest.mark.parametrize(
    "question, subject",
    [
        ("How does photosynthesis convert light into chemical energy?", "photosynthesis"),
        ("Why is the sky blue?", "sky"),
        ("How did the Roman Empire fall?", "Roman Empire"),
        ("How do vaccines work?", "vaccines"),
        ("Explain how a rainbow forms", "rainbow"),  # asked as a request, with or without an auxiliary
        ("Please describe why the Roman Empire fell.", "Roman Empire"),
        ("Explain how does a steam engine work?", "steam engine"),
    ],
)
def test_how_and_why_ask_what_the_thing_is_then_the_mechanism(question, subject):
    what, how = question_parts(question)
    assert what == {"name": subject, "ask": f"What is {subject}?", "kind": "what"}
    assert how["kind"] == "how" and how["ask"] == question


@pytest.mark.parametrize(
    "question",
    ["What is the capital of Canada?", "How many legs does a spider have?", "How are you?", "Paris"],
)
def test_a_plain_question_is_one_part(question):
    parts = question_parts(question)
    assert len(parts) == 1 and parts[0]["kind"] == "question" and parts[0]["ask"] == question


def test_a_models_parts_are_kept_only_when_each_is_about_the_question():
    q = "Compare nuclear and solar power"
    good = [{"name": "nuclear power", "ask": "nuclear power plants"}, {"name": "solar power"}]
    kept = checked_parts(q, good)
    assert kept is not None and [p["name"] for p in kept] == ["nuclear power", "solar power"]
    assert checked_parts(q, [{"name": "nuclear power"}, {"name": "Voyager 2"}]) is None  # a part no word of it names
    assert checked_parts(q, [{"name": "nuclear power"}]) is None  # one part is no division
    assert checked_parts(q, [{"name": ""}, {"name": "solar"}]) is None


def test_the_results_about_a_part_are_those_naming_it():
    results = [
        {"title": "Voyager 2", "snippet": "A space probe."},
        {"title": "Solar power", "snippet": "Conversion of sunlight into electricity."},
        {"title": "Solar panel", "snippet": "Panels for power from the sun."},
    ]
    about = part_results({"name": "solar power", "ask": "solar power"}, results)
    assert [r["title"] for r in about] == ["Solar power", "Solar panel"]
