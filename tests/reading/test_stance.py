"""``reading.stance``: the heuristic stance of a passage toward a claim, the alignment it reads and its thresholds."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.stance import Alignment, align, heuristic_stance, stance_of


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


@pytest.mark.parametrize(
    "passage,stance",
    [
        ("The Golden Gate Bridge opened in 1937 in San Francisco.", "support"),
        ("The Golden Gate Bridge in San Francisco opened in 1933.", "refute"),  # another year in the same slot
        ("The Golden Gate Bridge in San Francisco did not open in 1937; that is a myth.", "irrelevant"),  # a cue word
        ("Bananas are rich in potassium.", "irrelevant"),
        ("The Golden Gate Bridge in San Francisco is painted orange.", "irrelevant"),  # no 1937: cannot speak for it
    ],
)
def test_heuristic_stance(passage, stance):
    got, excerpt, reason = heuristic_stance("The Golden Gate Bridge in San Francisco opened in 1937.", passage)
    assert got == stance, reason
    assert excerpt in passage
