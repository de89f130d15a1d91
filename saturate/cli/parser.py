"""The ``saturate`` command line: every command and its flags (``build_parser``).

Building the parser imports nothing heavy: the ``--<setting>`` flags come from the pydantic
``Settings`` model (``cli.settings``), ``monitor``'s flags from ``cli.monitor``, and the
``bench`` kinds' flags, which belong to the benchmark modules (they import LangGraph), are
added only when ``bench`` is the command being parsed (``_Parser``'s ``add_later``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from saturate.cli import batch, bench, monitor
from saturate.cli.output import EXIT_BAD_INPUT
from saturate.cli.settings import add_setting_flags
from saturate.state.argtypes import port_number
from saturate.state.text import did_you_mean

DESCRIPTION = "Research a task in search rounds until the results stop being new."


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with one line (an unknown flag names the nearest one); ``add_later(parser)`` adds
    arguments when the parser is first used. A flag is spelled whole: argparse's abbreviations are off, so
    ``--max-round 3`` is refused naming ``--max-rounds`` instead of being taken for it (nor can a new flag make an
    abbreviation that worked ambiguous)."""

    def __init__(self, *args, add_later: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._add_later = add_later

    def _add_deferred(self) -> None:
        if self._add_later is not None:
            add, self._add_later = self._add_later, None
            add(self)

    def parse_known_args(self, args=None, namespace=None):
        self._add_deferred()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._add_deferred()
        return super().format_help()

    def parse_args(self, args=None, namespace=None):  # argparse's, with the nearest flag to an unknown one
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = _chosen(self, namespace)
            flags = [o for action in parser._actions for o in action.option_strings]  # argparse keeps no public list
            unknown = next((a.partition("=")[0] for a in extras if a.startswith("--")), None)
            hint = did_you_mean(unknown, flags, "{}") if unknown else ""
            parser.error(f"unrecognized arguments: {' '.join(extras)}" + (f"; {hint}" if hint else ""))
        return namespace

    def error(self, message: str):  # argparse's own usage errors: exit 2 with one line that says where help is
        self.exit(EXIT_BAD_INPUT, f"saturate: error: {message} (see `{self.prog} --help`)\n")


def _chosen(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's parser that ``namespace`` was parsed by: ``saturate research``'s for `saturate research …`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(namespace, action.dest, None) or "")
            if sub is not None:
                return _chosen(sub, namespace)
    return parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="saturate", description=DESCRIPTION)
    p.add_argument("--home", help="data directory (default: $SATURATE_HOME or ~/.local/share/saturate)")
    _add_database_flag(p, None)
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = _session_parser(
        sub,
        "research",
        "run a research session",
        "task",
        "what to research (a question or topic)",
        "print the result as JSON",
        "print only the answer",
    )
    r.add_argument(
        "--multi",
        action="store_true",
        help="research over several sources at once, each saturated by its own loop (implied by --sources)",
    )
    r.add_argument(
        "--no-brief",
        dest="setting_brief",
        action="store_const",
        const=False,
        help="the answer without the brief under it (the setting `brief` false)",
    )
    add_setting_flags(r)

    v = _session_parser(
        sub,
        "verify",
        "verify a claim: True / False / Invalid with a proof",
        "claim",
        "the claim to verify",
        "print the AgentResult as JSON",
        "print only the verdict",
    )
    add_setting_flags(v)

    rs = sub.add_parser("resume", help="continue an interrupted session from its last checkpoint")
    rs.add_argument("thread")
    rs.add_argument("--json", action="store_true")
    decided = rs.add_mutually_exclusive_group()
    decided.add_argument(
        "--approve", action="store_true", help="a session waiting for review: approve the plan or the answer"
    )
    decided.add_argument(
        "--edit",
        metavar="FILE",
        help="a session waiting for review: the plan's queries (one per line), or a note sending the answer back "
        "for more search",
    )
    _add_progress_flags(rs, quiet=True)

    s = sub.add_parser("show", help="the round records of a session")
    s.add_argument("thread")
    s.add_argument("--json", action="store_true", help="print the checkpointed state as JSON")
    s.add_argument("--html", metavar="FILE", help="write a self-contained HTML report of the session (opens offline)")
    s.add_argument("--chart", metavar="FILE", help="write a PNG chart of novelty per round")
    s.add_argument(
        "--md", metavar="FILE", help="write the session as Markdown: answer with linked citations, sources, rounds"
    )
    s.add_argument(
        "--checkpoints", action="store_true", help="list the session's checkpoints (as `saturate checkpoints`)"
    )

    _add_graph_parser(sub)

    c = sub.add_parser("checkpoints", help="a session's checkpoints: id, step, node, next, round; fork points marked")
    c.add_argument("thread")
    c.add_argument("--json", action="store_true")

    _add_fork_parser(sub)

    ru = sub.add_parser("runs", help="the sessions in the database")
    ru.add_argument("--json", action="store_true")

    mc = sub.add_parser(
        "mcp", help="serve research, verify, resume, show and runs as MCP tools (stdio; --http for streamable HTTP)"
    )
    mc.add_argument("--http", action="store_true", help="streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    mc.add_argument("--host", default="127.0.0.1", help="the address --http binds (default loopback only)")
    mc.add_argument("--port", type=port_number, default=8765, help="the port --http listens on (default 8765)")
    mc.add_argument(
        "--allow-source",
        action="append",
        default=[],
        metavar="KIND",
        help="a source kind clients may choose as `source` (repeatable or comma-separated; a value that is no source "
        "kind is refused at start; default: none, the server's own)",
    )
    mc.add_argument(
        "--token",
        default=None,
        help="the bearer token --http requires (default: $SATURATE_MCP_TOKEN, else one generated and printed at start)",
    )
    mc.add_argument("--no-token", action="store_true", help="--http without a token: only on a loopback --host")
    mc.add_argument(
        "--allow-remote", action="store_true", help="let --host be an address other machines reach (prints a warning)"
    )

    pr = sub.add_parser(
        "prune",
        help="free space: delete old sessions, drop finished sessions' history, expired cache entries; VACUUM",
    )
    pr.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="delete sessions last updated more than DAYS ago (any status), pages stored before then and "
        "damaged files moved aside before then",
    )
    pr.add_argument(
        "--compact",
        action="store_true",
        help="keep only the last checkpoint of each finished session (show/runs/report still work; "
        "fork and replay of it no longer do); unfinished sessions are untouched",
    )
    pr.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    pr.add_argument("--json", action="store_true")

    b = sub.add_parser(
        "batch", help="run a JSONL file of tasks over worker processes; re-run to resume (skips finished ones)"
    )
    batch.add_arguments(b)

    sub.add_parser(
        "bench",
        help="benchmarks: " + ", ".join(f"{k} (default)" if k == "research" else k for k in bench.KINDS),
        add_later=bench.add_arguments,
    )

    m = sub.add_parser("monitor", help="the benchmark saturation monitor: level, trend, pending expansions")
    monitor.add_arguments(m)

    st = sub.add_parser("settings", help="every setting with its default and environment variable")
    st.add_argument("--markdown", action="store_true", help="as a Markdown table (the one in docs/configuration.md)")
    for name in ("research", "verify", "resume", "fork", "show", "checkpoints", "runs", "prune", "batch"):
        if name in sub.choices:
            _add_database_flag(sub.choices[name], argparse.SUPPRESS)
    for name, command in sub.choices.items():  # --home before or after the command, as --database-url
        if name not in ("settings",) and not any("--home" in a.option_strings for a in command._actions):
            command.add_argument("--home", default=argparse.SUPPRESS, help="data directory (as before the command)")
    return p


def _add_database_flag(p: argparse.ArgumentParser, default) -> None:
    """``--database-url`` (before or after the command): sessions, cache and pages in that PostgreSQL database."""
    p.add_argument(
        "--database-url",
        default=default,
        metavar="URL",
        help="keep sessions, the search cache and pages in this PostgreSQL database "
        "(postgresql://user:password@host:5432/db; needs saturate[postgres]) instead of the data directory's "
        "SQLite files. Env: SATURATE_DATABASE_URL.",
    )


def _days(text: str) -> float:
    """A number of days >= 0 (argparse turns the ValueError into a one-line usage error, exit 2)."""
    days = float(text)
    if not (0 <= days < 1e6):
        raise ValueError(text)
    return days


_days.__name__ = "number of days"  # argparse names the type in its error: "invalid number of days value"


def _session_parser(sub, name: str, help: str, arg: str, arg_help: str, json_help: str, quiet_help: str):
    """A command that starts a session: its text argument, --thread, --json | --quiet, progress flags."""
    p = sub.add_parser(name, help=help)
    p.add_argument(arg, help=arg_help)
    p.add_argument("--thread", help="thread id for the session (default: a new one)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=json_help)
    out.add_argument("--quiet", action="store_true", help=quiet_help)
    _add_progress_flags(p)
    return p


def _add_progress_flags(p: argparse.ArgumentParser, quiet: bool = False) -> None:
    p.add_argument(
        "--events",
        action="store_true",
        help="write live progress as JSON lines on stderr (one object per event; for scripts, works with --json)",
    )
    if quiet:
        p.add_argument("--quiet", action="store_true", help="print only the answer, no progress")


def _add_graph_parser(sub) -> None:
    g = sub.add_parser("graph", help="write the graph diagram: Mermaid, Graphviz DOT, SVG and PNG (offline)")
    g.add_argument("--out", default=".", metavar="DIR", help="directory for the files (default: the current one)")
    g.add_argument("--name", default="saturate-graph", help="file name stem (default: saturate-graph)")
    g.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=["mmd", "dot", "svg", "png"],
        help="only these formats (repeatable; default: all four)",
    )
    g.add_argument(
        "--renderer",
        choices=["builtin", "graphviz"],
        default="builtin",
        help="SVG/PNG renderer: builtin (Python only, the default) or graphviz (needs the `dot` program)",
    )
    g.add_argument(
        "--print", dest="print_mermaid", action="store_true", help="print the Mermaid text to stdout, write nothing"
    )


def _add_fork_parser(sub) -> None:
    f = sub.add_parser("fork", help="a new session from a session's round N with changed settings, run to the end")
    f.add_argument("thread", help="the session to fork (it is not changed)")
    f.add_argument(
        "--round",
        type=int,
        required=True,
        metavar="N",
        help="fork after round N: N's results and knowledge kept, round N+1 is planned with the new "
        "settings (0: from the start)",
    )
    f.add_argument(
        "--thread", dest="new_thread", metavar="NEW", help="thread id of the fork (default: THREAD-forkN-xxxx)"
    )
    out = f.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the result as JSON")
    out.add_argument("--quiet", action="store_true", help="print only the answer")
    f.add_argument("--events", action="store_true", help="write live progress as JSON lines on stderr")
    add_setting_flags(f)
