"""Output paths the user names never block or hang (state/files.py ``output_path``, ``open_output``): ``batch --out``,
``show --html/--md/--chart``, the files ``graph --out DIR`` writes and ``bench --plot``. A FIFO (whose ``open()``
for writing waited for a reader: forever), a folder, a socket or a device other than /dev/null, /dev/full and the
command's own output (/dev/tty, /dev/zero) is one line naming the path, exit 2, before any session starts or anything
is written. Every command runs with a timeout, so a regression fails instead of hanging the suite."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

from saturate.state import files
from saturate.state.errors import BadInput

from conftest import fake_eval_data, saturate_cli, without_waiting_on

QUICK_S = 30  # a refusal takes a second or two (the imports); a FIFO's open() never returned


def run(home, *args, timeout=QUICK_S):
    return saturate_cli(home, *args, timeout=timeout)


def refused(done, path, said: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f" {path} " in lines[0] and said in lines[0], done.stderr


@pytest.fixture
def odd(tmp_path):
    """{name: (path, what the line says)}: each kind of path that is no file to write to."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    os.symlink(tmp_path / "fifo", tmp_path / "link-to-fifo")  # a link is followed: this is the FIFO
    short = Path(tempfile.mkdtemp(prefix="s"))  # a socket's path has at most 108 bytes
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(short / "sock"))
    paths = {
        "fifo": (tmp_path / "fifo", "is a named pipe (FIFO)"),
        "link": (tmp_path / "link-to-fifo", "is a named pipe (FIFO)"),
        "folder": (tmp_path / "folder", "is a folder"),
        "socket": (short / "sock", "is a socket"),
        "zero": (Path("/dev/zero"), "is a device"),
    }
    if Path("/dev/tty").exists():
        paths["tty"] = (Path("/dev/tty"), "is a device")
    yield paths
    server.close()
    shutil.rmtree(short)


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "What is water?"}) + "\n")
    return path


def test_batch_out_that_is_no_file_is_one_line_before_any_session(home, tasks, odd):
    for name, (path, said) in odd.items():
        started = time.monotonic()
        done = run(home, "batch", str(tasks), "--workers", "1", "--quiet", "--out", str(path))
        refused(done, path, said)
        assert done.stdout == "" and time.monotonic() - started < QUICK_S, name
        assert "it takes a regular file (or /dev/null, /dev/stdout, /dev/stderr)" in done.stderr
    assert json.loads(run(home, "runs", "--json").stdout) == []  # no session started


def test_batch_out_to_dev_null_or_its_own_output_is_written(home, tasks):
    """/dev/null takes the results (a sink, allowed on purpose); /dev/stdout, here a pipe the test reads, too."""
    assert run(home, "batch", str(tasks), "--workers", "1", "--quiet", "--out", os.devnull).returncode == 0
    done = run(home, "batch", str(tasks), "--workers", "1", "--quiet", "--out", "/dev/stdout", "--thread-prefix", "o")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == "a"


@pytest.fixture
def finished(home) -> str:
    from saturate import research

    return research("What is water?", thread_id="t1", max_rounds=1).thread_id


def test_show_outputs_that_are_no_file_are_one_line_before_anything_is_written(finished, home, odd, tmp_path):
    for flag in ("--html", "--md", "--chart"):
        fifo, said = odd["fifo"]
        refused(run(home, "show", finished, flag, str(fifo)), fifo, said)
    for name in ("folder", "socket", "zero"):
        path, said = odd[name]
        refused(run(home, "show", finished, "--html", str(path)), path, said)
    # --html is fine, --chart is not: nothing is written (the check of every flag comes first)
    fifo, said = odd["fifo"]
    done = run(home, "show", finished, "--html", str(tmp_path / "r.html"), "--chart", str(fifo))
    refused(done, fifo, said)
    assert not (tmp_path / "r.html").exists()
    assert run(home, "show", finished, "--md", os.devnull).returncode == 0


def test_graph_files_that_are_no_file_are_one_line_before_any_is_drawn(home, tmp_path):
    out = tmp_path / "diagram"
    out.mkdir()
    os.mkfifo(out / "saturate-graph.png")
    refused(run(home, "graph", "--out", str(out)), out / "saturate-graph.png", "is a named pipe (FIFO)")
    assert sorted(p.name for p in out.iterdir()) == ["saturate-graph.png"]  # .mmd, .dot, .svg not written either


def test_bench_plot_that_is_no_file_is_one_line_before_any_session(home, tmp_path):
    """The recall plot was written after the whole benchmark: into a FIFO, the run then waited forever."""
    data = fake_eval_data(tmp_path / "data")
    os.mkfifo(tmp_path / "plot.png")
    args = ("bench", "--data", str(data), "--set", "musique", "--limit", "1", "--no-monitor")
    refused(run(home, *args, "--plot", str(tmp_path / "plot.png")), tmp_path / "plot.png", "is a named pipe (FIFO)")


def test_the_kinds_of_output_path():
    for sink in (os.devnull, "/dev/full", "/dev/stdout", "/dev/stderr"):
        if Path(sink).exists():
            assert files.output_path(sink, "--out", BadInput) == Path(sink)
    with pytest.raises(BadInput, match=r"^--out /dev/zero is a device: it takes a regular file"):
        files.output_path("/dev/zero", "--out", BadInput)


def test_a_fifo_made_after_the_check_is_refused_at_open_not_waited_on(tmp_path, monkeypatch):
    """The check and the open are two steps: a FIFO put in the path between them is opened without waiting
    (O_NONBLOCK: no reader, ENXIO) and refused; with a reader, what was opened is checked again (fstat)."""
    monkeypatch.setattr(files, "output_path", lambda path, what, error: Path(path))  # the check passed, then ...
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = without_waiting_on(
        fifo, lambda: files.open_output(fifo, "--out", BadInput, append=True).close(), os.O_RDONLY, "open_output"
    )
    assert len(got) == 1 and "is a pipe or socket that nobody reads" in str(got[0])
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BadInput, match="is a named pipe"):
            files.open_output(fifo, "--out", BadInput)
    finally:
        os.close(reader)
