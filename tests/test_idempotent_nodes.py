"""Every node may run twice (issue 24; langgraph #8039): killed after a node's side effects but before its writes
and checkpoint are kept, LangGraph runs the node again from the same checkpoint when the session resumes. Here
each step of a session is made to happen that way — the node runs, its checkpoint and writes are then dropped
from sessions.db as a crash at that moment would leave them, and the session is resumed, which runs the node
again — and the outcome is compared with the same session run once: the state (records, answer, sources, notes,
model-call counts), the search cache and the page store must be the same. The model server's request log shows
that the nodes really ran twice. (A batch's result lines are written by its parent once a task is done and
deduplicated by id on a re-run: tests/test_postgres.py kills batches and counts each task exactly once.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.graph import api
from saturate.graph.session import config, graph_for, kind_of, open_checkpointer

from conftest import strip_timings

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"
CLAIM = "The Bubye River is a tributary of the Limpopo River."


class Stop(Exception):
    """Raised by the stream handler after a step: the process 'dies' there."""


def stop_at(step: int):
    seen: list[str] = []

    def handler(chunk) -> None:
        seen.append(next(iter(chunk)))
        if len(seen) == step:
            raise Stop(seen[-1])

    handler.seen = seen
    return handler


def forget_step(home: Path, thread: str) -> None:
    """What a crash after the last step's side effects leaves: neither its writes nor the checkpoint after it.

    Tasks save their writes against the checkpoint they run from, as each finishes (durability "sync"): when the
    newest checkpoint has writes, its step's tasks (parallel source loops) have run without the checkpoint after
    them — those writes go; otherwise the newest checkpoint is the one after the step, and it goes with the
    writes of the step that made it."""
    db = sqlite3.connect(home / "sessions.db")
    with db:
        head, parent = db.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (thread,),
        ).fetchone()
        if db.execute("SELECT 1 FROM writes WHERE thread_id = ? AND checkpoint_id = ?", (thread, head)).fetchone():
            db.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id = ?", (thread, head))
        else:
            db.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", (thread, head))
            db.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id = ?", (thread, parent))
    db.close()


def run_every_step_twice(start, home: Path, thread: str) -> list[str]:
    """Start the session with ``start(stream_handler)``; after each step, forget it and resume, which runs the
    step's tasks again and then the next step's first: the nodes that ran, each step's once."""
    ran: list[str] = []
    handler = stop_at(1)
    try:
        start(handler)
        return handler.seen
    except Stop:
        pass
    while True:
        forget_step(home, thread)
        with open_checkpointer(home) as saver:
            again = sorted(t.name for t in graph_for(kind_of(saver, thread), saver).get_state(config(thread)).tasks)
        ran += again
        handler = stop_at(len(again) + 1)  # the forgotten step runs again, then the next one's first task
        try:
            api.resume(thread, home=home, stream_handler=handler)
            return ran + handler.seen[len(again) :]
        except Stop:
            assert sorted(handler.seen[: len(again)]) == again, (handler.seen, again)


WALL_CLOCK = ("elapsed_s", "started", "parallelism")  # a multi-source loop's times (differ between any two runs)


def final_state(home: Path, thread: str) -> dict:
    """The session's values without wall-clock fields."""

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in WALL_CLOCK}
        return [clean(v) for v in x] if isinstance(x, list) else x

    with open_checkpointer(home) as saver:
        return clean(strip_timings(graph_for(kind_of(saver, thread), saver).get_state(config(thread)).values))


def stores(home: Path) -> dict:
    """The search cache's and the page store's rows, without their times."""
    rows = {}
    for name, table, cols in (
        ("cache.db", "searches", "key, source, query, results"),
        ("pages.db", "pages", "url, text"),
    ):
        db = sqlite3.connect(home / name)
        rows[name] = sorted(db.execute(f"SELECT {cols} FROM {table}").fetchall())
        db.close()
    return rows


def script() -> OllamaScript:
    """One reply per prompt (each repeats): a node run again asks the same and is told the same, as a real model
    at temperature 0 with a seed would."""
    return OllamaScript(
        plan=['{"queries": ["Bubye River country", "waterfalls of Zimbabwe"]}'],
        fill=['{"1.1": "Zimbabwe", "1.2": "Victoria Falls"}'],
        novelty=["5"],
        gap=['"Victoria Falls Zimbabwe"'],
        compress=["- Bubye River is in Zimbabwe."],
        decide=["The waterfall is Victoria Falls [2], in Zimbabwe [1]."],
        stance=['{"stance": "supports", "quote": "tributary of the Limpopo River"}'],
    )


@pytest.mark.parametrize("mode", ["research", "verify"])
def test_every_node_run_twice_leaves_the_session_as_if_it_ran_once(home, tmp_path, musique_corpus, mode):
    fn = api.verify if mode == "verify" else api.research
    text = CLAIM if mode == "verify" else BUBYE
    with OllamaServer(script()) as server:
        kw = {
            "corpus": str(musique_corpus),
            "model": "ollama:qwen-test",
            "ollama_host": server.url,
            "seed": 3,
            "max_rounds": 3,
            "novelty_method": "model",
        }
        once_home, twice_home = tmp_path / "once", tmp_path / "twice"
        once = fn(text, thread_id="t", home=once_home, **kw)
        calls_once = len(server.script.requests)
        ran = run_every_step_twice(
            lambda h: fn(text, thread_id="t", home=twice_home, stream_handler=h, **kw), twice_home, "t"
        )
        calls_twice = len(server.script.requests) - calls_once
    assert {"plan_query", "search", "assess_novelty", "gate", "enrich", "decide"} <= set(ran), ran
    assert calls_twice > calls_once  # the model-backed nodes really ran again
    again = api.session_state("t", home=twice_home)
    assert again["result"] == api.session_state("t", home=once_home)["result"]
    assert final_state(twice_home, "t") == final_state(once_home, "t")  # records, notes, model-call counts
    assert again["result"]["debug"]["model_calls"] == once.debug["model_calls"] > 0  # counted once
    assert stores(twice_home) == stores(once_home)
    assert stores(once_home)["cache.db"] and stores(once_home)["pages.db"]


def test_multi_source_steps_run_twice_leave_the_session_as_if_run_once(home, tmp_path, musique_corpus):
    """The multi-source graph: a step of parallel source loops (or follow-ups) loses all its tasks' writes and runs
    them all again."""
    kw = {"sources": f"local:{musique_corpus},titles:{musique_corpus}", "seed": 3, "max_rounds": 3}
    api.research_multi(BUBYE, thread_id="t", home=tmp_path / "once", **kw)
    twice = tmp_path / "twice"
    ran = run_every_step_twice(
        lambda h: api.research_multi(BUBYE, thread_id="t", home=twice, stream_handler=h, **kw), twice, "t"
    )
    assert ran.count("source_loop") == 2 and {"plan", "merge", "triangulate", "decide"} <= set(ran), ran
    assert final_state(twice, "t") == final_state(tmp_path / "once", "t")
    assert stores(twice)["cache.db"] == stores(tmp_path / "once")["cache.db"]
