"""``saturate batch TASKS.jsonl``: many sessions over worker processes (see graph/batch.py).

A rich progress bar on stderr (done / running / failed / skipped, sessions per second); result lines go to the
``--out`` file as they finish; the summary is one line (``--json``: an object on stdout). Exit 0 when every task
finished, 1 when some failed (their errors are in the output file), 130 when interrupted (re-run the same command
to go on).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from saturate.cli.loading import engine_loading
from saturate.cli.output import EXIT_FAILED, EXIT_INTERRUPTED, say, stop_at_next_interrupt
from saturate.cli.settings import add_setting_flags, setting_overrides


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "tasks", type=Path, help='a JSONL file: one {"id"?, "question" | "task" | "claim", "settings"?} a line'
    )
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: the CPU count)")
    p.add_argument(
        "--out", type=Path, help="results as JSON lines, appended as tasks finish (default: TASKS.results.jsonl)"
    )
    p.add_argument("--thread-prefix", help="thread ids are PREFIX-<id> (default: the task file's name without .jsonl)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_setting_flags(p)


def cmd_batch(args: argparse.Namespace) -> int:
    with engine_loading():  # heavy: LangGraph, imported when the command runs
        from saturate.graph import run_batch

    out = args.out or args.tasks.with_name(args.tasks.name.removesuffix(".jsonl") + ".results.jsonl")
    show = _Bar() if not (args.quiet or args.json) else None
    try:
        report = run_batch(
            args.tasks,
            workers=args.workers,
            out=out,
            overrides=setting_overrides(args),
            home=args.home,
            prefix=args.thread_prefix,
            on_event=show,
        )
    finally:
        if show is not None:
            show.close()
    if report.interrupted:
        stop_at_next_interrupt()  # the pool's workers are still finishing their step: a second Ctrl-C leaves now
    if args.json:
        print(json.dumps(report.as_dict(), ensure_ascii=False))
    else:
        say(
            f"{report.done} finished ({report.resumed} resumed), {report.skipped} already done, {report.failed} "
            f"failed of {report.total} in {report.elapsed_s:.1f} s ({report.sessions_per_s:.1f} sessions/s); "
            f"results in {report.out}"
        )
        for f in report.failures[:5]:
            say(f"  failed {f['id']} ({f['thread']}): {f['error']}", file=sys.stderr)
    if report.broken:
        say(f"saturate: error: {report.broken}; what finished is kept — re-run the same command", file=sys.stderr)
        return EXIT_FAILED
    if report.interrupted:
        say(
            "saturate: interrupted; finished tasks are written and unfinished sessions checkpointed — "
            "re-run the same command to continue",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return EXIT_FAILED if report.failed else 0


class _Bar:
    """The live progress (rich, on stderr): a bar over the tasks and the counts."""

    def __init__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task = None
        self.running = 0

    def __call__(self, kind: str, report, row: dict | None) -> None:
        if kind == "start":
            self.progress.start()
            self.task = self.progress.add_task("batch", total=report.total, counts="")
        elif kind == "running" and row is not None:
            self.running = row["running"]
        if self.task is not None:
            finished = report.done + report.skipped + report.failed
            counts = (
                f"done {report.done} · running {self.running} · failed {report.failed} · skipped {report.skipped}"
                f" · {report.sessions_per_s:.1f} sessions/s"
            )
            self.progress.update(self.task, total=report.total, completed=finished, counts=counts)  # total: read so far

    def close(self) -> None:
        self.progress.stop()
