"""``reading.chain``: the parser of question syntax — a task's chains of hops (slots), innermost first."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.chain import parse_chains

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def slots_of(task: str) -> list[list[tuple]]:
    return [[(s["subject"], s["kind"], s["focus"]) for s in c["slots"]] for c in parse_chains(task)]


def test_a_bridge_question_is_one_chain_innermost_first():
    assert slots_of(BUBYE) == [[("Bubye River", "place", "country"), ("#1", "name", "waterfall")]]
    chain = parse_chains(BUBYE)[0]
    assert chain["compare"] == "" and chain["slots"][1]["relation"] == ["waterfall"]


@pytest.mark.parametrize(
    "task,expected",
    [
        # "of" chains are read from the inside: the performer of Decade, then that performer's sibling
        (
            "Who is the sibling of the performer of Decade?",
            [("Decade", "person", "performer"), ("#1", "person", "sibling")],
        ),
        # a possessive's owner is the subject, without its 's
        (
            "Who was the first president of Damerjog's country?",
            [("Damerjog", "place", "country"), ("#1", "person", "president")],
        ),
        # a participle opens a hop; the words after the clause belong to the last slot
        (
            "When did the country containing Nugegoda leave the British Empire?",
            [("Nugegoda", "place", "country"), ("#1", "date", None)],
        ),
        # a contact clause ("the city X played for") is a hop; an apposition ("the film X") is not
        (
            "What river flows through the city Kevin Durant played for before Golden State?",
            [("Kevin Durant", "place", "city"), ("#1", "name", "river")],
        ),
        ("Who directed the film Shoah?", [("Shoah", "person", None)]),
    ],
)
def test_hops_of_english_grammar(task, expected):
    got = slots_of(task)[0]
    assert [(s, k) for s, k, _ in got] == [(s, k) for s, k, _ in expected]
    for (_, _, focus), (_, _, want) in zip(got, expected):
        if want is not None:
            assert focus == want


def test_comparisons_have_a_slot_per_alternative():
    [chain] = parse_chains("Who was born first, Aleksandr Ivanovsky or Arthur Lubin?")
    assert chain["compare"] == "choice" and [s["subject"] for s in chain["slots"]] == [
        "Aleksandr Ivanovsky",
        "Arthur Lubin",
    ]
    [chain] = parse_chains("Are Wolfgang Becker and Paul Andrew Williams both film directors?")
    assert chain["compare"] == "yesno" and [s["kind"] for s in chain["slots"]] == ["yesno", "yesno"]
    assert chain["slots"][0]["relation"] == ["film", "directors"]


def test_a_compound_task_has_a_chain_per_sub_question_and_it_refers_back():
    chains = parse_chains("What is the longest river in Africa and which countries does it flow through?")
    assert len(chains) == 2
    assert [(s["subject"], s["focus"]) for s in chains[0]["slots"]] == [("Africa", "river")]
    # "it" is the first sub-question's answer; "which countries" asks for places
    assert [(s["subject"], s["kind"]) for s in chains[1]["slots"]] == [("@1", "place")]
    # a part that asks nothing itself belongs to the question before it
    [chain] = parse_chains("Who currently has more store locations? Bearno's or Patxi's Chicago Pizza?")
    assert chain["compare"] == "choice"


def test_a_question_in_lower_case_leaves_its_subject_to_the_results():
    [chain] = parse_chains("where did dr seuss go to school?")
    assert chain["slots"][0]["subject"] == "" and chain["slots"][0]["kind"] == "place"
    # "Who was X?" asks what X is: its defining sentence
    assert parse_chains("Who was Louis Riel?")[0]["slots"][0]["kind"] == "category"
