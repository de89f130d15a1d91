"""``reading.answer``: the trained reader's answer at three honest levels — answered (cited), likely (marked not
confirmed), not found — and its short answer, a span of the sentence it chose."""

from __future__ import annotations

from saturate.nodes.reading.answer import LIKELY_PREFIX, confidence, read_results, reader_answer, source_text
from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS, NOT_ANSWERED
from saturate.nodes.reading.reader import readable_sentences, shipped_reader
from saturate.state.settings import READER_CONFIDENT_P, READER_MIN_P

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


def test_the_answer_is_the_sentence_that_answers_cited_with_its_source_and_its_span_is_the_short_answer():
    read = reader_answer(shipped_reader(), MONA, RESULTS, {}, READER_MIN_P, READER_CONFIDENT_P)
    assert read.answered and read.level in ("answered", "likely")
    assert "The Mona Lisa is a half-length portrait painting by Italian artist Leonardo" in read.answer
    assert "[2]" in read.answer and read.cited[0] == 2
    assert len(read.answer) <= ANSWER_MAX_CHARS
    if read.level == "answered":
        assert "Leonardo" in read.short
    else:
        assert read.answer.startswith(LIKELY_PREFIX) and read.short == ""  # no short answer unless answered


def test_sources_that_do_not_answer_give_not_found_with_the_closest_titles():
    reads = read_results(shipped_reader(), MONA, BRIDGE, {})
    assert confidence(shipped_reader(), reads) < confidence(
        shipped_reader(), read_results(shipped_reader(), MONA, RESULTS, {})
    )
    read = reader_answer(shipped_reader(), MONA, BRIDGE, {}, 1.0)
    assert not read.answered and read.level == "not found" and read.answer.startswith(NOT_ANSWERED)
    assert "The closest are about" in read.answer and read.cited == [] and read.short == ""
    nothing = reader_answer(shipped_reader(), MONA, [], {}, READER_MIN_P)
    assert nothing.answer == NOT_ANSWERED and nothing.best_p == 0.0


def test_the_thresholds_decide_the_level():
    sure = reader_answer(shipped_reader(), MONA, RESULTS, {}, 0.0, 0.0)
    assert sure.level == "answered" and not sure.answer.startswith(LIKELY_PREFIX)
    likely = reader_answer(shipped_reader(), MONA, RESULTS, {}, 0.0, 1.0)
    assert likely.level == "likely" and likely.answered and likely.answer.startswith(LIKELY_PREFIX)
    assert likely.answer.endswith("]") and len(likely.answer) <= ANSWER_MAX_CHARS
    none = reader_answer(shipped_reader(), MONA, RESULTS, {}, 1.0, 1.0)
    assert none.level == "not found"  # nothing is that sure


def test_the_page_text_is_read_beyond_the_snippet_and_long_answers_are_cut():
    short = [{**RESULTS[1], "snippet": "Mona Lisa."}]
    page = {RESULTS[1]["url"]: RESULTS[1]["snippet"] + " " + "It has been described as the best known painting. " * 12}
    read = reader_answer(shipped_reader(), MONA, short, page, 0.0)
    assert "Leonardo" in read.answer and len(read.answer) <= ANSWER_MAX_CHARS


LIGHT = "What is the speed of light?"
LIGHT_SENTENCE = "The value 299,792,458 metres per second is approximately 1 billion kilometres per hour."
LIGHT_PAGE = (
    "Speed of light\n\nSpeed of electromagnetic waves. The speed of light is the speed of electromagnetic waves. "
    f"It is exact because, by international agreement, a metre is defined by it. {LIGHT_SENTENCE} For other "
    "approximations of c, see the infobox."
)
LIGHT_RESULT = doc(
    1,
    "Speed of light",
    "Speed of electromagnetic waves. The speed of light is the speed of electromagnetic waves. It is exact because, "
    "by international agreement, a metre is defined by it. The value 299,792,458 metres…",
)


def test_a_snippet_cut_short_never_runs_on_into_its_page_whose_sentence_is_read_whole():
    # joined by a space, "…The value 299,792,458 metres…" and the page's title line made one sentence, read as the
    # session's best and shown as its answer ("The value 299,792,458 metres… Speed of light [1]")
    page = {LIGHT_RESULT["url"]: LIGHT_PAGE}
    text = source_text(LIGHT_RESULT, page)
    assert text == f"{LIGHT_RESULT['snippet']}\n\n{LIGHT_PAGE}"
    sentences = [s for _, s, _ in readable_sentences(text)]
    assert LIGHT_SENTENCE in sentences and "The value 299,792,458 metres…" in sentences
    assert not any("Speed of light" in s and "metres…" in s for s in sentences)
    read = reader_answer(shipped_reader(), LIGHT, [LIGHT_RESULT], page, 0.0)
    assert "metres… Speed" not in read.answer
    assert source_text(LIGHT_RESULT, {}) == LIGHT_RESULT["snippet"]  # no page: the snippet is all there is


def test_the_reader_answers_single_questions_and_leaves_multi_hop_and_comparisons_to_the_rules():
    from saturate.nodes.reading.answer import reader_answers
    from saturate.nodes.reading.chain import parse_chains

    assert reader_answers(parse_chains(MONA)) and reader_answers([])
    assert not reader_answers(
        parse_chains("What is the name of the waterfall in the country where the Bubye River is found?")
    )
    assert not reader_answers(parse_chains("Who was born first, Mark Twain or Charles Dickens?"))
    assert not reader_answers(parse_chains("Are Oliver Stone and Wes Anderson both directors?"))


def test_a_long_question_with_nothing_plausible_read_gets_the_rules_answer_as_likely_a_short_one_not_found():
    """``reader_rules_words``: below ``reader_min_p`` a question of that many content words or more is given the
    extractive rules' answer, marked likely and cited; a shorter one, or the setting at 0, says "not found"."""
    from saturate.nodes.reading.answer import long_question
    from saturate.nodes.reading.question import stems

    long_task = "Which painter of the Italian Renaissance made the half-length portrait that the Louvre shows?"
    words = len(stems(long_task))
    assert long_question(long_task, words) and not long_question(long_task, words + 1)
    assert not long_question(long_task, 0) and not long_question(MONA, words)
    routed = reader_answer(shipped_reader(), long_task, RESULTS, {}, 1.0, 1.0, rules_words=words)
    assert routed.by_rules and routed.answered and routed.level == "likely" and routed.short == ""
    assert routed.answer.startswith(LIKELY_PREFIX) and routed.answer.endswith("]") and routed.cited
    assert len(routed.answer) <= ANSWER_MAX_CHARS
    for rules_words in (0, words + 1):
        read = reader_answer(shipped_reader(), long_task, RESULTS, {}, 1.0, 1.0, rules_words=rules_words)
        assert read.level == "not found" and not read.by_rules and read.answer.startswith(NOT_ANSWERED)
    short = reader_answer(shipped_reader(), MONA, RESULTS, {}, 1.0, 1.0, rules_words=1)
    assert short.by_rules  # one word is enough at rules_words 1: the setting, not the question kind, decides


def test_a_session_passes_reader_rules_words_to_its_answer_and_says_so(home, tmp_path):
    """The setting reaches ``decide``: a long question whose reader is never sure enough (``reader_min_p`` 1) is
    answered by the rules as likely, and the session's notes say why; at 0 it says "not found"."""
    import json

    from saturate.graph.api import research

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": r["url"], "title": r["title"], "text": r["snippet"]}) + "\n" for r in RESULTS)
    )
    task = "Which painter of the Italian Renaissance made the half-length portrait that the Louvre shows?"
    on = research(task, corpus=str(corpus), thread_id="on", reader_min_p=1.0, reader_rules_words=6, max_rounds=1)
    assert on.debug["reader_level"] == "likely" and on.answer.startswith(LIKELY_PREFIX)
    assert any("the extractive rules' answer given as likely" in n for n in on.debug["notes"])
    off = research(task, corpus=str(corpus), thread_id="off", reader_min_p=1.0, reader_rules_words=0, max_rounds=1)
    assert off.debug["reader_level"] == "not found" and off.answer.startswith(NOT_ANSWERED)


SINGLE = doc(
    1,
    "Harbor Lights (song)",
    '"Harbor Lights" is a song by the Scottish folk band Loch Ardran, released in 1979 as the second single from '
    "their album Tidewater. It reached number 12 in the UK.",
)
BAND = doc(
    2,
    "Loch Ardran",
    "Loch Ardran are a Scottish folk band formed in Glasgow. The band rose to prominence in the late 1960s with a "
    "series of hit albums. They toured Europe widely in the 1980s.",
)
ALBUM = doc(3, "Tidewater (album)", "Tidewater is the fifth album by Loch Ardran.")
HOPS = "In which decade did the folk band that recorded the single Harbor Lights rise to prominence?"
FIRST_HOP = (
    '"Harbor Lights" is a song by the Scottish folk band Loch Ardran, released in 1979 as the second single from '
    "their album Tidewater. [1]"
)


def test_a_long_questions_answer_is_followed_by_the_sentence_of_the_page_its_first_sentence_leads_to():
    """``bridged``: the answer's first sentence names Loch Ardran's page, which the question does not name; the reader
    reads that page (and the album's, also named) against the whole question and its best sentence goes second."""
    from saturate.nodes.reading.answer import bridged, long_question

    assert long_question(HOPS, 7)
    out = bridged(shipped_reader(), HOPS, FIRST_HOP, [SINGLE, BAND, ALBUM], {}, 7)
    assert out.startswith(FIRST_HOP)
    assert (
        out.removeprefix(FIRST_HOP).strip()
        == "Loch Ardran: The band rose to prominence in the late 1960s with a series of hit albums. [2]"
    )
    # the answer's later sentences follow as far as the limit allows
    later = "Loch Ardran toured Europe. [2] " + "x" * 150 + " [3]"
    longer = bridged(shipped_reader(), HOPS, f"{FIRST_HOP} {later}", [SINGLE, BAND, ALBUM], {}, 7)
    assert "rose to prominence" in longer and "toured Europe. [2]" in longer and len(longer) <= ANSWER_MAX_CHARS
    assert "x" * 150 not in longer  # no room left for it


def test_no_bridge_where_the_question_names_the_page_is_short_or_nothing_is_named_or_found():
    from saturate.nodes.reading.answer import bridged

    reader, results = shipped_reader(), [SINGLE, BAND, ALBUM]
    named = "In which decade did Loch Ardran, the folk band that recorded the single Harbor Lights, rise to prominence?"
    assert bridged(reader, named, FIRST_HOP, results, {}, 7) == FIRST_HOP  # a first hop, read already
    assert bridged(reader, "Who recorded Harbor Lights?", FIRST_HOP, results, {}, 7) == FIRST_HOP  # one sentence does
    assert bridged(reader, "When did the band of the song Harbor Lights rise?", FIRST_HOP, results, {}, 0) != FIRST_HOP
    assert bridged(reader, "When did the Harbor Lights band rise to fame?", FIRST_HOP, results, {}, 0) == FIRST_HOP
    assert bridged(reader, HOPS, FIRST_HOP, [SINGLE], {}, 7) == FIRST_HOP  # the band's page was not accepted
    lost = f"{NOT_ANSWERED} The closest are about Loch Ardran."
    assert bridged(reader, HOPS, lost, results, {}, 7) == lost


def test_the_answer_of_a_long_question_goes_on_to_the_page_its_first_sentence_leads_to_when_a_linker_is_given():
    """``answer_task`` applies the bridge with its ``linker`` (decide passes the trained reader): the reader's answer
    names the band, whose page says when it rose to fame in words the question does not share; without a linker (the
    reader setting ``rules``), or at ``rules_words`` 0 (no question is long), the first hop alone."""
    from saturate.nodes._answer import answer_task
    from saturate.nodes._model import ModelUsage

    band = doc(
        2,
        "Loch Ardran",
        "Loch Ardran are a Scottish folk band from Glasgow. Their breakthrough came in the late 1960s with a run of "
        "hit albums. The band signed to Chrysalis Records.",
    )
    task = "In what decade did the Scottish folk band behind the 1979 single Harbor Lights rise to fame?"
    reader, results = shipped_reader(), [SINGLE, band, ALBUM]

    def answer(**kw) -> str:
        return answer_task(task, results, {}, None, ModelUsage("decide"), reader=reader, **kw).answer

    plain = answer(rules_words=7)
    assert plain == FIRST_HOP
    linked = answer_task(task, results, {}, None, ModelUsage("decide"), reader=reader, rules_words=7, linker=reader)
    assert (
        linked.answer
        == f"{FIRST_HOP} Loch Ardran: Their breakthrough came in the late 1960s with a run of hit albums. [2]"
    )
    assert [ref.n for ref in linked.sources if ref.cited] == [1, 2]
    assert answer(rules_words=0, linker=reader) == FIRST_HOP


def test_the_bridge_asks_for_the_pages_meaning_only_when_the_answer_names_a_page():
    """The cosines cost a query embedding: ``bridged`` calls the function giving them only when a page is named."""
    from saturate.nodes.reading.answer import bridged

    calls: list[int] = []

    def meaning() -> dict[int, float]:
        calls.append(1)
        return {}

    alone = "Loch Ardran are a Scottish folk band from Glasgow. [2]"
    assert bridged(shipped_reader(), HOPS, alone, [SINGLE, BAND, ALBUM], {}, 7, meaning) == alone
    assert calls == []  # it names no other accepted page
    assert "rose to prominence" in bridged(shipped_reader(), HOPS, FIRST_HOP, [SINGLE, BAND, ALBUM], {}, 7, meaning)
    assert calls == [1]
