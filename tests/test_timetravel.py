"""Time travel: a session's checkpoints, and forks from a round with changed settings (the original untouched)."""

from __future__ import annotations

import json

import pytest

from saturate.cli import main
from saturate.graph import research, session_state
from saturate.graph.build import build_graph
from saturate.graph.paths import home_dir
from saturate.graph.session import InputError, open_checkpointer
from saturate.graph.session import config as _config
from saturate.graph.timetravel import fork, list_checkpoints
from saturate.state.settings import SettingsError
from saturate.views.report import load_session, render_html

from conftest import run_cli, strip_timings

TASK = "How does photosynthesis convert light into chemical energy?"
# no ε and no reader's stop: the novelty threshold alone decides
KW = dict(seed=3, max_rounds=5, min_rounds=2, novelty_epsilon=0.0, reader_stop_p=1.0)


def history(thread: str) -> list[tuple]:
    """Every checkpoint of a thread (all branches): id, parent, metadata, values."""
    with open_checkpointer(home_dir()) as saver:
        return [
            (
                s.config.get("configurable", {})["checkpoint_id"],
                (s.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                json.dumps(s.metadata, sort_keys=True),
                json.dumps(s.values, sort_keys=True, default=str),
            )
            for s in build_graph(checkpointer=saver).get_state_history(_config(thread))
        ]


@pytest.fixture
def original(home, wiki_source):
    research(TASK, thread_id="orig", source=wiki_source, novelty_threshold=0.5, **KW)  # a low bar: runs to the cap
    return session_state("orig")


def test_checkpoints_list_every_step_and_the_fork_points(original, capsys):
    rows = list_checkpoints("orig")
    assert rows[0]["node"] == "input" and rows[-1]["next"] == []
    assert [r["step"] for r in rows] == list(range(-1, len(rows) - 1))
    n = len(original["records"])
    assert n == 5 and original["records"][-1]["decision"] == "cap"
    points = [r for r in rows if r["fork_round"] is not None]
    assert [r["fork_round"] for r in points] == list(range(n))  # before round 1 .. after round 4
    for r in points[1:]:
        assert r["node"] == "compress" and r["next"] == ["plan_query"] and r["rounds_done"] == r["fork_round"]

    assert main(["checkpoints", "orig", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == rows
    assert main(["show", "orig", "--checkpoints"]) == 0
    out = capsys.readouterr().out
    assert "--round 2" in out and "fork points: saturate fork orig --round N" in out
    assert main(["checkpoints", "nope"]) == 2


def test_fork_with_another_threshold_is_a_new_independent_session(original, wiki_source):
    before = history("orig")
    thread, result, changes = fork("orig", 2, new_thread="strict", source=wiki_source, novelty_threshold=9.5)
    assert thread == "strict" and changes == {"novelty_threshold": [0.5, 9.5]}
    forked = session_state("strict")

    # rounds 1..2 are the original's, round 3 is gated with the new threshold and stops
    assert strip_timings({"r": forked["records"][:2]}) == strip_timings({"r": original["records"][:2]})
    assert forked["records"][2]["decision"] == "stop" and "threshold 9.5" in forked["records"][2]["reason"]
    assert len(forked["records"]) == 3 and result.rounds == 3
    assert (
        forked["settings"]["novelty_threshold"] == 9.5
        and forked["result"]["stop_reason"] == forked["records"][2]["reason"]
    )

    # the original is untouched: the same checkpoints, ids, metadata and values
    assert history("orig") == before
    assert session_state("orig")["settings"]["novelty_threshold"] == 0.5

    # the fork's history starts with the original's steps up to the fork point, then its own
    rows = list_checkpoints("strict")
    orig_rows = list_checkpoints("orig")
    k = next(i for i, r in enumerate(orig_rows) if r["fork_round"] == 2)
    assert [r["checkpoint_id"] for r in rows[: k + 1]] == [r["checkpoint_id"] for r in orig_rows[: k + 1]]
    assert all(r["copied_from"] == "orig" for r in rows[: k + 1])
    assert (
        rows[k + 1]["source"] == "update"
        and rows[k + 1]["forked_from"] == "orig"
        and rows[k + 1]["next"] == ["plan_query"]
    )

    # the report says where it came from
    view = load_session("strict")
    assert view["origin"] == {
        "thread": "orig",
        "round": 2,
        "checkpoint_id": orig_rows[k]["checkpoint_id"],
        "changes": {"novelty_threshold": [0.5, 9.5]},
        "at": rows[k + 1]["created_at"],
    }
    page = render_html(view)
    assert "Forked on" in page and "inherited" in page


def test_fork_without_changes_replays_the_same_session(original, wiki_source):
    fork("orig", 1, new_thread="replay", source=wiki_source)
    a, b = strip_timings(session_state("orig")), strip_timings(session_state("replay"))
    assert a == b


def test_fork_from_the_start_and_of_a_fork(original, wiki_source):
    fork("orig", 0, new_thread="fresh", source=wiki_source, max_rounds=3)
    s = session_state("fresh")
    assert len(s["records"]) == 3 and s["records"][-1]["decision"] == "cap"
    assert strip_timings(s["records"][0]) == strip_timings(original["records"][0])
    fork("fresh", 2, new_thread="fresh2", source=wiki_source, max_rounds=4)
    s2 = session_state("fresh2")
    assert s2["settings"]["max_rounds"] == 4 and len(s2["records"]) == 4
    assert list_checkpoints("fresh2")[0]["copied_from"] == "fresh"


def test_fork_with_a_new_seed_restarts_the_draws(original, wiki_source):
    fork("orig", 2, new_thread="seeded", source=wiki_source, seed=99, novelty_epsilon=1.0, novelty_threshold=9.9)
    s = session_state("seeded")
    assert s["rng"]["seed"] == 99 and s["settings"]["seed"] == 99
    assert [r["decision"] for r in s["records"][2:]] == ["epsilon_pass", "epsilon_pass", "cap"]


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--round", "5"],
            "round 5 ended the session (cap), so no round 6 starts from it. Fork points (--round): 0, 1, 2, 3, 4",
        ),
        (["--round", "7"], "the session has no round 7"),
        (["--round", "2", "--novelty-threshold", "11"], "novelty_threshold: Input should be less than or equal to 10"),
        (["--round", "2", "--novelty-threshold", "x"], "novelty_threshold: Input should be a valid number"),
        (["--round", "2", "--max-rounds", "2"], "max_rounds (2) must be above the fork round (2)"),
        (["--round", "2", "--min-rounds", "6"], "min_rounds (6) must not exceed max_rounds (5)"),
        (["--round", "2", "--corpus", "/no/such.jsonl"], "corpus not found: /no/such.jsonl"),
        (["--round", "2", "--thread", "orig"], "thread 'orig' already exists"),
        (["--round", "x"], "argument --round: invalid int value"),
        ([], "the following arguments are required: --round"),
    ],
)
def test_fork_bad_input_exit_2(original, capsys, args, message):
    before = history("orig")
    with open_checkpointer(home_dir()) as saver:
        threads_before = saver.conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["fork", "orig", *args]))
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert history("orig") == before
    with open_checkpointer(home_dir()) as saver:  # no half-made fork left behind
        assert saver.conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone() == threads_before


def test_fork_api_errors(original):
    with pytest.raises(InputError, match="unknown thread 'nope'"):
        fork("nope", 1)
    with pytest.raises(SettingsError, match="novelty_threshold"):
        fork("orig", 2, novelty_threshold=11)
    with pytest.raises(SettingsError, match="unknown setting 'threshold'"):
        fork("orig", 2, threshold=1)


@pytest.mark.slow
def test_fork_cli_prints_the_result_and_the_change(home):
    p = run_cli(
        "research",
        TASK,
        "--thread",
        "c",
        "--seed",
        "3",
        "--novelty-epsilon",
        "0",
        "--novelty-threshold",
        "0.5",
        "--quiet",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    p = run_cli("fork", "c", "--round", "2", "--novelty-threshold", "9.5", "--thread", "c2", home=home)
    assert p.returncode == 0, p.stderr
    assert "forked from c after round 2: novelty_threshold 0.5 → 9.5" in p.stdout and "thread: c2" in p.stdout
    assert [line.split(":")[0] for line in p.stderr.splitlines() if line.startswith("round ")] == ["round 3"]
    p = run_cli("fork", "c", "--round", "1", "--json", home=home)
    out = json.loads(p.stdout)
    assert (
        out["forked_from"] == "c"
        and out["fork_round"] == 1
        and out["changes"] == {}
        and out["thread"].startswith("c-fork1-")
    )
    assert p.stderr == ""
