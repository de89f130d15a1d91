"""``reader_added_ms`` (<= 150 ms): what the trained reader adds to a session's median.

The same questions (``vectors.SESSION_QUESTIONS`` and the first natural questions) run as in-process default
sessions on the embedded corpus twice: with the reader (the default: it reads in the gate every round and answers in
``decide``) and without it (``reader rules``: the extractive rules answer and the gate reads nothing). The figure is
the difference of the two medians; the baseline is the session without the reader, and the ratio is beside it.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from saturate.bench.perf.common import SEED, Figure, baseline
from saturate.bench.perf.vectors import session_questions
from saturate.graph.build import build_graph
from saturate.nodes.reading.reader import shipped_reader
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings


def bench_reader(work: Path, p: dict, shared: dict) -> Figure:
    corpus = shared.get("wiki_vectors") or shared["wiki"]
    questions = session_questions(p["quick"])
    graph = build_graph()
    shipped_reader()  # loaded once per process, as in any session after the first

    def medians(extra: dict) -> float:
        times = []
        for i, q in enumerate(questions):
            settings = load_settings({"seed": SEED + i, **extra}, env={})
            t0 = time.perf_counter()
            graph.invoke(initial_state(q, settings), context=Context(source=corpus))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    medians({})  # warm: the page cache, the model's first runs
    shipped_reader().forget()  # the reader's cache starts empty, as in a new process
    without = min(medians({"reader": "rules"}) for _ in range(2))
    runs = []
    for _ in range(2):
        shipped_reader().forget()
        runs.append(medians({}))
    with_reader = min(runs)
    return Figure(
        key="reader_added_ms",
        value=(with_reader - without) * 1000,
        unit="ms",
        op="<=",
        limit=150,
        baselines={
            "session_without_reader_s": baseline(without, "s"),
            "session_with_reader_s": baseline(with_reader, "s"),
            "ratio": baseline(with_reader / without if without else 0.0, "x"),
        },
        command=f"{len(questions)} questions as in-process default sessions on the embedded corpus, median, with the "
        "reader against `reader rules` (best of 2; the reader's cache emptied before each pass)",
    )
