"""The model-backed steps through the real ChatOllama client against a local Ollama-protocol server."""

from __future__ import annotations

import json
import socket

import pytest

from saturate.bench.ollama_script import OllamaScript, OllamaServer, role_of
from saturate.cli import main
from saturate.graph import research, resume, session_state, verify
from saturate.graph.models import ModelUnavailable
from saturate.nodes._answer import cited_numbers
from saturate.nodes._chain_model import DECOMPOSE as DECOMPOSE_PROMPT
from saturate.nodes.compress import COMPRESS
from saturate.nodes.plan_query import GAP_QUERY

from conftest import BUBYE, DECOMPOSE, FILL, FILL_ROUND_ONE, PLAN, eval_file

# the wire and the replies' plumbing: the scripted answer is used as the plumbing leaves it, not judged by the reader
pytestmark = pytest.mark.usefixtures("unjudged")

ANSWERED = "every part of the question has an answer in the sources"


def model_kw(server, **kw):
    # the model steers the search here (model_plans): the planning prompts are what these tests script
    return {"model": "ollama:qwen-test", "ollama_host": server.url, "seed": 0, "model_plans": True, **kw}


def test_full_session_with_model(home, musique_source):
    script = OllamaScript(
        plan=[PLAN],
        decompose=[DECOMPOSE],
        fill=[FILL],
        novelty=["9", "<think>the results repeat Zimbabwe facts</think> 8"],
        gap=['"Victoria Falls Zimbabwe"\nbecause it is the largest'],
        compress=["- Bubye River is in Zimbabwe.\n- Victoria Falls is a waterfall in Zimbabwe."],
        decide=["The waterfall is Victoria Falls [2], in Zimbabwe [1], not [42]."],
    )
    with OllamaServer(script) as server:
        result = research(
            BUBYE,
            thread_id="m",
            source=musique_source,
            novelty_method="model",
            novelty_epsilon=0.0,
            novelty_threshold=3,
            min_rounds=2,
            **model_kw(server),
        )
    state = session_state("m")
    recs = state["records"]
    # the model's chains: the bridge (the country) then the waterfall in it, each with its head noun
    slots = state["chains"][0]["slots"]
    assert [(s["subject"], s["kind"], s["focus"]) for s in slots] == [
        ("Bubye River", "place", "country"),
        ("#1", "name", "waterfall"),
    ]
    # the initial plan: the task itself (as without a model), then the model's two complementary queries
    assert state["planned_queries"] == [BUBYE, "Bubye River country", "waterfalls of Zimbabwe"]
    assert [r["query"] for r in recs] == [BUBYE, "Bubye River country"]
    assert [r["planner"] for r in recs] == ["task", "planned"]
    # the model fills both slots in round 1 with values the passages retrieved for the task hold
    assert [s["value"] for s in recs[0]["slots"]] == ["Zimbabwe", "Victoria Falls"]
    assert not any("dropped" in f for f in recs[0]["fallbacks"])
    assert all(s.get("by") == "model" for s in state["chains"][0]["slots"])
    # model novelty: think block stripped; the chains are complete in round 2 (each value stable, the answer's own
    # page retrieved): the gate stops with the slots' values as its reason
    assert [r["novelty"] for r in recs] == [9.0, 8.0] and recs[1]["decision"] == "stop"
    assert recs[1]["complete"] and result.stop_reason.startswith(
        f"{ANSWERED}: [1.1] country of Bubye River (a place) = Zimbabwe; "
    )
    assert result.short_answer == "Victoria Falls"
    assert all(r["novelty_method"] == "model" for r in recs)
    # round 1 is compressed from the bodies; the stopped round made no compress call, so the model was not asked
    assert recs[0]["compress"] == "bodies"
    assert "compress" not in recs[1]["model_calls_by_node"] and recs[1].get("compress") is None
    assert not script.by_role("compress")
    # the fill is not asked once the chains are complete; no gap query: the plan had queries left
    assert len(script.by_role("fill")) == 1 and not script.by_role("gap")
    # citations checked in code: [42] named no retrieved source and was removed; the sentence is cited with the
    # source that holds it (the script's [2] and [1] are not Victoria Falls' page in this corpus)
    assert result.debug["answer"] == "model" and "[42]" not in result.answer
    assert result.answer.startswith("The waterfall is Victoria Falls, in Zimbabwe, not.")
    holder = result.sources[cited_numbers(result.answer)[0] - 1]
    assert "Victoria Falls" in holder.title + holder.excerpt
    assert any("[42]" in n for n in result.debug["notes"])
    assert "model answer: 1 sentence(s) cited a source that does not hold them: cited anew" in result.debug["notes"]
    # calls and tokens counted per round and per session
    assert recs[0]["model_calls_by_node"] == {"plan": 2, "novelty": 1, "fill": 1}
    assert recs[0]["model_tokens"]["in"] > 0 and recs[0]["model_tokens"]["out"] > 0
    # ... and the brief's prose: one call more (issue 44; the scripted reply holds no source's sentence, so the
    # extractive brief stands, noted)
    assert len(script.by_role("brief")) == 1
    assert result.debug["model_calls"] == len(script.requests) == 2 + 1 + 2 + 1 + 1
    assert result.debug["model_tokens"]["in"] == sum(r["model_tokens"].get("in", 0) for r in recs) + sum(
        len(m["content"].split())
        for m in script.by_role("decide")[0]["messages"] + script.by_role("brief")[0]["messages"]
    )


def test_unusable_decomposition_falls_back_to_the_parser(home, musique_source):
    script = OllamaScript(
        plan=[PLAN],
        decompose=["The chains are: first the country, then the waterfall.", '{"chains": [{"slots": []}]}'],
        fill=['{"1.1": "Atlantis"}'],
        novelty=["8"],
        decide=["x [1]"],
    )
    with OllamaServer(script) as server:
        research(BUBYE, thread_id="d", source=musique_source, mode="fixed", fixed_rounds=1, **model_kw(server))
    state = session_state("d")
    rec = state["records"][0]
    assert (
        len(script.by_role("decompose")) == 2
        and "JSON only" in script.by_role("decompose")[1]["messages"][1]["content"]
    )
    assert any("decomposition unusable twice" in f for f in rec["fallbacks"])
    # the parser's chains stand in: the country where the Bubye River is, then the waterfall there
    assert [s["subject"] for s in state["chains"][0]["slots"]] == ["Bubye River", "#1"]
    # a model value no retrieved passage holds is dropped, never used
    assert any("Atlantis" in f and "in no retrieved passage" in f for f in rec["fallbacks"])
    assert all(s["value"] != "Atlantis" for s in rec["slots"])


def test_what_the_client_sent(home, musique_source):
    script = OllamaScript(
        plan=[PLAN], decompose=[DECOMPOSE], fill=[FILL_ROUND_ONE], novelty=["7"], compress=["- fact"], decide=["x [1]"]
    )
    with OllamaServer(script) as server:
        research(
            BUBYE,
            thread_id="s",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=3,
            **model_kw(server, num_ctx=4096),
        )
    for req in script.requests:
        assert req["model"] == "qwen-test" and req["options"]["num_ctx"] == 4096
    nov = script.by_role("novelty")[0]
    assert nov["options"]["temperature"] == 0 and nov["options"]["num_predict"] == 3
    user = nov["messages"][1]["content"]
    known = user.split("<known>\n")[1].split("\n</known>")[0]
    results = user.split("<results>\n")[1].split("\n</results>")[0]
    assert BUBYE in user and len(known) <= 800 and 0 < len(results) <= 800
    comp = script.by_role("compress")[0]
    assert comp["options"]["temperature"] == COMPRESS.options["temperature"] == 0.1
    assert comp["options"]["num_predict"] == 400 and "<results>" in comp["messages"][1]["content"]
    dec = script.by_role("decompose")[0]
    assert dec["options"] == {**dec["options"], **DECOMPOSE_PROMPT.options} and BUBYE in dec["messages"][1]["content"]
    fill = script.by_role("fill")[0]["messages"][1]["content"]
    assert fill.startswith(f"Question: {BUBYE}") and "1.1: country" in fill and "1.2: waterfall" in fill
    passages = fill.split("<passages>\n")[1].split("\n</passages>")[0]
    assert passages.startswith("[1] ") and "Bubye" in passages


def test_gap_query_when_there_is_no_slot_to_ask(home, musique_source):
    """A claim has no chains: its later rounds are the model's gap queries (first line, quotes stripped)."""
    script = OllamaScript(
        plan=[PLAN], novelty=["7"], gap=['"Limpopo tributaries"\nbecause'], compress=["- f"], stance=["support"]
    )
    with OllamaServer(script) as server:
        verify(
            "The Bubye River is in Zimbabwe.",
            thread_id="g",
            source=musique_source,
            mode="fixed",
            fixed_rounds=4,
            verify_max_attempts=1,
            **model_kw(server),
        )
    recs = session_state("g")["records"]
    # the plan (the claim, then the model's two queries) is spent after round 3
    assert [r["planner"] for r in recs[:3]] == ["task", "planned", "planned"]
    assert recs[3]["planner"] == "model" and recs[3]["query"] == "Limpopo tributaries"
    gap = script.by_role("gap")[0]
    assert gap["options"] == {**gap["options"], **GAP_QUERY.options} and gap["options"]["num_predict"] == 60
    assert "Bubye River country" in gap["messages"][1]["content"]  # earlier queries are shown, never to repeat
    assert not script.by_role("decompose") and not script.by_role("fill")  # a claim has no slots


@pytest.mark.parametrize(
    "reply,score,fallback",
    [
        ("7", 7.0, None),
        ("7.5", 7.5, None),  # was read as 7
        ("Score: 4 of 10", 4.0, None),
        ("lots of new things", 5.0, "no integer"),
        ("42", 10.0, "clamped"),
        ("-3", 0.0, "clamped"),
        ("<think>maybe 1</think>6", 6.0, None),
    ],
)
def test_novelty_replies(home, musique_source, reply, score, fallback):
    script = OllamaScript(
        plan=[PLAN],
        decompose=[DECOMPOSE],
        fill=[FILL_ROUND_ONE],
        novelty=[reply],
        compress=["- fact"],
        decide=["x [1]"],
    )
    with OllamaServer(script) as server:
        research(
            BUBYE,
            thread_id="n",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            **model_kw(server),
        )
    rec = session_state("n")["records"][0]
    assert rec["novelty"] == score
    if fallback:
        assert any(fallback in f for f in rec["fallbacks"])
    else:  # the search's own note (the task's round 1 under the quality floor) aside, nothing fell back
        assert not [f for f in rec["fallbacks"] if "quality floor" not in f]


def test_unusable_plan_is_asked_again_then_falls_back(home, musique_source):
    script = OllamaScript(
        plan=["Sure! Here are some queries: first, second", "{'queries': ['Bubye River country',]}"],
        novelty=["8"],
        decide=["x [1]"],
    )
    with OllamaServer(script) as server:
        research(BUBYE, thread_id="p", source=musique_source, mode="fixed", fixed_rounds=1, **model_kw(server))
    state = session_state("p")
    assert state["planned_queries"] == [BUBYE, "Bubye River country"]  # repaired: single quotes, trailing comma
    assert len(script.by_role("plan")) == 2 and "JSON only" in script.by_role("plan")[1]["messages"][1]["content"]
    assert any("asked once more" in f for f in state["records"][0]["fallbacks"])

    script = OllamaScript(plan=["no json here"], decide=["x [1]"])
    with OllamaServer(script) as server:
        research(BUBYE, thread_id="p2", source=musique_source, mode="fixed", fixed_rounds=1, **model_kw(server))
    assert session_state("p2")["planned_queries"] == [BUBYE]
    assert any("unusable twice" in f for f in session_state("p2")["records"][0]["fallbacks"])


def test_the_prompts_example_copied_is_never_searched(home, musique_source):
    """SmolLM2 on a real server planned the prompt's own example, "first query" and "second query", and the session
    searched them (issue 34); a gap query that is only the prompt's words ("Next query:") is refused the same way."""
    echo = '{"queries": ["first query", "second query"]}'
    script = OllamaScript(plan=[echo, echo], novelty=["8"], gap=["Next query:"], compress=["- f"], stance=["support"])
    with OllamaServer(script) as server:
        verify(
            "The Bubye River is in Zimbabwe.",
            thread_id="echo",
            source=musique_source,
            mode="fixed",
            fixed_rounds=3,
            verify_max_attempts=1,
            **model_kw(server),
        )
    records = session_state("echo")["records"]
    asked = [r["query"] for r in records]
    assert not {"first query", "second query", "Next query:"} & set(asked), asked
    fallbacks = [f for r in records for f in r["fallbacks"]]
    assert any("'first query' only repeats the prompt's words" in f for f in fallbacks), fallbacks
    assert any("'Next query:' only repeats the prompt's words" in f for f in fallbacks), fallbacks


def test_a_gap_query_holding_a_link_is_never_searched(home, musique_source):
    """A model that copies a link from a page into its gap query would let the page choose a site to search for:
    refused, noted (without the link), and the gap terms searched instead."""
    script = OllamaScript(novelty=["8"], gap=["Bubye River https://evil.example/bubye"], compress=["- f"])
    with OllamaServer(script) as server:
        research(BUBYE, thread_id="link", source=musique_source, mode="fixed", fixed_rounds=3, **model_kw(server))
    records = session_state("link")["records"]
    assert len(script.by_role("gap")) >= 1
    assert not any("evil" in r["query"] for r in records), [r["query"] for r in records]
    fallbacks = [f for r in records for f in r["fallbacks"]]
    assert any("'Bubye River [link removed]' holds a link: used gap terms" in f for f in fallbacks), fallbacks
    assert not any("evil" in f for f in fallbacks)


def test_what_a_small_model_invents_never_steers_the_session(home, musique_source):
    """SmolLM2 on a real server, asked about a novel, planned "Jazz" and "Boys World", decomposed the question into a
    slot about "The Sliots", merged "The original sentence is:" into the knowledge and asked it as a gap query (issue
    34): each is checked against the task and the sources (reading.grounding) and dropped, noted."""
    invented = '{"queries": ["Jazz", "Boys World"]}'
    sliots = json.dumps({"chains": [{"question": "q", "slots": [{"subject": "The Sliots", "relation": "splits"}]}]})
    script = OllamaScript(
        plan=[invented, invented],
        decompose=[sliots, sliots],
        novelty=["8"],
        gap=["The original sentence is:"],
        compress=["The original sentence is:\n- The Bubye River is a tributary of the Limpopo River."],
        fill=["{}"],
    )
    with OllamaServer(script) as server:
        research(BUBYE, thread_id="inv", source=musique_source, mode="fixed", fixed_rounds=3, **model_kw(server))
    state = session_state("inv")
    records = state["records"]
    asked = [r["query"] for r in records]
    assert not {"Jazz", "Boys World", "The original sentence is:"} & set(asked), asked
    assert state["planned_queries"] == [BUBYE]  # both plans invented: the task itself
    assert "The Sliots" not in json.dumps(state["chains"])  # the question's syntax was parsed instead
    fallbacks = [f for r in records for f in r["fallbacks"]]
    assert any("'Jazz' shares no word with the task: dropped" in f for f in fallbacks), fallbacks
    assert any("decomposition unusable twice" in f for f in fallbacks), fallbacks
    assert "The original sentence" not in state["knowledge"] and "Limpopo" in state["knowledge"]
    assert any("1 line(s) of the model's merge are not in the knowledge or results: dropped" in f for f in fallbacks)
    assert any("'The original sentence is:' is neither about the task" in f for f in fallbacks), fallbacks


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_at_start_fails_naming_the_host(home, musique_source, capsys):
    host = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(ModelUnavailable, match=f"cannot reach Ollama at {host}"):
        research(BUBYE, source=musique_source, model="ollama:qwen-test", ollama_host=host)
    assert main(["research", BUBYE, "--model", "ollama:qwen-test", "--ollama-host", host]) == 2
    assert f"cannot reach Ollama at {host}" in capsys.readouterr().err


def test_unreachable_at_start_can_continue_heuristically(home, musique_source):
    host = f"http://127.0.0.1:{_free_port()}"
    result = research(
        BUBYE,
        thread_id="h",
        source=musique_source,
        model="ollama:qwen-test",
        ollama_host=host,
        on_model_error="heuristic",
        novelty_method="model",
    )
    assert result.outcome == "answer" and result.debug["model_calls"] == 0
    assert any("unavailable at start" in n and "heuristic" in n for n in result.debug["notes"])
    recs = session_state("h")["records"]
    assert all(r["novelty_method"] == "heuristic" for r in recs)


def test_model_not_pulled(home, musique_source):
    with OllamaServer(OllamaScript(models=["llama3:latest"])) as server:
        with pytest.raises(ModelUnavailable, match="ollama pull qwen-test"):
            research(BUBYE, source=musique_source, **model_kw(server))


def test_http_500_mid_session_is_recorded_and_heuristics_finish(home, musique_source):
    # a three-hop question: its round 1 (the task itself) leaves a slot open, so the fill is asked
    task = (
        "When did the provisional government ruling during the reign of terror the country premiering Prison Break "
        "start?"
    )
    script = OllamaScript(
        plan=['{"queries": ["Prison Break premiere country", "reign of terror government"]}'],
        decompose=[{"status": 500}],
        fill=[{"status": 500}],
        novelty=["9", {"status": 500}],
        gap=[{"status": 500}],
        compress=[{"status": 500}],
        decide=[{"status": 500}],
    )
    with OllamaServer(script) as server:
        result = research(
            task,
            thread_id="e",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=4,
            **model_kw(server),
        )
    recs = session_state("e")["records"]
    assert recs[1]["novelty_method"] == "heuristic" and any("novelty model" in e for e in recs[1]["errors"])
    assert recs[1]["compress"] == "extractive" and any("compress model" in e for e in recs[1]["errors"])
    # the decomposition failed: the parser's chains stand in; the failed fill keeps the heuristic values
    assert any("decompose model" in e for e in recs[0]["errors"]) and session_state("e")["chains"]
    assert any("fill model" in e for e in recs[0]["errors"])
    assert any("the slots keep the heuristic values" in f for f in recs[0]["fallbacks"])
    assert recs[3]["planner"].startswith("slot ") or recs[3]["planner"] == "gap-terms"
    assert result.outcome == "answer" and result.debug["answer"] == "extractive"
    assert any("decide model" in n for n in result.debug["notes"])


def test_slow_reply_beyond_timeout(home, musique_source):
    script = OllamaScript(plan=[PLAN], novelty=[{"sleep": 2.0, "text": "9"}], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research(
            BUBYE,
            thread_id="t",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            model_timeout_s=0.5,
            **model_kw(server),
        )
    rec = session_state("t")["records"][0]
    assert rec["novelty_method"] == "heuristic"
    assert any("Timeout" in e for e in rec["errors"]), rec["errors"]
    assert result.outcome == "answer"


def test_a_model_that_times_out_twice_in_a_row_is_not_asked_again(home, musique_source):
    """On a one-slot CPU server a call that timed out keeps the slot busy, so the next one times out too and a
    session waited out every call (issue 34): after two timeouts in a row the session goes on without the model."""
    slow = {"sleep": 1.5, "text": "9"}
    script = OllamaScript(plan=[slow], decompose=[slow], fill=[slow], novelty=[slow], compress=[slow], decide=[slow])
    with OllamaServer(script) as server:
        result = research(
            BUBYE,
            thread_id="busy",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=3,
            model_timeout_s=0.4,
            **model_kw(server),
        )
    assert len(script.requests) == 2, [role_of(r) for r in script.requests]
    records = session_state("busy")["records"]
    errors = [e for r in records for e in r["errors"]] + result.debug["notes"]
    # the whole-call deadline or httpx's read timeout, whichever fired first (both 0.4 s)
    assert sum("no complete reply within 0.4 s" in e or "ReadTimeout" in e for e in errors) == 2, errors
    assert any("not asked: the model timed out 2 times in a row" in e for e in errors), errors
    assert result.outcome == "answer" and result.answer and result.debug["answer"] != "model"


def test_cli_model_flag_and_resume_rebuilds_the_model(home, musique_source, musique_corpus, capsys):
    script = OllamaScript(
        plan=[PLAN], novelty=["8", "8", "1"], gap=["Victoria Falls"], compress=["- f"], decide=["Victoria Falls [1]."]
    )
    with OllamaServer(script) as server:
        code = main(
            [
                "research",
                BUBYE,
                "--corpus",
                str(musique_corpus),
                "--model",
                "ollama:qwen-test",
                "--ollama-host",
                server.url,
                "--thread",
                "c",
                "--json",
                "--novelty-epsilon",
                "0",
                "--model-plans",
                "true",
            ]
        )
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["debug"]["model_calls"] >= 4 and out["debug"]["answer"] == "model"
        assert resume("c").answer == out["answer"]


def test_bench_model_reports_no_processing_of_rejected_rounds(home, capsys):
    assert main(["bench", "model", "--tasks", "3", "--latency-ms", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for method in ("heuristic", "model"):
        assert out[method]["rounds"] >= 2 * 3 and out[method]["calls_per_rejected_round_process"] == 0
        assert out[method]["calls_per_accepted_round_judge"] >= 1  # the plan or gap query at least
    assert out["model"]["calls_per_accepted_round_judge"] > out["heuristic"]["calls_per_accepted_round_judge"]
    assert out["rejected_rounds_processed"] == 0


def test_bench_real_model_compares_no_model_and_the_model_side_by_side(home, capsys):
    """`saturate bench real-model --with-steering` on one musique and one webq question and three false claims
    against a scripted server: three arms each (no model; the model as set, which writes but neither steers nor judges;
    the model steering and judging too), the structured replies counted (the scripted plan follows its schema; the
    fill reply does not)."""
    # what the benchmark reads from SATURATE_EVAL_DATA (webq runs on the embedded corpus): skipped without the data
    eval_file("musique", "tasks.jsonl"), eval_file("musique", "corpus.jsonl"), eval_file("webq", "tasks.jsonl")
    eval_file("factcheck", "claims.jsonl")
    script = OllamaScript(
        plan=[PLAN], decompose=[DECOMPOSE], fill=["not json"], compress=["- x"], decide=["x"], gap=["x"],
        stance=["not json"],
    )  # fmt: skip
    with OllamaServer(script) as server:
        argv = ["bench", "real-model", "--musique", "1", "--hotpotqa", "0", "--webq", "1", "--json", "--with-steering"]
        argv += ["--false-claims", "3"]  # the first two are off topic of all their hits: no stance is asked
        assert main([*argv, "--model", "ollama:qwen-test", "--ollama-host", server.url, "--max-rounds", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    runs = out["runs"]
    arms = ["no model", "ollama:qwen-test", "ollama:qwen-test steers"]
    assert [(r["set"], r["arm"]) for r in runs] == [(s, a) for s in ("musique", "webq") for a in arms] + [
        ("claims", a) for _ in range(3) for a in arms
    ]
    claims = [r for r in runs if r["set"] == "claims"]  # a claim labelled False, verified on its recorded hits
    assert len({r["task_id"] for r in claims}) == 3 and all(
        r["verdict"] in ("True", "False", "Invalid") for r in claims
    )
    for arm in arms:
        rows, by_set = [r for r in claims if r["arm"] == arm], out["arms"][arm]
        assert by_set["claims"]["false_as_true"] == sum(r["verdict"] == "True" for r in rows)
        assert by_set["claims"]["answer"] == round(sum(r["verdict"] == "False" for r in rows) / 3, 3)
        assert by_set["all"]["sessions"] == 2  # the questions only
    # the model as set leaves the stances to the heuristic (model_stances off): the verdicts without a model's
    verdicts = {a: [r["verdict"] for r in claims if r["arm"] == a] for a in arms}
    assert verdicts[arms[1]] == verdicts["no model"]
    assert not any(r["structured"] for r in claims if r["arm"] == arms[1])
    assert sum(r["structured"] for r in claims if r["arm"] == arms[2]) > 0  # steering, it was asked for stances
    bare, model, plans = (out["arms"][a]["all"] for a in arms)
    assert bare["calls"] == 0 and bare["structured"] == 0 and bare["schema_valid"] is None
    # the model as set writes (compress, the answer): none of its replies is a structured one
    assert model["calls"] > 0 and model["structured"] == 0 and model["schema_valid"] is None
    assert plans["calls"] > model["calls"] and 0 < plans["schema_valid"] < 1  # the plans validate, "not json" not
    for arm in (model, plans):
        assert arm["fell_back"] == 1.0  # "x" cites nothing and is in no source: the answer fell back, each session
        assert arm["model_answer"] == 0.0 and arm["gave_way"] == 0.0
    assert all("gave_way" in r for r in runs)


def test_bench_real_model_of_claims_alone_has_no_row_of_questions(home, capsys):
    eval_file("factcheck", "claims.jsonl")
    with OllamaServer(OllamaScript(stance=["not json"])) as server:
        argv = ["bench", "real-model", "--model", "ollama:qwen-test", "--ollama-host", server.url, "--json"]
        assert main([*argv, "--musique", "0", "--hotpotqa", "0", "--webq", "0", "--false-claims", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {a: sorted(rows) for a, rows in out["arms"].items()} == {
        "no model": ["claims"],
        "ollama:qwen-test": ["claims"],
    }


def test_bench_real_model_needs_a_model(home, capsys):
    assert main(["bench", "real-model", "--musique", "1"]) == 2
    assert "needs --model" in capsys.readouterr().err


def test_bench_real_model_bad_claim_counts_and_a_missing_claims_file_are_one_line(home, tmp_path, capsys):
    """Bad input before any session: a negative count, and claims asked of a data folder without them."""
    argv = ["bench", "real-model", "--model", "ollama:qwen-test", "--ollama-host", "http://127.0.0.1:9"]
    with pytest.raises(SystemExit) as exited:  # a usage error, as the flag is parsed
        main([*argv, "--false-claims", "-1"])
    assert exited.value.code == 2
    assert "argument --false-claims: must be 0 or more, not -1" in capsys.readouterr().err
    with OllamaServer(OllamaScript()) as server:
        argv[-1] = server.url
        assert main([*argv, "--data", str(tmp_path), "--musique", "0", "--hotpotqa", "0", "--webq", "0"]) == 2
        err = capsys.readouterr().err
        assert "factcheck/claims.jsonl" in err and "--false-claims 0" in err and "Traceback" not in err
        assert not server.script.by_role("stance")


def test_a_timeout_counts_whichever_clock_fired_first():
    """The whole-call deadline and the client's read timeout are the same number: either may fire first, and both
    count toward the timeouts in a row (the test above failed once under load when httpx's fired first)."""
    import httpx
    import openai

    from saturate.nodes._model import ModelTimeout, timed_out

    request = httpx.Request("POST", "http://127.0.0.1:9/api/chat")
    assert timed_out(ModelTimeout("no complete reply within 0.4 s"))
    assert timed_out(httpx.ReadTimeout("timed out", request=request))
    assert timed_out(openai.APITimeoutError(request=request))  # pyright: ignore[reportArgumentType]
    try:
        try:
            raise httpx.ReadTimeout("timed out", request=request)
        except httpx.ReadTimeout as inner:
            raise RuntimeError("the client wrapped it") from inner
    except RuntimeError as wrapped:
        assert timed_out(wrapped)
    assert not timed_out(ValueError("a schema refusal")) and not timed_out(ConnectionError("refused"))
