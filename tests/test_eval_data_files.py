"""The evaluation data the benchmarks read (--data DIR or SATURATE_EVAL_DATA: musique/, hotpotqa/, webq/,
factcheck/) goes through one bounded reader (state/files.py ``bounded_jsonl``; a corpus is checked by
``regular_file`` with the same bound, then indexed a bounded line at a time): a damaged file — not JSON on line N,
not UTF-8, a line without end, larger than ``MAX_EVAL_FILE_BYTES``, random bytes, a FIFO in its place — is one line
naming the file and what is wrong, exit 2, no traceback, and nothing waits on a FIFO. The data folders here are
made up in tmp_path (``fake_eval_data``), never a copy of the real data."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

from saturate.state.errors import BadInput
from saturate.state.files import MAX_EVAL_FILE_BYTES, MAX_EVAL_LINE_BYTES, bounded_jsonl

from conftest import fake_eval_data, saturate_cli

QUICK_S = 30  # a refusal takes a second or two (the imports); a FIFO's open() never returned


def run(home, *args, env=None):
    return saturate_cli(home, *args, timeout=QUICK_S, env=env)


def damage(path: Path, kind: str) -> str:
    """Damage the file at ``path`` as ``kind`` says; what the one line says of it (a regular expression)."""
    good = path.read_bytes()
    n = good.count(b"\n") + 1  # the line the damage is on
    if kind == "not-json":
        path.write_bytes(good + b'{"id": "cut", "question": \n')
        return rf"{path}: line {n} is not valid JSON \(Expecting value\)"
    if kind == "not-utf8":
        path.write_bytes(good + b'{"id": "x", "question": "caf\xe9"}\n')
        return rf"{path}: line {n} is not UTF-8 text \(invalid continuation byte at byte 28\)"
    if kind == "binary":
        path.write_bytes(random.Random(0).randbytes(4096))
        return rf"{path}: line 1 is not (UTF-8 text|valid JSON)"
    if kind == "long-line":
        path.write_bytes(good + json.dumps({"id": "x", "question": "q" * MAX_EVAL_LINE_BYTES}).encode() + b"\n")
        return rf"{path}: line {n} is longer than {MAX_EVAL_LINE_BYTES:,} bytes"
    if kind == "too-large":  # good lines, then (sparse, no disk used) zeros up to one byte past the bound
        with path.open("r+b") as fh:
            fh.truncate(MAX_EVAL_FILE_BYTES + 1)
        return rf"{path} is larger than {MAX_EVAL_FILE_BYTES:,} bytes"
    assert kind == "fifo"
    path.unlink()
    os.mkfifo(path)
    return rf"{path} is a device, pipe or socket, not a regular file"


def refused(done, said: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("saturate: error: "), done.stderr
    assert re.search(said, lines[0]), (said, lines[0])


RESEARCH = ("bench", "--set", "musique", "--limit", "1", "--no-monitor")
BATCH = ("bench", "batch", "--sessions", "1", "--workers", "1", "--backends", "sqlite")


@pytest.mark.parametrize("kind", ["not-json", "not-utf8", "binary", "long-line", "too-large", "fifo"])
def test_a_damaged_task_file_is_one_line(home, tmp_path, kind):
    data = fake_eval_data(tmp_path / "data")
    said = damage(data / "musique" / "tasks.jsonl", kind)
    refused(run(home, *RESEARCH, "--data", str(data)), said)


@pytest.mark.parametrize("kind", ["not-json", "not-utf8", "too-large", "fifo"])
def test_a_damaged_corpus_is_one_line(home, tmp_path, kind):
    data = fake_eval_data(tmp_path / "data")
    said = damage(data / "musique" / "corpus.jsonl", kind)
    refused(run(home, *RESEARCH, "--data", str(data)), said)


@pytest.mark.parametrize(
    "args, file, kind",
    [
        # bench batch read its task file whole (read_text): a JSONDecodeError traceback, and a FIFO waited forever
        (BATCH, "musique/tasks.jsonl", "not-json"),
        (BATCH, "musique/tasks.jsonl", "fifo"),
        (BATCH, "musique/corpus.jsonl", "too-large"),
        (("bench", "tune", "--set", "musique", "--limit", "1"), "musique/tasks.jsonl", "too-large"),
        (("bench", "multi", "--set", "musique", "--limit", "1"), "musique/corpus.jsonl", "too-large"),
        (("bench", "retrieval", "--limit", "1"), "musique/corpus.jsonl", "too-large"),
        (("bench", "reader", "--set", "musique", "--limit", "1"), "musique/tasks.jsonl", "too-large"),
        (("bench", "natural", "--limit", "1"), "webq/tasks.jsonl", "too-large"),
        (("bench", "brief", "--limit", "1"), "hotpotqa/tasks.jsonl", "fifo"),
        (("bench", "verify", "--limit", "1"), "factcheck/claims.jsonl", "too-large"),
        (("bench", "verify", "--limit", "1"), "factcheck/claims.jsonl", "not-json"),
    ],
    ids=lambda v: v if isinstance(v, str) else v[1],
)
def test_every_benchmark_reads_the_data_within_bounds(home, tmp_path, args, file, kind):
    """Each benchmark that reads the evaluation data, given it by SATURATE_EVAL_DATA (and --data where it takes
    one): the damaged file is one line before any session."""
    data = fake_eval_data(tmp_path / "data")
    said = damage(data / file, kind)
    given = ("--data", str(data)) if args[1] != "verify" else ()
    refused(run(home, *args, *given, env={"SATURATE_EVAL_DATA": str(data)}), said)


def test_the_bounded_reader_and_its_users(tmp_path):
    data = fake_eval_data(tmp_path / "data")
    tasks = data / "webq" / "tasks.jsonl"
    assert [n for n, _ in bounded_jsonl(tasks, "task file", BadInput)] == [1, 2]
    with pytest.raises(BadInput, match=rf"task file {tasks} is larger than 100 bytes"):
        list(bounded_jsonl(tasks, "task file", BadInput, max_bytes=100))
    tasks.write_text('{"id": "q1", "question": "a"}\n["a list"]\n')
    with pytest.raises(BadInput, match=r"line 2 is not a JSON object"):
        list(bounded_jsonl(tasks, "task file", BadInput))
    # bench perf's questions: read whole with json.loads before (a traceback for a damaged line)
    from saturate.bench.perf.common import read_jsonl

    with pytest.raises(BadInput, match=r"line 2 is not a JSON object"):
        read_jsonl(tasks)
    # the claims reader raises ValueError as it always did, and BadInput: one line from any command (bench
    # real-model let a damaged claims file through as a traceback after its questions had run)
    from saturate.sources.replay import load_claims

    claims = data / "factcheck" / "claims.jsonl"
    damage(claims, "too-large")
    with pytest.raises(BadInput, match="is larger than"):
        load_claims(claims)
    assert issubclass(BadInput, ValueError)


def test_the_real_data_is_within_the_bounds():
    """The bounds leave room: every file of the real evaluation data (when present) is far under them."""
    from conftest import EVAL_DATA, eval_file

    eval_file()  # skipped without the data
    for path in EVAL_DATA.glob("*/*.jsonl"):
        assert path.stat().st_size * 4 < MAX_EVAL_FILE_BYTES, path
        assert sum(1 for _ in bounded_jsonl(path, "evaluation data file", BadInput)) > 0
