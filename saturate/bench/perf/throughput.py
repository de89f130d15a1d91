"""Figure 6, ``sessions_per_s`` (>= 20/s): checkpointed sessions run concurrently (threads, and asyncio with
AsyncSqliteSaver); baselines: the same batch sequentially, and sequentially without a checkpointer. Not
counted in the figure (full runs only): worker processes, one SqliteSaver connection each on one file.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from langchain_core.runnables import RunnableConfig

from saturate.bench.perf.common import (
    DURABILITY,
    ROOT,
    SEED,
    Figure,
    Stopwatch,
    baseline,
    clean_env,
    session_tasks,
    task_corpus,
)
from saturate.graph.build import build_graph
from saturate.graph.session import open_checkpointer
from saturate.nodes.reading.reader import ReaderUnavailable, shipped_reader
from saturate.sources import SqlitePageStore
from saturate.state import Context, initial_state, load_settings

_BATCH = itertools.count(1)

WORKER_CODE = "import sys; from saturate.bench.perf.throughput import process_worker_main as m; sys.exit(m())"


def _setup(home: Path, source):

    home.mkdir(parents=True, exist_ok=True)
    return load_settings({"seed": SEED}, env={}), Context(source=source, pages=SqlitePageStore(home / "pages.db"))


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 1000}


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A worker's pipe (the workers are started with stdin, stdout and stderr piped)."""
    if stream is None:
        raise RuntimeError("a worker process has no pipe")
    return stream


CLOCK_FIELDS = ("durations_ms", "ms")  # the wall-clock fields of a state: they differ between any two runs


def _answers(states: list[dict]) -> list[tuple]:
    """What each session ended with: (its answer, its rounds, the sha256 of its whole final state less the wall-clock
    fields). The same seeded sessions end alike in every way; any difference is a loss of determinism."""
    return [(s["result"]["answer"], len(s["records"]), state_digest(s)) for s in states]


def state_digest(state: dict) -> str:
    """The sha256 of a final state's JSON (keys sorted) without ``CLOCK_FIELDS`` at any depth nor private keys."""

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in CLOCK_FIELDS}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    kept = clean({k: v for k, v in state.items() if not str(k).startswith("_")})
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


def process_cpu_s() -> float:
    """CPU seconds (user + system) of this process so far, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def forget_reads() -> None:
    """Empty the trained reader's cache of reads (kept per process, by question and sentence): every way asks the same
    questions, so without this only the first way to ask one would read it and the ways after it would replay its
    reads (issue 46: the ways run after ``sequential`` measured up to 2.3x its rate for that reason alone)."""
    try:
        shipped_reader().forget()
    except ReaderUnavailable:  # no reader: nothing is cached
        pass


def sessions_sequential(work: Path, tasks: list[str], source, checkpoint: bool = True) -> tuple[float, list]:

    home = work / ("seq" if checkpoint else "seq-nockpt")
    settings, context = _setup(home, source)
    with open_checkpointer(home) as saver:
        graph = build_graph(checkpointer=saver if checkpoint else None)
        extra: dict[str, Any] = {"durability": DURABILITY} if checkpoint else {}
        batch = next(_BATCH)
        with Stopwatch() as sw:
            states = [
                graph.invoke(initial_state(t, settings), _config(f"b{batch}-{i}"), context=context, **extra)
                for i, t in enumerate(tasks)
            ]
        return sw.seconds, _answers(states)


def sessions_threads(work: Path, tasks: list[str], source, workers: int) -> tuple[float, list]:

    home = work / f"threads-{workers}"
    settings, context = _setup(home, source)
    with open_checkpointer(home) as saver:  # one SqliteSaver, check_same_thread=False, its own lock
        graph = build_graph(checkpointer=saver)
        batch = next(_BATCH)

        def one(i: int) -> dict:
            return graph.invoke(
                initial_state(tasks[i], settings), _config(f"b{batch}-{i}"), context=context, durability=DURABILITY
            )

        with Stopwatch() as sw, ThreadPoolExecutor(max_workers=workers) as pool:
            states = list(pool.map(one, range(len(tasks))))
        return sw.seconds, _answers(states)


def sessions_async(work: Path, tasks: list[str], source, concurrency: int) -> tuple[float, list]:

    import aiosqlite  # only the asyncio way needs the async SQLite driver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    home = work / f"async-{concurrency}"
    settings, context = _setup(home, source)

    async def main() -> tuple[float, list]:
        async with aiosqlite.connect(home / "sessions.db") as conn:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            graph = build_graph(checkpointer=saver)
            sem = asyncio.Semaphore(concurrency)
            batch = next(_BATCH)

            async def one(i: int) -> dict:
                async with sem:
                    return await graph.ainvoke(
                        initial_state(tasks[i], settings),
                        _config(f"b{batch}-{i}"),
                        context=context,
                        durability=DURABILITY,
                    )

            with Stopwatch() as sw:
                states = await asyncio.gather(*(one(i) for i in range(len(tasks))))
            return sw.seconds, _answers(states)

    return asyncio.run(main())


def process_worker_main() -> int:
    """A worker process of ``sessions_processes``; speaks JSON lines on stdin/stdout.

    Reads a job {index_dir, corpus (a path, or null: the embedded one), home, tasks: [[i, task], ...]}, opens its own
    handle on that corpus and SqliteSaver connection, runs one warm-up session, prints "ready", waits for "go", runs
    its tasks and prints {"answers": [[i, [answer, rounds, state digest]], ...]}.
    """

    job = json.loads(sys.stdin.readline())
    home = Path(job["home"])
    source, _ = task_corpus(Path(job["index_dir"]), Path(job["corpus"]) if job["corpus"] else None)
    settings, context = _setup(home, source)
    with open_checkpointer(home) as saver:
        graph = build_graph(checkpointer=saver)
        graph.invoke(
            initial_state(job["tasks"][0][1], settings),
            _config(f"warm-{os.getpid()}"),
            context=context,
            durability=DURABILITY,
        )
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return 1
        answers = []
        for i, task in job["tasks"]:
            st = graph.invoke(initial_state(task, settings), _config(f"s{i}"), context=context, durability=DURABILITY)
            answers.append([i, list(_answers([st])[0])])
    print(json.dumps({"answers": answers}), flush=True)
    return 0


def sessions_processes(work: Path, tasks: list[str], workers: int, corpus: Path | None) -> tuple[float, list]:
    """The batch split over ``workers`` processes (``python -c WORKER_CODE``), one SqliteSaver
    connection each on one sessions.db, each searching ``corpus`` (None: the embedded one) as the other ways do.
    Start-up (interpreter, imports, a warm-up session) is excluded: the clock runs from "go" to the last worker's
    answers."""
    home = work / f"processes-{workers}"
    home.mkdir(parents=True, exist_ok=True)
    # sessions.db made (tables set up) before the workers open it: a worker that finds the file another has just
    # created, still 0 bytes, would take it for a damaged one (graph.session.open_checkpointer refuses those)
    with open_checkpointer(home):
        pass
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE],
            cwd=ROOT,
            env=clean_env(),
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(workers)
    ]

    def expect(pr: subprocess.Popen, what: str) -> str:
        line = _pipe(pr.stdout).readline()
        if not line:
            pr.wait(timeout=30)
            raise RuntimeError(
                f"a worker process exited {pr.returncode} before {what}:\n{_pipe(pr.stderr).read()[-2000:]}"
            )
        return line

    try:
        for w, pr in enumerate(procs):
            chunk = [[i, t] for i, t in enumerate(tasks) if i % workers == w]
            _pipe(pr.stdin).write(
                json.dumps(
                    {
                        "index_dir": str(work / "index"),
                        "corpus": str(corpus) if corpus is not None else None,
                        "home": str(home),
                        "tasks": chunk,
                    }
                )
                + "\n"
            )
            _pipe(pr.stdin).flush()
        for pr in procs:
            expect(pr, "ready")
        with Stopwatch() as sw:
            for pr in procs:
                _pipe(pr.stdin).write("go\n")
                _pipe(pr.stdin).flush()
            results = [json.loads(expect(pr, "its answers")) for pr in procs]
        for pr in procs:
            pr.wait(timeout=30)
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
                pr.wait()
    answers = {i: tuple(a) for r in results for i, a in r["answers"]}
    return sw.seconds, [answers[i] for i in range(len(tasks))]


def bench_sessions(work: Path, p: dict, shared: dict) -> Figure:
    source, corpus_desc = shared["task_source"], shared["task_corpus_desc"]
    n = p["sessions"]
    tasks = session_tasks(n)
    root = work / "sessions"
    sessions_sequential(root / "warmup", tasks[:2], source)  # imports, first compile
    ways: list[tuple[str, Callable[[list[str]], tuple[float, list]]]] = [
        ("sequential", lambda ts: sessions_sequential(root, ts, source)),
        *((f"threads_{w}", lambda ts, w=w: sessions_threads(root, ts, source, w)) for w in p["workers"]),
        (f"asyncio_{p['async_conc']}", lambda ts: sessions_async(root, ts, source, p["async_conc"])),
        ("sequential_no_checkpointer", lambda ts: sessions_sequential(root, ts, source, checkpoint=False)),
    ]
    # two halves of the batch, the ways in one order then the reverse, so that a burst of load
    # from other processes does not fall on one way only
    halves = [tasks[: n // 2], tasks[n // 2 :]]
    runs: dict[str, tuple[float, list]] = {name: (0.0, []) for name, _ in ways}
    cpu: dict[str, float] = {name: 0.0 for name, _ in ways}  # CPU seconds of this process (its threads) per way
    for h, half in enumerate(halves):
        for name, fn in ways if h == 0 else ways[::-1]:
            forget_reads()  # each way reads its questions as a new process would, not from the way before it
            c0 = process_cpu_s()
            elapsed, answers = fn(half)
            cpu[name] += process_cpu_s() - c0
            runs[name] = (runs[name][0] + elapsed, runs[name][1] + answers)
    if p["processes"]:  # not in --quick: starting interpreters costs more than the batch
        runs[f"processes_{p['processes']}"] = sessions_processes(
            root, tasks, p["processes"], shared.get("task_corpus_file")
        )
    rate = {k: n / v[0] for k, v in runs.items()}
    speedup = {k: round(r / rate["sequential"], 3) for k, r in rate.items() if k != "sequential"}
    concurrent = {k: r for k, r in rate.items() if k.startswith(("threads", "asyncio"))}
    best = max(concurrent, key=lambda k: concurrent[k])
    ref = runs["sequential"][1]
    # the sessions (by index) each way ended differently from the sequential way
    differ = {k: [i for i, (a, b) in enumerate(zip(v[1], ref)) if a != b] for k, v in runs.items()}
    differ = {k: d for k, d in differ.items() if d}
    same = not differ
    rounds = sum(r for _, r, _ in ref)
    fig = Figure(
        key="sessions_per_s",
        value=concurrent[best],
        unit="sessions/s",
        op=">=",
        limit=20,
        baselines={
            "sequential_sessions_per_s": baseline(rate["sequential"], "sessions/s"),
            **{f"{k}_sessions_per_s": baseline(v, "sessions/s") for k, v in rate.items() if k != "sequential"},
        },
        command=(
            f"perf.throughput.bench_sessions: {n} musique questions, default settings seed={SEED}, "
            f"one shared {corpus_desc}, SqliteSaver durability='{DURABILITY}' (<tmp>/sessions.db, one per way), "
            "each session its own thread_id, "
            "run as two halves with the ways in one order then the reverse, the reader's cache of reads emptied "
            "before each; "
            f"sequential graph.invoke vs ThreadPoolExecutor({'/'.join(map(str, p['workers']))} workers, "
            "one shared SqliteSaver) "
            f"vs asyncio.gather of graph.ainvoke (AsyncSqliteSaver over aiosqlite, {p['async_conc']} at a time); "
            "value = the best of the thread and asyncio ways (in one process, as the API runs sessions); "
            + (
                f"not counted: {p['processes']} worker processes (python -c perf.throughput.WORKER_CODE) "
                "with a SqliteSaver connection each on one sessions.db (start-up excluded), and "
                if p["processes"]
                else "not counted: "
            )
            + "sequential without a checkpointer"
        ),
        details={
            "sessions": n,
            "rounds_total": rounds,
            "best_concurrent": best,
            "speedup_vs_sequential": speedup,
            "ms_per_session_sequential": round(runs["sequential"][0] * 1000.0 / n, 3),
            "ms_per_round_sequential": round(runs["sequential"][0] * 1000.0 / rounds, 3),
            # CPU, not wall: moves less with other work on the machine (threads and asyncio share one process's CPU)
            "cpu_ms_per_session": {k: round(v * 1000.0 / n, 1) for k, v in cpu.items()},
            "same_results_in_every_way": same,
            "sessions_ending_differently": differ,
            "cpus": os.cpu_count(),
        },
    )
    fig.extra_rows.append(("speedup_vs_sequential", concurrent[best] / rate["sequential"], "x"))
    fig.notes.append(
        f"{best} {concurrent[best]:.1f}/s vs sequential {rate['sequential']:.1f}/s "
        f"(speedup {concurrent[best] / rate['sequential']:.2f}x); all ways: "
        + ", ".join(f"{k} {v:.1f}/s" for k, v in rate.items())
        + f"; {rounds} rounds in {n} sessions; CPU per session: "
        + ", ".join(f"{k} {v * 1000.0 / n:.0f} ms" for k, v in cpu.items())
    )
    proc = f"processes_{p['processes']}"
    fig.notes.append(
        "not counted in the figure: "
        + (f"{proc} reaches {rate[proc]:.1f}/s ({rate[proc] / rate['sequential']:.2f}x); " if proc in rate else "")
        + f"without checkpointing one thread does {rate['sequential_no_checkpointer']:.1f}/s"
    )
    if not same:
        fig.notes.append(
            "WARNING: some sessions ended differently between ways (same seed): check determinism ("
            + "; ".join(f"{k}: {len(d)} of {n}, first #{d[0]}" for k, d in differ.items())
            + ")"
        )
    return fig
