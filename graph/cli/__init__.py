"""The ``saturate`` command line.

    saturate research "TASK" [--source local|ddg] [--corpus FILE] [--mode ...] [--<setting> VALUE ...] [--thread ID]
    saturate resume THREAD
    saturate show THREAD
    saturate runs
    saturate settings [--markdown]

Exit codes: 0 done, 2 bad input (empty/oversized task, invalid setting,
unknown source, missing corpus, unknown thread), 3 finished with no results
because every search failed (the errors are printed and recorded), 1 an
unexpected failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pydantic_core import PydanticUndefined

from saturate.state.settings import ENV_PREFIX, Settings, SettingsError, load_settings

EXIT_BAD_INPUT = 2
EXIT_NO_RESULTS = 3  # the session finished, but every search failed and nothing was retrieved


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: exit 2 with a clear line
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"saturate: error: {message}\n")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _default_text(name: str) -> str:
    field = Settings.model_fields[name]
    d = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(d, (dict, list, tuple)):
        return json.dumps(d) if d or isinstance(d, dict) else "empty"
    return "unset" if d is None or d is PydanticUndefined else str(d)


def _add_setting_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("settings (also SATURATE_<NAME> environment variables)")
    for name, field in Settings.model_fields.items():
        group.add_argument(
            _flag(name),
            dest=f"setting_{name}",
            metavar=name.upper(),
            default=None,
            help=f"{field.description} Default: {_default_text(name)}. Env: {ENV_PREFIX}{name.upper()}.",
        )


def _session_parser(sub, name: str, help: str, arg: str, arg_help: str, json_help: str, quiet_help: str):
    """A command that starts a session: its text argument, --thread, --json | --quiet, progress flags."""
    from saturate.graph.cli import viz as viz_cli

    p = sub.add_parser(name, help=help)
    p.add_argument(arg, help=arg_help)
    p.add_argument("--thread", help="thread id for the session (default: a new one)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=json_help)
    out.add_argument("--quiet", action="store_true", help=quiet_help)
    viz_cli.add_progress_flags(p)
    return p


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="saturate", description="Research a task in search rounds until the results stop being new.")
    p.add_argument("--home", help="data directory (default: $SATURATE_HOME or ~/.local/share/saturate)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    from saturate.graph.cli import multi as multi_cli
    from saturate.graph.cli import viz as viz_cli

    r = _session_parser(sub, "research", "run a research session", "task", "what to research (a question or topic)",
                        "print the result as JSON", "print only the answer")
    multi_cli.add_flags(r)
    _add_setting_flags(r)

    v = _session_parser(sub, "verify", "verify a claim: True / False / Invalid with a proof", "claim",
                        "the claim to verify", "print the AgentResult as JSON", "print only the verdict")
    _add_setting_flags(v)

    rs = sub.add_parser("resume", help="continue an interrupted session from its last checkpoint")
    rs.add_argument("thread")
    rs.add_argument("--json", action="store_true")
    viz_cli.add_progress_flags(rs, quiet=True)

    s = sub.add_parser("show", help="the round records of a session")
    s.add_argument("thread")
    s.add_argument("--json", action="store_true", help="print the checkpointed state as JSON")
    viz_cli.add_show_flags(s)
    viz_cli.add_commands(sub, _add_setting_flags)

    ru = sub.add_parser("runs", help="the sessions in the database")
    ru.add_argument("--json", action="store_true")

    b = sub.add_parser("bench", help="benchmarks: research (default) or perf")
    bsub = b.add_subparsers(dest="bench_kind", parser_class=_Parser)
    from saturate.graph.bench import research as bench_research

    bench_research.add_arguments(bsub.add_parser("research", help="retrieval policies on multi-hop sets (the default)"))
    bench_research.add_arguments(b)
    try:
        from saturate.graph.bench import perf as bench_perf

        bench_perf.add_arguments(bsub.add_parser("perf", help="performance figures with baselines"))
    except ImportError:  # pragma: no cover - perf module not present
        pass

    from saturate.graph.bench import model as bench_model
    from saturate.graph.bench import verify as bench_verify

    bench_model.add_arguments(bsub.add_parser("model", help="model calls per accepted/rejected round, heuristic vs model novelty"))
    bench_verify.add_arguments(bsub.add_parser("verify", help="the claim decision rule on recorded search hits"))
    from saturate.graph.bench import multi as bench_multi

    bench_multi.add_arguments(bsub.add_parser("multi", help="single loop vs multi-source, side by side"))

    m = sub.add_parser("monitor", help="the benchmark saturation monitor: level, trend, pending expansions")
    from saturate.graph.cli import monitor as monitor_cli

    monitor_cli.add_arguments(m)

    st = sub.add_parser("settings", help="every setting with its default and environment variable")
    st.add_argument("--markdown", action="store_true", help="as a Markdown table (the README's)")
    return p


# ---------------------------------------------------------------- rendering


def _console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def short_query(query: str, task: str) -> str:
    """A gap query shown as what it adds to the task: ``<task> + Zimbabwe``."""
    if task and query.startswith(task) and len(query) > len(task):
        return f"<task> + {query[len(task):].strip()}"
    return query if len(query) <= 90 else query[:89] + "…"


def round_line(rec: dict, threshold: float, task: str = "") -> str:
    nov = rec.get("novelty")
    nov_s = "-" if nov is None else f"{nov:.2f}"
    err = f"  errors: {len(rec['errors'])}" if rec.get("errors") else ""
    return (
        f"round {rec['round']}: {short_query(rec['query'], task)!r} [{rec.get('source', '')}] "
        f"new {rec.get('new', 0)}/{rec.get('total', 0)}  novelty {nov_s} vs {threshold:g}  → {rec.get('decision')}{err}"
    )


def round_block(rec: dict, task: str) -> list[str]:
    """One round as a few readable lines (any terminal width)."""
    nov = "-" if rec.get("novelty") is None else f"{rec['novelty']:.2f}"
    ms = sum((rec.get("durations_ms") or {}).values())
    know = "" if rec.get("knowledge_chars") is None else f"  knowledge {rec['knowledge_chars']} chars ({rec.get('compress')})"
    lines = [
        f"round {rec['round']}  {(rec.get('decision') or '').upper():<12} novelty {nov} ({rec.get('novelty_method')})"
        f"  new {rec.get('new', 0)}/{rec.get('total', 0)}{know}  {ms:.1f} ms  model calls {rec.get('model_calls', 0)}",
        f"  query  ({rec.get('planner')}, {rec.get('source')}): {short_query(rec['query'], task)}",
        f"  why    {rec.get('reason', '')}",
    ]
    if rec.get("quality_retry"):
        lines.append(f"  retry  {rec['quality_retry']}")
    lines += [f"  note   {f}" for f in rec.get("fallbacks") or []]
    lines += [f"  ERROR  {e}" for e in rec.get("errors") or []]
    return lines


def print_answer(result, thread: str, as_json: bool, quiet: bool) -> bool:
    """The JSON result, or the answer alone; True when the caller should print the details."""
    if as_json:
        print(json.dumps({"thread": thread, **result.model_dump()}, ensure_ascii=False, indent=2))
        return False
    print(result.answer)
    if not quiet:
        print()
    return not quiet


def print_result(result, thread: str, as_json: bool, quiet: bool) -> None:
    if not print_answer(result, thread, as_json, quiet):
        return
    for s in result.sources:
        print(f"[{s.n}] {s.title} — {s.url}")
    print_notes_and_errors(result)
    print(f"\nstopped after {result.rounds} round(s): {result.stop_reason}")
    print(f"thread: {thread}   (saturate show {thread})")


def print_notes_and_errors(result) -> None:
    for note in result.debug.get("notes") or []:
        print(f"note: {note}")
    errors = result.debug.get("errors") or []
    if errors:
        print(f"\n{len(errors)} recorded error(s):")
        for e in errors:
            print(f"  - {e}")


def settings_markdown() -> str:
    lines = ["| setting | default | env var | CLI flag | meaning |", "|---|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        lines.append(
            f"| `{name}` | `{_default_text(name)}` | `{ENV_PREFIX}{name.upper()}` | `{_flag(name)}` | {field.description} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- commands


def settings_from_args(args) -> Settings:
    """The --<setting> flags given, on top of the environment and the defaults."""
    overrides = {
        name: getattr(args, f"setting_{name}")
        for name in Settings.model_fields
        if getattr(args, f"setting_{name}") is not None
    }
    return load_settings(overrides)


def _cmd_research(args) -> int:
    from saturate.graph.api import research
    from saturate.graph.session import new_thread_id
    from saturate.graph.cli import multi as multi_cli

    settings = settings_from_args(args)
    if multi_cli.wants_multi(args):  # --multi or --sources: the multi-source graph (graph/multi.py)
        return multi_cli.run_research(args, settings)
    thread = args.thread or new_thread_id()
    task = " ".join(args.task.split())
    from saturate.graph.views.progress import make_progress

    live = make_progress(args, task)  # rich lines on stderr; --events: JSON lines; --json/--quiet: none
    if live is not None and live.style == "rich":
        print(f"thread {thread} · source {settings.source} · mode {settings.mode}", file=sys.stderr)
    try:
        result = research(args.task, thread_id=thread, home=args.home, settings=settings, stream_handler=live)
    finally:
        if live is not None:
            live.close()
    print_result(result, thread, args.json, args.quiet)
    return exit_code(result)


def exit_code(result) -> int:
    if result.outcome == "no_results" and result.debug.get("errors"):
        return EXIT_NO_RESULTS
    return 0


def _cmd_verify(args) -> int:
    from saturate.graph.api import verify
    from saturate.graph.session import new_thread_id

    from saturate.graph.views.progress import make_progress

    settings = settings_from_args(args)
    thread = args.thread or new_thread_id()
    live = make_progress(args, args.claim)
    try:
        result = verify(args.claim, thread_id=thread, home=args.home, settings=settings, stream_handler=live)
    finally:
        if live is not None:
            live.close()
    if args.json:
        print(json.dumps({"thread": thread, **result.model_dump()}, ensure_ascii=False, indent=2))
    elif args.quiet:
        print(result.outcome)
    else:
        print(result.proof)
        for note in result.debug.get("notes") or []:
            print(f"note: {note}")
        print(f"\nthread: {thread}   (saturate show {thread})")
    return exit_code(result)


def _cmd_resume(args) -> int:
    from saturate.graph.api import resume, session_state
    from saturate.graph.views.progress import make_progress

    live = make_progress(args)
    if live is not None:
        state = session_state(args.thread, home=args.home)
        live.task = state.get("task", "")
        if live.style == "rich" and state.get("_next"):
            print(f"resuming {args.thread} at {', '.join(state['_next'])} (round {state.get('round', 0)})", file=sys.stderr)
    try:
        result = resume(args.thread, home=args.home, stream_handler=live)
    finally:
        if live is not None:
            live.close()
    print_result(result, args.thread, args.json, args.quiet)
    return exit_code(result)


def _cmd_show(args) -> int:
    from saturate.graph.cli import viz as viz_cli
    from saturate.graph.api import session_state

    extra = viz_cli.show_extras(args)  # --html / --chart / --checkpoints
    if extra is not None:
        return extra
    state = session_state(args.thread, home=args.home)
    if args.json:
        print(json.dumps(state, ensure_ascii=False, indent=2, default=str))
        return 0
    if state.get("kind") == "multi":  # loops, audit events, leads, trips, tagged result
        from saturate.graph.cli import multi as multi_cli

        return multi_cli.show(state, args.thread)
    settings = Settings.model_validate(state["settings"])
    task = state["task"]
    print(f"task: {task}")
    print(
        f"thread {args.thread} · source {settings.source} · mode {settings.mode} · seed {state['rng']['seed']} · "
        f"threshold {settings.novelty_threshold:g} · min/max rounds {settings.min_rounds}/{settings.max_rounds} · "
        f"epsilon {settings.novelty_epsilon:g}"
    )
    for rec in state.get("records") or []:
        print("\n".join(round_block(rec, task)))
    for p in state.get("pages") or []:
        print(f"enrich {p['status']}: {p['url']} (overlap {p['overlap']}) {p.get('reason', '')}".rstrip())
    if state.get("result"):
        print(f"\nanswer: {state['result']['answer']}")
        for s in state["result"]["sources"]:
            print(f"  [{s['n']}] {s['title']} — {s['url']}")
    elif state.get("_next"):
        print(f"\nnot finished: next step {', '.join(state['_next'])} — saturate resume {args.thread}")
    return 0


def _cmd_runs(args) -> int:
    from saturate.graph.api import list_sessions

    rows = list_sessions(home=args.home)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    from rich.table import Table

    t = Table(title="sessions")
    for col in ("thread", "task", "rounds", "status", "updated"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(r["thread"], r["task"][:80], str(r["rounds"]), r["status"], r["updated"] or "")
    _console().print(t)
    return 0


def _cmd_settings(args) -> int:
    if args.markdown:
        print(settings_markdown())
    else:
        for name, value in load_settings().model_dump().items():
            print(f"{name} = {value!r}")
    return 0


def _cmd_bench(args) -> int:
    if getattr(args, "bench_kind", None) == "perf":
        from saturate.graph.bench import perf

        return perf.run(args)
    if getattr(args, "bench_kind", None) == "verify":
        from saturate.graph.bench import verify as bench_verify

        return bench_verify.run(args)
    if getattr(args, "bench_kind", None) == "multi":
        from saturate.graph.bench import multi as bench_multi

        return bench_multi.run(args)
    if getattr(args, "bench_kind", None) == "model":
        from saturate.graph.bench import model as bench_model

        return bench_model.run(args)
    from saturate.graph.bench import research as bench

    return bench.run(args)


def _cmd_monitor(args) -> int:
    from saturate.graph.cli import monitor as monitor_cli

    return monitor_cli.run(args)


COMMANDS = {
    "research": _cmd_research,
    "verify": _cmd_verify,
    "resume": _cmd_resume,
    "show": _cmd_show,
    "runs": _cmd_runs,
    "bench": _cmd_bench,
    "monitor": _cmd_monitor,
    "settings": _cmd_settings,
}

from saturate.graph.cli.viz import COMMANDS as _VIZ_COMMANDS  # noqa: E402  graph, checkpoints, fork

COMMANDS.update(_VIZ_COMMANDS)


def main(argv: list[str] | None = None) -> int:
    from saturate.graph.api import InputError
    from saturate.graph.models import ModelUnavailable
    from saturate.graph.monitor.harness import MonitorError
    from saturate.sources import CorpusError

    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (InputError, SettingsError, CorpusError, MonitorError, ModelUnavailable) as exc:
        print(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("saturate: interrupted; the session is checkpointed — continue it with `saturate resume`", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
