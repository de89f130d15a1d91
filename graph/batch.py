"""``saturate batch TASKS.jsonl``: one session per line, run by worker processes, resumable, shareable.

Each line is ``{"id"?, "question" | "task" | "claim", "settings"?: {...}}`` (other keys, such as a data set's
``answers``, are ignored). A line's thread id is ``<prefix>-<id>`` (prefix: the file's stem, or
``--thread-prefix``; a line without an id takes the first 12 hex digits of its text's sha256), so running the
same file again finds the same sessions:

- a task whose result line is already in the output file is skipped without opening anything;
- a finished session (done in the checkpoints, its line lost when the batch was killed) is only read back;
- an unfinished one is resumed from its last checkpoint (no step is repeated);
- the others start.

The output file is read back only when it is a regular file, a bounded line at a time, and nothing in it is ever
deleted: a torn last line is moved aside into ``OUT.torn``, and a file that is not a batch's output is refused
untouched (``finished_ids``).

**Claims.** Before it touches a session a worker claims its thread: a PostgreSQL advisory lock
(``pg_try_advisory_lock``) held on the worker's own connection when sessions live in PostgreSQL, else a file
lock (``filelock``) in ``home/claims``. A claim held elsewhere — another worker, another ``saturate batch`` on
the same data, another machine on the same database — makes the task wait its turn (it is retried after the
others); the lock goes with the connection or the process, so a killed worker or machine frees its tasks and
whoever claims one next resumes it. Several machines pointed at one database can therefore run the same file
at once: each task runs once, and every machine's output file ends up holding the tasks it ran or found done.

Workers are processes (spawned: the work is CPU-bound Python, and a process per worker keeps its own
checkpointer pool); the parent keeps ``workers`` tasks in flight, appends a JSON line per finished task to the
output as it arrives (flushed), and shows done / running / failed / skipped and sessions per second.

The task file is read a line at a time as workers free up (``iter_tasks``; a million lines are neither held nor
read before the first task starts): its first ``READ_AHEAD`` lines are checked before anything starts, and a bad
line further down stops the intake — the tasks before it finish and are written, then it is reported.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import json
import multiprocessing
import os
import sqlite3
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from saturate.graph import api, storage
from saturate.graph.paths import home_dir
from saturate.graph.session import InputError, check_thread, config, graph_for, kind_of, open_checkpointer
from saturate.graph.workers import spawning_deaf, task_hears_ctrl_c, worker_started
from saturate.state.errors import BadInput
from saturate.state.files import MAX_LINE_BYTES, bounded_lines, open_output, output_path
from saturate.state.settings import load_settings
from saturate.state.text import lone_surrogate, printable

MAX_TASK_LINE_BYTES = 1_000_000  # a task line (question, id, settings) longer than this is refused
MAX_VALIDATED = 10_000  # distinct settings objects remembered as valid (others are validated again)
READ_AHEAD = 10_000  # the first lines, checked before any worker starts: a small file is checked whole
RETRY_BUSY_S = 0.5  # how long a task claimed elsewhere waits before it is tried again


@dataclass(frozen=True)
class BatchTask:
    id: str
    thread: str
    text: str
    kind: str  # question | claim
    settings: dict
    line: int


@dataclass
class BatchReport:
    total: int
    out: str
    done: int = 0  # finished in this run (started or resumed)
    resumed: int = 0
    skipped: int = 0  # finished before this run (in the output file or in the checkpoints)
    failed: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    broken: str | None = None  # a worker process died (killed, out of memory): the batch stopped, re-run it
    failures: list[dict] = field(default_factory=list)

    @property
    def sessions_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def as_dict(self) -> dict:
        return {**asdict(self), "sessions_per_s": round(self.sessions_per_s, 2)}


def iter_tasks(path: Path, prefix: str | None = None, overrides: dict | None = None) -> Iterator[BatchTask]:
    """The tasks of a JSONL file, a line at a time as they are asked for (a million-line file is neither held in
    memory nor read before the first task starts); each line is checked, its settings validated, and an
    ``InputError`` names the first line that is wrong."""
    # a line at a time, each bounded (state/files.py): /dev/zero or a file without line breaks is refused
    lines = bounded_lines(path, "task file", InputError, max_line=MAX_TASK_LINE_BYTES)
    prefix = prefix if prefix is not None else Path(path).stem
    seen: dict[str, int] = {}
    valid: set[str] = set()  # the settings objects already validated (a file repeats a few of them)
    for n, raw in lines:
        if not raw.strip():
            continue
        where = f"{path} line {n}"
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as err:
            raise InputError(
                f"{where} is not JSON ({err if isinstance(err, ValueError) else 'nested too deeply'})"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(f'{where}: expected an object such as {{"id": "q1", "question": "..."}}')
        if bad := lone_surrogate(raw, obj):
            raise InputError(f"{where} holds {bad}, half of a surrogate pair: not Unicode text")
        kind = "claim" if "claim" in obj else "question"
        text = obj.get("claim") if kind == "claim" else obj.get("question", obj.get("task"))
        if not isinstance(text, str) or not text.strip():
            raise InputError(f'{where}: needs a non-empty "question", "task" or "claim"')
        settings = obj.get("settings") or {}
        if not isinstance(settings, dict):
            raise InputError(f'{where}: "settings" must be an object of settings')
        key = json.dumps(settings, sort_keys=True)
        if key not in valid:
            try:
                load_settings({**(overrides or {}), **settings})
            except BadInput as err:
                raise InputError(f"{where}: {err}") from None
            if len(valid) < MAX_VALIDATED:
                valid.add(key)
        raw_id = obj.get("id")
        task_id = str(raw_id) if raw_id is not None else hashlib.sha256(text.encode()).hexdigest()[:12]
        if task_id in seen:
            raise InputError(
                f"{where}: id {printable(task_id[:60])!r} is also on line {seen[task_id]}; ids must differ"
            )
        seen[task_id] = n
        try:
            thread = check_thread(f"{prefix}-{task_id}" if prefix else task_id)
        except InputError as err:
            raise InputError(f"{where}: {err}") from None
        yield BatchTask(task_id, thread, text, kind, settings, n)


def read_tasks(path: Path, prefix: str | None = None, overrides: dict | None = None) -> list[BatchTask]:
    """Every task of the file, each line checked (``iter_tasks``), in a list."""
    tasks = list(iter_tasks(path, prefix, overrides))
    if not tasks:
        raise InputError(f"task file {path} has no tasks")
    return tasks


RECORD_START = b'{"id": '  # every result line begins so: json.dumps of a row whose first key is "id"
MAX_RESULT_LINE_BYTES = MAX_LINE_BYTES  # a result line read back longer than this is damaged (skipped)
READ_CHUNK = 1 << 20  # the step in which a damaged long line is skipped and a torn tail copied aside


def out_is_regular(out: Path) -> bool:
    """Whether the output file ``out`` is a regular file that exists (one to read back); False for a new file,
    /dev/null or this process's own output (``--out /dev/stdout``: a terminal or a pipe), which are only written.
    InputError, one line, for a path that cannot be an output file, before anything runs: a folder, a named pipe
    (its ``open()`` would wait for a reader, forever), a socket, another device (/dev/tty), a link loop, a parent
    folder that cannot be made (state/files.py ``output_path``)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot make its folder {out.parent} ({exc.strerror or exc})") from None
    output_path(out, "--out", InputError)
    try:
        return stat.S_ISREG(os.stat(out).st_mode)  # follows links: a link to a file is that file
    except FileNotFoundError:
        return False
    except OSError as exc:  # replaced since the check
        raise InputError(f"--out {out} cannot be used ({exc.strerror or exc})") from None


def open_out(out: Path):
    """``out`` opened for appending result lines, without blocking on a FIFO put in its place since the check;
    InputError, one line, when it cannot be (read-only, no access, nothing to write to)."""
    try:
        return open_output(out, "--out", InputError, append=True)
    except OSError as exc:
        raise InputError(f"cannot write --out {out} ({exc.strerror or exc})") from None


def finished_ids(out: Path) -> set[str]:
    """Ids with a ``done`` line in the output file ``out``, read back a bounded line at a time; an empty set for a
    new file or one that is not a regular file (/dev/null, /dev/full or our own output are only written).

    Nothing of the file is ever lost. It must be saturate's batch output (its first line a result line; an empty
    file is one), else InputError says so and the file is left as it is — results are not mixed into a file of
    the user's. A complete line that is not a result (not JSON, or longer than ``MAX_RESULT_LINE_BYTES``) is
    damaged: skipped, its task runs again or is found done. A last line without its line break is what a kill
    while writing leaves: a whole result line just gets its line break; a torn one is moved aside — appended to
    ``OUT.torn`` — and cut from the file, so the next result starts a line of its own."""
    out = Path(out)
    if not out_is_regular(out):
        return set()
    try:
        with out.open("r+b") as f:
            ids, tail_at = _read_results(f, out)
            if tail_at is not None:
                _settle_tail(f, out, tail_at, ids)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # OUT.torn on a full disk: the CLI's line for a full disk
            raise
        raise InputError(f"--out {out} cannot be opened to read back ({exc.strerror or exc})") from None
    return ids


def _read_results(f, out: Path) -> tuple[set[str], int | None]:
    """The done ids of the complete lines, and where a last line without a line break starts (None: none); the first
    line that is not blank is checked to be a result line (``_check_first``)."""
    ids: set[str] = set()
    first = True
    while True:
        at = f.tell()
        line = f.readline(MAX_RESULT_LINE_BYTES + 1)
        if not line:
            return ids, None
        long = len(line) > MAX_RESULT_LINE_BYTES and not line.endswith(b"\n")
        torn = not _skip_line(f) if long else not line.endswith(b"\n")  # a long line torn where the file ends, too
        if not long and not torn and not line.strip():  # a blank line (an empty file given a line break)
            continue
        if first:
            _check_first(out, b"" if long else line, torn=torn)
            first = False
        if torn:
            return ids, at
        row = None if long else _result(line)
        if row is not None and row.get("status") == "done":
            ids.add(str(row.get("id")))


def _skip_line(f) -> bool:
    """Read on to the end of the current line a chunk at a time (memory stays bounded); False at the end of the
    file without a line break."""
    while chunk := f.readline(READ_CHUNK):
        if chunk.endswith(b"\n"):
            return True
    return False


def _result(line: bytes) -> dict | None:
    """The result row a line holds, or None when it is not one (damaged, or another program's line)."""
    if not line.startswith(RECORD_START):
        return None
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return row if isinstance(row, dict) and {"id", "thread", "status"} <= row.keys() else None


def _check_first(out: Path, line: bytes, *, torn: bool) -> None:
    """Refuse a file whose first line is no result line (``line`` empty: too long to be one) — a torn first line
    must at least begin as one does (``{"id": ``): the file is someone else's, and is left as it is."""
    if line and (_result(line) is not None or (torn and line[: len(RECORD_START)] == RECORD_START[: len(line)])):
        return
    raise InputError(
        f"--out {out} is not saturate's batch output (line 1 is no result line); it is left as it is — "
        "name a new file or the one a previous batch wrote"
    )


def _settle_tail(f, out: Path, at: int, ids: set[str]) -> None:
    """The last line, from ``at``, lacks its line break: a whole result line gets it; a torn one is appended to
    ``OUT.torn`` (copied a chunk at a time), then cut from the file."""
    f.seek(at)
    line = f.readline(MAX_RESULT_LINE_BYTES + 1)
    row = _result(line) if len(line) <= MAX_RESULT_LINE_BYTES else None
    if row is not None:
        f.seek(0, os.SEEK_END)
        f.write(b"\n")
        if row.get("status") == "done":
            ids.add(str(row.get("id")))
        return
    aside = out.with_name(out.name + ".torn")
    f.seek(at)
    with aside.open("ab") as keep:
        while chunk := f.read(READ_CHUNK):
            keep.write(chunk)
        keep.write(b"\n")
        keep.flush()
        os.fsync(keep.fileno())  # the copy is on disk before the file is cut
    f.truncate(at)


# --- the worker process --------------------------------------------------------------------------------------


class _Claims:
    """Claims on threads: PostgreSQL advisory locks on one dedicated connection, or file locks in home/claims."""

    def __init__(self, url: str | None, home: Path):
        self.url = url
        self.home = home
        self.conn = None
        self.held: dict[str, Any] = {}

    def take(self, thread: str) -> bool:
        if self.url:
            if self.conn is None or self.conn.closed:
                psycopg = storage.psycopg_module()
                self.conn = psycopg.connect(self.url, autocommit=True, connect_timeout=storage.CONNECT_TIMEOUT_S)
            got = self.conn.execute("SELECT pg_try_advisory_lock(%s)", (storage.lock_key("batch:" + thread),))
            return bool(got.fetchone()[0])
        folder = self.home / "claims"
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(folder / (hashlib.sha256(thread.encode()).hexdigest()[:32] + ".lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return False
        self.held[thread] = lock
        return True

    def release(self, thread: str) -> None:
        if self.url:
            if self.conn is not None and not self.conn.closed:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (storage.lock_key("batch:" + thread),))
            return
        lock = self.held.pop(thread, None)
        if lock is not None:
            lock.release()


_CLAIMS: _Claims | None = None
_KEEP: list[Any] = []


def _worker_init(url: str | None, home: str) -> None:
    global _CLAIMS
    worker_started()  # a terminal's Ctrl-C reaches the workers too: heard only by a task under way (graph/workers.py)
    if url:
        os.environ[storage.ENV] = url
    else:
        # One connection to sessions.db held for the worker's life: SQLite checkpoints and removes the WAL when
        # the last connection of a process closes, ~1 ms on each of the several opens a session makes.
        with open_checkpointer(home_dir(home)):
            pass
        _KEEP.append(sqlite3.connect(Path(home) / "sessions.db", check_same_thread=False))
    _CLAIMS = _Claims(url, Path(home))


def run_task(task: BatchTask, overrides: dict, home: str) -> dict:
    """Claim, then read back, resume or start the task's session; its result line (``status`` busy when the
    claim is held elsewhere). Failures are results, never raised: the batch goes on."""
    with task_hears_ctrl_c():
        return _run_task(task, overrides, home)


def _run_task(task: BatchTask, overrides: dict, home: str) -> dict:
    claims = _CLAIMS or _Claims(storage.database_url(), Path(home))
    row: dict[str, Any] = {"id": task.id, "thread": task.thread, "line": task.line}
    start = time.perf_counter()
    try:
        if not claims.take(task.thread):
            return {**row, "status": "busy"}
    except Exception as err:  # the database went away: a failure of this task, reported
        return {**row, "status": "failed", "error": f"claim failed: {type(err).__name__}: {err}"[:500]}
    try:
        state = _state(task.thread, home)
        if state is not None and state.get("result"):
            result, how = state["result"], "found"
        elif state is not None:
            result, how = api.resume(task.thread, home=home).model_dump(), "resumed"
        else:
            run = api.verify if task.kind == "claim" else api.research
            result = run(task.text, thread_id=task.thread, home=home, **{**overrides, **task.settings}).model_dump()
            how = "ran"
        return {
            **row,
            "status": "done",
            "how": how,
            "task": task.text,
            "outcome": result.get("outcome"),
            "answer": result.get("answer") or result.get("proof"),
            "sources": [s.get("url") for s in result.get("sources") or []],
            "rounds": result.get("rounds"),
            "seconds": round(time.perf_counter() - start, 3),
        }
    except KeyboardInterrupt:
        raise
    except Exception as err:  # recorded; the session keeps its checkpoints, a re-run resumes it
        text = " ".join(str(err).split())[:500]
        return {**row, "status": "failed", "task": task.text, "error": f"{type(err).__name__}: {text}"}
    finally:
        claims.release(task.thread)


def _state(thread: str, home: str) -> dict | None:
    """The session's latest values, or None when it does not exist yet (one read of the checkpointer)."""
    with open_checkpointer(home_dir(home)) as saver:
        kind = kind_of(saver, thread)
        if kind is None:
            return None
        return graph_for(kind, saver).get_state(config(thread)).values


# --- the parent ----------------------------------------------------------------------------------------------


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either order of the comparison)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.comparators) != 1:
        return False
    sides = [node.test.left, node.test.comparators[0]]
    names = [s.id for s in sides if isinstance(s, ast.Name)]
    texts = [s.value for s in sides if isinstance(s, ast.Constant)]
    return names == ["__name__"] and texts == ["__main__"] and isinstance(node.test.ops[0], ast.Eq)


def check_main_guard() -> None:
    """InputError when the running script calls ``run_batch`` at its top level without ``if __name__ ==
    "__main__":``. The workers are started with ``spawn`` (forking a process that holds threads and database
    connections is unsafe), which imports the script again in each worker: an unguarded call would run the batch
    again there and every worker would die. Found by reading the script (``ast``) before anything is spawned;
    a script that cannot be read is not checked."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or not str(path).endswith(".py"):
        return
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read(2_000_000)  # at most this much of the script, never a huge file whole
        tree = ast.parse(source)
    except (OSError, ValueError, SyntaxError, RecursionError):
        return
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or _is_main_guard(node):
            continue
        for sub in ast.walk(node):
            func = sub.func if isinstance(sub, ast.Call) else None
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "run_batch" and isinstance(sub, ast.Call):
                raise InputError(
                    f'{path} line {sub.lineno} calls run_batch outside `if __name__ == "__main__":`; the worker '
                    "processes import the script again and would run it too: put the call under that guard"
                )


def run_batch(
    path: Path,
    *,
    workers: int,
    out: Path,
    overrides: dict | None = None,
    home=None,
    prefix: str | None = None,
    on_event: Callable[[str, BatchReport, dict | None], None] | None = None,
) -> BatchReport:
    """Run the file's tasks (see the module docstring); ``on_event(kind, report, row)`` sees ``start``, each
    ``row`` written and ``end``. A KeyboardInterrupt stops it with ``report.interrupted`` set (what finished is
    written; unfinished sessions are checkpointed)."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise InputError(f"run_batch(workers=...) takes an int from 1 to 64 (got {type(workers).__name__})")
    if not isinstance(path, (str, os.PathLike)) or not isinstance(out, (str, os.PathLike)):
        bad, value = ("path", path) if not isinstance(path, (str, os.PathLike)) else ("out", out)
        raise InputError(f"run_batch({bad}=...) takes a path: a str or os.PathLike (got {type(value).__name__})")
    if overrides is not None and not isinstance(overrides, Mapping):
        raise InputError(f"run_batch(overrides=...) takes a dict of settings (got {type(overrides).__name__})")
    if prefix is not None and not isinstance(prefix, str):
        raise InputError(f"run_batch(prefix=...) takes a str (got {type(prefix).__name__})")
    if not 1 <= workers <= 64:
        raise InputError(f"--workers must be between 1 and 64 (got {workers})")
    check_main_guard()
    overrides = dict(overrides or {})
    overrides.pop("database_url", None)  # the environment carries it to the workers
    reader = iter_tasks(path, prefix, overrides)
    ahead = deque(islice(reader, READ_AHEAD))  # a bad line among the first is refused before anything starts
    if not ahead:
        raise InputError(f"task file {path} has no tasks")
    home_path = home_dir(home)
    url = storage.database_url()
    if url:
        storage.pool(url)  # an unreachable database is one line now, not one failure per task
    else:
        with open_checkpointer(home_path):  # a read-only or damaged data directory is one line now, not dead workers
            pass
    out = Path(out)
    finished = finished_ids(out)  # a folder, a link loop, someone else's file: refused here, one line
    sink = open_out(out)
    report = BatchReport(total=0, out=str(out))
    waiting: deque[BatchTask] = deque()  # claimed elsewhere: tried again after the others
    bad_line: InputError | None = None
    read_all = False  # the file is read to its end (or to a bad line)

    def next_task() -> BatchTask | None:
        """The next task to run: the file's next line not done yet (read as needed), then those waiting."""
        nonlocal bad_line, read_all
        while ahead or not read_all:
            if ahead:
                task = ahead.popleft()
            else:
                try:
                    task = next(reader)
                except StopIteration:
                    read_all = True
                    break
                except InputError as err:  # a bad line further down: no new task starts, running ones finish
                    bad_line, read_all = err, True
                    break
            report.total += 1
            if task.id in finished:
                report.skipped += 1
                continue
            return task
        return waiting.popleft() if waiting else None

    emit = on_event or (lambda kind, rep, row: None)
    running: dict[Future, BatchTask] = {}
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init, initargs=(url, str(home_path)))
    try:
        with sink:
            task = next_task()
            emit("start", report, None)
            while task is not None or running:
                while task is not None and len(running) < workers:
                    with spawning_deaf():  # a worker it starts begins with Ctrl-C held (graph/workers.py)
                        running[pool.submit(run_task, task, overrides, str(home_path))] = task
                    task = next_task() if len(running) < workers else None
                emit("running", report, {"running": len(running)})
                finished_now, _ = wait(running, return_when=FIRST_COMPLETED)
                busy = 0
                for future in finished_now:
                    ended = running.pop(future)
                    row = future.result()
                    if row["status"] == "busy":
                        waiting.append(ended)
                        busy += 1
                        continue
                    if row["status"] == "done" and row.get("how") == "found":
                        report.skipped += 1
                    elif row["status"] == "done":
                        report.done += 1
                        report.resumed += row.get("how") == "resumed"
                    else:
                        report.failed += 1
                        report.failures.append({k: row.get(k) for k in ("id", "thread", "error")})
                    sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                    sink.flush()
                    report.elapsed_s = time.perf_counter() - started
                    emit("row", report, row)
                if busy and not running and read_all:
                    time.sleep(RETRY_BUSY_S)  # only tasks claimed elsewhere are left: give their holders time
                task = next_task()
    except KeyboardInterrupt:
        report.interrupted = True
        pool.shutdown(wait=False, cancel_futures=True)
    except BrokenProcessPool as err:
        report.interrupted = True
        report.broken = f"a worker process died ({err or 'killed'})"
    finally:
        pool.shutdown(wait=not report.interrupted, cancel_futures=True)
        report.elapsed_s = time.perf_counter() - started
    emit("end", report, None)
    if bad_line is not None and not report.interrupted:
        ran = report.done + report.skipped + report.failed
        raise InputError(
            f"{bad_line}; the {ran} task(s) before it are in {out} — fix the line and run the same command to go on"
        )
    return report


__all__ = ["BatchReport", "BatchTask", "finished_ids", "iter_tasks", "read_tasks", "run_batch", "run_task"]
