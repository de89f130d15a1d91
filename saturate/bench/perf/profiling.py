"""``--profile NAME``: a cProfile of one workload (the in-process part of a figure) instead of the table."""

from __future__ import annotations

import cProfile
import io
import pstats
from pathlib import Path

from saturate.bench.perf.cache import bench_cache
from saturate.bench.perf.cold_start import RESEARCH_TASK
from saturate.bench.perf.common import DURABILITY, PLAN, SEED, session_tasks
from saturate.bench.perf.fts import K, fts_queries
from saturate.bench.perf.novelty import bench_novelty
from saturate.bench.perf.overhead import fixed_settings
from saturate.bench.perf.throughput import sessions_sequential
from saturate.graph.api import research
from saturate.graph.build import build_graph
from saturate.graph.session import open_checkpointer
from saturate.sources import SqlitePageStore
from saturate.state import Context, initial_state, load_settings

PROFILES = ("graph", "sessions", "novelty", "fts", "cache", "research")


def profile(name: str, work: Path, quick: bool, shared: dict) -> str:
    """cProfile of one workload; returns the pstats text."""

    p = PLAN[quick]
    source = shared["task_source"]
    prof = cProfile.Profile()
    if name == "graph":
        settings = fixed_settings()
        context = Context(source=source, pages=SqlitePageStore(work / "pages.db"))
        tasks = session_tasks(20)
        with open_checkpointer(work) as saver:
            g = build_graph(checkpointer=saver)
            g.invoke(
                initial_state(tasks[0], settings),
                {"configurable": {"thread_id": "warm"}},
                context=context,
                durability=DURABILITY,
            )
            prof.enable()
            for i, t in enumerate(tasks):
                g.invoke(
                    initial_state(t, settings),
                    {"configurable": {"thread_id": f"p{i}"}},
                    context=context,
                    durability=DURABILITY,
                )
            prof.disable()
    elif name == "sessions":
        sessions_sequential(work / "warm", session_tasks(2), source)
        prof.enable()
        sessions_sequential(work, session_tasks(p["sessions"]), source)
        prof.disable()
    elif name == "novelty":
        prof.enable()
        bench_novelty(work, p, shared)
        prof.disable()
    elif name == "fts":
        queries = [q for _, q in fts_queries(p)]
        prof.enable()
        for q in queries:
            shared["wiki"].search(q, K)
        prof.disable()
    elif name == "cache":
        prof.enable()
        bench_cache(work, p, shared)
        prof.disable()
    elif name == "research":  # in process, fresh home: index build + one session (no interpreter start-up)
        home = work / "profile-home"
        prof.enable()
        research(RESEARCH_TASK, home=home, settings=load_settings({"seed": SEED}, env={}))
        prof.disable()
    out = io.StringIO()
    out.write(
        f"cProfile of the {name!r} workload, main thread only: LangGraph writes checkpoints from a background "
        "thread, which shows here as time in lock.acquire (waiting for SqliteSaver.put/put_writes to commit).\n"
    )
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(25)
    return out.getvalue()
