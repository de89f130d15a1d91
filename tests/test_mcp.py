"""``saturate mcp`` driven by the MCP SDK's own client: over stdio (the client starts the server) and over
streamable HTTP on loopback; tools listed, a session with progress notifications and structured output, a call
cancelled mid-session and resumed through ``resume``, and bad input as a tool error that leaves the server up."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx
import psutil
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from conftest import child_env

TASK = "How does photosynthesis convert light into chemical energy?"
TOOLS = {"research", "verify", "resume", "show", "runs"}
OPERATOR_ONLY = {
    "model",
    "embed_model",
    "openai_base_url",
    "ollama_host",
    "searxng_url",
    "corpus",
    "source_tiers",
    "database_url",
    "fetch_allow_hosts",
    "model_timeout_s",
    "model_call_budget",
    "source_descriptions",
}
TOKEN = "test-token-0123456789"


def stdio_server(home) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "saturate.cli", "mcp"], env=child_env(home))


async def exercise(client: Client, home: Path) -> None:
    """What both transports must do: list, research with progress, refuse bad input, cancel and resume (the
    server's sessions are in ``home``)."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    settings_schema = tools["research"].input_schema["$defs"]["SettingsOverrides"]["properties"]
    assert {"max_rounds", "source", "review", "novelty_threshold"} <= set(settings_schema)
    assert not OPERATOR_ONLY & set(settings_schema)  # endpoints, keys, files: never a client's to set
    output_schema = tools["research"].output_schema
    assert output_schema is not None and "sources" in output_schema["properties"]

    notified: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notified.append((progress, total, message))

    result = await client.call_tool(
        "research",
        {"task": TASK, "settings": {"max_rounds": 3, "seed": 5}, "thread_id": "m1"},
        progress_callback=on_progress,
    )
    assert not result.is_error, result.content
    out = result.structured_content
    assert out["thread_id"] == "m1" and out["outcome"] == "answer" and out["answer"] and out["sources"]
    assert out["stop_reason"] and 1 <= out["rounds"] <= 3
    assert {s["n"] for s in out["sources"]} and all(s["url"].startswith("http") for s in out["sources"])
    assert "brief" in output_schema["properties"] and isinstance(out["brief"], list)  # the brief travels too
    numbers = {s["n"] for s in out["sources"]}
    assert all(set(x["sources"]) <= numbers for part in out["brief"] for x in part["sentences"])
    # one notification per round: its number of the cap, and the round's progress line
    assert [p[0] for p in notified] == list(range(1, out["rounds"] + 1)) and all(p[1] == 3 for p in notified)
    first_message = notified[0][2]
    assert first_message is not None and first_message.startswith("round 1: ")

    shown = (await client.call_tool("show", {"thread_id": "m1"})).structured_content
    assert shown["status"] == "done" and len(shown["rounds"]) == out["rounds"] and shown["result"]["answer"]
    runs = (await client.call_tool("runs", {})).structured_content["sessions"]
    assert [r["thread_id"] for r in runs] == ["m1"] and runs[0]["status"] == "done"

    # bad input: a tool error, one line; the server goes on serving
    bad = await client.call_tool("research", {"task": "   ", "settings": {"max_rounds": 3}})
    assert bad.is_error and "task" in first_text(bad).lower() and "Traceback" not in first_text(bad)
    bad = await client.call_tool("research", {"task": TASK, "settings": {"max_rounds": -1}})
    assert bad.is_error
    unknown = await client.call_tool("show", {"thread_id": "nope"})
    assert unknown.is_error and "unknown thread 'nope'" in first_text(unknown)

    # cancel a call mid-session: the session stops at its next step, checkpointed; resume finishes it. A round takes
    # ~10 ms: on a loaded machine the rest of the session finished before the cancellation reached the server (the
    # session done, never interrupted). So from round 2 on this test holds sessions.db's write lock — the session
    # waits at its next checkpoint — until the server has answered a request sent after the cancellation.
    second_round = anyio.Event()
    gate = sqlite3.connect(home / "sessions.db", timeout=30, isolation_level=None)

    async def on_round(progress: float, total: float | None, message: str | None) -> None:
        if progress >= 2 and not second_round.is_set():
            gate.execute("BEGIN IMMEDIATE")  # waits (ms) for a checkpoint being written, then holds the session
            second_round.set()

    async def slow_session() -> None:
        settings = {"max_rounds": 8, "min_rounds": 8, "seed": 5}
        await client.call_tool(
            "research", {"task": TASK, "settings": settings, "thread_id": "m2"}, progress_callback=on_round
        )

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_session)
            with anyio.fail_after(120):
                await second_round.wait()
            tg.cancel_scope.cancel()
        await client.call_tool("runs", {})  # answered after the cancellation (read-only: the lock does not stop it)
    finally:
        if gate.in_transaction:
            gate.execute("ROLLBACK")
        gate.close()
    with anyio.fail_after(60):  # the worker stops at its next step: the session is left interrupted
        while True:
            status = (await client.call_tool("show", {"thread_id": "m2"})).structured_content["status"]
            assert status != "done", "the session finished: the cancellation did not stop it"
            if status.startswith("interrupted at") and not await _still_running(client, "m2"):
                break
            await anyio.sleep(0.2)
    done = (await client.call_tool("show", {"thread_id": "m2"})).structured_content
    assert 2 <= len(done["rounds"]) < 8 and done["result"] is None
    resumed = await client.call_tool("resume", {"thread_id": "m2"})
    assert not resumed.is_error, resumed.content
    assert resumed.structured_content["outcome"] == "answer" and resumed.structured_content["rounds"] == 8


def first_text(result: CallToolResult) -> str:
    """The text of a tool result's first content block (a tool error is one text block)."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def _still_running(client: Client, thread: str) -> bool:
    """Whether the cancelled session is still adding steps (two reads a moment apart differ)."""
    first = (await client.call_tool("show", {"thread_id": thread})).structured_content
    await anyio.sleep(0.5)
    second = (await client.call_tool("show", {"thread_id": thread})).structured_content
    return first != second


@pytest.mark.slow
def test_stdio(home):
    async def main() -> None:
        async with Client(stdio_server(home), read_timeout_seconds=120) as client:
            await exercise(client, home)

    anyio.run(main)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(home):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "saturate.cli", "mcp", "--http", "--port", str(port), "--token", TOKEN],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.HTTPError:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)
    yield url, proc.pid
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=20)


def test_streamable_http_on_loopback(http_server, home):
    url, pid = http_server
    # bound to loopback unless told otherwise: the server's one listening socket is on 127.0.0.1
    listening = [c.laddr for c in psutil.Process(pid).net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert [a.ip for a in listening] == ["127.0.0.1"]

    # every request needs the token: none or another is refused before any tool runs
    for headers in ({}, {"Authorization": "Bearer wrong-token"}):
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert refused.status_code == 401, (headers, refused.status_code)

    async def main() -> None:
        async with Client(authorized(url), read_timeout_seconds=120) as client:
            await exercise(client, home)

    anyio.run(main)


def authorized(url: str, token: str = TOKEN):
    """A streamable HTTP transport that sends the bearer token."""
    import httpx2  # the HTTP client the MCP SDK's transport takes (its dependency)

    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120, follow_redirects=True)
    return streamable_http_client(url, http_client=client)


class Listener:
    """A TCP listener on loopback that records every connection made to it (what a client tried to make the server
    contact)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.mark.slow
def test_a_client_cannot_choose_endpoints_keys_files_or_sources(home, musique_corpus):
    """The trust boundary (saturate/mcp.py): with the operator's API key in the server's environment, a client's
    endpoint, file or unlisted source is refused as a tool error, and the listener it named is never contacted."""
    listener = Listener()
    env = child_env(home)
    env["OPENAI_API_KEY"] = "sk-operator-secret-0123456789"
    allowed = f"local:{musique_corpus}"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "saturate.cli", "mcp", "--allow-source", "local"], env=env
    )
    hostile = [
        {"model": "openai:x", "openai_base_url": f"http://127.0.0.1:{listener.port}/v1"},
        {"embed_model": "openai:e", "openai_base_url": f"http://127.0.0.1:{listener.port}/v1"},
        {"ollama_host": f"http://127.0.0.1:{listener.port}", "model": "ollama:x"},
        {"source": "searxng", "searxng_url": f"http://127.0.0.1:{listener.port}"},
        {"corpus": "/proc/self/environ"},
        {"source_tiers": "/etc/passwd"},
        {"database_url": f"postgresql://u:p@127.0.0.1:{listener.port}/db"},
        {"fetch_allow_hosts": "127.0.0.1"},
        {"source": "searxng"},
        {"sources": f"local:/proc/self/environ,{allowed}"},
        {"source": "local:/etc/passwd"},
    ]

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            for settings in hostile:
                for tool, text in (("research", TASK), ("verify", "The Bubye River is in Zimbabwe.")):
                    result = await client.call_tool(
                        tool, {"task" if tool == "research" else "claim": text, "settings": settings}
                    )
                    assert result.is_error, (tool, settings)
                    message = first_text(result)
                    assert "Traceback" not in message and "sk-operator-secret" not in message
                    named = [k for k in settings if k not in ("model",)]
                    assert any(k in message for k in named), (settings, message)
            ok = await client.call_tool(
                "research", {"task": TASK, "settings": {"source": "local", "max_rounds": 2}, "thread_id": "allowed"}
            )
            assert not ok.is_error, ok.content

    try:
        anyio.run(main)
    finally:
        listener.close()
    assert listener.received == [], listener.received


@pytest.mark.parametrize(
    "flags, said",
    [
        (["--host", "0.0.0.0"], "--allow-remote"),
        (["--host", "0.0.0.0", "--allow-remote", "--no-token"], "--no-token is only for a loopback"),
        (["--port", "99999"], "a port is 1 to 65535"),
        (["--port", "x"], "not a port number"),
    ],
)
def test_http_flags_that_would_expose_the_server_are_refused(home, flags, said):
    done = subprocess.run(
        [sys.executable, "-m", "saturate.cli", "mcp", "--http", *flags],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_generated_token_is_printed_once_and_required(home):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "saturate.cli", "mcp", "--http", "--port", str(port)],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        token = None
        deadline = time.monotonic() + 60
        while token is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the server stopped"
            if "Authorization: Bearer " in line:
                token = line.split("Authorization: Bearer ", 1)[1].split()[0]
        assert token and len(token) >= 32
        url = f"http://127.0.0.1:{port}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        deadline = time.monotonic() + 60
        while True:
            try:
                refused = httpx.post(url, json=body, timeout=5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert refused.status_code == 401

        async def main() -> None:
            async with Client(authorized(url, token), read_timeout_seconds=60) as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS

        anyio.run(main)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
