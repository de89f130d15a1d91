"""The ``saturate`` command line (the console script is ``saturate.cli:main``).

    saturate research "TASK" [--source local|ddg] [--corpus FILE] [--mode ...] [--<setting> VALUE ...] [--thread ID]
    saturate verify "CLAIM" | resume THREAD | fork THREAD --round N
    saturate show THREAD | runs | checkpoints THREAD | prune | graph | settings [--markdown]
    saturate bench [research|perf|model|verify|multi] | monitor

Modules: ``parser`` (every command and flag), ``settings`` (the ``--<setting>`` flags and
``saturate settings``), ``research`` (the commands that run a session), ``multi`` (their
multi-source form and its ``show``), ``sessions`` (show, runs, checkpoints), ``diagram``
(graph), ``bench``, ``monitor``, ``output`` (printing and exit codes).

Starting is fast: nothing here imports LangGraph, LangChain, matplotlib or rich at module
level; a command imports them when it runs.

Exit codes: 0 done, 2 bad input (empty/oversized task, invalid setting, unknown source,
missing corpus, unknown thread: one line on stderr), 3 finished with no results because every
search failed (the errors are printed and recorded), 130 interrupted, 1 a full or failing disk
(one line: free space, then resume) or an unexpected failure (its traceback).
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys

from saturate import _interrupted_early  # the command's Ctrl-C while it loads (saturate/__init__.py)
from saturate.cli.batch import cmd_batch
from saturate.cli.bench import cmd_bench
from saturate.cli.diagram import cmd_graph
from saturate.cli.monitor import run as cmd_monitor
from saturate.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    OutputNotWritten,
    damaged_file_problem,
    database_problem,
    disk_problem,
    say,
    stop_at_next_interrupt,
    use_database,
)
from saturate.cli.parser import build_parser
from saturate.cli.research import cmd_fork, cmd_research, cmd_resume, cmd_verify
from saturate.cli.sessions import cmd_checkpoints, cmd_mcp, cmd_prune, cmd_runs, cmd_show
from saturate.cli.settings import cmd_settings
from saturate.state.errors import BadInput
from saturate.state.text import printable

__all__ = ["main"]

_PATH_ERRNOS = {
    errno.EISDIR,
    errno.ENOTDIR,
    errno.EEXIST,
    errno.EACCES,
    errno.EPERM,
    errno.ENOENT,
    errno.EROFS,
    errno.ENAMETOOLONG,
}

COMMANDS = {
    "research": cmd_research,
    "verify": cmd_verify,
    "resume": cmd_resume,
    "fork": cmd_fork,
    "show": cmd_show,
    "runs": cmd_runs,
    "prune": cmd_prune,
    "checkpoints": cmd_checkpoints,
    "graph": cmd_graph,
    "batch": cmd_batch,
    "bench": cmd_bench,
    "monitor": cmd_monitor,
    "settings": cmd_settings,
    "mcp": cmd_mcp,
}


SESSION_COMMANDS = ("research", "verify", "resume", "fork")  # commands that run one session under ``args.thread``


def interrupted(args: argparse.Namespace) -> str:
    """What a Ctrl-C means, said as it is: a session's command says whether the session finished, has steps saved
    (resume it) or none yet (nothing to resume: run it again); any other command was just interrupted."""
    thread = getattr(args, "thread", None)  # research, verify, resume and fork set it before the session starts
    if args.command == "batch":
        return "saturate: interrupted; run the same batch command again to go on (finished tasks are skipped)"
    if args.command not in SESSION_COMMANDS:
        return "saturate: interrupted"
    if not (isinstance(thread, str) and thread):
        return "saturate: interrupted before the session started; nothing was saved — run the command again"
    status = saved_status(thread, args)
    if status == "done":  # Ctrl-C after the last step (while the result printed): done, not interrupted
        return (
            f"saturate: interrupted while printing; the session {printable(thread)} had finished — "
            f"`saturate show {printable(thread)}` prints it"
        )
    if status is None:
        return (
            f"saturate: interrupted before the session {printable(thread)} saved its first step; nothing to resume "
            "— run the command again"
        )
    return (
        f"saturate: interrupted; the session is checkpointed — continue it with `saturate resume {printable(thread)}`"
    )


def saved_status(thread: str, args: argparse.Namespace) -> str | None:
    """The session's status from its checkpoints: None when it has none, "unknown" when they cannot be read. A new
    session (research, verify) interrupted while the session code was still loading never started: None, without
    asking a library left half loaded (numpy cannot load twice; asking failed, and "unknown" said "checkpointed")."""
    if args.command in ("research", "verify") and "saturate.graph.api" not in sys.modules:
        return None
    try:
        from saturate import session_state  # loaded already: the session ran in this process

        return str(session_state(thread, home=getattr(args, "home", None)).get("_status") or "saved")
    except BadInput:  # no such session: nothing was saved
        return None
    except Exception:  # the store cannot be read (a lost database, a full disk): what was saved stays unknown
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    script = signal.getsignal(signal.SIGINT) is _interrupted_early  # the command itself (saturate/__init__.py)
    args = build_parser().parse_args(argv)  # a Ctrl-C here, in the command: the early handler's line (nothing ran)
    try:
        if script:  # from here a Ctrl-C is a KeyboardInterrupt, said below as what it means
            signal.signal(signal.SIGINT, signal.default_int_handler)
        code = _run(args)
        if script and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            # done: a Ctrl-C while Python shuts down is ignored — its handler would be Python's default again by
            # then and end the process with -2 (SIGINT) although everything was done (a command that set its own
            # handler for this moment, batch's "a second Ctrl-C stops at once", keeps it)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return code
    except KeyboardInterrupt:  # whenever it lands once the command runs: one line, 130
        stop_at_next_interrupt()
        say(interrupted(args), file=sys.stderr)
        return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    try:
        use_database(getattr(args, "database_url", None))
        return COMMANDS[args.command](args)
    except BadInput as exc:
        say(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OutputNotWritten as exc:  # a report that did not fit on the disk: exit 1, said of the file
        say(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `saturate ... | head`: the reader left; stop quietly, as a shell tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's exit flush would raise again on the closed pipe
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        bad_input = output_path_problem(exc, args) or damaged_file_problem(exc, getattr(args, "home", None))
        if bad_input is not None:  # the user's to fix: a path named for output, a damaged file of theirs
            say(bad_input, file=sys.stderr)
            return EXIT_BAD_INPUT
        message = disk_problem(exc) or disk_problem(exc.__cause__ or exc.__context__ or exc) or database_problem(exc)
        if message is None:
            raise  # a bug: the traceback is what a report needs
        if args.command == "batch":  # a batch goes on by running it again, not by resuming a thread of it
            message = message.replace(
                "continue with `saturate resume THREAD` (`saturate runs` lists them)",
                "run the same batch command again (finished tasks are skipped)",
            )
        thread = getattr(args, "thread", None)
        if isinstance(thread, str) and thread:
            nothing = args.command in SESSION_COMMANDS and saved_status(thread, args) is None
            if nothing and "saturate resume THREAD" in message:  # nothing was saved: nothing to resume
                message = (
                    message.split("; every step")[0]
                    + f"; the session {printable(thread)} saved no step — fix that, then run the command again"
                )
            message = message.replace("saturate resume THREAD", f"saturate resume {printable(thread)}")
        say(message, file=sys.stderr)
        return EXIT_FAILED


def output_path_problem(exc: BaseException, args) -> str | None:
    """One line for a path the user named for output (show --html/--md/--chart, graph --out) that cannot be
    written, else None."""
    if not (isinstance(exc, OSError) and args.command in ("show", "graph") and exc.filename):
        return None
    if exc.errno not in _PATH_ERRNOS:
        return None
    hint = " (--out takes a folder)" if args.command == "graph" else ""
    return f"saturate: error: cannot write {printable(str(exc.filename))}: {exc.strerror}{hint}"
