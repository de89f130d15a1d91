"""What the commands print on stdout, and the exit codes they return.

Exit codes: 0 done; 2 bad input (one line on stderr); 3 the session finished but retrieved
nothing because every search failed (the errors are printed and recorded); 130 interrupted.
"""

from __future__ import annotations

import json
import os
import re
import sys

from saturate.state.text import printable
from saturate.views.brief import brief_text
from saturate.views.progress import short_query, slot_line

EXIT_BAD_INPUT = 2
EXIT_NO_RESULTS = 3  # the session finished, but every search failed and nothing was retrieved
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool whose reader closed the pipe
EXIT_FAILED = 1


class OutputNotWritten(Exception):
    """A file the user named for output (``show --html``) could not be written for want of space: exit 1, a full
    disk as everywhere, but with a line that says so of the file, not the full-disk line's "resume the session"
    (the session was only read; nothing of it is lost)."""


def disk_problem(exc: BaseException) -> str | None:
    """A one-line message for a full disk or a failing one (SQLite's or the OS's word for it), else None.

    The session is checkpointed up to its last completed step, so the message says how to go on."""
    import errno  # only on this path
    import sqlite3

    text = str(exc)
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        what = f"no space left: {exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    elif isinstance(exc, sqlite3.OperationalError) and ("full" in text or "disk I/O" in text):
        what = f"the data directory cannot be written: {text}"
    else:
        return None
    return (
        f"saturate: error: {what}; every step completed before it is checkpointed — free some space, "
        "then continue with `saturate resume THREAD` (`saturate runs` lists them)"
    )


DATA_FILES = ("sessions.db", "cache.db", "pages.db", "embeddings.db")


def damaged_file_problem(exc: BaseException, home) -> str | None:
    """A one-line message when a database file of the data directory turned out damaged while a command read it
    (SQLite's "malformed" / "not a database", or a checkpoint that no longer decodes), else None.

    Which file: each one is checked with ``PRAGMA quick_check`` (read-only); the damaged one is named and left as
    it is (it is the user's), with how to recover what it still holds."""
    import sqlite3  # only on this path
    from pathlib import Path

    text = " ".join(str(exc).split())
    undecodable = isinstance(exc, ValueError) and ("UTF-8" in text or "msgpack" in text.lower())
    if not (isinstance(exc, sqlite3.DatabaseError) or undecodable):
        return None
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "full" in text or "disk I/O" in text):
        return None  # not damage: another process holds it, or the disk (disk_problem says so)
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
        return unopenable_problem(text, home)  # not damage either: the folder refuses the file
    try:
        from saturate.graph import home_dir

        folder = Path(home_dir(home, create=False))
    except Exception:  # the data directory itself is the problem: the generic message below
        folder = None
    damaged = []
    for name in DATA_FILES:
        path = folder / name if folder is not None else None
        if path is None or not path.is_file():
            continue
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                ok = db.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        except sqlite3.DatabaseError:
            ok = False
        if not ok:
            damaged.append(path)
    if not damaged and undecodable and folder is not None and (folder / "sessions.db").is_file():
        damaged = [folder / "sessions.db"]  # pages intact, a checkpoint's bytes not: the sessions file
    where = ", ".join(str(p) for p in damaged) or f"a database file in {folder or 'the data directory'}"
    first = damaged[0] if damaged else Path("FILE")
    return (
        f"saturate: error: {where} is damaged ({text[:160]}); it is left as it is — recover what it holds with "
        f"`sqlite3 {first} .recover | sqlite3 {first}.recovered` and put that in its place, or move it away "
        "(a new, empty one is made)"
    )


def unopenable_problem(text: str, home) -> str:
    """SQLite could not open or create a database file (SQLITE_CANTOPEN): the data directory refuses it although
    it looked writable (a kernel filesystem such as /sys, a mount that refuses writes). Not damage: no ``.recover``
    to run, nothing to move away — the folder to change."""
    try:
        from saturate.graph import home_dir

        folder = str(home_dir(home, create=False))
    except Exception:  # the data directory itself is the problem
        folder = "the data directory"
    return (
        f"saturate: error: a database file in {folder} cannot be opened or created ({text[:160]}): make the data "
        "directory writable or point SATURATE_HOME (or --home) elsewhere"
    )


def use_database(url: str | None) -> None:
    """``--database-url``: checked, then put in ``SATURATE_DATABASE_URL`` so everything of this command (and the
    worker processes of a batch) uses it (``graph.storage`` reads it there)."""
    from saturate.state.settings import ENV_PREFIX, SettingsError, check_database_url, mask_url

    if url is None:
        return
    try:
        checked = check_database_url(url)
    except ValueError as err:
        raise SettingsError(f"--database-url {mask_url(url)!r}: {err}") from None
    if checked:
        os.environ[ENV_PREFIX + "DATABASE_URL"] = checked
    else:
        os.environ.pop(ENV_PREFIX + "DATABASE_URL", None)


def database_problem(exc: BaseException) -> str | None:
    """A one-line message for PostgreSQL failing during a command (the server went away, a pool timeout), else
    None; the URL's password is masked."""
    from saturate.state.settings import mask_url, scrub_password

    if not type(exc).__module__.startswith(("psycopg", "psycopg_pool")):
        return None
    url = os.environ.get("SATURATE_DATABASE_URL", "")
    text = " ".join(str(exc).split())
    if url:
        text = scrub_password(text, url)
    text = text[:300]
    where = f" at {mask_url(url)}" if url else ""
    return (
        f"saturate: error: PostgreSQL{where} failed ({type(exc).__name__}: {text}); every step completed before it "
        "is checkpointed — when the database is back, continue with `saturate resume THREAD`"
    )


def exit_code(result) -> int:
    """0, or ``EXIT_NO_RESULTS`` when nothing was retrieved because every search failed."""
    if result.outcome == "no_results" and result.debug.get("errors"):
        return EXIT_NO_RESULTS
    return 0


def stop_at_next_interrupt() -> None:
    """After a first Ctrl-C has been handled (the session checkpointed, the batch's finished tasks written), a
    second one ends the process at once with 130 and one line, instead of a KeyboardInterrupt raised inside
    Python's exit (joining a batch's worker pool, flushing): that printed a traceback and ended with -2. What is
    on disk is safe: checkpoints are committed and result lines flushed as they finish. A batch's worker processes
    are killed first (left alone they would wait forever for a parent that is gone); a session killed mid-step
    redoes that step when it is resumed."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def now(signum, frame) -> None:
        try:
            multiprocessing = sys.modules.get("multiprocessing")  # not loaded: no worker to kill
            for child in multiprocessing.active_children() if multiprocessing else ():
                child.kill()
            sys.stdout.flush()
            print("saturate: stopped at once (second Ctrl-C)", file=sys.stderr, flush=True)
        finally:
            os._exit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, now)


def say(*parts, file=None, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
    """``print`` for everything the CLI writes: tasks, titles, pages and answers are untrusted, so control
    characters and bidi overrides are shown as ``\\uXXXX`` escapes (``state.text.printable``; also valid inside
    a JSON string) and cannot move the cursor, retitle the terminal or hide text."""
    print(printable(sep.join(str(p) for p in parts)), file=file or sys.stdout, end=end, flush=flush)


def print_json(data) -> None:
    say(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def print_answer(result, thread: str, as_json: bool, quiet: bool) -> bool:
    """The JSON result, or the answer and its brief (with ``--quiet`` followed by the sources they cite, so no
    ``[n]`` points at nothing); True when the caller should print the details."""
    if as_json:
        say(json.dumps({"thread": thread, **result.model_dump()}, ensure_ascii=False, indent=2))
        return False
    say(result.answer)
    if getattr(result, "brief", None):
        say("\nBrief:")
        for line in brief_text(result.brief):
            say(line)
    if quiet:
        for s in cited_sources(result):
            say(source_line(s))
        return False
    say()
    return True


def source_line(s) -> str:
    return f"[{s.n}] {s.title} — {s.url}"


def cited_sources(result) -> list:
    """The sources the answer cites, in the order it first cites them (the ``[n]`` in the answer), then any
    other source marked ``cited``."""
    by_n = {s.n: s for s in result.sources}
    said = (result.answer or "") + " " + " ".join(brief_text(getattr(result, "brief", None) or []))
    order = [int(n) for n in dict.fromkeys(re.findall(r"\[(\d+)\]", said))]
    cited = [by_n[n] for n in order if n in by_n]
    return cited + [s for s in result.sources if getattr(s, "cited", None) and s.n not in order]


def print_sources(result, thread: str, line=None) -> None:
    """The sources the answer cites first, then the other on-topic ones, then how many others were accepted.

    Every source keeps its number in ``result.sources`` (what ``[n]`` cites); all of them are in
    ``saturate show THREAD`` and ``--json``.
    """
    line = line or source_line
    cited = cited_sources(result)
    shown = {s.n for s in cited}
    relevant = [s for s in result.sources if s.n not in shown and getattr(s, "on_topic", None) is not False]
    others = len(result.sources) - len(cited) - len(relevant)
    if cited:
        say("Cited:")
        for s in cited:
            say(line(s))
    if relevant:
        say("Also relevant:" if cited else "Relevant:")
        for s in relevant:
            say(line(s))
    if others:
        say(
            f"({others} other accepted source{'s' if others != 1 else ''} not shown: saturate show {thread}, or --json)"
        )


def print_result(result, thread: str, as_json: bool, quiet: bool) -> None:
    """A single-source result: the answer and its brief, its sources (cited first, then the on-topic ones), notes
    and errors, why it stopped."""
    if not print_answer(result, thread, as_json, quiet):
        return
    print_sources(result, thread)
    slots = (result.debug or {}).get("slots") or []
    if slots:
        say("\nWhat the question asks (its slots, as the sources fill them):")
        for slot in slots:
            say(f"  {slot_line(slot)}")
    print_notes_and_errors(result)
    say(f"\nstopped after {result.rounds} round(s): {result.stop_reason}")
    say(f"thread: {thread}   (saturate show {thread})")


def print_notes_and_errors(result) -> None:
    for note in result.debug.get("notes") or []:
        say(f"note: {note}")
    errors = result.debug.get("errors") or []
    if errors:
        say(f"\n{len(errors)} recorded error(s):")
        for e in errors:
            say(f"  - {e}")


def round_block(rec: dict, task: str) -> list[str]:
    """One round record as a few readable lines (any terminal width)."""
    nov = "-" if rec.get("novelty") is None else f"{rec['novelty']:.2f}"
    ms = sum((rec.get("durations_ms") or {}).values())
    know = ""
    if rec.get("knowledge_chars") is not None:
        know = f"  knowledge {rec['knowledge_chars']} chars ({rec.get('compress')})"
    lines = [
        f"round {rec['round']}  {(rec.get('decision') or '').upper():<12} novelty {nov} ({rec.get('novelty_method')})"
        f"  new {rec.get('new', 0)}/{rec.get('total', 0)}{know}  {ms:.1f} ms  model calls {rec.get('model_calls', 0)}",
        f"  query  ({rec.get('planner')}, {rec.get('source')}): {short_query(rec['query'], task)}",
        f"  why    {rec.get('reason', '')}",
    ]
    if rec.get("quality_retry"):
        lines.append(f"  retry  {rec['quality_retry']}")
    for slot in rec.get("slots") or []:  # what the question asks, as filled after this round
        lines.append(f"  slot   {slot_line(slot)}")
    lines += [f"  note   {f}" for f in rec.get("fallbacks") or []]
    lines += [f"  ERROR  {e}" for e in rec.get("errors") or []]
    return lines
