"""A database file of the data directory damaged deeper than its header (issue 24: its last 8 KB overwritten):
every command that reads it either works around the damage or stops with one line naming the file, leaving it as
it is and saying how to recover — never a traceback."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from conftest import child_env

COMMANDS = [
    ("runs",),
    ("show", "d1"),
    ("show", "d2"),
    ("checkpoints", "d1"),
    ("show", "d1", "--html", "{tmp}/r.html"),
    ("fork", "d1", "--round", "1"),
    ("prune", "--compact"),
]


def run(home, *args):
    return subprocess.run(
        [sys.executable, "-m", "saturate.cli", *args],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def damage(path, size=8192, seed=7):
    """Its last ``size`` bytes (never the first page: the header stays, the damage is deeper) overwritten."""
    start = max(4096, os.path.getsize(path) - size)
    data = random.Random(seed).randbytes(os.path.getsize(path) - start)
    with open(path, "r+b") as fh:
        fh.seek(start)
        fh.write(data)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sessions.db", "pages.db"])
def test_a_damaged_file_is_named_kept_and_never_a_traceback(home, tmp_path, name):
    for thread, task in (("d1", "Bubye River"), ("d2", "Victoria Falls")):
        assert run(home, "research", task, "--thread", thread, "--quiet").returncode == 0
    target = home / name
    if not target.exists() or target.stat().st_size < 8192:
        pytest.skip(f"{name} is too small here to damage past its header")
    damage(target)
    outcomes = []
    for args in COMMANDS:
        before = target.read_bytes()
        done = run(home, *(a.format(tmp=tmp_path) for a in args))
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert done.returncode in (0, 2), (args, done.returncode, done.stderr)
        if done.returncode == 2:
            last = done.stderr.strip().splitlines()[-1]
            # named, kept, and what to do (the generic damaged-file message, or the page store's own)
            assert str(target) in last and "as it is" in last and "move it away" in last, (args, last)
            assert target.read_bytes() == before, args  # a command that refuses leaves the user's file as it is
        # (one that worked around the damage may write: where the damage lands varies with the file's length,
        # and `fork` succeeds when it misses the forked thread's pages)
        outcomes.append(done.returncode)
    assert 2 in outcomes  # the damage was met (prune --compact reads every file), and reported
