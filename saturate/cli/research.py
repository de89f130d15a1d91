"""The commands that run a session: ``research`` (one source, or several with ``--multi`` /
``--sources``), ``verify``, ``resume`` and ``fork``.

Live progress goes to stderr (``views.progress``), the result to stdout (``output``). Settings
are validated before LangGraph is imported, so a bad flag is reported at once.
"""

from __future__ import annotations

import argparse
import sys

from saturate.cli.loading import engine_loading
from saturate.cli.multi import run_research as run_multi_research
from saturate.cli.multi import wants_multi
from saturate.cli.output import exit_code, print_json, print_result, say
from saturate.cli.review import ask, decision_from_args, interactive, print_waiting
from saturate.cli.settings import setting_overrides, settings_from_args
from saturate.state.task import checked_task
from saturate.views.progress import make_progress


def cmd_research(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    checked_task(args.task, settings.task_max_chars)  # bad input in a fraction of a second, before LangGraph loads
    if wants_multi(args):  # --multi or --sources: the multi-source graph (graph/build_multi.py)
        return run_multi_research(args, settings)
    with engine_loading():  # heavy: LangGraph and LangChain, imported when a session runs
        from saturate import research
        from saturate.graph import check_thread, new_thread_id

    task = args.task  # research() checks it too: bad input fails before any progress line is shown
    thread = args.thread = new_thread_id() if args.thread is None else check_thread(args.thread)
    live = make_progress(args, task)  # rich lines on stderr; --events: JSON lines; --json/--quiet: none
    if live is not None:  # shown with the first event: bad input found while opening sources stays one line
        live.header = f"thread {thread} · source {settings.source} · mode {settings.mode}"
    try:
        result = research(args.task, thread_id=thread, home=args.home, settings=settings, stream_handler=live)
    finally:
        if live is not None:
            live.close()
    result, waiting = settle(result, thread, args, task)
    if waiting is not None:
        return waiting
    print_result(result, thread, args.json, args.quiet)
    return exit_code(result)


def settle(result, thread: str, args: argparse.Namespace, task: str):
    """(result, None), or (result, exit code) when the session is left waiting for a review: on a terminal each
    review point is asked (saturate/cli/review.py) and the session resumed with the decision, until it ends."""
    from saturate import resume  # heavy: as above

    while result.outcome == "review":
        decision = ask(result.review or {}) if interactive(args) else None
        if decision is None:
            return result, print_waiting(result, thread, args.json)
        live = make_progress(args, task)
        try:
            result = resume(thread, home=args.home, stream_handler=live, review=decision)
        finally:
            if live is not None:
                live.close()
    return result, None


def cmd_verify(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    checked_task(args.claim, settings.task_max_chars)  # as cmd_research: before LangGraph loads
    with engine_loading():  # heavy: LangGraph and LangChain, imported when a session runs
        from saturate import verify
        from saturate.graph import check_thread, new_thread_id

    # verify() checks the claim too: bad input fails before any progress line is shown
    thread = args.thread = new_thread_id() if args.thread is None else check_thread(args.thread)
    live = make_progress(args, args.claim)
    try:
        result = verify(args.claim, thread_id=thread, home=args.home, settings=settings, stream_handler=live)
    finally:
        if live is not None:
            live.close()
    result, waiting = settle(result, thread, args, args.claim)
    if waiting is not None:
        return waiting
    if args.json:
        print_json({"thread": thread, **result.model_dump()})
    elif args.quiet:
        say(result.outcome)
    else:
        say(result.proof)
        for note in result.debug.get("notes") or []:
            say(f"note: {note}")
        say(f"\nthread: {thread}   (saturate show {thread})")
    return exit_code(result)


def cmd_resume(args: argparse.Namespace) -> int:
    with engine_loading():  # heavy: LangGraph and LangChain, imported when a session runs
        from saturate import resume, session_state

    state = session_state(args.thread, home=args.home)
    waiting = state.get("_review")
    decision = decision_from_args(args, waiting.get("point") if waiting else None)
    if waiting and decision is None:  # the question again: asked on a terminal, else printed (exit 4)
        from saturate.graph import result_of

        result, code = settle(result_of(state, args.thread), args.thread, args, state.get("task", ""))
    else:
        live = make_progress(args)
        if live is not None:
            live.task = state.get("task", "")
            if live.style == "rich" and state.get("_next"):
                say(
                    f"resuming {args.thread} at {', '.join(state['_next'])} (round {state.get('round', 0)})",
                    file=sys.stderr,
                )
        try:
            result = resume(args.thread, home=args.home, stream_handler=live, review=decision)
        finally:
            if live is not None:
                live.close()
        result, code = settle(result, args.thread, args, state.get("task", ""))
    if code is not None:
        return code
    print_result(result, args.thread, args.json, args.quiet)
    return exit_code(result)


def cmd_fork(args: argparse.Namespace) -> int:
    """``saturate fork THREAD --round N``: a new session from round N with the --<setting> flags given."""
    with engine_loading():  # heavy: LangGraph and LangChain, imported when a session runs
        from saturate import session_state
        from saturate.graph import fork

    progress = make_progress(args)
    if progress is not None:
        progress.task = session_state(args.thread, home=args.home).get("task", "")
    if progress is not None and progress.style == "rich":
        say(f"forking {args.thread} after round {args.round}", file=sys.stderr)
    try:
        new_thread, result, changes = fork(
            args.thread,
            args.round,
            new_thread=args.new_thread,
            home=args.home,
            stream_handler=progress,
            **setting_overrides(args),
        )
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print_json(
            {
                "thread": new_thread,
                "forked_from": args.thread,
                "fork_round": args.round,
                "changes": changes,
                **result.model_dump(),
            }
        )
        return exit_code(result)
    print_result(result, new_thread, False, args.quiet)
    if not args.quiet:
        changed = ", ".join(f"{k} {v[0]!r} → {v[1]!r}" for k, v in changes.items()) or "no setting changed (a replay)"
        say(f"forked from {args.thread} after round {args.round}: {changed}")
    return exit_code(result)
