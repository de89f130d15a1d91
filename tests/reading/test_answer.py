"""``reading.answer``: the trained reader's answer — the sentences that answer, cited; or an honest "not found"."""

from __future__ import annotations

from saturate.nodes.reading.answer import reader_answer
from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS, NOT_ANSWERED
from saturate.nodes.reading.reader import shipped_reader
from saturate.state.settings import READER_MIN_P

from bubye_docs import BRIDGE, doc

MONA = "Who painted the Mona Lisa?"
RESULTS = [
    doc(1, "Louvre", "The Louvre is the world's most-visited museum. It is in Paris, on the Right Bank of the Seine."),
    doc(
        2,
        "Mona Lisa",
        "The Mona Lisa is a half-length portrait painting by Italian artist Leonardo da Vinci. It is considered an "
        "archetypal masterpiece of the Italian Renaissance.",
    ),
]


def test_the_answer_is_the_sentence_that_answers_cited_with_its_source():
    read = reader_answer(shipped_reader(), MONA, RESULTS, {}, READER_MIN_P)
    assert read.answered and read.best_p >= READER_MIN_P
    assert read.answer.startswith("The Mona Lisa is a half-length portrait painting by Italian artist Leonardo")
    assert "[2]" in read.answer and read.cited[0] == 2 and 1 not in read.cited[:1]
    assert len(read.answer) <= ANSWER_MAX_CHARS


def test_sources_that_do_not_answer_give_not_found_with_the_closest_titles():
    read = reader_answer(shipped_reader(), MONA, BRIDGE, {}, READER_MIN_P)
    assert not read.answered and read.answer.startswith(NOT_ANSWERED) and read.cited == []
    assert "The closest are about" in read.answer
    nothing = reader_answer(shipped_reader(), MONA, [], {}, READER_MIN_P)
    assert nothing.answer == NOT_ANSWERED and nothing.best_p == 0.0


def test_the_threshold_decides_between_an_answer_and_not_found():
    high = reader_answer(shipped_reader(), MONA, RESULTS, {}, 1.0)
    assert not high.answered  # no sentence is that sure
    low = reader_answer(shipped_reader(), MONA, BRIDGE, {}, 0.0)
    assert low.answered and low.answer.endswith("]")  # the best sentence, however weak, when nothing is refused


def test_the_page_text_is_read_beyond_the_snippet_and_long_answers_are_cut():
    short = [{**RESULTS[1], "snippet": "Mona Lisa."}]
    page = {RESULTS[1]["url"]: RESULTS[1]["snippet"] + " " + "It has been described as the best known painting. " * 12}
    read = reader_answer(shipped_reader(), MONA, short, page, 0.0)
    assert "Leonardo" in read.answer and len(read.answer) <= ANSWER_MAX_CHARS


def test_the_reader_answers_single_questions_and_leaves_multi_hop_and_comparisons_to_the_rules():
    from saturate.nodes.reading.answer import reader_answers
    from saturate.nodes.reading.chain import parse_chains

    assert reader_answers(parse_chains(MONA)) and reader_answers([])
    assert not reader_answers(
        parse_chains("What is the name of the waterfall in the country where the Bubye River is found?")
    )
    assert not reader_answers(parse_chains("Who was born first, Mark Twain or Charles Dickens?"))
    assert not reader_answers(parse_chains("Are Oliver Stone and Wes Anderson both directors?"))


def test_the_rules_answer_follows_the_readers_best_sentence_within_the_limit():
    from saturate.nodes.reading.answer import _with_rules
    from saturate.nodes.reading.reader import Candidate, Read

    lead = Read(Candidate(1, 0, "Mona Lisa", "The Mona Lisa is a painting by Leonardo da Vinci."), 0.3)
    rules = "The Louvre is a museum in Paris. [1] It holds the Mona Lisa. [1] " + "Paris is big. [3] " * 30
    out = _with_rules(lead.candidate.text, lead, rules.strip())
    assert out.startswith("The Mona Lisa is a painting by Leonardo da Vinci. [2] The Louvre is a museum in Paris. [1]")
    assert len(out) <= ANSWER_MAX_CHARS and out.endswith("]")
    held = "The Mona Lisa is a painting by Leonardo da Vinci. [2] It hangs in the Louvre. [1]"
    assert _with_rules(lead.candidate.text, lead, held) == held  # the rules already say it: not twice
