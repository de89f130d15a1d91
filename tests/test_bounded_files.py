"""Files a user names are read within bounds (state/files.py): a device, a pipe or a folder where a file is
expected is refused at once, and a line without end (a file with no line breaks) is refused at its bound instead
of being read into memory whole — for a corpus, `--sources local:…`, `--source-tiers`, a batch's and a
benchmark's task file (issue 24: `--corpus /dev/zero` grew to 23.7 GB until the kernel killed it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from saturate.state.files import MAX_LINE_BYTES

from conftest import child_env

DEVICE = "is a device, pipe or socket, not a regular file"


def run(home, *args, timeout=60):
    done = subprocess.run(
        [sys.executable, "-m", "saturate.graph.cli", *args],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.parametrize(
    "args",
    [
        ("research", "Bubye River", "--corpus", "/dev/zero"),
        ("research", "Bubye River", "--sources", "local:/dev/zero,wiki"),
        ("verify", "The Bubye River is in Zimbabwe.", "--source-tiers", "/dev/zero"),
        ("batch", "/dev/zero"),
        ("bench", "natural", "--tasks", "/dev/zero"),
    ],
)
def test_a_device_is_refused_at_once(home, args):
    done = run(home, *args)
    assert done.returncode == 2, done.stderr
    assert "/dev/zero" in done.stderr and (DEVICE in done.stderr or "not a regular file" in done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_file_without_line_breaks_is_refused_at_its_bound(home, tmp_path):
    endless = tmp_path / "endless.jsonl"
    with endless.open("wb") as fh:  # one line a little over the bound, no newline anywhere
        fh.write(b'{"id": "1", "title": "t", "text": "' + b"a" * (MAX_LINE_BYTES + 10))
    done = run(home, "research", "Bubye River", "--corpus", str(endless))
    assert done.returncode == 2 and f"line 1 is longer than {MAX_LINE_BYTES:,} bytes" in done.stderr
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "q1", "question": "x" * 1_100_000}))
    done = run(home, "batch", str(tasks))
    assert done.returncode == 2 and "line 1 is longer than 1,000,000 bytes" in done.stderr


def test_deeply_nested_json_is_a_clear_error(home, tmp_path):
    deep = "[" * 200_000 + "]" * 200_000
    corpus = tmp_path / "deep.jsonl"
    corpus.write_text(deep + "\n")
    done = run(home, "research", "Bubye River", "--corpus", str(corpus))
    assert done.returncode == 2 and "line 1 is not valid JSON (nested too deeply)" in done.stderr
    tiers = tmp_path / "tiers.json"
    tiers.write_text(deep)
    done = run(home, "verify", "The Bubye River is in Zimbabwe.", "--source-tiers", str(tiers))
    assert done.returncode == 2 and "nested too deeply" in done.stderr
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(deep + "\n")
    done = run(home, "batch", str(tasks))
    assert done.returncode == 2 and "nested too deeply" in done.stderr
