"""Reading files a user names, within bounds: a regular file only, lines of bounded length, a bounded whole.

A path such as ``/dev/zero``, a FIFO or a 4 GB file without a line break must not be read into memory whole:
each reader here refuses what is not a regular file at once, and reads a line at a time with a limit
(``readline(limit)``), so memory stays within the bound whatever the file holds. The caller says what the file
is (``what``: "corpus", "task file") and which error to raise (its own ``BadInput`` subclass).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

MAX_LINE_BYTES = 16 * 2**20  # a JSONL record (a corpus document, a task) longer than this is refused
MAX_FILE_BYTES = 16 * 2**20  # a whole small file (a tiers table) larger than this is refused


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


def regular_file(path: str | os.PathLike, what: str, error: type[Exception]) -> Path:
    """``path`` when it is a regular file (following links); ``error`` saying what it is otherwise."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(f"{what} {path} not found") from None
    except OSError as exc:
        raise error(f"{what} {path} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"  # os.stat followed any link
        raise error(f"{what} {path} is {kind}, not a regular file")
    return path


def bounded_lines(
    path: str | os.PathLike, what: str, error: type[Exception], max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, str]]:
    """(line number, text) of a regular UTF-8 file, one line at a time; ``error`` for a line over ``max_line``
    bytes (a file without line breaks), bytes that are not UTF-8, or a read failure."""
    path = regular_file(path, what, error)
    try:
        with open(path, "rb") as fh:
            n = 0
            while line := fh.readline(max_line + 1):
                n += 1
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


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, read a megabyte at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
