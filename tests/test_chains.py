"""What a session knows about its question: chains of slots — parsed, filled, asked for, stopped on, shown."""

from __future__ import annotations

import json

import pytest

from saturate.graph import research, session_state
from saturate.graph.cli import main
from saturate.nodes.gate import ANSWERED, decide_gate
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
from saturate.state.rng import new_rng
from saturate.state.settings import NOVELTY_THRESHOLDS, load_settings

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def slots_of(task: str) -> list[list[tuple]]:
    return [[(s["subject"], s["kind"], s["focus"]) for s in c["slots"]] for c in parse_chains(task)]


# --- the parser of question syntax -------------------------------------------------------------------------


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


# --- filling the slots ---------------------------------------------------------------------------------------


def doc(i: int, title: str, text: str) -> dict:
    return {"id": str(i), "url": f"local://t/{i}", "title": title, "snippet": text}


BRIDGE = [
    doc(
        1,
        "Bubye River",
        "The Bubye River is a tributary of the Limpopo River in Gwanda District, Zimbabwe. It rises "
        "near West Nicholson.",
    ),
    doc(
        2,
        "Victoria Falls",
        "Victoria Falls is a waterfall on the Zambezi River at the border between Zambia and "
        "Zimbabwe. It is one of the largest falls.",
    ),
    doc(3, "Cascade Falls", "Cascade Falls is a waterfall on the Kettle River in British Columbia."),
    doc(4, "Zimbabwe", "Zimbabwe is a landlocked country in Southern Africa."),
]


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
    query, planner = slot_query(filled, [BUBYE])
    assert planner == "slot 1.1" and query == "Bubye River country"  # its subject and relation words
    assert slot_query(filled, [BUBYE, query]) is None  # asked before: the caller's fallback plans the round
    both = fill_chains(BUBYE, chains, Reading(BRIDGE))
    query, planner = slot_query(both, [BUBYE])
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


# --- the gate and the session --------------------------------------------------------------------------------


def test_complete_chains_stop_the_gate_before_min_rounds_with_their_values_as_reason():
    settings = load_settings({"min_rounds": 3, "max_rounds": 5}, env={})
    decision, reason, draw, _ = decide_gate(2, 9.0, settings, new_rng(1), "[1.1] country = Zimbabwe")
    assert decision == "stop" and draw is None and reason.startswith(f"{ANSWERED}: [1.1] country = Zimbabwe")
    assert decide_gate(2, 9.0, settings, new_rng(1))[0] == "accept"  # not complete: min_rounds holds
    # two sub-questions: twice the rounds before the cap
    assert decide_gate(5, 9.0, settings, new_rng(1), None, chains=2)[0] == "accept"
    decision, reason, _, _ = decide_gate(10, 9.0, settings, new_rng(1), None, chains=2)
    assert decision == "cap" and "max_rounds 5 x 2 sub-questions" in reason


def test_the_novelty_threshold_defaults_to_its_method():
    for method, threshold in NOVELTY_THRESHOLDS.items():
        assert load_settings({"novelty_method": method}, env={}).novelty_threshold == threshold
    assert load_settings({"novelty_method": "embedding", "novelty_threshold": 2}, env={}).novelty_threshold == 2
    switched = load_settings({}, env={}).replace(novelty_method="embedding")
    assert switched.novelty_threshold == NOVELTY_THRESHOLDS["embedding"]  # the old method's default does not stick


def test_a_session_keeps_shows_and_reports_its_slots(home, musique_source, capsys, tmp_path):
    result = research(BUBYE, thread_id="ch", source=musique_source, seed=3)
    state = session_state("ch")
    assert [s["subject"] for s in state["chains"][0]["slots"]] == ["Bubye River", "#1"]
    assert all("slots" in r and "complete" in r for r in state["records"])
    assert state["records"][1]["planner"].startswith("slot 1.")  # round 2 asks for a slot
    assert result.short_answer == "Victoria Falls" and result.debug["slots"][1]["value"] == "Victoria Falls"
    assert main(["show", "ch"]) == 0
    out = capsys.readouterr().out
    assert "short answer: Victoria Falls" in out and "slot   [1.2] waterfall (of Zimbabwe) = Victoria Falls" in out
    assert main(["show", "ch", "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert '<table class="slots">' in page and "Victoria Falls" in page
    assert main(["research", BUBYE, "--corpus", str(musique_source.index_path), "--json"]) in (0, 2)


def test_the_result_json_has_the_short_answer_and_the_slots(home, musique_corpus, capsys):
    assert main(["research", BUBYE, "--corpus", str(musique_corpus), "--json", "--thread", "j"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["short_answer"] == "Victoria Falls"
    assert [s["slot"] for s in out["debug"]["slots"]] == ["1.1", "1.2"]
    assert {"kind", "focus", "subject", "value", "p", "status", "source", "page"} <= set(out["debug"]["slots"][0])
