"""Node pieces: knowledge merging, novelty scoring, query planning, and the optional chat model (the gap query's
names and the task's relevance weights: tests/reading/test_salience.py)."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from saturate.graph import research, session_state
from saturate.nodes._model import strip_think
from saturate.nodes.assess_novelty import accepted_vocabulary, session_novelty, summary_novelty
from saturate.nodes.compress import extractive_merge, first_knowledge
from saturate.nodes.search import simplify
from saturate.state import Context, initial_state, load_settings

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
