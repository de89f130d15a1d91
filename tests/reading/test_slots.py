"""``reading.slots``: filling a chain's slots from the results, the slot queries, yes/no and the short answer."""

from __future__ import annotations

from saturate.nodes.reading.chain import parse_chains
from saturate.nodes.reading.slots import (
    Reading,
    complete,
    describe,
    fill_chains,
    link_subject,
    mention,
    result_texts,
    short_answer,
    slot_asks,
    slot_query,
    typed,
    yes_no,
)

from bubye_docs import BRIDGE, BUBYE, doc


def test_the_bridge_found_for_hop_one_is_the_subject_of_hop_two():
    chains = fill_chains(BUBYE, parse_chains(BUBYE), Reading(BRIDGE))
    first, second = chains[0]["slots"]
    assert first["value"] == "Zimbabwe" and first["support"]["title"] == "Bubye River"
    assert first["page"]  # Zimbabwe's own page is among the results
    assert second["resolved"] == "Zimbabwe" and second["value"] == "Victoria Falls" and second["page"]
    assert 0 < second["p"] <= 1 and second["history"] == ["Victoria Falls"]
    assert short_answer(BUBYE, chains, Reading(BRIDGE)) == "Victoria Falls"
    # one fill is not stable; the same values the next round are, and the chain is then complete
    assert not complete(chains)
    again = fill_chains(BUBYE, chains, Reading(BRIDGE))
    assert all(s["stable"] for s in again[0]["slots"]) and complete(again)
    # an answer without its own page is not supported: the chain is not complete
    no_page = fill_chains(BUBYE, again, Reading([d for d in BRIDGE if d["title"] != "Victoria Falls"]))
    assert not complete(no_page)


def test_a_hop_takes_candidates_only_from_sentences_about_its_subject():
    other = [doc(9, "Pembina River", "It drains the prairie country along the Canada–US border.")] + BRIDGE[:1]
    [chain] = fill_chains(BUBYE, parse_chains(BUBYE), Reading(other))
    assert chain["slots"][0]["value"] == "Zimbabwe"  # not Canada: that sentence is not about the Bubye River


def test_mentions_are_names_not_words():
    r = Reading(
        [
            doc(1, "After the Gold Rush", "It also appears on Decade, Greatest Hits and Live Rust."),
            doc(2, "Moore's law", "The count doubles every decade."),
            doc(3, "Henry Worrall (artist)", "Worrall died in Kansas in 1902."),
            doc(4, "Aschenbrödel", "Aschenbrödel is a ballet by Johann Strauss II."),
        ]
    )
    s = {x.doc: x for x in r.sentences}
    assert mention("Decade", s[0], r.docs[0]) == 1.0
    assert mention("Decade", s[1], r.docs[1]) == 0.0  # "every decade" is a word, not the album
    assert mention("Henry Worrall", s[2], r.docs[2], r.common) > 0  # a surname, on the artist's own page
    assert mention("Aschenbrodel", s[3], r.docs[3]) == 1.0  # accent-blind


def test_what_a_candidate_is_comes_from_its_own_page_or_the_gazetteer():
    r = Reading(BRIDGE)
    assert typed(r, "Zimbabwe", "place", "country") == 1.0  # its own page: "a landlocked country"
    assert typed(r, "Kansas", "place", "state") == 1.0  # no page: ISO 3166-2 knows it as a state
    assert typed(r, "Zimbabwe", "person", "performer") == -1.0  # a country is no person...
    assert typed(r, "Gwanda District", "place", "country") == 0.0  # ...and nothing is known of this one


def test_a_question_without_names_is_linked_to_a_retrieved_title():
    r = Reading(
        [doc(1, "Go (game)", "Go is a board game."), doc(2, "Dr. Seuss", "Theodor Seuss Geisel was an author.")]
    )
    assert link_subject("where did dr seuss go to school?", r) == "Dr. Seuss"


def test_slot_queries_ask_for_the_first_open_slot_then_confirm_and_never_repeat():
    chains = parse_chains(BUBYE)
    falls = [d for d in BRIDGE if "Bubye" not in d["title"]]  # no page says where the Bubye River is
    filled = fill_chains(BUBYE, chains, Reading(falls))
    assert not filled[0]["slots"][0]["value"]
    asked = slot_query(filled, [BUBYE])
    assert asked is not None
    query, planner = asked
    assert planner == "slot 1.1" and query == "Bubye River country"  # its subject and relation words
    assert slot_query(filled, [BUBYE, query]) is None  # asked before: the caller's fallback plans the round
    both = fill_chains(BUBYE, chains, Reading(BRIDGE))
    confirm = slot_query(both, [BUBYE])
    assert confirm is not None
    query, planner = confirm
    assert planner.endswith("(confirm)") and "Zimbabwe" in query


def test_yes_no_from_the_alternatives_pages():
    task = "Are Pothos and Tibouchina both flowering plants?"
    pages = [
        doc(1, "Pothos", "Pothos is a genus of flowering plants in the family Araceae."),
        doc(2, "Tibouchina", "Tibouchina is a genus of flowering plants in the family Melastomataceae."),
    ]
    [chain] = fill_chains(task, parse_chains(task), Reading(pages))
    assert yes_no(task, chain, Reading(pages)) is True
    pages[1] = doc(2, "Tibouchina", "Tibouchina is a brand of garden tools.")
    [chain] = fill_chains(task, parse_chains(task), Reading(pages))
    assert yes_no(task, chain, Reading(pages)) is False
    # no page of an alternative: no evidence against, yes
    [chain] = fill_chains(task, parse_chains(task), Reading(pages[:1]))
    assert yes_no(task, chain, Reading(pages[:1])) is True
    same = "Were Scott Derrickson and Ed Wood of the same nationality?"
    people = [
        doc(1, "Scott Derrickson", "Scott Derrickson is an American director."),
        doc(2, "Ed Wood", "Edward Wood Jr. was an American filmmaker."),
    ]
    [chain] = fill_chains(same, parse_chains(same), Reading(people))
    assert yes_no(same, chain, Reading(people)) is True


def test_local_documents_are_read_whole(musique_source):
    hits = musique_source.search("Bubye River", 2)
    texts = result_texts(musique_source, [h.model_dump() for h in hits])
    assert set(texts) == {h.url for h in hits} and all(
        len(t) >= len(h.snippet.rstrip("…")) for h, t in zip(hits, texts.values())
    )
    assert result_texts(object(), [h.model_dump() for h in hits]) == {}  # a source without documents: snippets


def test_what_a_slot_asks_is_said_in_the_questions_words_with_the_kind_wanted():
    [one] = parse_chains("What is the speed of light?")
    assert one["slots"][0]["kind"] == "number"  # a measure noun asks for a quantity
    assert slot_asks(one, one["slots"][0], 0) == "What is the speed of light (a number)"
    [bubye] = parse_chains(BUBYE)
    country, waterfall = bubye["slots"]
    assert slot_asks(bubye, country, 0) == "country of Bubye River (a place)"
    assert slot_asks(bubye, waterfall, 0) == "waterfall of [1.1]"  # the bridge, before it is found
    [filled] = fill_chains(BUBYE, [bubye], Reading(BRIDGE))
    assert slot_asks(filled, filled["slots"][1], 0) == "waterfall of Zimbabwe"
    assert [d["asks"] for d in describe([filled])] == ["country of Bubye River (a place)", "waterfall of Zimbabwe"]


def test_a_value_that_only_says_what_the_subject_is_does_not_complete_the_question():
    """ "What did I eat for breakfast?" filled with "Meal" (Breakfast's page: "the first meal of the day") is not an
    answer of the kind asked: the chains are not complete, so the gate never stops saying every part is answered."""
    task = "What did I eat for breakfast?"
    docs = [  # the embedded corpus's two summaries, cut short
        doc(
            1,
            "Breakfast",
            "Meal eaten in the morning. Breakfast is the first meal of the day, usually eaten in the "
            "morning. The word in English refers to breaking the fasting period of the previous night.",
        ),
        doc(
            2,
            "Meal",
            "Eating that takes place at a specific time. A meal is an occasion that occurs at a specific "
            "time and involves the consumption of food.",
        ),
    ]
    chains = parse_chains(task)
    for _ in range(2):  # two fills running: the value is stable, its own page retrieved
        chains = fill_chains(task, chains, Reading(docs))
    slot = chains[0]["slots"][0]
    assert (slot["resolved"], slot["value"], slot["stable"], slot["page"]) == ("Breakfast", "Meal", True, True)
    assert slot["fits"] == -1 and not complete(chains)
    assert describe(chains)[0]["fits"] == -1  # shown as "not of the kind asked"
    bridge = fill_chains(BUBYE, fill_chains(BUBYE, parse_chains(BUBYE), Reading(BRIDGE)), Reading(BRIDGE))
    assert complete(bridge) and all(s["fits"] >= 0 for s in bridge[0]["slots"])  # a right kind still completes
