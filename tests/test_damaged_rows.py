"""Damaged rows inside a sound sessions.db (a checkpoint, its metadata or a pending write that no longer decodes):
every command on that session says so in one line naming it (exit 2), ``runs`` lists the other sessions and marks
the damaged one, ``prune`` keeps what it cannot read, and nothing of the session is changed. Also: sessions.db
being created by another process is never taken for an emptied one, and a folder that refuses writes although it
looks writable is one line."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from saturate.cli import main
from saturate.graph import api, session
from saturate.graph.session import DamagedSessionError, SessionsDbError, list_sessions

TASK = "Who founded the city of Rome?"

# (what is damaged, the SQL that damages thread t1's rows): a checkpoint that decodes to an int, one that does
# not decode, an unknown serialisation type, metadata that is not UTF-8, metadata of the wrong shape, and a
# pending write that does not decode (met by the readers of a session's whole history)
DAMAGE = {
    "checkpoint-int": "UPDATE checkpoints SET checkpoint = X'05' WHERE thread_id = 't1'",
    "checkpoint-truncated": "UPDATE checkpoints SET checkpoint = X'DA00' WHERE thread_id = 't1'",
    "type-pickle": "UPDATE checkpoints SET type = 'pickle' WHERE thread_id = 't1'",
    "metadata-bytes": "UPDATE checkpoints SET metadata = X'FF93' WHERE thread_id = 't1'",
    "metadata-step": """UPDATE checkpoints SET metadata = '{"step": "x"}' WHERE thread_id = 't1'""",
    "write-value": "UPDATE writes SET value = X'DA00' WHERE thread_id = 't1'",
}
ON_THE_SESSION = [
    ["show", "t1"],
    ["show", "t1", "--html", "{tmp}/r.html"],
    ["resume", "t1"],
    ["checkpoints", "t1"],
    ["fork", "t1", "--round", "1"],
]
HISTORY_READERS = {"checkpoints", "fork", "--html"}  # what a damaged pending write of an earlier step reaches


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "rome.jsonl"
    docs = [
        {"id": "rome", "title": "Rome", "text": "Rome was founded by Romulus in 753 BC, according to legend."},
        {"id": "remus", "title": "Remus", "text": "Remus was killed by his brother Romulus at the founding of Rome."},
    ] + [{"id": f"n{i}", "title": f"Note {i}", "text": f"Rome note {i}: the city had {i} hills."} for i in range(12)]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


@pytest.fixture
def two_sessions(home, corpus):
    for thread in ("t1", "t2"):
        api.research(TASK, thread_id=thread, home=home, corpus=str(corpus), seed=1, max_rounds=2)
    return home


def rows_of(home: Path, thread: str) -> list:
    with sqlite3.connect(home / "sessions.db") as db:
        return db.execute(
            "SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? "
            "UNION ALL SELECT checkpoint_id, type, value, channel FROM writes WHERE thread_id = ? ORDER BY 1",
            (thread, thread),
        ).fetchall()


def damage(home: Path, kind: str) -> list:
    with sqlite3.connect(home / "sessions.db") as db:
        db.execute(DAMAGE[kind])
    return rows_of(home, "t1")


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_session_is_named_by_every_command_and_kept(two_sessions, kind, tmp_path, capsys):
    home = two_sessions
    kept = damage(home, kind)
    for command in ON_THE_SESSION:
        code = main([part.format(tmp=tmp_path) for part in command])
        err = capsys.readouterr().err.strip()
        if kind == "write-value" and not HISTORY_READERS & set(command):
            assert code == 0, (command, err)  # the latest checkpoint has no damaged write: it reads as before
        else:
            assert code == 2, (command, err)
            last = err.splitlines()[-1]  # (fork names what it forks first)
            assert "Traceback" not in err and last.startswith("saturate: error: session 't1' in "), err
            assert "is damaged" in last and "other sessions are unaffected" in last, err
        assert rows_of(home, "t1") == kept, command  # nothing of the damaged session changed
    assert main(["show", "t2"]) == 0  # the other session reads as before


@pytest.mark.parametrize("kind", sorted(set(DAMAGE) - {"write-value"}))
def test_runs_lists_the_other_sessions_and_marks_the_damaged_one(two_sessions, kind, capsys):
    damage(two_sessions, kind)
    assert main(["runs", "--json"]) == 0
    rows = {r["thread"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["t2"]["status"] == "done" and rows["t2"]["task"] == TASK
    assert rows["t1"]["status"].startswith("damaged: ") and rows["t1"]["updated"] is None
    assert main(["runs"]) == 0 and "damaged" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["checkpoint-truncated", "type-pickle", "metadata-step"])
@pytest.mark.parametrize("args", [["--compact"], ["--older-than", "0"], ["--older-than", "0", "--compact"]])
def test_prune_keeps_a_session_it_cannot_read(two_sessions, kind, args, capsys):
    """``--older-than 0`` removes every session it can read; one it cannot has no known age: kept, and said."""
    home = two_sessions
    kept = damage(home, kind)
    assert main(["prune", *args]) == 0
    out = capsys.readouterr().out
    assert "note: session 't1' kept: damaged: " in out, out
    assert rows_of(home, "t1") == kept
    if "--older-than" in args:
        assert rows_of(home, "t2") == []  # the readable one went, as documented


def test_the_damaged_session_error_is_raised_by_the_python_api(two_sessions):
    damage(two_sessions, "type-pickle")
    with pytest.raises(DamagedSessionError, match="session 't1' .* is damaged: .*pickle"):
        api.session_state("t1", home=two_sessions)
    assert {r["thread"] for r in list_sessions(home=two_sessions)} == {"t1", "t2"}


def test_mcp_runs_gives_a_damaged_sessions_db_as_a_tool_error(home):
    """``runs`` turned the error into "Error executing tool runs"; ``show`` and ``research`` gave the message."""
    from mcp.client import Client
    from mcp.types import TextContent

    from saturate.mcp import build_server

    home.mkdir(parents=True)
    (home / "sessions.db").write_bytes(b"this is not an SQLite database\x00" * 64)

    async def call():
        async with Client(build_server(home=str(home))) as client:
            return await client.call_tool("runs", {})

    result = anyio.run(call)
    assert result.is_error
    block = result.content[0]
    assert isinstance(block, TextContent), block
    text = block.text
    assert "sessions.db is not a readable SQLite database" in text, text  # not the bare "Error executing tool runs"


def test_mcp_runs_lists_a_damaged_session(two_sessions):
    from mcp.client import Client

    from saturate.mcp import build_server

    damage(two_sessions, "checkpoint-int")

    async def call():
        async with Client(build_server(home=str(two_sessions))) as client:
            return await client.call_tool("runs", {})

    result = anyio.run(call)
    assert not result.is_error, result.content
    status = {r["thread_id"]: r["status"] for r in result.structured_content["sessions"]}
    assert status["t2"] == "done" and status["t1"].startswith("damaged: ")


# --- sessions.db being created -----------------------------------------------------------------------------


def test_a_sessions_db_being_created_is_never_seen_empty(home, monkeypatch):
    """The first session in a new data directory creates sessions.db while another process lists the sessions:
    SQLite made the file empty first and wrote its header with the first table, and the reader said "sessions.db
    is empty (0 bytes): the sessions it held are gone". The creator here pauses inside the table setup."""
    home.mkdir(parents=True)
    in_setup, go_on = threading.Event(), threading.Event()
    real = session.SqliteSaver

    class Paused(real):
        def setup(self):
            in_setup.set()
            assert go_on.wait(30)
            super().setup()

    monkeypatch.setattr(session, "SqliteSaver", Paused)
    outcome: list = []

    def create():
        try:
            with session.open_checkpointer(home):
                outcome.append("made")
        except Exception as err:
            outcome.append(err)

    creator = threading.Thread(target=create)
    creator.start()
    try:
        assert in_setup.wait(30)
        for _ in range(3):
            assert list_sessions(home=home) == []  # not "sessions.db is empty (0 bytes)"
        assert main(["runs", "--json"]) == 0
    finally:
        go_on.set()
        creator.join(30)
    assert outcome == ["made"]
    assert (home / "sessions.db").stat().st_size > 0
    assert [p.name for p in home.iterdir() if p.name.startswith(".sessions.db.new")] == []
    assert list_sessions(home=home) == []


def test_an_emptied_sessions_db_is_still_named(home):
    home.mkdir(parents=True)
    (home / "sessions.db").write_bytes(b"")
    with pytest.raises(SessionsDbError, match="is empty"):
        list_sessions(home=home)
    with pytest.raises(SessionsDbError, match="is empty"), session.open_checkpointer(home):
        pass
    assert (home / "sessions.db").read_bytes() == b""


# --- a folder that refuses writes although it looks writable -----------------------------------------------


def refuse_writes(monkeypatch, folder: Path) -> None:
    """What /sys/kernel is to root: ``os.access`` says writable, creating a file there fails (EACCES)."""
    import os

    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if Path(os.fsdecode(path)).parent == folder and flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)


@pytest.mark.parametrize("command", [["research", TASK], ["verify", "Rome was founded by Romulus."]])
def test_a_folder_refusing_writes_is_one_line(home, corpus, monkeypatch, capsys, command):
    home.mkdir(parents=True)
    refuse_writes(monkeypatch, home)
    assert main([*command, "--corpus", str(corpus), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("saturate: error: ") and "cannot be written" in err[-1], err
    assert "Permission denied" in err[-1] and "--home" in err[-1]
    assert not (home / "sessions.db").exists()


def test_a_database_that_cannot_be_opened_is_not_called_damaged(tmp_path):
    """``saturate monitor --home /sys/kernel`` said "damaged … run sqlite3 .recover": SQLite's "unable to open
    database file" is a folder refusing the file, not damage."""
    from saturate.cli.output import damaged_file_problem

    message = damaged_file_problem(sqlite3.OperationalError("unable to open database file"), tmp_path)
    assert message is not None and "cannot be opened or created" in message and str(tmp_path) in message
    assert "recover" not in message and "damaged" not in message
