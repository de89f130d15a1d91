"""OpenAI-compatible servers (LM Studio, llama-server, vLLM) through the real ChatOpenAI and OpenAIEmbeddings
clients, structured replies on both protocols, and prompts fitted to the model's context.

The server is the scripted one of saturate/bench/ollama_script.py on 127.0.0.1, speaking /v1/models,
/v1/chat/completions and /v1/embeddings (and Ollama's /api/chat for the `format` tests).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from saturate.bench.ollama_script import OllamaScript, OllamaServer, role_of
from saturate.cli import main
from saturate.graph import research, session_state
from saturate.graph.models import ModelUnavailable, make_chat_model, resolve_chat_model
from saturate.nodes._answer import DECIDE
from saturate.nodes._model import estimate_tokens, fit_prompt
from saturate.nodes._plan import PLAN as PLAN_PROMPT
from saturate.state.settings import load_settings

from conftest import BUBYE, DECOMPOSE, FILL, FILL_ROUND_ONE, PLAN

# the wire and the replies' plumbing: the scripted answer is used as the plumbing leaves it, not judged by the reader
pytestmark = pytest.mark.usefixtures("unjudged")

KEY = "sk-local-test-0123456789abcdef"


@pytest.fixture
def key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("SATURATE_OPENAI_API_KEY", KEY)
    return KEY


def openai_kw(server, **kw):
    # the model steers the search here (model_plans): the planning prompts are what these tests script
    return {"model": "openai:qwen-test", "openai_base_url": f"{server.url}/v1", "seed": 0, "model_plans": True, **kw}


def script(**replies) -> OllamaScript:
    return OllamaScript(models=["qwen-test", "embed-test"], api_key=KEY, **replies)


def test_a_session_through_chat_openai_asks_for_the_schema_and_keeps_the_key_out(home, key, musique_source):
    s = script(
        plan=[PLAN],
        decompose=[DECOMPOSE],
        fill=[FILL_ROUND_ONE, FILL],
        novelty=["9", "<think>mostly known</think> 8"],
        compress=["- Bubye River is in Zimbabwe."],
        decide=["The waterfall is Victoria Falls [2], in Zimbabwe [1]."],
    )
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="o",
            source=musique_source,
            novelty_method="model",
            novelty_epsilon=0.0,
            novelty_threshold=3,
            min_rounds=2,
            **openai_kw(server),
        )
    assert result.short_answer == "Victoria Falls" and result.debug["answer"] == "model"
    recs = session_state("o")["records"]
    assert [r["novelty"] for r in recs] == [9.0, 8.0]  # the task itself (round 1) finds both slots: done in 2
    # the wire: the served name, each prompt's temperature and reply allowance as these servers spell it
    plan = s.by_role("plan")[0]
    assert plan["model"] == "qwen-test" and plan["temperature"] == PLAN_PROMPT.options["temperature"]
    assert plan["max_tokens"] == 120 and "max_completion_tokens" not in plan
    # structured replies: the JSON prompts carry their pydantic model's schema, the free-text ones none
    schema = plan["response_format"]["json_schema"]["schema"]
    assert plan["response_format"]["type"] == "json_schema" and schema["properties"]["queries"]["type"] == "array"
    assert "chains" in s.by_role("decompose")[0]["response_format"]["json_schema"]["schema"]["properties"]
    fill = s.by_role("fill")[0]["response_format"]["json_schema"]["schema"]
    # the fill's schema names exactly the question's slots: a constrained server cannot write another key
    assert fill["type"] == "object" and set(fill["properties"]) == set(fill["required"]) == {"1.1", "1.2"}
    assert fill["additionalProperties"] is False
    assert all("response_format" not in r for r in s.by_role("novelty") + s.by_role("decide"))
    # replies that follow the schema need no fallback note
    assert not any("JSON schema" in f for r in recs for f in r["fallbacks"])
    # the key went to the server and nowhere else: not in the settings, the checkpoints or the result
    assert "api_key" not in session_state("o")["settings"]
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert KEY.encode() not in stored and KEY not in json.dumps(result.debug, default=str)


def test_the_cli_runs_an_openai_model(home, key, musique_source, musique_corpus, capsys):
    s = script(plan=[PLAN], novelty=["8"], decide=["Victoria Falls [1]."])
    with OllamaServer(s) as server:
        argv = ["research", BUBYE, "--corpus", str(musique_corpus), "--model", "openai:qwen-test"]
        code = main([*argv, "--openai-base-url", f"{server.url}/v1", "--mode", "fixed", "--fixed-rounds", "1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Victoria Falls" in out.out and KEY not in out.out + out.err


def test_a_server_that_ignores_the_schema_is_read_by_the_text_parser_and_noted(home, key, musique_source):
    prose = 'Sure! Here is the plan: {"queries": ["Bubye River country", "waterfalls of Zimbabwe"]} Good luck.'
    s = script(plan=[prose], novelty=["8"], decide=["x [1]"])
    with OllamaServer(s) as server:
        research(BUBYE, thread_id="i", source=musique_source, mode="fixed", fixed_rounds=1, **openai_kw(server))
    state = session_state("i")
    assert state["planned_queries"] == [BUBYE, "Bubye River country", "waterfalls of Zimbabwe"]
    assert (
        "plan: reply does not follow the plan JSON schema: read by the text parser" in state["records"][0]["fallbacks"]
    )


def test_a_server_that_refuses_the_schema_is_asked_without_it(home, key, musique_source):
    s = OllamaScript(models=["qwen-test"], api_key=KEY, refuse_schema=True, plan=[PLAN], novelty=["8"], decide=["x"])
    with OllamaServer(s) as server:
        research(BUBYE, thread_id="r", source=musique_source, mode="fixed", fixed_rounds=1, **openai_kw(server))
    plans = s.by_role("plan")  # the OpenAI form, llama-cpp-python's json_object form, then none
    assert [(p.get("response_format") or {}).get("type") for p in plans] == ["json_schema", "json_object", None]
    state = session_state("r")
    assert state["planned_queries"] == [BUBYE, "Bubye River country", "waterfalls of Zimbabwe"]
    assert any(f.startswith("plan: the server refused the JSON schema") for f in state["records"][0]["fallbacks"])


def test_llama_cpp_pythons_server_gets_the_schema_in_its_own_form(home, key, musique_source):
    """llama-cpp-python's server answers the OpenAI ``json_schema`` form with HTTP 500 (issue 34: every structured
    call fell back to the heuristics, the recorded error kept only its first line); it takes the schema as
    ``{"type": "json_object", "schema": ...}``. Refused once, the session asks in that form from then on."""
    s = OllamaScript(models=["qwen-test"], api_key=KEY, refuse_schema=500, plan=[PLAN], novelty=["8"], decide=["x"])
    with OllamaServer(s) as server:
        research(BUBYE, thread_id="r5", source=musique_source, mode="fixed", fixed_rounds=1, **openai_kw(server))
    forms = [(p.get("response_format") or {}).get("type") for p in s.by_role("plan")]
    assert forms == ["json_schema", "json_schema", "json_object"]  # the openai client retries a 5xx once itself
    state = session_state("r5")
    assert state["planned_queries"] == [BUBYE, "Bubye River country", "waterfalls of Zimbabwe"]  # the model's, used
    asked = [f for f in state["records"][0]["fallbacks"] if f.startswith("plan: the server refused the JSON schema")]
    assert asked and "no grammar for the JSON schema" in asked[0] and "json_object form" in asked[0]
    later = [r for r in s.requests if r.get("response_format") and r not in s.by_role("plan")]
    assert later and all(r["response_format"]["type"] == "json_object" for r in later)  # no failing request again


def test_a_wrong_key_is_one_line_with_the_key_masked(home, monkeypatch, musique_source, capsys):
    wrong = "sk-wrong-key-aaaaaaaaaaaa9876"
    monkeypatch.delenv("SATURATE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", wrong)
    with OllamaServer(script()) as server:
        with pytest.raises(ModelUnavailable) as err:
            research(BUBYE, source=musique_source, **openai_kw(server))
        code = main(["research", BUBYE, "--model", "openai:qwen-test", "--openai-base-url", f"{server.url}/v1"])
    message = str(err.value)
    assert "refused the API key ****9876 (HTTP 401)" in message and wrong not in message
    out = capsys.readouterr()
    assert code == 2 and wrong not in out.err and "****9876" in out.err and len(out.err.strip().splitlines()) == 1


def test_a_key_echoed_by_a_failing_call_is_masked_in_the_record(home, key, musique_source):
    s = script(plan=[PLAN], novelty=[{"status": 401, "error": f"Incorrect API key provided: {KEY}"}], decide=["x"])
    with OllamaServer(s) as server:
        research(
            BUBYE,
            thread_id="k",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            **openai_kw(server),
        )
    errors = session_state("k")["records"][0]["errors"]
    assert any("AuthenticationError" in e and "****cdef" in e for e in errors) and not any(KEY in e for e in errors)


def test_missing_base_url_and_unreachable_server(home, key, musique_source, capsys):
    with pytest.raises(ModelUnavailable, match="needs the server's address: set --openai-base-url"):
        research(BUBYE, source=musique_source, model="openai:qwen-test")
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as probe:
        port = probe.server_address[1]
    with pytest.raises(ModelUnavailable, match=f"cannot reach the OpenAI-compatible server at http://127.0.0.1:{port}"):
        research(BUBYE, source=musique_source, model="openai:qwen-test", openai_base_url=f"http://127.0.0.1:{port}/v1")
    with OllamaServer(script()) as server:
        with pytest.raises(ModelUnavailable, match=r"has no model 'llama' \(it has: embed-test, qwen-test\)"):
            research(BUBYE, source=musique_source, **openai_kw(server, model="openai:llama"))


class _HtmlEverywhere(BaseHTTPRequestHandler):
    """A web page where the API should be: a base URL without /v1 on a server with a UI, or a login proxy."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        data = b"<!DOCTYPE html><html><body>Sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_html_instead_of_json(home, key, musique_source):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlEverywhere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        with pytest.raises(ModelUnavailable, match="answered /models with HTML, not JSON: .*ending in /v1"):
            research(BUBYE, source=musique_source, model="openai:qwen-test", openai_base_url=base)
    finally:
        httpd.shutdown()
        httpd.server_close()
    # mid-session: a chat reply that is a web page is a recorded failure, and the heuristics finish
    s = script(plan=[PLAN], novelty=[{"html": True}], decide=["x"])
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="h",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            **openai_kw(server),
        )
    rec = session_state("h")["records"][0]
    assert rec["novelty_method"] == "heuristic" and any("novelty model" in e for e in rec["errors"])
    assert result.outcome == "answer"


def test_a_rate_limit_is_retried_after_its_delay_then_recorded(home, key, musique_source):
    limited = {"status": 429, "retry_after": 1, "error": "Rate limit reached"}
    s = script(plan=[PLAN], novelty=[limited, "8", limited, limited], decide=["x"])
    with OllamaServer(s) as server:
        started = time.monotonic()
        research(
            BUBYE,
            thread_id="l",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=2,
            **openai_kw(server),
        )
        took = time.monotonic() - started
    recs = session_state("l")["records"]
    # round 1: limited once, answered after Retry-After; round 2: limited twice (one retry), so heuristics
    assert recs[0]["novelty_method"] == "model" and recs[0]["novelty"] == 8.0
    assert recs[1]["novelty_method"] == "heuristic" and any("RateLimitError" in e for e in recs[1]["errors"])
    assert len(s.by_role("novelty")) == 4 and took >= 2.0  # two waits of its Retry-After: 1 s


def test_a_hanging_endpoint_is_cut_at_the_timeout(home, key, musique_source):
    s = script(plan=[PLAN], novelty=[{"sleep": 5.0, "text": "9"}], decide=["x"])
    with OllamaServer(s) as server:
        started = time.monotonic()
        result = research(
            BUBYE,
            thread_id="t",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            model_timeout_s=0.5,
            **openai_kw(server),
        )
        took = time.monotonic() - started
    rec = session_state("t")["records"][0]
    assert rec["novelty_method"] == "heuristic" and any("Timeout" in e for e in rec["errors"]), rec["errors"]
    assert result.outcome == "answer" and took < 4.5


def test_openai_embeddings(home, key, musique_source):
    s = script(plan=[PLAN], decide=["x [1]"])
    with OllamaServer(s) as server:
        research(
            BUBYE,
            thread_id="e",
            source=musique_source,
            novelty_method="embedding",
            embed_model="openai:embed-test",
            mode="fixed",
            fixed_rounds=2,
            **openai_kw(server),
        )
    recs = session_state("e")["records"]
    assert s.embed_requests and all(r["model"] == "embed-test" for r in s.embed_requests)
    assert all(r["novelty_method"] == "embedding" for r in recs)
    with OllamaServer(script()) as server:
        with pytest.raises(Exception, match="has no model 'nomic'"):
            research(
                BUBYE,
                source=musique_source,
                novelty_method="embedding",
                embed_model="openai:nomic",
                **openai_kw(server),
            )


# --- the context -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "props", "context"),
    [
        ({"max_model_len": 4096}, None, 4096),  # vLLM
        ({"max_context_length": 32768}, None, 32768),  # LM Studio
        ({}, {"default_generation_settings": {"n_ctx": 2048}}, 2048),  # llama.cpp's /props
        ({}, None, 8192),  # nothing reported: num_ctx
    ],
)
def test_the_servers_reported_context(home, key, info, props, context):
    with OllamaServer(OllamaScript(models=["qwen-test"], api_key=KEY, model_info=info, props=props)) as server:
        model, _ = resolve_chat_model(load_settings(openai_kw(server)))
    assert model.metadata["context_tokens"] == context


def test_a_prompt_over_the_context_is_trimmed_with_a_note():
    sources = "\n".join(
        f"[{i}] Title {i}: " + "a passage about the Bubye River in Zimbabwe. " * 8 for i in range(1, 80)
    )
    fields = {"task": BUBYE, "sources": sources}
    same, note = fit_prompt(DECIDE, fields, 100_000)
    assert same is fields and note == ""
    fitted, note = fit_prompt(DECIDE, fields, 2048)
    system, user = DECIDE.render(**fitted)
    assert estimate_tokens(system + user) <= 2048 - DECIDE.options["num_predict"] - 64
    # cut from the end at a line break: whole passages kept, the first ones first
    assert sources.startswith(fitted["sources"]) and fitted["sources"].endswith("Zimbabwe. ")
    assert note.startswith("prompt of ~") and "over the 2,048-token context less 664 for the reply: cut sources" in note


def test_a_session_fits_its_prompts_to_a_small_served_context(home, key, musique_source):
    s = OllamaScript(models=["qwen-test"], api_key=KEY, model_info={"max_model_len": 1024}, plan=[PLAN], decide=["x"])
    with OllamaServer(s) as server:
        result = research(
            BUBYE, thread_id="c", source=musique_source, mode="fixed", fixed_rounds=2, **openai_kw(server)
        )
    decide = s.by_role("decide")[0]
    text = "".join(m["content"] for m in decide["messages"])
    assert estimate_tokens(text) <= 1024 - DECIDE.options["num_predict"] - 64
    assert any("decide: prompt of ~" in n and "1,024-token context" in n for n in result.debug["notes"])


def test_a_context_the_server_does_not_report_is_learned_from_its_refusal(home, key, musique_source):
    """llama-cpp-python reports no context (its default is 2,048 tokens) and refuses a longer prompt with HTTP 400
    naming it: the call is fitted to the context the refusal states and asked once more, and the session's later
    prompts are fitted to it from the start (issue 34, item 7)."""
    s = OllamaScript(models=["qwen-test"], api_key=KEY, n_ctx=1024, plan=[PLAN], compress=["- x"], decide=["x"])
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="ctx",
            source=musique_source,
            mode="fixed",
            fixed_rounds=3,
            brief=False,
            **openai_kw(server),
        )

    def size(request: dict) -> int:
        return sum(len(m["content"].encode()) for m in request["messages"]) // 3 + request["max_tokens"]

    over = [i for i, r in enumerate(s.requests) if size(r) > 1024]
    assert len(over) == 1, over  # refused once; that call asked again, fitted, and every later one fitted at once
    learned = role_of(s.requests[over[0]])
    assert role_of(s.requests[over[0] + 1]) == learned and size(s.requests[over[0] + 1]) <= 1024
    text = "".join(m["content"] for m in s.by_role("decide")[-1]["messages"])
    assert estimate_tokens(text) <= 1024 - DECIDE.options["num_predict"] - 64
    state = session_state("ctx")
    said = f"{learned}: the server's context is 1,024 tokens (it refused a longer prompt): prompts fitted to it"
    notes = [n for r in state["records"] for n in r["fallbacks"]] + result.debug["notes"]
    assert any(said in n for n in notes), notes
    assert not [e for r in state["records"] for e in r["errors"]] and not any(" model:" in n for n in notes)


# --- Ollama: format with the schema, thinking kept out ---------------------------------------------------------


def test_ollama_is_asked_for_the_schema_and_its_thinking_never_reaches_a_parser(home, musique_source):
    s = OllamaScript(
        plan=[{"thinking": '{"queries": ["Atlantis"]}', "text": PLAN}],
        novelty=["8"],
        decide=[{"thinking": "It is Atlantis [1].", "text": "Victoria Falls [1]."}],
    )
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="f",
            source=musique_source,
            mode="fixed",
            fixed_rounds=1,
            model="ollama:qwen-test",
            ollama_host=server.url,
            model_plans=True,
        )
    plan = s.by_role("plan")[0]
    assert plan["format"]["properties"]["queries"]["type"] == "array" and "format" not in s.by_role("decide")[0]
    assert session_state("f")["planned_queries"] == [BUBYE, "Bubye River country", "waterfalls of Zimbabwe"]
    assert "Atlantis" not in result.answer and "Victoria Falls" in result.answer


def test_make_chat_model_speaks_the_protocol_named(home, key):
    settings = load_settings({"model": "openai:m", "openai_base_url": "http://127.0.0.1:9/v1", "model_timeout_s": 7})
    model = make_chat_model(settings)
    assert type(model).__name__ == "ChatOpenAI" and model.request_timeout == 7 and model.model_name == "m"
    assert KEY not in repr(model) and KEY not in json.dumps(model.model_dump(), default=str)


def test_a_busy_one_slot_server_is_waited_for_at_start_then_named_busy(home, key, musique_source):
    """A one-slot server (llama-cpp-python) answers /models only once it has finished another client's reply: the
    start waits up to model_timeout_s for it (the bench's second session was refused as unreachable, issue 34), and
    past that says the server is busy, not unreachable."""
    s = OllamaScript(models=["qwen-test"], api_key=KEY, models_delay_s=6.0, plan=[PLAN], decide=["x"])
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="busy",
            source=musique_source,
            mode="fixed",
            fixed_rounds=1,
            **openai_kw(server, model_timeout_s=8),
        )
        assert result.outcome == "answer" and s.by_role("plan")  # waited past the 5 s probe, then asked the model
        with pytest.raises(ModelUnavailable, match="accepted the connection but did not answer /models within 5 s"):
            resolve_chat_model(load_settings(openai_kw(server, model_timeout_s=2)))


def test_a_reply_that_echoes_the_key_stores_none_of_it(home, key, musique_source):
    """A model that writes its API key (whole or a piece of it) into its answer, its knowledge lines and its
    queries: nothing of the key reaches the answer, the knowledge, the checkpoints or any file (issue 36)."""
    piece = KEY[3:17]
    s = script(
        plan=[json.dumps({"queries": [f"Bubye River {piece}", "waterfalls of Zimbabwe"]})],
        decompose=[DECOMPOSE],
        fill=[FILL_ROUND_ONE, FILL],
        novelty=["9", "8", "2"],
        compress=[f"- Bubye River is in Zimbabwe. The key is {KEY}."],
        decide=[f"The waterfall is Victoria Falls [2], in Zimbabwe [1]. My key: {KEY} and {piece}."],
    )
    with OllamaServer(s) as server:
        result = research(
            BUBYE,
            thread_id="echo",
            source=musique_source,
            novelty_method="model",
            novelty_threshold=3,
            novelty_epsilon=0.0,
            min_rounds=2,
            **openai_kw(server),
        )
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    shown = result.answer + json.dumps(result.debug, default=str) + json.dumps(session_state("echo"), default=str)
    for secret in (KEY, piece, KEY[-12:]):
        assert secret.encode() not in stored and secret not in shown, secret
