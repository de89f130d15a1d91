"""Figure 5, ``research_cold_s`` (<= 3 s): ``saturate research --retrieval lexical`` as a subprocess with a fresh
SATURATE_HOME (the FTS5 index build included; the one-time vector build of retrieval by meaning is figure
``vector_index_build_s``); baselines: the same warm (index in place), ``import saturate.graph.api`` (what the
command imports), bare python.
"""

from __future__ import annotations

import shlex
import statistics
import sys
from pathlib import Path

from saturate.bench.perf.common import (
    ROOT,
    SEED,
    Figure,
    baseline,
    clean_env,
    saturate_command,
    time_command,
    time_commands,
)

RESEARCH_TASK = "How does photosynthesis convert light into chemical energy?"
IMPORT_MODULE = "saturate.graph.api"  # the research stack: LangGraph, LangChain, the nodes and sources


def bench_research(work: Path, p: dict, shared: dict) -> Figure:
    base, exe_desc = saturate_command()
    # by words: the one-time vector build of a first session is its own figure (vector_index_build_s)
    cmd = base + ["research", RESEARCH_TASK, "--seed", str(SEED), "--quiet", "--retrieval", "lexical"]
    bare = [sys.executable, "-c", "pass"]
    imp = [sys.executable, "-c", f"import {IMPORT_MODULE}"]
    env0 = clean_env()
    if not p["quick"]:
        time_command(imp, env0)  # warm the OS file cache (cold means a fresh SATURATE_HOME, not a cold OS cache)
    cold_s = [time_command(cmd, clean_env(work / f"research-home-{i}")) for i in range(p["cold_runs"])]
    home = work / f"research-home-{p['cold_runs'] - 1}" if p["cold_runs"] else work
    runs = time_commands(  # interleaved: load bursts hit all three
        {"warm": (cmd, clean_env(home)), "import": (imp, env0), "bare": (bare, env0)},
        {"warm": p["warm_runs"], "import": p["import_runs"], "bare": p["import_runs"]},
    )
    warm_s, imp_s, bare_s = runs["warm"], runs["import"], runs["bare"]
    cold, warm, imp_m = statistics.median(cold_s), statistics.median(warm_s), statistics.median(imp_s)
    fig = Figure(
        key="research_cold_s",
        value=cold,
        unit="s",
        op="<=",
        limit=3,
        baselines={
            "research_warm_s": baseline(warm, "s"),
            "import_graph_s": baseline(imp_m, "s"),
            "python_startup_s": baseline(statistics.median(bare_s), "s"),
        },
        command=(
            f"SATURATE_HOME=<fresh tmp dir> {shlex.join(cmd)}  (cwd {ROOT}; median of {len(cold_s)} cold, "
            f"{len(warm_s)} warm with the index in place); baselines: {shlex.join(imp)}, {shlex.join(bare)}"
        ),
        details={
            "cold_runs_s": [round(x, 3) for x in cold_s],
            "warm_runs_s": [round(x, 3) for x in warm_s],
            "import_runs_s": [round(x, 3) for x in imp_s],
            "index_build_in_process_s": round(shared.get("wiki_build_s", float("nan")), 3),
            "cold_minus_warm_s": round(cold - warm, 3),
            "warm_minus_import_s": round(warm - imp_m, 3),
            "script": exe_desc,
        },
    )
    fig.notes.append(
        f"cold {cold:.2f} s vs warm {warm:.2f} s: {cold - warm:+.2f} s for the first run (index build, new "
        f"databases); `import {IMPORT_MODULE}` alone takes {imp_m:.2f} s. 'Cold' is a fresh SATURATE_HOME; "
        "the OS file cache is warm."
    )
    return fig


def bench_first_session(work: Path, p: dict, shared: dict) -> Figure:
    """Figure ``first_session_ratio`` (<= 3): the README's first command as a new user runs it — the default
    session (words and meaning, the shipped vectors taken) in a fresh SATURATE_HOME — over the same session warm.
    Cold and warm runs alternate, each cold one in a home of its own, so a burst of load hits both alike."""
    base, exe_desc = saturate_command()
    cmd = base + ["research", RESEARCH_TASK, "--seed", str(SEED), "--quiet"]
    runs = max(1, p["cold_runs"])
    warm_home = work / "first-session-warm"
    cold_s: list[float] = []
    warm_s: list[float] = []
    # a new user has no optimised model graphs either (state/onnx_cache.py): each first session writes its own
    warm_env = clean_env(warm_home, SATURATE_MODEL_CACHE=str(warm_home / "model-cache"))
    if p["quick"]:  # one pair: the first session in a fresh home, then the same home warm
        cold_s.append(time_command(cmd, warm_env))
        warm_s.append(time_command(cmd, warm_env))
    else:
        time_command(cmd, warm_env)  # the warm home's indexes, vectors and model graphs, in place before timing
        for i in range(runs):
            fresh = work / f"first-session-{i}"
            cold_s.append(time_command(cmd, clean_env(fresh, SATURATE_MODEL_CACHE=str(fresh / "model-cache"))))
            warm_s.append(time_command(cmd, warm_env))
    cold, warm = statistics.median(cold_s), statistics.median(warm_s)
    fig = Figure(
        key="first_session_ratio",
        value=cold / warm,
        unit="x",
        op="<=",
        limit=3,
        baselines={"first_session_s": baseline(cold, "s"), "warm_session_s": baseline(warm, "s")},
        command=(
            f"SATURATE_HOME=<fresh tmp dir> {shlex.join(cmd)} over the same in a home used before (cwd {ROOT}; "
            f"median of {runs} each, alternating)"
        ),
        details={
            "first_runs_s": [round(x, 3) for x in cold_s],
            "warm_runs_s": [round(x, 3) for x in warm_s],
            "script": exe_desc,
        },
    )
    fig.notes.append(
        f"first session {cold:.2f} s, warm {warm:.2f} s: the first builds the corpus's FTS5 index and takes the "
        "vectors that ship with saturate (sources/shipped_vectors.py) instead of embedding 10,033 summaries"
    )
    return fig
