"""CLI glue for seeing what happened: ``saturate graph``, ``checkpoints``, ``fork``,
``show --html/--chart/--checkpoints`` and the live progress flags.

graph/cli.py calls ``add_commands`` / ``add_show_flags`` / ``add_progress_flags``
while building its parser and dispatches to ``COMMANDS`` and ``show_extras``.
"""

from __future__ import annotations

import argparse
import json
import sys

from saturate.state.settings import Settings


def add_progress_flags(p: argparse.ArgumentParser, quiet: bool = False) -> None:
    p.add_argument("--events", action="store_true",
                   help="write live progress as JSON lines on stderr (one object per event; for scripts, works with --json)")
    if quiet:
        p.add_argument("--quiet", action="store_true", help="print only the answer, no progress")


def add_show_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML report of the session (opens offline)")
    p.add_argument("--chart", metavar="FILE", help="write a PNG chart of novelty per round")
    p.add_argument("--checkpoints", action="store_true", help="list the session's checkpoints (as `saturate checkpoints`)")


def add_commands(sub, add_setting_flags) -> None:
    g = sub.add_parser("graph", help="write the graph diagram: Mermaid, Graphviz DOT, SVG and PNG (offline)")
    g.add_argument("--out", default=".", metavar="DIR", help="directory for the files (default: the current one)")
    g.add_argument("--name", default="saturate-graph", help="file name stem (default: saturate-graph)")
    g.add_argument("--format", dest="formats", action="append", choices=["mmd", "dot", "svg", "png"],
                   help="only these formats (repeatable; default: all four)")
    g.add_argument("--renderer", choices=["builtin", "graphviz"], default="builtin",
                   help="SVG/PNG renderer: builtin (Python only, the default) or graphviz (needs the `dot` program)")
    g.add_argument("--print", dest="print_mermaid", action="store_true", help="print the Mermaid text to stdout, write nothing")

    c = sub.add_parser("checkpoints", help="a session's checkpoints: id, step, node, next, round; fork points marked")
    c.add_argument("thread")
    c.add_argument("--json", action="store_true")

    f = sub.add_parser("fork", help="a new session from a session's round N with changed settings, run to the end")
    f.add_argument("thread", help="the session to fork (it is not changed)")
    f.add_argument("--round", type=int, required=True, metavar="N",
                   help="fork after round N: N's results and knowledge kept, round N+1 is planned with the new settings (0: from the start)")
    f.add_argument("--thread", dest="new_thread", metavar="NEW", help="thread id of the fork (default: THREAD-forkN-xxxx)")
    out = f.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the result as JSON")
    out.add_argument("--quiet", action="store_true", help="print only the answer")
    f.add_argument("--events", action="store_true", help="write live progress as JSON lines on stderr")
    add_setting_flags(f)


def _overrides(args) -> dict:
    return {n: getattr(args, f"setting_{n}") for n in Settings.model_fields if getattr(args, f"setting_{n}", None) is not None}


# ---------------------------------------------------------------- commands


def cmd_graph(args) -> int:
    from saturate.graph.views import diagram

    if args.print_mermaid:
        print(diagram.mermaid(), end="")
        return 0
    try:
        paths = diagram.write_diagrams(args.out, args.name, tuple(args.formats or diagram.FORMATS), args.renderer)
    except diagram.RendererError as exc:
        print(f"saturate: error: {exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


def print_checkpoints(thread: str, home, as_json: bool) -> int:
    from saturate.graph.timetravel import list_checkpoints

    rows = list_checkpoints(thread, home=home)
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"checkpoints of {thread} (oldest first)")
    for col in ("step", "checkpoint id", "written by", "next", "round", "knowledge", "sources", "time", "fork"):
        t.add_column(col, overflow="fold")
    for r in rows:
        fork = f"--round {r['fork_round']}" if r["fork_round"] is not None else ""
        t.add_row(str(r["step"]), r["checkpoint_id"], r["node"], ",".join(r["next"]) or "END", str(r["round"]),
                  str(r["knowledge_chars"]), str(r["accepted"]), (r["created_at"] or "")[11:23], fork)
    Console(highlight=False, width=max(140, Console().width)).print(t)
    points = sorted({r["fork_round"] for r in rows if r["fork_round"] is not None})
    print(f"fork points: saturate fork {thread} --round N [--<setting> VALUE ...] with N in {points}")
    return 0


def cmd_checkpoints(args) -> int:
    return print_checkpoints(args.thread, args.home, args.json)


def cmd_fork(args) -> int:
    from saturate.graph.cli import exit_code, print_result
    from saturate.graph.views.progress import make_progress
    from saturate.graph.timetravel import fork

    progress = make_progress(args)
    if progress is not None:
        from saturate.graph.api import session_state

        progress.task = session_state(args.thread, home=args.home).get("task", "")
    if progress is not None and progress.style == "rich":
        print(f"forking {args.thread} after round {args.round}", file=sys.stderr)
    try:
        new_thread, result, changes = fork(args.thread, args.round, new_thread=args.new_thread, home=args.home,
                                           stream_handler=progress, **_overrides(args))
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print(json.dumps({"thread": new_thread, "forked_from": args.thread, "fork_round": args.round,
                          "changes": changes, **result.model_dump()}, ensure_ascii=False, indent=2))
        return exit_code(result)
    print_result(result, new_thread, False, args.quiet)
    if not args.quiet:
        changed = ", ".join(f"{k} {v[0]!r} → {v[1]!r}" for k, v in changes.items()) or "no setting changed (a replay)"
        print(f"forked from {args.thread} after round {args.round}: {changed}")
    return exit_code(result)


def show_extras(args) -> int | None:
    """``show --html/--chart/--checkpoints``; None when none of them was asked for."""
    if not (getattr(args, "html", None) or getattr(args, "chart", None) or getattr(args, "checkpoints", False)):
        return None
    if args.checkpoints:
        print_checkpoints(args.thread, args.home, args.json)
    if args.html or args.chart:
        from saturate.graph.views import report

        view = report.load_session(args.thread, args.home)
        if args.html:
            path = report.write_html_view(view, args.html)
            print(f"wrote {path} ({len(view['records'])} rounds)")
        if args.chart:
            path = report.chart_view(view, args.chart)
            print(f"wrote {path}")
    return 0


COMMANDS = {"graph": cmd_graph, "checkpoints": cmd_checkpoints, "fork": cmd_fork}
