"""``saturate prune``: old sessions go, finished sessions lose only their history, unfinished ones keep theirs."""

from __future__ import annotations

import json
import time

import pytest

from saturate.cli import main
from saturate.graph import api
from saturate.graph.prune import prune
from saturate.graph.timetravel import list_checkpoints
from saturate.sources.cache import SearchCache

TASK = "Ada Lovelace algorithm"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    docs = [
        {"id": "a", "title": "Ada Lovelace", "text": "Ada Lovelace wrote the first published algorithm in 1843."},
        {"id": "b", "title": "Charles Babbage", "text": "Charles Babbage designed the Analytical Engine."},
    ] + [{"id": f"n{i}", "title": f"Note {i}", "text": f"Ada note {i} about algorithm number {i}."} for i in range(20)]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


@pytest.fixture
def sessions(home, corpus):
    """Two finished sessions and one stopped after its first round."""
    for thread in ("done1", "done2"):
        api.research(TASK, thread_id=thread, home=home, corpus=str(corpus), seed=1, enrich_overlap_max=1.0)

    class Stop(Exception):
        pass

    def stop(chunk):
        if "gate" in chunk:
            raise Stop

    with pytest.raises(Stop):
        api.research(TASK, thread_id="open", home=home, corpus=str(corpus), seed=1, stream_handler=stop)
    return home


def test_compact_keeps_finished_sessions_whole_and_unfinished_ones_resumable(sessions, corpus):
    before = {t: api.session_state(t, home=sessions) for t in ("done1", "done2", "open")}
    open_checkpoints = len(list_checkpoints("open", home=sessions))
    size = (sessions / "sessions.db").stat().st_size

    dry = prune(home=sessions, compact=True, dry_run=True)
    assert sorted(dry.compacted) == ["done1", "done2"] and dry.checkpoints_removed > 10
    assert len(list_checkpoints("done1", home=sessions)) > 1  # a dry run changes nothing

    report = prune(home=sessions, compact=True)
    assert sorted(report.compacted) == ["done1", "done2"] and report.checkpoints_removed == dry.checkpoints_removed
    for thread in ("done1", "done2"):
        assert len(list_checkpoints(thread, home=sessions)) == 1
        after = api.session_state(thread, home=sessions)
        assert after["result"] == before[thread]["result"] and after["records"] == before[thread]["records"]
    assert len(list_checkpoints("open", home=sessions)) == open_checkpoints
    assert (sessions / "sessions.db").stat().st_size < size  # VACUUM gave the space back
    assert api.resume("open", home=sessions).answer  # the unfinished one still resumes


def test_fork_of_a_compacted_session_says_why(sessions, capsys):
    prune(home=sessions, compact=True)
    assert main(["fork", "done1", "--round", "1"]) == 2
    assert "history was removed by `saturate prune --compact`" in capsys.readouterr().err


def test_older_than_deletes_old_sessions_pages_and_damaged_files(sessions):
    assert len(api.list_sessions(home=sessions)) == 3
    (sessions / "cache.db.damaged-20200101-000000").write_bytes(b"x")
    assert prune(home=sessions, older_than_days=1).deleted == []  # all are fresh
    assert (sessions / "cache.db.damaged-20200101-000000").exists()

    later = time.time() + 2 * 86400
    dry = prune(home=sessions, older_than_days=1, dry_run=True, now=later)
    assert {s["thread"] for s in dry.deleted} == {"done1", "done2", "open"} and dry.pages > 0
    assert len(api.list_sessions(home=sessions)) == 3

    report = prune(home=sessions, older_than_days=1, now=later)
    assert {s["status"] for s in report.deleted} >= {"done"} and report.pages == dry.pages
    assert api.list_sessions(home=sessions) == []
    assert report.damaged_files == ["cache.db.damaged-20200101-000000"]
    assert not (sessions / "cache.db.damaged-20200101-000000").exists()


def test_expired_cache_entries_always_go(sessions):
    cache = SearchCache(sessions / "cache.db")
    n = len(cache)
    cache.put("old", "s", "q", [], now=time.time() - 10 * 86400)
    cache.close()
    report = prune(home=sessions)
    assert report.cache_entries == 1 and len(SearchCache(sessions / "cache.db")) == n
    assert len(api.list_sessions(home=sessions)) == 3  # no flag: no session is touched


def test_cli(sessions, capsys):
    assert main(["prune", "--compact", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove the history of 2 finished session(s)" in out and "sizes:" not in out
    assert main(["prune", "--compact", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["compacted"]) == ["done1", "done2"] and report["bytes_after"]["sessions.db"] > 0
    with pytest.raises(SystemExit) as exc:
        main(["prune", "--older-than", "-1"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "invalid number of days value: '-1' (see `saturate prune --help`)" in err


def test_prune_of_an_empty_data_directory(tmp_path, capsys):
    assert main(["--home", str(tmp_path / "none"), "prune"]) == 0
    assert "removed: 0 session(s)" in capsys.readouterr().out
    assert not (tmp_path / "none").exists()
