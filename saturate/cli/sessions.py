"""The commands that look at stored sessions: ``show`` (text, ``--json``, ``--html``, ``--md``, ``--chart``,
``--checkpoints``), ``runs`` and ``checkpoints`` (they read the checkpoints; nothing is run), and ``prune``
(removes old sessions, finished sessions' history and expired cache entries; see graph/prune.py).
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from saturate.cli.multi import show as show_multi
from saturate.cli.output import OutputNotWritten, print_json, round_block, say
from saturate.state.errors import BadInput
from saturate.state.files import output_path
from saturate.state.settings import Settings
from saturate.state.text import printable
from saturate.views.brief import brief_text
from saturate.views.progress import slot_line


def cmd_show(args: argparse.Namespace) -> int:
    extra = show_extras(args)  # --html / --chart / --checkpoints
    if extra is not None:
        return extra
    # heavy: LangGraph (the checkpointer), imported when the command runs
    from saturate import session_state

    state = session_state(args.thread, home=args.home)
    if args.json:
        print_json(state)
        return 0
    if state.get("kind") == "multi":  # loops, audit events, leads, trips, tagged result
        return show_multi(state, args.thread)
    settings = Settings.model_validate(state["settings"])
    task = state["task"]
    say(f"task: {task}")
    say(
        f"thread {args.thread} · source {settings.source} · mode {settings.mode} · seed {state['rng']['seed']} · "
        f"threshold {settings.novelty_threshold:g} · min/max rounds {settings.min_rounds}/{settings.max_rounds} · "
        f"epsilon {settings.novelty_epsilon:g}"
    )
    for rec in state.get("records") or []:
        say("\n".join(round_block(rec, task)))
    for p in state.get("pages") or []:
        say(f"enrich {p['status']}: {p['url']} (overlap {p['overlap']}) {p.get('reason', '')}".rstrip())
    if state.get("result"):
        say(f"\nanswer: {state['result']['answer']}")
        if state["result"].get("short_answer"):
            say(f"short answer: {state['result']['short_answer']}")
        if state["result"].get("brief"):
            say("brief:")
            for line in brief_text(state["result"]["brief"]):
                say(f"  {line}")
        for slot in (state["result"].get("debug") or {}).get("slots") or []:
            say(f"  slot {slot_line(slot)}")
        for s in state["result"]["sources"]:
            say(f"  [{s['n']}] {s['title']} — {s['url']}")
    elif state.get("_next"):
        say(f"\nnot finished: next step {', '.join(state['_next'])} — saturate resume {args.thread}")
    return 0


def show_extras(args: argparse.Namespace) -> int | None:
    """``show --html/--chart/--checkpoints``; None when none of them was asked for."""
    if not (args.html or args.chart or args.checkpoints or args.md):
        return None
    for flag in ("html", "md", "chart"):  # a folder, a FIFO, /dev/tty: one line before anything is read or printed
        if getattr(args, flag):
            output_path(getattr(args, flag), f"--{flag}", BadInput)
    if args.checkpoints:
        print_checkpoints(args.thread, args.home, args.json)
    if args.html or args.chart or args.md:
        # heavy: LangGraph (the checkpointer) and, for --chart, matplotlib; imported when asked for
        from saturate.views import report

        view = report.load_session(args.thread, args.home)
        if args.html:
            path = _written(args.html, lambda: report.write_html_view(view, args.html))
            say(f"wrote {path} ({report.summary(view)})")
        if args.md:
            from saturate.views.markdown import write_markdown_view

            path = _written(args.md, lambda: write_markdown_view(view, args.md))
            say(f"wrote {path} ({report.summary(view)})")
        if args.chart:
            # a multi-source session has no novelty rounds: what else was asked for is written first, then the
            # chart is refused (one line, exit 2)
            report.check_chart(view)
            path = _written(args.chart, lambda: report.chart_view(view, args.chart))
            say(f"wrote {path}")
    return 0


def _written(target: str, write):
    """``write()``'s path; an output path the user named that cannot be written (a folder, /proc/version, a
    read-only place) is bad input — one line, exit 2 — except a full disk (exit 1, as everywhere, with a line about
    the file: the session is finished or paused, not to be resumed for it). Missing folders of the path are made
    (each writer does, as ``graph --out`` and ``batch --out`` do)."""
    import errno

    try:
        return write()
    except OSError as exc:
        why = f"cannot write {printable(str(target))}: {exc.strerror or exc}"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            again = "the session is unchanged — free some space and run the command again"
            raise OutputNotWritten(f"{why}; {again}") from None
        raise BadInput(why) from None


def cmd_runs(args: argparse.Namespace) -> int:
    # heavy: LangGraph (the checkpointer), imported when the command runs
    from saturate.graph import list_sessions

    rows = list_sessions(home=args.home)
    if args.json:
        print_json(rows)
        return 0
    # heavy: rich, imported when a table is printed
    from rich.console import Console
    from rich.table import Table

    thread_w = max([len("thread")] + [len(printable(r["thread"])) for r in rows])
    task_w = max([len("task")] + [len(printable(r["task"][:80])) for r in rows])
    status_w = max([len("interrupted")] + [len(printable(r["status"])) for r in rows])
    stamp_w = len("2026-11-22 16:02:07")
    whole = thread_w + task_w + len("rounds") + status_w + stamp_w + 16  # 16: borders and padding
    # piped or redirected: every cell whole on one line (a pipe has no width; rich would assume 80 and cut the task
    # to "What …", issue 35). On a terminal: ids stay whole (to be copied) and a task, status or time too long for the
    # width wraps onto more lines instead of being cut (`--json` has them as stored)
    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        console = Console(highlight=False, soft_wrap=False, width=max(80, whole))
    t = Table(title="sessions")
    t.add_column("thread", no_wrap=True, min_width=thread_w)
    t.add_column("task", overflow="fold", ratio=3, min_width=min(task_w, 12))
    t.add_column("rounds", no_wrap=True)
    t.add_column("status", overflow="fold", ratio=1, min_width=min(status_w, 8))
    # local time to the second; on a narrow terminal the date above the time
    t.add_column("updated", min_width=len("2026-11-22"), max_width=stamp_w)
    for r in rows:
        t.add_row(
            printable(r["thread"]),
            printable(r["task"][:80]),
            str(r["rounds"]),
            printable(r["status"]),
            local_time(r["updated"]),
        )
    console.print(t)
    return 0


def local_time(stamp: str | None) -> str:
    """A checkpoint's time (ISO 8601, UTC, microseconds) as local time to the second: ``2026-11-22 16:02:07``
    (``--json`` keeps the stored value)."""
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:  # not ISO 8601: shown as stored
        return printable(stamp)
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def cmd_checkpoints(args: argparse.Namespace) -> int:
    return print_checkpoints(args.thread, args.home, args.json)


def print_checkpoints(thread: str, home, as_json: bool) -> int:
    """Every checkpoint of a session, oldest first, with the rounds a fork can start from."""
    # heavy: LangGraph (the checkpointer), imported when the command runs
    from saturate.graph import list_checkpoints

    rows = list_checkpoints(thread, home=home)
    if as_json:
        print_json(rows)
        return 0
    # heavy: rich, imported when a table is printed
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"checkpoints of {printable(thread)} (oldest first)")
    for col in ("step", "checkpoint id", "written by", "next", "round", "knowledge", "sources", "time", "fork"):
        t.add_column(col, overflow="fold")
    for r in rows:
        fork = f"--round {r['fork_round']}" if r["fork_round"] is not None else ""
        t.add_row(
            str(r["step"]),
            r["checkpoint_id"],
            r["node"],
            ",".join(r["next"]) or "END",
            str(r["round"]),
            str(r["knowledge_chars"]),
            str(r["accepted"]),
            (r["created_at"] or "")[11:23],
            fork,
        )
    Console(highlight=False, width=max(140, Console().width)).print(t)
    points = sorted({r["fork_round"] for r in rows if r["fork_round"] is not None})
    if points:
        say(f"fork points: saturate fork {printable(thread)} --round N [--<setting> VALUE ...] with N in {points}")
    else:  # a multi-source session (no rounds), or one stopped before its first round
        say(f"fork points: none — {printable(thread)} has no completed round to fork from")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    # heavy: LangGraph (the checkpointer), imported when the command runs
    from saturate.graph.prune import prune

    report = prune(home=args.home, older_than_days=args.older_than, compact=args.compact, dry_run=args.dry_run)
    if args.json:
        print_json(report.as_dict())
        return 0
    verb = "would remove" if report.dry_run else "removed"
    for s in report.deleted:
        say(f"{verb} session {s['thread']} ({s['status']}, updated {s['updated'] or '?'}): {s['task'][:70]}")
    if report.compacted:
        say(f"{verb} the history of {len(report.compacted)} finished session(s): {', '.join(report.compacted[:10])}")
    say(
        f"{verb}: {len(report.deleted)} session(s), {report.checkpoints_removed} checkpoint(s), "
        f"{report.cache_entries} expired cache entr{'y' if report.cache_entries == 1 else 'ies'}, "
        f"{report.pages} page(s), {len(report.damaged_files)} damaged file(s)"
    )
    for note in report.notes:
        say(f"note: {note}")
    if not report.dry_run:
        sizes = ", ".join(
            f"{name} {_mb(report.bytes_before.get(name, 0))} → {_mb(report.bytes_after.get(name, 0))}"
            for name in report.bytes_before
        )
        say(f"sizes: {sizes or 'no databases yet'}")
    if args.older_than is None and not args.compact:
        say("(sessions are kept: --older-than DAYS deletes old ones, --compact drops finished sessions' history)")
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def check_can_listen(host: str, port: int) -> None:
    """BadInput in one line when ``host:port`` cannot be listened on (a port in use, an address not of this machine,
    a privileged port): uvicorn found out only after start-up, logged it over several lines and exited 3, the code
    that means "every search failed". The socket is closed again at once; uvicorn binds it next (SO_REUSEADDR on
    both, as uvicorn sets it)."""
    import errno
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except socket.gaierror as err:
        raise BadInput(f"--host {host[:60]!r}: not an address of this machine ({err.strerror})") from None
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise BadInput(
                f"port {port} is in use on {host}: stop what listens there, or choose another --port"
            ) from None
        raise BadInput(f"cannot listen on {host} port {port}: {err.strerror or err}") from None


def cmd_mcp(args: argparse.Namespace) -> int:
    """``saturate mcp``: the MCP server (saturate/mcp.py), over stdio or, with ``--http``, streamable HTTP."""
    # heavy: the MCP SDK, LangGraph and LangChain, imported when the server starts
    import ipaddress
    import os
    import secrets

    from saturate.mcp import build_server, check_allowed_sources

    allowed = check_allowed_sources(args.allow_source)
    if not args.http:
        build_server(home=args.home, allowed_sources=allowed).run("stdio")
        return 0
    host = args.host.strip()
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not args.allow_remote:
        raise BadInput(
            f"--host {host[:60]!r} is reachable from other machines: add --allow-remote to serve there (with a token)"
        )
    if args.no_token and not loopback:
        raise BadInput("--no-token is only for a loopback --host (127.0.0.1, ::1, localhost)")
    check_can_listen(host, args.port)
    token = None if args.no_token else (args.token or os.environ.get("SATURATE_MCP_TOKEN") or None)
    generated = token is None and not args.no_token
    if generated:
        token = secrets.token_urlsafe(32)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{args.port}/mcp"
    server = build_server(home=args.home, allowed_sources=allowed, token=token, url=url)
    say(f"saturate MCP server at {url} (streamable HTTP)", file=sys.stderr)
    if not loopback:
        say(
            f"WARNING: listening on {host}, reachable from other machines; only token holders are served",
            file=sys.stderr,
        )
    if generated:
        say(f"clients send the header  Authorization: Bearer {token}  (generated for this run)", file=sys.stderr)
    elif args.no_token:
        say("no token (--no-token): any local process may call the tools", file=sys.stderr)
    server.run("streamable-http", host=host, port=args.port)
    return 0
