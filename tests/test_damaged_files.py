"""Damaged, missing, read-only and full: every file saturate keeps has a defined outcome.

Derived files (the search cache, the page store, corpus indexes) are repaired and the repair is noted in the
session; the user's own file (sessions.db) is never replaced: a one-line error names it. A full disk stops a
session at its last checkpoint with one line, and the session resumes once there is room.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from saturate.cli import main
from saturate.graph import api
from saturate.sources import LocalCorpus, SqlitePageStore
from saturate.sources.cache import SearchCache

from conftest import ROOT, child_env

TASK = "Who founded the city of Rome?"


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "rome.jsonl"
    docs = [
        {"id": "rome", "title": "Rome", "text": "Rome was founded by Romulus in 753 BC, according to legend."},
        {"id": "romulus", "title": "Romulus", "text": "Romulus and Remus were twins raised by a she-wolf."},
        {"id": "remus", "title": "Remus", "text": "Remus was killed by his brother Romulus at the founding of Rome."},
        {"id": "tiber", "title": "Tiber", "text": "The Tiber river flows through Rome to the sea at Ostia."},
    ] + [
        {"id": f"n{i}", "title": f"Roman note {i}", "text": f"Rome note {i}: the city of Rome had {i} hills."}
        for i in range(30)
    ]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def garbage(path: Path) -> bytes:
    data = b"this is not an SQLite database\x00" * 64
    path.write_bytes(data)
    return data


def run(home, corpus, thread="t1", **kw):
    result = api.research(TASK, thread_id=thread, home=home, corpus=str(corpus), seed=1, max_rounds=3, **kw)
    state = api.session_state(thread, home=home)
    notes = [f for r in state["records"] for f in r.get("fallbacks", [])] + result.debug.get("notes", [])
    return result, notes


# --- derived files: repaired, noted, the session finishes ---------------------------------------------------


def test_damaged_search_cache_is_moved_aside_and_noted(home, corpus):
    home.mkdir(parents=True)
    bad = garbage(home / "cache.db")
    result, notes = run(home, corpus)
    assert result.outcome == "answer" and result.sources
    assert any("search cache" in n and "unreadable" in n for n in notes), notes
    aside = list(home.glob("cache.db.damaged-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bad  # nothing deleted
    assert len(SearchCache(home / "cache.db")) > 0  # the new cache works


def test_damaged_page_store_is_named_and_kept(home, corpus, capsys):
    home.mkdir(parents=True)
    bad = garbage(home / "pages.db")
    assert main(["research", TASK, "--corpus", str(corpus)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("saturate: error: ") and "pages.db is not a readable SQLite database" in last
    assert "move it away" in last
    assert (home / "pages.db").read_bytes() == bad  # the user's file: never replaced


def test_page_store_damaged_before_decide_is_named_then_the_session_answers_from_snippets(home, corpus, capsys):
    class Stop(Exception):
        pass

    def stop_after_enrich(chunk):
        if "enrich" in chunk:
            raise Stop

    with pytest.raises(Stop):
        api.research(
            TASK,
            thread_id="t2",
            home=home,
            corpus=str(corpus),
            seed=1,
            enrich_overlap_max=1.0,
            stream_handler=stop_after_enrich,
        )
    assert api.session_state("t2", home=home)["_next"] == ["decide"]
    garbage(home / "pages.db")
    assert main(["resume", "t2"]) == 2
    assert "pages.db is not a readable SQLite database" in capsys.readouterr().err
    (home / "pages.db").rename(home / "pages.db.bad")  # what the message says to do
    result = api.resume("t2", home=home)
    assert any("not in the page store: their snippets were used" in n for n in result.debug["notes"])
    assert result.answer


def test_page_store_damaged_mid_session_is_left_alone_and_noted(tmp_path):
    store = SqlitePageStore(tmp_path / "pages.db")
    assert store.put("https://a.test/", "text")
    # a file damaged under an open connection: SQLite's page cache hides it until the next read from disk, so
    # the test reconnects (what the next statement of a long session meets)
    assert store._file._db is not None
    store._file._db.close()
    with open(tmp_path / "pages.db", "r+b") as f:
        f.write(b"\xff" * 100)
    store._file._db = sqlite3.connect(tmp_path / "pages.db", check_same_thread=False)
    assert store.get("https://a.test/") is None and store.put("https://b.test/", "x") is False
    notes = store.drain_notes()
    assert len(notes) == 1 and "became unreadable" in notes[0] and "left as it is" in notes[0]
    assert (tmp_path / "pages.db").read_bytes()[:100] == b"\xff" * 100


def test_cache_that_cannot_be_repaired_is_bypassed(tmp_path):
    (tmp_path / "file").write_text("keep me")
    cache = SearchCache(tmp_path / "file" / "cache.db")  # its folder is a file: it can never be opened
    assert cache.disabled and len(cache) == 0 and cache.get("k", 10, 0) is None
    cache.put("k", "s", "q", [], 0)  # dropped, not raised
    assert any("unusable" in n for n in cache.drain_notes())
    assert (tmp_path / "file").read_text() == "keep me"


def test_damaged_index_is_rebuilt_at_open_and_noted_in_the_session(home, corpus):
    api.research("Romulus", thread_id="warm", home=home, corpus=str(corpus), seed=1, max_rounds=3)
    (index,) = (home / "index").glob("rome-*.sqlite")
    garbage(index)
    result, notes = run(home, corpus, cache_ttl_s=0)
    assert result.outcome == "answer"
    assert any("was unreadable" in n and "rebuilt from" in n for n in notes), notes


def test_index_damaged_under_an_open_corpus_is_rebuilt_once(corpus, tmp_path):
    source = LocalCorpus.open(corpus, tmp_path / "idx")
    assert source.search("Romulus", 3)
    assert source.index_path is not None
    with open(source.index_path, "r+b") as f:  # damaged in place, under the open connection
        f.write(b"\xff" * source.index_path.stat().st_size)
    hits = source.search("Tiber river", 3)
    assert hits and hits[0].title == "Tiber"
    assert any("rebuilt" in n for n in source.drain_notes())
    assert source.drain_notes() == []  # each note once


def test_full_text_index_damaged_inside_an_intact_file_is_detected_at_open(corpus, tmp_path):
    source = LocalCorpus.open(corpus, tmp_path / "idx")
    source.close()
    assert source.index_path is not None
    db = sqlite3.connect(source.index_path)  # the tables open, the meta table is intact; the postings are garbage
    db.execute("UPDATE fts_data SET block = x'ffffffff' WHERE id > 1")
    db.commit()
    db.close()
    again = LocalCorpus.open(corpus, tmp_path / "idx")
    assert [r.title for r in again.search("Tiber river", 1)] == ["Tiber"]
    notes = again.drain_notes()
    assert len(notes) == 1 and "is damaged" in notes[0] and "rebuilt from" in notes[0]


def test_stale_building_file_of_a_killed_build_is_removed(corpus, tmp_path):
    idx = tmp_path / "idx"
    idx.mkdir()
    stale = idx / "rome-0000.sqlite.abc.building"
    stale.write_bytes(b"half an index")
    live = idx / "other-0000.sqlite.def.building"
    live.write_bytes(b"a build running in another process")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'rb'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
            str(live),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        LocalCorpus.open(corpus, idx)
        assert not stale.exists()  # nobody holds its lock: a dead build's
        assert live.exists()  # locked by a live process: kept
    finally:
        holder.kill()
        holder.wait()
    with open(live, "rb") as f:  # the OS released the dead holder's lock
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_build_killed_mid_way_leaves_no_index_and_the_next_open_builds(tmp_path):
    big = tmp_path / "big.jsonl"
    with big.open("w") as f:
        for i in range(60000):
            f.write(json.dumps({"id": str(i), "title": f"Doc {i}", "text": f"alpha beta gamma {i} " * 20}) + "\n")
    idx = tmp_path / "idx"
    code = "import sys; from saturate.sources import LocalCorpus; LocalCorpus.open(sys.argv[1], sys.argv[2])"
    proc = subprocess.Popen([sys.executable, "-c", code, str(big), str(idx)], cwd=ROOT)
    for _ in range(600):  # until its temp file exists (the build is then under way)
        if list(idx.glob("*.building")) or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the build finished before it could be killed: make the corpus bigger"
    time.sleep(0.3)
    proc.kill()
    proc.wait()
    assert not list(idx.glob("*.sqlite")), "a killed build must not leave a half index in place"
    corpus = LocalCorpus.open(big, idx)
    assert corpus.count == 60000 and not list(idx.glob("*.building"))


# --- the user's own file: named, never replaced ---------------------------------------------------------


@pytest.mark.parametrize("command", [["runs"], ["show", "t1"], ["research", TASK]])
def test_damaged_sessions_db_is_named_and_kept(home, capsys, command):
    home.mkdir(parents=True)
    bad = garbage(home / "sessions.db")
    assert main(command) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # (research prints its progress header first)
    assert last.startswith("saturate: error: ") and "Traceback" not in err
    assert "sessions.db is not a readable SQLite database" in last and "backup" in last
    assert (home / "sessions.db").read_bytes() == bad


@pytest.mark.parametrize("command", [["runs"], ["research", TASK]])
def test_empty_sessions_db_is_named(home, capsys, command):
    home.mkdir(parents=True)
    (home / "sessions.db").write_bytes(b"")
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "is empty (0 bytes)" in err[-1] and err[-1].startswith("saturate: error: ")


def test_data_dir_that_is_a_file(tmp_path, capsys, monkeypatch):
    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setenv("SATURATE_HOME", str(f))
    for command in (["runs"], ["research", TASK]):
        assert main(command) == 2
        assert "is a file, not a folder" in capsys.readouterr().err


def test_data_dir_that_cannot_be_created(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["--home", str(f / "sub"), "research", TASK]) == 2
    assert "cannot create the data directory" in capsys.readouterr().err


def _read_only(path: Path):
    """Make ``path`` read-only for this process: a read-only bind mount as root (root ignores mode bits),
    else mode 0555. Returns an undo function."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return lambda: path.chmod(0o755)
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(path), str(path)], capture_output=True)
    if done.returncode != 0:  # a container without mount rights
        pytest.skip(f"cannot make a read-only mount as root here: {done.stderr.decode().strip()}")
    return lambda: subprocess.run(["umount", str(path)], check=True)


def test_read_only_data_dir_can_be_read_but_not_written(home, corpus, capsys):
    run(home, corpus)
    capsys.readouterr()
    undo = _read_only(home)
    try:
        assert main(["runs", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["thread"] == "t1"
        assert main(["show", "t1"]) == 0 and TASK in capsys.readouterr().out
        assert main(["research", TASK, "--corpus", str(corpus)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert "is read-only" in err[-1] and err[-1].startswith("saturate: error: ")
    finally:
        undo()


# --- a full disk ---------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 400 KB tmpfs (root only): big enough for the index, too small for the session."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"a full disk needs a small tmpfs (root with mount rights): {done.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def _cli(*args, home):
    env = child_env(home)
    return subprocess.run(
        [sys.executable, "-m", "saturate.cli", "--home", str(home), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.slow
def test_full_disk_stops_with_one_line_and_the_session_resumes(small_disk, corpus, tmp_path):
    big = tmp_path / "big.jsonl"  # docs long enough that the checkpoints outgrow the disk
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    big.write_text("".join(json.dumps({**r, "text": (r["text"] + " ") * 12}) + "\n" for r in rows))
    args = ["research", TASK, "--corpus", str(big), "--seed", "1", "--thread", "full", "--json"]
    p = _cli(*args, home=small_disk / "home")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and p.stderr.strip().splitlines()[-1].startswith("saturate: error: ")
    assert "free some space" in p.stderr
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    p = _cli("resume", "full", "--json", home=small_disk / "home")
    assert p.returncode == 0, p.stderr
    resumed = json.loads(p.stdout)
    p = _cli(*args, home=tmp_path / "roomy")
    assert p.returncode == 0, p.stderr
    whole = json.loads(p.stdout)
    assert resumed["answer"] == whole["answer"] and resumed["rounds"] == whole["rounds"]
    assert [s["url"] for s in resumed["sources"]] == [s["url"] for s in whole["sources"]]


def test_a_sessions_db_being_created_by_another_process_is_waited_for_not_called_empty(tmp_path):
    """SQLite creates the file empty and writes its header with the first table: a process starting at that
    moment (``saturate batch`` workers on a new data directory) must wait for the creator, not take the file for
    an emptied sessions.db. The creator holds ``.sessions.db.lock``; here the test plays the creator."""
    import sqlite3
    import threading

    from filelock import FileLock
    from langgraph.checkpoint.sqlite import SqliteSaver

    from saturate.graph.session import open_checkpointer

    home = tmp_path / "home"
    home.mkdir()
    outcome: list = []

    def second_process():
        try:
            with open_checkpointer(home) as saver:
                outcome.append(saver.get_tuple({"configurable": {"thread_id": "x"}}))
        except Exception as err:  # the bug: "sessions.db is empty (0 bytes)"
            outcome.append(err)

    with FileLock(str(home / ".sessions.db.lock")):
        (home / "sessions.db").touch()  # the creator's state between connect() and its first table
        waiter = threading.Thread(target=second_process)
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive() and not outcome, outcome  # waiting for the creator, not failing
        conn = sqlite3.connect(home / "sessions.db")
        SqliteSaver(conn).setup()
        conn.close()
    waiter.join(30)
    assert outcome == [None]


def test_a_batch_on_a_read_only_data_dir_is_one_line_before_any_worker_starts(home, corpus, tmp_path):
    """It was a worker dying ("a worker process died") after the progress bar: now the parent checks first."""
    run(home, corpus)
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps({"id": "a", "question": TASK}) + "\n")
    undo = _read_only(home)
    try:
        p = _cli("batch", str(tasks), "--corpus", str(corpus), "--out", str(tmp_path / "o.jsonl"), home=home)
    finally:
        undo()
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [p.stderr.strip()] and "is read-only" in p.stderr


@pytest.mark.slow
@pytest.mark.parametrize("shm", ["kept", "gone"])
def test_steps_still_in_the_wal_are_read_from_a_read_only_data_dir(home, corpus, shm):
    """A process killed mid-session leaves its steps in sessions.db-wal; read-only, the folder has no room for
    SQLite's -shm file, and reading with ``immutable=1`` ignored the WAL: the session was an unknown thread."""
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SESSION, str(home), str(corpus)], env=child_env(home), timeout=120
    )
    assert killed.returncode == 9
    assert (home / "sessions.db-wal").stat().st_size > 0
    if shm == "gone":
        (home / "sessions.db-shm").unlink()
    undo = _read_only(home)
    try:
        runs = _cli("runs", "--json", home=home)
        shown = _cli("show", "walt", home=home)
        marks = _cli("checkpoints", "walt", home=home)
    finally:
        undo()
    assert runs.returncode == 0, runs.stderr
    assert [r["thread"] for r in json.loads(runs.stdout)] == ["walt"]
    assert shown.returncode == 0 and "saturate resume walt" in shown.stdout, shown.stderr
    assert marks.returncode == 0 and "walt" in marks.stdout, marks.stderr
    assert not list(Path(tempfile.gettempdir()).glob("saturate-sessions-*"))  # the private copy is removed


KILLED_MID_SESSION = """
import os, sys
from saturate.graph import research
steps = []
def die_after_three(chunk):
    steps.append(chunk)
    if len(steps) == 3:
        os._exit(9)
research(
    "Who founded the city of Rome?", corpus=sys.argv[2], home=sys.argv[1], thread_id="walt", max_rounds=5,
    stream_handler=die_after_three,
)
"""


@pytest.mark.slow
def test_a_full_disk_while_sessions_db_is_made_leaves_no_empty_file(small_disk, corpus):
    """The first page of a new sessions.db could not be written: the 0-byte file left behind was taken by every
    later command for an emptied database ("the sessions it held are gone"), after space was freed too."""
    home = small_disk / "home"
    filler = small_disk / "filler"
    with filler.open("wb") as fh:  # the disk, full
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    p = _cli("research", TASK, "--corpus", str(corpus), home=home)
    assert p.returncode == 2 and "the disk is full" in p.stderr and "run the command again" in p.stderr, p.stderr
    assert not (home / "sessions.db").exists()
    filler.unlink()
    p = _cli("runs", home=home)
    assert p.returncode == 0 and "empty" not in p.stderr, p.stderr
    subprocess.run(["mount", "-o", "remount,size=8m", str(small_disk)], check=True)
    p = _cli("research", TASK, "--corpus", str(corpus), "--max-rounds", "2", home=home)
    assert p.returncode == 0, p.stderr
