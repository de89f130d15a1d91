"""The performance benchmark (saturate/bench/perf/, one module per figure) runs end to end and reports every figure.

Structure only: no timing target is asserted here (timings belong in the report,
not in pass/fail). Without ../shared/data the benchmark falls back to the
embedded corpus, so nothing is skipped.
"""

from __future__ import annotations

import argparse
import json
import math

import pytest

FIGURES = {
    "graph_overhead_ms_per_round",
    "heuristic_novelty_ms",
    "fts_search_p50_ms",
    "cache_hit_ms",
    "research_cold_s",
    "first_session_ratio",
    "sessions_per_s",
    "saturate_help_s",
    "vector_index_build_s",
    "vector_search_p50_ms",
    "hybrid_session_ratio",
    "reader_added_ms",
    "brief_added_ms",
    "session_cpu_s",
    "session_peak_rss_mb",
}
ADDED = {"reader_added_ms", "brief_added_ms"}  # differences of two medians: near 0, either sign, on a busy machine


@pytest.mark.slow
def test_perf_quick_json_reports_every_figure(home, tmp_path, capsys):
    from saturate.bench import perf

    parser = argparse.ArgumentParser()
    perf.add_arguments(parser)
    args = parser.parse_args(["--quick", "--json", "--workdir", str(tmp_path / "perf")])
    assert perf.run(args) == 0

    out = json.loads(capsys.readouterr().out)
    assert set(out) == FIGURES == set(perf.FIGURE_KEYS)
    for key, fig in out.items():
        assert isinstance(fig["value"], float) and math.isfinite(fig["value"]), key
        assert fig["value"] > 0 or key in ADDED, key
        assert isinstance(fig["unit"], str) and fig["unit"], key
        assert isinstance(fig["target"], str) and fig["target"].startswith(("<=", ">=")), key
        assert isinstance(fig["met"], bool), key
        assert fig["baselines"], f"{key} has no baseline"
        for name, base in fig["baselines"].items():
            assert isinstance(base["value"], float) and base["value"] > 0 and base["unit"], (key, name)
        assert fig["command"] and fig["command_line"], key
    # the baseline loop does the graph's work: same rounds, records and answer
    assert out["graph_overhead_ms_per_round"]["details"]["plain_loop_reproduces_graph_result"] is True
    # `saturate --help` is timed beside bare python, in the same run
    assert set(out["saturate_help_s"]["baselines"]) == {"python_startup_s"}
    assert out["saturate_help_s"]["target"] == "<= 0.3 s"
    # the cut of the models' optimised graphs, measured in the same run: the sessions without them beside
    assert "without_model_graphs_cpu_s" in out["session_cpu_s"]["baselines"]
    assert "without_model_graphs_peak_rss_mb" in out["session_peak_rss_mb"]["baselines"]
    kept = sorted(p.name.split("-")[0] for p in (tmp_path / "perf" / "session-cpu-models").glob("*.onnx"))
    assert kept == ["embedding", "reader"], kept  # in the work directory, not the user's cache
    # the benchmark writes only to its work directory, never to SATURATE_HOME
    assert not home.exists() or not any(home.iterdir())


def test_the_graph_overhead_is_measured_inside_each_session_and_cannot_go_negative(musique_source):
    """Figure 1 is a session's wall time minus the time in its own node functions, timed where the compiled graph
    calls them: the timed graph gives the plain graph's result, and the node time is part of the wall time."""
    import time

    from saturate.bench.perf.overhead import _NodeClock, _strip, _timed_nodes, fixed_settings
    from saturate.graph.build import build_graph
    from saturate.state.context import Context
    from saturate.state.graph_state import initial_state

    settings = fixed_settings()
    task = "Which waterfall is in the country where the Bubye River flows?"
    clock = _NodeClock()
    timed = _timed_nodes(build_graph(), clock)
    assert _timed_nodes(timed, clock) is timed  # wrapping twice times once
    t0 = time.perf_counter()
    got = timed.invoke(initial_state(task, settings), context=Context(source=musique_source))
    wall = time.perf_counter() - t0
    plain = build_graph().invoke(initial_state(task, settings), context=Context(source=musique_source))
    assert 0 < clock.seconds <= wall
    assert _strip(got["records"]) == _strip(plain["records"]) and got["result"]["answer"] == plain["result"]["answer"]


def test_session_cpu_replays_the_top_level_imports_a_session_made():
    """session_cpu_s's import share imports again what `-X importtime` saw a session import at the top of its import
    stack, in order, each once, without any __main__ (it would run), skipping one that fails (it failed there too)."""
    import subprocess
    import sys

    from saturate.bench.perf.session_cpu import import_replay_code, imported_modules

    importtime = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:        10 |         10 |     encodings.aliases",
            "import time:        20 |         30 |   encodings",
            "import time:        40 |         70 | json",
            "import time:         5 |          5 | saturate.cli.__main__",
            "import time:         7 |          7 |   json.decoder",
            "import time:         9 |         16 | no_such_module_at_all",
            "import time:         1 |          1 | json",
            "a line that is not an import time",
        ]
    )
    modules = imported_modules(importtime)
    assert modules == ["json", "no_such_module_at_all"]
    code = import_replay_code(modules) + (
        "\nimport sys\nprint('json' in sys.modules, gc.isenabled(), gc.get_freeze_count() > 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # as the command imports its engine (saturate/cli/loading.py): the collector paused, the imports then frozen
    assert out.split() == ["True", "True", "True"]


def test_a_commands_peak_memory_is_its_own_not_the_benchmarks():
    """Linux keeps a process's peak RSS across fork and exec: started straight from a large benchmark process, a small
    command reported the benchmark's peak (2,239 MB for a 373 MB session). Through the launcher it reports its own."""
    import os
    import sys

    from saturate.bench.perf.session_cpu import cpu_and_rss

    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"\1" * len(ballast[::4096])  # touched: resident
    cpu, peak = cpu_and_rss(
        [sys.executable, "-c", "x = bytearray(50 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"], dict(os.environ)
    )
    del ballast
    assert 50 <= peak < 200, peak  # its own 50 MB and the interpreter, not this process's 300 MB
    assert cpu > 0
