"""``reading.salience``: the names a gap query adds, the task's names, relevance weights."""

from __future__ import annotations

from saturate.nodes.reading.salience import gap_query, generic_name, relevance_weights, salient_phrases, task_names
from saturate.state.text import term_set

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def res(url, title, snippet):
    return {"id": url, "url": url, "title": title, "snippet": snippet, "source": "t", "score": None}


def test_salient_phrases_prefer_bridge_names_over_known_titles():
    results = [
        res("1", "Bubye River", "The Bubye River is a tributary of the Limpopo River in Gwanda District, Zimbabwe."),
        res("2", "Tenaru Falls", "Tenaru Falls is a waterfall in the rainforest of Guadalcanal."),
    ]
    phrases = salient_phrases(BUBYE, results, used_terms=term_set(BUBYE))
    assert "Tenaru Falls" not in phrases and "Bubye River" not in phrases  # already in hand
    assert phrases[0] in ("Limpopo River", "Gwanda District", "Zimbabwe")
    assert "Zimbabwe" in phrases


def test_gap_query_never_repeats():
    results = [res("1", "A", "Zimbabwe and Zambia.")]
    earlier = [BUBYE]
    for _ in range(12):
        q, planner = gap_query(BUBYE, results, earlier)
        assert q.lower() not in {e.lower() for e in earlier}
        earlier.append(q)
    assert len(set(earlier)) == len(earlier)


def test_sentence_start_capitals_and_possessives_are_not_new_names():
    results = [
        res(
            "1",
            "Photosynthesis",
            "Biological processes convert light. The Calvin cycle fixes carbon from light. Sun's light drives it.",
        ),
        res("2", "Chlorophyll", "Chlorophyll absorbs light from the Sun in the Calvin cycle."),
    ]
    phrases = salient_phrases("How does photosynthesis convert light?", results, used_terms=set())
    assert "Biological" not in phrases  # capitalised only because a sentence starts there
    assert "Calvin" in phrases and "Sun" in phrases and "Sun's" not in phrases


def test_task_names_weigh_relevance_and_must_be_whole():
    africa = "What is the longest river in Africa and which countries does it flow through?"
    assert task_names(africa) == [frozenset({"africa"})]
    assert task_names(BUBYE) == [frozenset({"bubye", "river"})]
    lena = res("l", "Lena River", "The Lena is the longest river in Russia; it flows north.")
    nile = res("n", "Nile", "The Nile is the longest river in Africa.")
    w_lena, w_nile = relevance_weights(africa, [lena, nile], decay=0.0)
    assert w_nile > w_lena  # "Africa" is the constraint, "flows" is not


def test_generic_words_and_languages_are_no_names():
    assert generic_name("North American English", set())
    assert generic_name("Greek", set()) and not generic_name("Greek", {"greek"})  # unless the task uses it
    assert not generic_name("Victoria Falls", set())


def test_gap_query_adds_two_names_numbers_last():
    results = [
        res(
            "1",
            "Bubye River",
            "The Bubye River is a tributary of the Limpopo River in Gwanda District, mapped in 1962.",
        ),
        res("2", "Bubye basin", "The Bubye River basin lies in Matabeleland South in 1962."),
    ]
    query, planner = gap_query(BUBYE, results, [BUBYE])
    assert planner == "gap-terms"
    assert query == f"{BUBYE} Limpopo River Gwanda District"  # two names; the year only after every name
    assert salient_phrases(BUBYE, results, term_set(BUBYE))[-1] == "1962"


def test_single_letters_and_counting_words_are_never_names_to_follow():
    from saturate.nodes.reading.entities import Entity
    from saturate.nodes.reading.salience import is_name

    assert not is_name(Entity("P", "other"), set())
    assert not is_name(Entity("Eight", "other"), set()) and not is_name(Entity("Third", "person"), set())
    assert not is_name(Entity("Group", "other"), {"group"})  # the results write it in lower case
    assert is_name(Entity("Zimbabwe", "other"), set()) and is_name(Entity("Group of Eight", "organisation"), set())
