"""The runner: which figures there are, the flags, the run (one measurement module per figure), the table
and the report text."""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from saturate.bench.perf.cache import bench_cache
from saturate.bench.perf.cli_help import bench_help
from saturate.bench.perf.cold_start import bench_first_session, bench_research
from saturate.bench.perf.common import (
    PLAN,
    CpuWatch,
    Figure,
    Stopwatch,
    command_line,
    fmt,
    header,
    log,
    task_corpus,
    task_corpus_file,
)
from saturate.bench.perf.fts import bench_fts
from saturate.bench.perf.novelty import bench_novelty
from saturate.bench.perf.overhead import bench_graph_overhead
from saturate.bench.perf.profiling import PROFILES, profile
from saturate.bench.perf.reader import bench_brief, bench_reader
from saturate.bench.perf.session_cpu import bench_session_cpu, bench_session_rss
from saturate.bench.perf.throughput import bench_sessions
from saturate.bench.perf.vectors import bench_hybrid_sessions, bench_vector_build, bench_vector_search
from saturate.sources import open_wiki
from saturate.state.errors import BadInput
from saturate.state.files import user_path

DESCRIPTION = "Performance benchmark: fifteen figures, each measured against a baseline in the same run."

BENCHES: list[tuple[str, Callable[[Path, dict, dict], Figure]]] = [
    ("graph_overhead_ms_per_round", bench_graph_overhead),
    ("heuristic_novelty_ms", bench_novelty),
    ("fts_search_p50_ms", bench_fts),
    ("cache_hit_ms", bench_cache),
    ("research_cold_s", bench_research),
    ("first_session_ratio", bench_first_session),
    ("sessions_per_s", bench_sessions),
    ("saturate_help_s", bench_help),
    ("vector_index_build_s", bench_vector_build),
    ("vector_search_p50_ms", bench_vector_search),
    ("hybrid_session_ratio", bench_hybrid_sessions),
    ("reader_added_ms", bench_reader),
    ("brief_added_ms", bench_brief),
    ("session_cpu_s", bench_session_cpu),
    ("session_peak_rss_mb", bench_session_rss),
]
FIGURE_KEYS = [k for k, _ in BENCHES]


def shared_inputs(work: Path) -> dict:
    """What several figures use: the embedded corpus (its index built here, timed) and the task corpus."""

    with Stopwatch() as sw:
        wiki = open_wiki(work / "index")
    corpus = task_corpus_file()
    task_source, desc = task_corpus(work / "index", corpus)
    return {
        "wiki": wiki,
        "wiki_build_s": sw.seconds,
        "task_source": task_source,
        "task_corpus_desc": desc,
        "task_corpus_file": corpus,  # what worker processes open (sessions_per_s): the same corpus
    }


def table(figs: list[Figure]) -> list[str]:
    rows = [("figure", "value", "unit", "target", "met", "baseline")]
    for f in figs:
        base = "; ".join(f"{k} {fmt(v['value'], v['unit'])}" for k, v in f.baselines.items())
        rows.append((f.key, fmt(f.value), f.unit, f.target, "yes" if f.met else "NO", base))
        rows += [(f"  {name}", fmt(value), unit, "-", "-", "") for name, value, unit in f.extra_rows]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(widths[i]) if i < 5 else c for i, c in enumerate(r)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths) + "  --------")
    return out


def report(args, work: Path, figs: list[Figure], elapsed: float, busy: str = "") -> str:
    lines = [*header(args, work), f"  {busy}" if busy else "", "", *table(figs), ""]
    for f in figs:
        lines.append(f"{f.key}: {fmt(f.value, f.unit)} (target {f.target}) {'met' if f.met else 'MISSED'}")
        lines.append(f"  how:  {f.command}")
        lines.extend(f"  note: {note}" for note in f.notes)
    missed = [f for f in figs if not f.met]
    lines.append("")
    lines.extend(f"MISSED {f.key}: {fmt(f.value, f.unit)}, target {f.target}" for f in missed)
    lines.append(f"{len(figs) - len(missed)}/{len(figs)} targets met · {elapsed:.1f} s")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the figures as JSON (progress goes to stderr)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run, e.g. for tests)")
    parser.add_argument(
        "--workdir", help="directory for the benchmark's databases and indexes (default: a temp dir, removed)"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=FIGURE_KEYS,
        metavar="FIGURE",
        help=f"measure only this figure (repeatable): {', '.join(FIGURE_KEYS)}",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        help="instead of the table, print a cProfile of one workload: " + ", ".join(PROFILES),
    )


def _measure(work: Path, p: dict, shared: dict, only: list[str]) -> list[Figure]:
    figs: list[Figure] = []
    for i, (key, bench) in enumerate(BENCHES, start=1):
        if key not in only:
            continue
        # the harness's own objects (corpus records, earlier results) are frozen out of the
        # garbage collector's scans so they do not slow the code being measured
        gc.collect()
        gc.freeze()
        try:
            with Stopwatch() as sw:
                fig = bench(work, p, shared)
        finally:
            gc.unfreeze()
        figs.append(fig)
        log(
            f"[{i}/{len(BENCHES)}] {key} = {fmt(fig.value, fig.unit)} "
            f"({'met' if fig.met else 'MISSED'}, target {fig.target}) in {sw.seconds:.1f} s"
        )
    return figs


def work_folder(workdir: str) -> Path:
    """``--workdir`` made (or found) as a folder; BadInput, one line, when it cannot be: an existing file or
    device (``--workdir /dev/null``), a parent that is not a folder, no permission."""
    work = user_path(workdir, "--workdir", BadInput, resolve=True)  # ~name of no user, a link loop: one line
    try:
        work.mkdir(parents=True, exist_ok=True)  # FileExistsError when work is anything but a folder
    except FileExistsError:
        raise BadInput(f"--workdir {workdir} exists and is not a folder; it takes a folder") from None
    except OSError as exc:
        raise BadInput(f"--workdir {workdir} cannot be used ({getattr(exc, 'strerror', None) or exc})") from None
    return work


def run(args: argparse.Namespace) -> int:
    quick = bool(getattr(args, "quick", False))
    as_json = bool(getattr(args, "json", False))
    workdir = getattr(args, "workdir", None)
    keep = workdir is not None
    work = work_folder(workdir) if keep else Path(tempfile.mkdtemp(prefix="saturate-perf-"))
    try:
        if getattr(args, "profile", None):
            print("\n".join(header(args, work)) + "\n")
            print(profile(args.profile, work, quick, shared_inputs(work)))
            return 0
        watch = CpuWatch()
        with Stopwatch() as total:
            if as_json:
                for line in header(args, work):
                    log(line)
            figs = _measure(work, PLAN[quick], shared_inputs(work), getattr(args, "only", None) or FIGURE_KEYS)
        others = watch.others()
        busy = (
            f"other processes kept {others:.2f} of {os.cpu_count()} CPUs busy during the run"
            + (": the machine was shared, figures are noisy" if others > 0.25 else "")
            if others is not None
            else "CPU use of other processes unknown (no /proc/stat)"
        )
        if as_json:
            cmd = getattr(args, "command_line", None) or command_line()
            out = {}
            for f in figs:
                out[f.key] = {**f.as_json(), "command_line": cmd}
                out[f.key]["details"]["machine"] = busy
            print(json.dumps(out, indent=2, ensure_ascii=False))
            log(busy)
        else:
            print(report(args, work, figs, total.seconds, busy))
        return 0
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m saturate.bench.perf", description=DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args(argv))
