"""``saturate bench batch``: sessions per second of ``saturate batch`` with 1, 2 and 4 worker processes, on the
SQLite files and on PostgreSQL, in the same run.

The musique questions (of the evaluation data) are repeated to ``--sessions`` tasks (distinct ids, so distinct
sessions) over the musique corpus, default settings. Each (backend, workers) cell runs the whole file through
``graph.batch.run_batch`` in a fresh data directory (and a fresh database), worker start-up included; the
corpus index is built once before the clock starts. PostgreSQL is the URL given (``--database-url``), else a
throwaway cluster this benchmark starts on a loopback port with PostgreSQL's default durability
(``saturate/bench/pg_server.py``). The speed-up is against one worker on the same backend in the same run.
Targets (the issue): >= 40 sessions/s with 2 workers on PostgreSQL, >= 1.8x one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

from saturate.bench import pg_server
from saturate.bench.research import eval_corpus, load_jsonl
from saturate.graph import storage
from saturate.graph.batch import run_batch
from saturate.graph.paths import eval_data, home_dir
from saturate.sources import make_source
from saturate.state.argtypes import positive_int
from saturate.state.errors import BadInput
from saturate.state.settings import load_settings

TARGET_RATE = 40.0
TARGET_SPEEDUP = 1.8


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    p.add_argument(
        "--sessions", type=positive_int, default=300, help="tasks per cell (musique questions repeated; default 300)"
    )
    p.add_argument("--workers", default="1,2,4", help="worker counts to run (default 1,2,4)")
    p.add_argument("--backends", default="sqlite,postgres", help="sqlite, postgres or both (default: sqlite,postgres)")
    p.add_argument(
        "--database-url",
        dest="bench_database_url",
        help="an existing PostgreSQL to use (a database per cell is created there; default: start a throwaway one)",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")


def _tasks(data: Path, sessions: int, work: Path) -> tuple[Path, Path]:
    source = data / "musique" / "tasks.jsonl"
    corpus = data / "musique" / "corpus.jsonl"
    if not source.exists() or not corpus.exists():
        raise BadInput(f"the musique set is not at {data / 'musique'} (give --data DIR)")
    # bounded, a line at a time (state/files.py): a damaged line, a FIFO or a 2 GB file is one line, exit 2
    questions = load_jsonl(source)
    eval_corpus(corpus)
    if not questions or any(not isinstance(q.get("question"), str) or "id" not in q for q in questions):
        raise BadInput(f"{source}: every line needs an id and a question (the musique set's tasks)")
    lines = [
        json.dumps({"id": f"{q['id']}~{i // len(questions)}", "question": q["question"]})
        for i, q in ((i, questions[i % len(questions)]) for i in range(sessions))
    ]
    path = work / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, corpus


def _cell(tasks: Path, corpus: Path, workers: int, home: Path, url: str | None) -> dict:
    overrides = {"corpus": str(corpus)}
    with storage.using(url):
        if url:
            os.environ[storage.ENV] = url  # the workers read it from their environment
        try:
            report = run_batch(tasks, workers=workers, out=home / "out.jsonl", overrides=overrides, home=home)
        finally:
            os.environ.pop(storage.ENV, None)
    if report.failed or report.interrupted:
        raise RuntimeError(
            f"bench batch: {report.failed} failed, interrupted={report.interrupted}: {report.failures[:2]}"
        )
    return {
        "sessions": report.done,
        "seconds": round(report.elapsed_s, 2),
        "sessions_per_s": round(report.sessions_per_s, 1),
    }


def run(args) -> int:
    data = eval_data(args.data)
    counts = [int(w) for w in str(args.workers).split(",") if w.strip()]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not counts or any(not 1 <= w <= 64 for w in counts) or not set(backends) <= {"sqlite", "postgres"}:
        raise BadInput("--workers takes counts 1..64 (e.g. 1,2,4); --backends sqlite and/or postgres")
    if not 1 <= args.sessions <= 100_000:
        raise BadInput("--sessions must be between 1 and 100000")
    work = Path(tempfile.mkdtemp(prefix="saturate-bench-batch-"))
    server = None
    results: dict[str, dict[int, dict]] = {}
    try:
        tasks, corpus = _tasks(data, args.sessions, work)
        index_home = work / "index-home"
        make_source(load_settings({"corpus": str(corpus)}), home_dir(index_home)).close()  # built before the clock
        for backend in backends:
            base_url = None
            if backend == "postgres":
                if args.bench_database_url:
                    base_url = args.bench_database_url
                else:
                    try:
                        server = pg_server.start(fsync=True)
                    except pg_server.Unavailable as err:
                        print(f"postgres: skipped ({err})")
                        continue
            results[backend] = {}
            for workers in counts:
                home = work / f"{backend}-{workers}"
                shutil.copytree(index_home, home)
                url = None
                if backend == "postgres":
                    name = f"bench_{workers}_{os.getpid()}"
                    url = server.createdb(name) if server else _create_db(base_url or "", name)
                results[backend][workers] = _cell(tasks, corpus, workers, home, url)
                storage.close_pools()
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    figures = _figures(results, counts)
    if args.json:
        print(json.dumps({"sessions": args.sessions, "cpus": os.cpu_count(), "cells": figures}, indent=2))
    else:
        _print(figures, args.sessions)
    return 0


def _create_db(base_url: str, name: str) -> str:
    psycopg = storage.psycopg_module()
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return base_url.rsplit("/", 1)[0] + "/" + name


def _figures(results: dict[str, dict[int, dict]], counts: list[int]) -> list[dict]:
    out = []
    for backend, cells in results.items():
        one = cells.get(1, {}).get("sessions_per_s")
        for workers in counts:
            cell = cells[workers]
            out.append(
                {
                    "backend": backend,
                    "workers": workers,
                    **cell,
                    "speedup_vs_1": round(cell["sessions_per_s"] / one, 2) if one else None,
                }
            )
    return out


def _print(figures: list[dict], sessions: int) -> None:
    print(f"saturate batch throughput: {sessions} musique sessions per cell, {os.cpu_count()} CPUs, default settings")
    print(f"{'backend':<10} {'workers':>7} {'seconds':>8} {'sessions/s':>11} {'x 1 worker':>11}")
    for f in figures:
        speed = f"{f['speedup_vs_1']:.2f}" if f["speedup_vs_1"] is not None else "-"
        print(f"{f['backend']:<10} {f['workers']:>7} {f['seconds']:>8.1f} {f['sessions_per_s']:>11.1f} {speed:>11}")
    pg2 = next((f for f in figures if f["backend"] == "postgres" and f["workers"] == 2), None)
    if pg2 is not None:
        rate_ok = pg2["sessions_per_s"] >= TARGET_RATE
        speed_ok = (pg2["speedup_vs_1"] or 0) >= TARGET_SPEEDUP
        print(
            f"target: postgres, 2 workers >= {TARGET_RATE:g} sessions/s: {pg2['sessions_per_s']:.1f} "
            f"({'met' if rate_ok else 'NOT met'}); >= {TARGET_SPEEDUP:g}x one worker: {pg2['speedup_vs_1']} "
            f"({'met' if speed_ok else 'NOT met'})"
        )
