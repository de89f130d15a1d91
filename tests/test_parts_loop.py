"""A question of several parts steers the loop (``reading.parts``): each part is searched for in its own words, a
gap query stays with its part, the gate marks a part covered when the reader finds a sentence for it, and the
brief is organised by the parts."""

from __future__ import annotations

from saturate import research, session_state
from saturate.nodes.reading.answer import LIKELY_PREFIX
from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS, NOT_ANSWERED
from saturate.sources.local import LocalCorpus

DOCS = [
    (
        "Nuclear power",
        "Nuclear power is the use of nuclear reactions to produce electricity. Most of it comes from "
        "nuclear fission of uranium in nuclear power plants. Reactors were first built in the 1950s.",
    ),
    (
        "Solar power",
        "Solar power is the conversion of energy from sunlight into electricity, either directly using "
        "photovoltaics or indirectly using concentrated solar power. Solar panels use the photovoltaic effect.",
    ),
    ("Uranium", "Uranium is a chemical element with the symbol U. It is the fuel of most nuclear reactors."),
    (
        "Photovoltaics",
        "Photovoltaics is the conversion of light into electricity using semiconducting materials. "
        "Solar cells are made of silicon.",
    ),
    ("Voyager 2", "Voyager 2 is a space probe launched by NASA in 1977. It is powered by radioisotope generators."),
    ("Chess", "Chess is a board game for two players. It is played on a square board of 64 squares."),
]
TASK = "Compare nuclear and solar power"


def corpus() -> LocalCorpus:
    return LocalCorpus.from_records([{"id": str(i), "title": t, "text": x} for i, (t, x) in enumerate(DOCS)], "energy")


def test_each_side_is_searched_for_and_no_query_drifts_from_the_sides(home):
    result = research(TASK, thread_id="parts", source=corpus(), seed=1, max_rounds=5, min_rounds=5)
    state = session_state("parts")
    assert [p["name"] for p in state["parts"]] == ["nuclear power", "solar power"]
    queries = state["queries"]
    # round 1's results hold both pages, and the reader finds a sentence naming each side in them: both covered at
    # once, so no round has to search for a side (a side not covered is searched in its own words: the test below)
    assert state["records"][0]["parts"] == [
        {"name": "nuclear power", "covered": True},
        {"name": "solar power", "covered": True},
    ]
    sides = ("nuclear", "solar")
    assert all(any(s in q.lower() for s in sides) for q in queries), queries  # every query names a side
    records = state["records"]
    assert all([p["name"] for p in r["parts"]] == ["nuclear power", "solar power"] for r in records)
    assert records[-1]["parts"] == [
        {"name": "nuclear power", "covered": True},
        {"name": "solar power", "covered": True},
    ]
    brief = result.brief
    assert [p["part"] for p in brief] == ["nuclear power", "solar power"]
    titles = {s.n: s.title for s in result.sources}
    for part, page in zip(brief, ("Nuclear power", "Solar power")):
        assert part["sentences"], part
        assert titles[part["sentences"][0]["sources"][0]] == page  # each side cited from its own page


def test_a_side_not_covered_is_searched_for_in_its_own_words(home):
    """Round 1 finds no page that names nuclear power: that side is not covered, so round 2 searches for it by its
    own words (and never drifts from the sides)."""
    docs = [d for d in DOCS if "uclear" not in d[1] and "uclear" not in d[0]]
    source = LocalCorpus.from_records([{"id": str(i), "title": t, "text": x} for i, (t, x) in enumerate(docs)], "sun")
    research(TASK, thread_id="side", source=source, seed=1, max_rounds=3, min_rounds=3)
    state = session_state("side")
    first, second = state["records"][:2]
    assert first["parts"] == [{"name": "nuclear power", "covered": False}, {"name": "solar power", "covered": True}]
    assert (second["query"], second["planner"]) == ("nuclear power", "part")


def test_a_question_of_one_part_records_no_parts(home):
    research("What is uranium?", thread_id="one", source=corpus(), seed=1, max_rounds=2)
    state = session_state("one")
    assert len(state["parts"]) == 1 and all(r["parts"] == [] for r in state["records"])


def test_a_question_of_several_parts_no_one_sentence_answers_gets_the_briefs_overview(home):
    """The reader reads no sentence as answering the comparison as a whole (here: its "not found" threshold set out of
    reach): the answer is not "the sources do not answer this" above a brief that holds both sides, but each side's
    first brief sentence, cited from its own page, as likely — and the same with the brief left out."""
    shown = research(TASK, thread_id="overview", source=corpus(), seed=1, max_rounds=3, reader_min_p=0.99)
    bare = research(
        TASK, thread_id="overview-bare", source=corpus(), seed=1, max_rounds=3, reader_min_p=0.99, brief=False
    )
    titles = {s.n: s.title for s in shown.sources}
    assert shown.answer.startswith(LIKELY_PREFIX) and not shown.answer.startswith(NOT_ANSWERED)
    assert len(shown.answer) <= ANSWER_MAX_CHARS
    cited = [s.n for s in shown.sources if s.cited]
    assert {titles[n] for n in cited} == {"Nuclear power", "Solar power"}, shown.answer
    for part in shown.brief:  # each side's first sentence of the brief is in the answer
        assert part["sentences"][0]["text"] in shown.answer
    assert shown.debug["reader_level"] == "likely" and shown.debug["answered"]
    assert any("no one sentence answers the question as a whole" in n for n in shown.debug["notes"])
    assert (bare.answer, bare.brief) == (shown.answer, [])
    one = research(
        "What is uranium?", thread_id="overview-one", source=corpus(), seed=1, max_rounds=2, reader_min_p=0.99
    )
    assert one.answer.startswith(NOT_ANSWERED)  # a question of one part: no overview, "not found" stands


def test_a_slot_value_the_readers_answer_does_not_hold_is_not_shown(home):
    """The reader's answer stands for the question's one slot: the slot's line is shown with a value the answer
    holds, never beside a "not found" answer that does not hold it."""
    ask = "Which agency launched Voyager 2?"
    found = research(ask, thread_id="slot-found", source=corpus(), seed=1, max_rounds=2)
    assert [s["value"] for s in found.debug["slots"]] == ["NASA"] and "NASA" in found.answer
    hidden = research(ask, thread_id="slot-hidden", source=corpus(), seed=1, max_rounds=2, reader_min_p=0.99)
    assert hidden.answer.startswith(NOT_ANSWERED) and hidden.debug["slots"] == []


def test_a_sides_gap_query_adds_only_names_two_of_its_pages_hold(home):
    """A name one page of a side mentions in passing is a tangent ("nuclear power Voyager 2" for a comparison of
    nuclear and solar power); a name two of the side's pages hold is about it, and may be searched for."""
    docs = [
        (
            "Nuclear power",
            "Nuclear power is the use of nuclear reactions to produce electricity. Enrico Fermi built the first "
            "nuclear reactor. Nuclear decay powers space probes such as Voyager 2.",
        ),
        ("Uranium", "Uranium is the fuel of nuclear power. Enrico Fermi split uranium atoms for nuclear power."),
        ("Solar power", "Solar power is the conversion of energy from sunlight into electricity."),
    ]
    source = LocalCorpus.from_records([{"id": str(i), "title": t, "text": x} for i, (t, x) in enumerate(docs)], "atom")
    research(TASK, thread_id="tangent", source=source, seed=1, max_rounds=5, min_rounds=5)
    records = session_state("tangent")["records"]
    queries = [r["query"] for r in records]
    assert not any("voyager" in q.lower() for q in queries), queries
    assert any(r["planner"] == "part gap-terms" and "Enrico Fermi" in r["query"] for r in records), queries
