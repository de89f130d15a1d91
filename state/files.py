"""Reading and writing files a user names, within bounds: a regular file only, lines of bounded length, a bounded
whole; an output path that cannot block.

A path such as ``/dev/zero``, a FIFO or a 4 GB file without a line break must not be read into memory whole:
each reader here refuses what is not a regular file at once, and reads a line at a time with a limit
(``readline(limit)``), so memory stays within the bound whatever the file holds. The caller says what the file
is (``what``: "corpus", "task file") and which error to raise (its own ``BadInput`` subclass).

An output path (``batch --out``, ``show --html``) is checked before any work (``output_path``) and opened without
blocking (``open_output``): a FIFO nobody reads would hold ``open()`` forever, a folder, a socket or a device
(``/dev/tty``, a disk) is no file to write results into.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

MAX_LINE_BYTES = 16 * 2**20  # a JSONL record (a corpus document, a task) longer than this is refused
MAX_FILE_BYTES = 16 * 2**20  # a whole small file (a tiers table) larger than this is refused
# The evaluation data (musique/, hotpotqa/, webq/, factcheck/ under --data or SATURATE_EVAL_DATA) and the files a
# benchmark reads instead of it (--tasks, --corpus, --claims): its largest file, hotpotqa/corpus.jsonl, is
# 2,974,204 bytes and its longest line 8,357 bytes (factcheck/claims.jsonl: 1,353,419 bytes, lines up to 5,063).
# 32 MiB a file is 11 times the largest (room for a larger subsample, never for a damaged 2 GB file read whole);
# a line of 1,000,000 bytes is over 100 times the longest (the bound of a batch's task line, graph/batch.py).
MAX_EVAL_FILE_BYTES = 32 * 2**20
MAX_EVAL_LINE_BYTES = 1_000_000


def user_path(path: str | os.PathLike, what: str, error: type[Exception], resolve: bool = False) -> Path:
    """A path the user gave, ``~`` expanded (and with ``resolve`` made absolute, links followed); ``error`` in one
    line when it cannot be used as a path at all: ``~name`` of no user, a symbolic link loop, a NUL byte. pathlib
    raises RuntimeError for the first two, which no caller took for bad input (a traceback). A path that does not
    exist is no error here: the caller says what is missing."""
    shown = str(path)[:200]
    try:
        full = Path(path).expanduser()
    except RuntimeError:  # "Could not determine home directory."
        user = shown.split("/", 1)[0]
        raise error(f"{what} {shown!r}: {user} names no user's home directory") from None
    try:
        os.stat(full)  # a loop is found the same on every Python (3.13's resolve() no longer raises on one)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{what} {shown!r}: a symbolic link loop (a link that leads back to itself)") from None
    except ValueError as exc:  # an embedded NUL byte
        raise error(f"{what} {shown!r}: {exc}") from None
    if not resolve:
        return full
    try:
        return full.resolve()
    except (RuntimeError, OSError) as exc:  # a loop made while we looked, a parent that cannot be read
        raise error(f"{what} {shown!r} cannot be resolved ({getattr(exc, 'strerror', None) or exc})") from None


def regular_file(path: str | os.PathLike, what: str, error: type[Exception], max_bytes: int | None = None) -> Path:
    """``path`` when it is a regular file (following links) of at most ``max_bytes`` (None: any size); ``error``
    saying what it is otherwise."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{what} {path} not found") from None
    except OSError as exc:
        raise error(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a device, pipe or socket"  # os.stat followed any link
        raise error(f"{what} {path} is {kind}, not a regular file")
    _check_size(st.st_size, path, what, error, max_bytes)
    return path


def _check_size(size: int, path: Path, what: str, error: type[Exception], max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise error(f"{what} {path} is larger than {max_bytes:,} bytes")


def bounded_lines(
    path: str | os.PathLike,
    what: str,
    error: type[Exception],
    max_line: int = MAX_LINE_BYTES,
    max_bytes: int | None = None,
) -> Iterator[tuple[int, str]]:
    """(line number, text) of a regular UTF-8 file, one line at a time; ``error`` for a line over ``max_line``
    bytes (a file without line breaks), a file over ``max_bytes`` (None: any size; refused before its first line,
    and again should it grow while read), bytes that are not UTF-8, or a read failure."""
    path = regular_file(path, what, error, max_bytes)
    try:
        with open(path, "rb") as fh:
            n = read = 0
            while line := fh.readline(max_line + 1):
                n += 1
                read += len(line)
                _check_size(read, path, what, error, max_bytes)
                if len(line) > max_line:
                    raise error(
                        f"{path}: line {n} is longer than {max_line:,} bytes (a file without line breaks?); "
                        f"a {what} holds one JSON record per line"
                    )
                try:
                    yield n, line.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise error(f"{path}: line {n} is not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as exc:
        raise error(f"{what} {path} cannot be read ({exc.strerror or exc})") from None


def bounded_jsonl(
    path: str | os.PathLike,
    what: str,
    error: type[Exception],
    max_line: int = MAX_EVAL_LINE_BYTES,
    max_bytes: int | None = MAX_EVAL_FILE_BYTES,
) -> Iterator[tuple[int, dict]]:
    """(line number, object) of a JSON Lines file read by ``bounded_lines`` (blank lines skipped); ``error``, one
    line naming the file and the line, for a line that is not valid JSON or not a JSON object. The defaults are
    the evaluation data's bounds: every file a benchmark reads goes through here (or ``regular_file`` with
    ``MAX_EVAL_FILE_BYTES`` before a corpus is indexed, a line at a time, by sources/local.py)."""
    for n, line in bounded_lines(path, what, error, max_line, max_bytes):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise error(f"{path}: line {n} is not valid JSON ({why})") from None
        if not isinstance(rec, dict):
            raise error(f"{path}: line {n} is not a JSON object")
        yield n, rec


def bounded_text(path: str | os.PathLike, what: str, error: type[Exception], max_bytes: int = MAX_FILE_BYTES) -> str:
    """The whole of a small regular UTF-8 file; ``error`` when it is larger than ``max_bytes`` or not text."""
    path = regular_file(path, what, error)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(f"{what} {path} is larger than {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{what} {path} is not UTF-8 text ({err.reason} at byte {err.start})") from None


def _own_stream(st: os.stat_result) -> bool:
    """Whether ``st`` is this process's standard output or error (``--out /dev/stdout``: a terminal, a pipe or a
    file the shell opened)."""
    for fd in (1, 2):
        try:
            own = os.fstat(fd)
        except OSError:  # closed
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def _sink(st: os.stat_result) -> bool:
    """Whether ``st`` is ``/dev/null`` or ``/dev/full``: devices that take (or, /dev/full, refuse with "no space
    left") every write at once and hold nothing."""
    for name in (os.devnull, "/dev/full"):
        try:
            dev = os.stat(name)
        except OSError:
            continue
        if stat.S_ISCHR(dev.st_mode) and dev.st_rdev == st.st_rdev:
            return True
    return False


def _not_writable(st: os.stat_result) -> str | None:
    """What ``st`` is when it is nothing an output may be written to, else None. Written: a regular file; the null
    and full devices (``--out /dev/null`` to discard the output, ``/dev/full`` to try a full disk); this process's
    own standard output or error, a terminal or a pipe (``--out /dev/stdout | jq``). Refused: a folder; a named
    pipe (FIFO), whose ``open()`` waits for a reader, forever when there is none; a socket; any other device
    (``/dev/tty``, a serial line whose ``open()`` waits for a carrier, a disk)."""
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)) and _own_stream(st):
        return None
    if stat.S_ISCHR(mode) and _sink(st):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), whose open() waits for a reader"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISBLK(mode):
        return "a block device (a disk)"
    return "a device"


# open() of an output returns at once (POSIX; Windows has no FIFO to wait on): no wait for a FIFO's reader or a
# serial line's carrier, no terminal made the controlling one
_NO_WAIT = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
OUTPUT_KINDS = "it takes a regular file (or /dev/null, /dev/stdout, /dev/stderr)"


def output_path(path: str | os.PathLike, what: str, error: type[Exception]) -> Path:
    """``path`` when an output can be written there without blocking (see ``_not_writable``; a path that does
    not exist yet is a new file); ``error``, one line naming the path, otherwise. Links are followed (a link to a
    FIFO is the FIFO). A check before the work: the writer opens it with ``open_output``, which checks again."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return path
    except (OSError, ValueError) as exc:  # a link loop (ELOOP), a name too long, a permission, a NUL byte
        raise error(f"{what} {path} cannot be used ({getattr(exc, 'strerror', None) or exc})") from None
    kind = _not_writable(st)
    if kind is not None:
        raise error(f"{what} {path} is {kind}: {OUTPUT_KINDS}")
    return path


def open_output(
    path: str | os.PathLike, what: str, error: type[Exception], *, append: bool = False, binary: bool = False
) -> IO[Any]:
    """``path`` opened for writing (``append``: at its end; else emptied), text in UTF-8 unless ``binary``; ``error``
    when it is nothing to write to (``output_path``). It is opened without blocking (a FIFO made in its place
    since the check would hold ``open()`` until a reader came) and what was opened is checked again; the file then
    blocks as any file does. An OSError of the open (read-only, no permission, no space) is the caller's."""
    path = output_path(path, what, error)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC) | _NO_WAIT
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO (or our own pipe) nobody reads, a socket
            raise error(f"{what} {path} is a pipe or socket that nobody reads: {OUTPUT_KINDS}") from None
        raise
    try:
        kind = _not_writable(os.fstat(fd))
        if kind is not None:
            raise error(f"{what} {path} is {kind}: {OUTPUT_KINDS}")
        if _NO_WAIT & getattr(os, "O_NONBLOCK", 0):  # writes block again, as any file's do
            os.set_blocking(fd, True)
        if binary:
            return os.fdopen(fd, "ab" if append else "wb")
        return os.fdopen(fd, "a" if append else "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def write_output(path: str | os.PathLike, content: str | bytes, what: str, error: type[Exception]) -> Path:
    """``content`` (text: UTF-8) written whole to an output path the user named (a report, a chart, a diagram), its
    missing folders made; ``error`` as ``output_path`` says. Made whole first by the caller: a drawing that fails
    leaves the file as it was."""
    path = output_path(path, what, error)  # before its folders are made: `--html /dev/null/x` makes none
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_output(path, what, error, binary=isinstance(content, bytes)) as fh:
        fh.write(content)
    return path


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, read a megabyte at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
