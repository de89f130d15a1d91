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
import sys

from saturate.cli.batch import cmd_batch
from saturate.cli.bench import cmd_bench
from saturate.cli.diagram import cmd_graph
from saturate.cli.monitor import run as cmd_monitor
from saturate.cli.output import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
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


def finished(thread: str, args: argparse.Namespace) -> bool:
    """Whether the session ``thread`` ran to its end (a Ctrl-C may land after its last step); False when unsure."""
    try:
        from saturate import session_state  # loaded already: the session ran in this process

        return session_state(thread, home=getattr(args, "home", None)).get("_status") == "done"
    except Exception:  # no such session yet, a damaged store: the interruption message stands as it was
        return False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        use_database(getattr(args, "database_url", None))
        return COMMANDS[args.command](args)
    except BadInput as exc:
        say(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `saturate ... | head`: the reader left; stop quietly, as a shell tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's exit flush would raise again on the closed pipe
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        stop_at_next_interrupt()
        thread = getattr(args, "thread", None)  # the session's (research, verify and resume set it)
        if isinstance(thread, str) and thread and finished(thread, args):
            # Ctrl-C after the last step (while the result printed): the session is done, not interrupted
            say(
                f"saturate: interrupted while printing; the session {printable(thread)} had finished — "
                f"`saturate show {printable(thread)}` prints it",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        target = f"saturate resume {printable(thread)}" if isinstance(thread, str) and thread else "saturate resume"
        say(f"saturate: interrupted; the session is checkpointed — continue it with `{target}`", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        bad_input = output_path_problem(exc, args) or damaged_file_problem(exc, getattr(args, "home", None))
        if bad_input is not None:  # the user's to fix: a path named for output, a damaged file of theirs
            say(bad_input, file=sys.stderr)
            return EXIT_BAD_INPUT
        message = disk_problem(exc) or disk_problem(exc.__cause__ or exc.__context__ or exc) or database_problem(exc)
        if message is None:
            raise  # a bug: the traceback is what a report needs
        thread = getattr(args, "thread", None)
        if isinstance(thread, str) and thread:
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
