"""Hostile model replies (issue 14): huge replies, replies dripped byte by byte, decimal scores.

The wall-clock bounds here are generous upper bounds that prove a call or a parse was cut short: the inputs
would otherwise take minutes (a quadratic regex on 300 KB, a reply dripped over a minute or more).
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.graph import research, session_state
from saturate.graph.models import ReplyTooLong, make_chat_model, reply_bounds
from saturate.nodes._model import (
    MAX_JSON_ATTEMPTS,
    MAX_REPLY_CHARS,
    ModelTimeout,
    ModelUsage,
    call_model,
    first_int,
    first_number,
    parse_json_object,
)
from saturate.nodes._plan import PLAN
from saturate.nodes.assess_novelty import NOVELTY
from saturate.state.settings import Settings

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def chat_model(server, **kw):
    return make_chat_model(Settings(model="ollama:qwen-test", ollama_host=server.url, **kw))


def novelty_call(model):
    system, user = NOVELTY.render(task="t", known="k", results="r")
    return call_model(model, system, user, **NOVELTY.options)


# --- 1. size: a reply is cut before parsing, and JSON extraction is linear ---------------------------------


def test_300kb_of_braces_parses_to_none_quickly():
    t0 = time.perf_counter()
    assert parse_json_object("{" * 300_000) is None
    assert parse_json_object('{"a": ' + "[" * 300_000) is None  # deeper than json decodes: no RecursionError
    assert parse_json_object('{"a": "' + "x" * 300_000) is None  # an unterminated string, at each attempt
    assert time.perf_counter() - t0 < 2.0  # the former `\{.*\}` regex took minutes on the first


@pytest.mark.parametrize(
    "text,value",
    [
        ('{"queries": ["a", "b"]}', {"queries": ["a", "b"]}),
        ('Sure:\n```json\n{"action": "stop"}\n```\nDone.', {"action": "stop"}),
        ('Here it is: {"a": 1} and then {"b": 2}', {"a": 1}),
        ("{'queries': ['only one query',]}", {"queries": ["only one query"]}),  # the light repair
        ("{'a': {'b': 1}, 'c': 2,}", {"a": {"b": 1}, "c": 2}),  # the whole repaired object, not its inner one
        ('{"a": {"b": 1}, \'c\': 2}', {"a": {"b": 1}, "c": 2}),
        ('I use {braces} in prose; {"a": 1}', {"a": 1}),
        ('<think>{"draft": true}</think>{"final": 1}', {"final": 1}),
        ('["a list", "not an object"]', None),
        ("no json here", None),
        ("{" * MAX_JSON_ATTEMPTS + ' {"a": 1}', None),  # at most MAX_JSON_ATTEMPTS '{' are tried
        ("{" * (MAX_JSON_ATTEMPTS - 1) + ' {"a": 1}', {"a": 1}),
    ],
)
def test_parse_json_object(text, value):
    assert parse_json_object(text) == value


def test_a_huge_reply_is_cut_before_parsing_and_noted(home):
    script = OllamaScript(plan=["{" * 300_000])
    with OllamaServer(script) as server:
        model, usage = chat_model(server), ModelUsage("plan")
        reply = usage.call(model, PLAN, task=BUBYE)
    assert reply.text == "{" * MAX_REPLY_CHARS
    assert reply.notes == [
        f"model reply of 300,000 characters cut to {MAX_REPLY_CHARS:,} before parsing",
        "reply does not follow the plan JSON schema: read by the text parser",
    ]
    assert usage.notes == [f"plan: {note}" for note in reply.notes]
    assert parse_json_object(reply.text) is None


def test_a_huge_plan_reply_falls_back_in_the_session(home, musique_source):
    script = OllamaScript(plan=["{" * 300_000], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research(
            BUBYE,
            thread_id="big",
            source=musique_source,
            mode="fixed",
            fixed_rounds=1,
            model="ollama:qwen-test",
            ollama_host=server.url,
            model_plans=True,
        )
    state = session_state("big")
    assert result.outcome == "answer" and state["planned_queries"] == [BUBYE]
    assert any("unusable twice" in f for f in state["records"][0]["fallbacks"])


def test_a_server_ignoring_num_predict_is_not_read_past_the_cap(home):
    with OllamaServer(OllamaScript(novelty=["9 " * 1_500_000])) as server:  # 3 MB of reply
        with pytest.raises(ReplyTooLong, match="bytes"):
            novelty_call(chat_model(server))


# --- 2. time: model_timeout_s bounds the whole call, not each read ------------------------------------------


class SlowModel:
    """A chat model that answers after ``release`` is set, with ChatOllama's timeout setting."""

    def __init__(self, timeout: float):
        self.client_kwargs = {"timeout": timeout}
        self.release = threading.Event()

    def invoke(self, messages):
        self.release.wait(60)
        return "9"


def test_the_whole_call_is_bounded():
    model = SlowModel(timeout=0.2)
    t0 = time.perf_counter()
    try:
        with pytest.raises(ModelTimeout, match="0.2 s"):
            call_model(model, "s", "u")
        assert time.perf_counter() - t0 < 2.0  # the model would answer after 60 s
    finally:
        model.release.set()


def test_a_model_without_a_timeout_is_called_as_is():
    model = SlowModel(timeout=0)
    model.release.set()
    assert call_model(model, "s", "u").text == "9"


def test_a_dripped_reply_fails_the_call_within_the_timeout(home):
    script = OllamaScript(novelty=[{"drip": 0.5, "text": "9"}])  # ~180 bytes of NDJSON: ~90 s, each read 0.5 s
    with OllamaServer(script) as server:
        t0 = time.perf_counter()
        with pytest.raises((ModelTimeout, httpx.ReadTimeout)):
            novelty_call(chat_model(server, model_timeout_s=1))
        assert time.perf_counter() - t0 < 2.0
        # the abandoned request is not read forever either: the client hangs up within about 2 x the timeout
        deadline = time.monotonic() + 10
        while not script.drips[0]["stopped"] and time.monotonic() < deadline:
            time.sleep(0.05)
    assert script.drips[0]["stopped"] == "client gone", script.drips
    assert script.drips[0]["sent"] < script.drips[0]["of"]


def test_reply_bounds_end_a_dripped_body():
    script = OllamaScript(other=[{"drip": 0.1, "text": "x" * 200}])  # ~40 s of body, each read 0.1 s
    with OllamaServer(script) as server:
        with httpx.Client(timeout=5, event_hooks=reply_bounds(0.5)) as client:
            t0 = time.perf_counter()
            with pytest.raises(httpx.ReadTimeout, match="model_timeout_s"):
                client.post(f"{server.url}/api/chat", json={"model": "m", "messages": []})
            assert time.perf_counter() - t0 < 5.0
        with httpx.Client(timeout=5, event_hooks=reply_bounds(5, max_bytes=100)) as client:
            script.replies["other"] = ["y" * 200]
            with pytest.raises(ReplyTooLong):
                client.post(f"{server.url}/api/chat", json={"model": "m", "messages": []})


def test_a_dripped_novelty_reply_is_recorded_and_the_session_completes(home, musique_source):
    plan = '{"queries": ["Bubye River country", "waterfalls of Zimbabwe"]}'
    script = OllamaScript(plan=[plan], novelty=[{"drip": 0.5, "text": "9"}], decide=["x [1]"])
    with OllamaServer(script) as server:
        result = research(
            BUBYE,
            thread_id="drip",
            source=musique_source,
            novelty_method="model",
            mode="fixed",
            fixed_rounds=1,
            model="ollama:qwen-test",
            ollama_host=server.url,
            model_timeout_s=1,
        )
    rec = session_state("drip")["records"][0]
    assert result.outcome == "answer" and rec["novelty_method"] == "heuristic"
    assert any("novelty model" in e and "Timeout" in e for e in rec["errors"]), rec["errors"]
    assert "model error: heuristic novelty used" in rec["fallbacks"]
    assert rec["durations_ms"]["novelty"] < 3000  # the dripped reply would take ~90 s


# --- 3. numbers: "7.5" is 7.5 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value",
    [
        ("7.5", 7.5),
        ("7.5/10", 7.5),
        ("Score: 4 of 10", 4.0),
        ("8.", 8.0),
        (".5", 0.5),
        ("-3", -3.0),
        ("-2.5 overall", -2.5),
        ("none", None),
        ("", None),
    ],
)
def test_first_number(text, value):
    assert first_number(text) == value
    assert first_int(text) == value  # the former name reads the same (nodes/assess_novelty.py uses it)
