"""``reader_added_ms`` (<= 150 ms) and ``brief_added_ms`` (<= 100 ms): what the trained reader and the brief add to
a session's median.

The same questions (``vectors.SESSION_QUESTIONS`` and the first natural questions) run as in-process default
sessions on the embedded corpus: with the reader and no brief (``brief`` false: the reader answers in ``decide``)
against ``reader rules`` (the extractive rules answer, the gate reads nothing, no brief), and the default (reader and
brief) against the reader with no brief. Each figure is the difference of the two medians (the best of 2, the
reader's cache emptied before each pass, as in a new process); its baseline and the ratio are beside it.
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


def _medians(shared: dict, p: dict) -> dict[str, float]:
    """The median session (s) of each arm, the best of 2 passes; computed once for both figures."""
    if "reader_medians" in shared:
        return shared["reader_medians"]
    corpus = shared.get("wiki_vectors") or shared["wiki"]
    questions = session_questions(p["quick"])
    graph = build_graph()
    shipped_reader()  # loaded once per process, as in any session after the first

    def median(extra: dict) -> float:
        times = []
        for i, q in enumerate(questions):
            settings = load_settings({"seed": SEED + i, **extra}, env={})
            t0 = time.perf_counter()
            graph.invoke(initial_state(q, settings), context=Context(source=corpus))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    median({})  # warm: the page cache, the model's first runs
    arms = {"rules": {"reader": "rules", "brief": False}, "reader": {"brief": False}, "brief": {}}
    best: dict[str, float] = {}
    for _ in range(2):
        for name, extra in arms.items():  # alternating, so a busier moment weighs on every arm alike
            shipped_reader().forget()
            t = median(extra)
            best[name] = min(best.get(name, t), t)
    shared["reader_medians"] = {**best, "questions": len(questions)}
    return shared["reader_medians"]


def bench_reader(work: Path, p: dict, shared: dict) -> Figure:
    m = _medians(shared, p)
    without, with_reader = m["rules"], m["reader"]
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
        command=f"{m['questions']} questions as in-process default sessions on the embedded corpus, median, with the "
        "reader (no brief) against `reader rules` (best of 2; the reader's cache emptied before each pass)",
    )


def bench_brief(work: Path, p: dict, shared: dict) -> Figure:
    m = _medians(shared, p)
    without, with_brief = m["reader"], m["brief"]
    return Figure(
        key="brief_added_ms",
        value=(with_brief - without) * 1000,
        unit="ms",
        op="<=",
        limit=100,
        baselines={
            "session_without_brief_s": baseline(without, "s"),
            "session_with_brief_s": baseline(with_brief, "s"),
            "ratio": baseline(with_brief / without if without else 0.0, "x"),
        },
        command=f"{m['questions']} questions as in-process default sessions on the embedded corpus, median, the "
        "default (reader and brief) against `brief false` (best of 2; the reader's cache emptied before each pass)",
    )
