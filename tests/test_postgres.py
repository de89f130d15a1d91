"""Sessions, cache and pages in a real PostgreSQL, and batches over worker processes (issue: beyond one machine).

The tests start their own PostgreSQL (Debian's ``postgresql`` package, ``saturate/bench/pg_server.py``): a cluster
in a temporary directory on a loopback port, run as the ``postgres`` user when the tests run as root. Where
none can be started the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import LiteralString

import pytest

from saturate.bench import pg_server

from conftest import child_env

pytestmark = pytest.mark.slow
SATURATE = [sys.executable, "-m", "saturate.cli"]


@pytest.fixture(scope="module")
def pg():
    try:
        server = pg_server.start(fsync=False)
    except pg_server.Unavailable as err:
        pytest.skip(f"no PostgreSQL can be started here: {err}")
    yield server
    from saturate.graph import storage

    storage.close_pools()
    server.stop()


@pytest.fixture
def db(pg, request):
    """A fresh database for one test."""
    name = "t_" + request.node.name.lower().replace("[", "_").replace("]", "")[:40]
    return pg.createdb(name)


def cli(home: Path, *args: str, url: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = child_env(home)
    done = subprocess.run(
        [*SATURATE, *args, *(["--database-url", url] if url else [])],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


def checkpoints(url: str) -> list[dict]:
    import psycopg
    from psycopg.rows import DictRow, dict_row

    # psycopg.connect is Connection.connect unspecialised: its rows type defaults to tuples for a type checker
    with psycopg.Connection[DictRow].connect(url, row_factory=dict_row) as conn:
        return conn.execute(
            "SELECT thread_id, checkpoint_id, metadata FROM checkpoints WHERE checkpoint_ns = ''"
        ).fetchall()


def test_every_session_command_works_on_postgresql_and_writes_no_sqlite_file(db, tmp_path):
    home = tmp_path / "home"
    out = cli(home, "research", "Who built the Eiffel Tower?", "--thread", "t1", "--json", url=db)
    assert "Eiffel" in json.loads(out.stdout)["answer"]
    cli(home, "verify", "The Eiffel Tower is in Paris", "--thread", "v1", "--quiet", url=db)
    cli(home, "research", "Eiffel Tower", "--sources", "local,wiki", "--thread", "m1", "--quiet", url=db)
    cli(home, "fork", "t1", "--round", "1", "--max-rounds", "3", "--thread", "t1-fork", "--quiet", url=db)
    runs = json.loads(cli(home, "runs", "--json", url=db).stdout)
    assert {r["thread"]: r["status"] for r in runs} == {"t1": "done", "v1": "done", "m1": "done", "t1-fork": "done"}
    assert json.loads(cli(home, "show", "t1", "--json", url=db).stdout)["result"]["answer"]
    assert "fork points" in cli(home, "checkpoints", "t1", url=db).stdout
    # the URL works before the command too, and from the environment
    assert "t1" in cli(home, "--database-url", db, "runs").stdout
    # nothing of the sessions went to the data directory: only the corpus index (derived, per machine)
    assert sorted(p.name for p in home.iterdir()) == ["index"]
    # cache and pages are in the database
    import psycopg

    with psycopg.connect(db) as conn:
        row = conn.execute("SELECT count(*) FROM saturate_search_cache").fetchone()
        assert row is not None and row[0] > 0
    # the same session is not in another database: the URL decides
    other = cli(home, "show", "t1", url=db.rsplit("/", 1)[0] + "/saturate", check=False)
    assert other.returncode == 2 and "unknown thread 't1'" in other.stderr


def test_resume_after_a_kill_continues_in_postgresql(db, tmp_path):
    """A session killed mid-way (SIGKILL) is resumed from its last PostgreSQL checkpoint to the same answer."""
    home = tmp_path / "home"
    env = child_env(home, SATURATE_DATABASE_URL=db)
    code = (
        "import os, signal\n"
        "from saturate.graph import api\n"
        "calls = []\n"
        "def kill(chunk):\n"
        "    calls.append(chunk)\n"
        "    if len(calls) == 6: os.kill(os.getpid(), signal.SIGKILL)\n"
        "api.research('Who built the Eiffel Tower?', thread_id='k1', seed=7, stream_handler=kill)\n"
    )
    killed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    runs = json.loads(cli(home, "runs", "--json", url=db).stdout)
    assert runs[0]["status"].startswith("interrupted at")
    cli(home, "resume", "k1", "--quiet", url=db)
    cli(home, "research", "Who built the Eiffel Tower?", "--thread", "k2", "--seed", "7", "--quiet", url=db)
    a, b = (json.loads(cli(home, "show", t, "--json", url=db).stdout) for t in ("k1", "k2"))
    assert a["result"]["answer"] == b["result"]["answer"]
    assert [r["query"] for r in a["records"]] == [r["query"] for r in b["records"]]


def test_bad_urls_and_an_unreachable_server_are_one_line_with_the_password_masked(tmp_path, pg):
    home = tmp_path / "home"
    bad = cli(home, "runs", url="mysql://bob:hunter2@localhost/x", check=False)
    assert bad.returncode == 2 and "hunter2" not in bad.stderr and "PostgreSQL URL" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    down = cli(home, "runs", url=f"postgresql://bob:hunter2@127.0.0.1:{pg_server.free_port()}/x", check=False)
    assert down.returncode == 2 and "hunter2" not in down.stderr and "bob:***@" in down.stderr
    assert "cannot use PostgreSQL" in down.stderr and len(down.stderr.strip().splitlines()) == 1
    missing = cli(home, "research", "Eiffel", url=pg.url("no_such_db"), check=False)
    assert missing.returncode == 2 and "no_such_db" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.parametrize("password", ["Hx#Secret7", "Hx?Secret7", "Hx%Secret7", "Hx@Secret7", "Hx/Secret7", "Hx%40Sec"])
def test_a_password_with_url_characters_is_never_printed(tmp_path, password):
    """A raw #, ?, %, @ or / in the password: masked in every message, PostgreSQL's own quoting it included."""
    home, port = tmp_path / "home", pg_server.free_port()
    for args in (("--database-url", f"postgresql://u:{password}@127.0.0.1:{port}/nosuchdb", "runs"),):
        done = subprocess.run(
            [sys.executable, "-m", "saturate.cli", *args],
            env=child_env(home),
            capture_output=True,
            text=True,
            timeout=60,
        )
        shown = done.stdout + done.stderr
        assert done.returncode == 2 and "Traceback" not in shown, shown
        assert password not in shown and "Secret7" not in shown and "Sec" not in shown.replace("Security", "")
        assert len(done.stderr.strip().splitlines()) == 1


def test_a_missing_postgres_extra_says_what_to_install(tmp_path, pg):
    env = child_env(tmp_path / "home", SATURATE_DATABASE_URL=pg.url())
    code = (
        "import sys; sys.modules['psycopg'] = None\n"  # as if saturate[postgres] were not installed
        "from saturate.cli import main; sys.exit(main(['runs']))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "pip install 'saturate[postgres]'" in done.stderr and "Traceback" not in done.stderr


def test_prune_compacts_finished_sessions_in_postgresql(db, tmp_path):
    home = tmp_path / "home"
    cli(home, "research", "Who built the Eiffel Tower?", "--thread", "p1", "--quiet", url=db)
    before = [c for c in checkpoints(db) if c["thread_id"] == "p1"]
    report = json.loads(cli(home, "prune", "--compact", "--json", url=db).stdout)
    assert report["compacted"] == ["p1"] and report["checkpoints_removed"] == len(before) - 1
    assert len([c for c in checkpoints(db) if c["thread_id"] == "p1"]) == 1
    assert json.loads(cli(home, "show", "p1", "--json", url=db).stdout)["result"]["answer"]


# --- batches -------------------------------------------------------------------------------------------------


def _tasks_file(tmp_path: Path, musique_tasks: list[dict], n: int = 30) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in musique_tasks[:n]))
    return path


def _batch_cmd(tasks: Path, corpus: Path, out: Path, workers: int = 2) -> list[str]:
    return [*SATURATE, "batch", str(tasks), "--workers", str(workers), "--out", str(out), "--corpus", str(corpus)]


def _inputs_per_thread(url: str) -> dict[str, int]:
    """How many times each thread was started: LangGraph writes one ``input`` checkpoint per start."""
    counts: dict[str, int] = {}
    for c in checkpoints(url):
        if c["metadata"].get("source") == "input":
            counts[c["thread_id"]] = counts.get(c["thread_id"], 0) + 1
    return counts


def test_a_killed_batch_rerun_finishes_every_task_exactly_once(db, tmp_path, musique_tasks, musique_corpus):
    """The issue's bar: 30 tasks, 2 worker processes, killed mid-way (the whole process group, SIGKILL), run
    again: exactly 30 finished sessions, each started once, all visible through `saturate runs`, no sessions.db."""
    home = tmp_path / "home"
    tasks, out = _tasks_file(tmp_path, musique_tasks), tmp_path / "results.jsonl"
    env = child_env(home, SATURATE_DATABASE_URL=db)
    first = subprocess.Popen(
        [*_batch_cmd(tasks, musique_corpus, out), "--quiet"], env=env, start_new_session=True, stderr=subprocess.PIPE
    )
    deadline = time.time() + 120
    while time.time() < deadline and first.poll() is None:
        if out.exists() and out.read_text().count("\n") >= 4:
            break
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)  # the machine dies: parent and workers, mid-session
    first.wait()
    written = out.read_text().count("\n")
    assert 4 <= written < 30, f"the batch was not killed mid-way ({written} lines)"

    second = subprocess.run(
        [*_batch_cmd(tasks, musique_corpus, out), "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert second.returncode == 0, second.stderr[-2000:]
    summary = json.loads(second.stdout)
    assert summary["total"] == 30 and summary["failed"] == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(t["id"] for t in musique_tasks[:30])  # each once
    assert all(r["status"] == "done" and r["answer"] for r in rows)
    starts = _inputs_per_thread(db)
    assert len(starts) == 30 and set(starts.values()) == {1}, starts  # no task ran twice
    runs = json.loads(cli(home, "runs", "--json", url=db).stdout)
    assert len(runs) == 30 and {r["status"] for r in runs} == {"done"}
    assert not (home / "sessions.db").exists()
    # a third run finds everything done and runs nothing
    third = subprocess.run(
        [*_batch_cmd(tasks, musique_corpus, out), "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert json.loads(third.stdout)["skipped"] == 30 and json.loads(third.stdout)["done"] == 0


def test_two_machines_share_one_batch_without_running_a_task_twice(db, tmp_path, musique_tasks, musique_corpus):
    """Two `saturate batch` commands on the same file and database at once (each standing in for a machine, with
    its own data directory and output file): the claims in the database let each task run once."""
    tasks = _tasks_file(tmp_path, musique_tasks, 24)
    procs = []
    for name in ("a", "b"):
        env = child_env(tmp_path / name, SATURATE_DATABASE_URL=db)
        cmd = [*_batch_cmd(tasks, musique_corpus, tmp_path / f"{name}.jsonl"), "--json"]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-1500:] for o in outs]
    rows = [json.loads(line) for name in ("a", "b") for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
    ran = [r["id"] for r in rows if r["how"] == "ran"]
    assert sorted(ran) == sorted(t["id"] for t in musique_tasks[:24])  # every task ran, on one machine only
    assert set(_inputs_per_thread(db).values()) == {1}
    # each machine's file covers every task (run there, or found done)
    for name in ("a", "b"):
        ids = {json.loads(line)["id"] for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()}
        assert len(ids) == 24


def test_a_batch_on_sqlite_resumes_and_reports_bad_lines(home, tmp_path, musique_tasks, musique_corpus):
    tasks = _tasks_file(tmp_path, musique_tasks, 6)
    out = tmp_path / "r.jsonl"
    done = subprocess.run(
        [*_batch_cmd(tasks, musique_corpus, out, workers=2), "--json"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["done"] == 6 and (home / "sessions.db").exists()
    out.write_text(out.read_text() + '{"id": "cut sho')  # a line cut short by a kill is dropped, not fatal
    again = subprocess.run(
        [*_batch_cmd(tasks, musique_corpus, out), "--json"], capture_output=True, text=True, timeout=300
    )
    assert json.loads(again.stdout)["skipped"] == 6 and out.read_text().count("\n") == 6
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "x y z"}\n{"id": "a", "question": "again"}\n')
    dup = subprocess.run([*SATURATE, "batch", str(bad)], capture_output=True, text=True, timeout=120)
    assert dup.returncode == 2 and "line 2" in dup.stderr and "ids must differ" in dup.stderr
    bad.write_text('{"id": "a", "question": "x"}\nnot json\n')
    broken = subprocess.run([*SATURATE, "batch", str(bad)], capture_output=True, text=True, timeout=120)
    assert broken.returncode == 2 and "line 2 is not JSON" in broken.stderr
    bad.write_text('{"id": "a", "question": "Eiffel", "settings": {"max_rounds": 400}}\n')
    setting = subprocess.run([*SATURATE, "batch", str(bad)], capture_output=True, text=True, timeout=120)
    assert setting.returncode == 2 and "max_rounds" in setting.stderr and "line 1" in setting.stderr


def test_postgres_saver_conforms(db):
    """LangGraph's checkpointer conformance suite against saturate's PostgreSQL saver settings (the pool,
    synchronous_commit=off): tests/test_checkpoint_conformance.py."""
    from saver_conformance import conforms

    conforms("saturate-postgres", database_url=db)


def test_a_server_lost_mid_session_is_one_line_without_the_drivers_log(pg, tmp_path, musique_corpus):
    """psycopg and its pool log the lost connections as warnings ("discarding closed connection", "error ignored
    terminating <psycopg.Pipeline [BAD]>"); with no logging configured Python printed them above saturate's one
    line. A server of its own, stopped after round 2."""
    own = pg_server.start(fsync=False)
    try:
        url = own.createdb("lost")
        rounds = ["--min-rounds", "50", "--max-rounds", "50", "--novelty-epsilon", "0", "--thread", "lost"]
        proc = subprocess.Popen(
            [*SATURATE, "research", "Bubye River", "--corpus", str(musique_corpus), *rounds, "--database-url", url],
            env=child_env(tmp_path / "home"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("round 2"):
                break
    finally:
        own.stop()
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 1, rest
    assert [line for line in rest.splitlines() if not line.startswith("round ")] == [rest.strip().splitlines()[-1]]
    assert rest.strip().splitlines()[-1].startswith("saturate: error: PostgreSQL at ") and "resume lost" in rest


# --- damaged rows --------------------------------------------------------------------------------------------

# tests/test_damaged_rows.py's cases as they arise in PostgresSaver's tables (what is damaged, the SQL that damages
# thread t1's rows): the checkpoint and its metadata are JSONB (no garbage bytes fit there; a JSON that decodes to
# an int, a step that is not a number, or channel versions that are not an object, which the server's own query
# refuses with a DataError), the channel values and pending writes are msgpack blobs beside them
PG_DAMAGE: dict[str, LiteralString] = {
    "checkpoint-int": "UPDATE checkpoints SET checkpoint = '5' WHERE thread_id = 't1'",
    "channel-versions": """UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{channel_versions}', '"x"')
        WHERE thread_id = 't1'""",
    "metadata-step": """UPDATE checkpoints SET metadata = '{"step": "x"}' WHERE thread_id = 't1'""",
    "blob-truncated": "UPDATE checkpoint_blobs SET blob = '\\xda00' WHERE thread_id = 't1'",
    "blob-type-pickle": "UPDATE checkpoint_blobs SET type = 'pickle' WHERE thread_id = 't1'",
    "write-value": "UPDATE checkpoint_writes SET blob = '\\xda00' WHERE thread_id = 't1'",
}
PG_READERS = [
    ["show", "t1"],
    ["show", "t1", "--html", "{tmp}/r.html"],
    ["resume", "t1"],
    ["checkpoints", "t1"],
    ["fork", "t1", "--round", "1"],
]
PG_HISTORY_READERS = {"checkpoints", "fork", "--html"}  # what a damaged pending write of an earlier step reaches


@pytest.fixture(scope="module")
def two_pg_sessions(pg, tmp_path_factory) -> str:
    """A database holding two finished sessions, t1 and t2, that each test copies (``damaged_db``)."""
    home = tmp_path_factory.mktemp("pg-sessions") / "home"
    url = pg.createdb("two_sessions")
    for thread in ("t1", "t2"):
        cli(home, "research", "Who built the Eiffel Tower?", "--thread", thread, "--quiet", url=url)
    return "two_sessions"


@pytest.fixture
def damaged_db(pg, two_pg_sessions, request):
    """A copy of ``two_pg_sessions`` with t1's rows damaged as the test's ``kind`` says; (URL, t1's rows)."""
    import hashlib

    import psycopg
    from psycopg import sql

    name = "d_" + hashlib.sha256(request.node.name.encode()).hexdigest()[:20]  # test names run past 63 characters
    with psycopg.connect(pg.url(), autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(name), sql.Identifier(two_pg_sessions))
        )
    url = pg.url(name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(PG_DAMAGE[request.node.callspec.params["kind"]])
    return url, pg_rows(url, "t1")


def pg_rows(url: str, thread: str) -> list:
    """Every stored row of ``thread``, as text."""
    import psycopg
    from psycopg import sql

    tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
    with psycopg.connect(url) as conn:
        return [
            sorted(
                str(row)
                for row in conn.execute(
                    sql.SQL("SELECT * FROM {} WHERE thread_id = %s").format(sql.Identifier(table)), (thread,)
                )
            )
            for table in tables
        ]


def assert_named_damaged(done: subprocess.CompletedProcess) -> None:
    err = done.stderr.strip()
    assert done.returncode == 2 and "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith("saturate: error: session 't1' in the database postgresql://"), err
    assert "is damaged" in last and "other sessions are unaffected" in last, err
    assert "restore the database from a backup" in last and "sessions.db" not in last, err


@pytest.mark.parametrize("kind", sorted(PG_DAMAGE))
def test_a_damaged_session_in_postgresql_is_one_line_and_kept(damaged_db, kind, tmp_path):
    """``show`` (its HTML report too), ``resume``, ``checkpoints`` and ``fork`` on a session whose rows no longer
    decode: one line naming it (exit 2), as with sessions.db, and nothing of it changed; a damaged pending write only
    reaches the readers of the session's history."""
    url, kept = damaged_db
    home = tmp_path / "home"
    for command in PG_READERS:
        done = cli(home, *[part.format(tmp=tmp_path) for part in command], url=url, check=False)
        if kind == "write-value" and not PG_HISTORY_READERS & set(command):
            assert done.returncode == 0, (command, done.stderr[-2000:])  # the latest checkpoint has no pending write
        else:
            assert_named_damaged(done)
        assert pg_rows(url, "t1") == kept, command
    assert json.loads(cli(home, "show", "t2", "--json", url=url).stdout)["result"]["answer"]


@pytest.mark.parametrize("kind", sorted(set(PG_DAMAGE) - {"write-value"}))
def test_runs_in_postgresql_lists_the_other_sessions_and_marks_the_damaged_one(damaged_db, kind, tmp_path):
    url, kept = damaged_db
    home = tmp_path / "home"
    rows = {r["thread"]: r for r in json.loads(cli(home, "runs", "--json", url=url).stdout)}
    assert rows["t2"]["status"] == "done" and rows["t2"]["task"] == "Who built the Eiffel Tower?"
    assert rows["t1"]["status"].startswith("damaged: ") and rows["t1"]["updated"] is None
    assert "damaged" in cli(home, "runs", url=url).stdout
    assert pg_rows(url, "t1") == kept


@pytest.mark.parametrize("kind", ["checkpoint-int", "channel-versions", "blob-type-pickle"])
def test_prune_in_postgresql_keeps_a_session_it_cannot_read(damaged_db, kind, tmp_path):
    """``--older-than 0 --compact`` removes every session it can read; the damaged one is kept, and said."""
    url, kept = damaged_db
    home = tmp_path / "home"
    out = cli(home, "prune", "--older-than", "0", "--compact", url=url).stdout
    assert "note: session 't1' kept: damaged: " in out, out
    assert pg_rows(url, "t1") == kept
    assert pg_rows(url, "t2") == [[], [], []]


@pytest.mark.parametrize("kind", ["blob-type-pickle"])
def test_the_database_errors_of_postgresql_are_not_taken_for_damage(damaged_db, kind):
    """In Python: a damaged row is ``DamagedSessionError`` (the other sessions listed), while the server's own
    failure (here every connection of the pool terminated under the reader) stays psycopg's error, which the
    commands report as the database failing (``database_problem``), not as a damaged session."""
    import psycopg

    from saturate.graph import api, storage
    from saturate.graph.session import DamagedSessionError, config, list_sessions, open_checkpointer

    url, _ = damaged_db
    with pytest.raises(DamagedSessionError, match="session 't1' in the database .* is damaged: .*pickle"):
        api.session_state("t1", database_url=url)
    assert {r["thread"] for r in list_sessions(database_url=url)} == {"t1", "t2"}

    def terminate_all() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )

    try:
        with open_checkpointer(database_url=url) as saver:
            assert saver.get_tuple(config("t2")) is not None
            terminate_all()
            with pytest.raises(psycopg.OperationalError):
                saver.get_tuple(config("t2"))
            terminate_all()
            with pytest.raises(psycopg.OperationalError):
                list(saver.list(config("t2")))
    finally:
        storage.close_pools()
