"""The server path: `langgraph dev` serving langgraph.json, driven over HTTP by the real `langgraph_sdk` client.

The server (langgraph-cli's ``dev``: the in-memory langgraph-api server) starts once for the module on a
free loopback port, in a temporary directory (it keeps its in-memory store in ``./.langgraph_api``), with
the checkout's langgraph.json (its relative paths made absolute; nothing else changed), ``SATURATE_HOME``
in the temporary directory, and no way out: no browser, no reload, no CLI analytics, no version check,
no LangSmith tracing, no license key, and any proxy-respecting HTTP client pointed at a closed loopback
port. Every run searches the embedded offline corpus (no network, no model).

Skipped only where langgraph-cli[inmem] is not installed (it is in the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import httpx
import pytest

from conftest import ROOT, child_env, strip_timings

TASK = "How does photosynthesis convert light into chemical energy?"
READY_TIMEOUT_S = 60
RUN_TIMEOUT_S = 120
SINGLE_NODES = {"plan_query", "search", "assess_novelty", "gate", "compress", "enrich", "decide"}
MULTI_NODES = {"plan", "source_loop", "merge", "breadcrumbs", "triangulate", "profiles", "decide"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_config(tmp) -> dict:
    """The checkout's langgraph.json with its ``./`` paths resolved against the checkout (the server is started
    elsewhere, so that its ``.langgraph_api`` store is not written into the working tree)."""
    config = json.loads((ROOT / "langgraph.json").read_text())

    def absolute(path: str) -> str:
        return str(ROOT / path[2:]) if path.startswith("./") else str(ROOT) if path == "." else path

    config["dependencies"] = [absolute(d) for d in config["dependencies"]]
    config["graphs"] = {gid: absolute(spec) for gid, spec in config["graphs"].items()}
    (tmp / "langgraph.json").write_text(json.dumps(config, indent=2))
    return config


def offline_env(home) -> dict:
    env = child_env(home, drop=("LANGSMITH_", "LANGCHAIN_"))
    for key in ("LANGGRAPH_CLOUD_LICENSE_KEY", "LANGSMITH_CONTROL_PLANE_API_KEY", "OLLAMA_HOST"):
        env.pop(key, None)
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",  # langgraph_cli.analytics: no usage report
        LANGGRAPH_NO_VERSION_CHECK="true",  # langgraph_api.cli: no PyPI version check
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        # anything that still tried the internet through a proxy-respecting client fails at once, locally
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        NO_PROXY="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    return env


def log_tail(path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        import langgraph_api.cli  # noqa: F401  (what `langgraph dev` imports to serve)
        import langgraph_cli.cli  # noqa: F401
        import langgraph_sdk  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"langgraph-cli[inmem] is not installed ({exc}); pip install -e '.[test]' installs it")
    from langgraph_sdk import get_sync_client

    tmp = tmp_path_factory.mktemp("server")
    config = served_config(tmp)
    port = free_port()
    log = tmp / "server.log"
    cmd = [
        sys.executable, "-m", "langgraph_cli", "dev",
        "--host", "127.0.0.1", "--port", str(port),
        "--no-browser", "--no-reload", "--config", str(tmp / "langgraph.json"),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=tmp, env=offline_env(tmp / "home"), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with {proc.returncode} before it was ready:\n{log_tail(log)}")
            try:
                if httpx.get(f"{url}/ok", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev not ready on {url} after {READY_TIMEOUT_S} s:\n{log_tail(log)}")
            time.sleep(0.2)
        client = get_sync_client(url=url, timeout=RUN_TIMEOUT_S)
        yield SimpleNamespace(client=client, url=url, config=config, home=tmp / "home", log=log, tmp=tmp)
    finally:
        # the whole process group: the CLI and anything it started
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue


def stream(client, thread_id: str, graph_id: str, **kwargs) -> dict[str, list]:
    """One streamed run, its parts grouped by event (custom, updates, values, metadata, error)."""
    parts: dict[str, list] = {}
    for part in client.runs.stream(thread_id, graph_id, stream_mode=["custom", "updates", "values"], **kwargs):
        parts.setdefault(part.event, []).append(part.data)
    assert "error" not in parts, parts["error"]
    return parts


def updated_nodes(parts: dict) -> list[str]:
    return [node for update in parts.get("updates", []) for node in update]


@pytest.mark.slow
def test_serves_both_graphs_of_langgraph_json(server):
    assert set(server.config["graphs"]) == {"saturate", "saturate-multi"}
    found = server.client.assistants.search(limit=20)
    assert {a["graph_id"] for a in found} == {"saturate", "saturate-multi"}
    for graph_id in ("saturate", "saturate-multi"):
        assistant = next(a for a in found if a["graph_id"] == graph_id)
        schemas = server.client.assistants.get_schemas(assistant["assistant_id"])
        assert set(schemas["input_schema"]["properties"]) == {"task", "settings"}
        assert set(schemas["context_schema"]["properties"]) == {"home"}
        assert "result" in schemas["output_schema"]["properties"]


@pytest.mark.slow
def test_single_graph_stream_state_history_and_replay(server):
    client = server.client
    thread = client.threads.create()["thread_id"]
    settings = {"max_rounds": 3, "seed": 5}
    parts = stream(client, thread, "saturate", input={"task": TASK, "settings": settings})

    # custom: the gate's round events, one per round record; updates: the graph's nodes; values: the state
    state = client.threads.get_state(thread)
    values = state["values"]
    assert state["next"] == []
    assert values["result"]["outcome"] == "answer" and values["result"]["sources"]
    assert values["settings"]["max_rounds"] == 3 and values["settings"]["seed"] == 5
    rounds = [e for e in parts["custom"] if e["event"] == "round"]
    assert [e["round"] for e in rounds] == [r["round"] for r in values["records"]] and 1 <= len(rounds) <= 3
    assert [e["query"] for e in rounds] == [r["query"] for r in values["records"]]
    assert {e["event"] for e in parts["custom"]} == {"search", "round"}
    assert set(updated_nodes(parts)) == SINGLE_NODES
    assert updated_nodes(parts).count("search") == len(rounds)
    assert parts["values"][-1]["result"] == values["result"]
    assert (server.home / "index").is_dir()  # the source was built in the server's SATURATE_HOME

    # the history: newest first, every step checkpointed, back to the input
    history = client.threads.get_history(thread, limit=100)
    assert history[0]["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
    assert history[-1]["metadata"]["source"] == "input" and history[-1]["next"] == ["__start__"]
    first = history[-2]  # the bare input; the first node fills the rest of the initial state in
    assert first["next"] == ["plan_query"] and (first["values"]["task"], first["values"]["settings"]) == (
        TASK,
        settings,
    )
    assert "rng" not in first["values"] and "rng" in history[-3]["values"]
    point = next(s for s in history if s["next"] == ["plan_query"] and s["values"].get("round") == 1)

    # replay from that checkpoint: the rounds after it run again (ε is seeded: the same records)
    replay = stream(client, thread, "saturate", input=None, checkpoint_id=point["checkpoint"]["checkpoint_id"])
    assert updated_nodes(replay)[0] == "plan_query" and "decide" in updated_nodes(replay)
    assert [e["round"] for e in replay["custom"] if e["event"] == "round"] == [r["round"] for r in values["records"]][
        1:
    ]
    after = client.threads.get_state(thread)
    assert after["checkpoint"]["checkpoint_id"] != state["checkpoint"]["checkpoint_id"]
    assert strip_timings({"r": after["values"]["records"]}) == strip_timings({"r": values["records"]})
    assert after["values"]["result"]["answer"] == values["result"]["answer"]
    lineage = {s["checkpoint"]["checkpoint_id"] for s in client.threads.get_history(thread, limit=200)}
    assert point["checkpoint"]["checkpoint_id"] in lineage  # the new head descends from the chosen checkpoint

    # time travel with an edit: the same checkpoint with max_rounds 2, run from the fork
    fork = client.threads.update_state(
        thread,
        {"settings": {**point["values"]["settings"], "max_rounds": 2, "min_rounds": 2}},
        as_node="compress",
        checkpoint=point["checkpoint"],
    )
    forked = stream(client, thread, "saturate", input=None, checkpoint_id=fork["checkpoint"]["checkpoint_id"])
    final = client.threads.get_state(thread)["values"]
    assert [r["round"] for r in final["records"]] == [1, 2] and final["settings"]["max_rounds"] == 2
    assert [e["round"] for e in forked["custom"] if e["event"] == "round"] == [2]
    assert final["result"]["outcome"] == "answer"


@pytest.mark.slow
def test_multi_source_run_completes_through_the_server(server):
    client = server.client
    thread = client.threads.create()["thread_id"]
    parts = stream(
        client, thread, "saturate-multi", input={"task": TASK, "settings": {"sources": "local,wiki", "seed": 5}}
    )
    state = client.threads.get_state(thread)
    values = state["values"]
    assert state["next"] == [] and values["kind"] == "multi"
    assert [s["name"] for s in values["sources"]] == ["local", "wiki"]
    result = values["result"]
    assert result["outcome"] == "answer" and result["sources"] and result["report"]
    assert {loop["source"] for loop in result["loops"]} == {"local", "wiki"}
    assert any(len({f["source"] for f in s["found_by"]}) == 2 for s in result["sources"])  # merged across sources
    # custom: one source_query event per audited query, from both parallel loops (live: in finishing order)
    queries = [e for e in parts["custom"] if e["event"] == "source_query"]
    audited = [(a["source"], a["query_no"], a["query"]) for a in values["audit"]]
    assert sorted((e["source"], e["query_no"], e["query"]) for e in queries) == sorted(audited)
    assert {e["source"] for e in queries} == {"local", "wiki"}
    assert all(e["session"] == thread for e in queries)
    nodes = updated_nodes(parts)
    assert set(nodes) <= MULTI_NODES | {"follow"} and MULTI_NODES <= set(nodes)
    assert nodes.count("source_loop") == 2  # one branch per source, in one superstep
    assert parts["values"][-1]["result"] == result
    history = client.threads.get_history(thread, limit=100)
    first = history[-2]
    assert first["next"] == ["plan"] and first["values"]["settings"] == {"sources": "local,wiki", "seed": 5}

    # replay from the checkpoint after the plan: both loops run again, to the same result
    point = next(s for s in history if s["next"] == ["source_loop", "source_loop"])
    replay = stream(client, thread, "saturate-multi", input=None, checkpoint_id=point["checkpoint"]["checkpoint_id"])
    assert updated_nodes(replay).count("source_loop") == 2
    again = client.threads.get_state(thread)["values"]["result"]
    assert again["answer"] == result["answer"] and [s["url"] for s in again["sources"]] == [
        s["url"] for s in result["sources"]
    ]


def test_multi_graph_context_is_per_run_and_shares_the_sources(home):
    """The served multi graph's context (graph/studio.py): sources cached by settings, one model budget per run."""
    from saturate.graph.studio import multi_context_for
    from saturate.state import Context
    from saturate.state.settings import load_settings

    settings = load_settings({"sources": "local,wiki"})

    def runtime(run_id=None, thread_id=None):
        return SimpleNamespace(execution_info=SimpleNamespace(run_id=run_id, thread_id=thread_id))

    a1 = multi_context_for(settings, {}, runtime("run-a"))
    a2 = multi_context_for(settings, None, runtime("run-a", "t"))
    b = multi_context_for(settings, {}, runtime("run-b"))
    assert a1 is a2 and a1 is not b
    assert set(a1.sources) == {"local", "wiki"} and a1.sources == b.sources and a1.pages is b.pages
    assert a1.budget(5, 100) is a2.budget(5, 100) and a1.budget(5, 100) is not b.budget(5, 100)
    assert a1.budget(5, 100).acquire() == (True, None) and b.model_budget is not None and b.model_budget.calls == 0
    # without a run id: the thread's; without either, a fresh copy per call
    assert multi_context_for(settings, {}, runtime(None, "t1")) is multi_context_for(settings, {}, runtime(None, "t1"))
    assert multi_context_for(settings, {}, runtime()) is not multi_context_for(settings, {}, runtime())
    given = Context(source=a1.source)
    assert multi_context_for(settings, {}, runtime("run-a")) is a1 and multi_context_for(settings, given) is given


@pytest.mark.slow
def test_a_review_pauses_the_served_graph_and_the_sdk_resumes_it(server):
    """``review`` through the server: the run stops at review_plan with the plan as its interrupt; the SDK's
    ``command={"resume": ...}`` edits it, then the answer's review is approved the same way."""
    client = server.client
    thread = client.threads.create()["thread_id"]
    stream(client, thread, "saturate", input={"task": TASK, "settings": {"review": "both", "max_rounds": 2}})
    state = client.threads.get_state(thread)
    assert state["next"] == ["review_plan"]
    (pending,) = [i for t in state["tasks"] for i in t["interrupts"]]
    assert pending["value"] == {"point": "plan", "task": TASK, "queries": [TASK]}
    assert client.threads.get(thread)["status"] == "interrupted"

    edited = {"action": "edit", "queries": ["photosynthesis light reactions", "Calvin cycle"]}
    stream(client, thread, "saturate", command={"resume": edited})
    state = client.threads.get_state(thread)
    assert state["next"] == ["review_answer"] and state["values"]["result"]["answer"]
    assert [r["query"] for r in state["values"]["records"]][:2] == edited["queries"]

    stream(client, thread, "saturate", command={"resume": {"action": "approve"}})
    state = client.threads.get_state(thread)
    assert state["next"] == [] and "answer approved by the reviewer" in state["values"]["result"]["debug"]["notes"]
