"""Files a user names are read within bounds (state/files.py): a device, a pipe or a folder where a file is
expected is refused at once, and a line without end (a file with no line breaks) is refused at its bound instead
of being read into memory whole — for a corpus, `--sources local:…`, `--source-tiers`, a batch's and a
benchmark's task file (issue 24: `--corpus /dev/zero` grew to 23.7 GB until the kernel killed it)."""

from __future__ import annotations

import json
import os

import pytest

from saturate.state.files import MAX_LINE_BYTES

from conftest import saturate_cli, without_waiting_on

DEVICE = "is a device, pipe or socket, not a regular file"


def run(home, *args, timeout=60):
    return saturate_cli(home, *args, timeout=timeout)


@pytest.mark.parametrize(
    "args",
    [
        ("research", "Bubye River", "--corpus", "/dev/zero"),
        ("research", "Bubye River", "--sources", "local:/dev/zero,wiki"),
        ("verify", "The Bubye River is in Zimbabwe.", "--source-tiers", "/dev/zero"),
        ("batch", "/dev/zero"),
        ("bench", "natural", "--tasks", "/dev/zero"),
        ("bench", "verify", "--claims", "/dev/zero", "--limit", "2"),
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


def test_a_batch_streams_its_task_file(home, tmp_path, monkeypatch, musique_corpus):
    """A batch takes its tasks a line at a time as workers free up (issue 24: a million-line file was read and
    validated whole first — 73 s before the first result, 727 MB): past the lines checked before anything starts
    (READ_AHEAD), a bad line stops the intake, the tasks before it finish and are written, and the error names the
    line; run again after the fix, the file goes on from there."""
    from saturate.graph import batch
    from saturate.graph.session import InputError

    monkeypatch.setattr(batch, "READ_AHEAD", 2)
    tasks = tmp_path / "t.jsonl"
    good = [{"id": f"q{i}", "question": q} for i, q in enumerate(["Zambezi river", "Bubye River", "Limpopo"])]
    tasks.write_text("".join(json.dumps(t) + "\n" for t in good) + "not json\n")
    out = tmp_path / "out.jsonl"
    overrides = {"corpus": str(musique_corpus), "max_rounds": 2}
    with pytest.raises(InputError, match=r"line 4 is not JSON.*the 3 task\(s\) before it are in .*fix the line"):
        batch.run_batch(tasks, workers=1, out=out, overrides=overrides)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q0", "q1", "q2"] and {r["status"] for r in rows} == {"done"}
    tasks.write_text("".join(json.dumps(t) + "\n" for t in good) + json.dumps({"id": "q3", "question": "Harare"}))
    report = batch.run_batch(tasks, workers=1, out=out, overrides=overrides)
    assert (report.total, report.skipped, report.done) == (4, 3, 1)


def test_a_batch_validates_each_distinct_settings_object_once(monkeypatch, tmp_path):
    """Validating the same settings again for every line was 90 % of reading a large task file."""
    from saturate.graph import batch

    calls = []
    real = batch.load_settings
    monkeypatch.setattr(batch, "load_settings", lambda raw: calls.append(raw) or real(raw))
    tasks = tmp_path / "t.jsonl"
    lines = [
        {"id": str(i), "question": f"q {i}", **({"settings": {"max_rounds": 3}} if i % 2 else {})} for i in range(500)
    ]
    tasks.write_text("".join(json.dumps(t) + "\n" for t in lines))
    assert len(batch.read_tasks(tasks)) == 500
    assert len(calls) == 2


def test_a_claims_folder_is_one_line(home, tmp_path):
    """``bench verify --claims DIR`` was an IsADirectoryError traceback (and ``--claims /dev/zero``, above, a
    MemoryError in load_claims)."""
    done = run(home, "bench", "verify", "--claims", str(tmp_path), "--limit", "2")
    assert (
        done.returncode == 2
        and done.stderr.strip() == f"saturate: error: claims file {tmp_path} is a folder, not a regular file"
    )


def test_a_note_as_corpus_is_read_within_the_bound(tmp_path, monkeypatch):
    """A folder's note (or one note given as the corpus) was read whole with read_text(): now within the bound of a
    JSONL record's line, its line breaks as read_text gave them."""
    from saturate.sources import local
    from saturate.sources.local import CorpusError, read_folder

    note = tmp_path / "note.md"
    note.write_bytes(b"# Bubye\r\n\r\nThe Bubye River\rflows in Zimbabwe.\r\n")
    (rec,) = read_folder(tmp_path, [note])
    assert rec["title"] == "Bubye" and "\r" not in rec["text"] and "The Bubye River\nflows" in rec["text"]
    monkeypatch.setattr(local, "MAX_LINE_BYTES", 20)
    with pytest.raises(CorpusError, match="corpus file .*note.md is larger than 20 bytes"):
        list(read_folder(tmp_path, [note]))


def test_a_tiers_file_grown_past_the_bound_since_the_settings_check_is_refused(tmp_path):
    """The settings check ``source_tiers`` within 16 MB; the table was read again later with read_text(), whole."""
    from saturate.nodes.reading.tiers import SourceTiersError, _tier_table
    from saturate.state.files import MAX_FILE_BYTES

    tiers = tmp_path / "tiers.json"
    with tiers.open("wb") as fh:
        fh.write(b" " * MAX_FILE_BYTES + b'{"example.org": "primary"}')
    with pytest.raises(SourceTiersError, match=f"is larger than {MAX_FILE_BYTES:,} bytes"):
        _tier_table(str(tiers), 1)


def test_the_monitors_subset_of_a_pipe_is_none_at_once(tmp_path):
    """The monitor copies a benchmark's hard tasks out of its task file: read_text() on a FIFO waited forever."""
    from saturate.monitor.harness import _write_subset

    fifo = tmp_path / "tasks.jsonl"
    os.mkfifo(fifo)
    got = without_waiting_on(
        fifo, lambda: _write_subset(str(fifo), {"q1"}, tmp_path / "o.jsonl"), os.O_WRONLY, "_write_subset"
    )
    assert got == [None]
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"id": "q1", "question": "a"}\r\n{"id": "q2", "question": "b"}\n')
    subset = _write_subset(str(tasks), {"q1"}, tmp_path / "o.jsonl")
    assert subset is not None and subset.read_text() == '{"id": "q1", "question": "a"}\n'
