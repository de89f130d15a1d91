"""Node pieces: knowledge merging, novelty scoring, query planning, and the optional chat model."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from saturate.graph import research, session_state
from saturate.nodes._model import strip_think
from saturate.nodes.assess_novelty import accepted_vocabulary, session_novelty, summary_novelty
from saturate.nodes.compress import extractive_merge, first_knowledge
from saturate.nodes.reading.salience import gap_query, generic_name, relevance_weights, salient_phrases, task_names
from saturate.nodes.search import simplify
from saturate.state import Context, initial_state, load_settings
from saturate.state.text import term_set

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def res(url, title, snippet):
    return {"id": url, "url": url, "title": title, "snippet": snippet, "source": "t", "score": None}


def test_first_knowledge_respects_cap_and_order():
    results = [res(f"u{i}", f"T{i}", "word " * 80) for i in range(5)]
    k = first_knowledge(results, 500)
    assert len(k) <= 500 and k.startswith("T0: word")
    assert k.count("\n") >= 1


def test_extractive_merge_keeps_new_information_under_cap():
    knowledge = "The Bubye River is in Zimbabwe. It joins the Limpopo River."
    new = ["Victoria Falls is the largest waterfall in Zimbabwe. The Bubye River is in Zimbabwe."]
    merged = extractive_merge(knowledge, new, 200)
    assert "Victoria Falls" in merged and "Limpopo" in merged
    assert merged.count("The Bubye River is in Zimbabwe.") == 1  # the repeat adds nothing
    assert len(merged) <= 200
    tight = extractive_merge(knowledge, new, 60)
    assert 0 < len(tight) <= 60


def test_session_novelty_scores_repeats_zero_and_new_vocabulary_high():
    seen = {"a": res("a", "Bubye River", "tributary of the Limpopo in Zimbabwe")}
    vocab = accepted_vocabulary(seen)
    assert session_novelty([seen["a"]], seen.keys(), vocab)[0] == 0.0
    fresh = res("b", "Victoria Falls", "waterfall on the Zambezi between Zambia and Zimbabwe")
    score, detail = session_novelty([fresh], seen.keys(), vocab)
    assert 5 < score < 10 and detail["repeats"] == 0
    same_words = res("c", "Limpopo Zimbabwe", "Bubye River tributary")
    assert session_novelty([same_words], seen.keys(), vocab)[0] == 0.0  # new url, nothing new said
    assert session_novelty([], seen.keys(), vocab)[0] == 0.0


def test_summary_novelty_is_the_seed_word_difference():
    r = [res("a", "x", "alpha beta gamma delta")]
    assert summary_novelty(r, "alpha beta")[0] == 10 * 3 / 5  # {x, gamma, delta} new of {x, alpha, beta, gamma, delta}
    assert summary_novelty(r, "x alpha beta gamma delta")[0] == 0.0


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


def test_simplify_keeps_content_terms():
    assert simplify(BUBYE) == "waterfall country bubye river"  # "found" is question filler
    assert simplify("the of and") == ""


def test_strip_think():
    assert strip_think("<think>hmm\nlong</think>\n7") == "7"
    assert strip_think("<THINK>never closed") == ""


class Broken(GenericFakeChatModel):
    def _generate(self, *a, **kw):
        raise ConnectionError("ollama unreachable")


def test_model_failure_is_recorded_and_heuristics_take_over(home, musique_source):
    result = research(
        BUBYE,
        thread_id="b",
        source=musique_source,
        chat_model=Broken(messages=iter([])),
        mode="fixed",
        fixed_rounds=3,
        seed=0,
    )
    recs = session_state("b")["records"]
    for r in recs[1:]:  # the question's slots plan the queries (the model could not); the merge is extractive
        assert (r["planner"].startswith("slot ") or r["planner"] == "gap-terms") and r["compress"] == "extractive"
        assert any("ConnectionError: ollama unreachable" in e for e in r["errors"])
        assert any("model error" in f for f in r["fallbacks"])
    assert result.outcome == "answer"


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


# ------------------------------------------------------------------ gap queries stay on topic


def _queries(task: str, wiki_source) -> list[str]:
    from saturate.graph.build import build_graph

    state = build_graph().invoke(
        initial_state(task, load_settings({"seed": 7, "mode": "fixed", "fixed_rounds": 5}, env={})),
        context=Context(source=wiki_source),
    )
    return [q[len(task) :].strip() for q in state["queries"][1:]]  # what each gap query adds to the task


@pytest.mark.parametrize(
    "task,drift",
    [
        ("What causes the seasons on Earth?", ["North American English", "English"]),
        ("How does photosynthesis convert light into chemical energy?", ["Greek", "PV"]),
        ("What is the longest river in Africa and which countries does it flow through?", ["Russia", "Siberia"]),
    ],
)
def test_gap_queries_do_not_drift_off_topic(wiki_source, task, drift):
    """Names of off-topic results, languages, demonyms and generic words are no gap terms (embedded corpus)."""
    added = " | ".join(_queries(task, wiki_source))
    for word in drift:
        assert word not in added, added


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
