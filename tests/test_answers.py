"""Answers that answer: short, cited, on topic — or an honest "the sources do not answer this".

The extractive answer (no model) on real corpora (MuSiQue from ../shared/data, the embedded Wikipedia
corpus), the printed source list (cited first, ``--quiet`` keeps them), and the same short-answer
contract for a model's reply through the real ChatOllama client. (The question's kind and the cut to clauses
on their own: tests/reading/test_question.py and test_extractive.py.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.cli import main
from saturate.graph import research, session_state
from saturate.nodes._answer import DECIDE, answer_task, fit_reply
from saturate.nodes._model import ModelUsage
from saturate.nodes.reading.answer import LIKELY_PREFIX
from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS, NOT_ANSWERED

from conftest import DECOMPOSE, ROOT

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"
NILE = "What is the longest river in Africa and which countries does it flow through?"
PIZZA = "best pizza in Tulsa in 2024"


def cited(answer: str) -> list[int]:
    return [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", answer))]


def check_contract(result) -> None:
    """Short, citing only retrieved sources, the cited ones marked, every source numbered by its place."""
    assert len(result.answer) <= ANSWER_MAX_CHARS, result.answer
    numbers = [s.n for s in result.sources]
    assert numbers == list(range(1, len(numbers) + 1))
    assert set(cited(result.answer)) <= set(numbers)
    assert {s.n for s in result.sources if s.cited} == set(cited(result.answer))
    assert all(s.relevance is not None and 0 <= s.relevance <= 1 for s in result.sources)
    assert any(s.on_topic for s in result.sources)


def search_results(source, task: str, k: int) -> list[dict]:
    return [r.model_dump() for r in source.search(task, k)]


def test_bubye_answers_victoria_falls(home, musique_corpus):
    result = research(BUBYE, corpus=str(musique_corpus), seed=7, thread_id="bubye")
    assert "Victoria Falls" in result.answer, result.answer
    check_contract(result)
    first = cited(result.answer)[0]
    assert result.sources[first - 1].title == "Victoria Falls"  # the answer comes first
    # every accepted source is kept in the result (and the checkpoint), cited or not
    assert {s.url for s in result.sources} == set(session_state("bubye")["results"])
    assert result.debug["answered"] is True and result.debug["cited"] == sorted(cited(result.answer))


def test_the_longest_river_in_africa_is_the_nile(wiki_source):
    """The Zambezi is "the fourth-longest river in Africa, the longest east-flowing river": neither is "the
    longest river". Over the embedded corpus's own results for the task the answer names the Nile."""
    results = search_results(wiki_source, NILE, 15)
    assert any(r["title"] == "Nile" for r in results)
    answered = answer_task(NILE, results, {}, None, ModelUsage("decide"))
    assert answered.answer.startswith("Nile"), answered.answer
    assert not answered.answer.startswith("The Zambezi")
    assert len(answered.answer) <= ANSWER_MAX_CHARS


def test_unanswerable_question_says_so(home):
    result = research(PIZZA, seed=1, thread_id="pizza")
    assert result.answer.startswith(NOT_ANSWERED), result.answer
    assert not cited(result.answer) and not any(s.cited for s in result.sources)
    assert result.debug["answered"] is False and result.sources  # the sources are kept all the same
    assert len(result.answer) <= ANSWER_MAX_CHARS


def test_answers_are_short_and_cite_only_retrieved_sources(musique_source, musique_tasks, wiki_source):
    tasks = [(musique_source, t["question"]) for t in musique_tasks[:25]]
    tasks += [(wiki_source, q) for q in (NILE, PIZZA, "Who painted the Mona Lisa?", "When did the Berlin Wall fall?")]
    for source, task in tasks:
        results = search_results(source, task, 20)
        answered = answer_task(task, results, {}, None, ModelUsage("decide"))
        text = answered.answer
        assert 0 < len(text) <= ANSWER_MAX_CHARS, (task, text)
        assert set(cited(text)) <= set(range(1, len(results) + 1)), (task, text)
        assert text.startswith(NOT_ANSWERED) or cited(text), (task, text)
        assert 1 <= len(re.findall(r"\[\d+\]", text)) <= 3 or text.startswith(NOT_ANSWERED)


def test_enriched_page_text_is_read(musique_source):
    """A fact only in the enriched page (beyond the snippet) can be the answer, cited with its source's number."""
    results = search_results(musique_source, BUBYE, 10)
    vf = next(i for i, r in enumerate(results) if r["title"] == "Victoria Falls")
    results[vf] = {**results[vf], "snippet": "Victoria Falls."}
    page = "Victoria Falls is a waterfall in southern Africa on the Zambezi River at the border of Zimbabwe."
    answered = answer_task(BUBYE, results, {results[vf]["url"]: page}, None, ModelUsage("decide"))
    assert "Victoria Falls" in answered.answer and f"[{vf + 1}]" in answered.answer


def test_a_long_model_reply_is_cut_never_inside_a_citation():
    """(The extractive answer's own cut to clauses: tests/reading/test_extractive.py.)"""
    reply = "Victoria Falls is the waterfall [2]. " + "It lies on the Zambezi between Zambia and Zimbabwe [1]. " * 8
    short, was_cut = fit_reply(reply)
    assert was_cut and len(short) <= ANSWER_MAX_CHARS and short.endswith("[1].")
    assert short.count("[") == short.count("]")
    one, was_cut = fit_reply("A very long sentence about the falls " * 20 + "[3].")
    assert was_cut and len(one) <= ANSWER_MAX_CHARS and one.endswith("[3]") and "…" in one


# --- the printed result ------------------------------------------------------------------------------------


def test_cli_lists_cited_sources_first_and_quiet_keeps_them(home, musique_corpus, capsys):
    args = ["research", BUBYE, "--corpus", str(musique_corpus), "--seed", "7"]
    assert main([*args, "--thread", "full"]) == 0
    out = capsys.readouterr().out
    answer, rest = out.split("\n\n", 1)
    brief = ""
    if rest.startswith("Brief:\n"):  # the brief under the answer: its citations are listed too, after the answer's
        brief, rest = rest.split("\n\n", 1)
    numbers = list(dict.fromkeys(cited(answer) + cited(brief)))
    assert cited(answer) and rest.startswith("Cited:\n")
    listed = [int(n) for n in re.findall(r"^\[(\d+)\] ", rest, re.M)]
    assert listed[: len(numbers)] == numbers  # the cited sources first, in the order the answer cites them
    state = session_state("full")
    result = state["result"]
    assert [s["n"] for s in result["sources"]] == list(range(1, len(state["results"]) + 1))
    relevant = {s["n"] for s in result["sources"] if s["on_topic"]}
    assert set(listed[len(numbers) :]) == relevant - set(numbers)  # then only the on-topic ones ...
    others = len(result["sources"]) - len(set(listed))
    assert others > 0 and f"({others} other accepted sources not shown: saturate show full, or --json)" in rest

    assert main([*args, "--thread", "quiet", "--quiet"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    by_n = {s["n"]: s for s in result["sources"]}
    assert lines[0] == answer.strip()  # same settings, same session: the same answer
    listed_quiet = [x for x in lines[1:] if re.match(r"\[\d+\] ", x)]
    assert listed_quiet == [f"[{n}] {by_n[n]['title']} — {by_n[n]['url']}" for n in numbers]
    assert "\n".join(lines[1 : len(lines) - len(listed_quiet)]).strip() == brief.strip()

    assert main(["show", "full", "--json"]) == 0  # ... and every accepted source is kept
    assert len(json.loads(capsys.readouterr().out)["result"]["sources"]) == len(state["results"])


def test_cli_task_without_a_searchable_word_is_bad_input(home):
    def run(*flags):
        return subprocess.run(
            [sys.executable, "-m", "saturate.cli", "research", "the of a", *flags],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={"SATURATE_HOME": str(home), "PATH": ""},
        )

    p = run("--quiet")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("saturate: error: the task 'the of a' has no searchable")
    p = run()  # the error is one line (after the session header, which the research command prints first)
    errors = [line for line in p.stderr.splitlines() if not line.startswith("thread ")]
    assert p.returncode == 2 and p.stdout == "" and len(errors) == 1 and "no searchable word" in errors[0]


# --- the same contract with a model -------------------------------------------------------------------------

PLAN = '{"queries": ["Bubye River country", "waterfalls of Zimbabwe"]}'


def model_kw(server, **kw):
    return {"model": "ollama:qwen-test", "ollama_host": server.url, "seed": 0, "mode": "fixed", "fixed_rounds": 2, **kw}


def test_model_answer_too_long_is_cut_and_noted(home, musique_source, unjudged):
    long_reply = (
        "The waterfall is Victoria Falls [2]. "
        + "It lies on the Zambezi River at the border between Zambia and Zimbabwe, where the Bubye River flows [1]. "
        * 5
    )
    script = OllamaScript(plan=[PLAN], compress=["- Bubye River is in Zimbabwe."], decide=[long_reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="long", source=musique_source, **model_kw(server))
    assert result.debug["answer"] == "model"
    # each sentence is cited with the source that holds it (the script's [2] and [1] are other pages here), then
    # the answer is cut at a sentence boundary, each sentence keeping its citation
    assert len(result.answer) <= ANSWER_MAX_CHARS and result.answer.startswith("The waterfall is Victoria Falls")
    parts = re.split(r"(?<=\])\s+", result.answer)
    assert len(parts) >= 2 and all(re.fullmatch(r"[^\[\]]+[.] \[\d+\]", x) for x in parts), parts
    assert len(result.answer) + len(parts[-1]) + 1 > ANSWER_MAX_CHARS  # one more sentence would not have fitted
    assert any(f"model answer was {len(long_reply.strip())} characters: cut to" in n for n in result.debug["notes"])
    assert {s.n for s in result.sources if s.cited} == set(cited(result.answer))
    # the prompt asks for the short-answer contract
    system = script.by_role("decide")[0]["messages"][0]["content"]
    assert system == DECIDE.system and "at most 400 characters" in system and NOT_ANSWERED in system


def test_model_saying_the_sources_do_not_answer_is_kept(home, musique_source, unjudged):
    reply = f"{NOT_ANSWERED} They are about rivers and waterfalls."
    script = OllamaScript(plan=[PLAN], compress=["- x"], decide=[reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="none", source=musique_source, **model_kw(server))
    assert result.answer == reply and result.debug["answer"] == "model" and result.debug["answered"] is False
    assert not any(s.cited for s in result.sources)


def test_the_trained_reader_answers_by_default(home):
    result = research("Who painted the Mona Lisa?", seed=1, max_rounds=2, thread_id="mona")
    assert result.debug["answer"] == "reader" and result.debug["answered"] is True
    assert "Leonardo" in result.answer
    check_contract(result)
    # answered or likely (marked not confirmed) by the confidence; either way the note says which and why
    level = result.debug["reader_level"]
    assert level in ("answered", "likely") and result.answer.startswith(LIKELY_PREFIX) == (level == "likely")
    assert any(n.startswith(f"reader: {level}, confidence ") for n in result.debug["notes"])
    rules = research("Who painted the Mona Lisa?", seed=1, max_rounds=2, reader="rules", thread_id="mona-rules")
    assert rules.debug["answer"] == "extractive"  # the hand-written rules, for comparison


def test_a_reader_that_cannot_load_is_noted_and_the_rules_answer(home, monkeypatch):
    import saturate.nodes._answer as answer_module
    from saturate.nodes.reading.reader import ReaderUnavailable

    def broken():
        raise ReaderUnavailable("the reader's model /x/reader-int8.onnx is damaged (sha256 abc…, want def…)")

    monkeypatch.setattr(answer_module, "shipped_reader", broken)
    result = research("Who painted the Mona Lisa?", seed=1, max_rounds=2, thread_id="mona-broken")
    assert result.debug["answer"] == "extractive" and result.answer
    assert any("is damaged" in n and "the extractive rules answered" in n for n in result.debug["notes"])
    check_contract(result)


def test_an_uncited_model_answer_gets_its_citations_found_in_code(home, musique_source, unjudged):
    # SmolLM2-135M on llama-cpp-python never wrote a [n]: its answer is cited sentence by sentence with the source
    # holding the sentence's words beyond the task's; an invented sentence (in no source) is dropped, noted
    reply = "The waterfall is Victoria Falls on the Zambezi River. It was painted by Claude Monet in Giverny."
    script = OllamaScript(plan=[PLAN], compress=["- Bubye River is in Zimbabwe."], decide=[reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="uncited", source=musique_source, **model_kw(server))
    assert result.debug["answer"] == "model", result.debug["notes"]
    first = cited(result.answer)
    assert result.answer == f"The waterfall is Victoria Falls on the Zambezi River. [{first[0]}]"
    assert "Victoria Falls" in result.sources[first[0] - 1].title + result.sources[first[0] - 1].excerpt
    notes = result.debug["notes"]
    assert "model answer cited no source: each sentence cited with the source that holds it" in notes
    assert "model answer: 1 sentence(s) held by no source dropped" in notes
    check_contract(result)


def test_a_cited_sentence_its_source_does_not_hold_is_cited_anew_or_dropped(home, musique_source, unjudged):
    """SmolLM2 answered "The Three Musketeers is a 19th-century French novel written by William Shakespeare. [3]"
    to who wrote Pride and Prejudice: [3] was retrieved, but it names no Shakespeare. A sentence is kept only where a
    source holds its words and every name it adds; a right sentence citing the wrong source is cited anew."""
    reply = "Victoria Falls is a waterfall on the Zambezi River. [9] It was built by William Shakespeare in 1601. [1]"
    script = OllamaScript(plan=[PLAN], compress=["- x"], decide=[reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="wrong", source=musique_source, **model_kw(server))
    assert result.debug["answer"] == "model", result.debug["notes"]
    assert "Shakespeare" not in result.answer and result.answer.startswith("Victoria Falls is a waterfall")
    n = cited(result.answer)[0]
    assert "Victoria Falls" in result.sources[n - 1].title + result.sources[n - 1].excerpt
    notes = result.debug["notes"]
    assert "model answer: 1 sentence(s) held by no source dropped" in notes
    check_contract(result)


def test_an_uncited_model_answer_in_no_source_is_replaced_and_noted(home, musique_source):
    reply = "Claude Monet painted water lilies in Giverny."
    script = OllamaScript(plan=[PLAN], compress=["- x"], decide=[reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="invented", source=musique_source, **model_kw(server))
    assert result.debug["answer"] != "model" and "Monet" not in result.answer
    assert (
        "model answer: no sentence of it is held by a source (its words and names): extractive answer used"
        in result.debug["notes"]
    )


# --- the model's answer judged by the trained reader ----------------------------------------------------------


def given_reader(p: dict[str, float], other: float = 0.5, confident: float = 0.5) -> Any:
    """A reader whose ``p`` for a sentence is given (``GivenReader``), typed as the reader it stands for."""
    return GivenReader(p, other, confident)


class GivenReader:
    """A reader whose ``p`` for a sentence is given (``p``, else ``other``) and whose confidence is ``confident``:
    the judgement's mechanism, whatever the reader's model file says (the shipped one may be a stand-in)."""

    def __init__(self, p: dict[str, float], other: float = 0.5, confident: float = 0.5):
        import math

        self.p, self.other, self.asked = p, other, []
        z = math.log(confident / (1 - confident))
        self.levels = {"question": {"bias": z, "weights": {}}}
        self.meaning = None  # no calibration with the pages' meaning (``reader.Meaning``)

    def candidates(self, question, docs):
        from saturate.nodes.reading.reader import candidates

        return candidates(question, docs)

    def read(self, question, cands, meaning=None):
        from saturate.nodes.reading.reader import Read

        self.asked += list(cands)
        return [Read(c, self.p.get(c.text, self.other)) for c in cands]


FALLS = [
    {
        "url": "local://falls",
        "title": "Victoria Falls",
        "snippet": "Victoria Falls is a waterfall on the Zambezi River. It lies between Zambia and Zimbabwe.",
    },
    {"url": "local://bubye", "title": "Bubye River", "snippet": "The Bubye River is a river in Zimbabwe."},
]


def test_a_model_sentence_read_below_the_best_source_sentence_is_not_used():
    from saturate.nodes._answer import judged_by_reader

    notes: list[str] = []
    judge = given_reader({"The waterfall is Victoria Falls.": 0.3})
    got = judged_by_reader(judge, BUBYE, "The waterfall is Victoria Falls. [1]", FALLS, {}, 0.06, notes)
    assert got == "" and notes == [
        "model answer: the reader reads none of its sentences as answering as well as the best source sentence "
        "(p 0.300 < 0.500): the model's answer was not used"
    ]
    # read as the sources' sentences are: with the title of the source it cites
    model_read = [c for c in judge.asked if c.text == "The waterfall is Victoria Falls."]
    assert model_read and model_read[0].title == "Victoria Falls" and model_read[0].doc == 0


def test_model_sentences_read_as_well_as_the_best_source_sentence_are_kept_the_others_dropped():
    from saturate.nodes._answer import judged_by_reader

    notes: list[str] = []
    answer = "The waterfall is Victoria Falls. [1] The Bubye River is a river. [2]"
    judge = given_reader({"The waterfall is Victoria Falls.": 0.8, "The Bubye River is a river.": 0.1})
    got = judged_by_reader(judge, BUBYE, answer, FALLS, {}, 0.06, notes)
    assert got == "The waterfall is Victoria Falls. [1]"
    assert notes == [
        "model answer: 1 sentence(s) the reader reads as answering less well than the best source sentence "
        "(p < 0.500) dropped"
    ]
    equal = given_reader({"The waterfall is Victoria Falls.": 0.5})  # as well as the best: kept
    assert judged_by_reader(equal, BUBYE, "The waterfall is Victoria Falls. [1]", FALLS, {}, 0.06, []) != ""


def test_a_model_saying_the_sources_do_not_answer_gives_way_when_the_reader_finds_an_answer():
    from saturate.nodes._answer import judged_by_reader

    reply = f"{NOT_ANSWERED} They are about rivers."
    notes: list[str] = []
    assert judged_by_reader(given_reader({}, confident=0.01), BUBYE, reply, FALLS, {}, 0.06, notes) == reply
    assert notes == []
    assert judged_by_reader(given_reader({}, confident=0.9), BUBYE, reply, FALLS, {}, 0.06, notes) == ""
    assert notes == [
        "model answer said the sources do not answer, but the reader reads them as answering (confidence 0.900 ≥ "
        "0.06): the model's answer was not used"
    ]


class ScoredReader:
    """The shipped reader, with the ``p`` of the given sentences set and every other sentence's ``other``."""

    def __init__(self, real, p: dict[str, float], other: float = 0.5):
        self.real, self.p, self.other = real, p, other

    def read(self, question, cands, meaning=None):
        from dataclasses import replace

        got = self.real.read(question, cands, meaning)
        return [replace(x, p=self.p.get(x.candidate.text, self.other)) for x in got]

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_session_uses_the_model_answer_only_where_the_reader_reads_it_as_answering(home, musique_source, monkeypatch):
    """Through a whole session with a scripted model (ChatOllama): the same grounded reply is used when the reader
    reads it as answering as well as the best source sentence, and replaced by the rules' answer (a multi-hop
    question) when it reads it below, noted."""
    import saturate.nodes._answer as answer_module
    from saturate.nodes.reading.reader import shipped_reader

    reply = "The waterfall is Victoria Falls on the Zambezi River."
    real = shipped_reader()
    for thread, p in (("judged-low", 0.2), ("judged-high", 0.9)):
        monkeypatch.setattr(answer_module, "shipped_reader", lambda p=p: ScoredReader(real, {reply: p}))
        script = OllamaScript(plan=[PLAN], compress=["- Bubye River is in Zimbabwe."], decide=[reply])
        with OllamaServer(script) as server:
            result = research(BUBYE, thread_id=thread, source=musique_source, **model_kw(server))
        notes = result.debug["notes"]
        if p < 0.5:
            assert result.debug["answer"] == "extractive" and reply not in result.answer, notes
            assert any(n.startswith("model answer: the reader reads none of its sentences") for n in notes), notes
        else:
            assert result.debug["answer"] == "model" and result.answer.startswith(reply), notes
        check_contract(result)


def test_the_model_restates_the_answer_without_it_or_it_does_not_count():
    """``agrees``: the model's answer stands for the session's own only where it says the same thing — it holds that
    answer's value, else its first sentence is held by that answer's first (every name it adds among its names)."""
    from saturate.nodes._answer import agrees

    lead = "Victoria Falls is a waterfall on the Zambezi River between Zambia and Zimbabwe. [1] Cascade Falls. [2]"
    assert agrees("The waterfall is Victoria Falls. [1]", lead, "Victoria Falls", BUBYE)
    assert not agrees("The waterfall is Cascade Falls. [2]", lead, "Victoria Falls", BUBYE)
    # no value: the model's first sentence against the answer's first
    assert agrees("Victoria Falls lies between Zambia and Zimbabwe. [1]", lead, "", BUBYE)
    assert not agrees("The waterfall is Cascade Falls. [2]", lead, "", BUBYE)  # a name the lead does not hold
    assert not agrees("", lead, "", BUBYE) and not agrees("Victoria Falls. [1]", "", "", BUBYE)


def test_a_model_answer_that_names_another_value_does_not_overrule_the_answer_without_it(
    home, musique_source, monkeypatch
):
    """Issue 45: Qwen2.5-Coder-0.5B's answers that the reader's judgement let through held the gold 1 time in 10,
    the answer without the model 5 times. A grounded reply the reader reads as answering well, but naming another
    waterfall than the slots found, gives way to the answer without the model (noted); the same reply where the
    sources answer nothing without the model fills that in."""
    import saturate.nodes._answer as answer_module
    from saturate.bench.real_model import GAVE_WAY
    from saturate.nodes.reading.reader import shipped_reader

    reply = "Cascade Falls is a waterfall on the Kettle River."
    real = shipped_reader()
    monkeypatch.setattr(answer_module, "shipped_reader", lambda: ScoredReader(real, {reply: 0.95}))
    script = OllamaScript(plan=[PLAN], compress=["- Bubye River is in Zimbabwe."], decide=[reply])
    with OllamaServer(script) as server:
        result = research(BUBYE, thread_id="other", source=musique_source, **model_kw(server))
    notes = result.debug["notes"]
    assert result.short_answer == "Victoria Falls" and result.answer.startswith("Victoria Falls"), notes
    assert result.debug["answer"] == "extractive" and not result.answer.startswith(reply)
    assert any("the model may restate or fill in that answer, not overrule it" in n for n in notes), notes
    assert sum(any(k in n for k in GAVE_WAY) for n in notes) == 1  # what `saturate bench real-model` counts
    check_contract(result)

    # a one-part question whose reader answer is out of reach (reader_min_p 0.99): the model's answer fills it in
    task = "What is the Bubye River a tributary of?"
    reply = "The Bubye River is a tributary of the Limpopo River."
    monkeypatch.setattr(answer_module, "shipped_reader", lambda: ScoredReader(real, {reply: 0.999}, other=0.2))
    script = OllamaScript(plan=[PLAN], compress=["- x"], decide=[reply])
    with OllamaServer(script) as server:
        result = research(task, thread_id="fill", source=musique_source, reader_min_p=0.99, **model_kw(server))
    assert result.debug["answer"] == "model" and result.answer.startswith(reply), result.debug["notes"]
    check_contract(result)


def test_the_question_not_the_models_decomposition_decides_who_answers(home, musique_source):
    """Issue 45: SmolLM2 decomposed single questions into chains of two slots, and their answers went from the trained
    reader's to the rules' (one lost on the 40 public questions). Which answerer reads a question is the question's
    own syntax's (``reading.answer.reads_question``): a model's two-slot decomposition of a single question leaves it
    to the reader, while the chains still steer the loop's queries."""
    task = "What is the Bubye River a tributary of?"
    script = OllamaScript(plan=[PLAN], decompose=[DECOMPOSE], compress=["- x"], decide=["x"])
    with OllamaServer(script) as server:
        result = research(
            task, thread_id="chains", source=musique_source, **model_kw(server, model_plans=True), reader_min_p=0.0
        )
    assert len(session_state("chains")["chains"][0]["slots"]) == 2  # the model's chains, used by the loop
    assert result.debug["answer"] == "reader", result.debug["notes"]
    assert "Limpopo" in result.answer


def test_a_model_that_does_not_plan_leaves_the_search_as_it_is_without_a_model(home, musique_source):
    """Issue 45: a 0.5B model's queries and decompositions lost more answers than they found. With ``model_plans`` off
    (the default) a session with a model asks the same queries, accepts the same sources and stops at the same round
    as the session without one (same seed); the model only compresses and writes. On, the model plans."""
    task = "When did the country where Bubye River is located gain independence?"

    def search_of(thread: str) -> list[tuple]:
        records = session_state(thread)["records"]
        return [
            (r["query"], r["planner"], r["decision"], list(r.get("new_urls") or []), r.get("novelty")) for r in records
        ]

    research(task, thread_id="bare", source=musique_source, seed=3)
    script = OllamaScript(plan=[PLAN], decompose=[DECOMPOSE], gap=["Zimbabwe"], compress=["- x"], decide=["x"])
    with OllamaServer(script) as server:
        kw = {"model": "ollama:qwen-test", "ollama_host": server.url, "seed": 3}
        writes = research(task, thread_id="writes", source=musique_source, **kw)
        plans = research(task, thread_id="plans", source=musique_source, model_plans=True, **kw)
    assert search_of("writes") == search_of("bare")
    assert sorted(session_state("writes")["results"]) == sorted(session_state("bare")["results"])
    assert session_state("writes")["chains"] and session_state("writes")["chains"] == session_state("bare")["chains"]
    assert writes.debug["model_calls"] > 0
    called = {n for r in session_state("writes")["records"] for n in r.get("model_calls_by_node") or {}}
    assert called and not called & {"plan", "fill"}, called
    assert plans.debug["model_calls"] > writes.debug["model_calls"]
    assert session_state("plans")["planned_queries"][1:], "the model's own queries, planned"
    assert search_of("plans") != search_of("bare")


def test_the_slot_line_is_shown_only_where_it_agrees_with_what_the_reader_read():
    """A one-slot question the reader answers: the slot's value is shown only where the reader's best sentence's
    span names the same thing ("Who painted the Sistine Chapel ceiling?" showed "(a person) = Last Judgment", a name of
    the reader's own sentence, under its Michelangelo)."""
    from dataclasses import replace

    from saturate.nodes._answer import Answered
    from saturate.nodes.decide import same_value, shown_slots

    chains = [{"slots": [{"n": 1, "kind": "person", "value": "Last Judgment", "stable": True}], "text": "x"}]
    said = "The frescoes, the Sistine Chapel ceiling and The Last Judgment, are both by Michelangelo. [1]"
    answered = Answered(said, "reader", [], level="likely", span="Michelangelo")
    assert shown_slots(chains, answered) == []
    assert [s["value"] for s in shown_slots(chains, replace(answered, span="The Last Judgment"))] == ["Last Judgment"]
    assert [s["value"] for s in shown_slots(chains, replace(answered, span=""))] == ["Last Judgment"]  # no span read
    assert same_value("Mali", "Republic of Mali") and not same_value("Mali", "Niger") and not same_value("", "Mali")
