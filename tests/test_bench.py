"""The research benchmark: policies, targets, JSON/plot output, custom sets, monitor cycles."""

from __future__ import annotations

import json

import pytest

from saturate.bench.research import (
    POLICIES,
    TaskRun,
    answer_in,
    check_targets,
    gain_vs_fixed,
    interpolate,
    normalize_answer,
    oracle_from,
)
from saturate.cli import main

from conftest import eval_file

METRICS = ("gold_recall", "answer_recall", "searches", "model_calls", "seconds")
ALL = {"fixed-1", "fixed-2", "fixed-3", "fixed-4", "fixed-5", "seed-heuristic", "saturate", "oracle"}


@pytest.fixture
def small_data(tmp_path):
    """A data folder shaped like ../shared/data with the first tasks of each set (corpora linked in place)."""
    root = tmp_path / "data"
    for name, n in (("musique", 8), ("hotpotqa", 10)):
        (root / name).mkdir(parents=True)
        (root / name / "corpus.jsonl").symlink_to(eval_file(name, "corpus.jsonl"))
        lines = eval_file(name, "tasks.jsonl").read_text().splitlines()[:n]
        (root / name / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.slow
def test_bench_json_has_every_policy_and_metric(home, small_data, tmp_path, capsys):
    plot = tmp_path / "recall.png"
    assert main(["bench", "--data", str(small_data), "--json", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"musique", "hotpotqa"}
    for res in out.values():
        assert set(res["policies"]) == ALL
        for name, p in res["policies"].items():
            assert all(isinstance(p[m], (int, float)) for m in METRICS)
            assert 0 <= p["gold_recall"] <= 1 and 0 <= p["answer_recall"] <= 1
            if name != "oracle":  # a stopping point, not a session: it has no answer
                assert 0 <= p["answer_in_answer"] <= 1 and p["answer_chars"] > 0
        pol = res["policies"]
        assert pol["fixed-2"]["rounds"] == 2 and pol["fixed-5"]["rounds"] == 5
        # fixed-N is a prefix of fixed-5 (no gate): recall never drops with more rounds
        recalls = [pol[f"fixed-{n}"]["gold_recall"] for n in range(1, 6)]
        assert recalls == sorted(recalls)
        # the oracle reaches fixed-5's recall with no more searches
        assert pol["oracle"]["gold_recall"] == pol["fixed-5"]["gold_recall"]
        assert pol["oracle"]["searches"] <= pol["fixed-5"]["searches"]
        assert 1 <= pol["saturate"]["rounds"] <= 5
        core = {
            "recall_at_5",
            "gate_keeps_recall",
            "gate_search_savings",
            "gain_vs_fixed",
            "answer_in_answer",
            "answer_chars",
        }
        assert core <= set(res["targets"]) <= core | {"yesno_over_always_yes"}  # a set with yes/no questions
        assert res["targets"]["gain_vs_fixed"]["value"] == gain_vs_fixed(pol)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_full_harness_run_records_a_monitor_cycle(home, small_data, tmp_path, capsys):
    from saturate.monitor.core import Monitor

    assert main(["bench", "--data", str(small_data), "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "monitor: cycle 1 recorded" in out and "== musique (8 tasks;" in out
    assert main(["bench", "--data", str(small_data), "--plot", str(tmp_path / "p.png")]) == 0
    status = Monitor(home=home).status()
    assert status["cycles"] == 2
    with Monitor(home=home) as m:
        snap = m.last_snapshot()
    assert snap is not None
    assert set(snap) == {"musique", "hotpotqa"} and snap["musique"]["runs"]["saturate"][0]["task_id"]
    # a partial run is not a cycle
    assert main(["bench", "--data", str(small_data), "--limit", "2", "--plot", str(tmp_path / "p.png")]) == 0
    assert "partial run, no cycle recorded" in capsys.readouterr().out
    assert Monitor(home=home).status()["cycles"] == 2


def test_custom_tasks_and_corpus(home, tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps(d)
            for d in [
                {
                    "id": "a",
                    "title": "Zanzibar",
                    "text": "Zanzibar is an archipelago off Tanzania. Its capital is Stone Town.",
                },
                {
                    "id": "b",
                    "title": "Stone Town",
                    "text": "Stone Town is the old part of Zanzibar City, a UNESCO site.",
                },
                {"id": "c", "title": "Kilimanjaro", "text": "Kilimanjaro is a mountain in Tanzania."},
            ]
        )
        + "\n"
    )
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "What is the old part of the capital of Zanzibar?",
                "answers": ["Stone Town"],
                "gold_ids": ["a", "b"],
            }
        )
        + "\n"
    )
    assert (
        main(["bench", "--tasks", str(tasks), "--corpus", str(corpus), "--json", "--plot", str(tmp_path / "p.png")])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["policies"]["fixed-5"]["gold_recall"] == 1.0
    assert out["policies"]["fixed-5"]["answer_recall"] == 1.0


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["bench", "--tasks", "x.jsonl"], "--tasks and --corpus go together"),
        (["bench", "--tasks", "/nope/t.jsonl", "--corpus", "/nope/c.jsonl"], "file not found: /nope/t.jsonl"),
        (["bench", "--data", "/nope"], "not found"),
    ],
)
def test_bench_bad_input(home, capsys, argv, msg):
    assert main(argv) == 2
    assert msg in capsys.readouterr().err


def test_bench_limit_below_one_is_a_usage_error(home, capsys):
    """--limit's least value is checked as the flag is parsed (state/argtypes.py): one line, exit 2."""
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--limit", "0"])
    assert exited.value.code == 2
    assert "argument --limit: must be 1 or more, not 0" in capsys.readouterr().err


def test_oracle_stops_after_last_gold_round_and_counts_its_rounds_searches():
    run = TaskRun(
        "t",
        1.0,
        True,
        searches=6,
        model_calls=0,
        seconds=1.0,
        rounds=5,
        gold_by_round=[1, 0, 1, 0, 0],
        searches_by_round=[2, 1, 1, 1, 1],  # round 1 retried under the quality floor
    )
    o = oracle_from(run, {"gold_ids": ["a", "b"]})
    assert o.rounds == 3 and o.gold_recall == 1.0 and o.searches == 4  # the retry counts (2 + 1 + 1)
    assert o.answer_in_answer is None  # the oracle is no session: no answer to judge
    none = oracle_from(TaskRun("t", 0.0, False, 5, 0, 1.0, 5, [0] * 5, [1] * 5), {"gold_ids": ["a"]})
    assert none.rounds == 1 and none.gold_recall == 0.0 and none.searches == 1


def test_answer_in_answer_is_squad_normalised():
    assert normalize_answer("The  Victoria-Falls!") == "victoriafalls"
    assert normalize_answer("An Apple, a day") == "apple day"
    assert answer_in("It is the Victoria Falls [3].", ["Victoria Falls"])
    assert answer_in("the 1932 opening", ["1932"]) and not answer_in("in 19320", ["1932"])  # whole words
    assert not answer_in("No answer here.", ["Victoria Falls", ""])


def test_gain_over_fixed_n_is_interpolated_at_equal_searches():
    curve = [(1.0, 0.5), (2.0, 0.7), (3.0, 0.8)]
    assert interpolate(curve, 2.5) == pytest.approx(0.75)
    assert interpolate(curve, 0.5) == 0.5 and interpolate(curve, 9) == 0.8  # flat beyond the ends
    summary = {f"fixed-{n}": {"searches": float(n), "gold_recall": r} for n, r in ((1, 0.5), (2, 0.7), (3, 0.8))}
    summary["saturate"] = {"searches": 2.5, "gold_recall": 0.78}
    assert gain_vs_fixed(summary) == pytest.approx(0.03)


def test_settings_apply_to_every_policy_and_bad_ones_are_bad_input(home, small_data, tmp_path, capsys):
    argv = ["bench", "--data", str(small_data), "--set", "musique", "--limit", "2", "--json"]
    assert main([*argv, "--policy", "saturate", "--results-per-query", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["policies"]["saturate"]["tasks"] == 2
    assert main([*argv, "--novelty-threshold", "11"]) == 2
    assert "novelty_threshold" in capsys.readouterr().err


def test_targets_use_harness_thresholds():
    summary = {"fixed-5": {"gold_recall": 0.9, "searches": 5.0}, "saturate": {"gold_recall": 0.89, "searches": 2.9}}
    t = check_targets("musique", summary)
    assert t["recall_at_5"]["met"] and t["gate_keeps_recall"]["met"] and t["gate_search_savings"]["met"]
    raised = check_targets("musique", summary, {"musique.recall_at_5": 0.95})
    assert not raised["recall_at_5"]["met"]
    derived = check_targets("musique-hard-e1", summary, {"musique.recall_at_5": 0.95}, base="musique")
    assert derived["recall_at_5"]["target"] == 0.95
    assert set(POLICIES) == ALL - {"oracle"}


@pytest.mark.slow
def test_every_figure_is_printed_for_the_set_and_its_halves(home, small_data, tmp_path, capsys):
    assert (
        main(["bench", "--data", str(small_data), "--set", "hotpotqa", "--json", "--plot", str(tmp_path / "p.png")])
        == 0
    )
    res = json.loads(capsys.readouterr().out)
    sat = res["policies"]["saturate"]
    assert set(sat["halves"]) == {"A", "B"}
    assert sat["halves"]["A"]["tasks"] + sat["halves"]["B"]["tasks"] == sat["tasks"] == 10
    assert 0 <= sat["em"] <= 1 and 0 <= sat["f1"] <= 1
    stop = res["stopping"]["all"]
    assert stop["too_early"] + stop["too_late"] + stop["right"] == stop["tasks"] == 10
    assert 0 <= stop["wasted_search_share"] <= 1
    # the first ten hotpotqa tasks hold yes/no questions: their accuracy and always-yes's, both halves
    assert sat["yesno_tasks"] >= 1 and set(res["always_yes"]) == {"all", "A", "B"}
    assert main(["bench", "--data", str(small_data), "--set", "hotpotqa", "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    assert "cells: all (half A / half B)" in out and "gate vs fixed-N at" in out and "(A / B:" in out
    assert "gate vs each task's fixed-5 trajectory — all: too early" in out and "always 'yes'" in out


def test_halves_and_squad_metrics():
    from saturate.bench.research import exact_match, half_of, token_f1, yes_no_right

    assert half_of("2hop__205146_62031") in ("A", "B") and half_of("x") == half_of("x")
    halves = [half_of(f"t{i}") for i in range(200)]
    assert 80 < halves.count("A") < 120  # a hash splits about evenly
    assert exact_match("the Victoria Falls", ["Victoria Falls"]) == 1.0 and exact_match("", ["x"]) == 0.0
    assert token_f1("Victoria Falls waterfall", ["Victoria Falls"]) == pytest.approx(0.8)
    assert token_f1("Zambezi", ["Victoria Falls"]) == 0.0
    assert yes_no_right("Yes. Both are film directors [1]", ["yes"]) is True
    assert yes_no_right("No. [1]", ["yes"]) is False and yes_no_right("Paris [1]", ["Paris"]) is None


def test_natural_questions_bench_runs_the_loop_against_one_search(home, tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    docs = [
        {
            "id": "1",
            "title": "Bahamas",
            "text": "The Bahamas is an island country. Grand Bahama is one of its islands.",
        },
        {"id": "2", "title": "Paris", "text": "Paris is the capital of France."},
        {"id": "3", "title": "Seine", "text": "The Seine flows through Paris."},
    ]
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    tasks = tmp_path / "q.jsonl"
    qs = [
        {"id": "q1", "question": "what country is grand bahama island in?", "answers": ["Bahamas"]},
        {"id": "q2", "question": "what is the capital of france?", "answers": ["Paris"]},
        {"id": "q3", "question": "what did i eat for breakfast?", "answers": ["toast"]},
    ]
    tasks.write_text("\n".join(json.dumps(q) for q in qs) + "\n")
    assert main(["bench", "natural", "--tasks", str(tasks), "--corpus", str(corpus), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["policies"]) == {"one search", "saturate"}
    one, loop = out["policies"]["one search"], out["policies"]["saturate"]
    assert one["rounds"] == 1.0 and loop["rounds"] >= 1.0 and one["tasks"] == loop["tasks"] == 3
    for p in (one, loop):
        assert 0 <= p["not_found"] <= p["tasks"] and 0 <= p["answer"] <= p["in_sources"] <= 1
        assert set(p["halves"]) == {"A", "B"}
    assert out["targets"]["all"]["gain"] == round(loop["answer"] - one["answer"], 4)
    runs = {r["task_id"]: r for r in out["runs"]["saturate"]}
    assert runs["q2"]["answer"] and runs["q2"]["in_sources"] and not runs["q3"]["answer"]
    assert main(["bench", "natural", "--tasks", str(tasks), "--corpus", str(corpus), "--limit", "1"]) == 0
    text = capsys.readouterr().out
    assert "loop - one search" in text and "target >= 0.3" in text
    assert main(["bench", "natural", "--tasks", str(tmp_path / "none.jsonl")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_tune_replays_the_gate_and_chooses_on_half_a(home, small_data, capsys):
    assert main(["bench", "tune", "--data", str(small_data), "--set", "hotpotqa", "--slots", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    grid = out["grid"]
    assert {(r["min_rounds"], r["novelty_threshold"]) for r in grid} >= {(3, 1.0), (1, 0.25)}
    chosen = out["chosen"]
    best = min(grid, key=lambda r: (r["shortfall"], -r["gain"], r["searches"]))
    assert (chosen["min_rounds"], chosen["novelty_threshold"]) == (best["min_rounds"], best["novelty_threshold"])
    for label in ("current", "chosen"):
        assert set(out["sets"]["hotpotqa"][label]) == {"A", "B"}
    from saturate.nodes.reading.slots import FEATURES

    assert set(out["slots"]["fitted"]) == set(FEATURES)  # one weight per feature of the slot scorer
    assert set(out["slots"]["top1"]["hotpotqa"]) == {"current", "fitted"}
    assert set(out["slots"]["top1"]["hotpotqa"]["fitted"]) == {"A", "B"}
    # a setting given on the command line is held: only the threshold is chosen
    assert main(["bench", "tune", "--data", str(small_data), "--set", "hotpotqa", "--min-rounds", "2", "--json"]) == 0
    held = json.loads(capsys.readouterr().out)
    assert {r["min_rounds"] for r in held["grid"]} == {2} and held["chosen"]["min_rounds"] == 2


def test_replaying_the_gate_is_what_a_session_does(home, musique_source, musique_tasks):
    """The replay of a fixed-5 trajectory stops where a real session with the same seed stops."""
    from saturate.bench.tune import replay, trajectories
    from saturate.graph.build import build_graph
    from saturate.state.context import Context
    from saturate.state.graph_state import initial_state
    from saturate.state.settings import load_settings

    tasks = musique_tasks[:4]
    traj = trajectories("musique", tasks, musique_source, {}, 1, None, False)
    graph = build_graph()
    for i, (task, t) in enumerate(zip(tasks, traj)):
        settings = load_settings({"seed": 1 + i}, env={})
        out = graph.invoke(initial_state(task["question"], settings), context=Context(source=musique_source))
        _, searches = replay(t, settings)
        assert searches == len(out["queries"]), task["question"]
