"""``reading.slots``: filling a chain's slots from the results, the slot queries, yes/no and the short answer."""

from __future__ import annotations

from saturate.nodes.reading.chain import parse_chains
from saturate.nodes.reading.slots import (
    Reading,
    complete,
    fill_chains,
    link_subject,
    mention,
    result_texts,
    short_answer,
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
