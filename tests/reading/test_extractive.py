"""``reading.extractive``: the answer read off the passages (no model), cited, short, or an honest "not answered"."""

from __future__ import annotations

from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS, NOT_ANSWERED, cut_to_clauses, extractive_answer
from saturate.nodes.reading.question import stems

from bubye_docs import BRIDGE, BUBYE, doc


def test_a_long_sentence_is_cut_to_its_clauses():
    text = (
        "The Bubye River, also known as Bubi River, is a tributary of the Limpopo River in Beitbridge District "
        "and Gwanda District, Zimbabwe."
    )
    cut = cut_to_clauses(text, set(stems("Bubye River Zimbabwe")), 70)
    assert len(cut) <= 70 and cut.startswith("The Bubye River") and "Zimbabwe" in cut and "…" in cut


def test_a_later_clause_cut_alone_says_that_the_opening_was_left_out():
    text = (
        "Thebes, known to the ancient Egyptians as Waset, was an ancient Egyptian city located along the Nile about "
        "800 kilometers south of the Mediterranean."
    )
    cut = cut_to_clauses(text, set(stems("ancient Egyptian city Nile")), 50)
    assert cut.startswith("…was an ancient Egyptian city") and len(cut) <= 50, cut


def test_the_bridge_answer_leads_with_the_waterfall_and_cites_each_sentence():
    answer, cited = extractive_answer(BUBYE, BRIDGE, {})
    assert answer.startswith("Victoria Falls is a waterfall") and cited[0] == 2
    assert 3 not in cited  # Cascade Falls is in no country the Bubye River is in
    assert all(f"[{n}]" in answer for n in cited) and len(answer) <= ANSWER_MAX_CHARS


def test_the_enriched_page_is_read_beyond_the_snippet():
    short = [BRIDGE[0], {**BRIDGE[1], "snippet": "Victoria Falls."}, BRIDGE[3]]
    answer, _ = extractive_answer(BUBYE, short, {})
    assert not answer.startswith("Victoria Falls")
    answer, cited = extractive_answer(BUBYE, short, {BRIDGE[1]["url"]: BRIDGE[1]["snippet"]})
    assert answer.startswith("Victoria Falls is a waterfall") and cited[0] == 2


def test_no_confident_unrelated_answer():
    answer, cited = extractive_answer("Who painted the Mona Lisa?", BRIDGE, {})
    assert answer.startswith(NOT_ANSWERED) and cited == []
    assert "Bubye River" in answer  # the closest sources' titles
    assert extractive_answer(BUBYE, [], {}) == (NOT_ANSWERED, [])


def test_a_decided_yes_no_comparison_leads_the_answer():
    task = "Are Pothos and Tibouchina both flowering plants?"
    pages = [
        doc(1, "Pothos", "Pothos is a genus of flowering plants in the family Araceae."),
        doc(2, "Tibouchina", "Tibouchina is a genus of flowering plants in the family Melastomataceae."),
    ]
    yes, cited = extractive_answer(task, pages, {}, verdict=True)
    assert yes.startswith("Yes. Pothos is a genus") and cited == [1, 2]  # a sentence about each alternative
    no, _ = extractive_answer(task, pages, {}, verdict=False)
    assert no.startswith("No. ") and no[4:] == yes[5:]
