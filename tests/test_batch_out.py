"""A batch's ``--out`` file (graph/batch.py): nothing the user has is lost, and a path that cannot be an output file
is one line, exit 2. The file is read back a bounded line at a time and only when it is a regular file
(``--out /dev/full`` grew one endless line until memory ran out); a last line without its line break is settled
without deleting anything: a whole result line gets its break, a torn one (a kill while writing) is moved aside into
``OUT.torn``; a file that is not saturate's batch output is refused as it is (a 100-byte file of the user's was
cut back to its last line break — to nothing)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from saturate.graph import batch
from saturate.graph.session import InputError

from conftest import saturate_cli


def row(task_id: str, status: str = "done") -> str:
    """A result line as run_batch writes it (the keys that matter here, "id" first)."""
    return json.dumps({"id": task_id, "thread": f"t-{task_id}", "line": 1, "status": status}) + "\n"


def run(home, *args):
    return saturate_cli(home, *args)


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "What is water?"}) + "\n")
    return path


def test_a_torn_last_line_is_moved_aside_not_deleted(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text(row("a") + row("b", "failed") + row("c") + '{"id": "cut sho')
    assert batch.finished_ids(out) == {"a", "c"}
    assert out.read_text() == row("a") + row("b", "failed") + row("c")  # the next result starts its own line
    assert (tmp_path / "r.jsonl.torn").read_text() == '{"id": "cut sho\n'
    out.write_text(out.read_text() + '{"i')  # torn again: appended to the same file aside
    assert batch.finished_ids(out) == {"a", "c"}
    assert (tmp_path / "r.jsonl.torn").read_text() == '{"id": "cut sho\n{"i\n'


def test_a_whole_last_line_without_its_break_is_kept(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text(row("a") + row("b").rstrip("\n"))  # an editor that drops the final line break
    assert batch.finished_ids(out) == {"a", "b"}
    assert out.read_text() == row("a") + row("b") and not (tmp_path / "r.jsonl.torn").exists()


@pytest.mark.parametrize(
    "content",
    [
        # the review's case: 100 random bytes without a line break (seeded: each xdist worker collects the same)
        random.Random(0).randbytes(100).replace(b"\n", b"x").replace(b"{", b"x"),
        b"my notes\nmore notes",
        b'{"id": "q1", "question": "a task file, not results"}\n',  # --out naming the task file
    ],
    ids=["random-bytes", "notes", "task-file"],
)
def test_a_file_that_is_not_batch_output_is_refused_untouched(tmp_path, content):
    out = tmp_path / "mine.txt"
    out.write_bytes(content)
    with pytest.raises(InputError, match="is not saturate's batch output.*left as it is"):
        batch.finished_ids(out)
    assert out.read_bytes() == content and not (tmp_path / "mine.txt.torn").exists()


def test_a_damaged_long_line_is_skipped_at_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(batch, "MAX_RESULT_LINE_BYTES", 200)
    monkeypatch.setattr(batch, "READ_CHUNK", 64)  # the long line is skipped a chunk at a time
    out = tmp_path / "r.jsonl"
    long = '{"id": "x", "answer": "' + "y" * 1000 + '"}\n'
    out.write_text(row("a") + long + row("b") + '{"id": "z", "answer": "' + "w" * 1000)
    assert batch.finished_ids(out) == {"a", "b"}
    assert out.read_text() == row("a") + long + row("b")  # the damaged line stays; the torn long tail is aside
    assert (tmp_path / "r.jsonl.torn").read_text() == '{"id": "z", "answer": "' + "w" * 1000 + "\n"


def test_an_empty_file_and_a_new_one_are_read_back_a_pipe_is_refused(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "blank.jsonl").write_text("\n" + row("a"))
    # a FIFO: opened read-write and sought, it was "Illegal seek" (a traceback); then only written, its open()
    # waited for a reader, forever; now refused before anything runs (test_output_paths.py)
    os.mkfifo(tmp_path / "pipe")
    assert batch.finished_ids(tmp_path / "empty.jsonl") == set()
    assert batch.finished_ids(tmp_path / "blank.jsonl") == {"a"}
    assert batch.finished_ids(tmp_path / "new.jsonl") == set()
    assert batch.finished_ids(Path(os.devnull)) == set()
    with pytest.raises(InputError, match=r"pipe is a named pipe \(FIFO\)"):
        batch.finished_ids(tmp_path / "pipe")


def test_dev_full_is_written_not_read_back(home, tasks):
    """``--out /dev/full``: ``for raw in f`` read one endless line of zeros (out of memory); now the device is only
    written, its ENOSPC the one line of a full disk, saying how a batch goes on."""
    done = run(home, "batch", str(tasks), "--workers", "1", "--quiet", "--out", "/dev/full")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no space left" in done.stderr and "run the same batch command again" in done.stderr


def test_out_paths_that_cannot_be_an_output_file_are_one_line(home, tasks, tmp_path):
    (tmp_path / "folder").mkdir()
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    mine = tmp_path / "mine.bin"
    mine.write_bytes(b"\x00\x01 user data without a line break")
    cases = {
        str(tmp_path / "folder"): "is a folder",
        str(tmp_path / "loop"): "Too many levels of symbolic links",
        "/proc/nope/x": "cannot make its folder /proc/nope",
        str(mine): "is not saturate's batch output",
    }
    for out, said in cases.items():
        done = run(home, "batch", str(tasks), "--workers", "1", "--quiet", "--out", out)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert said in done.stderr, done.stderr
    assert mine.read_bytes() == b"\x00\x01 user data without a line break"
