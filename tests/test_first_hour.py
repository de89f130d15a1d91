"""What a newcomer reads in the first hour (issue 17): the ``runs`` table, the multi-source progress lines, the
stop reason in words, and no library warnings when sessions are only read."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from datetime import datetime

import pytest

from saturate.cli import main
from saturate.graph import research, session_state
from saturate.views.progress import query_counts

from conftest import InterruptingSource

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


@pytest.fixture
def far_timezone(monkeypatch):
    """Local time 5:30 h east of UTC, so local and stored times differ."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_runs_table_shows_local_time_to_the_second_and_interrupted_sessions(home, musique_source, far_timezone, capsys):
    research(BUBYE, thread_id="done1", source=musique_source, seed=1, max_rounds=3)
    with pytest.raises(KeyboardInterrupt):
        research(BUBYE, thread_id="cut1", source=InterruptingSource(musique_source, 2), seed=1, max_rounds=3)

    assert main(["runs", "--json"]) == 0
    rows = {r["thread"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["done1"]["status"] == "done"
    assert rows["cut1"]["status"].startswith("interrupted at ")  # resumable, never "empty"
    stored = rows["cut1"]["updated"]
    assert re.search(r"\.\d{6}\+00:00$", stored)  # --json: the checkpoint's full precision, as stored

    assert main(["runs"]) == 0
    table = capsys.readouterr().out
    local = datetime.fromisoformat(stored).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert local != stored[:19].replace("T", " ")  # the zone moved the clock: the table is not UTC
    # piped (not a terminal): every cell whole on one line — rich assumed 80 columns and cut the task to "What …"
    status = re.escape(rows["cut1"]["status"])
    assert re.search(rf"│ cut1 +│ {re.escape(BUBYE[:80])} +│ \d+ +│ {status} +│ {local} │", table), table
    assert "empty" not in table and not re.search(r"\d\d:\d\d:\d\d\.\d", table)  # no microseconds
    assert "…" not in table

    # on an 80-column terminal: it fits, the id whole, the task and status wrapped rather than cut
    env = {**os.environ, "COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
    shown = subprocess.run([sys.executable, "-m", "saturate", "runs"], env=env, capture_output=True, text=True).stdout
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    assert max(len(line) for line in plain.splitlines()) <= 80, plain
    cells = " ".join(
        line.split("│")[2].strip() for line in plain.splitlines() if line.startswith("│") and line.count("│") == 6
    )
    assert BUBYE[:80] in " ".join(cells.split()), plain  # every word of the task, over its lines
    assert "cut1" in plain and "…" not in plain


def test_query_counts_count_each_result_once():
    # the over-fetch case of issue 17: "new 5/5 dup 5" was 5 duplicates in the top 5, then 5 new further down
    assert query_counts({"total": 5, "new": 5, "duplicates": 5}) == "top 5: 0 new, 5 duplicates (100%); 5 new from " + (
        "further down"
    )
    assert query_counts({"total": 5, "new": 2, "duplicates": 3}) == "top 5: 2 new, 3 duplicates (60%)"
    assert query_counts({"total": 4, "new": 3, "duplicates": 1}) == "top 4: 3 new, 1 duplicate (25%)"
    assert query_counts({"total": 0, "new": 0, "duplicates": 0}) == "no results"


LINE = re.compile(
    r"\] q\d+(?: \(lead\))?: '.*'  top (\d+): (\d+) new, (\d+) duplicates? \((\d+)%\)"
    r"(?:; (\d+) new from further down)?  → "
)


@pytest.fixture
def multi_thread(home, musique_corpus, capsys):
    c = str(musique_corpus)
    assert main(["research", BUBYE, "--sources", f"local:{c},titles:{c}", "--thread", "m1", "--seed", "2"]) == 0
    return capsys.readouterr().err


def test_multi_progress_lines_agree_with_themselves(multi_thread, capsys):
    state = session_state("m1")
    lines = [line for line in multi_thread.splitlines() if line.startswith("[")]
    assert len(lines) == len(state["audit"]) and "dup " not in multi_thread
    for line in lines:
        if re.search(r"\] q\d+(?: \(lead\))?: '.*'  no results  → ", line):
            continue  # a query that found nothing (an entity's name the titles do not hold) says so
        m = LINE.search(line)
        assert m, line
        top, new, dup, pct = (int(g) for g in m.groups()[:4])
        assert new + dup == top and pct == round(100 * dup / top)  # each of the top results counted once
    ev = next(e for e in state["audit"] if e["new"] > e["total"] - e["duplicates"])  # new results past the top
    below = ev["new"] - (ev["total"] - ev["duplicates"])
    assert f"{query_counts(ev)}  → " in multi_thread and query_counts(ev).endswith(f"; {below} new from further down")
    # the heuristic's stop names the count the line shows: the share of duplicates in the top results
    stops = [e for e in state["audit"] if e["action"] == "stop" and e["decided_by"] == "heuristic"]
    for e in stops:
        assert f"{e['duplicates']}/{e['total']} top results were duplicates" in e["reasoning"]
    # a loop's stop reason is said once ("saturated: 5/5 top results ...", not "saturated — saturated: ...")
    assert main(["show", "m1"]) == 0
    loops = [line for line in capsys.readouterr().out.splitlines() if line.startswith("loop ")]
    assert loops and any(", saturated: " in line for line in loops), loops
    assert not any(f"{lp['stop_reason']} — {lp['stop_reason']}" in line for lp in state["loops"] for line in loops)


def test_reading_a_multi_source_session_prints_no_langgraph_warnings(multi_thread, capsys, caplog):
    from saturate.graph.build import build_graph
    from saturate.graph.paths import home_dir
    from saturate.graph.session import config, graph_for, kind_of, open_checkpointer

    # the cause: the single-loop graph reading a multi-source thread logs a warning per pending Send to `follow`;
    # every command reads a thread with the graph of its kind (session.graph_for), so none of them prints it
    with caplog.at_level(logging.WARNING), open_checkpointer(home_dir(None), readonly=True) as saver:
        history = list(build_graph(checkpointer=saver).get_state_history(config("m1")))
        assert history and any("in pending sends" in r.getMessage() for r in caplog.records)
        caplog.clear()
        assert list(graph_for(kind_of(saver, "m1"), saver).get_state_history(config("m1")))
        assert not caplog.records

    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        for argv in (["checkpoints", "m1"], ["show", "m1", "--checkpoints"], ["show", "m1"], ["runs"]):
            assert main(argv) == 0, argv
        assert main(["fork", "m1", "--round", "1"]) == 2
    out, err = capsys.readouterr()
    assert "pending sends" not in out + err and not [r.getMessage() for r in caplog.records]
    assert err.splitlines()[-1] == (
        "saturate: error: thread 'm1' is a multi-source session: fork covers single-loop sessions"
    )


def test_stop_reason_is_said_once_in_words(home, musique_source, capsys):
    # a novelty stop (a high threshold) and a stop on complete chains: each said once, in words
    for thread, threshold in (("s1", 9.0), ("s2", 1.0)):
        result = research(BUBYE, thread_id=thread, source=musique_source, seed=3, novelty_threshold=threshold)
        records = session_state(thread)["records"]
        last = records[-1]
        assert last["decision"] == "stop" and result.stop_reason == last["reason"]
        assert "stop:" not in result.stop_reason
        if last["complete"]:  # the chain's words: the slots and their values
            words = "every part of the question has an answer in the sources"
            assert result.stop_reason.startswith(f"{words}: [1.1] ") and "= " in result.stop_reason
        else:
            words = "the new results were mostly what was already known"
            assert result.stop_reason.startswith(f"{words} (novelty ")
            assert f"< threshold {threshold:g}" in result.stop_reason
        assert main(["show", thread]) == 0 and "stop: stop" not in capsys.readouterr().out
        assert main(["resume", thread]) == 0
        out = capsys.readouterr().out
        assert f"stopped after {len(records)} round(s): {words}" in out


def test_the_slots_are_said_in_the_questions_words_on_every_view(home, wiki_source, capsys, tmp_path):
    """An everyday question on the embedded corpus: the progress line names the kind of answer wanted, `show` and the
    report what the question asks in its words; "Magnitude" (a page title) no longer stands for the speed of light,
    and the stop never claims every part is answered with a value that is not a number."""
    from saturate.nodes.gate import ANSWERED
    from saturate.views.progress import slots_text

    result = research("What is the speed of light?", thread_id="light", source=wiki_source)
    state = session_state("light")
    slots = state["records"][-1]["slots"]
    assert slots[0]["asks"] == "What is the speed of light (a number)" and slots[0]["brief"] == "a number"
    assert slots_text(slots).startswith("slots ") and ": a number" in slots_text(slots)
    value = slots[0].get("value")
    assert value is None or any(c.isdigit() for c in value), value  # a number, or not found: never a page title
    assert not result.stop_reason.startswith(ANSWERED) or (value and any(c.isdigit() for c in value))
    assert main(["show", "light"]) == 0
    assert "[1.1] What is the speed of light (a number)" in capsys.readouterr().out
    assert main(["show", "light", "--html", str(tmp_path / "r.html")]) == 0
    assert "What is the speed of light (a number)" in (tmp_path / "r.html").read_text()
