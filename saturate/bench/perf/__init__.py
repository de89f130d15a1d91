"""Performance benchmark: fifteen figures, each measured against a baseline in the same run.

    saturate bench perf                           # the table (a full run takes about a minute on 2 cores)
    saturate bench perf --json                    # machine output: {figure: {value, unit, target, met, baselines, ...}}
    saturate bench perf --quick                   # fewer repetitions (the test uses this)
    saturate bench perf --only fts_search_p50_ms  # one figure (repeatable)
    saturate bench perf --profile graph           # cProfile of one workload instead of the table

or ``python -m saturate.bench.perf [same flags]``. The CLI calls ``add_arguments(parser)`` and
``run(args)``.

This is a report, not a test: it exits 0 when a target is missed and prints a ``MISSED`` line for it.
One module per figure (targets from the performance issue):

1. ``overhead``    ``graph_overhead_ms_per_round`` (<= 5 ms): LangGraph + SqliteSaver minus a plain loop
   of the same nodes (``plain_session``, which walks build_graph()'s own StateGraph), per round.
2. ``novelty``     ``heuristic_novelty_ms`` (<= 0.5 ms): session_novelty with the vocabulary precomputed;
   baseline: recomputed per call, and the whole node.
3. ``fts``         ``fts_search_p50_ms`` (<= 2 ms): FTS5 search on the embedded corpus (p90/p99 beside it);
   baseline: fetch by id.
4. ``cache``       ``cache_hit_ms`` (<= 1 ms): CachedSource hit; baseline: miss.
5. ``cold_start``  ``research_cold_s`` (<= 3 s): ``saturate research`` in a subprocess with a fresh
   SATURATE_HOME; baselines: warm, ``import saturate.graph.api``, bare python.
6. ``throughput``  ``sessions_per_s`` (>= 20/s): checkpointed sessions on threads / asyncio; baseline:
   the same batch sequentially.
7. ``cli_help``    ``saturate_help_s`` (<= 0.3 s): ``saturate --help`` in a subprocess; baseline:
   ``python -c pass``.

and ``vectors`` (three figures of retrieval by meaning), ``reader`` (``reader_added_ms``, ``brief_added_ms``),
``session_cpu`` (``session_cpu_s`` <= 1.5 s: the CPU of a warm default ``saturate research``, its imports' share
beside it; ``session_peak_rss_mb`` <= 400 MB: its peak memory). ``states`` is no figure: it digests the final
states of the benchmark's sessions, to show that a change to what they cost changed nothing they compute.

``common`` holds the Figure, formatting, the timing helpers every figure uses (``Stopwatch``,
``latencies_ms``, ``per_call_ms``, ``time_commands``), the inputs and the environment header; ``runner``
the flags, the run and the report; ``profiling`` the ``--profile`` workloads.

Everything is written to a temporary directory (``--workdir`` to keep it); the user's SATURATE_HOME is
never touched. Only the standard library is imported until a figure is measured: the CLI imports this
package to build its parser.
"""

from __future__ import annotations

from saturate.bench.perf.common import Figure
from saturate.bench.perf.overhead import plain_session
from saturate.bench.perf.runner import BENCHES, FIGURE_KEYS, PROFILES, add_arguments, main, run

__all__ = ["BENCHES", "FIGURE_KEYS", "PROFILES", "Figure", "add_arguments", "main", "plain_session", "run"]
