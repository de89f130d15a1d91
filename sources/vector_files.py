"""Which embedding models' vectors a corpus keeps beside its index, and which go: a bound, the least recently used
first, never a set that another process is building or is about to read.

Each model's vectors beside an index ``<index>.sqlite`` are a set of files named ``<index>.vec-<digest>.*``
(``VectorIndex.path_for``): ``.npy`` the vectors, ``.json`` their description, ``.partial.npy`` and ``.partial.json`` a
build under way or interrupted, ``.<random>.building`` a file being written, ``.used`` the time of its last use (its
modification time, set at every open), and ``.npy.lock`` the set's lock (``filelock``: held across processes by a
build from start to end, and by whatever removes the set).

Vectors of different models live side by side: after a process opens or builds a model's vectors from disk, the
corpus keeps at most ``KEEP_MODELS`` sets, the one just opened and the most recently used others. A set beyond the
bound is removed only when its lock can be taken at once (a set that another process is building is skipped, and
removed by a later open once the build is done and it is still the least recently used) and only while its last use
is still the one seen (a process marks a set used before it reads it, so one about to read it keeps it). Its lock
file stays: an empty file, and removing a lock file that another process waits on would let two processes hold
"the" lock. A process that has opened vectors keeps its copy whatever happens to the files (read into memory, or
memory-mapped: the data stays until the map is closed); one that finds a set gone as it reads it takes the set's
lock and builds it again, as the next process to open an evicted model does.
"""

from __future__ import annotations

import glob
import os
import re
import time
from pathlib import Path

from filelock import FileLock, Timeout

KEEP_MODELS = 3  # models whose vectors a corpus index keeps on disk (the least recently used beyond it go)
_SET = re.compile(r"\.vec-([0-9a-f]+)\.")  # after the index's stem: the set's digest, then its kind of file


def lock_of(vectors_path: Path) -> FileLock:
    """The cross-process lock of one model's vector files (``<stem>.npy.lock``)."""
    return FileLock(str(vectors_path) + ".lock")


def stamp_of(vectors_path: Path) -> Path:
    return vectors_path.with_name(vectors_path.stem + ".used")


def mark_used(vectors_path: Path) -> None:
    """Record that these vectors are being used now (the ``.used`` file's modification time, in nanoseconds)."""
    stamp = stamp_of(vectors_path)
    now = time.time_ns()
    try:
        stamp.touch(exist_ok=True)
        os.utime(stamp, ns=(now, now))
    except OSError:  # a read-only or full disk: the set only looks older to a later eviction
        pass


def model_sets(index_path: Path) -> dict[str, int]:
    """{a set's stem (``<index>.vec-<digest>``): its last use in nanoseconds} of every model's vectors beside the
    index (built, or a build under way or interrupted; a use that built nothing, a lone ``.used``, is no set)."""
    prefix = index_path.stem
    stems = set()
    for f in index_path.parent.glob(f"{glob.escape(prefix)}.vec-*"):
        m = _SET.match(f.name, len(prefix))
        if m is not None and not f.name.endswith((".lock", ".used")):
            stems.add(f.name[: m.end() - 1])
    return {stem: last_use(index_path.parent, stem) for stem in stems}


def last_use(folder: Path, stem: str) -> int:
    """When a set was last used (its ``.used`` file's time; a set written before there was one: its newest file's);
    0 when it is gone."""
    try:
        return (folder / f"{stem}.used").stat().st_mtime_ns
    except OSError:
        pass
    times = [0]
    for f in folder.glob(f"{glob.escape(stem)}.*"):
        if f.name.endswith(".lock"):  # taking a lock writes to its file: not a use
            continue
        try:
            times.append(f.stat().st_mtime_ns)
        except OSError:  # gone meanwhile
            continue
    return max(times)


def evict(index_path: Path, keep_path: Path, keep: int | None = None) -> list[str]:
    """Remove the vector sets beyond ``keep`` (default ``KEEP_MODELS``) models beside ``index_path``, the least
    recently used first, never ``keep_path``'s (module docstring); returns the stems removed."""
    keep = KEEP_MODELS if keep is None else keep
    own = keep_path.stem
    sets = model_sets(index_path)
    others = sorted((s for s in sets if s != own), key=lambda s: (sets[s], s), reverse=True)
    removed = []
    for stem in others[max(0, keep - 1) :]:
        if _remove_set(index_path.parent, stem, seen=sets[stem]):
            removed.append(stem)
    return removed


def remove_all(index_path: Path) -> None:
    """Remove every model's vectors of an index that is gone (a corpus's older version), each set under its lock; a
    set being built or read elsewhere is left (its process finishes with it)."""
    for stem in model_sets(index_path):
        _remove_set(index_path.parent, stem)


def _remove_set(folder: Path, stem: str, seen: int | None = None) -> bool:
    """Remove one set's files under its lock, taken at once or not at all; with ``seen``, only while its last use is
    still that one. True when removed."""
    lock = lock_of(folder / f"{stem}.npy")
    try:
        lock.acquire(timeout=0)
    except Timeout:  # being built or read by another process: never removed under it
        return False
    try:
        if seen is not None and last_use(folder, stem) != seen:  # used (or built) meanwhile: kept
            return False
        for f in folder.glob(f"{glob.escape(stem)}.*"):
            if not f.name.endswith(".lock") and f.is_file():
                f.unlink(missing_ok=True)
        return True
    finally:
        lock.release()
